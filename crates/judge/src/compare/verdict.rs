//! Verdicts never more optimistic than the evidence. A measurement is an interval, and a
//! limit (a target the user set, or a model's bound) is judged three ways: met only when
//! the whole interval lies on the limit's side, missed only when the whole interval lies
//! on the other side, undecided when the interval straddles it. A point estimate on the
//! wrong side is always reported, with by how much, whatever the verdict.
//!
//! A bound the trace does not pin down (a Q-based method evaluated on the fitted
//! workload and on every alternative the trace cannot tell apart from it,
//! [`rbf_observed::fit::adequacy::QFitCheck`]) is a range of values, and is judged against the
//! whole range: an upper bound holds only when the interval is at or below the range's
//! least value and is violated only when the interval lies above its greatest, and the
//! other way round for a lower bound.
//!
//! The FN paper's bounds describe a filter's steady state (an average over renewal
//! cycles); a replay with only a few recycles measures the transient after the warm-up,
//! so its verdict is reported apart ([`Regime`]), never mixed with steady-state ones.

use std::fmt;

use serde::{Deserialize, Serialize};

use rbf_foundations::stats::Interval;

/// Which side of the limit the measured quantity must lie on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// A target or an upper bound: the quantity must be at most the limit.
    AtMost,
    /// A lower bound: the quantity must be at least the limit.
    AtLeast,
}

/// Where a measurement's interval lies relative to a limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Position {
    Inside,
    Straddles,
    Outside,
}

/// Where the interval [low, high] lies against a limit anywhere in [least, most].
fn position(least: f64, most: f64, side: Side, low: f64, high: f64) -> Position {
    let (all_inside, all_outside) = match side {
        Side::AtMost => (high <= least, low > most),
        Side::AtLeast => (low >= most, high < least),
    };
    if all_inside {
        Position::Inside
    } else if all_outside {
        Position::Outside
    } else {
        Position::Straddles
    }
}

/// A measured rate against a target the user set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetVerdict {
    /// The whole interval is within the target.
    Meets,
    /// The whole interval is beyond the target.
    Misses,
    /// The interval straddles the target, or there is no interval.
    Undecided,
}

/// A model's number against a target. The number is exact for its model, so the
/// verdict is a comparison; but a number meeting its target is not presented as met
/// when a replay of the same filter shows the target missed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModelTargetVerdict {
    Meets,
    Misses,
    /// The model meets the target, the replay of the same filter misses it.
    NotConfirmed,
}

impl ModelTargetVerdict {
    /// `value` against an upper `target`, given the replay's verdict on the same target.
    pub fn of(value: f64, target: f64, replay: Option<TargetVerdict>) -> Self {
        match (value <= target, replay) {
            (true, Some(TargetVerdict::Misses)) => ModelTargetVerdict::NotConfirmed,
            (true, _) => ModelTargetVerdict::Meets,
            (false, _) => ModelTargetVerdict::Misses,
        }
    }
}

impl fmt::Display for ModelTargetVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ModelTargetVerdict::Meets => "meets",
            ModelTargetVerdict::Misses => "MISSES",
            ModelTargetVerdict::NotConfirmed => "NOT CONFIRMED",
        })
    }
}

/// A measured rate against a model's bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BoundVerdict {
    /// The whole interval is on the bound's side.
    Holds,
    /// The whole interval is on the wrong side: the bound fails here.
    Violated,
    /// The interval straddles the bound, or there is no interval.
    Undecided,
}

impl fmt::Display for TargetVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TargetVerdict::Meets => "meets",
            TargetVerdict::Misses => "MISSES",
            TargetVerdict::Undecided => "undecided",
        })
    }
}

impl fmt::Display for BoundVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BoundVerdict::Holds => "holds",
            BoundVerdict::Violated => "VIOLATED",
            BoundVerdict::Undecided => "undecided",
        })
    }
}

/// A measurement (point estimate and, when there is one, its interval) set against a
/// limit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Check {
    pub limit: f64,
    /// The values the limit may take (least, greatest) when it is not pinned down;
    /// None: just `limit`.
    pub range: Option<(f64, f64)>,
    pub side: Side,
    pub estimate: f64,
    pub interval: Option<(f64, f64)>,
}

impl Check {
    pub fn new(limit: f64, side: Side, estimate: f64, interval: Option<&Interval>) -> Check {
        Check {
            limit,
            range: None,
            side,
            estimate,
            interval: interval.map(|i| (i.low, i.high)),
        }
    }

    /// The limit's least and greatest value.
    fn span(&self) -> (f64, f64) {
        self.range.unwrap_or((self.limit, self.limit))
    }

    /// The end of the range most favourable to the limit: a point beyond it is beyond
    /// every value the limit may take.
    pub fn far_end(&self) -> f64 {
        let (least, most) = self.span();
        match self.side {
            Side::AtMost => most,
            Side::AtLeast => least,
        }
    }

    /// Without an interval nothing is decided: a point estimate alone cannot tell a
    /// limit met from sampling luck.
    fn position(&self) -> Position {
        let (least, most) = self.span();
        match self.interval {
            Some((low, high)) => position(least, most, self.side, low, high),
            None => Position::Straddles,
        }
    }

    pub fn target(&self) -> TargetVerdict {
        match self.position() {
            Position::Inside => TargetVerdict::Meets,
            Position::Outside => TargetVerdict::Misses,
            Position::Straddles => TargetVerdict::Undecided,
        }
    }

    pub fn bound(&self) -> BoundVerdict {
        match self.position() {
            Position::Inside => BoundVerdict::Holds,
            Position::Outside => BoundVerdict::Violated,
            Position::Straddles => BoundVerdict::Undecided,
        }
    }

