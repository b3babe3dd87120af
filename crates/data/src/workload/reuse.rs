//! The reuse profile: the survival function of reuse distances,
//! S(n) = P(d > n | the arrival is a repeat), where d counts the arrivals since the
//! drawn message's previous arrival (its last draw, or its first sight).
//!
//! Why it belongs to the workload: the renewal bound (FN §5) depends on Q and zeta only
//! through U_j = sum_i q_i g_i(j - 1) (eq. 24), the chance that a draw at arrival j of a
//! cycle hits a message neither drawn nor placed in arrivals 1..j-1 of that cycle. The
//! recursion of eq. (24) is exact for the marginal of each rank, so U_j is the chance
//! that the drawn message's previous arrival lies at or before the start of the cycle:
//! U_j = S(j - 1), whatever the placement. Cycles start at recycles, which depend on the
//! filter only, and in the model the draw at j is independent of the filter's state, so
//! the stationary S of the arrival process is exactly the U sequence the bound needs.
//! A trace gives S directly (`rbf fit` counts reuse distances), with no need to recover
//! Q and zeta first; see docs/FIT.md.
//!
//! Stored as knots (n_i, S(n_i)) with n_0 = 0 and S(0) = 1. Between knots S is read
//! either linearly (a point estimate) or as the value at the knot at or below n, which
//! for a non-increasing S is an upper bound; beyond the last knot it is held at the last
//! value (again an upper bound). The one-phase renewal ratio is non-decreasing in every
//! U_j (docs/FIT.md), so an upper profile gives an upper bound.

use serde::{Deserialize, Serialize};

use rbf_foundations::error::{Error, Problem, Result};

/// How S is read between two knots.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Between {
    /// Linear interpolation (a point estimate).
    Linear,
    /// The value at the knot at or below n (an upper bound of a non-increasing S).
    Step,
}

/// S(n) at knots, with how to read it in between.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReuseProfile {
    /// Knots, strictly increasing, starting at 0 (arrivals since the previous arrival).
    pub n: Vec<u64>,
    /// S at the knots: in [0, 1], non-increasing, S(0) = 1.
    pub survival: Vec<f64>,
    pub between: Between,
}

impl ReuseProfile {
    /// Checks the knots, naming the offending entry.
    pub fn validate(&self) -> Result<()> {
        // Each refusal states the rule the knots break, with the entries breaking it.
        let bad = |m: String| Err(Error::setting("reuse", Problem::rule(m)));
        if self.n.is_empty() || self.n.len() != self.survival.len() {
            return bad(format!(
                "needs as many knots as survival values, at least one ({} knots, {} values)",
                self.n.len(),
                self.survival.len()
            ));
        }
        if self.n[0] != 0 || self.survival[0] != 1.0 {
            return bad(format!(
                "the first knot must be n = 0 with S = 1 (every repeat's previous arrival is at least one arrival back); found n = {}, S = {}",
                self.n[0], self.survival[0]
            ));
        }
        if let Some(i) = self.n.windows(2).position(|w| w[1] <= w[0]) {
            return bad(format!(
                "knots must increase: n[{}] = {} follows n[{i}] = {}",
                i + 1,
                self.n[i + 1],
                self.n[i]
            ));
        }
        if let Some((i, s)) = self
            .survival
            .iter()
            .enumerate()
            .find(|(_, s)| !(0.0..=1.0).contains(*s))
        {
            return bad(format!("survival[{i}] = {s} is not a probability"));
        }
        if let Some(i) = self.survival.windows(2).position(|w| w[1] > w[0]) {
            return bad(format!(
                "survival must not increase: survival[{}] = {} exceeds survival[{i}] = {}",
                i + 1,
                self.survival[i + 1],
                self.survival[i]
            ));
        }
        Ok(())
    }

    /// S(n).
    pub fn at(&self, n: u64) -> f64 {
        // Index of the last knot <= n.
        let i = self.n.partition_point(|&k| k <= n) - 1;
        self.read(i, n)
    }

