//! The bit-count distribution of one filter array as insertions arrive: the shared
//! engine of the Markov profile (FN eq. 1, one distinct message per step) and of the
//! renewal model (FN eq. 19, a bit-setting arrival with probability eta_j per step).
//!
//! Mass only ever moves upwards (bits are never cleared inside a cycle), so a process
//! cut at `cap` (mass that would exceed `cap` leaves: the cycle has ended) holds, at every
//! count l <= sigma <= cap, exactly the mass of the process cut at sigma. One pass
//! therefore serves both the sigma-cut quantities (A_j, psi) and the sigma + k quantities
//! of Theorem 7.
//!
//! Window: cells whose mass falls below `tiny` at either end of the support are dropped
//! and their mass is added to [`BitDist::dropped`], so a caller can turn the dropped mass
//! into a rigorous error term. The support grows by up to k per step while its bulk has
//! a width of a few standard deviations, so the window is what makes large filters
//! affordable.

use crate::model::tau::Transitions;

/// Raw tau rows for a sliding range of start states, computed on demand.
struct RowCache {
    t: Transitions,
    stride: usize,
    base: usize,
    rows: Vec<f64>,
}

impl RowCache {
    fn new(t: Transitions) -> Self {
        RowCache {
            t,
            stride: t.k as usize + 1,
            base: 0,
            rows: Vec::new(),
        }
    }

    /// Makes rows `lo..=hi` available.
    fn ensure(&mut self, lo: usize, hi: usize) {
        // Forget rows far below the window (the window only moves up).
        let have = self.rows.len() / self.stride;
        if lo > self.base + 4096 && lo - self.base > have / 2 {
            let drop = (lo - self.base).min(have);
            self.rows.drain(..drop * self.stride);
            self.base += drop;
        }
        let mut top = self.base + self.rows.len() / self.stride; // first missing row
        if self.rows.is_empty() {
            self.base = lo;
            top = lo;
        }
        while top <= hi {
            let s = self.rows.len();
            self.rows.resize(s + self.stride, 0.0);
            self.t.row(top as u64, &mut self.rows[s..]);
            top += 1;
        }
    }

    #[inline]
    fn row(&self, i: usize) -> &[f64] {
        let s = (i - self.base) * self.stride;
        &self.rows[s..s + self.stride]
    }
}

/// A bit-count distribution cut at `cap`, with a sliding window over its support.
pub struct BitDist {
    sigma: usize,
    cap: usize,
    k: usize,
    lo: usize,
    hi: usize,
    p: Vec<f64>,
    rows: RowCache,
    tiny: f64,
    dropped: f64,
    /// Mass that crossed from <= sigma to sigma + 1 + d bits, accumulated over all steps.
    crossed: Vec<f64>,
}

/// Sums over the current distribution used by the models.
#[derive(Clone, Copy, Debug, Default)]
pub struct Summary {
    /// Mass with at most sigma bits set (the cycle is still running).
    pub alive: f64,
    /// Mass with at most `cap` bits set.
    pub alive_cap: f64,
    /// sum over l <= cap of p(l) (1 - tau(l, l)): an unrecorded message would set a bit.
    pub sets_cap: f64,
    /// sum over l <= sigma of p(l) tau(l, l): an unrecorded message would find all bits set.
    pub lucky: f64,
}

impl BitDist {
    /// Starts with all mass at 0 bits (`retained = false`) or at the bit count of one
    /// message inserted into the empty array (`retained = true`). The cycle runs while
    /// at most `sigma` bits are set; mass is followed up to `cap` >= sigma bits.
    pub fn new(t: Transitions, sigma: u64, cap: u64, retained: bool, tiny: f64) -> Self {
        let cap = cap.min(t.m) as usize;
        let sigma = (sigma as usize).min(cap);
        let k = t.k as usize;
        let mut rows = RowCache::new(t);
        rows.ensure(0, 0);
        let mut p = vec![0.0; cap + 1];
        p[0] = 1.0;
        let mut d = BitDist {
            sigma,
            cap,
            k,
            lo: 0,
            hi: 0,
            p,
            rows,
            tiny,
            dropped: 0.0,
            crossed: vec![0.0; k],
        };
        if retained {
            // The model setup requires sigma >= k, so the retained insertion, which the
            // filter never checks against the trigger, is never cut here either.
            d.step(1.0);
        }
        d
    }

