//! What was observed, in the form a bound is judged against: a point estimate and its
//! interval, read from the replay report in one place, so that the number printed and
//! the interval judged always describe the same quantity (whatever the replay's own
//! estimators become), whether there was one replay or one per seed.

use serde::{Deserialize, Serialize};

use super::verdict::Regime;
use rbf_foundations::stats::{student_t_quantile, Interval};
use rbf_observed::replay::{Confidence, ReplayReport};

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
    /// The rate over every measured arrival of the first filter (partial cycles at both
    /// ends included): the point only when there is no interval.
    fn all_arrivals(self, r: &ReplayReport) -> f64 {
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

    /// The point judged: the estimate its interval is about, over the complete cycles
    /// of every hash seed's filter ([`rbf_observed::replay::Replays`]); without an interval,
    /// the rate over every measured arrival. (The all-arrivals rate can lie outside the
    /// interval when there are few cycles, so it is never printed next to one.)
    fn point(self, r: &ReplayReport) -> f64 {
        r.confidence
            .as_ref()
            .map_or(self.all_arrivals(r), |c| self.batch_interval(c).estimate)
    }
}

/// How the replays of several seeds relate, for their interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seeds {
    /// Each seed is a new trace (a synthetic source): the seeds' estimates are
    /// independent, and a Student t interval over them covers every source of
    /// randomness.
    Independent,
    /// Every seed replays the same trace file (new hash positions only): their errors
    /// share the arrivals and may be fully correlated, so averaging cannot be assumed
    /// to shrink them: the mean of their own half-widths around the mean point.
    SameTrace,
}

/// An observed rate: point estimate, interval (clamped to [0, 1]) and the replays'
/// regime.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Observed {
    /// The point estimate (the mean over seeds when there are several replays).
    pub rate: f64,
    /// Its interval: over seeds ([`Seeds`]), or with one replay the batch means over
    /// its complete cycles; None ("too few cycles") when a replay has too few cycles
    /// for one ([`rbf_observed::replay::confidence`]).
    pub interval: Option<Interval>,
    /// Recycles per replay (mean over seeds): whether the replay measured the steady
    /// state the models describe ([`Regime`]).
    pub cycles: f64,
}

impl Observed {
    /// `rate` over one or more replays of the same filter and source (one per seed),
    /// with its interval at `level` (used only for the interval over seeds; a single
    /// replay's interval has the replay's own level). Each replay's point and interval
    /// are over its hash seeds and time batches ([`Observed::of_one`]). None without a
    /// replay.
    pub fn of(reports: &[ReplayReport], level: f64, rate: Rate, seeds: Seeds) -> Option<Observed> {
        if let [one] = reports {
            return Some(Observed::of_one(one, rate));
        }
        reports.first()?;
        let n = reports.len() as f64;
        let points: Vec<f64> = reports.iter().map(|r| rate.point(r)).collect();
        let mean = points.iter().sum::<f64>() / n;
        // An interval over seeds whose replays have too few cycles each would measure
        // how the transient varies, not the steady state: no interval unless every
        // replay has its own ([`rbf_observed::replay::confidence`] decides that, once).
        let every_replay_has_one = reports.iter().all(|r| r.confidence.is_some());
        let half_width = match seeds {
            _ if !every_replay_has_one => None,
            Seeds::Independent => {
                let var = points.iter().map(|p| (p - mean).powi(2)).sum::<f64>() / (n - 1.0);
                Some(student_t_quantile(0.5 + level / 2.0, n - 1.0) * (var / n).sqrt())
            }
            Seeds::SameTrace => reports
                .iter()
                .map(|r| {
                    r.confidence
                        .as_ref()
                        .map(|c| rate.batch_interval(c).half_width())
                })
                .sum::<Option<f64>>()
                .map(|h| h / n),
        };
        Some(Observed {
            rate: mean,
            interval: half_width.map(|h| {
                Interval {
                    estimate: mean,
                    low: mean - h,
                    high: mean + h,
                    level,
                    samples: reports.len() as u64,
                }
                .rate()
            }),
            cycles: reports.iter().map(|r| r.cycles as f64).sum::<f64>() / n,
        })
    }

    /// `rate` of one replay, with the batch-means interval over its cycles (hash seeds
    /// x time batches) and the point that interval is about.
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
