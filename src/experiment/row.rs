//! One row of the results table: a grid point, what was observed there and what
//! each model predicts. Values not computed are `None` (empty in CSV, null in JSON),
//! never zero.

use serde::{Deserialize, Serialize};

use super::grid::{Point, SigmaRule};
use crate::report::verdict::{BoundVerdict, Check, Regime, Side};

/// A bound judged against the observed FN interval (see [`crate::report::verdict`]):
/// the verdict lands in the column of the replay's regime, so a transient replay never
/// passes for evidence about the steady state the bound describes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BoundColumns {
    /// Verdict when the replay reached the steady state.
    pub steady: Option<BoundVerdict>,
    /// Verdict when the replay saw fewer than `MIN_STEADY_CYCLES` recycles per replay.
    pub transient: Option<BoundVerdict>,
    /// How far the observed point estimate is on the wrong side of the bound, relative
    /// to the bound (0.1 = 10 %); None when it is on the right side.
    pub excess: Option<f64>,
}

impl BoundColumns {
    pub fn judge(check: &Check, regime: Regime) -> BoundColumns {
        let v = Some(check.bound());
        BoundColumns {
            steady: v.filter(|_| regime == Regime::Steady),
            transient: v.filter(|_| regime == Regime::Transient),
            excess: check.excess(),
        }
    }

    /// The verdict, whichever regime it is in.
    pub fn verdict(&self) -> Option<BoundVerdict> {
        self.steady.or(self.transient)
    }
}

/// A bound judged against the observed FN at every point: the one list the runner,
/// the tables, the CSV and the summaries read (a new bound is one more entry).
pub struct JudgedBound {
    /// For people: "renewal upper bound".
    pub name: &'static str,
    /// CSV column prefix: `{column}_verdict_steady`, ...
    pub column: &'static str,
    /// Which side of the bound the observed FN must lie on.
    pub side: Side,
    pub value: fn(&Row) -> Option<f64>,
    pub proven: fn(&Row) -> Option<bool>,
    pub verdict: fn(&Row) -> &BoundColumns,
    pub verdict_mut: fn(&mut Row) -> &mut BoundColumns,
}

pub const JUDGED_BOUNDS: [JudgedBound; 3] = [
    JudgedBound {
        name: "renewal upper bound",
        column: "renewal",
        side: Side::AtMost,
        value: |r| r.fn_renewal_upper,
        proven: |r| r.renewal_guaranteed,
        verdict: |r| &r.renewal_verdict,
        verdict_mut: |r| &mut r.renewal_verdict,
    },
    JudgedBound {
        name: "renewal upper bound, conservative end of the fit",
        column: "renewal_conservative",
        side: Side::AtMost,
        value: |r| r.fn_renewal_conservative,
        proven: |r| r.renewal_guaranteed,
        verdict: |r| &r.renewal_conservative_verdict,
        verdict_mut: |r| &mut r.renewal_conservative_verdict,
    },
    JudgedBound {
        name: "markov lower bound",
        column: "markov_lower",
        side: Side::AtLeast,
        value: |r| r.fn_markov_lower,
        proven: |r| r.markov_guaranteed,
        verdict: |r| &r.markov_lower_verdict,
        verdict_mut: |r| &mut r.markov_lower_verdict,
    },
];

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Row {
    pub point: usize,
    pub source: String,
    pub memory: u64,
    pub hashes: u32,
    /// The sigma used (resolved from `sigma_fraction` or `target_fp` when those were given).
    pub sigma: Option<u64>,
    pub max_inserts: Option<u64>,
    pub sigma_fraction: Option<f64>,
    pub target_fp: Option<f64>,
    pub phases: u8,
    pub hashing: String,
    pub retaining: bool,
    pub copy_over: bool,
    pub independent_halves: bool,
    /// Replays averaged into the observed columns.
    pub seeds: usize,
    /// Measured (post-warm-up) arrivals per replay.
    pub arrivals: Option<u64>,
    /// Mean recycles per replay.
    pub cycles: Option<f64>,
    /// FN paper's FP: false positives / arrivals (mean over seeds).
    pub observed_fp: Option<f64>,
    /// FP paper's count-instance FP rate (what `fp_model` predicts).
    pub observed_fp_count_instance: Option<f64>,
    /// Its interval, built like the FN interval, clamped to [0, 1].
    pub observed_fp_count_instance_low: Option<f64>,
    pub observed_fp_count_instance_high: Option<f64>,
    /// False negatives / arrivals.
    pub observed_fn: Option<f64>,
    /// Interval of observed FN: t-interval over seeds, or batch means over cycles
    /// when there is one seed.
    pub observed_fn_low: Option<f64>,
    pub observed_fn_high: Option<f64>,
    /// FP paper's average FP rate: f_sigma (sigma-bounded) or f_a (N-bounded).
    pub fp_model: Option<f64>,
    /// Messages per cycle at `target_fp`: sigma-bounded model, and the classic
    /// worst-case sizing (eq. 1), each with its best k <= `hashes` (FP paper §V-B).
    pub capacity_sigma: Option<f64>,
    pub capacity_worst_case: Option<f64>,
    pub capacity_ratio: Option<f64>,
    /// The renewal bound on the source's model workload: the true one for synthetic
    /// sources, the fitted one (point estimate) for traces.
    pub fn_renewal_upper: Option<f64>,
    /// The renewal bound on the workload fitted from the trace, point estimate (traces:
    /// the same as `fn_renewal_upper`; synthetic sources with `fit = true`).
    pub fn_renewal_fitted: Option<f64>,
    /// The renewal bound at the conservative end of the fit's uncertainty.
    pub fn_renewal_conservative: Option<f64>,
    pub fn_markov_lower: Option<f64>,
    pub fn_markov_swr: Option<f64>,
    pub fn_markov_uniform: Option<f64>,
    pub fn_markov_biuniform: Option<f64>,
    pub fn_drop_pins: Option<f64>,
    pub fn_markov_disabling: Option<f64>,
    /// The FN models ran on a workload fitted from a trace (a bound then holds for the
    /// fitted model, not for the trace).
    pub fitted_workload: bool,
    /// The renewal bound is proven for this filter and workload (FN paper §5).
    pub renewal_guaranteed: Option<bool>,
    /// The Markov bounds (lower, swr, uniform, bi-uniform) are proven here (one phase
    /// and p_r = 1 only).
    pub markov_guaranteed: Option<bool>,
    /// The renewal upper bound against the observed FN interval.
    pub renewal_verdict: BoundColumns,
    /// The renewal bound at the conservative end of the fit against the observed FN.
    pub renewal_conservative_verdict: BoundColumns,
    /// The Markov lower bound against the observed FN interval.
    pub markov_lower_verdict: BoundColumns,
    /// Caveats and errors for this point.
    pub notes: Vec<String>,
}

