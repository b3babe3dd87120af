//! A radix-2 complex FFT and the convolution of non-negative sequences through it, with
//! a proven bound on the rounding error: the renewal bound's hitting-time engine
//! ([`super::renewal::hitting`]) convolves laws of 10^4-10^6 cells and must add what
//! the transform may have got wrong to the values it certifies; the two-phase
//! numerator's long correlations ([`super::renewal::correlate`]) use the same transform.
//!
//! The bound is Higham's (Accuracy and Stability of Numerical Algorithms, 2nd ed.,
//! Theorem 24.2): an FFT of length n = 2^t computed with twiddle factors accurate to
//! mu errs, in the 2-norm, by at most t eta / (1 - t eta) times the exact transform's
//! norm, with eta = mu + gamma_4 (sqrt 2 + mu). Twiddles here are `sin_cos` of
//! 2 pi k / n with k / n exact: the angle is off by at most 1.5 u relative (below 5 u
//! absolute) and `sin_cos` adds about one ulp, so mu < 6 u and eta < 12 u; the bound
//! below uses eta = 16 u.

mod butterfly;
mod direct;

use std::f64::consts::PI;

const UNIT: f64 = f64::EPSILON / 2.0;

/// A complex number (re, im), laid out as two doubles in that order (the AVX2
/// butterflies read it so).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct C64 {
    pub re: f64,
    pub im: f64,
}

impl C64 {
    pub fn new(re: f64, im: f64) -> C64 {
        C64 { re, im }
    }
}

impl std::ops::Mul for C64 {
    type Output = C64;

    #[inline]
    fn mul(self, o: C64) -> C64 {
        C64::new(
            self.re * o.re - self.im * o.im,
            self.re * o.im + self.im * o.re,
        )
    }
}

/// Twiddles of one length, stage by stage: the stage of butterflies half h apart reads
/// w^{k n / (2 h)}, k < h, w = exp(-2 pi i / n), held contiguous (h = 1, 2, 4, ...,
/// n / 2 in turn; n - 1 values, the last stage's being every w^k, k < n / 2). A stage
/// strided through the last one's table would read a cache line per twiddle on long
/// transforms (the hitting laws of filters of 2^26 bits and more), once per block.
/// Every value is the `sin_cos` of the module doc, whichever stage reads it.
pub struct Plan {
    n: usize,
    stages: Vec<C64>,
}

/// Lengths up to this are kept once built (at most 1 MiB a plan): the hitting-time
/// engine convolves laws of a few thousand cells per block, thousands of times.
const KEPT_UP_TO: usize = 1 << 16;

impl Plan {
    /// A plan for length `n`, a power of two.
    pub fn new(n: usize) -> Plan {
        assert!(n.is_power_of_two());
        let last: Vec<C64> = (0..n / 2)
            .map(|k| {
                let (s, c) = (-2.0 * PI * (k as f64 / n as f64)).sin_cos();
                C64::new(c, s)
            })
            .collect();
        let mut stages = Vec::with_capacity(n.max(2) - 1);
        let mut half = 1;
        while half < n / 2 {
            let step = n / (2 * half);
            stages.extend((0..half).map(|k| last[k * step]));
            half *= 2;
        }
        stages.extend(last);
        Plan { n, stages }
    }

    /// The plan for length `n`, built once per process for lengths up to 2^16 (the
    /// same values as [`Plan::new`]: a plan depends on nothing but `n`).
    pub fn shared(n: usize) -> std::sync::Arc<Plan> {
        use std::sync::{Arc, Mutex, OnceLock};
        static KEPT: OnceLock<Mutex<Vec<Option<Arc<Plan>>>>> = OnceLock::new();
        if n > KEPT_UP_TO || !n.is_power_of_two() {
            return Arc::new(Plan::new(n));
        }
        let slot = n.trailing_zeros() as usize;
        let kept = KEPT.get_or_init(|| Mutex::new(vec![None; 17]));
        if let Some(plan) = kept.lock().ok().and_then(|k| k[slot].clone()) {
            return plan;
        }
        let plan = Arc::new(Plan::new(n));
        if let Ok(mut k) = kept.lock() {
            k[slot] = Some(plan.clone());
        }
        plan
    }

    /// In place: the forward transform (sum_j x_j w^{jk}), or with `inverse` the
    /// conjugate one, unscaled. Radix 2 after a bit reversal; every butterfly is
    /// a = a + b w, b = a - b w with b w = (b.re w.re - b.im w.im, b.re w.im + b.im
    /// w.re), two of them per AVX2 register where the CPU has it: the same operations
    /// on the same values (no fused multiply-add), so the same bits.
    pub fn transform(&self, x: &mut [C64], inverse: bool) {
        let n = self.n;
        assert_eq!(x.len(), n);
        if n <= 1 {
            return;
        }
        let bits = n.trailing_zeros();
        for i in 0..n {
            let j = i.reverse_bits() >> (usize::BITS - bits);
            if i < j {
                x.swap(i, j);
            }
        }
        let (mut half, mut at) = (1, 0);
        while half < n {
            butterfly::stage(x, &self.stages[at..at + half], inverse);
            at += half;
            half *= 2;
        }
    }

    /// The relative 2-norm error bound of one transform of this length (see the module
    /// doc): t eta / (1 - t eta) with eta = 16 u.
    pub fn relative_error(&self) -> f64 {
        let t = self.n.trailing_zeros() as f64;
        let e = t * 16.0 * UNIT;
        e / (1.0 - e)
    }
}

