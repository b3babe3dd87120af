//! An upper band of the reuse profile that holds at every knot at once.
//!
//! Why simultaneous: the conservative renewal bound replaces every U_j = S(j - 1) by an
//! upper value, and the monotonicity argument (docs/FIT.md) needs the upper profile at
//! or above the true S at every j together. A band that holds at each knot with
//! probability 99 % holds at all of a thousand knots far less often (measured in
//! docs/coverage/README.md: 75 % in one cell).
//!
//! How: S at knot i is a ratio of sums over the batches, S_i = sum_b h_bi / sum_b c_bi,
//! with linearised residuals z_bi = h_bi - S_i c_bi and batch-means standard error se_i.
//! The batches are the independent units, so the joint law of the standardised errors
//! (S_i - hat S_i) / se_i over all knots is that of sum_b w_b z_bi / (C_i se_i) with
//! independent standard normal multipliers w_b (the multiplier bootstrap; Chernozhukov,
//! Chetverikov and Kato 2013): the critical value c is the `level` quantile of its
//! largest component, drawn [`DRAWS`] times, and the band is hat S_i + c se_i. c is then
//! widened for the few batches behind se_i the way a t quantile widens a normal one
//! (the same tail probability, [`rbf_foundations::stats::student_t_quantile`]). Knots whose batches
//! all agree (se_i = 0: no repeat beyond them, or all of them) or rest on few repeats
//! take the count floor of [`upper_band`] (an exact Poisson limit) instead.

use rbf_data::synth::Rng;
use rbf_foundations::stats::{normal_cdf, normal_quantile, student_t_quantile};

/// Bootstrap draws of the largest standardised error.
pub const DRAWS: usize = 2000;
/// Knots the bootstrap follows at most (neighbouring knots' errors are nearly the same,
/// so a thinned set finds the same maximum at a fraction of the cost).
const MAX_KNOTS: usize = 512;
/// Fixed seed: the same trace gives the same band.
const SEED: u64 = 0x6261_6e64;

/// One knot's data: per batch (repeats with d > n, repeats that could show it), and
/// how many consecutive batches make one independent unit at this distance.
pub struct Knot {
    pub n: u64,
    pub pairs: Vec<(f64, f64)>,
    /// A power of two: whether a repeat shows d > n depends on the n arrivals before
    /// it, so batches shorter than that are not independent; the knot's units are runs
    /// of `group` batches ([`group_for`]).
    pub group: usize,
}

/// Fewest units a knot's interval rests on (a distance too long for that many units
/// of twice its length keeps that many, shorter ones).
pub const MIN_GROUPS: usize = 4;

/// The group of batches for distance n: the smallest power of two g with g batches
/// spanning at least 2 n arrivals, but at most batches / MIN_GROUPS.
pub fn group_for(n: u64, batch_len: u64, batches: usize) -> usize {
    let mut g = 1usize;
    while (g as u64).saturating_mul(batch_len) < n.saturating_mul(2)
        && g * 2 * MIN_GROUPS <= batches
    {
        g *= 2;
    }
    g
}

/// Sums of runs of `g` consecutive entries (the last run possibly shorter).
fn grouped<T: Copy + std::iter::Sum>(v: &[T], g: usize) -> Vec<T> {
    v.chunks(g.max(1))
        .map(|c| c.iter().copied().sum())
        .collect()
}

impl Knot {
    /// The pairs summed over the knot's groups of batches.
    fn units(&self) -> Vec<(f64, f64)> {
        self.pairs
            .chunks(self.group.max(1))
            .map(|c| c.iter().fold((0.0, 0.0), |a, p| (a.0 + p.0, a.1 + p.1)))
            .collect()
    }

    fn covered(&self) -> f64 {
        self.pairs.iter().map(|p| p.1).sum()
    }

    /// (S, its batch-means standard error over the knot's units, units with data).
    fn estimate(&self) -> (f64, f64, usize) {
        let c = self.covered();
        if c <= 0.0 {
            return (0.0, 0.0, 0);
        }
        let units = self.units();
        let s = units.iter().map(|p| p.0).sum::<f64>() / c;
        let n = units.iter().filter(|p| p.1 > 0.0).count();
        if n < 2 {
            return (s, 0.0, n);
        }
        let ss: f64 = units.iter().map(|(h, k)| (h - s * k).powi(2)).sum();
        let nf = n as f64;
        (s, (ss * nf / (nf - 1.0)).sqrt() / c, n)
    }
}