impl Row {
    pub fn new(point: &Point, source: &str, seeds: usize) -> Row {
        let (sigma_fraction, target_fp, sigma, max_inserts) = match point.rule {
            SigmaRule::Sigma(s) => (None, None, Some(s), None),
            SigmaRule::Fraction(x) => (Some(x), None, None, None),
            SigmaRule::TargetFp(t) => (None, Some(t), None, None),
            SigmaRule::MaxInserts(n) => (None, None, None, Some(n)),
        };
        Row {
            point: point.index,
            source: source.to_string(),
            memory: point.memory,
            hashes: point.hashes,
            sigma,
            max_inserts,
            sigma_fraction,
            target_fp,
            phases: point.phases,
            hashing: point.hashing.name().to_string(),
            retaining: point.retaining,
            copy_over: point.copy_over,
            independent_halves: point.independent_halves,
            seeds,
            ..Row::default()
        }
    }

    pub fn note(&mut self, s: impl Into<String>) {
        self.notes.push(s.into());
    }

    /// The notes as one `; `-separated string (the CSV's `notes` column).
    pub fn notes_text(&self) -> String {
        self.notes.join("; ")
    }

    /// The replay's regime, when something was replayed.
    pub fn regime(&self) -> Option<Regime> {
        self.cycles.map(Regime::of)
    }

    /// The FN columns by measure name, in table order.
    pub fn fn_columns(&self) -> [(&'static str, Option<f64>); 7] {
        [
            ("renewal", self.fn_renewal_upper),
            ("markov-lower", self.fn_markov_lower),
            ("markov-swr", self.fn_markov_swr),
            ("markov-uniform", self.fn_markov_uniform),
            ("markov-biuniform", self.fn_markov_biuniform),
            ("drop-pins", self.fn_drop_pins),
            ("markov-disabling", self.fn_markov_disabling),
        ]
    }

    /// A short label of the variant besides memory, k and sigma.
    pub fn variant(&self) -> String {
        let mut v = format!("{}-phase", self.phases);
        if self.hashing != "colliding" {
            v.push_str(", distinct");
        }
        if !self.retaining {
            v.push_str(", non-retaining");
        }
        if self.phases == 2 && !self.copy_over {
            v.push_str(", no copy-over");
        }
        if self.phases == 2 && self.independent_halves {
            v.push_str(", independent halves");
        }
        v
    }
}
