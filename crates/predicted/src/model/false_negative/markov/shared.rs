//! Per-state non-repeat estimates shared by the models of many filters on one workload.
//!
//! Why: a sweep (`rbf run` over memories and k) evaluates the Markov methods once per
//! filter, and for markov-swr, markov-biuniform and drop-pins most of that work is the
//! estimates f^[i] (eqs. 6, 8-9, 10-11), which depend on Q and the states asked for
//! only, not on the filter. Measured on a fitted capture workload (D = 3.7 x 10^5, 10^5-
//! 10^6 states), they were about half of a point's model CPU time.
//!
//! What makes sharing exact: each estimator's value at state i does not depend on how
//! far the states run, given the first state (the range starts at 0, or 1 for a
//! retaining filter). [`super::nonrepeat::with_replacement_of`] and
//! [`super::nonrepeat::drop_pins_of`] walk the states in order from the first (the
//! latter's search for l*(i) starts at l*(i - 1)); [`super::nonrepeat::biuniform`] takes
//! per state the least value over its splits, each split's chain the same however far
//! it runs, and prunes only where no value can change. So values computed once for
//! states `first..=horizon` give, sliced, the same bits as each filter's own
//! computation (checked in the tests below and, whole, by `rbf run`'s results).

use std::sync::{Arc, Mutex, OnceLock};

use rayon::prelude::*;

use super::super::method::Method;
use super::super::powersums::PowerSums;
use super::nonrepeat;

/// Most bytes of estimates (and the Q they belong to) kept: beyond it a model computes
/// its own, as without sharing.
const MOST_BYTES: usize = 512 << 20;

/// Estimates computed once per (method, first state, Q) up to a horizon, shared by every
/// model that is given the same store ([`super::super::FnModel::sharing`]).
pub struct SharedEstimates {
    /// The last state every entry covers: the largest sigma of the filters sharing it.
    horizon: usize,
    entries: Mutex<Store>,
}

#[derive(Default)]
struct Store {
    entries: Vec<Arc<Entry>>,
    bytes: usize,
}

struct Entry {
    method: Method,
    first: usize,
    q: Vec<f64>,
    /// markov-disabling's other inputs (None for the methods that read Q alone).
    disabling: Option<DisablingKey>,
    /// States `first..=horizon`, computed by the first model that asks (for
    /// markov-disabling `first` is 0: its chain's values from a cycle's start).
    values: OnceLock<Vec<f64>>,
}

/// What markov-disabling's estimates read besides Q and the number of states: the
/// placement zeta, p_r and the tolerance of its runs of ranks ([`super::runs`]). Its
/// chain on runs gives state i's value whatever the number of states after it, so it
/// is shared like the others, where the model's own would run on runs too
/// ([`super::disabling_on_runs`]); the exact chain is not shared.
#[derive(Clone, Copy, Debug)]
pub struct DisablingInputs<'a> {
    pub zeta: &'a [f64],
    pub p_r: f64,
    pub tolerance: f64,
}

impl DisablingInputs<'_> {
    /// Whether `key` holds these inputs, to the bit.
    fn matches(&self, key: &DisablingKey) -> bool {
        key.p_r.to_bits() == self.p_r.to_bits()
            && key.tolerance.to_bits() == self.tolerance.to_bits()
            && key.zeta == self.zeta
    }
}

/// [`DisablingInputs`] held: by a store's entry, or by whoever gathers a sweep's
/// workloads before warming it.
#[derive(Clone, Debug, PartialEq)]
pub struct DisablingKey {
    pub zeta: Vec<f64>,
    pub p_r: f64,
    pub tolerance: f64,
}

impl DisablingKey {
    pub fn inputs(&self) -> DisablingInputs<'_> {
        DisablingInputs {
            zeta: &self.zeta,
            p_r: self.p_r,
            tolerance: self.tolerance,
        }
    }
}

impl std::fmt::Debug for SharedEstimates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedEstimates")
            .field("horizon", &self.horizon)
            .finish_non_exhaustive()
    }
}

impl SharedEstimates {
    /// A store whose entries cover the states up to `horizon` (the largest sigma of the
    /// filters that will share it; a model asking for more computes its own).
    pub fn new(horizon: u64) -> Arc<SharedEstimates> {
        Arc::new(SharedEstimates {
            horizon: usize::try_from(horizon).unwrap_or(usize::MAX),
            entries: Mutex::new(Store::default()),
        })
    }

    /// Whether `method`'s estimates are shared (those that read Q and the states only).
    pub fn shares(method: Method) -> bool {
        matches!(
            method,
            Method::MarkovSwr | Method::MarkovBiuniform | Method::DropPins
        )
    }

