//! What was observed, in the form a bound is judged against: a point estimate and its
//! interval, read from the replay report in one place, so that the number printed and
//! the interval judged always describe the same quantity (whatever the replay's own
//! estimators become), whether there was one replay or one per seed.

use serde::{Deserialize, Serialize};

use super::verdict::Regime;
use crate::replay::{Confidence, ReplayReport};
use crate::stats::{student_t_quantile, Interval};

/// Which observed rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rate {
    /// False negatives per arrival: what the FN bounds describe.
    Fn,
    /// The FP paper's count-instance rate: what the FP model predicts.
    FpCountInstance,
    /// The FN paper's FP: false positives per arrival.
    Fp,
}

impl Rate {
    fn point(self, r: &ReplayReport) -> f64 {
        match self {
            Rate::Fn => r.fn_rate,
            Rate::FpCountInstance => r.fp_rate_count_instance,
            Rate::Fp => r.fp_rate,
        }
    }

    fn batch_interval(self, c: &Confidence) -> Interval {
        match self {
            Rate::Fn => c.fn_rate,
            Rate::FpCountInstance => c.fp_rate_count_instance,
            Rate::Fp => c.fp_rate,
        }
    }
}

/// An observed rate: point estimate, interval (clamped to [0, 1]) and the replays'
/// regime.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Observed {
    /// The point estimate (the mean over seeds when there are several replays).
    pub rate: f64,
    /// Its interval: a Student t interval over seeds, or with one replay the batch
    /// means over its cycles; None when there are neither (one replay with fewer than
    /// two batches of cycles).
    pub interval: Option<Interval>,
    /// Recycles per replay (mean over seeds): whether the replay measured the steady
    /// state the models describe ([`Regime`]).
    pub cycles: f64,
}

impl Observed {
    /// `rate` over one or more replays of the same filter and source (one per seed),
    /// with its interval at `level` (used only for the interval over seeds; a single
    /// replay's interval has the replay's own level). None without a replay.
    pub fn of(reports: &[ReplayReport], level: f64, rate: Rate) -> Option<Observed> {
        if let [one] = reports {
            return Some(Observed::of_one(one, rate));
        }
        let first = reports.first()?;
        let n = reports.len() as f64;
        let mean = reports.iter().map(|r| rate.point(r)).sum::<f64>() / n;
        let interval = if reports.len() >= 2 {
            let var = reports
                .iter()
                .map(|r| (rate.point(r) - mean).powi(2))
                .sum::<f64>()
                / (n - 1.0);
            let h = student_t_quantile(0.5 + level / 2.0, n - 1.0) * (var / n).sqrt();
            Some(Interval {
                estimate: mean,
                low: mean - h,
                high: mean + h,
                level,
                samples: reports.len() as u64,
            })
        } else {
            first.confidence.as_ref().map(|c| rate.batch_interval(c))
        };
        Some(Observed {
            rate: mean,
            interval: interval.map(Interval::rate),
            cycles: reports.iter().map(|r| r.cycles as f64).sum::<f64>() / n,
        })
    }

    /// `rate` of one replay, with the batch-means interval over its cycles.
    pub fn of_one(r: &ReplayReport, rate: Rate) -> Observed {
        Observed {
            rate: rate.point(r),
            interval: r.confidence.as_ref().map(|c| rate.batch_interval(c).rate()),
            cycles: r.cycles as f64,
        }
    }

    /// The interval's ends, when there is one.
    pub fn bounds(&self) -> Option<(f64, f64)> {
        self.interval.map(|i| (i.low, i.high))
    }

    pub fn regime(&self) -> Regime {
        Regime::of(self.cycles)
    }
}