/// The convolution of two non-negative sequences by FFT, negative rounding noise set
/// to 0, and a bound on its L1 distance from the exact convolution.
pub fn convolve(a: &[f64], b: &[f64]) -> (Vec<f64>, f64) {
    if a.is_empty() || b.is_empty() {
        return (Vec::new(), 0.0);
    }
    let out_len = a.len() + b.len() - 1;
    let n = out_len.next_power_of_two().max(2);
    let plan = Plan::shared(n);
    let load = |v: &[f64]| {
        let mut x = vec![C64::default(); n];
        for (c, &r) in x.iter_mut().zip(v) {
            c.re = r;
        }
        x
    };
    let (mut fa, mut fb) = (load(a), load(b));
    plan.transform(&mut fa, false);
    plan.transform(&mut fb, false);
    for (x, y) in fa.iter_mut().zip(&fb) {
        *x = *x * *y;
    }
    plan.transform(&mut fa, true);
    let scale = 1.0 / n as f64;
    let out: Vec<f64> = fa[..out_len]
        .iter()
        .map(|c| (c.re * scale).max(0.0))
        .collect();
    // Two forward transforms (each off by at most e sqrt(n) |x|_2 in 2-norm), a
    // pointwise product (sup |FFT x| <= |x|_1, rounding 3 u) and an inverse one: the
    // result is off by at most (2 e + 3 u)(|a|_2 |b|_1 + |a|_1 |b|_2) in 2-norm, so by
    // sqrt(len) times that in L1. Clamping negatives to 0 only moves towards the exact
    // (non-negative) values.
    let l1 = |v: &[f64]| v.iter().sum::<f64>();
    let l2 = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    let e = plan.relative_error();
    let mixed = l2(a) * l1(b) + l1(a) * l2(b);
    let err = (out_len as f64).sqrt() * (2.0 * e + 3.0 * UNIT) * mixed * 1.01;
    (out, err)
}

pub use direct::convolve_direct;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fft_convolution_matches_the_direct_one_within_its_bound() {
        let a: Vec<f64> = (0..3000).map(|i| ((i * 37 % 101) as f64) / 101.0).collect();
        let b: Vec<f64> = (0..777)
            .map(|i| ((i * 13 % 17) as f64 + 0.5) / 17.0)
            .collect();
        let (fast, err) = convolve(&a, &b);
        let mut direct = vec![0.0; a.len() + b.len() - 1];
        for (i, x) in a.iter().enumerate() {
            for (j, y) in b.iter().enumerate() {
                direct[i + j] += x * y;
            }
        }
        let dist: f64 = fast.iter().zip(&direct).map(|(x, y)| (x - y).abs()).sum();
        assert!(dist <= err, "L1 distance {dist} above the bound {err}");
        assert!(
            err < 1e-6 * direct.iter().sum::<f64>(),
            "bound {err} useless"
        );
    }

    #[test]
    fn a_transform_and_its_inverse_give_back_the_input() {
        let n = 1 << 10;
        let plan = Plan::new(n);
        let orig: Vec<C64> = (0..n)
            .map(|i| C64::new((i as f64 * 0.37).sin(), (i as f64 * 0.11).cos()))
            .collect();
        let mut x = orig.clone();
        plan.transform(&mut x, false);
        plan.transform(&mut x, true);
        for (y, o) in x.iter().zip(&orig) {
            assert!((y.re / n as f64 - o.re).abs() < 1e-12);
            assert!((y.im / n as f64 - o.im).abs() < 1e-12);
        }
    }

    /// The textbook loop the stages replace: every butterfly of a stage in one pass,
    /// its twiddle read `n / len` apart from the last stage's table.
    fn textbook(x: &mut [C64], inverse: bool) {
        let n = x.len();
        let table: Vec<C64> = (0..n / 2)
            .map(|k| {
                let (s, c) = (-2.0 * PI * (k as f64 / n as f64)).sin_cos();
                C64::new(c, s)
            })
            .collect();
        let bits = n.trailing_zeros();
        for i in 0..n {
            let j = i.reverse_bits() >> (usize::BITS - bits);
            if i < j {
                x.swap(i, j);
            }
        }
        let mut len = 2;
        while len <= n {
            let (step, half) = (n / len, len / 2);
            for start in (0..n).step_by(len) {
                for k in 0..half {
                    let mut w = table[k * step];
                    if inverse {
                        w.im = -w.im;
                    }
                    let a = x[start + k];
                    let b = x[start + k + half] * w;
                    x[start + k] = C64::new(a.re + b.re, a.im + b.im);
                    x[start + k + half] = C64::new(a.re - b.re, a.im - b.im);
                }
            }
            len *= 2;
        }
    }

    #[test]
    fn the_stages_give_the_textbook_loops_bits() {
        for n in [1usize, 2, 4, 8, 64, 1 << 13] {
            let orig: Vec<C64> = (0..n)
                .map(|i| {
                    // Real laws padded with zeros, as the convolutions load them, and
                    // some complex values.
                    let re = if i < n / 2 {
                        ((i * 37 % 101) as f64) / 101.0
                    } else {
                        0.0
                    };
                    let im = if i % 3 == 0 {
                        (i as f64 * 0.11).cos()
                    } else {
                        0.0
                    };
                    C64::new(re, im)
                })
                .collect();
            for inverse in [false, true] {
                let mut want = orig.clone();
                textbook(&mut want, inverse);
                for plan in [Plan::shared(n), std::sync::Arc::new(Plan::new(n))] {
                    let mut got = orig.clone();
                    plan.transform(&mut got, inverse);
                    for (g, w) in got.iter().zip(&want) {
                        assert_eq!(
                            (g.re.to_bits(), g.im.to_bits()),
                            (w.re.to_bits(), w.im.to_bits()),
                            "n {n}, inverse {inverse}"
                        );
                    }
                }
            }
        }
    }
}