    /// S(n) with `knot` a guess of n's knot (the last knot <= n), updated: O(1) when
    /// the n asked grow slowly, the same value as [`ReuseProfile::at`]. Returns the
    /// value and the knot's own survival value (the largest S on n's segment).
    pub fn at_from(&self, n: u64, knot: &mut usize) -> (f64, f64) {
        let mut i = (*knot).min(self.n.len() - 1);
        if self.n[i] > n {
            i = self.n.partition_point(|&k| k <= n).max(1) - 1;
        } else {
            let mut step = 1;
            // Gallop forward, then search the last stretch.
            while i + step < self.n.len() && self.n[i + step] <= n {
                i += step;
                step *= 2;
            }
            let end = (i + step).min(self.n.len());
            i += self.n[i..end].partition_point(|&k| k <= n).max(1) - 1;
        }
        *knot = i;
        (self.read(i, n), self.survival[i])
    }

    fn read(&self, i: usize, n: u64) -> f64 {
        let s = self.survival[i];
        match (self.between, self.n.get(i + 1)) {
            (Between::Linear, Some(&next)) => {
                let f = (n - self.n[i]) as f64 / (next - self.n[i]) as f64;
                s + f * (self.survival[i + 1] - s)
            }
            _ => s,
        }
    }

    /// S(0), S(1), S(2), ...: U_1, U_2, ... of the renewal bound.
    pub fn sequence(&self) -> ReuseSequence<'_> {
        ReuseSequence {
            profile: self,
            knot: 0,
            n: 0,
        }
    }

    /// The median reuse distance (the smallest knot n with S(n) <= 1/2), if reached.
    pub fn median(&self) -> Option<u64> {
        self.n
            .iter()
            .zip(&self.survival)
            .find(|(_, &s)| s <= 0.5)
            .map(|(&n, _)| n)
    }
}

/// S(n) for n = 0, 1, 2, ... in O(1) per step.
pub struct ReuseSequence<'a> {
    profile: &'a ReuseProfile,
    knot: usize,
    n: u64,
}

impl Iterator for ReuseSequence<'_> {
    type Item = f64;

    fn next(&mut self) -> Option<f64> {
        let p = self.profile;
        while p.n.get(self.knot + 1).is_some_and(|&k| k <= self.n) {
            self.knot += 1;
        }
        let s = p.read(self.knot, self.n);
        self.n += 1;
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(between: Between) -> ReuseProfile {
        ReuseProfile {
            n: vec![0, 1, 3, 7],
            survival: vec![1.0, 0.8, 0.4, 0.2],
            between,
        }
    }

    #[test]
    fn linear_and_step_reading() {
        let lin = profile(Between::Linear);
        lin.validate().unwrap();
        let got: Vec<f64> = lin.sequence().take(10).collect();
        let want = [1.0, 0.8, 0.6, 0.4, 0.35, 0.3, 0.25, 0.2, 0.2, 0.2];
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{got:?}");
        }
        assert!((lin.at(5) - 0.3).abs() < 1e-12);
        let step = profile(Between::Step);
        let got: Vec<f64> = step.sequence().take(9).collect();
        assert_eq!(got, vec![1.0, 0.8, 0.8, 0.4, 0.4, 0.4, 0.4, 0.2, 0.2]);
        // The step reading is never below the linear one.
        assert!((0..20).all(|n| step.at(n) >= lin.at(n)));
        assert_eq!(lin.median(), Some(3));
    }

    #[test]
    fn validation_names_what_is_wrong() {
        let mut p = profile(Between::Linear);
        p.survival[2] = 0.9;
        assert!(p.validate().unwrap_err().to_string().contains("increase"));
        let mut p = profile(Between::Linear);
        p.n[0] = 1;
        assert!(p.validate().unwrap_err().to_string().contains("first knot"));
        let mut p = profile(Between::Linear);
        p.n[2] = 1;
        assert!(p
            .validate()
            .unwrap_err()
            .to_string()
            .contains("knots must increase"));
    }
}
