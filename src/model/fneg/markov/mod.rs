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

pub mod nonrepeat;
pub mod profile;

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
pub fn disabling_estimates(q: &[f64], zeta: &[f64], p_r: f64, profile: &Profile) -> Vec<f64> {
    let (q, zeta) = trim_tail(q, zeta);
    let mut d = Disabling::new(&q, &zeta, p_r);
    let mut out = Vec::with_capacity(profile.len());
    for _ in 0..profile.len() {
        out.push(d.enabled_mass());
        d.distinct_arrival();
    }
    out
}

/// Repeat mass the disabling estimate may leave out: the ranks after the first ones that
/// hold all but this much of Q.
pub const TRIMMED_MASS: f64 = 1e-13;

/// Q and zeta without the tail ranks that hold at most [`TRIMMED_MASS`] of Q, their
/// placement weight kept on one rank of zero popularity in their place. Why this is
/// (nearly) exact: a rank's enabled chance g_i depends only on the ranks above it (its
/// predecessor's g) and on the placement mass above and below it, which the lumped rank
/// keeps, so every kept rank evolves exactly as before and U = sum q_i g_i loses at most
/// the trimmed mass. A fitted D of 10^7 whose last decades hold almost nothing (a trace
/// that cannot rule out more, rarely drawn, messages) then costs what its head costs:
/// 231 s became about a second at D = 8 * 10^6 (issue 38).
fn trim_tail(q: &[f64], zeta: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let mut tail = 0.0;
    let mut keep = q.len();
    while keep > 1 && tail + q[keep - 1] <= TRIMMED_MASS {
        tail += q[keep - 1];
        keep -= 1;
    }
    if keep == q.len() {
        return (q.to_vec(), zeta.to_vec());
    }
    let mut tq = q[..keep].to_vec();
    let mut tz = zeta[..keep].to_vec();
    tq.push(0.0);
    tz.push(zeta[keep..].iter().sum());
    (tq, tz)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::Hashing;
    use crate::model::tau::Transitions;

    #[test]
    fn more_non_repeats_more_false_negatives() {
        // Theorem 3: raising every f^[i] raises the chain's FN rate.
        let p = Profile::new(
            Transitions::new(400, 3, Hashing::Colliding),
            150,
            true,
            1e-12,
        );
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
        );
        let f = vec![1.0; p.len()];
        let r = one_phase(&p, &f, 0.0);
        assert_eq!(r.fn_rate, 0.0);
        assert!(r.fp_rate > 0.0 && r.fp_rate < 1.0);
    }

    #[test]
    fn a_trimmed_tail_changes_the_disabling_estimate_by_at_most_its_mass() {
        // Zipf(2) over 20 000 ranks: the last ranks hold under 1e-13 together; bottom,
        // uniform and mixed placement (the lumped rank carries the tail's new messages).
        let d = 20_000;
        let q = crate::workload::zipf(d, 2.0);
        let p = Profile::new(
            Transitions::new(4000, 4, Hashing::Colliding),
            1200,
            true,
            1e-12,
        );
        let bottom: Vec<f64> = (0..d).map(|i| if i + 1 == d { 1.0 } else { 0.0 }).collect();
        let uniform = vec![1.0 / d as f64; d];
        let mixed: Vec<f64> = (0..d)
            .map(|i| if i < 10 { 0.05 } else { 0.5 / (d - 10) as f64 })
            .collect();
        for zeta in [bottom, uniform, mixed] {
            let (tq, _) = trim_tail(&q, &zeta);
            assert!(tq.len() < d, "nothing trimmed");
            let trimmed = disabling_estimates(&q, &zeta, 0.8, &p);
            let mut full = Disabling::new(&q, &zeta, 0.8);
            for f in &trimmed {
                assert!(
                    (f - full.enabled_mass()).abs() <= TRIMMED_MASS * 1.01,
                    "{f}"
                );
                full.distinct_arrival();
            }
        }
    }
}
