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
use rbf_foundations::simd::{with_avx2, Simd};

/// Raw tau for a sliding range of start states l, computed on demand and stored by
/// column: `cols[d][l - base]` = tau(l, l + d), so that a step is k + 1 unit-stride
/// multiply-adds over the window (vectorised) rather than a scatter of k + 1 values per
/// cell; `free[l - base]` = 1 - tau(l, l), what the summaries weigh.
struct Columns {
    t: Transitions,
    base: usize,
    cols: Vec<Vec<f64>>,
    free: Vec<f64>,
    row: Vec<f64>,
}

impl Columns {
    fn new(t: Transitions) -> Self {
        let k = t.k as usize;
        Columns {
            t,
            base: 0,
            cols: vec![Vec::new(); k + 1],
            free: Vec::new(),
            row: vec![0.0; k + 1],
        }
    }

    /// Makes start states `lo..=hi` available.
    fn ensure(&mut self, lo: usize, hi: usize) {
        // Forget states far below the window (the window only moves up).
        let have = self.free.len();
        if lo > self.base + 4096 && lo - self.base > have / 2 {
            let drop = (lo - self.base).min(have);
            for c in &mut self.cols {
                c.drain(..drop);
            }
            self.free.drain(..drop);
            self.base += drop;
        }
        if self.free.is_empty() {
            self.base = lo;
        }
        let mut top = self.base + self.free.len(); // first missing state
        while top <= hi {
            self.t.row(top as u64, &mut self.row);
            for (c, &x) in self.cols.iter_mut().zip(&self.row) {
                c.push(x);
            }
            self.free.push(1.0 - self.row[0]);
            top += 1;
        }
    }

    /// tau(l, l + d) for l = from, from + 1, ...
    #[inline]
    fn col(&self, d: usize, from: usize) -> &[f64] {
        &self.cols[d][from - self.base..]
    }

    #[inline]
    fn free(&self, from: usize) -> &[f64] {
        &self.free[from - self.base..]
    }
}

/// One step in place: for every target l in `lo..=top`, from the top down,
/// p(l) <- keep p(l) + sum_d tau(l - d, l) (eta p(l - d)), the sum over d = 0..=k in
/// that order and over the sources l - d >= lo only. Cells of `p` outside the window
/// are zero (the window's trims zero them), so a source above the old top adds an
/// exact zero; cells below a target are read before they are overwritten (top down).
/// One pass over the window instead of a scaled copy, a kept copy, k + 1 passes and
/// a copy back, with the same operations in the same order (so the same bits as the
/// pass-per-column form it replaced: `tests::in_place_pull_has_the_reference_bits`).
#[inline(always)]
fn pull_in_place(p: &mut [f64], rows: &Columns, lo: usize, top: usize, keep: f64, eta: f64) {
    let k1 = rows.cols.len();
    let base = rows.base;
    let mut end = top + 1;
    // Blocks of eight targets whose k + 1 sources all lie in the window (>= lo).
    while end >= lo + k1 - 1 + 8 {
        let b = end - 8;
        let mut acc = [0.0f64; 8];
        for i in 0..8 {
            acc[i] = keep * p[b + i];
        }
        for (d, col) in rows.cols.iter().enumerate() {
            let c = &col[b - d - base..b - d - base + 8];
            let s = &p[b - d..b - d + 8];
            for i in 0..8 {
                acc[i] += c[i] * (eta * s[i]);
            }
        }
        p[b..end].copy_from_slice(&acc);
        end = b;
    }
    for l in (lo..end).rev() {
        let mut acc = keep * p[l];
        for (d, col) in rows.cols.iter().enumerate().take(l - lo + 1) {
            acc += col[l - d - base] * (eta * p[l - d]);
        }
        p[l] = acc;
    }
}

/// [`pull_in_place`] compiled for AVX-512 (the same operations, eight doubles wide).
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn pull_avx512(p: &mut [f64], rows: &Columns, lo: usize, top: usize, keep: f64, eta: f64) {
    pull_in_place(p, rows, lo, top, keep, eta)
}