/// The simultaneous critical value (normal scale) for `knots` at `level`. A unit of g
/// batches gets the multiplier (w_1 + ... + w_g) / sqrt(g) of its batches' own, so the
/// units of every knot share one draw and the joint law across knots is kept.
fn critical_value(knots: &[Knot], level: f64) -> f64 {
    let batches = knots.iter().map(|k| k.pairs.len()).max().unwrap_or(0);
    // (group, standardised residual per unit) of every knot with a spread.
    let standardised: Vec<(usize, Vec<f64>)> = knots
        .iter()
        .filter_map(|k| {
            let (s, se, _) = k.estimate();
            (se > 0.0).then(|| {
                let scale = 1.0 / (k.covered() * se);
                let mut pairs = k.pairs.clone();
                pairs.resize(batches, (0.0, 0.0));
                let v = pairs
                    .chunks(k.group.max(1))
                    .map(|c| c.iter().map(|(h, n)| h - s * n).sum::<f64>() * scale)
                    .collect();
                (k.group.max(1), v)
            })
        })
        .collect();
    let z = normal_quantile(level);
    if standardised.is_empty() || batches < 2 {
        return z;
    }
    let step = standardised.len().div_ceil(MAX_KNOTS);
    let kept: Vec<&(usize, Vec<f64>)> = standardised.iter().step_by(step).collect();
    let mut groups: Vec<usize> = kept.iter().map(|k| k.0).collect();
    groups.sort_unstable();
    groups.dedup();
    let mut rng = Rng::seed(SEED);
    let mut w = vec![0.0; batches];
    let mut maxima: Vec<f64> = (0..DRAWS)
        .map(|_| {
            for x in w.iter_mut() {
                *x = gaussian(&mut rng);
            }
            let by_group: Vec<(usize, Vec<f64>)> = groups
                .iter()
                .map(|&g| {
                    let scale = 1.0 / (g as f64).sqrt();
                    (g, grouped(&w, g).iter().map(|x| x * scale).collect())
                })
                .collect();
            kept.iter()
                .map(|(g, v)| {
                    let wg = &by_group
                        .iter()
                        .find(|x| x.0 == *g)
                        .expect("every group drawn")
                        .1;
                    v.iter().zip(wg).map(|(a, b)| a * b).sum::<f64>()
                })
                .fold(f64::NEG_INFINITY, f64::max)
        })
        .collect();
    maxima.sort_by(f64::total_cmp);
    let i = ((level * DRAWS as f64).ceil() as usize).min(DRAWS) - 1;
    // Never below the pointwise value: the band is at least as wide as each interval.
    maxima[i].max(z)
}

