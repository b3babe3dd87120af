//! The convolution of two non-negative sequences term by term, for the hitting-time
//! engine's short kernels (a binomial of a few hundred cells against a law of
//! thousands, every block near a cycle's end).
//!
//! out[m] = sum_i s[i] l[m - i], the sum taken in increasing i: every output is a sum
//! of non-negative products, within a relative (len(s) + 2) u of the exact one. The
//! outputs are taken a block at a time (a block and the stretch of `l` it reads stay
//! in the first-level cache) and four terms of `s` per pass over a block (one load and
//! one store of each output per four terms instead of per term); for each output the
//! terms are still added one by one in increasing i, so the bits are those of the
//! plain double loop whatever the blocking.

/// Outputs per block: 8 KiB of them, with the 8 KiB of `l` they read.
const BLOCK: usize = 1024;

/// The convolution of `a` and `b` (non-negative), of length len(a) + len(b) - 1.
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
        let mut m0 = 0;
        while m0 < out.len() {
            let m1 = (m0 + BLOCK).min(out.len());
            block(&mut out, m0, m1, s, l);
            m0 = m1;
        }
    });
    out
}

/// Adds every term s[i] l[m - i] to out[m] for m in [m0, m1), in increasing i.
#[inline(always)]
fn block(out: &mut [f64], m0: usize, m1: usize, s: &[f64], l: &[f64]) {
    let mut i = 0;
    while i < s.len() {
        let four = i + 4 <= s.len() && s[i..i + 4].iter().all(|&x| x != 0.0);
        if !four {
            // One term at a time; a zero term is skipped, as the plain loop does.
            if s[i] != 0.0 {
                one(out, m0, m1, s[i], i, l);
            }
            i += 1;
            continue;
        }
        let x = [s[i], s[i + 1], s[i + 2], s[i + 3]];
        // Outputs that all four terms reach: i + 3 <= m < i + len(l).
        let lo = m0.max(i + 3).min(m1);
        let hi = m1.min(i + l.len()).max(lo);
        edge(out, m0.max(i)..lo, &x, i, l);
        if hi > lo {
            let o = &mut out[lo..hi];
            let (l0, l1) = (&l[lo - i..hi - i], &l[lo - i - 1..hi - i - 1]);
            let (l2, l3) = (&l[lo - i - 2..hi - i - 2], &l[lo - i - 3..hi - i - 3]);
            for t in 0..o.len() {
                let mut v = o[t];
                v += x[0] * l0[t];
                v += x[1] * l1[t];
                v += x[2] * l2[t];
                v += x[3] * l3[t];
                o[t] = v;
            }
        }
        edge(out, hi..m1.min(i + 3 + l.len()), &x, i, l);
        i += 4;
    }
}

/// One term s[i] = x over the block's outputs it reaches.
#[inline(always)]
fn one(out: &mut [f64], m0: usize, m1: usize, x: f64, i: usize, l: &[f64]) {
    let (lo, hi) = (m0.max(i), m1.min(i + l.len()));
    if lo < hi {
        for (o, &y) in out[lo..hi].iter_mut().zip(&l[lo - i..hi - i]) {
            *o += x * y;
        }
    }
}

/// The outputs in `range` that only some of the four terms i..i + 4 reach (a
/// group's first three and last three), each term where it reaches, in order.
#[inline(always)]
fn edge(out: &mut [f64], range: std::ops::Range<usize>, x: &[f64; 4], i: usize, l: &[f64]) {
    for m in range {
        let mut v = out[m];
        for (j, &xj) in x.iter().enumerate() {
            if i + j <= m && m < i + j + l.len() {
                v += xj * l[m - i - j];
            }
        }
        out[m] = v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain double loop, term by term in increasing i.
    fn plain(a: &[f64], b: &[f64]) -> Vec<f64> {
        let (s, l) = if a.len() <= b.len() { (a, b) } else { (b, a) };
        let mut out = vec![0.0; a.len() + b.len() - 1];
        for (i, &x) in s.iter().enumerate() {
            if x == 0.0 {
                continue;
            }
            for (o, &y) in out[i..i + l.len()].iter_mut().zip(l) {
                *o += x * y;
            }
        }
        out
    }

    #[test]
    fn the_blocked_convolution_gives_the_plain_loops_bits() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut draw = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let shapes = [
            (1, 1),
            (1, 9),
            (3, 10),
            (4, 4),
            (5, 5),
            (7, 100),
            (280, 6000),
            (1030, 1031),
            (2, 3000),
        ];
        for (ns, nl) in shapes {
            // Every seventh value of the short side 0, as laws' trimmed cells are.
            let s: Vec<f64> = (0..ns)
                .map(|k| if k % 7 == 3 { 0.0 } else { draw() })
                .collect();
            let l: Vec<f64> = (0..nl).map(|_| draw() * 1e-3).collect();
            for (a, b) in [(&s, &l), (&l, &s)] {
                let (got, want) = (convolve_direct(a, b), plain(a, b));
                assert_eq!(got.len(), want.len());
                for (m, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert_eq!(
                        g.to_bits(),
                        w.to_bits(),
                        "shape {ns}x{nl}, output {m}: {g} against {w}"
                    );
                }
            }
        }
    }
}
