//! Per-cycle measurements: distributions (hdrhistogram) and batch means over cycles for
//! confidence intervals, both in memory that does not grow with the trace.

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::stats::{ratio_interval, Interval};

/// Sums over one cycle (or one batch of cycles).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct CycleSums {
    pub cycles: u64,
    pub arrivals: u64,
    /// Arrivals not recorded in the current window (new or non-repeat): the arrivals the
    /// FP paper's Markov chain steps on.
    pub first: u64,
    /// Arrivals that set at least one bit.
    pub bit_setting: u64,
    /// Messages that became recorded in this cycle.
    pub distinct: u64,
    pub false_positives: u64,
    pub false_negatives: u64,
    pub lucky: u64,
}

impl CycleSums {
    fn add(&mut self, o: &CycleSums) {
        self.cycles += o.cycles;
        self.arrivals += o.arrivals;
        self.first += o.first;
        self.bit_setting += o.bit_setting;
        self.distinct += o.distinct;
        self.false_positives += o.false_positives;
        self.false_negatives += o.false_negatives;
        self.lucky += o.lucky;
    }
}

/// Summary of a per-cycle distribution.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Distribution {
    pub cycles: u64,
    pub mean: f64,
    pub min: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
}

fn summarise(h: &Histogram<u64>) -> Distribution {
    if h.is_empty() {
        return Distribution::default();
    }
    Distribution {
        cycles: h.len(),
        mean: h.mean(),
        min: h.min(),
        p50: h.value_at_quantile(0.5),
        p90: h.value_at_quantile(0.9),
        p99: h.value_at_quantile(0.99),
        max: h.max(),
    }
}

/// Batch means with a fixed number of batches: cycles are grouped into batches of
/// `size` cycles; when 2 * TARGET batches exist, neighbours merge and the batch size
/// doubles. Memory is O(TARGET) however long the trace.
#[derive(Clone, Debug)]
struct BatchMeans {
    size: u64,
    current: CycleSums,
    batches: Vec<CycleSums>,
}

const TARGET_BATCHES: usize = 32;

impl BatchMeans {
    fn new() -> Self {
        BatchMeans {
            size: 1,
            current: CycleSums::default(),
            batches: Vec::with_capacity(2 * TARGET_BATCHES),
        }
    }

    fn push(&mut self, c: &CycleSums) {
        self.current.add(c);
        if self.current.cycles == self.size {
            self.batches.push(std::mem::take(&mut self.current));
            if self.batches.len() == 2 * TARGET_BATCHES {
                let merged: Vec<CycleSums> = self
                    .batches
                    .chunks(2)
                    .map(|p| {
                        let mut s = p[0];
                        s.add(&p[1]);
                        s
                    })
                    .collect();
                self.batches = merged;
                self.size *= 2;
            }
        }
    }
}

/// Everything recorded about complete cycles.
#[derive(Clone, Debug)]
pub struct CycleStats {
    arrivals: Histogram<u64>,
    first: Histogram<u64>,
    bit_setting: Histogram<u64>,
    distinct: Histogram<u64>,
    batches: BatchMeans,
    totals: CycleSums,
}

/// Per-cycle distributions, as reported.
#[derive(Clone, Debug, Serialize)]
pub struct PerCycle {
    /// Complete cycles measured (cycles that started and ended after the warm-up).
    pub complete_cycles: u64,
    pub arrivals: Distribution,
    pub first_in_cycle: Distribution,
    pub bit_setting: Distribution,
    pub distinct: Distribution,
}

/// Confidence intervals from batch means over complete cycles.
#[derive(Clone, Debug, Serialize)]
pub struct Confidence {
    pub level: f64,
    pub batches: u64,
    pub cycles_per_batch: u64,
    pub fp_rate: Interval,
    pub fn_rate: Interval,
    pub fp_rate_count_instance: Interval,
    /// Mean bit-setting arrivals per cycle (to compare with the FP paper's E[N_0]).
    pub bit_setting_per_cycle: Interval,
    /// Mean first-in-cycle arrivals (new or non-repeat) per cycle.
    pub first_per_cycle: Interval,
    pub arrivals_per_cycle: Interval,
}

