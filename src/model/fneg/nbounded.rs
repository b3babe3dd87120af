//! The N-bounded filter (FN §4.1.2): the cycle ends when more than N insertions in it
//! have set bits. The recycle then depends on the count n of bit-setting insertions and
//! the "get lucky" chance on the bit count l, so the state after each distinct message
//! is the joint law of (n, l): a distinct message leaves it where it is with
//! probability tau(l, l) (it sets no bit: a false positive or a lucky non-repeat) and
//! moves it to (n + 1, l + d) with probability tau(l, l + d), d >= 1. This is the
//! paper's phi^m_k(j | i) recursion (which tracks n alone, with gamma averaged over l)
//! made exact by keeping l.
//!
//! The sums it yields per distinct message are the [`Summary`] of the sigma-bounded
//! case with "at most N bit-setting insertions" in place of "at most sigma bits", and
//! N + 1 in place of sigma + k for the renewal numerator: one more distinct message adds
//! at most one bit-setting insertion (the N-bounded analogue of Theorem 7).
//!
//! Dense rows: row n holds l = n..=min(n k, M) (n insertions that each set 1..=k bits),
//! O(N^2 k) cells; the N-bounded variant is offered for the moderate N where that is
//! affordable.

use super::bitdist::Summary;
use crate::model::tau::Transitions;

pub struct JointDist {
    t: Transitions,
    n_max: usize,
    k: usize,
    /// rows[n][l - n]: probability of n bit-setting insertions and l bits set.
    rows: Vec<Vec<f64>>,
    /// tau rows by start bit count.
    tau: Vec<f64>,
    /// Mass that moved to N + 1 insertions, weighted by tau(l, l) of its bit count.
    frozen_lucky: f64,
    frozen_mass: f64,
}

impl JointDist {
    /// Starts empty, or with the retained message (one insertion into an empty array).
    pub fn new(t: Transitions, n_max: u64, retained: bool) -> Self {
        let k = t.k as usize;
        let n_max = n_max as usize;
        let lmax = ((n_max + 1) * k).min(t.m as usize);
        let stride = k + 1;
        let mut tau = vec![0.0; (lmax + 1) * stride];
        for l in 0..=lmax {
            t.row(l as u64, &mut tau[l * stride..(l + 1) * stride]);
        }
        let rows = (0..=n_max + 1)
            .map(|n| vec![0.0; (n * k).min(t.m as usize) + 1 - n.min(t.m as usize)])
            .collect::<Vec<_>>();
        let mut d = JointDist {
            t,
            n_max,
            k,
            rows,
            tau,
            frozen_lucky: 0.0,
            frozen_mass: 0.0,
        };
        d.rows[0][0] = 1.0;
        if retained {
            d.step();
        }
        d
    }

    #[inline]
    fn tau(&self, l: usize, d: usize) -> f64 {
        self.tau[l * (self.k + 1) + d]
    }

    /// One distinct message.
    pub fn step(&mut self) {
        let k = self.k;
        let m = self.t.m as usize;
        // Mass entering row N + 2 leaves; record what enters row N + 1 for the frozen
        // half's final bit count.
        for n in (0..=self.n_max + 1).rev() {
            let len = self.rows[n].len();
            let mut next = vec![0.0; len];
            for (off, x) in next.iter_mut().enumerate() {
                let l = n + off;
                *x = self.rows[n][off] * self.tau(l, 0);
            }
            if n > 0 {
                let prev = &self.rows[n - 1];
                for (poff, &v) in prev.iter().enumerate() {
                    if v == 0.0 {
                        continue;
                    }
                    let src = n - 1 + poff;
                    for d in 1..=k.min(m - src) {
                        let l = src + d;
                        let w = v * self.tau(src, d);
                        next[l - n] += w;
                        if n == self.n_max + 1 {
                            self.frozen_mass += w;
                            self.frozen_lucky += w * self.t.all_set(l as u64);
                        }
                    }
                }
            }
            self.rows[n] = next;
        }
    }

    /// E[tau(l, l)] over the bit count at the moment insertions exceeded N.
    pub fn frozen_lucky(&self) -> f64 {
        if self.frozen_mass > 0.0 {
            self.frozen_lucky / self.frozen_mass
        } else {
            0.0
        }
    }

    pub fn summary(&self) -> Summary {
        let mut s = Summary::default();
        for (n, row) in self.rows.iter().enumerate() {
            for (off, &v) in row.iter().enumerate() {
                let stay = self.tau(n + off, 0);
                s.alive_cap += v;
                s.sets_cap += v * (1.0 - stay);
                if n <= self.n_max {
                    s.alive += v;
                    s.lucky += v * stay;
                }
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::Hashing;

    #[test]
    fn k1_bit_setting_count_is_the_bit_count() {
        // k = 1: a bit-setting insertion sets exactly one bit, so l = n always.
        let t = Transitions::new(50, 1, Hashing::Colliding);
        let mut d = JointDist::new(t, 10, false);
        for _ in 0..30 {
            d.step();
            let s = d.summary();
            assert!(s.alive <= s.alive_cap + 1e-15 && s.alive_cap <= 1.0 + 1e-12);
        }
        for (n, row) in d.rows.iter().enumerate() {
            for (off, v) in row.iter().enumerate() {
                assert!(off == 0 || *v == 0.0, "n={n} off={off}");
            }
        }
        assert!((d.frozen_lucky() - 11.0 / 50.0).abs() < 1e-12);
    }
}
