//! Power sums of Q after l draws with replacement, at any l, in time independent of D:
//! S(l) = sum_j (1 - q_j)^l (so that E[X](l) = D - S(l) is eq. 10's expected distinct
//! count) and F(l) = sum_j q_j (1 - q_j)^l (eq. 6; f^a of eq. 11 at l = l*(i)).
//!
//! Both are sums of exponentials exp(-l r_j) with rates r_j = -ln(1 - q_j). For l in
//! the epoch [2^e, 2^(e+1)), write t = l / 2^(e+1) in [1/2, 1) and group the rates into
//! bins of width 2 / 2^(e+1) around centres r0, so that u_j = 2^(e+1) (r_j - r0) lies in
//! [-1, 1]. Then exp(-l r_j) = exp(-l r0) exp(-t u_j), and the Taylor series of
//! exp(-t u_j) in t, truncated after [`TERMS`] terms, is off by at most
//! sum_{m >= TERMS} 1/m! < 1e-17 of the rank's term (|t u_j| <= 1); rounding in the
//! polynomial (terms of both signs, at most e times the result) stays near 1e-15. A bin therefore
//! costs one exponential and a polynomial in t whose coefficients, the moments
//! sum_j (-u_j)^m / m! (and the same weighted by q_j), are computed once per epoch.
//!
//! Ranks with r_j 2^e > [`CUT`] are left out of the epoch: each of their terms is below
//! e^-CUT < 1e-18 for every l of the epoch, so S is off by less than D * 1e-18 and F by
//! less than 1e-18. Rates up to CUT / 2^e in bins of width 2^-e make at most CUT + 1
//! bins, whatever D: an evaluation costs about 45 exponentials and 1600 multiply-adds,
//! where the direct sums cost O(D). This is what lets drop-pins and the
//! with-replacement estimate follow millions of draws over Q of 10^5-10^6 messages.

/// Taylor terms per bin: sum_{m >= 19} 1/m! < 1e-17.
const TERMS: usize = 19;
/// Rates (times the epoch's smallest l) beyond which a rank is left out: e^-41.5 < 1e-18.
const CUT: f64 = 41.5;

/// One bin of rates: exp(-l r0) times the two polynomials in t.
struct Bin {
    r0: f64,
    s: [f64; TERMS],
    f: [f64; TERMS],
}

/// S(l) and F(l) for one Q.
pub struct PowerSums {
    d: usize,
    total: f64,
    /// (r_j, q_j) with finite rate (q_j < 1), by increasing rate.
    ranks: Vec<(f64, f64)>,
    /// Bins per epoch e, built when first needed.
    epochs: Vec<Option<Vec<Bin>>>,
}

impl PowerSums {
    pub fn new(q: &[f64]) -> Self {
        PowerSums::with_kills(q, q)
    }

    /// The sums for base_j = 1 - kill_j and weight_j in place of 1 - q_j and q_j:
    /// S(l) = sum_j (1 - kill_j)^l and F(l) = sum_j weight_j (1 - kill_j)^l (the
    /// renewal model's U_l when no message changes rank, see `renewal`). The rates
    /// -ln(1 - kill_j) come from `ln_1p`, accurate for small kills.
    pub fn with_kills(kill: &[f64], weight: &[f64]) -> Self {
        let mut ranks: Vec<(f64, f64)> = kill
            .iter()
            .zip(weight)
            .filter(|&(&x, _)| x < 1.0)
            .map(|(&x, &w)| (-(-x).ln_1p(), w))
            .collect();
        ranks.sort_by(|a, b| a.0.total_cmp(&b.0));
        PowerSums {
            d: kill.len(),
            total: weight.iter().sum(),
            ranks,
            epochs: Vec::new(),
        }
    }

