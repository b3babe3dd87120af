//! The per-insertion sums of the renewal bound (alive, alive_cap, sets_cap, lucky of
//! [`crate::model::false_negative::bitdist::Summary`]) as proven intervals, from the
//! hitting-time laws ([`super::law`]) and the closed form of E[tau(L, L)].
//!
//! With colliding hashes, n insertions are b = (n + r) k balls (r = 1 when the filter
//! retains the message that recycled it: the cycle starts with its k balls), so
//! * alive(n) = P(L <= sigma) = P(S_sigma >= b - sigma),
//! * alive_cap(n) = P(L <= c2) with c2 = sigma + k,
//! * sets_cap(n) = E[(1 - tau(L)) 1{L <= c2}] = 1 - E[tau(L)] - R,
//!   R = E[(1 - tau(L)) 1{L > c2}], which lies between (1 - tau(c3)) P(c2 < L <= c3)
//!   and (1 - tau(c2 + 1)) P(L > c2) because 1 - tau falls with L (c3 = c2 +
//!   4 sqrt(M), about 17 standard deviations of L: the interval's width is about
//!   (tau(c3) - tau(c2)) P(L > c2), below 1e-3 P(L > c2) from M = 2^20 on);
//! * E[tau(L)] = E[(L / M)^k] = sum_s w_s (1 - s / M)^b exactly (inclusion-exclusion
//!   over the d distinct bits of k fresh balls: w_s = (-1)^s sum_d P(d) C(d, s), and
//!   P(s given bits all still clear after b balls) = (1 - s / M)^b).

use super::law::HittingLaw;

const UNIT: f64 = f64::EPSILON / 2.0;

/// A per-insertion sum's interval.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Span {
    pub lo: f64,
    pub hi: f64,
}

/// The per-insertion sums at one insertion count.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Fields {
    pub alive: Span,
    pub cap: Span,
    pub sets: Span,
    /// sum over l <= sigma of p(l) tau(l, l), estimated (it feeds the FP rate the
    /// renewal run reports beside the bound, not the bound).
    pub lucky: f64,
}

/// E[tau(L)] after b balls in closed form.
pub struct TauMoments {
    /// w_s (1 - s / M)^(r k) for s = 0..=k, and ln (1 - s / M)^k.
    w: Vec<f64>,
    log_y: Vec<f64>,
}

impl TauMoments {
    pub fn new(m: u64, k: u32, retained: bool) -> TauMoments {
        let k = k as usize;
        let mf = m as f64;
        // P(d distinct bits among k balls) = (M)_d S2(k, d) / M^k.
        let mut s2 = vec![vec![0.0f64; k + 1]; k + 1];
        s2[0][0] = 1.0;
        for n in 1..=k {
            for d in 1..=n {
                s2[n][d] = d as f64 * s2[n - 1][d] + s2[n - 1][d - 1];
            }
        }
        let pd: Vec<f64> = (0..=k)
            .map(|d| {
                let mut f = s2[k][d];
                for t in 0..d {
                    f *= (mf - t as f64) / mf;
                }
                f / mf.powi((k - d) as i32)
            })
            .collect();
        let binom = |n: usize, s: usize| -> f64 {
            let mut b = 1.0;
            for t in 0..s {
                b = b * (n - t) as f64 / (t + 1) as f64;
            }
            b
        };
        let r = if retained { 1.0 } else { 0.0 };
        let log_y: Vec<f64> = (0..=k)
            .map(|s| k as f64 * (-(s as f64) / mf).ln_1p())
            .collect();
        let w = (0..=k)
            .map(|s| {
                let sign = if s % 2 == 0 { 1.0 } else { -1.0 };
                let sum: f64 = (s..=k).map(|d| pd[d] * binom(d, s)).sum();
                sign * sum * (r * log_y[s]).exp()
            })
            .collect();
        TauMoments { w, log_y }
    }

    /// The terms' weights at n = 0.
    pub fn weights(&self) -> &[f64] {
        &self.w
    }

    /// ln y_s.
    pub fn log_y(&self) -> &[f64] {
        &self.log_y
    }

    /// E[tau(L_n)] and a bound on its rounding error.
    pub fn at(&self, n: u64) -> (f64, f64) {
        let (mut v, mut mag, mut e) = (0.0, 0.0, 0.0);
        for (w, ly) in self.w.iter().zip(&self.log_y) {
            let x = n as f64 * ly;
            let t = w * x.exp();
            v += t;
            mag += t.abs();
            e += t.abs() * (x.abs() * 2.0 + 4.0) * UNIT;
        }
        (v, e + (self.w.len() as f64 + 4.0) * UNIT * mag + 1e-300)
    }
}

/// Everything the per-insertion sums need.
pub struct BitFields {
    /// What they were built for: (M, k, sigma, retained, the tail's bits).
    built_for: (u64, u32, u64, bool, u64),
    k: u64,
    r: u64,
    sigma: u64,
    c2: u64,
    c3: u64,
    laws: [HittingLaw; 3],
    tau: TauMoments,
    tau_c2: f64,
    tau_c3: f64,
    tau_s1: f64,
    /// First insertion count at which some law's window is reached.
    n_first: u64,
    /// Insertion count beyond which alive_cap <= `tail` (the c2 window passed).
    n_last: u64,
}

/// What they were built for; the laws are thousands of values.
impl std::fmt::Debug for BitFields {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BitFields")
            .field("built_for", &self.built_for)
            .finish_non_exhaustive()
    }
}