    /// Mass discarded by the window so far.
    pub fn dropped(&self) -> f64 {
        self.dropped
    }

    /// Lowest and highest bit counts with mass.
    pub fn window(&self) -> (usize, usize) {
        (self.lo, self.hi)
    }

    /// Mass at exactly `l` bits.
    pub fn at(&self, l: usize) -> f64 {
        if l >= self.lo && l <= self.hi {
            self.p[l]
        } else {
            0.0
        }
    }

    /// One arrival that is an unrecorded (bit-setting candidate) message with
    /// probability `eta` and a recorded one otherwise (FN eq. 19; eq. 1 with eta = 1).
    pub fn step(&mut self, eta: f64) {
        let k = self.k;
        let top = (self.hi + k).min(self.cap);
        self.rows.ensure(self.lo, self.hi);
        let keep = 1.0 - eta;
        for src in (self.lo..=self.hi).rev() {
            let v = self.p[src];
            if v == 0.0 {
                continue;
            }
            let r = self.rows.row(src);
            let ev = eta * v;
            self.p[src] = keep * v + ev * r[0];
            let reach = k.min(self.cap - src);
            for d in 1..=reach {
                self.p[src + d] += ev * r[d];
            }
            if src <= self.sigma {
                for d in (self.sigma + 1 - src).max(1)..=reach {
                    self.crossed[src + d - self.sigma - 1] += ev * r[d];
                }
            }
        }
        self.hi = top;
        while self.hi > self.lo && self.p[self.hi] < self.tiny {
            self.dropped += self.p[self.hi];
            self.p[self.hi] = 0.0;
            self.hi -= 1;
        }
        while self.lo < self.hi && self.p[self.lo] < self.tiny {
            self.dropped += self.p[self.lo];
            self.p[self.lo] = 0.0;
            self.lo += 1;
        }
    }

    /// Mass that has crossed sigma, by bit count sigma + 1 + d right after the crossing.
    pub fn crossed(&self) -> &[f64] {
        &self.crossed
    }

    /// Sums over the current distribution.
    pub fn summary(&mut self) -> Summary {
        let sigma = self.sigma;
        self.rows.ensure(self.lo, self.hi);
        let mut s = Summary::default();
        for l in self.lo..=self.hi {
            let v = self.p[l];
            let stay = self.rows.row(l)[0];
            s.alive_cap += v;
            s.sets_cap += v * (1.0 - stay);
            if l <= sigma {
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
    use crate::filter::Hashing;
    use crate::model::tau::TauTable;

    /// Dense reference of eq. (1): psi over all cells, no window.
    fn dense(t: Transitions, cap: usize, steps: usize, eta: f64) -> Vec<f64> {
        let table = TauTable::new(t, cap as u64);
        let mut p = vec![0.0; cap + 1];
        p[0] = 1.0;
        for _ in 0..steps {
            let mut n = vec![0.0; cap + 1];
            for l in 0..=cap {
                n[l] += (1.0 - eta) * p[l];
                for d in 0..=t.k as usize {
                    if l + d <= cap {
                        n[l + d] += eta * p[l] * table.get(l as u64, (l + d) as u64);
                    }
                }
            }
            p = n;
        }
        p
    }

    #[test]
    fn windowed_matches_dense() {
        for hashing in [Hashing::Colliding, Hashing::Distinct] {
            let t = Transitions::new(500, 3, hashing);
            let cap = 203;
            let want = dense(t, cap, 90, 0.7);
            let mut d = BitDist::new(t, cap as u64, cap as u64, false, 1e-300);
            for _ in 0..90 {
                d.step(0.7);
            }
            let mut err = 0.0f64;
            for (l, w) in want.iter().enumerate() {
                err = err.max((d.at(l) - w).abs());
            }
            assert!(err < 1e-13, "{hashing:?}: max error {err}");
            // A coarse window drops mass but accounts for every bit of it.
            let mut c = BitDist::new(t, cap as u64, cap as u64, false, 1e-9);
            for _ in 0..90 {
                c.step(0.7);
            }
            let s = c.summary();
            let total: f64 = want.iter().sum();
            assert!(s.alive_cap <= total + 1e-12 && total <= s.alive_cap + c.dropped() + 1e-12);
            assert!(c.dropped() > 0.0);
        }
    }
}
