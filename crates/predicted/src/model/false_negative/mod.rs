//! False-negative rates of recycling Bloom filters (the FN paper): Markov-chain bounds
//! and approximations (§4) and the renewal upper bound (§5), for a workload given as
//! (Q, p_r, placement zeta).
//!
//! Two models share one vocabulary ([`method`]: the methods, their claims and results)
//! and a few kernels, and this module puts them behind one facade ([`FnModel`]):
//!
//! * [`renewal`]: the renewal upper bound, one and two phases (eqs. 16-28): its engine,
//!   inputs ([`renewal::input`]), a cycle's bit process ([`renewal::process`],
//!   [`renewal::inscount`]), the running sums ([`renewal::cycle`]), the two-phase lagged
//!   sums ([`renewal::correlate`]) and the certified tolerance mode
//!   ([`renewal::certified`]);
//! * [`markov`]: steady state and rates of the Markov chain, one and two phases
//!   (eqs. 12-15), on the bit-measuring profile ([`markov::profile`], eqs. 1-4) with
//!   per-state non-repeat estimates ([`markov::nonrepeat`], eqs. 5-11);
//! * shared kernels: [`bitdist`] (the bit-count distribution, eqs. 1, 19), [`nbounded`]
//!   (the same for an N-bounded filter, §4.1.2), [`powersums`] (sum_j q_j (1 - q_j)^l
//!   in time independent of D, eqs. 6, 10), [`disabling`] and its kernel [`disabling_step`] (eq. 24)
//!   (messages drawn or new in the current cycle, eq. 24, appendix G.2); the kernels
//!   choose their vector width at run time (`rbf_foundations::simd`), same results at each.
//!
//! Modelled variants: sigma- or N-bounded ([`nbounded`], §4.1.2), colliding or distinct
//! hashing, retaining or not, one phase, or two phases with copy-over (the FN paper's analysis assumes copy-over
//! and, for independence of the halves, rotating hash positions: appendix G.1).

// Recursions over bit counts, ranks and states read best with explicit indices.
#![allow(clippy::needless_range_loop)]

pub mod bitdist;
pub mod disabling;
pub mod disabling_step;
pub mod fft;
pub mod markov;
pub mod method;

/// The FN models' truncation unless a caller says otherwise: states and arrivals with
/// probability below it are dropped (the renewal engine adds what it drops to its
/// bound; the Markov chains report it).
pub const DEFAULT_EPS: f64 = 1e-10;
pub mod nbounded;
pub mod powersums;
pub mod qruns;
pub mod renewal;
// The vector level chosen at run time lives with the foundations (the replay uses it too).

use rayon::prelude::*;

use crate::model::tau::Transitions;
use rbf_data::filter::{FilterConfig, Trigger};
use rbf_data::workload::{ReuseProfile, Workload};
use rbf_foundations::error::{Error, Problem, Result};

pub use markov::profile::Profile;
pub use markov::ChainRates;
pub use method::{
    Claim, FnReport, Guarantee, Look, Method, MethodEntry, MethodResult, Reads, METHODS,
};
pub use renewal::{RenewalMode, RenewalOptions, RenewalResult};

/// Probability of a still-running cycle at the renewal engine's stop above which, with
/// p_r = 1, the model's cycle lengths no longer describe a filter with fixed hash
/// positions ([`FnModel::renewal_guarantee`]).
pub const UNENDING_CYCLES: f64 = 1e-6;

/// A filter and workload ready for the FN models.
#[derive(Clone, Debug)]
pub struct FnModel {
    /// Transitions of one filter array (M bits, or M/2 for two phases).
    pub t: Transitions,
    pub sigma: u64,
    /// N of an N-bounded filter (then `sigma` is unused).
    pub max_inserts: Option<u64>,
    pub retaining: bool,
    pub phases: u8,
    pub independent_halves: bool,
    pub q: Vec<f64>,
    pub zeta: Vec<f64>,
    pub p_r: f64,
    /// An interval of p_r (the conservative end of a fit): the renewal bound then holds
    /// for every p_r in it ([`renewal::cycle::Draws`]); the other methods use `p_r`.
    pub p_r_interval: Option<(f64, f64)>,
    /// A measured reuse profile (fitted workloads): the renewal bound reads U_j from it.
    pub reuse: Option<ReuseProfile>,
    /// Truncation: states or arrivals beyond probability eps are dropped (§4.1.3, §5.1).
    pub eps: f64,
    /// Q's rates for the power sums, built when drop-pins or markov-swr first asks and
    /// then shared by both (one logarithm per rank and the groups' moments, once): of
    /// `q` as built (nothing changes a model's `q` after [`FnModel::new`]).
    rates: std::sync::OnceLock<std::sync::Arc<powersums::Rates>>,
    /// The renewal bound's per-insertion sums when [`FnModel::share_renewal_bits`]
    /// built them: shared by the model's clones (they depend on the filter only).
    renewal_bits: Option<std::sync::Arc<renewal::SharedBits>>,
    /// The hitting-time engine's fields when [`FnModel::share_hitting_fields`] built
    /// them: shared by the model's clones (they depend on the filter only).
    hitting_fields: Option<std::sync::Arc<renewal::hitting::fields::BitFields>>,
    /// Runs of ranks for markov-disabling at large D ([`markov::runs::TOLERANCE`], or
    /// [`markov::runs::RANGE_TOLERANCE`] for [`FnModel::for_range_end`]).
    disabling_tolerance: f64,
    /// Non-repeat estimates shared with other filters' models on the same workload
    /// ([`FnModel::sharing`]).
    shared: Option<std::sync::Arc<markov::shared::SharedEstimates>>,
    /// The Markov profile when [`FnModel::with_profile`] gave one built for the same
    /// filter and eps (it depends on nothing else): used instead of building it again.
    profile: Option<std::sync::Arc<BuiltProfile>>,
    /// Q and zeta as runs of ranks, for a range end of large D ([`FnModel::range_end`]):
    /// then `q` and `zeta` are empty and only the Q-based Markov methods run.
    runs: Option<std::sync::Arc<qruns::QRuns>>,
}

