//! The Markov model over "distinct messages recorded this cycle" (FN §4.1, §4.2.7).
//!
//! From state i an arrival is a repeat (self-loop) with probability p_r (1 - f^[i]);
//! otherwise (probability e_i = 1 - p_r + p_r f^[i]) it is distinct and the chain moves
//! to i + 1, or back to the start state when that message triggers a recycle
//! (probability rho(i)). A cycle therefore reaches state i with probability reach(i)
//! and stays there 1/e_i arrivals on average, so the steady state is
//! Pi_i ~ reach(i) / e_i (§4.1.3, normalised over the states kept by the truncation).
//! The false-negative rate is sum_i Pi_i p_r f^[i] (1 - gamma(i)) (the red transitions)
//! and the FN paper's false-positive rate sum_i Pi_i (1 - p_r) gamma(i) (footnote 2).
//!
//! Two phases with copy-over (eqs. 12-15): the active half runs the one-phase chain on
//! M/2 bits; the frozen half froze in state j with probability F_j = reach(j) rho(j)
//! (the per-cycle law of the final state; the printed eq. 12 weights by the per-arrival
//! Pi_j instead, which over-weights long-lived states and is not normalised), and
//! FN = p_r (sum_i Pi_i f^[i] (1 - gamma(i))) (sum_j F_j f^[j] (1 - gamma(j))).

mod floor;
pub mod nonrepeat;
pub mod profile;
pub mod runs;
pub mod shared;

use super::disabling::Disabling;
use profile::Profile;

/// FN and FP per arrival of the chain.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChainRates {
    pub fn_rate: f64,
    pub fp_rate: f64,
}

/// Pi_i for the profiled states given per-state non-repeat estimates `f` (indexed from
/// `profile.start`). A state with e_i = 0 (p_r = 1 and nothing left to draw) absorbs
/// the chain: it gets all the mass.
fn steady_state(profile: &Profile, f: &[f64], p_r: f64) -> Vec<f64> {
    let n = profile.len();
    let mut pi = vec![0.0; n];
    for i in 0..n {
        let e = (1.0 - p_r) + p_r * f[i];
        if e <= 0.0 {
            if profile.reach[i] > 0.0 {
                pi.iter_mut().for_each(|x| *x = 0.0);
                pi[i] = 1.0;
                return pi;
            }
            continue;
        }
        pi[i] = profile.reach[i] / e;
    }
    let total: f64 = pi.iter().sum();
    pi.iter_mut().for_each(|x| *x /= total);
    pi
}

/// One-phase rates (FN §4.1.3 and footnote 2).
pub fn one_phase(profile: &Profile, f: &[f64], p_r: f64) -> ChainRates {
    let pi = steady_state(profile, f, p_r);
    let mut r = ChainRates {
        fn_rate: 0.0,
        fp_rate: 0.0,
    };
    for i in 0..pi.len() {
        r.fn_rate += pi[i] * p_r * f[i] * (1.0 - profile.gamma[i]);
        r.fp_rate += pi[i] * (1.0 - p_r) * profile.gamma[i];
    }
    r
}

/// Two-phase product form (eqs. 12-15). FP: a new message is a false positive when
/// all its bits are set in the active or in the frozen half (independent positions,
/// appendix G.1).
pub fn two_phase(profile: &Profile, f: &[f64], p_r: f64) -> ChainRates {
    let pi = steady_state(profile, f, p_r);
    let freeze = profile.freeze();
    let frozen_miss: f64 = (0..freeze.len())
        .map(|j| freeze[j] * f[j] * (1.0 - profile.gamma[j]))
        .sum();
    let frozen_lucky: f64 = (0..freeze.len())
        .map(|j| freeze[j] * profile.gamma[j])
        .sum();
    let mut r = ChainRates {
        fn_rate: 0.0,
        fp_rate: 0.0,
    };
    for i in 0..pi.len() {
        let g = profile.gamma[i];
        r.fn_rate += pi[i] * p_r * f[i] * (1.0 - g) * frozen_miss;
        r.fp_rate += pi[i] * (1.0 - p_r) * (1.0 - (1.0 - g) * (1.0 - frozen_lucky));
    }
    r
}