/// A bit-count distribution cut at `cap`, with a sliding window over its support.
pub struct BitDist {
    sigma: usize,
    cap: usize,
    k: usize,
    lo: usize,
    hi: usize,
    p: Vec<f64>,
    rows: Columns,
    /// The widest vector level of the step and the sums.
    simd: Simd,
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
        let mut rows = Columns::new(t);
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
            simd: Simd::detect(),
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
    ///
    /// Computed by pulling: next(l) = (1 - eta) p(l) + sum_d tau(l - d, l) eta p(l - d),
    /// one unit-stride pass per d over the window. Mass that would pass `cap` is not
    /// pulled anywhere: it leaves, as the cut requires.
    pub fn step(&mut self, eta: f64) {
        let (k, lo, hi) = (self.k, self.lo, self.hi);
        let top = (hi + k).min(self.cap);
        // Rows up to `top`: the in-place pass reads the (zero) cells above the window
        // with their columns.
        self.rows.ensure(lo, top);
        // Mass from <= sigma to above it, by where it lands (only sources within k of
        // sigma can cross); read before the pass overwrites the sources.
        if lo <= self.sigma {
            for from in lo.max((self.sigma + 1).saturating_sub(k))..=hi.min(self.sigma) {
                let e = eta * self.p[from];
                for d in (self.sigma + 1 - from).max(1)..=k.min(self.cap - from) {
                    self.crossed[from + d - self.sigma - 1] += e * self.rows.col(d, from)[0];
                }
            }
        }
        let (p, rows) = (&mut self.p, &self.rows);
        match self.simd {
            #[cfg(target_arch = "x86_64")]
            Simd::Avx512 => {
                // SAFETY: `simd` comes from `Simd::detect`.
                unsafe { pull_avx512(p, rows, lo, top, 1.0 - eta, eta) }
            }
            _ => with_avx2(self.simd >= Simd::Avx2, || {
                pull_in_place(p, rows, lo, top, 1.0 - eta, eta)
            }),
        }
        self.hi = top;
        self.dropped += trim_window(&mut self.p, &mut self.lo, &mut self.hi, self.tiny);
    }

    /// Mass that has crossed sigma, by bit count sigma + 1 + d right after the crossing.
    pub fn crossed(&self) -> &[f64] {
        &self.crossed
    }

    /// Sums over the current distribution.
    pub fn summary(&mut self) -> Summary {
        let (lo, hi) = (self.lo, self.hi);
        self.rows.ensure(lo, hi);
        let (p, rows, sigma) = (&self.p[lo..=hi], &self.rows, self.sigma);
        with_avx2(self.simd >= Simd::Avx2, || sums(p, rows, lo, sigma))
    }
}

/// The sums of [`BitDist::summary`] over the window `p` starting at bit count `lo`,
/// in one pass over `p`: each sum adds its chunks of eight into eight lanes and its
/// remainder apart, as [`sum`] and [`dot`] do over their own slices (the alive sums
/// run over a prefix of the window, so their chunks are the window's first ones): the
/// same bits as four separate passes (`tests::one_pass_sums_have_the_reference_bits`).
#[inline(always)]
fn sums(p: &[f64], rows: &Columns, lo: usize, sigma: usize) -> Summary {
    let free = &rows.free(lo)[..p.len()];
    // Cells with at most sigma bits: a prefix of the window.
    let alive_len = if lo <= sigma {
        (sigma - lo).min(p.len() - 1) + 1
    } else {
        0
    };
    let tau0 = &rows.col(0, lo)[..alive_len];
    let (all_chunks, alive_chunks) = (p.len() / 8, alive_len / 8);
    let mut lanes = [[0.0f64; 8]; 4];
    for c in 0..all_chunks {
        let (x, f) = (&p[8 * c..8 * c + 8], &free[8 * c..8 * c + 8]);
        for l in 0..8 {
            lanes[0][l] += x[l];
            lanes[1][l] += x[l] * f[l];
        }
        if c < alive_chunks {
            let t = &tau0[8 * c..8 * c + 8];
            for l in 0..8 {
                lanes[2][l] += x[l];
                lanes[3][l] += x[l] * t[l];
            }
        }
    }
    let (rest, rest_free) = (&p[8 * all_chunks..], &free[8 * all_chunks..]);
    let mut s = Summary {
        alive_cap: lanes[0].iter().sum::<f64>() + rest.iter().sum::<f64>(),
        sets_cap: lanes[1].iter().sum::<f64>()
            + rest.iter().zip(rest_free).map(|(a, b)| a * b).sum::<f64>(),
        ..Summary::default()
    };
    if alive_len > 0 {
        let (rest, rest_tau) = (&p[8 * alive_chunks..alive_len], &tau0[8 * alive_chunks..]);
        s.alive = lanes[2].iter().sum::<f64>() + rest.iter().sum::<f64>();
        s.lucky = lanes[3].iter().sum::<f64>()
            + rest.iter().zip(rest_tau).map(|(a, b)| a * b).sum::<f64>();
    }
    s
}

