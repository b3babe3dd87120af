//! Probability vectors built from a user's weights: the one constructor that every
//! distribution of the workload model goes through (popularity Q, placement zeta and
//! its segments, workload files, the generator's alias tables), so that no path can
//! hand a model or a sampler a vector that does not sum to 1.
//!
//! Weights are relative: `segments:1e308,1e308` means the same as `segments:1,1`. Their
//! plain sum can overflow to infinity (and every probability then becomes 0, which gave
//! a wrong "proven" renewal bound) or lose tiny weights to underflow, so the weights are
//! first divided by the largest one: every scaled weight lies in [0, 1], their sum in
//! [1, n], and nothing can overflow. The sum is compensated (Neumaier), so its accuracy
//! does not depend on the order or spread of the weights.

use std::ops::Deref;

use rbf_foundations::error::{Error, Problem, Result};

/// A probability vector: non-empty, every entry finite and in [0, 1], summing to 1 up
/// to rounding. Only [`Probabilities::from_weights`] and the exact constructors below
/// make one.
#[derive(Clone, Debug, PartialEq)]
pub struct Probabilities(Vec<f64>);

impl Probabilities {
    /// Normalises `weights` (relative weights, any positive scale) into probabilities.
    /// Refuses an empty list, an entry that is negative, NaN or infinite, and weights
    /// that are all zero; errors name `key` and the offending entry.
    pub fn from_weights(key: &str, weights: &[f64]) -> Result<Probabilities> {
        Probabilities::from_weight_vec(key, weights.to_vec())
    }

    /// [`Probabilities::from_weights`] normalising `weights` in place: the same values
    /// to the bit, without a second vector of millions of ranks.
    pub fn from_weight_vec(key: &str, mut weights: Vec<f64>) -> Result<Probabilities> {
        if weights.is_empty() {
            return Err(Error::setting(
                key,
                Problem::Empty("needs at least one weight"),
            ));
        }
        if let Some((i, x)) = weights
            .iter()
            .enumerate()
            .find(|(_, x)| !x.is_finite() || **x < 0.0)
        {
            // The entry and its value come first, the rule after: the sentence of a
            // rule, not `{allowed}, found {value}`.
            return Err(Error::setting(
                key,
                Problem::rule(format!(
                    "entry {i} is {x}; weights must be finite numbers >= 0"
                )),
            ));
        }
        let max = weights.iter().copied().fold(0.0_f64, f64::max);
        if max <= 0.0 {
            return Err(Error::setting(
                key,
                Problem::rule("every weight is 0: at least one must be positive"),
            ));
        }
        // Weights whose largest is 1 already (Zipf's and the piecewise shapes' rank 0)
        // are their own scaled weights (w / 1 = w).
        if max != 1.0 {
            weights.iter_mut().for_each(|w| *w /= max);
        }
        let total = compensated_sum(&weights);
        // total >= 1 (the largest scaled weight is exactly 1) and <= n: finite.
        weights.iter_mut().for_each(|w| *w /= total);
        Ok(Probabilities(weights))
    }

    /// Zipf(D, alpha): q_i proportional to (i + 1)^-alpha for i = 0..D; `alpha` must be
    /// a finite number >= 0 (0 is uniform).
    pub fn zipf(distinct: usize, alpha: f64) -> Result<Probabilities> {
        Probabilities::check_zipf_alpha(alpha)?;
        Probabilities::from_weight_vec("popularity", zipf_weights(distinct, alpha))
    }

    /// The Zipf exponent's range: a finite number >= 0.
    pub fn check_zipf_alpha(alpha: f64) -> Result<()> {
        if !alpha.is_finite() || alpha < 0.0 {
            return Err(Error::setting(
                "popularity.zipf.alpha",
                Problem::range("must be a finite number >= 0", alpha),
            ));
        }
        Ok(())
    }

    /// Every one of `n` (>= 1) entries equally likely.
    pub fn uniform(key: &str, n: usize) -> Result<Probabilities> {
        if n == 0 {
            return Err(Error::setting(
                key,
                Problem::Empty("needs at least one entry"),
            ));
        }
        Ok(Probabilities(vec![1.0 / n as f64; n]))
    }

    /// All the mass on entry `at` of `n`.
    pub fn point(key: &str, n: usize, at: usize) -> Result<Probabilities> {
        if at >= n {
            return Err(Error::setting(
                key,
                Problem::Empty("needs at least one entry"),
            ));
        }
        let mut p = vec![0.0; n];
        p[at] = 1.0;
        Ok(Probabilities(p))
    }