fn histogram() -> Histogram<u64> {
    // 3 significant digits, auto-resizing: a few tens of kilobytes.
    Histogram::new(3).expect("3 significant figures is a valid histogram precision")
}

impl Default for CycleStats {
    fn default() -> Self {
        CycleStats {
            arrivals: histogram(),
            first: histogram(),
            bit_setting: histogram(),
            distinct: histogram(),
            batches: BatchMeans::new(),
            totals: CycleSums::default(),
        }
    }
}

impl CycleStats {
    pub fn record(&mut self, c: &CycleSums) {
        for (h, v) in [
            (&mut self.arrivals, c.arrivals),
            (&mut self.first, c.first),
            (&mut self.bit_setting, c.bit_setting),
            (&mut self.distinct, c.distinct),
        ] {
            // `record` grows the auto-resizing histogram; it can only fail for values
            // near u64::MAX, which are then clamped rather than lost.
            if h.record(v).is_err() {
                h.saturating_record(v);
            }
        }
        let mut one = *c;
        one.cycles = 1;
        self.batches.push(&one);
        self.totals.add(&one);
    }

    pub fn per_cycle(&self) -> PerCycle {
        PerCycle {
            complete_cycles: self.totals.cycles,
            arrivals: summarise(&self.arrivals),
            first_in_cycle: summarise(&self.first),
            bit_setting: summarise(&self.bit_setting),
            distinct: summarise(&self.distinct),
        }
    }

    /// Intervals at `level` from the batches (the last, partial batch included: the
    /// ratio estimator weighs batches by their size); None with fewer than 2 batches.
    pub fn confidence(&self, level: f64) -> Option<Confidence> {
        let mut b = self.batches.batches.clone();
        if self.batches.current.cycles > 0 {
            b.push(self.batches.current);
        }
        let ci = |f: &dyn Fn(&CycleSums) -> (f64, f64)| {
            let pairs: Vec<(f64, f64)> = b.iter().map(f).collect();
            ratio_interval(&pairs, level)
        };
        Some(Confidence {
            level,
            batches: b.len() as u64,
            cycles_per_batch: self.batches.size,
            fp_rate: ci(&|s| (s.false_positives as f64, s.arrivals as f64))?.rate(),
            fn_rate: ci(&|s| (s.false_negatives as f64, s.arrivals as f64))?.rate(),
            fp_rate_count_instance: ci(&|s| {
                ((s.false_positives + s.lucky) as f64, s.first as f64)
            })?
            .rate(),
            bit_setting_per_cycle: ci(&|s| (s.bit_setting as f64, s.cycles as f64))?,
            first_per_cycle: ci(&|s| (s.first as f64, s.cycles as f64))?,
            arrivals_per_cycle: ci(&|s| (s.arrivals as f64, s.cycles as f64))?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distributions_and_batches_agree() {
        let mut s = CycleStats::default();
        for i in 0..1000u64 {
            let c = CycleSums {
                cycles: 1,
                arrivals: 100_000 + i,
                first: 50_000,
                bit_setting: 40_000 + (i % 7),
                distinct: 45_000,
                false_positives: i % 3,
                false_negatives: 10 + i % 5,
                lucky: 0,
            };
            s.record(&c);
        }
        let p = s.per_cycle();
        assert_eq!(p.complete_cycles, 1000);
        assert!(
            (p.arrivals.mean - 100_499.5).abs() < 100.0,
            "{:?}",
            p.arrivals
        );
        assert!(
            p.arrivals.max >= 101_000 && p.arrivals.min <= 100_010,
            "{:?}",
            p.arrivals
        );
        let ci = s.confidence(0.99).unwrap();
        assert!((ci.arrivals_per_cycle.estimate - 100_499.5).abs() < 1e-6);
        assert!(ci.batches >= 31 && ci.batches < 64);
        assert!(ci.fn_rate.contains(12.0 / 100_499.5));
    }
}