/// D from which a fit's alternative holds Q and zeta as runs of ranks
/// ([`FnModel::range_end`]): below it, its vectors (about 40 bytes a rank with the power
/// sums' rates) take under 100 MB, and its values are the rank-by-rank ones.
pub const RUNS_FROM: usize = 1 << 21;

/// A Markov profile built once ([`FnModel::build_profile`]) for every model of one
/// filter (the fit's, its alternatives', a synthetic source's true workload): it reads
/// the filter and eps only, and at megabyte filters it is the costliest part of the
/// Markov methods (about 10 s at 2^23 bits, O(M^1.5)).
#[derive(Debug)]
pub struct BuiltProfile {
    pub profile: Profile,
    /// Wall seconds it took to build (reported with the first Markov method of each
    /// model that uses it, as that model's cost when run alone).
    pub seconds: f64,
    /// What it was built from: (transitions, sigma, N, retaining, eps bits).
    key: (Transitions, u64, Option<u64>, bool, u64),
}

impl FnModel {
    /// Checks that the variant is one the FN models cover; errors name the setting.
    pub fn new(filter: &FilterConfig, workload: &Workload, eps: f64) -> Result<FnModel> {
        FnModel::checked(filter, workload, eps, || rank_by_rank(workload))
    }

    /// [`FnModel::new`] with Q and zeta as `held` makes them (rank by rank, or as runs
    /// with the vectors empty), once every setting is checked.
    fn checked(
        filter: &FilterConfig,
        workload: &Workload,
        eps: f64,
        held: impl FnOnce() -> Result<(Vec<f64>, Vec<f64>, Option<qruns::QRuns>)>,
    ) -> Result<FnModel> {
        filter.validate()?;
        workload.validate()?;
        let (sigma, max_inserts) = match filter.trigger()? {
            Trigger::Sigma(s) => (s, None),
            Trigger::MaxInserts(n) => {
                // N insertions that set bits need at least N bits; the joint law of
                // (insertions, bits) has O(N^2 k) cells, so N is kept moderate.
                if n >= filter.half_memory() || n > 20_000 {
                    // The old text gives the value after "; found", which a range's
                    // ", found" would change: the value stays in the rule's text.
                    return Err(Error::setting(
                        "max_inserts",
                        Problem::rule(format!(
                            "the N-bounded FN models need N below the bits per array ({}) and at most 20000; found {n}",
                            filter.half_memory()
                        )),
                    ));
                }
                (u64::from(filter.hashes), Some(n))
            }
        };
        // Bit-count distributions over up to sigma states (eq. 1's chain, a few arrays).
        rbf_foundations::resources::check_memory(
            &format!("the FN models' bit-count distribution for sigma = {sigma}"),
            32.0 * sigma as f64,
        )?;
        if sigma < u64::from(filter.hashes) {
            return Err(Error::setting(
                "sigma",
                Problem::range(
                    format!("the FN models need sigma >= k (= {})", filter.hashes),
                    sigma,
                ),
            ));
        }
        if filter.phases == 2 && !filter.copy_over {
            return Err(Error::setting(
                "copy_over",
                Problem::Conflict(
                    "the FN paper's two-phase analysis assumes copy-over (§4.2.7); --no-copy-over is not modelled".into(),
                ),
            ));
        }
        if workload.p_repeat_interval.is_some() && workload.reuse.is_none() {
            return Err(Error::setting(
                "p_repeat_interval",
                Problem::Conflict(
                    "an interval of p_r needs a measured reuse profile (`reuse`): with Q and zeta the sequence U_j itself depends on p_r".into(),
                ),
            ));
        }
        check_eps(eps)?;
        let (q, zeta, runs) = held()?;
        Ok(FnModel {
            t: Transitions::new(filter.half_memory(), filter.hashes, filter.hashing),
            sigma,
            max_inserts,
            retaining: filter.retaining,
            phases: filter.phases,
            independent_halves: filter.independent_halves,
            q,
            zeta,
            p_r: workload.p_repeat,
            p_r_interval: workload.p_repeat_interval.map(|[l, h]| (l, h)),
            reuse: workload.reuse.clone(),
            eps,
            rates: std::sync::OnceLock::new(),
            renewal_bits: None,
            hitting_fields: None,
            disabling_tolerance: markov::runs::TOLERANCE,
            shared: None,
            profile: None,
            runs: runs.map(std::sync::Arc::new),
        })
    }

