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

/// The standard normal CDF, from the complementary error function (Numerical
/// Recipes' `erfcc`, fractional error below 1.2e-7 everywhere).
pub fn normal_cdf(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let erfc = t * poly.exp();
    if x >= 0.0 {
        1.0 - 0.5 * erfc
    } else {
        0.5 * erfc
    }
}

/// Quantile of Student's t with `df` degrees of freedom (Cornish-Fisher expansion
/// around the normal quantile; relative error below 1e-3 for df >= 3 in the tails we
/// use, and exact in the limit df -> infinity).
///
/// A non-integer df below 3 (from Satterthwaite's approximation) is rounded down to 1
/// or 2, where the quantile is exact: fewer degrees of freedom, a wider interval.
pub fn student_t_quantile(p: f64, df: f64) -> f64 {
    assert!(df >= 1.0);
    let df = if df < 3.0 { df.floor() } else { df };
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

    /// [`Interval::clamped`] to [0, inf), for counts and means of counts.
    pub fn count(self) -> Interval {
        self.clamped(0.0, f64::INFINITY)
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

/// Confidence interval for a ratio of sums over a table of R replicas x B time batches
/// of (a, b) pairs: the same stream measured R times (e.g. one filter per hash seed),
/// cut into the same B consecutive batches. The estimate is sum(a) / sum(b) over the
/// whole table. Its variance comes from the linearised residuals z = a - R b in a
/// two-way random-effects model z_rb = alpha_r + beta_b + e_rb: alpha a replica's
/// persistent offset (its hash positions), beta what a batch of the stream does to
/// every replica alike, e the rest. Var(sum z) = R B (B s_alpha^2 + R s_beta^2 + s_e^2)
/// is estimated by R B (MS_rows + MS_batches - MS_residual) (never below either of the
/// first two mean squares, each of which it exceeds in expectation), with Satterthwaite's
/// degrees of freedom. With one replica this is [`ratio_interval`]'s batch means.
/// Rows must have equal lengths; needs B >= 2 and sum(b) > 0.
pub fn replicated_ratio_interval(table: &[Vec<(f64, f64)>], level: f64) -> Option<Interval> {
    replicated_ratio(table).map(|e| e.interval(level))
}

/// A ratio estimate with its standard error and degrees of freedom.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatioEstimate {
    pub estimate: f64,
    pub se: f64,
    pub df: f64,
    pub samples: u64,
}

impl RatioEstimate {
    /// The Student t interval at `level`.
    pub fn interval(&self, level: f64) -> Interval {
        let t = student_t_quantile(0.5 + level / 2.0, self.df.max(1.0));
        Interval {
            estimate: self.estimate,
            low: self.estimate - t * self.se,
            high: self.estimate + t * self.se,
            level,
            samples: self.samples,
        }
    }

    /// The mean of independent estimates (e.g. from independent traces): standard
    /// errors combined, Satterthwaite's degrees of freedom.
    pub fn mean_of(parts: &[RatioEstimate]) -> Option<RatioEstimate> {
        let n = parts.len() as f64;
        if parts.is_empty() {
            return None;
        }
        let var: f64 = parts.iter().map(|p| p.se * p.se).sum::<f64>() / (n * n);
        let denom: f64 = parts
            .iter()
            .map(|p| (p.se * p.se / (n * n)).powi(2) / p.df.max(1.0))
            .sum();
        Some(RatioEstimate {
            estimate: parts.iter().map(|p| p.estimate).sum::<f64>() / n,
            se: var.sqrt(),
            df: if denom > 0.0 { var * var / denom } else { 1.0 },
            samples: parts.iter().map(|p| p.samples).sum(),
        })
    }
}

/// The estimate behind [`replicated_ratio_interval`].
pub fn replicated_ratio(table: &[Vec<(f64, f64)>]) -> Option<RatioEstimate> {
    let r = table.len();
    let b = table.first()?.len();
    if b < 2 || table.iter().any(|row| row.len() != b) {
        return None;
    }
    let sb: f64 = table.iter().flatten().map(|x| x.1).sum();
    if sb <= 0.0 {
        return None;
    }
    let sa: f64 = table.iter().flatten().map(|x| x.0).sum();
    let est = sa / sb;
    let z: Vec<Vec<f64>> = table
        .iter()
        .map(|row| row.iter().map(|(x, y)| x - est * y).collect())
        .collect();
    let (rf, bf) = (r as f64, b as f64);
    let col: Vec<f64> = (0..b)
        .map(|j| z.iter().map(|row| row[j]).sum::<f64>() / rf)
        .collect();
    let ms_b = rf * col.iter().map(|c| c * c).sum::<f64>() / (bf - 1.0);
    let (var_sum, df) = if r == 1 {
        (bf * ms_b, bf - 1.0)
    } else {
        let row: Vec<f64> = z.iter().map(|row| row.iter().sum::<f64>() / bf).collect();
        let ms_r = bf * row.iter().map(|m| m * m).sum::<f64>() / (rf - 1.0);
        let ss_e: f64 = z
            .iter()
            .zip(&row)
            .map(|(zr, m)| {
                zr.iter()
                    .zip(&col)
                    .map(|(x, c)| (x - m - c).powi(2))
                    .sum::<f64>()
            })
            .sum();
        let (df_r, df_b, df_e) = (rf - 1.0, bf - 1.0, (rf - 1.0) * (bf - 1.0));
        let ms_e = ss_e / df_e;
        let v = ms_r + ms_b - ms_e;
        // Satterthwaite: a linear combination of mean squares, each chi-square / df.
        let (v, df) = if v >= ms_r.max(ms_b) {
            let denom = ms_r * ms_r / df_r + ms_b * ms_b / df_b + ms_e * ms_e / df_e;
            (v, if denom > 0.0 { v * v / denom } else { df_b })
        } else if ms_r >= ms_b {
            (ms_r, df_r)
        } else {
            (ms_b, df_b)
        };
        (rf * bf * v, df.max(1.0))
    };
    Some(RatioEstimate {
        estimate: est,
        se: var_sum.max(0.0).sqrt() / sb,
        df,
        samples: (r * b) as u64,
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

/// P(X >= k) for X ~ Binomial(n, p), summed in log space (exact enough for the tails
/// a verdict count needs, n up to millions).
pub fn binomial_tail(n: u64, p: f64, k: u64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if k > n || p <= 0.0 {
        return 0.0;
    }
    if p >= 1.0 {
        return 1.0;
    }
    let (ln_p, ln_q) = (p.ln(), (1.0 - p).ln());
    // ln C(n, k) built up term by term from ln C(n, 0) = 0.
    let mut ln_c: f64 = (0..k).map(|i| ((n - i) as f64 / (i + 1) as f64).ln()).sum();
    let mut total = 0.0;
    for j in k..=n {
        let term = (ln_c + j as f64 * ln_p + (n - j) as f64 * ln_q).exp();
        total += term;
        if j > k && term < total * 1e-17 {
            break;
        }
        ln_c += ((n - j) as f64 / (j + 1) as f64).ln();
    }
    total.min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomial_tails() {
        // P(X >= 1) = 1 - q^n; P(X >= n) = p^n.
        assert!((binomial_tail(10, 0.1, 1) - (1.0 - 0.9f64.powi(10))).abs() < 1e-12);
        assert!((binomial_tail(10, 0.1, 10) - 1e-10).abs() < 1e-22);
        assert_eq!(binomial_tail(10, 0.1, 0), 1.0);
        assert_eq!(binomial_tail(10, 0.1, 11), 0.0);
        // n = 869, p = 0.005: P(X >= 6) against a direct sum of the pmf below 6.
        let (n, p) = (869u64, 0.005f64);
        let mut pmf = (1.0 - p).powi(n as i32);
        let mut below = 0.0;
        for j in 0..6u64 {
            below += pmf;
            pmf *= (n - j) as f64 / (j + 1) as f64 * p / (1.0 - p);
        }
        assert!((binomial_tail(n, p, 6) - (1.0 - below)).abs() < 1e-12);
    }

    #[test]
    fn normal_quantiles() {
        assert!((normal_quantile(0.975) - 1.959_963_984_540_054).abs() < 1e-7);
        assert!((normal_quantile(0.995) - 2.575_829_303_548_901).abs() < 1e-7);
        assert!((normal_quantile(0.5)).abs() < 1e-9);
        assert!((normal_quantile(1e-6) + 4.753_424_308_822_899).abs() < 1e-6);
    }

    #[test]
    fn normal_cdf_inverts_the_quantile() {
        for p in [1e-6, 0.001, 0.025, 0.5, 0.9, 0.995, 0.99999] {
            let x = normal_quantile(p);
            let back = normal_cdf(x);
            assert!(
                (back - p).abs() < 2e-7 * p.min(1.0 - p).max(1e-3),
                "{p}: {back}"
            );
        }
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
    fn one_replica_is_batch_means() {
        let b: Vec<(f64, f64)> = (0..20)
            .map(|i| (3.0 + (i % 3) as f64, 10.0 + (i % 4) as f64))
            .collect();
        let one = ratio_interval(&b, 0.99).unwrap();
        let two = replicated_ratio_interval(&[b], 0.99).unwrap();
        assert!((one.estimate - two.estimate).abs() < 1e-15);
        assert!((one.half_width() - two.half_width()).abs() < 1e-12);
    }

    #[test]
    fn replica_offsets_widen_the_interval() {
        // Four replicas of 32 batches: the same batch effects, and each replica offset
        // by its own constant (a hash seed's persistent effect).
        let offsets = [-0.02, 0.0, 0.01, 0.03];
        let table: Vec<Vec<(f64, f64)>> = offsets
            .iter()
            .map(|o| {
                (0..32)
                    .map(|j| (100.0 * (0.3 + o) + (j % 5) as f64 - 2.0, 100.0))
                    .collect()
            })
            .collect();
        let i = replicated_ratio_interval(&table, 0.99).unwrap();
        // The offsets' spread (s.d. 0.0206 over 4 replicas: s.e. 0.0103) dominates: the
        // half-width is a t quantile with about 3 df (5.84) times it.
        assert!(i.half_width() > 0.03 && i.half_width() < 0.08, "{i:?}");
        // Without the offsets the batch effects alone give a far narrower interval.
        let flat: Vec<Vec<(f64, f64)>> = table
            .iter()
            .map(|row| {
                row.iter()
                    .enumerate()
                    .map(|(j, _)| (30.0 + (j % 5) as f64 - 2.0, 100.0))
                    .collect()
            })
            .collect();
        let f = replicated_ratio_interval(&flat, 0.99).unwrap();
        assert!(f.half_width() < 0.01, "{f:?}");
    }

    #[test]
    fn small_non_integer_df_rounds_down() {
        assert_eq!(
            student_t_quantile(0.995, 2.7),
            student_t_quantile(0.995, 2.0)
        );
        assert_eq!(
            student_t_quantile(0.995, 1.5),
            student_t_quantile(0.995, 1.0)
        );
    }

    #[test]
    fn ratio_interval_basic() {
        let b: Vec<(f64, f64)> = (0..10).map(|i| (1.0 + (i % 2) as f64, 10.0)).collect();
        let ci = ratio_interval(&b, 0.99).unwrap();
        assert!((ci.estimate - 0.15).abs() < 1e-12);
        assert!(ci.contains(0.15) && ci.low > 0.0 && ci.high < 0.3);
    }
}
