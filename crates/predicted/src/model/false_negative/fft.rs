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

use std::f64::consts::PI;

const UNIT: f64 = f64::EPSILON / 2.0;

/// A complex number (re, im).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
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

/// Twiddles of one length: w^k = exp(-2 pi i k / n), k < n / 2.
pub struct Plan {
    n: usize,
    twiddles: Vec<C64>,
}

impl Plan {
    /// A plan for length `n`, a power of two.
    pub fn new(n: usize) -> Plan {
        assert!(n.is_power_of_two());
        let twiddles = (0..n / 2)
            .map(|k| {
                let (s, c) = (-2.0 * PI * (k as f64 / n as f64)).sin_cos();
                C64::new(c, s)
            })
            .collect();
        Plan { n, twiddles }
    }

    /// In place: the forward transform (sum_j x_j w^{jk}), or with `inverse` the
    /// conjugate one, unscaled.
    pub fn transform(&self, x: &mut [C64], inverse: bool) {
        let n = self.n;
        assert_eq!(x.len(), n);
        if n <= 1 {
            return;
        }
        // Bit reversal.
        let bits = n.trailing_zeros();
        for i in 0..n {
            let j = i.reverse_bits() >> (usize::BITS - bits);
            if i < j {
                x.swap(i, j);
            }
        }
        let mut len = 2;
        while len <= n {
            let step = n / len;
            let half = len / 2;
            for start in (0..n).step_by(len) {
                for k in 0..half {
                    let mut w = self.twiddles[k * step];
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
    let plan = Plan::new(n);
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

/// The convolution of two non-negative sequences term by term: every output is a sum
/// of non-negative products, within a relative (min(len) + 2) u of the exact one.
pub fn convolve_direct(a: &[f64], b: &[f64]) -> Vec<f64> {
    if a.is_empty() || b.is_empty() {
        return Vec::new();
    }
    let (s, l) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let mut out = vec![0.0; a.len() + b.len() - 1];
    // Four doubles wide where the CPU has AVX2: the same products and sums in the same
    // order, so the same bits.
    let wide = rbf_foundations::simd::Simd::detect() >= rbf_foundations::simd::Simd::Avx2;
    rbf_foundations::simd::with_avx2(wide, || {
        for (i, &x) in s.iter().enumerate() {
            if x == 0.0 {
                continue;
            }
            for (o, &y) in out[i..i + l.len()].iter_mut().zip(l) {
                *o += x * y;
            }
        }
    });
    out
}

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
}
