//! Small statistics used to put confidence intervals on replay measurements and to
//! derive test tolerances from sample sizes.

/// Inverse of the standard normal CDF (Acklam's rational approximation, relative error
/// below 1.2e-9 on (0, 1)).
pub fn normal_quantile(p: f64) -> f64 {
    assert!(
        p > 0.0 && p < 1.0,
        "normal_quantile needs 0 < p < 1, got {p}"
    );
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let plow = 0.02425;
    if p < plow {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - plow {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        let q = (-2.0 * (1.0 - p).ln()).sqrt();
        -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    }
}

/// Quantile of Student's t with `df` degrees of freedom (Cornish-Fisher expansion
/// around the normal quantile; relative error below 1e-3 for df >= 3 in the tails we
/// use, and exact in the limit df -> infinity).
pub fn student_t_quantile(p: f64, df: f64) -> f64 {
    assert!(df >= 1.0);
    let z = normal_quantile(p);
    if df == 1.0 {
        return (std::f64::consts::PI * (p - 0.5)).tan();
    }
    if df == 2.0 {
        let a = 4.0 * p * (1.0 - p);
        return (2.0 * p - 1.0) * (2.0 / a).sqrt();
    }
    let z2 = z * z;
    let g1 = (z2 + 1.0) * z / 4.0;
    let g2 = ((5.0 * z2 + 16.0) * z2 + 3.0) * z / 96.0;
    let g3 = (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * z / 384.0;
    let g4 = ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) * z / 92160.0;
    z + g1 / df + g2 / df.powi(2) + g3 / df.powi(3) + g4 / df.powi(4)
}

/// A two-sided confidence interval.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Interval {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    /// Confidence level, e.g. 0.99.
    pub level: f64,
    /// Number of independent (or batch) observations behind it.
    pub samples: u64,
}

impl Interval {
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }

    pub fn half_width(&self) -> f64 {
        (self.high - self.low) / 2.0
    }

    /// The interval cut to `[lo, hi]`: a rate's interval from the normal
    /// approximation can reach below 0 (or above 1), where no rate can be.
    pub fn clamped(self, lo: f64, hi: f64) -> Interval {
        Interval {
            low: self.low.clamp(lo, hi),
            high: self.high.clamp(lo, hi),
            ..self
        }
    }

    /// [`Interval::clamped`] to [0, 1], for rates and probabilities.
    pub fn rate(self) -> Interval {
        self.clamped(0.0, 1.0)
    }
}

/// Confidence interval for a ratio of sums sum(a)/sum(b) from `n` batches (a_i, b_i),
/// by the delta method: Var(R) ~ sum (a_i - R b_i)^2 / (n (n-1) mean(b)^2), with a
/// Student t quantile. Needs n >= 2 and sum(b) > 0.
pub fn ratio_interval(batches: &[(f64, f64)], level: f64) -> Option<Interval> {
    let n = batches.len();
    let sb: f64 = batches.iter().map(|x| x.1).sum();
    if n < 2 || sb <= 0.0 {
        return None;
    }
    let sa: f64 = batches.iter().map(|x| x.0).sum();
    let r = sa / sb;
    let mean_b = sb / n as f64;
    let ss: f64 = batches.iter().map(|(a, b)| (a - r * b).powi(2)).sum();
    let se = (ss / ((n * (n - 1)) as f64)).sqrt() / mean_b;
    let t = student_t_quantile(0.5 + level / 2.0, (n - 1) as f64);
    Some(Interval {
        estimate: r,
        low: r - t * se,
        high: r + t * se,
        level,
        samples: n as u64,
    })
}

/// Confidence interval for a mean of independent observations.
pub fn mean_interval(xs: &[f64], level: f64) -> Option<Interval> {
    let pairs: Vec<(f64, f64)> = xs.iter().map(|&x| (x, 1.0)).collect();
    ratio_interval(&pairs, level)
}

/// Half-width of a normal-approximation binomial interval for a proportion p estimated
/// from n trials, at the given confidence level; used to derive test tolerances.
pub fn binomial_half_width(p: f64, n: f64, level: f64) -> f64 {
    normal_quantile(0.5 + level / 2.0) * (p * (1.0 - p) / n).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_quantiles() {
        assert!((normal_quantile(0.975) - 1.959_963_984_540_054).abs() < 1e-7);
        assert!((normal_quantile(0.995) - 2.575_829_303_548_901).abs() < 1e-7);
        assert!((normal_quantile(0.5)).abs() < 1e-9);
        assert!((normal_quantile(1e-6) + 4.753_424_308_822_899).abs() < 1e-6);
    }

    #[test]
    fn t_quantiles() {
        // Reference values from standard t tables.
        assert!((student_t_quantile(0.995, 5.0) - 4.032).abs() < 0.01);
        assert!((student_t_quantile(0.995, 10.0) - 3.169).abs() < 0.003);
        assert!((student_t_quantile(0.995, 30.0) - 2.750).abs() < 0.002);
        assert!((student_t_quantile(0.975, 2.0) - 4.303).abs() < 0.001);
    }

    #[test]
    fn ratio_interval_basic() {
        let b: Vec<(f64, f64)> = (0..10).map(|i| (1.0 + (i % 2) as f64, 10.0)).collect();
        let ci = ratio_interval(&b, 0.99).unwrap();
        assert!((ci.estimate - 0.15).abs() < 1e-12);
        assert!(ci.contains(0.15) && ci.low > 0.0 && ci.high < 0.3);
    }
}