/// A standard normal draw (Box-Muller).
fn gaussian(rng: &mut Rng) -> f64 {
    let u = 1.0 - rng.next_f64();
    let v = rng.next_f64();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// The exact one-sided upper confidence limit of a Poisson mean from a count h: the
/// lambda with P(X <= h; lambda) = tail (Garwood), by bisection on the CDF; for large
/// counts the Wilson-Hilferty form of the chi-square quantile.
pub fn poisson_upper(h: f64, tail: f64) -> f64 {
    let h = h.max(0.0).round();
    if h > 2000.0 {
        let nu = 2.0 * h + 2.0;
        let z = normal_quantile(1.0 - tail);
        let a = 2.0 / (9.0 * nu);
        return 0.5 * nu * (1.0 - a + z * a.sqrt()).powi(3);
    }
    let n = h as u64;
    let ln_fact = ln_factorial(n);
    // ln P(X <= h; lambda) for lambda >= h: the largest term is the last (i = h), and
    // term i - 1 is term i times i / lambda, so the sum runs down from it until the
    // terms no longer count (O(sqrt h) terms near the limit, not h).
    let log_cdf = |lambda: f64| -> f64 {
        let top = -lambda + h * lambda.ln() - ln_fact;
        let (mut sum, mut term) = (1.0f64, 1.0f64);
        let mut i = n;
        while i > 0 {
            term *= i as f64 / lambda;
            sum += term;
            if term < 1e-17 * sum {
                break;
            }
            i -= 1;
        }
        top + sum.ln()
    };
    let target = tail.ln();
    let (mut lo, mut hi) = (h, h + 20.0 * (h + 1.0).sqrt() + 40.0);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if log_cdf(mid) > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// ln n!: summed for small n, Stirling's series (error below 1e-12) beyond.
fn ln_factorial(n: u64) -> f64 {
    if n < 20 {
        return (2..=n).map(|i| (i as f64).ln()).sum();
    }
    let x = n as f64;
    x * x.ln() - x + 0.5 * (std::f64::consts::TAU * x).ln() + 1.0 / (12.0 * x)
        - 1.0 / (360.0 * x.powi(3))
        + 1.0 / (1260.0 * x.powi(5))
}

/// The upper band at `level` over `knots` (in increasing n): per knot, the larger of
/// hat S + c_t se and a count floor, the exact Poisson upper limit of the repeats
/// beyond the knot at the band's own tail probability over the repeats that could show
/// them (what a knot with few or no repeats beyond it gets: normal theory fails there,
/// and with none the batch spread is zero); never above the previous knot's value (S
/// is non-increasing, so a band covering S at an earlier knot covers it at every later
/// one where it is lower) nor above 1. Returns (n, upper) pairs.
pub fn upper_band(knots: &[Knot], level: f64) -> Vec<(u64, f64)> {
    let c = critical_value(knots, level);
    // The same one-sided tail probability on the t scale.
    let tail = 1.0 - normal_cdf(c);
    let mut prev = 1.0f64;
    knots
        .iter()
        .map(|k| {
            let (s, se, n) = k.estimate();
            let covered = k.covered();
            let ct = if n >= 2 {
                student_t_quantile(1.0 - tail, (n - 1) as f64).max(c)
            } else {
                c
            };
            let count = if covered > 0.0 {
                poisson_upper(s * covered, tail) / covered
            } else {
                1.0
            };
            let u = (s + ct * se).max(count).min(prev).min(1.0);
            prev = u;
            (k.n, u)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_knot_is_pointwise_and_many_are_wider() {
        // Batches of 1000 repeats with S = 0.3 and a little noise.
        let knot = |i: u64| Knot {
            n: i,
            pairs: (0..40)
                .map(|b| (300.0 + ((b * 7 + i * 3) % 11) as f64 - 5.0, 1000.0))
                .collect(),
            group: 1,
        };
        let one = critical_value(&[knot(1)], 0.99);
        assert!((one - normal_quantile(0.99)).abs() < 0.25, "{one}");
        let many: Vec<Knot> = (1..200).map(knot).collect();
        let c = critical_value(&many, 0.99);
        assert!(c > one + 0.3 && c < 5.0, "{c} vs {one}");
        let band = upper_band(&many, 0.99);
        assert!(band.windows(2).all(|w| w[1].1 <= w[0].1));
        assert!(band.iter().all(|&(_, u)| u > 0.3 && u < 0.32), "{band:?}");
    }

    #[test]
    fn long_distances_use_groups_of_batches() {
        assert_eq!(group_for(100, 4096, 64), 1);
        assert_eq!(group_for(4096, 4096, 64), 2);
        assert_eq!(group_for(20_000, 4096, 64), 16);
        // At most 64 / 4 batches per group.
        assert_eq!(group_for(1 << 30, 4096, 64), 16);
        assert_eq!(group_for(1 << 30, 4096, 6), 1);
        // A knot whose batches alternate high and low (dependence at the scale of two
        // batches) gets a spread over pairs of batches, where the alternation cancels.
        let pairs: Vec<(f64, f64)> = (0..32)
            .map(|b| (if b % 2 == 0 { 120.0 } else { 80.0 }, 1000.0))
            .collect();
        let one = Knot {
            n: 10,
            pairs: pairs.clone(),
            group: 1,
        }
        .estimate();
        let two = Knot {
            n: 10,
            pairs,
            group: 2,
        }
        .estimate();
        assert!((one.0 - 0.1).abs() < 1e-12 && (two.0 - 0.1).abs() < 1e-12);
        assert!(one.1 > 0.0 && two.1 == 0.0, "{one:?} {two:?}");
        assert_eq!(two.2, 16);
    }

    #[test]
    fn a_knot_without_hits_gets_the_zero_count_bound() {
        let k = Knot {
            n: 5,
            pairs: vec![(0.0, 100.0); 10],
            group: 1,
        };
        let b = upper_band(&[k], 0.99);
        // One knot: c is the normal 99 % quantile, the tail 1 %: ln(100) / 1000.
        assert!((b[0].1 - (100f64).ln() / 1000.0).abs() < 1e-9, "{b:?}");
    }

    #[test]
    fn ln_factorial_matches_the_sum() {
        for n in [0u64, 1, 5, 19, 20, 21, 100, 2000] {
            let sum: f64 = (2..=n).map(|i| (i as f64).ln()).sum();
            assert!((ln_factorial(n) - sum).abs() < 1e-9 * sum.max(1.0), "{n}");
        }
    }

    #[test]
    fn poisson_limits_match_tables() {
        // Garwood's one-sided 97.5 % upper limits: 0 -> 3.689, 1 -> 5.572, 5 -> 11.668,
        // 20 -> 30.89 (standard tables).
        for (h, want) in [(0.0, 3.689), (1.0, 5.572), (5.0, 11.668), (20.0, 30.89)] {
            let got = poisson_upper(h, 0.025);
            assert!((got - want).abs() < 0.01, "{h}: {got} vs {want}");
        }
        // The large-count form meets the exact sum where they hand over.
        let exact = poisson_upper(2000.0, 1e-4);
        let wh = {
            let nu: f64 = 2.0 * 2000.0 + 2.0;
            let z = normal_quantile(1.0 - 1e-4);
            let a = 2.0 / (9.0 * nu);
            0.5 * nu * (1.0 - a + z * a.sqrt()).powi(3)
        };
        assert!((exact - wh).abs() / exact < 1e-3, "{exact} vs {wh}");
    }
}