    /// (S(l), F(l)), to about 1e-15 relative plus D * 1e-18 (S) and 1e-18 (F) absolute
    /// (the tests check 1e-13 against direct sums, whose own rounding is near that).
    pub fn at(&mut self, l: u64) -> (f64, f64) {
        if l == 0 {
            return (self.d as f64, self.total);
        }
        let e = 63 - l.leading_zeros() as usize;
        if self.epochs.len() <= e {
            self.epochs.resize_with(e + 1, || None);
        }
        if self.epochs[e].is_none() {
            self.epochs[e] = Some(self.bins(e));
        }
        let bins = self.epochs[e].as_deref().unwrap_or_default();
        let lf = l as f64;
        let t = lf / (2.0f64).powi(e as i32 + 1);
        let (mut s, mut f) = (0.0, 0.0);
        for b in bins {
            let scale = (-lf * b.r0).exp();
            let (mut ps, mut pf) = (0.0, 0.0);
            for m in (0..TERMS).rev() {
                ps = ps * t + b.s[m];
                pf = pf * t + b.f[m];
            }
            s += scale * ps;
            f += scale * pf;
        }
        (s.max(0.0), f.max(0.0))
    }

    /// The bins of epoch e: l in [2^e, 2^(e+1)).
    fn bins(&self, e: usize) -> Vec<Bin> {
        let lo = (2.0f64).powi(e as i32);
        let width = 1.0 / lo; // 2 / 2^(e+1)
        let scale = 2.0 * lo; // 2^(e+1)
        let live = self.ranks.partition_point(|&(r, _)| r * lo <= CUT);
        let ranks = &self.ranks[..live];
        let mut bins = Vec::new();
        let mut start = 0;
        while start < ranks.len() {
            let first = ranks[start].0;
            let end = start + ranks[start..].partition_point(|&(r, _)| r <= first + width);
            let members = &ranks[start..end];
            let r0 = (first + members[members.len() - 1].0) / 2.0;
            let mut b = Bin {
                r0,
                s: [0.0; TERMS],
                f: [0.0; TERMS],
            };
            for &(r, q) in members {
                let x = -scale * (r - r0);
                // x^m / m!, built up term by term.
                let mut term = 1.0;
                for m in 0..TERMS {
                    b.s[m] += term;
                    b.f[m] += q * term;
                    term *= x / (m + 1) as f64;
                }
            }
            bins.push(b);
            start = end;
        }
        bins
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The direct sums. (1 - q)^l as exp(l ln(1 - q)) with ln_1p: rounding 1 - q first
    /// would cost l * 1e-16 of relative accuracy.
    fn direct(q: &[f64], l: u64) -> (f64, f64) {
        let pow = |x: f64| {
            if l == 0 {
                1.0
            } else {
                (l as f64 * (-x).ln_1p()).exp()
            }
        };
        let s = q.iter().map(|&x| pow(x)).sum();
        let f = q.iter().map(|&x| x * pow(x)).sum();
        (s, f)
    }

    #[test]
    fn binned_sums_match_the_direct_sums() {
        let mut qs = vec![
            crate::workload::zipf(2000, 1.0),
            crate::workload::zipf(500, 2.0),
            crate::workload::zipf(300, 0.0),
            crate::workload::zipf(5000, 0.6),
        ];
        // Zeros, a certain message and repeated values.
        qs.push(vec![0.0, 0.25, 0.25, 0.0, 0.5]);
        qs.push(vec![1.0, 0.0, 0.0]);
        for q in &qs {
            let mut p = PowerSums::new(q);
            let d = q.len() as f64;
            let mut ls: Vec<u64> = (0..200).collect();
            ls.extend([
                255,
                256,
                257,
                1000,
                4095,
                4096,
                12_345,
                100_000,
                1 << 20,
                3 << 22,
            ]);
            for &l in &ls {
                let (s, f) = p.at(l);
                let (ws, wf) = direct(q, l);
                assert!(
                    (s - ws).abs() <= 1e-13 * ws + d * 1e-18 + 1e-300,
                    "S({l}) = {s} vs {ws} (D = {d})"
                );
                assert!(
                    (f - wf).abs() <= 1e-13 * wf + 1e-18 + 1e-300,
                    "F({l}) = {f} vs {wf} (D = {d})"
                );
            }
        }
    }

    #[test]
    fn evaluation_order_does_not_change_values() {
        let q = crate::workload::zipf(1000, 1.0);
        let mut a = PowerSums::new(&q);
        let mut b = PowerSums::new(&q);
        let ls: Vec<u64> = (0..3000).step_by(7).collect();
        let fwd: Vec<_> = ls.iter().map(|&l| a.at(l)).collect();
        let back: Vec<_> = ls.iter().rev().map(|&l| b.at(l)).collect();
        assert!(fwd.iter().eq(back.iter().rev()));
    }
}