    /// The model of one of a fit's alternative workloads, whose Markov values only set
    /// the ends of a printed range ([`FnModel::for_range_end`]). From [`RUNS_FROM`] ranks
    /// (a trace that cannot rule out D up to 64 times its distinct keys gives
    /// alternatives of tens of millions) Q and zeta are held as runs of ranks at
    /// [`markov::runs::RANGE_TOLERANCE`], formed without building the vectors
    /// ([`qruns::QRuns::from_workload`]): markov-disabling steps the runs it stepped
    /// before (the same values), markov-uniform reads D, markov-lower and
    /// markov-biuniform keep their direction ([`qruns::QRuns`]), markov-swr and
    /// drop-pins read each run at its mean q (second order in the tolerance). The
    /// renewal bound is not computed on such a model.
    pub fn range_end(filter: &FilterConfig, workload: &Workload, eps: f64) -> Result<FnModel> {
        let model = FnModel::checked(filter, workload, eps, || {
            if workload.distinct() >= RUNS_FROM {
                let tolerance = markov::runs::RANGE_TOLERANCE;
                if let Some(runs) = qruns::QRuns::from_workload(workload, tolerance)? {
                    return Ok((Vec::new(), Vec::new(), Some(runs)));
                }
            }
            rank_by_rank(workload)
        })?;
        Ok(model.for_range_end())
    }

    /// D, the ranks of Q.
    pub fn distinct(&self) -> usize {
        self.runs.as_ref().map_or(self.q.len(), |r| r.distinct())
    }

    /// The renewal bound (§5). Errors when sigma + k reaches the bits per array.
    pub fn renewal(&self, options: RenewalOptions) -> Result<RenewalResult> {
        self.ranks_held()?;
        renewal::renewal(&self.renewal_input(), options)
    }

    /// The tolerance the renewal bound runs with under `options` (None: the exact
    /// engine; [`renewal::RenewalInput::tolerance`]).
    pub fn renewal_tolerance(&self, options: RenewalOptions) -> Option<f64> {
        self.renewal_input().tolerance(&options)
    }

    /// [`FnModel::renewal`] of this model and of each of `others` that shares its bit
    /// process (the same filter and reuse profile, p_r or its interval's bottom the
    /// same: [`renewal::lanes`]), on that one process: the same results as computed
    /// apart. None for the others that do not share it, and for all when this model
    /// cannot lend its process (then compute them apart).
    pub fn renewal_lanes(
        &self,
        others: &[FnModel],
        options: RenewalOptions,
    ) -> Result<Vec<Option<RenewalResult>>> {
        self.ranks_held()?;
        for other in others {
            other.ranks_held()?;
        }
        let others: Vec<_> = others.iter().map(FnModel::renewal_input).collect();
        renewal::lanes::renewal_lanes(&self.renewal_input(), &others, options)
    }

    /// An error for a model whose Q is held as runs ([`FnModel::range_end`]): what
    /// needs Q rank by rank does not run on it.
    fn ranks_held(&self) -> Result<()> {
        match self.runs {
            None => Ok(()),
            Some(_) => Err(Error::setting(
                "method",
                Problem::Conflict(
                    "a fit's alternative of large D holds Q as runs of ranks: only the Q-based Markov methods run on it".into(),
                ),
            )),
        }
    }

