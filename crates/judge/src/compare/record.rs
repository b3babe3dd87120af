//! A judged bound: what every output (table, JSON, CSV/Parquet, plots, report,
//! summaries) prints for one [`Bound`], so that a label means the same thing wherever it
//! appears.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::bound::Bound;
use super::verdict::{BoundVerdict, Regime};
use rbf_predicted::model::false_negative::Claim;

/// How far a record's claim is established. The first that applies, in this order:
/// not judged, not proven, checked, fitted model, proven.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Standing {
    /// A proof covers this exact number: the FN paper's theorem for this variant, on a
    /// workload given as the truth.
    Proven,
    /// A bound for this trace itself, read off its own recycles at 99 % confidence over
    /// hash positions (`rbf_observed::trace_renewal`): no workload model assumed.
    ThisTrace,
    /// A bound for the model fitted from a trace (its reuse profile, p_r, Q): proven for
    /// that model where the variant's bound is, not a proof for the trace itself.
    FittedModel,
    /// Not proven, but checked by measurement (the two-phase conservative bound, at or
    /// above the point estimate on the whole validation grid, docs/FIT.md).
    Checked,
    /// No proof covers it here; the record's note says why (an approximation is never
    /// proven).
    NotProven,
    /// Shown but not judged; the note says why ("model does not fit this trace: ...").
    NotJudged,
}

impl Standing {
    /// The words every text output uses.
    pub fn label(self) -> &'static str {
        match self {
            Standing::Proven => "proven",
            Standing::ThisTrace => "this trace",
            Standing::FittedModel => "fitted model",
            Standing::Checked => "checked",
            Standing::NotProven => "not proven",
            Standing::NotJudged => "not judged",
        }
    }

    /// The token of JSON and CSV (the label, kebab-case).
    pub fn token(self) -> &'static str {
        match self {
            Standing::Proven => "proven",
            Standing::ThisTrace => "this-trace",
            Standing::FittedModel => "fitted-model",
            Standing::Checked => "checked",
            Standing::NotProven => "not-proven",
            Standing::NotJudged => "not-judged",
        }
    }

    /// The weaker of two standings (a bound is only as good as its weakest link).
    pub fn and(self, other: Standing) -> Standing {
        self.max(other)
    }
}

impl fmt::Display for Standing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// The values a bound takes over the workloads a trace cannot tell apart (the fitted one
/// and [`rbf_observed::fit::adequacy::QFitCheck::alternatives`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Range {
    pub low: f64,
    pub high: f64,
}

/// A Q-based method is identified by the trace, and stated as a point, when its value
/// on every workload the trace allows (the fit and its alternatives) is within this
/// share of the fit's. Half the 5 % by which a stated point may miss the true value: the
/// alternatives are an inner approximation of what the trace allows, and on traces
/// drawn from the model the true value lay up to 2.9 % beyond their spread
/// (docs/FIT.md, "The test's level and the ranges"); the other half is for that.
/// D's own identification (10 %, [`crate::report::fit::IDENTIFIED`]) is a separate
/// rule: a method can move faster or slower than D with the members the trace allows.
pub const METHOD_IDENTIFIED: f64 = 0.025;

impl Range {
    /// Whether `value` (the fit's) is within [`METHOD_IDENTIFIED`] of every value in the
    /// range, so that the point says all the range does. Written without a ratio: at
    /// p_r = 1 a method is often exactly 0 on every member, which is identified.
    pub fn pins(&self, value: f64) -> bool {
        let room = METHOD_IDENTIFIED * value.abs();
        value - self.low <= room && self.high - value <= room
    }
}

/// One bound, judged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub bound: Bound,
    /// FN per arrival.
    pub value: f64,
    /// Over the fit and its alternatives (Q-based methods only), where the trace does
    /// not identify the method ([`Range::pins`]): None where it does, and the value is
    /// then stated as a point. The verdict is against the whole spread either way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<Range>,
    pub claim: Claim,
    pub standing: Standing,
    /// The observed FN interval against the bound (None: an approximation, not judged,
    /// or nothing observed).
    pub verdict: Option<BoundVerdict>,
    /// The replay's regime the verdict belongs to (None without a verdict).
    pub regime: Option<Regime>,
    /// How far the observed point lies beyond the bound, relative to it (0.1 = 10 %);
    /// None when it is on the bound's side.
    pub excess: Option<f64>,
    /// Why the standing is what it is, and what the number is.
    pub note: String,
}

impl Record {
    /// The verdict, when it belongs to `regime`.
    pub fn verdict_in(&self, regime: Regime) -> Option<BoundVerdict> {
        self.verdict.filter(|_| self.regime == Some(regime))
    }
}

/// Each bound's value under its JSON and CSV key ([`Bound::value_key`]), null where it
/// was not computed: the flat keys every command's JSON carries.
pub fn values_by_key(records: &[Record]) -> std::collections::BTreeMap<&'static str, Option<f64>> {
    Bound::ALL
        .into_iter()
        .map(|b| {
            let v = records.iter().find(|r| r.bound == b).map(|r| r.value);
            (b.value_key(), v)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(low: f64, high: f64) -> Range {
        Range { low, high }
    }

    /// The rule that states a Q-based method as a point: every member within 2.5 % of
    /// it. Fails if the rule is loosened (a range 3 % or 5 % wide on one side is a
    /// range) or tightened (2.4 % each side is a point).
    #[test]
    fn a_method_is_identified_only_by_a_narrow_range() {
        assert!(range(0.976, 1.024).pins(1.0));
        assert!(range(1.0, 1.0).pins(1.0));
        assert!(range(0.0, 0.0).pins(0.0), "0 on every member is identified");
        assert!(!range(0.97, 1.0).pins(1.0));
        assert!(!range(1.0, 1.03).pins(1.0));
        assert!(!range(0.95, 1.05).pins(1.0));
        assert!(!range(0.0, 1e-14).pins(0.0));
        // The share is the fit's value's, on either side.
        assert!(range(0.0976, 0.1).pins(0.1));
        assert!(!range(0.0974, 0.1).pins(0.1));
        assert!(!range(0.1, 0.1026).pins(0.1));
    }
}