    /// `method`'s estimates on `q` for `states`, from the store where it covers them,
    /// else from `compute` (over `states` alone).
    pub fn values(
        &self,
        method: Method,
        q: &[f64],
        states: std::ops::RangeInclusive<usize>,
        compute: impl Fn(std::ops::RangeInclusive<usize>) -> Vec<f64>,
    ) -> Vec<f64> {
        let (first, last) = (*states.start(), *states.end());
        if !SharedEstimates::shares(method) || last > self.horizon || first > last {
            return compute(states);
        }
        let Some(entry) = self.entry(method, first, q, None) else {
            return compute(states);
        };
        let all = entry.values.get_or_init(|| compute(first..=self.horizon));
        all[..=last - first].to_vec()
    }

    /// markov-disabling's estimates on runs of ranks for `states`: one value per
    /// state, the chain's from a cycle's start whatever the first state (as
    /// [`super::disabling_estimates`] gives them), so one entry from state 0 serves
    /// every first state; from the store where it covers them, else computed.
    pub fn disabling_values(
        &self,
        q: &[f64],
        inputs: DisablingInputs,
        states: std::ops::RangeInclusive<usize>,
    ) -> Vec<f64> {
        let n = states.count();
        let own = |n: usize| disabling_on_runs(q, inputs, n);
        if n == 0 || n > self.horizon + 1 {
            return own(n);
        }
        let Some(entry) = self.entry(Method::MarkovDisabling, 0, q, Some(inputs)) else {
            return own(n);
        };
        let all = entry.values.get_or_init(|| own(self.horizon + 1));
        all[..n].to_vec()
    }

    /// Computes the shared estimates of each Q of `qs` from each first state of
    /// `firsts` up to the horizon, all at once on rayon's threads, so that the filters'
    /// models find them ready. Why: a model that finds an entry still being computed
    /// waits for it, so filters evaluated side by side would take turns at the start.
    /// With `progress`, the work is shown (it takes seconds at capture scale). A Ctrl-C
    /// or SIGTERM ends it between tasks.
    ///
    /// `disablings` are markov-disabling's workloads (Q and the other inputs); each is
    /// warmed where a profile up to the horizon would run it on runs of ranks.
    pub fn warm(
        &self,
        qs: &[&[f64]],
        firsts: &[usize],
        disablings: &[(&[f64], DisablingInputs)],
        progress: bool,
    ) {
        let tasks = self.tasks(qs, firsts, disablings);
        let horizon = self.horizon;
        let bar = match progress {
            true => rbf_foundations::progress::Progress::new(
                "non-repeat estimates shared by the filters",
                tasks.len() as f64,
                "workloads x methods",
            ),
            false => rbf_foundations::progress::Progress::hidden(),
        };
        tasks.par_iter().with_max_len(1).for_each(|(e, q)| {
            // After a Ctrl-C or SIGTERM the tasks not begun are left (each takes at
            // most a few seconds at capture scale): their entries stay empty, and the
            // caller stops on the flag.
            if rbf_foundations::progress::interrupted() {
                return;
            }
            if e.first <= horizon {
                e.values.get_or_init(|| e.compute(q, horizon));
            }
            bar.add(1.0);
        });
        bar.finish();
    }

