//! The inner kernel of the renewal model's disabling recursion (eq. 24, see
//! [`super::disabling`]): one arrival for one chunk of ranks, in place,
//!
//! g_i <- a_i g_i + b_i g_{i-1}, then acc[(i - c0) mod LANES] += q_i g_i,
//!
//! with the rank above the chunk given as `boundary`.
//!
//! In place: ranks are updated from the last to the first, so g_{i-1} is still the old
//! value when rank i reads it; no second buffer and no copies.
//!
//! Fused multiply-adds: a_i g_i + (b_i g_{i-1}) and acc + q_i g_i each round once,
//! at every vector level (the portable path uses `f64::mul_add`, correctly rounded on
//! every platform), and every lane accumulates its ranks in the same order, so every
//! level gives the same bits. Sixteen lanes (two AVX-512 registers, four AVX2 ones)
//! keep two or four independent accumulation chains in flight, so the loop runs at the
//! FP units' throughput instead of the add latency. On the 2-core Xeon VM (AVX-512),
//! the renewal bound at M = 2^18 with D = 10^5 on one thread took 4.53 s with the
//! previous unfused, two-buffer kernel with one accumulator and 2.9 s with this one
//! (docs/history/PERFORMANCE-log.md, "2026-11-24 (later): in-place FMA kernel").

use rbf_foundations::simd::Simd;

/// Partial sums per chunk step; a chunk's length must be a multiple of this.
pub const LANES: usize = 16;

/// Per-rank coefficients of one chunk: g_i <- a_i g_i + b_i g_{i-1}, weights q_i.
#[derive(Clone, Copy)]
pub struct Coefficients<'c> {
    pub a: &'c [f64],
    pub b: &'c [f64],
    pub q: &'c [f64],
}

/// One arrival for the chunk `g` (length a multiple of [`LANES`], coefficients at least
/// as long), adding q_i times the new g_i to lane (i mod LANES) of `acc`.
pub fn step(simd: Simd, c: Coefficients, g: &mut [f64], boundary: f64, acc: &mut [f64; LANES]) {
    let n = g.len();
    assert!(
        n.is_multiple_of(LANES) && c.a.len() >= n && c.b.len() >= n && c.q.len() >= n,
        "eq. 24 chunk of {n} ranks"
    );
    #[cfg(target_arch = "x86_64")]
    match simd {
        // SAFETY: `simd` comes from `Simd::detect`, so the CPU has the instructions;
        // the lengths were checked above.
        Simd::Avx512 => unsafe { step_avx512(c, g, boundary, acc) },
        Simd::Avx2 => unsafe { step_avx2(c, g, boundary, acc) },
        Simd::Base => step_portable(c, g, boundary, acc),
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = simd;
        step_portable(c, g, boundary, acc);
    }
}

/// The reference order: lane groups from the last to the first, ranks within a group
/// from the last to the first.
fn step_portable(c: Coefficients, g: &mut [f64], boundary: f64, acc: &mut [f64; LANES]) {
    for i in (0..g.len()).rev() {
        let up = if i > 0 { g[i - 1] } else { boundary };
        let v = c.a[i].mul_add(g[i], c.b[i] * up);
        g[i] = v;
        let l = i % LANES;
        acc[l] = c.q[i].mul_add(v, acc[l]);
    }
}

/// [`step_portable`] with AVX-512: a group is two registers, the ranks above each
/// lane are the register shifted by one lane with the register below (`valignq`), so
/// every load is a whole aligned line when the chunk is.
///
/// # Safety
/// The CPU must support AVX-512F; `g.len()` is a multiple of 16 and no longer than
/// the coefficient slices.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn step_avx512(c: Coefficients, g: &mut [f64], boundary: f64, acc: &mut [f64; LANES]) {
    use std::arch::x86_64::*;
    let (a, b, q) = (c.a.as_ptr(), c.b.as_ptr(), c.q.as_ptr());
    let gp = g.as_mut_ptr();
    let below_lane = |hi: __m512d, lo: __m512d| {
        // [lo[7], hi[0], ..., hi[6]]: the value of the rank above each lane of hi.
        _mm512_castsi512_pd(_mm512_alignr_epi64(
            _mm512_castpd_si512(hi),
            _mm512_castpd_si512(lo),
            7,
        ))
    };
    let mut s0 = _mm512_loadu_pd(acc.as_ptr());
    let mut s1 = _mm512_loadu_pd(acc.as_ptr().add(8));
    let mut i = g.len();
    if i == 0 {
        return;
    }
    let mut hi = _mm512_loadu_pd(gp.add(i - 8));
    while i > 0 {
        let lo = _mm512_loadu_pd(gp.add(i - 16));
        let under = if i > 16 {
            _mm512_loadu_pd(gp.add(i - 24))
        } else {
            _mm512_set1_pd(boundary)
        };
        // One register of the group: new values from the old ones and the ranks above.
        let update = |at: usize, old: __m512d, above: __m512d, sum: __m512d| {
            let v = _mm512_fmadd_pd(
                _mm512_loadu_pd(a.add(at)),
                old,
                _mm512_mul_pd(_mm512_loadu_pd(b.add(at)), above),
            );
            _mm512_storeu_pd(gp.add(at), v);
            _mm512_fmadd_pd(_mm512_loadu_pd(q.add(at)), v, sum)
        };
        s1 = update(i - 8, hi, below_lane(hi, lo), s1);
        s0 = update(i - 16, lo, below_lane(lo, under), s0);
        hi = under;
        i -= 16;
    }
    _mm512_storeu_pd(acc.as_mut_ptr(), s0);
    _mm512_storeu_pd(acc.as_mut_ptr().add(8), s1);
}