/// Non-repeat estimates from the disabling recursion of appendix G.2: the state's
/// f^[i] is the enabled mass U after the cycle's i distinct arrivals (the retained
/// message of a retaining filter is not identified and stays enabled).
///
/// Where the exact update would cost more than [`runs::EXACT_WORK`] (states x ranks,
/// a tenth of a second), it runs on runs of ranks whose q and zeta agree to
/// `tolerance` ([`runs`]: minutes become about a second at D = 10^7; measured
/// agreement [`runs::AGREEMENT`] at [`runs::TOLERANCE`], [`runs::RANGE_AGREEMENT`] at
/// [`runs::RANGE_TOLERANCE`]).
pub fn disabling_estimates(
    q: &[f64],
    zeta: &[f64],
    p_r: f64,
    profile: &Profile,
    tolerance: f64,
) -> Vec<f64> {
    if disabling_on_runs(profile.len(), q.len()) {
        return per_state(runs::RunDisabling::new(q, zeta, p_r, tolerance), profile);
    }
    disabling_estimates_exact(q, zeta, p_r, profile)
}

/// Whether [`disabling_estimates`] runs on runs of ranks for `states` states and D
/// ranks (where rank by rank would cost more than [`runs::EXACT_WORK`]).
pub fn disabling_on_runs(states: usize, d: usize) -> bool {
    states as f64 * d as f64 > runs::EXACT_WORK
}

/// [`disabling_estimates`] rank by rank, whatever the cost.
pub fn disabling_estimates_exact(q: &[f64], zeta: &[f64], p_r: f64, profile: &Profile) -> Vec<f64> {
    per_state(Disabling::new(q, zeta, p_r), profile)
}

/// A disabling chain: the enabled mass U, and one distinct arrival.
pub trait DisablingChain {
    fn enabled_mass(&self) -> f64;
    fn distinct_arrival(&mut self);
}

impl DisablingChain for Disabling<'_> {
    fn enabled_mass(&self) -> f64 {
        Disabling::enabled_mass(self)
    }
    fn distinct_arrival(&mut self) {
        Disabling::distinct_arrival(self)
    }
}

impl DisablingChain for runs::RunDisabling {
    fn enabled_mass(&self) -> f64 {
        runs::RunDisabling::enabled_mass(self)
    }
    fn distinct_arrival(&mut self) {
        runs::RunDisabling::distinct_arrival(self)
    }
}

/// f^[i] for each of the profile's states: U after i distinct arrivals of `chain`.
pub fn per_state(chain: impl DisablingChain, profile: &Profile) -> Vec<f64> {
    per_state_n(chain, profile.len())
}

/// U after 0, 1, ..., `states` - 1 distinct arrivals of `chain`: a value depends on
/// the arrivals before it only, so the first n of a longer run are the same bits.
pub fn per_state_n(mut chain: impl DisablingChain, states: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(states);
    for _ in 0..states {
        out.push(chain.enabled_mass());
        chain.distinct_arrival();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tau::Transitions;
    use rbf_data::filter::Hashing;

    #[test]
    fn more_non_repeats_more_false_negatives() {
        // Theorem 3: raising every f^[i] raises the chain's FN rate.
        let p = Profile::new(
            Transitions::new(400, 3, Hashing::Colliding),
            150,
            true,
            1e-12,
        )
        .expect("no stop was asked for");
        let lo: Vec<f64> = (0..p.len()).map(|i| 0.5 / (1.0 + i as f64)).collect();
        let hi: Vec<f64> = lo.iter().map(|x| (x * 1.3).min(1.0)).collect();
        for p_r in [1.0, 0.7] {
            let a = one_phase(&p, &lo, p_r);
            let b = one_phase(&p, &hi, p_r);
            assert!(b.fn_rate > a.fn_rate, "p_r={p_r}");
            let a2 = two_phase(&p, &lo, p_r);
            let b2 = two_phase(&p, &hi, p_r);
            assert!(b2.fn_rate > a2.fn_rate && a2.fn_rate < a.fn_rate);
        }
    }

    #[test]
    fn all_new_arrivals_have_no_false_negatives() {
        let p = Profile::new(
            Transitions::new(400, 3, Hashing::Colliding),
            150,
            true,
            1e-12,
        )
        .expect("no stop was asked for");
        let f = vec![1.0; p.len()];
        let r = one_phase(&p, &f, 0.0);
        assert_eq!(r.fn_rate, 0.0);
        assert!(r.fp_rate > 0.0 && r.fp_rate < 1.0);
    }
}
