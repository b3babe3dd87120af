//! Bit-measuring quantities of the Markov model (FN §4.1.1): with i distinct messages
//! recorded in the current cycle, psi_k(l, i) (eq. 1) is the probability that l <= sigma
//! bits are set and the cycle is still running, phi_k(l | i) (eq. 2) its normalisation,
//! rho(i) (eq. 3) the probability that the next distinct message triggers a recycle and
//! gamma_k(i) (eq. 4) the probability that it "gets lucky" (sets no bit).
//!
//! N-bounded filters (§4.1.2) are profiled from the joint law of bit-setting insertions
//! and bits instead ([`Profile::n_bounded`]).

use crate::model::false_negative::bitdist::{BitDist, Summary};
use crate::model::false_negative::nbounded::JointDist;
use crate::model::tau::Transitions;
use rbf_data::filter::Hashing;
use rbf_foundations::error::Result;
use rbf_foundations::progress::{check_interrupt, Progress};

/// Per-state quantities for states `start..=last()`.
#[derive(Clone, Debug)]
pub struct Profile {
    /// First state of a cycle: 1 when retaining (the triggering message is recorded in
    /// the emptied array), 0 otherwise.
    pub start: usize,
    /// P(cycle reaches state i) = sum_l psi_k(l, i), indexed from `start`.
    pub reach: Vec<f64>,
    /// rho(i), eq. (3).
    pub rho: Vec<f64>,
    /// gamma_k(i), eq. (4).
    pub gamma: Vec<f64>,
    /// Probability mass of states beyond the last one (truncation, §4.1.3).
    pub truncated: f64,
}

impl Profile {
    /// Profiles a sigma-bounded filter's states until the probability of reaching the
    /// next state is below `eps`. Stops at a Ctrl-C or SIGTERM: at megabyte filters
    /// this takes tens of seconds (40 s at 2^24 bits), and when it runs beside a
    /// renewal bound that stopped, a profile that did not poll made the stop wait for
    /// it. One atomic load a step, against a step's pass over the bit distribution.
    pub fn new(t: Transitions, sigma: u64, retaining: bool, eps: f64) -> Result<Profile> {
        let mut d = BitDist::new(t, sigma, sigma, retaining, eps * 1e-12);
        Profile::build(retaining, eps, || {
            check_interrupt()?;
            let s = d.summary();
            d.step(1.0);
            Ok(s)
        })
    }

    /// Profiles an N-bounded filter (§4.1.2), from the joint law of bit-setting
    /// insertions and bits ([`crate::model::false_negative::nbounded`]). Its steps cost up to the
    /// band of (insertions, bits) a cycle spreads over, which for N in the thousands
    /// takes seconds to minutes: it shows progress (the mean insertions against N + 1,
    /// with an estimate up front when it is long) when `progress` is set, and stops at
    /// a Ctrl-C or SIGTERM.
    pub fn n_bounded(
        t: Transitions,
        n: u64,
        retaining: bool,
        eps: f64,
        progress: bool,
    ) -> Result<Profile> {
        let mut d = JointDist::new(t, n, retaining, eps * 1e-12);
        let bar = if progress {
            Progress::new(
                format!("Markov profile, N-bounded (N = {n})"),
                n as f64 + 1.0,
                "insertions",
            )
        } else {
            Progress::hidden()
        };
        let mut steps = 0u64;
        let profile = Profile::build(retaining, eps, || {
            let s = d.summary();
            d.step();
            steps += 1;
            // The mean costs a pass over the band: every 16th step is enough.
            if steps.is_multiple_of(16) {
                d.check(eps)?;
                bar.step(d.mean_insertions())?;
            } else {
                check_interrupt()?;
            }
            Ok(s)
        });
        bar.finish();
        profile
    }

    /// `next` yields the sums of the current state and advances by one distinct message.
    fn build(
        retaining: bool,
        eps: f64,
        mut next: impl FnMut() -> Result<Summary>,
    ) -> Result<Profile> {
        let start = usize::from(retaining);
        let (mut reach, mut rho, mut gamma) = (Vec::new(), Vec::new(), Vec::new());
        let mut s = next()?;
        loop {
            let alive = s.alive;
            reach.push(alive);
            gamma.push(if alive > 0.0 { s.lucky / alive } else { 0.0 });
            s = next()?;
            let r = if alive > 0.0 {
                (1.0 - s.alive / alive).clamp(0.0, 1.0)
            } else {
                1.0
            };
            rho.push(r);
            if s.alive < eps || reach.len() > 1 << 28 {
                break;
            }
        }
        Ok(Profile {
            start,
            reach,
            rho,
            gamma,
            truncated: s.alive,
        })
    }

    /// Number of states profiled.
    pub fn len(&self) -> usize {
        self.reach.len()
    }

    pub fn is_empty(&self) -> bool {
        self.reach.is_empty()
    }

    /// The last state profiled.
    pub fn last(&self) -> usize {
        self.start + self.reach.len() - 1
    }