    fn renewal_input(&self) -> renewal::RenewalInput<'_> {
        renewal::RenewalInput {
            t: self.t,
            sigma: self.sigma,
            max_inserts: self.max_inserts,
            retaining: self.retaining,
            phases: self.phases,
            q: &self.q,
            zeta: &self.zeta,
            p_r: self.p_r,
            p_r_interval: self.p_r_interval,
            reuse: self.reuse.as_ref(),
            shared_bits: self.renewal_bits.as_deref(),
            hitting_fields: self.hitting_fields.as_deref(),
        }
    }

    /// Builds the hitting-time engine's fields now, to be shared by this model's
    /// clones (the same values; a clone whose filter differs builds its own).
    pub fn share_hitting_fields(&mut self) {
        self.hitting_fields =
            renewal::hitting::shared_fields(&self.renewal_input()).map(std::sync::Arc::new);
    }

    /// Builds the renewal bound's per-insertion sums for `options` now, to be shared
    /// by this model's clones: renewal computations that differ only in p_r, its
    /// interval or U then skip building them (the same values; a clone whose filter
    /// fields or `tiny` differ builds its own).
    pub fn share_renewal_bits(&mut self, options: RenewalOptions) -> Result<()> {
        let shared = renewal::SharedBits::build(&self.renewal_input(), options)?;
        self.renewal_bits = shared.map(std::sync::Arc::new);
        Ok(())
    }

    /// The bit-measuring profile of the Markov chain (§4.1.1); an N-bounded one shows
    /// its progress when `progress` is set and stops at Ctrl-C or SIGTERM.
    pub fn profile(&self, progress: bool) -> Result<Profile> {
        match self.max_inserts {
            Some(n) => Profile::n_bounded(self.t, n, self.retaining, self.eps, progress),
            None => Profile::new(self.t, self.sigma, self.retaining, self.eps),
        }
    }

    /// The profile of this model's filter, timed, to hand to the other models of the
    /// same filter ([`FnModel::with_profile`]).
    pub fn build_profile(&self, progress: bool) -> Result<std::sync::Arc<BuiltProfile>> {
        let (profile, seconds) = timed(|| self.profile(progress));
        Ok(std::sync::Arc::new(BuiltProfile {
            profile: profile?,
            seconds,
            key: self.profile_key(),
        }))
    }

    /// This model using `built` as its Markov profile where it was built for the same
    /// filter and eps (else it builds its own, as without it): the same values, the
    /// profile computed once.
    pub fn with_profile(mut self, built: Option<&std::sync::Arc<BuiltProfile>>) -> Self {
        self.profile = built.filter(|b| b.key == self.profile_key()).cloned();
        self
    }

    /// What the profile reads.
    fn profile_key(&self) -> (Transitions, u64, Option<u64>, bool, u64) {
        (
            self.t,
            self.sigma,
            self.max_inserts,
            self.retaining,
            self.eps.to_bits(),
        )
    }

    /// The profile given by [`FnModel::with_profile`], else one built now.
    pub fn shared_or_built_profile(&self, progress: bool) -> Result<std::sync::Arc<BuiltProfile>> {
        match &self.profile {
            Some(p) => Ok(p.clone()),
            None => self.build_profile(progress),
        }
    }

    /// This model as one of a fit's alternative workloads, whose Markov values only set
    /// the ends of a printed range: markov-disabling then runs on the coarser runs of
    /// [`markov::runs::RANGE_TOLERANCE`] (agreement [`markov::runs::RANGE_AGREEMENT`],
    /// far inside a two-digit end rounded outward). Every other method is unchanged.
    pub fn for_range_end(mut self) -> FnModel {
        self.disabling_tolerance = markov::runs::RANGE_TOLERANCE;
        self
    }

    /// This model taking the non-repeat estimates that depend on Q alone from `shared`
    /// (computed once for every filter of a sweep on this workload; the same bits,
    /// [`markov::shared`]).
    pub fn sharing(
        mut self,
        shared: Option<std::sync::Arc<markov::shared::SharedEstimates>>,
    ) -> Self {
        self.shared = shared;
        self
    }

    /// Per-state non-repeat estimates for a Markov method (None for the renewal model,
    /// which has no states).
    pub fn estimates(&self, method: Method, profile: &Profile) -> Option<Vec<f64>> {
        let states = profile.start..=profile.last();
        if let Some(runs) = &self.runs {
            return self.estimates_on_runs(runs, method, profile, states);
        }
        match &self.shared {
            Some(shared) if markov::shared::SharedEstimates::shares(method) => {
                Some(shared.values(method, &self.q, states, |s| {
                    self.estimates_over(method, profile, s).unwrap_or_default()
                }))
            }
            Some(shared)
                if method == Method::MarkovDisabling
                    && markov::disabling_on_runs(profile.len(), self.q.len()) =>
            {
                Some(shared.disabling_values(&self.q, self.disabling_inputs(), states))
            }
            _ => self.estimates_over(method, profile, states),
        }
    }

    /// [`FnModel::estimates`] for `states`.
    fn estimates_over(
        &self,
        method: Method,
        profile: &Profile,
        states: std::ops::RangeInclusive<usize>,
    ) -> Option<Vec<f64>> {
        Some(match method {
            Method::MarkovLower => markov::nonrepeat::lower(&self.q, states),
            Method::MarkovSwr => markov::nonrepeat::with_replacement_of(self.power_sums(), states),
            Method::MarkovUniform => markov::nonrepeat::uniform(self.q.len(), states),
            Method::MarkovBiuniform => markov::nonrepeat::biuniform(&self.q, states).0,
            Method::DropPins => markov::nonrepeat::drop_pins_of(self.power_sums(), states),
            Method::MarkovDisabling => markov::disabling_estimates(
                &self.q,
                &self.zeta,
                self.p_r,
                profile,
                self.disabling_tolerance,
            ),
            Method::Renewal | Method::RenewalTrace => return None,
        })
    }

    /// [`FnModel::estimates`] of a model whose Q is held as `runs` (not shared: every
    /// method costs the runs, a few thousand, per state at most).
    fn estimates_on_runs(
        &self,
        runs: &qruns::QRuns,
        method: Method,
        profile: &Profile,
        states: std::ops::RangeInclusive<usize>,
    ) -> Option<Vec<f64>> {
        Some(match method {
            Method::MarkovLower => runs.lower(states),
            Method::MarkovSwr => markov::nonrepeat::with_replacement_of(self.power_sums(), states),
            Method::MarkovUniform => markov::nonrepeat::uniform(runs.distinct(), states),
            Method::MarkovBiuniform => runs.biuniform(states).0,
            Method::DropPins => markov::nonrepeat::drop_pins_of(self.power_sums(), states),
            Method::MarkovDisabling => markov::per_state(
                markov::runs::RunDisabling::from_runs(runs, self.p_r),
                profile,
            ),
            Method::Renewal | Method::RenewalTrace => return None,
        })
    }

    /// What markov-disabling reads besides Q and the states, for the shared store.
    pub fn disabling_inputs(&self) -> markov::shared::DisablingInputs<'_> {
        markov::shared::DisablingInputs {
            zeta: &self.zeta,
            p_r: self.p_r,
            tolerance: self.disabling_tolerance,
        }
    }

    /// Power sums of Q, on rates built once per model ([`powersums::Rates`]).
    fn power_sums(&self) -> powersums::PowerSums {
        let rates = self.rates.get_or_init(|| {
            std::sync::Arc::new(match &self.runs {
                Some(runs) => powersums::Rates::of_runs(runs),
                None => powersums::Rates::new(&self.q, &self.q),
            })
        });
        powersums::PowerSums::from_rates(rates.clone())
    }

    /// Rates of the Markov chain for a method (None for the renewal model).
    pub fn markov(&self, method: Method, profile: &Profile) -> Option<ChainRates> {
        let f = self.estimates(method, profile)?;
        Some(if self.phases == 2 {
            markov::two_phase(profile, &f, self.p_r)
        } else {
            markov::one_phase(profile, &f, self.p_r)
        })
    }

    /// What each method's number is for this filter and workload, under the FN
    /// paper's arrival model with this workload (whether the workload describes a
    /// trace is the caller's to say: `rbf_judge::compare` calls a bound on a fitted
    /// workload a bound for the fitted model).
    pub fn guarantee(&self, method: Method) -> Guarantee {
        self.variant_guarantee(method)
    }

    /// The renewal bound's guarantee once it is computed: without new arrivals, a cycle
    /// the engine saw still running when the messages ran out is, in the model, a cycle
    /// whose messages' bits happened to stay at or below sigma and that never ends
    /// (each cycle draws fresh hash positions). A real filter's hash positions are fixed:
    /// its cycles either all end or never do, so the model's cycle lengths, and with
    /// them this number, are not a bound for it (measured: 1.0e-2 against an observed
    /// 3.0e-2 at D = 1000, M = 10 560, k = 8, sigma = 5640, p_r = 1).
    pub fn renewal_guarantee(&self, r: &RenewalResult) -> Guarantee {
        self.renewal_guarantee_truncated(r.truncated_mass)
    }

    /// [`FnModel::renewal_guarantee`] from the largest probability of a still-running
    /// cycle at the engine's stop over the computations behind a bound (several for a
    /// bound over an interval of p_r, which reaches p_r = 1 when its high end does).
    pub fn renewal_guarantee_truncated(&self, truncated_mass: f64) -> Guarantee {
        let mut g = self.guarantee(Method::Renewal);
        let high = self.p_r_interval.map_or(self.p_r, |(_, h)| h.max(self.p_r));
        if high >= 1.0 && truncated_mass > UNENDING_CYCLES {
            g.guaranteed = false;
            g.note = format!(
                "a bound for the model, not for a real filter: with p_r = 1 the model's cycles were still running with probability {:.2} when the D messages ran out (their bits stayed at or below sigma); the model draws fresh hash positions per cycle, a real filter's are fixed, so its cycles end far more often than the model's and its FN can exceed this number ({})",
                truncated_mass, g.note
            );
        }
        g
    }

    fn variant_guarantee(&self, method: Method) -> Guarantee {
        let repeats_only = self.p_r >= 1.0;
        let one = self.phases == 1;
        // The claim is the method's own (its entry of METHODS); what varies with the
        // filter and the workload is whether it is proven.
        let g = |guaranteed, note: &str| Guarantee {
            claim: method.claim(),
            guaranteed,
            note: note.to_string(),
        };
        match method {
            Method::Renewal if one && self.max_inserts.is_some() => g(true,
                "renewal bound, N-bounded: one more message adds at most one bit-setting insertion (the N + 1 analogue of Theorem 7), appendix E.1, window error added",
            ),
            Method::Renewal if one => g(true,
                "renewal bound: Theorem 7 and appendix E.1, window error added",
            ),
            Method::Renewal if self.independent_halves => g(true,
                "two-phase renewal bound (eqs. 27-28); assumes copy-over and independent halves",
            ),
            Method::Renewal => g(false,
                "eqs. 27-28 assume independent hash positions in the two halves (appendix G.1); this filter reuses them",
            ),
            Method::MarkovLower if one && repeats_only => g(true,
                "lower bound for repeat draws (eq. 5, Theorem 3)",
            ),
            Method::MarkovLower => g(false,
                if one {
                    "eq. 5 is argued for repeat draws only and p_r < 1"
                } else {
                    "the two-phase product form (eq. 15) ignores the correlation of the halves"
                },
            ),
            Method::MarkovSwr | Method::MarkovUniform | Method::MarkovBiuniform
                if one && repeats_only =>
            {
                g(true,
                    "upper bound for repeat draws (Theorems 3-6, appendix B)",
                )
            }
            Method::MarkovSwr | Method::MarkovUniform | Method::MarkovBiuniform => g(false,
                if one {
                    "the Markov bounds are proven for repeat draws only and p_r < 1"
                } else {
                    "the two-phase product form (eq. 15) multiplies per-half averages, which under-estimates the joint miss probability"
                },
            ),
            Method::RenewalTrace => g(true,
                "the renewal argument on the trace's own recycles: needs the trace itself",
            ),
            Method::DropPins => g(false, "average-case approximation (eqs. 10-11)"),
            Method::MarkovDisabling => g(false,
                "mean-field approximation with new arrivals (appendix G.2)",
            ),
        }
    }

    /// Runs the requested methods. The profile is computed once for all Markov methods.
    /// The methods are independent jobs on rayon's threads (the renewal bound beside
    /// the Markov methods, each of those its own job once the profile is built), unless
    /// progress is shown (one display at a time); every value is computed on its own,
    /// so the results are the same on any number of threads, and the error returned is
    /// the first in `methods`' order, as a loop over them meets it.
    pub fn evaluate(&self, methods: &[Method], options: RenewalOptions) -> Result<FnReport> {
        let renewal = || {
            methods
                .contains(&Method::Renewal)
                .then(|| timed(|| self.renewal(options)))
        };
        let chains = || {
            let markov_asked = methods
                .iter()
                .any(|&m| m != Method::Renewal && !m.reads_trace());
            markov_asked.then(|| {
                let profile = self.shared_or_built_profile(options.progress);
                let seconds = profile.as_ref().map_or(0.0, |p| p.seconds);
                let chains = match &profile {
                    Ok(p) if !options.progress => methods
                        .par_iter()
                        .with_max_len(1)
                        .map(|&m| timed(|| self.markov(m, &p.profile)))
                        .collect(),
                    Ok(p) => methods
                        .iter()
                        .map(|&m| timed(|| self.markov(m, &p.profile)))
                        .collect(),
                    Err(_) => Vec::new(),
                };
                (profile, seconds, chains)
            })
        };
        let (mut renewal, chains) = if options.progress {
            (renewal(), chains())
        } else {
            rayon::join(renewal, chains)
        };
        // The profile's seconds go to the first Markov method, as in a loop over them.
        let (mut profile, mut profile_seconds, chains) = match chains {
            Some((p, s, c)) => (Some(p), s, c),
            None => (None, 0.0, Vec::new()),
        };
        let mut results = Vec::new();
        let mut renewal_result = None;
        for (i, &m) in methods.iter().enumerate() {
            if m.reads_trace() {
                // Not a model of a workload: the judge reads it off the trace.
                continue;
            }
            let (fn_rate, fp_rate, guarantee, seconds) = match (m, chains.get(i)) {
                (Method::Renewal, _) => {
                    // Computed once, however often the list names it.
                    let (r, seconds) = match renewal.take() {
                        Some((r, seconds)) => (r?, seconds),
                        None => (renewal_result.ok_or_else(not_computed)?, 0.0),
                    };
                    renewal_result = Some(r);
                    (r.fn_upper, r.fp_rate, self.renewal_guarantee(&r), seconds)
                }
                (_, Some((Some(r), seconds))) => {
                    let seconds = seconds + std::mem::take(&mut profile_seconds);
                    (r.fn_rate, r.fp_rate, self.guarantee(m), seconds)
                }
                // No chain: the profile failed (or, impossibly, the method has none).
                _ => {
                    return Err(profile
                        .take()
                        .and_then(|p| p.err())
                        .unwrap_or_else(not_computed))
                }
            };
            results.push(MethodResult {
                method: m,
                fn_rate,
                fp_rate,
                guarantee,
                seconds,
            });
        }
        Ok(FnReport {
            results,
            renewal: renewal_result,
            markov_states: profile.and_then(|p| p.ok()).map(|p| p.profile.len()),
        })
    }
}