impl BitFields {
    pub fn new(
        m: u64,
        k: u32,
        sigma: u64,
        retained: bool,
        tail: f64,
    ) -> Result<BitFields, &'static str> {
        let kk = u64::from(k);
        let c2 = sigma + kk;
        let spread = (4.0 * (m as f64).sqrt()).ceil() as u64;
        let c3 = (c2 + spread.max(kk))
            .min(((m as f64) * 0.97) as u64)
            .max(c2);
        let laws = [
            HittingLaw::new(m, sigma, tail)?,
            HittingLaw::new(m, c2, tail)?,
            HittingLaw::new(m, c3, tail)?,
        ];
        let r = u64::from(retained);
        let tau_of = |l: u64| (l as f64 / m as f64).powi(k as i32);
        // n from b = (n + r) k: the insertion count at which x = b - c reaches lo.
        let first = |law: &HittingLaw, c: u64| -> u64 {
            let balls = (law.lo() + c as i64).max(0) as u64;
            (balls / kk).saturating_sub(r)
        };
        let n_first = first(&laws[0], sigma)
            .min(first(&laws[1], c2))
            .min(first(&laws[2], c3));
        let n_last = ((laws[1].end() as u64 + c2) / kk + 1).saturating_sub(r);
        Ok(BitFields {
            built_for: (m, k, sigma, retained, tail.to_bits()),
            k: kk,
            r,
            sigma,
            c2,
            c3,
            tau: TauMoments::new(m, k, retained),
            tau_c2: tau_of(c2 + 1),
            tau_c3: tau_of(c3),
            tau_s1: tau_of(sigma + 1),
            laws,
            n_first,
            n_last,
        })
    }

    /// Whether these are the fields [`BitFields::new`] builds from these arguments.
    pub fn built_for(&self, m: u64, k: u32, sigma: u64, retained: bool, tail: f64) -> bool {
        self.built_for == (m, k, sigma, retained, tail.to_bits())
    }

    /// Below this insertion count every law is before its window: alive and alive_cap
    /// are within [`BitFields::flat_gap`] of 1 and R below it.
    pub fn n_first(&self) -> u64 {
        self.n_first
    }

    /// Beyond this insertion count alive_cap (and every other sum) is at most the tail.
    pub fn n_last(&self) -> u64 {
        self.n_last
    }

    /// An upper bound of alive_cap(n) for every n > [`BitFields::n_last`].
    pub fn cap_tail(&self) -> f64 {
        self.laws[1].above()
    }

    /// How far from 1 alive and alive_cap may be below [`BitFields::n_first`].
    pub fn flat_gap(&self) -> f64 {
        self.laws[0].below().max(self.laws[1].below())
    }

    /// The closed form of E[tau(L)].
    pub fn tau(&self) -> &TauMoments {
        &self.tau
    }

    /// The mean and standard deviation of the insertions after which the bit count
    /// passes sigma.
    pub fn crossing(&self) -> (f64, f64) {
        let l = &self.laws[0];
        (
            (l.mean + self.sigma as f64 + 1.0) / self.k as f64,
            l.sd / self.k as f64,
        )
    }

    /// The sums after `n` insertions.
    pub fn at(&self, n: u64) -> Fields {
        let b = ((n + self.r) * self.k) as i64;
        let ge = |i: usize, c: u64| self.laws[i].at_least(b - c as i64);
        let (a_lo, a_hi) = ge(0, self.sigma);
        let (c_lo, c_hi) = ge(1, self.c2);
        // P(L > c3) <= 1 - (lower end of P(L <= c3)).
        let g3_hi = 1.0 - ge(2, self.c3).0;
        let (g2_lo, g2_hi) = (1.0 - c_hi, 1.0 - c_lo);
        let (t, te) = self.tau.at(n);
        let r_lo = (1.0 - self.tau_c3) * (g2_lo - g3_hi).max(0.0);
        let r_hi = (1.0 - self.tau_c2) * g2_hi;
        let sets_hi = (1.0 - t + te - r_lo).min(c_hi).clamp(0.0, 1.0);
        let sets_lo = (1.0 - t - te - r_hi).clamp(0.0, sets_hi);
        let alive_mid = 0.5 * (a_lo + a_hi);
        Fields {
            alive: Span { lo: a_lo, hi: a_hi },
            cap: Span { lo: c_lo, hi: c_hi },
            sets: Span {
                lo: sets_lo,
                hi: sets_hi,
            },
            lucky: (t - self.tau_s1 * (1.0 - alive_mid)).max(0.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::false_negative::bitdist::BitDist;
    use crate::model::tau::Transitions;
    use rbf_data::filter::Hashing;

    #[test]
    fn the_fields_bracket_the_bit_recursion_at_every_insertion() {
        for (m, k, sigma, retained) in [(8192u64, 4u32, 3000u64, true), (6000, 3, 3500, false)] {
            let t = Transitions::new(m, k, Hashing::Colliding);
            let f = BitFields::new(m, k, sigma, retained, 1e-32).unwrap();
            let mut d = BitDist::new(t, sigma, sigma + u64::from(k), retained, 0.0);
            for n in 0..4000u64 {
                let s = d.summary();
                let g = f.at(n);
                let tol = 1e-12;
                for (name, v, span) in [
                    ("alive", s.alive, g.alive),
                    ("cap", s.alive_cap, g.cap),
                    ("sets", s.sets_cap, g.sets),
                ] {
                    assert!(
                        span.lo - tol <= v && v <= span.hi + tol,
                        "M {m} n {n} {name}: {v} outside [{}, {}]",
                        span.lo,
                        span.hi
                    );
                }
                assert!(g.alive.hi - g.alive.lo < 1e-9);
                assert!(
                    g.sets.hi - g.sets.lo < 0.1 * (1.0 - g.cap.lo) + 1e-8,
                    "M {m} n {n}: sets {:?} cap {:?}",
                    g.sets,
                    g.cap
                );
                if s.alive_cap < 1e-25 {
                    break;
                }
                d.step(1.0);
            }
        }
    }
}
