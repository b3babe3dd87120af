//! One row of the results table: a grid point, what was observed there and every
//! bound judged against it ([`crate::compare::Record`], one per [`Bound`] computed).
//! Values not computed are `None` or absent (empty in CSV, null in JSON), never zero.

use serde::{Deserialize, Serialize};

use super::grid::{Point, SigmaRule};
use crate::compare::{Bound, Record, Regime};

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
    /// The FN models ran on a workload fitted from a trace (their bounds then hold for
    /// the fitted model, not for the trace).
    pub fitted_workload: bool,
    /// Every bound computed at this point, judged against the observed FN, in
    /// [`Bound::ALL`] order (see [`crate::compare::Record`]).
    pub models: Vec<Record>,
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

    /// The judged record of `bound`, when it was computed here.
    pub fn model(&self, bound: Bound) -> Option<&Record> {
        self.models.iter().find(|r| r.bound == bound)
    }

    /// The value of `bound` (FN per arrival), when it was computed here.
    pub fn value(&self, bound: Bound) -> Option<f64> {
        self.model(bound).map(|r| r.value)
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