/// Q and zeta rank by rank, for [`FnModel::checked`].
fn rank_by_rank(workload: &Workload) -> Result<(Vec<f64>, Vec<f64>, Option<qruns::QRuns>)> {
    let q = workload.repeat_distribution()?.into();
    Ok((q, workload.placement_distribution()?.into(), None))
}

/// The error for a method [`FnModel::evaluate`] did not compute (not expected).
fn not_computed() -> Error {
    Error::Internal("a requested FN method was not computed")
}

/// `f`'s value and its wall seconds.
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t = std::time::Instant::now();
    let r = f();
    (r, t.elapsed().as_secs_f64())
}

/// eps, the truncation of the FN models (appendix E.1), in (0, 0.01): checked wherever
/// it is read (flags, configs), before any trace is read, with the models' own rule.
pub fn check_eps(eps: f64) -> Result<()> {
    if eps > 0.0 && eps < 1e-2 {
        Ok(())
    } else {
        Err(Error::setting(
            "eps",
            Problem::range("must lie in (0, 0.01)", eps),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rbf_data::workload::Placement;

    /// The methods that read Q.
    const Q_METHODS: [Method; 6] = [
        Method::MarkovLower,
        Method::MarkovSwr,
        Method::MarkovUniform,
        Method::MarkovBiuniform,
        Method::DropPins,
        Method::MarkovDisabling,
    ];

    #[test]
    fn a_range_end_model_changes_only_markov_disabling_and_within_its_agreement() {
        // D = 10^6: markov-disabling runs on runs of ranks, coarser for a range end.
        let filter = FilterConfig::sigma_bounded(60_000, 4, 20_000);
        let w = Workload::zipf(1_000_000, 0.9, 0.8, Placement::Uniform);
        let point = FnModel::new(&filter, &w, DEFAULT_EPS).unwrap();
        let end = point.clone().for_range_end();
        let profile = point.profile(false).unwrap();
        for m in Q_METHODS {
            let (a, b) = (
                point.markov(m, &profile).unwrap().fn_rate,
                end.markov(m, &profile).unwrap().fn_rate,
            );
            if m == Method::MarkovDisabling {
                assert_ne!(a.to_bits(), b.to_bits(), "the coarser runs were not used");
                assert!(
                    (a - b).abs() <= markov::runs::RANGE_AGREEMENT * a,
                    "{a:e} vs {b:e}"
                );
            } else {
                assert_eq!(a.to_bits(), b.to_bits(), "{m:?}");
            }
        }
    }

    /// A range end of D >= RUNS_FROM held as runs against the same alternative held rank
    /// by rank, one and two phases, three shapes of a fit: markov-disabling and
    /// markov-uniform give the same bits, markov-lower's estimates stay at or below its
    /// own (its direction kept), and every method's rate within the range ends'
    /// agreement.
    /// A fit's alternative of D >= RUNS_FROM: piecewise Zipf, mixture placement.
    fn large_alternative(s: usize) -> Workload {
        use rbf_data::workload::Popularity;
        let (exponents, p_r, z) = [
            (
                vec![1.1, 1.0, 1.1, 1.2, 1.0, 1.3, 1.1],
                0.95,
                [0.0, 0.3, 0.0, 0.7, 0.0, 0.0],
            ),
            (
                vec![0.8, 0.9, 0.7, 1.0, 0.6, 0.9, 0.8],
                0.9,
                [0.2, 0.0, 0.5, 0.1, 0.1, 0.1],
            ),
            (
                vec![1.4, 1.2, 1.0, 1.5, 1.3, 1.1, 1.2],
                0.8,
                [0.0, 1.0, 0.0, 0.0, 0.0, 0.0],
            ),
        ][s]
            .clone();
        Workload {
            popularity: Popularity::PiecewiseZipf {
                distinct: RUNS_FROM + 12_345 * s,
                exponents,
            },
            placement: Placement::Mixture {
                top: z[0],
                bottom: z[1],
                segments: z[2..].to_vec(),
            },
            ..Workload::zipf(10, 1.0, p_r, Placement::Uniform)
        }
    }

    /// A range end of D >= RUNS_FROM held as runs against the same alternative held rank
    /// by rank, one and two phases, three shapes of a fit: markov-disabling and
    /// markov-uniform give the same bits, markov-lower's estimates stay at or below its
    /// own (its direction kept), and every method's rate within the range ends'
    /// agreement.
    #[test]
    fn a_range_end_held_as_runs_keeps_the_values_of_its_ranks() {
        let mut worst = 0.0_f64;
        for s in 0..3 {
            let w = large_alternative(s);
            let mut filter = FilterConfig::sigma_bounded(40_000, 4, 12_000);
            filter.phases = 1 + (s % 2) as u8;
            let ranks = FnModel::new(&filter, &w, DEFAULT_EPS)
                .unwrap()
                .for_range_end();
            let runs = FnModel::range_end(&filter, &w, DEFAULT_EPS).unwrap();
            assert!(runs.q.is_empty() && runs.distinct() == ranks.distinct());
            assert!(runs.renewal(RenewalOptions::default()).is_err());
            let profile = ranks.profile(false).unwrap();
            for m in Q_METHODS {
                let (a, b) = (
                    ranks.markov(m, &profile).unwrap().fn_rate,
                    runs.markov(m, &profile).unwrap().fn_rate,
                );
                // The per-state estimates keep their direction (the chain's rate need
                // not be monotone in them).
                let (fa, fb) = (
                    ranks.estimates(m, &profile).unwrap(),
                    runs.estimates(m, &profile).unwrap(),
                );
                let pairs = fa.iter().zip(&fb);
                match m {
                    Method::MarkovDisabling | Method::MarkovUniform => {
                        assert_eq!(a.to_bits(), b.to_bits(), "{m:?}, shape {s}")
                    }
                    Method::MarkovLower => {
                        assert!(pairs.clone().all(|(x, y)| *y <= x * (1.0 + 1e-12)), "{m:?}")
                    }
                    _ => {}
                }
                assert!(
                    (a - b).abs() <= markov::runs::RANGE_AGREEMENT * a,
                    "{m:?}, shape {s}: {a:e} rank by rank, {b:e} on runs"
                );
                worst = worst.max((a - b).abs() / a);
            }
        }
        eprintln!("range ends on runs: largest relative difference {worst:e}");
    }

    /// A profile built once and given to the models of the same filter (another
    /// workload, a clone) gives each the bits of its own build; one built for another
    /// filter or eps is not used (the model builds its own), whatever it holds.
    #[test]
    fn a_shared_profile_gives_the_bits_of_an_own_build_and_only_for_its_filter() {
        let methods: Vec<Method> = Method::ALL
            .into_iter()
            .filter(|m| m.reads_popularity())
            .collect();
        let options = RenewalOptions::default();
        for (sigma, n, phases) in [(2000u64, None, 1u8), (1400, None, 2), (0, Some(300u64), 1)] {
            let mut filter = FilterConfig::sigma_bounded(8000, 4, sigma);
            filter.phases = phases;
            if n.is_some() {
                filter.sigma = None;
                filter.max_inserts = n;
            }
            let w = Workload::zipf(1000, 1.0, 0.9, Placement::Uniform);
            let other = Workload::zipf(3000, 0.7, 0.5, Placement::Bottom);
            let built = FnModel::new(&filter, &w, DEFAULT_EPS)
                .unwrap()
                .build_profile(false)
                .unwrap();
            for workload in [&w, &other] {
                let own = FnModel::new(&filter, workload, DEFAULT_EPS).unwrap();
                let given = own.clone().with_profile(Some(&built));
                assert!(std::sync::Arc::ptr_eq(
                    &given.shared_or_built_profile(false).unwrap(),
                    &built
                ));
                let (a, b) = (
                    own.evaluate(&methods, options).unwrap(),
                    given.evaluate(&methods, options).unwrap(),
                );
                assert_eq!(a.markov_states, b.markov_states);
                for (x, y) in a.results.iter().zip(&b.results) {
                    assert_eq!(x.method, y.method);
                    assert_eq!(x.fn_rate.to_bits(), y.fn_rate.to_bits(), "{:?}", x.method);
                    assert_eq!(x.fp_rate.to_bits(), y.fp_rate.to_bits(), "{:?}", x.method);
                }
            }
            // Another sigma (or N), another eps: the given profile is not theirs.
            let mut wider = filter.clone();
            match n {
                Some(n) => wider.max_inserts = Some(n + 1),
                None => wider.sigma = Some(sigma + 1),
            }
            for (f, eps) in [(wider, DEFAULT_EPS), (filter, DEFAULT_EPS * 10.0)] {
                let m = FnModel::new(&f, &w, eps)
                    .unwrap()
                    .with_profile(Some(&built));
                let p = m.shared_or_built_profile(false).unwrap();
                assert!(!std::sync::Arc::ptr_eq(&p, &built));
                assert_eq!(p.profile.len(), m.profile(false).unwrap().len());
            }
        }
    }

    /// `evaluate` runs the methods side by side; each value, claim and the profile's
    /// size are those of the method computed alone, in the order asked, on one thread
    /// and on two: one and two phases, sigma- and N-bounded, Zipf of several shapes and
    /// placements, lists in several orders.
    #[test]
    fn evaluated_side_by_side_is_each_method_alone() {
        let mut cases = 0;
        // The models of a workload: renewal-trace reads a trace, and `evaluate` leaves
        // it to the judge (checked below: asking for it adds no result).
        let models: Vec<Method> = Method::ALL
            .into_iter()
            .filter(|m| !m.reads_trace())
            .collect();
        let lists: [Vec<Method>; 3] = [
            models.clone(),
            models.iter().rev().copied().collect(),
            vec![Method::DropPins, Method::Renewal, Method::MarkovSwr],
        ];
        for (memory, k, sigma, n, phases) in [
            (8000u64, 4u32, 2000u64, None, 1u8),
            (6000, 3, 1400, None, 2),
            (3000, 3, 0, Some(300u64), 1),
        ] {
            let mut filter = FilterConfig::sigma_bounded(memory, k, sigma);
            filter.phases = phases;
            if n.is_some() {
                filter.sigma = None;
                filter.max_inserts = n;
            }
            for (d, zipf, p_r, placement) in [
                (1000, 1.0, 0.9, Placement::Uniform),
                (3000, 0.7, 0.5, Placement::Bottom),
                (500, 1.3, 0.8, Placement::Top),
            ] {
                let w = Workload::zipf(d, zipf, p_r, placement);
                let model = FnModel::new(&filter, &w, DEFAULT_EPS).unwrap();
                let options = RenewalOptions::default();
                let profile = model.profile(false).unwrap();
                for methods in &lists {
                    for threads in [1, 2] {
                        let pool = rayon::ThreadPoolBuilder::new()
                            .num_threads(threads)
                            .build()
                            .unwrap();
                        let report = pool.install(|| model.evaluate(methods, options)).unwrap();
                        let got: Vec<Method> = report.results.iter().map(|r| r.method).collect();
                        assert_eq!(&got, methods);
                        let with_trace: Vec<Method> = methods
                            .iter()
                            .copied()
                            .chain([Method::RenewalTrace])
                            .collect();
                        let again = pool.install(|| model.evaluate(&with_trace, options));
                        let again: Vec<Method> =
                            again.unwrap().results.iter().map(|r| r.method).collect();
                        assert_eq!(&again, methods);
                        assert_eq!(report.markov_states, Some(profile.len()));
                        for r in &report.results {
                            let (fn_rate, fp_rate, guarantee) =
                                match model.markov(r.method, &profile) {
                                    Some(c) => (c.fn_rate, c.fp_rate, model.guarantee(r.method)),
                                    None => {
                                        let alone = model.renewal(options).unwrap();
                                        assert_eq!(report.renewal, Some(alone));
                                        (
                                            alone.fn_upper,
                                            alone.fp_rate,
                                            model.renewal_guarantee(&alone),
                                        )
                                    }
                                };
                            assert_eq!(r.fn_rate.to_bits(), fn_rate.to_bits(), "{:?}", r.method);
                            assert_eq!(r.fp_rate.to_bits(), fp_rate.to_bits(), "{:?}", r.method);
                            assert_eq!(r.guarantee, guarantee);
                            cases += 1;
                        }
                    }
                }
            }
        }
        assert!(cases >= 200, "{cases} values compared");
        // The renewal bound alone: no profile.
        let filter = FilterConfig::sigma_bounded(8000, 4, 2000);
        let w = Workload::zipf(1000, 1.0, 0.9, Placement::Uniform);
        let model = FnModel::new(&filter, &w, DEFAULT_EPS).unwrap();
        let r = model
            .evaluate(&[Method::Renewal], RenewalOptions::default())
            .unwrap();
        assert_eq!((r.results.len(), r.markov_states), (1, None));
    }

    /// The first error in the methods' order is the one returned, as a loop over them
    /// would meet it: a tolerance out of range fails the renewal bound (the Markov
    /// methods run), listed first or last alike.
    #[test]
    fn the_renewal_bound_errs_wherever_it_is_listed() {
        let filter = FilterConfig::sigma_bounded(2000, 4, 500);
        let w = Workload::zipf(300, 1.0, 0.9, Placement::Uniform);
        let model = FnModel::new(&filter, &w, DEFAULT_EPS).unwrap();
        let options = RenewalOptions {
            tolerance: Some(2.0),
            ..RenewalOptions::default()
        };
        for methods in [
            vec![Method::Renewal, Method::MarkovLower],
            vec![Method::MarkovLower, Method::Renewal],
        ] {
            let e = model.evaluate(&methods, options).unwrap_err();
            assert!(e.to_string().contains("tolerance"), "{e}");
        }
    }
}