/// Narrows the window lo..=hi of `p` from both ends while its end cells are below
/// `tiny` (keeping at least one cell), zeroes the cells it drops and returns their mass.
pub fn trim_window(p: &mut [f64], lo: &mut usize, hi: &mut usize, tiny: f64) -> f64 {
    let mut dropped = 0.0;
    while *hi > *lo && p[*hi] < tiny {
        dropped += p[*hi];
        p[*hi] = 0.0;
        *hi -= 1;
    }
    while *lo < *hi && p[*lo] < tiny {
        dropped += p[*lo];
        p[*lo] = 0.0;
        *lo += 1;
    }
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tau::TauTable;
    use rbf_data::filter::Hashing;
    use rbf_foundations::simd::{dot, sum};

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

    /// The step as it was before the in-place pass: a scaled copy, a kept copy, one
    /// pass per column, a copy back (the cut at `cap` and the trim as in `step`).
    fn reference_step(p: &mut [f64], lo: &mut usize, hi: &mut usize, d: &BitDist, eta: f64) {
        let top = (*hi + d.k).min(d.cap);
        let src = p[*lo..=*hi].to_vec();
        let scaled: Vec<f64> = src.iter().map(|v| eta * v).collect();
        let mut next: Vec<f64> = src.iter().map(|v| (1.0 - eta) * v).collect();
        next.resize(top - *lo + 1, 0.0);
        for dd in 0..d.rows.cols.len().min(top - *lo + 1) {
            let n = scaled.len().min(top - *lo + 1 - dd);
            let col = &d.rows.col(dd, *lo)[..n];
            for ((t, c), e) in next[dd..dd + n].iter_mut().zip(col).zip(&scaled[..n]) {
                *t += c * e;
            }
        }
        p[*lo..=top].copy_from_slice(&next);
        *hi = top;
        trim_window(p, lo, hi, d.tiny);
    }

    #[test]
    fn in_place_pull_has_the_reference_bits() {
        for (hashing, k, m, eta, tiny) in [
            (Hashing::Colliding, 4u32, 3000u64, 1.0, 1e-30),
            (Hashing::Distinct, 3, 2000, 0.37, 1e-12),
            (Hashing::Colliding, 7, 5000, 0.9, 1e-300),
            (Hashing::Distinct, 1, 800, 1.0, 1e-20),
        ] {
            let t = Transitions::new(m, k, hashing);
            let cap = m as usize * 2 / 3;
            for level in Simd::available() {
                let mut d = BitDist::new(t, cap as u64 - 5, cap as u64, false, tiny);
                d.simd = level;
                let mut p = d.p.clone();
                let (mut lo, mut hi) = (d.lo, d.hi);
                let mut widest = 0;
                for step in 0..3000 {
                    d.rows.ensure(lo, (hi + k as usize).min(cap));
                    reference_step(&mut p, &mut lo, &mut hi, &d, eta);
                    d.step(eta);
                    assert_eq!((lo, hi), d.window(), "{level:?} step {step}");
                    assert!(
                        (lo..=hi).all(|l| p[l].to_bits() == d.p[l].to_bits()),
                        "{hashing:?} k {k} {level:?} step {step}"
                    );
                    widest = widest.max(hi - lo);
                }
                // Long enough for a wide window, and to reach the cut at `cap`.
                assert!(widest > 40 && hi == cap, "{widest}, {lo}..{hi}");
            }
        }
    }

    /// The four sums as separate passes, as before the one-pass form.
    fn reference_sums(p: &[f64], rows: &Columns, lo: usize, sigma: usize) -> Summary {
        let mut s = Summary {
            alive_cap: sum(p),
            sets_cap: dot(p, &rows.free(lo)[..p.len()]),
            ..Summary::default()
        };
        if lo <= sigma {
            let p = &p[..=(sigma - lo).min(p.len() - 1)];
            s.alive = sum(p);
            s.lucky = dot(p, &rows.col(0, lo)[..p.len()]);
        }
        s
    }

    #[test]
    fn one_pass_sums_have_the_reference_bits() {
        let t = Transitions::new(4000, 4, Hashing::Colliding);
        let (mut checked, mut across) = (0, 0);
        // Windows below and across sigma, of every length mod 8.
        for sigma in [900usize, 1400, 1800] {
            let mut d = BitDist::new(t, sigma as u64, sigma as u64 + 4, false, 1e-25);
            for _ in 0..700 {
                d.step(0.83);
                let (lo, hi) = d.window();
                d.rows.ensure(lo, hi);
                let p = &d.p[lo..=hi];
                for level in Simd::available() {
                    let got = with_avx2(level >= Simd::Avx2, || sums(p, &d.rows, lo, d.sigma));
                    let want = reference_sums(p, &d.rows, lo, d.sigma);
                    let bits =
                        |s: Summary| [s.alive, s.alive_cap, s.sets_cap, s.lucky].map(f64::to_bits);
                    assert_eq!(bits(got), bits(want), "sigma {sigma} window {lo}..{hi}");
                }
                checked += 1;
                across += usize::from(lo <= d.sigma && d.sigma < hi);
            }
        }
        assert!(checked == 2100 && across > 100, "{checked} / {across}");
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
