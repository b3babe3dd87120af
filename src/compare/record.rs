//! A judged bound: what every output (table, JSON, CSV/Parquet, plots, report,
//! summaries) prints for one [`Bound`], so that a label means the same thing wherever it
//! appears.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::bound::Bound;
use super::verdict::{BoundVerdict, Regime};
use crate::model::fneg::Claim;

/// How far a record's claim is established. The first that applies, in this order:
/// not judged, not proven, checked, fitted model, proven.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Standing {
    /// A proof covers this exact number: the FN paper's theorem for this variant, on a
    /// workload given as the truth.
    Proven,
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
/// and [`crate::fit::adequacy::QFitCheck::alternatives`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Range {
    pub low: f64,
    pub high: f64,
}

/// One bound, judged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub bound: Bound,
    /// FN per arrival.
    pub value: f64,
    /// Over the fit and its alternatives (Q-based methods only); the verdict is against
    /// the whole range.
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