/// [`step_portable`] with AVX2 and FMA: a group is four registers, the ranks above a
/// register read one element lower (unaligned), before anything below is stored.
///
/// # Safety
/// The CPU must support AVX2 and FMA; `g.len()` is a multiple of 16 and no longer than
/// the coefficient slices.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn step_avx2(c: Coefficients, g: &mut [f64], boundary: f64, acc: &mut [f64; LANES]) {
    use std::arch::x86_64::*;
    let (a, b, q) = (c.a.as_ptr(), c.b.as_ptr(), c.q.as_ptr());
    let gp = g.as_mut_ptr();
    let mut s = [0usize, 4, 8, 12].map(|k| _mm256_loadu_pd(acc.as_ptr().add(k)));
    for group in (0..g.len() / LANES).rev() {
        for k in (0..4).rev() {
            let i = group * LANES + 4 * k;
            let cur = _mm256_loadu_pd(gp.add(i));
            let up = if i > 0 {
                _mm256_loadu_pd(gp.add(i - 1))
            } else {
                _mm256_set_pd(*gp.add(2), *gp.add(1), *gp, boundary)
            };
            let v = _mm256_fmadd_pd(
                _mm256_loadu_pd(a.add(i)),
                cur,
                _mm256_mul_pd(_mm256_loadu_pd(b.add(i)), up),
            );
            _mm256_storeu_pd(gp.add(i), v);
            s[k] = _mm256_fmadd_pd(_mm256_loadu_pd(q.add(i)), v, s[k]);
        }
    }
    for (k, r) in s.into_iter().enumerate() {
        _mm256_storeu_pd(acc.as_mut_ptr().add(4 * k), r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rbf_foundations::simd::{same_bits, sum_lanes};

    #[test]
    fn every_level_matches_the_portable_order_bit_for_bit() {
        let n = 4 * LANES;
        let a: Vec<f64> = (0..n).map(|i| 0.9 - 1e-3 * i as f64 / 7.0).collect();
        let b: Vec<f64> = (0..n).map(|i| 0.1 * i as f64 / n as f64).collect();
        let q: Vec<f64> = (0..n).map(|i| 1.0 / (i as f64 + 1.5)).collect();
        let c = Coefficients {
            a: &a,
            b: &b,
            q: &q,
        };
        let runs: Vec<(Vec<f64>, [f64; LANES])> = Simd::available()
            .into_iter()
            .map(|level| {
                let mut g: Vec<f64> = (0..n).map(|i| 1.0 - 0.3 / (i as f64 + 1.0)).collect();
                let mut acc = [0.25; LANES];
                for t in 0..5 {
                    step(level, c, &mut g, 0.5 / (t as f64 + 1.0), &mut acc);
                }
                (g, acc)
            })
            .collect();
        for (g, acc) in &runs[1..] {
            assert!(same_bits(g, &runs[0].0));
            assert!(same_bits(acc, &runs[0].1));
        }
        // And the portable order is eq. 24 itself (to rounding).
        let mut g: Vec<f64> = (0..n).map(|i| 1.0 - 0.3 / (i as f64 + 1.0)).collect();
        let mut want = 0.25 * LANES as f64;
        for t in 0..5 {
            let up = 0.5 / (t as f64 + 1.0);
            let old = g.clone();
            for i in 0..n {
                let above = if i > 0 { old[i - 1] } else { up };
                g[i] = a[i] * old[i] + b[i] * above;
                want += q[i] * g[i];
            }
        }
        assert!((sum_lanes(&runs[0].1) - want).abs() < 1e-12 * want);
        assert!(g.iter().zip(&runs[0].0).all(|(x, y)| (x - y).abs() < 1e-14));
    }
}
