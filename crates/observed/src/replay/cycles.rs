//! Per-cycle measurements: distributions (hdrhistogram) and batch means over cycles for
//! confidence intervals, both in memory that does not grow with the trace.

use hdrhistogram::Histogram;
use serde::Serialize;

use rbf_foundations::stats::{replicated_ratio_interval, Interval};

/// Sums over one cycle (or one batch of cycles).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
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
    pub fn add(&mut self, o: &CycleSums) {
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

/// Complete cycles summed by time batch: the batch of a cycle is the one its last
/// arrival falls in, batches being consecutive runs of `len` measured arrivals. The
/// batches are aligned in time, not in cycles, so that filters replaying the same
/// stream (one per hash seed, [`super::replicas`]) have the same batches, which is what
/// lets their intervals separate what the stream does from what the hash positions do
/// ([`rbf_foundations::stats::replicated_ratio_interval`]). `len` starts at [`FIRST_BATCH`] and
/// doubles (neighbours merging) whenever a cycle ends beyond [`MAX_BATCHES`] batches,
/// so memory is O(MAX_BATCHES) however long the trace.
#[derive(Clone, Debug)]
struct TimeBatches {
    len: u64,
    batches: Vec<CycleSums>,
}

/// Measured arrivals per batch at first; always a power of two times this.
pub const FIRST_BATCH: u64 = 1 << 10;
/// Batches kept at most (and at least half as many once the trace is long enough).
pub const MAX_BATCHES: u64 = 64;

impl TimeBatches {
    fn new() -> Self {
        TimeBatches {
            len: FIRST_BATCH,
            batches: Vec::new(),
        }
    }

    /// A cycle whose last arrival is measured arrival `end` (1-based).
    fn push(&mut self, c: &CycleSums, end: u64) {
        let end = end.max(1);
        while (end - 1) / self.len >= MAX_BATCHES {
            self.batches = merge_pairs(&self.batches);
            self.len *= 2;
        }
        let b = ((end - 1) / self.len) as usize;
        if self.batches.len() <= b {
            self.batches.resize(b + 1, CycleSums::default());
        }
        self.batches[b].add(c);
    }

    /// The batches at length `len` (a power-of-two multiple of `self.len`), `count` of
    /// them (the trailing ones possibly empty).
    fn at(&self, len: u64, count: usize) -> Vec<CycleSums> {
        let mut b = rebatch(&self.batches, self.len, len);
        b.resize(count.max(b.len()), CycleSums::default());
        b
    }
}

/// The batch length of [`confidence`]: the smallest power-of-two multiple of `own` (the
/// longest any replay reached) that gives at most [`MAX_BATCHES`] batches over
/// `measured` arrivals and is at least `mean_cycle` arrivals long.
pub fn batch_length(own: u64, measured: u64, mean_cycle: u64) -> u64 {
    let mut len = own.max(1);
    while len.saturating_mul(MAX_BATCHES) < measured || len < mean_cycle {
        len *= 2;
    }
    len
}

/// Time batches of length `from` merged into batches of length `to` (both powers of
/// two times [`FIRST_BATCH`], `to >= from`).
pub fn rebatch(batches: &[CycleSums], from: u64, to: u64) -> Vec<CycleSums> {
    let mut b = batches.to_vec();
    let mut l = from;
    while l < to {
        b = merge_pairs(&b);
        l *= 2;
    }
    b
}

fn merge_pairs(b: &[CycleSums]) -> Vec<CycleSums> {
    b.chunks(2)
        .map(|p| {
            let mut s = p[0];
            if let Some(q) = p.get(1) {
                s.add(q);
            }
            s
        })
        .collect()
}

/// Everything recorded about complete cycles.
#[derive(Clone, Debug)]
pub struct CycleStats {
    arrivals: Histogram<u64>,
    first: Histogram<u64>,
    bit_setting: Histogram<u64>,
    distinct: Histogram<u64>,
    batches: TimeBatches,
    totals: CycleSums,
    /// Where the first complete cycle ended (measured arrival, 1-based) when it began on
    /// an empty filter: a fill cycle, which has no false negatives and few false
    /// positives by construction, so it cannot stand for the steady state's spread.
    fill_end: Option<u64>,
}

/// Time batches holding complete cycles (besides a fill cycle) that each filter needs
/// before an interval is computed: with fewer, the spread between batches is that of
/// one cycle against empty batches or against the fill cycle, and says nothing about
/// the steady state (a one-cycle replay printed "FN 0 [0, 0]" next to 600 false
/// negatives).
pub const MIN_INTERVAL_BATCHES: usize = 2;

/// What every output prints where an interval would be but the replay has too few
/// cycles for one ([`confidence`]).
pub const TOO_FEW_CYCLES: &str = "too few cycles";

/// What [`TOO_FEW_CYCLES`] means, for the line under a table.
pub const TOO_FEW_CYCLES_WHY: &str = "too few cycles: an interval needs complete cycles (a first cycle from an empty filter aside) ending in at least two time batches of every filter; a longer trace, a warm-up or a smaller filter gives more, and until then the value is the rate over every measured arrival and no bound is judged";

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

/// Confidence intervals over complete cycles, by batch means over time batches of one
/// or more replays of the stream (one per hash seed); see [`confidence`].
#[derive(Clone, Debug, Serialize)]
pub struct Confidence {
    pub level: f64,
    /// Time batches, and their length in measured arrivals.
    pub batches: u64,
    pub batch_arrivals: u64,
    /// Replays (filters hashed with different seeds) behind the intervals: with two or
    /// more, the intervals cover the hash positions' randomness too.
    pub hash_seeds: u64,
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
            batches: TimeBatches::new(),
            totals: CycleSums::default(),
            fill_end: None,
        }
    }
}