    /// How far the point estimate is on the wrong side, relative to the limit
    /// (0.1 = 10 % beyond it; with a range, beyond its far end); None when it is on
    /// the right side.
    pub fn excess(&self) -> Option<f64> {
        let limit = self.far_end();
        let beyond = match self.side {
            Side::AtMost => self.estimate - limit,
            Side::AtLeast => limit - self.estimate,
        };
        (beyond > 0.0).then(|| {
            if limit != 0.0 {
                beyond / limit.abs()
            } else {
                f64::INFINITY
            }
        })
    }
}

/// Whether a replay measured the steady state the models describe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Regime {
    Steady,
    /// Fewer than [`MIN_STEADY_CYCLES`] recycles: the transient after the warm-up.
    Transient,
}

/// Recycles per replay below which a replay is treated as transient: with a handful of
/// renewal cycles the first, atypical cycle after the warm-up weighs too much.
pub const MIN_STEADY_CYCLES: f64 = 10.0;

impl Regime {
    pub fn of(cycles: f64) -> Regime {
        if cycles < MIN_STEADY_CYCLES {
            Regime::Transient
        } else {
            Regime::Steady
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(limit: f64, side: Side, estimate: f64, low: f64, high: f64) -> Check {
        Check {
            limit,
            range: None,
            side,
            estimate,
            interval: Some((low, high)),
        }
    }

    #[test]
    fn meets_only_when_the_whole_interval_is_inside() {
        // An `rbf size` case: 1.145e-3 against a 1e-3 target is not met.
        let c = check(1e-3, Side::AtMost, 1.145e-3, 0.9e-3, 1.3e-3);
        assert_eq!(c.target(), TargetVerdict::Undecided);
        assert!((c.excess().unwrap() - 0.145).abs() < 1e-12);
        assert_eq!(
            check(1e-3, Side::AtMost, 0.8e-3, 0.7e-3, 0.9e-3).target(),
            TargetVerdict::Meets
        );
        assert_eq!(
            check(1e-3, Side::AtMost, 1.2e-3, 1.1e-3, 1.3e-3).target(),
            TargetVerdict::Misses
        );
        let none = Check {
            interval: None,
            ..check(1e-3, Side::AtMost, 1e-4, 0.0, 0.0)
        };
        assert_eq!(none.target(), TargetVerdict::Undecided);
        assert_eq!(none.excess(), None);
    }

    #[test]
    fn bounds_on_both_sides() {
        assert_eq!(
            check(0.1, Side::AtMost, 0.05, 0.04, 0.06).bound(),
            BoundVerdict::Holds
        );
        assert_eq!(
            check(0.1, Side::AtMost, 0.2, 0.15, 0.25).bound(),
            BoundVerdict::Violated
        );
        assert_eq!(
            check(0.1, Side::AtLeast, 0.2, 0.15, 0.25).bound(),
            BoundVerdict::Holds
        );
        let low = check(0.1, Side::AtLeast, 0.09, 0.05, 0.12);
        assert_eq!(low.bound(), BoundVerdict::Undecided);
        assert!((low.excess().unwrap() - 0.1).abs() < 1e-12);
        let far = check(1e-4, Side::AtMost, 2.18e-3, 1e-3, 3e-3);
        assert_eq!(far.bound(), BoundVerdict::Violated);
        assert!((far.excess().unwrap() - 20.8).abs() < 1e-9);
    }

    /// The QFitCheck contract (docs/ARCHITECTURE.md, TEAM.md): a bound known only to lie
    /// in [least, most] is judged against the whole range.
    #[test]
    fn ranges_are_judged_as_a_whole() {
        let ranged = |side, low, high| Check {
            limit: 0.2,
            range: Some((0.1, 0.3)),
            side,
            estimate: (low + high) / 2.0,
            interval: Some((low, high)),
        };
        // Lower bound: holds only at or above the range's max, violated only below its min.
        assert_eq!(
            ranged(Side::AtLeast, 0.31, 0.4).bound(),
            BoundVerdict::Holds
        );
        assert_eq!(
            ranged(Side::AtLeast, 0.25, 0.4).bound(),
            BoundVerdict::Undecided
        );
        assert_eq!(
            ranged(Side::AtLeast, 0.15, 0.18).bound(),
            BoundVerdict::Undecided
        );
        assert_eq!(
            ranged(Side::AtLeast, 0.01, 0.09).bound(),
            BoundVerdict::Violated
        );
        // Upper bound: mirrored.
        assert_eq!(
            ranged(Side::AtMost, 0.01, 0.09).bound(),
            BoundVerdict::Holds
        );
        assert_eq!(
            ranged(Side::AtMost, 0.05, 0.15).bound(),
            BoundVerdict::Undecided
        );
        assert_eq!(
            ranged(Side::AtMost, 0.25, 0.28).bound(),
            BoundVerdict::Undecided
        );
        assert_eq!(
            ranged(Side::AtMost, 0.31, 0.4).bound(),
            BoundVerdict::Violated
        );
        // The point's excess is measured from the far end: below 0.1 for a lower bound.
        assert_eq!(ranged(Side::AtLeast, 0.15, 0.18).excess(), None);
        let e = ranged(Side::AtLeast, 0.01, 0.09).excess().unwrap();
        assert!((e - 0.5).abs() < 1e-12, "{e}");
    }

    #[test]
    fn regimes() {
        assert_eq!(Regime::of(0.0), Regime::Transient);
        assert_eq!(Regime::of(9.9), Regime::Transient);
        assert_eq!(Regime::of(10.0), Regime::Steady);
    }
}
