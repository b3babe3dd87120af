//! One row of the results table: a grid point, what was observed there and what
//! each model predicts. Values not computed are `None` (empty in CSV, null in JSON),
//! never zero.

use serde::{Deserialize, Serialize};

use super::grid::{Point, SigmaRule};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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
    /// The renewal bound is proven for this filter and workload (FN paper §5).
    pub renewal_guaranteed: Option<bool>,
    /// The renewal bound is at or above the observed FN interval's low end.
    pub renewal_holds: Option<bool>,
    /// The conservative renewal bound is at or above the observed FN interval's low end.
    pub conservative_holds: Option<bool>,
    /// The Markov lower bound is at or below the observed FN interval's high end.
    pub lower_holds: Option<bool>,
    /// Caveats and errors for this point, `; `-separated.
    pub notes: String,
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

    pub fn note(&mut self, s: impl AsRef<str>) {
        if !self.notes.is_empty() {
            self.notes.push_str("; ");
        }
        self.notes.push_str(s.as_ref());
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