impl CycleStats {
    /// A complete cycle whose last arrival is measured arrival `end` (1-based).
    pub fn record(&mut self, c: &CycleSums, end: u64) {
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
        self.batches.push(&one, end);
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

    /// [`CycleStats::record`] for the first cycle of a filter that started empty (a
    /// replay without warm-up): counted like any other, but not as evidence of spread.
    pub fn record_fill(&mut self, c: &CycleSums, end: u64) {
        if self.totals.cycles == 0 {
            self.fill_end = Some(end.max(1));
        }
        self.record(c, end);
    }

    /// Time batches of length `len` (a power-of-two multiple of the own length) that
    /// hold a complete cycle other than the fill cycle.
    fn steady_batches(&self, len: u64) -> usize {
        let fill_batch = self.fill_end.map(|e| ((e - 1) / len) as usize);
        self.batches
            .at(len, 0)
            .iter()
            .enumerate()
            .filter(|(i, b)| b.cycles > u64::from(fill_batch == Some(*i)))
            .count()
    }

    /// Sums over the complete cycles.
    pub fn totals(&self) -> CycleSums {
        self.totals
    }

    /// The complete cycles summed by time batch: the batch length in measured arrivals
    /// and the batches (see [`rebatch`] to bring several replays to one length).
    pub fn time_batches(&self) -> (u64, &[CycleSums]) {
        (self.batches.len, &self.batches.batches)
    }
}

/// Confidence intervals over the complete cycles of one or more replays of the same
/// stream (one per hash seed), `measured` arrivals long, at `level`.
///
/// The batch length is the smallest that gives at most [`MAX_BATCHES`] batches and is
/// at least a mean cycle long, so a batch holds a cycle or more (fewer, longer batches
/// when cycles are long). Every estimate is the ratio of sums over the complete cycles
/// of all replays: the point and its interval measure the same thing. None ("too few
/// cycles", [`TOO_FEW_CYCLES`]) unless every filter has complete cycles, besides a fill
/// cycle, in at least [`MIN_INTERVAL_BATCHES`] batches: this is the one place that
/// decides whether a replay has an interval, for every output. Counts per cycle are
/// never negative, and neither are their intervals' ends.
pub fn confidence(stats: &[&CycleStats], measured: u64, level: f64) -> Option<Confidence> {
    let cycles: u64 = stats.iter().map(|s| s.totals.cycles).sum();
    let arrivals: u64 = stats.iter().map(|s| s.totals.arrivals).sum();
    if cycles == 0 || measured == 0 {
        return None;
    }
    let own = stats.iter().map(|s| s.batches.len).max()?;
    let len = batch_length(own, measured, arrivals.div_ceil(cycles));
    let count = measured.div_ceil(len) as usize;
    if count < MIN_INTERVAL_BATCHES
        || stats
            .iter()
            .any(|s| s.steady_batches(len) < MIN_INTERVAL_BATCHES)
    {
        return None;
    }
    let tables: Vec<Vec<CycleSums>> = stats.iter().map(|s| s.batches.at(len, count)).collect();
    let ci = |f: &dyn Fn(&CycleSums) -> (f64, f64)| {
        let table: Vec<Vec<(f64, f64)>> = tables
            .iter()
            .map(|row| row.iter().map(f).collect())
            .collect();
        replicated_ratio_interval(&table, level)
    };
    Some(Confidence {
        level,
        batches: count as u64,
        batch_arrivals: len,
        hash_seeds: stats.len() as u64,
        fp_rate: ci(&|s| (s.false_positives as f64, s.arrivals as f64))?.rate(),
        fn_rate: ci(&|s| (s.false_negatives as f64, s.arrivals as f64))?.rate(),
        fp_rate_count_instance: ci(&|s| ((s.false_positives + s.lucky) as f64, s.first as f64))?
            .rate(),
        bit_setting_per_cycle: ci(&|s| (s.bit_setting as f64, s.cycles as f64))?.count(),
        first_per_cycle: ci(&|s| (s.first as f64, s.cycles as f64))?.count(),
        arrivals_per_cycle: ci(&|s| (s.arrivals as f64, s.cycles as f64))?.count(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distributions_and_batches_agree() {
        let mut s = CycleStats::default();
        let mut end = 0;
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
            end += c.arrivals;
            s.record(&c, end);
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
        let ci = confidence(&[&s], end, 0.99).unwrap();
        assert!((ci.arrivals_per_cycle.estimate - 100_499.5).abs() < 1e-6);
        assert!(ci.batches >= 32 && ci.batches <= 64, "{ci:?}");
        assert!(ci.fn_rate.contains(12.0 / 100_499.5));
    }

    fn cycle(arrivals: u64, false_negatives: u64) -> CycleSums {
        CycleSums {
            cycles: 1,
            arrivals,
            first: arrivals / 2,
            bit_setting: arrivals / 3,
            distinct: arrivals / 2,
            false_positives: 1,
            false_negatives,
            lucky: 0,
        }
    }

    #[test]
    fn an_interval_needs_cycles_beyond_the_fill_in_two_batches() {
        // The failing shape: a fill cycle without false negatives, then one more.
        let mut s = CycleStats::default();
        s.record_fill(&cycle(10_000, 0), 10_000);
        s.record(&cycle(10_000, 600), 20_000);
        assert!(confidence(&[&s], 21_000, 0.99).is_none());
        // Without the fill mark the same two cycles would make an interval: the
        // rule is what removes it.
        let mut plain = CycleStats::default();
        plain.record(&cycle(10_000, 0), 10_000);
        plain.record(&cycle(10_000, 600), 20_000);
        assert!(confidence(&[&plain], 21_000, 0.99).is_some());
        // Two more cycles in other batches: an interval, every end >= 0.
        s.record(&cycle(10_000, 500), 30_000);
        s.record(&cycle(10_000, 700), 40_000);
        let ci = confidence(&[&s], 40_000, 0.99).expect("enough cycles");
        for i in [
            ci.fn_rate,
            ci.arrivals_per_cycle,
            ci.first_per_cycle,
            ci.bit_setting_per_cycle,
        ] {
            assert!(i.low >= 0.0, "{i:?}");
        }
        // One filter of several short of cycles: no interval for any.
        let mut short = CycleStats::default();
        short.record_fill(&cycle(10_000, 0), 10_000);
        assert!(confidence(&[&s, &short], 40_000, 0.99).is_none());
    }
}