    pub fn as_slice(&self) -> &[f64] {
        &self.0
    }

    pub fn into_vec(self) -> Vec<f64> {
        self.0
    }
}

impl Deref for Probabilities {
    type Target = [f64];

    fn deref(&self) -> &[f64] {
        &self.0
    }
}

impl From<Probabilities> for Vec<f64> {
    fn from(p: Probabilities) -> Vec<f64> {
        p.0
    }
}

/// (i + 1)^-alpha for i = 0..distinct: weights in (0, 1] for alpha >= 0.
pub(super) fn zipf_weights(distinct: usize, alpha: f64) -> Vec<f64> {
    zipf_weights_from(0..distinct, alpha).collect()
}

/// The Zipf weights (i + 1)^-alpha of ranks `ranks`.
pub(super) fn zipf_weights_from(
    ranks: std::ops::Range<usize>,
    alpha: f64,
) -> impl Iterator<Item = f64> {
    ranks.map(move |i| ((i + 1) as f64).powf(-alpha))
}

/// Neumaier's compensated sum: accurate to a few ulps whatever the order and spread of
/// the terms (a long tail of tiny probabilities after a few large ones, for instance).
pub fn compensated_sum(xs: &[f64]) -> f64 {
    let mut sum = 0.0_f64;
    let mut c = 0.0_f64;
    for &x in xs {
        let t = sum + x;
        if sum.abs() >= x.abs() {
            c += (sum - t) + x;
        } else {
            c += (x - t) + sum;
        }
        sum = t;
    }
    sum + c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(w: &[f64]) -> Vec<f64> {
        Probabilities::from_weights("w", w).unwrap().into_vec()
    }

    #[test]
    fn weights_are_relative_whatever_their_scale() {
        assert_eq!(p(&[1e308, 1e308]), vec![0.5, 0.5]);
        assert_eq!(p(&[1.0, 1.0]), vec![0.5, 0.5]);
        assert_eq!(p(&[f64::MAX, f64::MAX, f64::MAX, f64::MAX]), vec![0.25; 4]);
        // Subnormal weights keep their ratios.
        let tiny = p(&[4e-323, 2e-323, 2e-323]);
        assert_eq!(tiny, vec![0.5, 0.25, 0.25]);
        // A weight beside a huge one underflows to 0 only when it is negligible.
        let mixed = p(&[1e308, 1.0]);
        assert_eq!(mixed[0], 1.0);
        assert!(mixed[1] >= 0.0 && mixed[1] < 1e-300);
        for w in [
            vec![1e308; 1000],
            vec![5e-324; 7],
            vec![3.0, 2.0, 1e-300, 0.0],
            (1..=10_000).map(|i| 1e300 / i as f64).collect(),
        ] {
            let q = p(&w);
            assert!(q.iter().all(|x| x.is_finite() && (0.0..=1.0).contains(x)));
            assert!((compensated_sum(&q) - 1.0).abs() < 1e-12, "{w:?}");
        }
    }

    #[test]
    fn bad_weights_name_the_key_and_the_entry() {
        for (w, says) in [
            (vec![], "at least one"),
            (vec![1.0, f64::NAN], "entry 1 is NaN"),
            (vec![f64::INFINITY], "entry 0 is inf"),
            (vec![1.0, -1.0], "entry 1 is -1"),
            (vec![0.0, 0.0], "every weight is 0"),
            (vec![-0.0], "every weight is 0"),
        ] {
            let e = Probabilities::from_weights("placement", &w)
                .unwrap_err()
                .to_string();
            assert!(e.contains("`placement`") && e.contains(says), "{w:?}: {e}");
        }
        assert!(Probabilities::zipf(3, f64::NAN).is_err());
        assert!(Probabilities::zipf(3, -1.0).is_err());
        assert!(Probabilities::zipf(0, 1.0).is_err());
        // A huge exponent: everything after rank 0 underflows, which is what it means.
        assert_eq!(
            Probabilities::zipf(3, 1e308).unwrap().as_slice(),
            [1.0, 0.0, 0.0]
        );
    }

    #[test]
    fn compensated_sum_is_exact_where_plain_sums_drift() {
        let mut xs = vec![1.0];
        xs.extend(std::iter::repeat_n(1e-16, 10_000));
        assert!((compensated_sum(&xs) - (1.0 + 1e-12)).abs() < 1e-20);
    }
}
