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

use super::bitdist::{trim_window, Summary};
use crate::model::tau::Transitions;

pub struct JointDist {
    t: Transitions,
    n_max: usize,
    k: usize,
    /// rows[n][l - n]: probability of n bit-setting insertions and l bits set.
    rows: Vec<Vec<f64>>,
    /// Per row, the offsets lo..=hi that hold mass (None: no mass yet); every cell
    /// outside is 0. The mass of a cycle is concentrated in a narrow band of (n, l),
    /// so a step costs the band, not the O(N^2 k) triangle (at N = 9999 that took
    /// minutes).
    window: Vec<Option<(usize, usize)>>,
    /// tau rows by start bit count.
    tau: Vec<f64>,
    /// Mass that moved to N + 1 insertions, weighted by tau(l, l) of its bit count.
    frozen_lucky: f64,
    frozen_mass: f64,
    /// Cells below this at a window's edge are dropped, as the sigma-bounded
    /// distribution does ([`trim_window`]).
    tiny: f64,
    dropped: f64,
}

impl JointDist {
    /// Starts empty, or with the retained message (one insertion into an empty array);
    /// mass below `tiny` at the edge of a row's window is dropped.
    pub fn new(t: Transitions, n_max: u64, retained: bool, tiny: f64) -> Self {
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
        let mut window = vec![None; n_max + 2];
        window[0] = Some((0, 0));
        let mut d = JointDist {
            t,
            n_max,
            k,
            rows,
            window,
            tau,
            frozen_lucky: 0.0,
            frozen_mass: 0.0,
            tiny,
            dropped: 0.0,
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

    /// One distinct message. Rows are updated in place from the highest down, so row
    /// n - 1 still holds the old law when row n pulls from it.
    pub fn step(&mut self) {
        let k = self.k;
        let m = self.t.m as usize;
        let stride = k + 1;
        for n in (0..=self.n_max + 1).rev() {
            let (below, here) = self.rows.split_at_mut(n);
            let row = &mut here[0];
            let tau = &self.tau;
            let mut w = self.window[n];
            if let Some((lo, hi)) = w {
                for (off, x) in row.iter_mut().enumerate().take(hi + 1).skip(lo) {
                    *x *= tau[(n + off) * stride];
                }
            }
            if let (Some(prev), Some((plo, phi))) =
                (below.last(), n.checked_sub(1).and_then(|p| self.window[p]))
            {
                for (poff, &v) in prev.iter().enumerate().take(phi + 1).skip(plo) {
                    if v == 0.0 {
                        continue;
                    }
                    let src = n - 1 + poff;
                    for d in 1..=k.min(m - src) {
                        let l = src + d;
                        let x = v * tau[src * stride + d];
                        row[l - n] += x;
                        if n == self.n_max + 1 {
                            self.frozen_mass += x;
                            self.frozen_lucky += x * self.t.all_set(l as u64);
                        }
                    }
                }
                // Offsets reached: l - n = poff + d - 1 for d in 1..=k, within the row.
                let reach = (plo, (phi + k - 1).min(row.len() - 1));
                w = Some(match w {
                    Some((lo, hi)) => (lo.min(reach.0), hi.max(reach.1)),
                    None => reach,
                });
            }
            if let Some((mut lo, mut hi)) = w {
                self.dropped += trim_window(row, &mut lo, &mut hi, self.tiny);
                w = Some((lo, hi));
            }
            self.window[n] = w;
        }
    }

    /// Mass of cycles that set every bit with at most N bit-setting insertions: no
    /// message can set a bit any more, so these cycles never end (the filter stops
    /// recycling). The models describe filters that recycle; see [`JointDist::check`].
    pub fn absorbed(&self) -> f64 {
        let m = self.t.m as usize;
        (0..=self.n_max.min(m))
            .filter_map(|n| {
                let off = m - n;
                let (lo, hi) = self.window[n]?;
                (lo <= off && off <= hi).then(|| self.rows[n][off])
            })
            .sum()
    }

    /// An error naming `max_inserts` once more than `eps` of the cycles can never end
    /// ([`JointDist::absorbed`]): followed on, they kept a run at N = 9999,
    /// M = 10 000 going for half an hour without an answer.
    pub fn check(&self, eps: f64) -> rbf_foundations::error::Result<()> {
        let stuck = self.absorbed();
        if stuck > eps {
            // N too large for M, said with why: a sentence no other kind renders.
            return Err(rbf_foundations::error::Error::setting(
                "max_inserts",
                rbf_foundations::error::Problem::Other(format!(
                    "with N = {} the filter's {} bits can all be set before N + 1 insertions have set bits (in at least {stuck:.1e} of cycles); such a cycle never ends (no message can set a bit) and the FN models cover only filters that recycle: use a smaller N",
                    self.n_max, self.t.m
                )),
            ));
        }
        Ok(())
    }

    /// Mass discarded at the windows' edges so far.
    pub fn dropped(&self) -> f64 {
        self.dropped
    }

    /// E[tau(l, l)] over the bit count at the moment insertions exceeded N.
    pub fn frozen_lucky(&self) -> f64 {
        if self.frozen_mass > 0.0 {
            self.frozen_lucky / self.frozen_mass
        } else {
            0.0
        }
    }

    /// The mean count of bit-setting insertions, the mass past N counted at N + 1:
    /// how far the cycles have got, for progress (it reaches N + 1 as they all end).
    pub fn mean_insertions(&self) -> f64 {
        let alive: f64 = self
            .cells()
            .filter(|(n, _, _)| *n <= self.n_max)
            .map(|(n, _, v)| n as f64 * v)
            .sum();
        let below: f64 = self
            .cells()
            .filter(|(n, _, _)| *n <= self.n_max)
            .map(|(_, _, v)| v)
            .sum();
        alive + (1.0 - below).max(0.0) * (self.n_max + 1) as f64
    }

    /// (n, l, probability) over every row's window.
    fn cells(&self) -> impl Iterator<Item = (usize, usize, f64)> + '_ {
        self.rows.iter().enumerate().flat_map(move |(n, row)| {
            let (lo, hi) = self.window[n].unwrap_or((1, 0));
            (lo..=hi).map(move |off| (n, n + off, row[off]))
        })
    }

    pub fn summary(&self) -> Summary {
        let mut s = Summary::default();
        for (n, l, v) in self.cells() {
            let stay = self.tau(l, 0);
            s.alive_cap += v;
            s.sets_cap += v * (1.0 - stay);
            if n <= self.n_max {
                s.alive += v;
                s.lucky += v * stay;
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rbf_data::filter::Hashing;

    #[test]
    fn k1_bit_setting_count_is_the_bit_count() {
        // k = 1: a bit-setting insertion sets exactly one bit, so l = n always.
        let t = Transitions::new(50, 1, Hashing::Colliding);
        let mut d = JointDist::new(t, 10, false, 0.0);
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

    #[test]
    fn the_band_loses_only_what_it_counts() {
        // Followed over the whole triangle (tiny = 0) and over the band that holds
        // mass: the sums agree to within the mass dropped, which stays tiny.
        let t = Transitions::new(2000, 4, Hashing::Colliding);
        let mut all = JointDist::new(t, 300, true, 0.0);
        let mut band = JointDist::new(t, 300, true, 1e-22);
        for _ in 0..600 {
            all.step();
            band.step();
            let (a, b) = (all.summary(), band.summary());
            let slack = band.dropped() + 1e-15;
            assert!((a.alive - b.alive).abs() <= slack, "{a:?} {b:?}");
            assert!((a.lucky - b.lucky).abs() <= slack, "{a:?} {b:?}");
            assert!((a.sets_cap - b.sets_cap).abs() <= slack, "{a:?} {b:?}");
        }
        assert_eq!(all.dropped(), 0.0);
        assert!(band.dropped() < 1e-15, "{}", band.dropped());
        assert!((all.frozen_lucky() - band.frozen_lucky()).abs() < 1e-12);
        assert!(band.mean_insertions() > 290.0, "{}", band.mean_insertions());
    }
}