    /// The entries [`SharedEstimates::warm`] fills (once each), with their Q, the
    /// costliest first.
    fn tasks<'q>(
        &self,
        qs: &[&'q [f64]],
        firsts: &[usize],
        disablings: &[(&'q [f64], DisablingInputs)],
    ) -> Vec<(Arc<Entry>, &'q [f64])> {
        let mut tasks: Vec<(Arc<Entry>, &[f64])> = Vec::new();
        // The costliest first: at large D, markov-disabling's chain (one entry from
        // state 0 for every first state).
        for &(q, inputs) in disablings {
            if !super::disabling_on_runs(self.horizon + 1, q.len()) {
                continue;
            }
            if let Some(e) = self.entry(Method::MarkovDisabling, 0, q, Some(inputs)) {
                if !tasks.iter().any(|(t, _)| Arc::ptr_eq(t, &e)) {
                    tasks.push((e, q));
                }
            }
        }
        for &q in qs {
            for &first in firsts {
                // The costliest method first: the chains of the bi-uniform splits.
                for method in [Method::MarkovBiuniform, Method::DropPins, Method::MarkovSwr] {
                    if let Some(e) = self.entry(method, first, q, None) {
                        if !tasks.iter().any(|(t, _)| Arc::ptr_eq(t, &e)) {
                            tasks.push((e, q));
                        }
                    }
                }
            }
        }
        tasks
    }

    /// The entry of (method, first state, q, markov-disabling's other inputs), made
    /// when the store has room for it.
    fn entry(
        &self,
        method: Method,
        first: usize,
        q: &[f64],
        disabling: Option<DisablingInputs>,
    ) -> Option<Arc<Entry>> {
        let mut store = self.entries.lock().ok()?;
        if let Some(e) = store.entries.iter().find(|e| {
            e.method == method
                && e.first == first
                && e.q == q
                && match (disabling, &e.disabling) {
                    (Some(d), Some(key)) => d.matches(key),
                    (d, key) => d.is_none() && key.is_none(),
                }
        }) {
            return Some(e.clone());
        }
        let zeta_len = disabling.map_or(0, |d| d.zeta.len());
        let bytes = 8 * (q.len() + zeta_len + self.horizon.saturating_sub(first) + 1);
        if store.bytes.saturating_add(bytes) > MOST_BYTES {
            return None;
        }
        store.bytes += bytes;
        let e = Arc::new(Entry {
            method,
            first,
            q: q.to_vec(),
            disabling: disabling.map(|d| DisablingKey {
                zeta: d.zeta.to_vec(),
                p_r: d.p_r,
                tolerance: d.tolerance,
            }),
            values: OnceLock::new(),
        });
        store.entries.push(e.clone());
        Some(e)
    }
}

impl Entry {
    /// Its values for states `first..=horizon` on `q`.
    fn compute(&self, q: &[f64], horizon: usize) -> Vec<f64> {
        match &self.disabling {
            Some(key) => disabling_on_runs(q, key.inputs(), horizon + 1 - self.first),
            None => compute(self.method, q, self.first..=horizon),
        }
    }
}

/// markov-disabling's estimates on runs of ranks for the first `states` states of a
/// cycle, as [`super::disabling_estimates`] computes them on runs.
fn disabling_on_runs(q: &[f64], inputs: DisablingInputs, states: usize) -> Vec<f64> {
    let chain = super::runs::RunDisabling::new(q, inputs.zeta, inputs.p_r, inputs.tolerance);
    super::per_state_n(chain, states)
}

/// A shared method's estimates on `q` for `states`, as [`super::super::FnModel`]
/// computes them (its power sums are built from Q the same way).
pub fn compute(method: Method, q: &[f64], states: std::ops::RangeInclusive<usize>) -> Vec<f64> {
    match method {
        Method::MarkovSwr => nonrepeat::with_replacement_of(PowerSums::new(q), states),
        Method::MarkovBiuniform => nonrepeat::biuniform(q, states).0,
        Method::DropPins => nonrepeat::drop_pins_of(PowerSums::new(q), states),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::false_negative::FnModel;
    use rbf_data::filter::FilterConfig;
    use rbf_data::workload::{Placement, Workload};

    /// A model on Zipf(alpha) over D messages (the filter matters only for the profile
    /// the estimates are asked with, not for their values).
    fn model(d: usize, alpha: f64) -> FnModel {
        let w = Workload::zipf(d, alpha, 0.9, Placement::Uniform);
        FnModel::new(&FilterConfig::sigma_bounded(1 << 16, 3, 1 << 14), &w, 1e-12).expect("model")
    }

    fn same_bits(a: &[f64], b: &[f64], what: &str) {
        assert_eq!(a.len(), b.len(), "{what}");
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            assert_eq!(x.to_bits(), y.to_bits(), "{what}: value {i}");
        }
    }

    #[test]
    fn shared_estimates_are_each_filters_own_bit_for_bit() {
        // Workloads from uniform to steep, states below and beyond D, first state 0 and
        // 1 (retaining), ranges asked in an order that grows and shrinks; the store
        // filled by the models themselves and warmed up front.
        let store = SharedEstimates::new(6000);
        let warmed = SharedEstimates::new(6000);
        for (d, alpha) in [(300, 0.0), (2000, 0.8), (5000, 1.2)] {
            let m = model(d, alpha);
            let profile = m.profile(false).expect("profile");
            warmed.warm(&[m.q.as_slice()], &[0, 1], &[], false);
            for method in [Method::MarkovSwr, Method::MarkovBiuniform, Method::DropPins] {
                for first in [0, 1] {
                    for last in [4000, 17, 6000, 250, 1999] {
                        let what = format!("{method:?} D = {d} first {first} last {last}");
                        let own = m
                            .estimates_over(method, &profile, first..=last)
                            .expect("own");
                        let shared = store.values(method, &m.q, first..=last, |s| {
                            m.estimates_over(method, &profile, s).expect("own")
                        });
                        same_bits(&shared, &own, &what);
                        let ready = warmed
                            .values(method, &m.q, first..=last, |_| panic!("{what}: not warmed"));
                        same_bits(&ready, &own, &what);
                    }
                }
            }
        }
    }

    /// markov-disabling on runs of ranks: the store's values, filled by a model or
    /// warmed, are the model's own bits for every profile length (one that would run
    /// rank by rank is not given them); another zeta, p_r or tolerance is another entry.
    #[test]
    fn shared_disabling_estimates_are_each_filters_own_bit_for_bit() {
        let w = Workload::zipf(200_000, 0.9, 0.8, Placement::Uniform);
        let store = SharedEstimates::new(9000);
        let warmed = SharedEstimates::new(9000);
        let mut cases = 0;
        for (m_bits, k, sigma) in [
            (60_000u64, 4u32, 20_000u64),
            (30_000, 3, 9_000),
            (2_000, 3, 300),
        ] {
            for retaining in [false, true] {
                let mut filter = FilterConfig::sigma_bounded(m_bits, k, sigma);
                filter.retaining = retaining;
                for model in [
                    FnModel::new(&filter, &w, 1e-12).expect("model"),
                    FnModel::new(&filter, &w, 1e-12)
                        .expect("model")
                        .for_range_end(),
                ] {
                    cases += usize::from(disabling_shared_as_own(&model, &store, &warmed));
                }
            }
        }
        assert!(cases >= 8, "{cases} cases on runs");
    }

    /// One model's markov-disabling estimates through `store` (filled by the model)
    /// and `warmed` (warmed up front) against its own; whether they ran on runs.
    fn disabling_shared_as_own(
        model: &FnModel,
        store: &Arc<SharedEstimates>,
        warmed: &Arc<SharedEstimates>,
    ) -> bool {
        let profile = model.profile(false).expect("profile");
        let inputs = model.disabling_inputs();
        warmed.warm(&[], &[profile.start], &[(&model.q, inputs)], false);
        let states = profile.start..=profile.last();
        let own = model
            .estimates_over(Method::MarkovDisabling, &profile, states.clone())
            .expect("own");
        let through = |s: &Arc<SharedEstimates>| {
            let m = model.clone().sharing(Some(s.clone()));
            m.estimates(Method::MarkovDisabling, &profile)
                .expect("estimates")
        };
        if !super::super::disabling_on_runs(profile.len(), model.q.len()) {
            // Rank by rank: the model does not take the store's values.
            same_bits(&through(store), &own, "rank by rank");
            return false;
        }
        let what = format!("{} states, tolerance {}", profile.len(), inputs.tolerance);
        same_bits(
            &store.disabling_values(&model.q, inputs, states.clone()),
            &own,
            &what,
        );
        same_bits(
            &warmed.disabling_values(&model.q, inputs, states),
            &own,
            &what,
        );
        same_bits(&through(warmed), &own, &what);
        true
    }

    #[test]
    fn another_p_r_is_another_disabling_entry() {
        let w = Workload::zipf(200_000, 0.9, 0.8, Placement::Uniform);
        let filter = FilterConfig::sigma_bounded(60_000, 4, 20_000);
        let model = FnModel::new(&filter, &w, 1e-12).expect("model");
        let store = SharedEstimates::new(9000);
        let profile = model.profile(false).expect("profile");
        let states = profile.start..=profile.last();
        store.disabling_values(&model.q, model.disabling_inputs(), states);
        let other = FnModel::new(
            &FilterConfig::sigma_bounded(60_000, 4, 20_000),
            &Workload::zipf(200_000, 0.9, 0.5, Placement::Uniform),
            1e-12,
        )
        .expect("model");
        let states = profile.start..=profile.last();
        let own = other
            .estimates_over(Method::MarkovDisabling, &profile, states.clone())
            .expect("own");
        same_bits(
            &store.disabling_values(&other.q, other.disabling_inputs(), states),
            &own,
            "p_r 0.5",
        );
    }

    #[test]
    fn past_the_horizon_or_for_other_methods_a_model_computes_its_own() {
        let q = model(100, 1.0).q;
        let store = SharedEstimates::new(50);
        let calls = std::cell::Cell::new(0);
        let compute = |s: std::ops::RangeInclusive<usize>| {
            calls.set(calls.get() + 1);
            s.map(|i| i as f64).collect::<Vec<f64>>()
        };
        assert_eq!(
            store.values(Method::DropPins, &q, 1..=80, compute).len(),
            80
        );
        assert_eq!(
            store.values(Method::MarkovLower, &q, 1..=20, compute).len(),
            20
        );
        assert_eq!(calls.get(), 2);
        // Within the horizon: computed once, to the horizon, then sliced.
        let first: Vec<f64> = (1..=20).map(|i| i as f64).collect();
        assert_eq!(store.values(Method::DropPins, &q, 1..=20, compute), first);
        assert_eq!(
            store.values(Method::DropPins, &q, 1..=50, compute).len(),
            50
        );
        assert_eq!(calls.get(), 3);
        // Another Q is another entry.
        let other = model(100, 0.5).q;
        store.values(Method::DropPins, &other, 1..=20, compute);
        assert_eq!(calls.get(), 4);
    }
}
