//! One radix-2 stage of [`super::Plan::transform`]: butterflies `half` apart with
//! its stage's twiddles, portable or two per AVX2 register. Both compute, for
//! every pair, b w = (b.re w.re - b.im w.im, b.re w.im + b.im w.re) with w conjugated
//! for the inverse (an exact sign change), then a + b w and a - b w: the same roundings
//! in the same order, so the same bits (the register form multiplies and adds apart,
//! never fused).

use super::C64;

/// Applies the stage of butterflies `twiddles.len()` apart to every block of twice
/// that length in `x`, butterfly k with `twiddles[k]`.
pub fn stage(x: &mut [C64], twiddles: &[C64], inverse: bool) {
    let half = twiddles.len();
    assert!(half >= 1 && x.len().is_multiple_of(2 * half));
    #[cfg(target_arch = "x86_64")]
    if half >= 2 && rbf_foundations::simd::Simd::detect() >= rbf_foundations::simd::Simd::Avx2 {
        // SAFETY: the CPU has AVX2 (checked above); `half` is a power of two of at
        // least 2 and `x` is made of blocks of 2 half (the assertion above).
        unsafe { stage_avx2(x, twiddles, inverse) };
        return;
    }
    stage_portable(x, twiddles, inverse);
}

fn stage_portable(x: &mut [C64], twiddles: &[C64], inverse: bool) {
    let half = twiddles.len();
    for block in x.chunks_exact_mut(2 * half) {
        let (lo, hi) = block.split_at_mut(half);
        for ((a, b), &w) in lo.iter_mut().zip(hi.iter_mut()).zip(twiddles) {
            let w = if inverse { C64::new(w.re, -w.im) } else { w };
            let (av, bw) = (*a, *b * w);
            *a = C64::new(av.re + bw.re, av.im + bw.im);
            *b = C64::new(av.re - bw.re, av.im - bw.im);
        }
    }
}

/// [`stage_portable`] two butterflies at a time: (re, im) pairs side by side in a
/// register, b.re and b.im each duplicated across its pair, w's halves swapped for
/// the cross products, and `addsub` taking the difference in the real lane and the
/// sum in the imaginary one.
///
/// # Safety
/// The CPU must support AVX2; `twiddles.len()` is even and `x.len()` a multiple of
/// twice it.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn stage_avx2(x: &mut [C64], twiddles: &[C64], inverse: bool) {
    use std::arch::x86_64::*;
    let half = twiddles.len();
    debug_assert!(half.is_multiple_of(2) && x.len().is_multiple_of(2 * half));
    // Flips the sign of the imaginary lanes: the conjugate, exactly.
    let conj = if inverse {
        _mm256_set_pd(-0.0, 0.0, -0.0, 0.0)
    } else {
        _mm256_setzero_pd()
    };
    let tp = twiddles.as_ptr() as *const f64;
    for block in x.chunks_exact_mut(2 * half) {
        let p = block.as_mut_ptr() as *mut f64;
        let mut k = 0;
        while k < half {
            let (pa, pb) = (p.add(2 * k), p.add(2 * (k + half)));
            let a = _mm256_loadu_pd(pa);
            let b = _mm256_loadu_pd(pb);
            let w = _mm256_xor_pd(_mm256_loadu_pd(tp.add(2 * k)), conj);
            let re = _mm256_movedup_pd(b);
            let im = _mm256_permute_pd(b, 0b1111);
            let swapped = _mm256_permute_pd(w, 0b0101);
            let bw = _mm256_addsub_pd(_mm256_mul_pd(re, w), _mm256_mul_pd(im, swapped));
            _mm256_storeu_pd(pa, _mm256_add_pd(a, bw));
            _mm256_storeu_pd(pb, _mm256_sub_pd(a, bw));
            k += 2;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_of_a_stage_give_the_same_bits() {
        let n = 1 << 9;
        let table: Vec<C64> = (0..n / 2)
            .map(|k| {
                let (s, c) = (-2.0 * std::f64::consts::PI * (k as f64 / n as f64)).sin_cos();
                C64::new(c, s)
            })
            .collect();
        let x: Vec<C64> = (0..n)
            .map(|i| C64::new(((i * 29 % 61) as f64) / 61.0, ((i % 5) as f64 - 2.0) / 3.0))
            .collect();
        let mut half = 1;
        while half < n {
            let step = n / (2 * half);
            let twiddles: Vec<C64> = (0..half).map(|k| table[k * step]).collect();
            for inverse in [false, true] {
                let (mut a, mut b) = (x.clone(), x.clone());
                stage(&mut a, &twiddles, inverse);
                stage_portable(&mut b, &twiddles, inverse);
                for (u, v) in a.iter().zip(&b) {
                    assert_eq!(
                        (u.re.to_bits(), u.im.to_bits()),
                        (v.re.to_bits(), v.im.to_bits())
                    );
                }
            }
            half *= 2;
        }
    }
}