    /// Probability that a cycle ends in state i (the filter freezes there, eq. 12):
    /// reach(i) rho(i), indexed from `start`, normalised over the profiled states.
    pub fn freeze(&self) -> Vec<f64> {
        let f: Vec<f64> = self
            .reach
            .iter()
            .zip(&self.rho)
            .map(|(s, r)| s * r)
            .collect();
        let total: f64 = f.iter().sum();
        f.into_iter().map(|x| x / total).collect()
    }
}

/// A state past every state a sigma-bounded profile keeps ([`Profile::new`] with the
/// same arguments), found without building it: the profile stops once a cycle reaches
/// the next state with probability below eps, and after i messages the bit count L_i
/// concentrates. McDiarmid's inequality over the independent draws (k balls for
/// colliding hashes, each moving L by at most 1; i messages for distinct hashes, each
/// by at most k) gives P(L_i <= sigma) <= exp(-2 t^2 / c) with t = E[L_i] - sigma and
/// c = k i (colliding) or k^2 i (distinct); the first i where that is below eps / 2
/// bounds the last state kept (the computed reach errs by rounding only, far less than
/// the factor 2). Used to size work shared by many filters (estimates over states):
/// a bound that fell short would cost time, never a value.
pub fn states_bound(t: Transitions, sigma: u64, eps: f64) -> u64 {
    let (m, k) = (t.m as f64, f64::from(t.k));
    let (per_message, spread) = match t.hashing {
        Hashing::Colliding => (k * (-1.0 / m).ln_1p(), k),
        Hashing::Distinct => ((-k / m).ln_1p(), k * k),
    };
    let target = (eps / 2.0).ln();
    let sigma = sigma as f64;
    // E[L_i] = M (1 - (1 - 1/M)^(k i)) (colliding) or M (1 - (1 - k/M)^i) (distinct).
    let beyond = |i: f64| {
        let t = m * -(per_message * i).exp_m1() - sigma;
        t > 0.0 && -2.0 * t * t / (spread * i) <= target
    };
    // Past the mean crossing, the exponent grows with i until E[L_i] flattens near M:
    // doubling finds a state beyond, halving the interval the first one.
    let (mut lo, mut hi) = (1.0f64, 1.0f64);
    while !beyond(hi) {
        if hi > 1e15 {
            return u64::MAX;
        }
        lo = hi;
        hi *= 2.0;
    }
    while hi - lo > 1.0 {
        let mid = ((lo + hi) / 2.0).floor();
        if beyond(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_states_bound_is_past_the_last_state_and_near_it() {
        for hashing in [Hashing::Colliding, Hashing::Distinct] {
            for (m, k, frac) in [
                (20_000u64, 3u32, 0.38),
                (50_000, 4, 0.5),
                (8_000, 6, 0.2),
                (100_000, 1, 0.38),
                (30_000, 8, 0.9),
            ] {
                let sigma = (m as f64 * frac) as u64;
                let t = Transitions::new(m, k, hashing);
                for retaining in [false, true] {
                    for eps in [1e-10, 1e-4] {
                        let last = Profile::new(t, sigma, retaining, eps).unwrap().last() as u64;
                        let bound = states_bound(t, sigma, eps);
                        assert!(bound > last, "{hashing:?} m {m} k {k}: {bound} <= {last}");
                        if bound == u64::MAX {
                            // No state found (sigma near M with distinct hashes'
                            // wider spread): callers keep their old horizon.
                            assert!(frac > 0.5, "{hashing:?} m {m} k {k}");
                            continue;
                        }
                        // Measured: colliding within 13 %; distinct (McDiarmid's spread
                        // k times wider) within 23 % up to sigma = M/2, 45 % at 0.9 M.
                        let slack = match hashing {
                            Hashing::Colliding => 0.15,
                            Hashing::Distinct if frac <= 0.5 => 0.25,
                            Hashing::Distinct => 0.5,
                        };
                        assert!(
                            (bound - last) as f64 <= slack * last as f64,
                            "{hashing:?} m {m} k {k} eps {eps}: {bound} against {last}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn k1_reach_is_the_occupancy_law() {
        // k = 1, colliding: after i messages, P(bits <= sigma) is an occupancy
        // probability; with sigma = 1 and non-retaining the cycle is alive after i
        // insertions iff all i balls hit one bin: reach(i) = M^-(i-1) for i >= 1.
        let m = 10u64;
        let p = Profile::new(Transitions::new(m, 1, Hashing::Colliding), 1, false, 1e-9)
            .expect("no stop was asked for");
        assert_eq!(p.start, 0);
        assert!((p.reach[0] - 1.0).abs() < 1e-15);
        for i in 1..p.len() {
            let want = (m as f64).powi(-(i as i32 - 1));
            assert!((p.reach[i] - want).abs() < 1e-15 * want.max(1.0), "i={i}");
        }
        // gamma(i) for i >= 1: one bit set, a new message hits it with probability 1/M.
        assert!((p.gamma[2] - 0.1).abs() < 1e-15);
        assert!((p.rho[2] - 0.9).abs() < 1e-15);
        let f = p.freeze();
        assert!((f.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }
}
