//! Replay with exact ground truth: a message stream runs through a recycling Bloom
//! filter while an exact table (key -> cycle last recorded) decides what each arrival
//! truly is, so every false positive and false negative is counted, not estimated.

pub mod command;
mod cycles;
mod lane;
pub mod memory;
mod replicas;
pub mod sizing;
mod truth;

pub use cycles::{
    batch_length, confidence, rebatch, Confidence, CycleStats, CycleSums, Distribution, PerCycle,
    MIN_INTERVAL_BATCHES, TOO_FEW_CYCLES, TOO_FEW_CYCLES_WHY,
};
pub use replicas::{replay_seeds, replica_seed, Replays, DEFAULT_HASH_SEEDS, MAX_HASH_SEEDS};
pub use truth::{GroundTruth, Truth};

use serde::Serialize;

use lane::{Lane, Own};
use rbf_data::filter::{FilterConfig, RecyclingFilter};
use rbf_data::message::{for_each_key_batch, Message};
use rbf_foundations::error::Result;

/// Arrivals ahead whose ground-truth slot is prefetched.
const PREFETCH_DISTANCE: usize = 16;
/// Arrivals ahead whose bit positions are computed (one-phase filters).
const POSITIONS_AHEAD: usize = 8;
/// The same two distances for filters whose words are prefetched too (larger than
/// [`CACHED_FILTER_BYTES`]): each arrival then waits on k + 1 memory loads, which
/// need a longer lead to overlap.
const POSITIONS_AHEAD_DRAM: usize = 16;
const PREFETCH_DISTANCE_DRAM: usize = 24;
/// Positions kept in the ring: the larger of the two leads.
const RING: usize = 16;
/// Bit arrays larger than this (bytes of words) are treated as living in memory, not
/// in a core's cache, and their words are prefetched.
const CACHED_FILTER_BYTES: usize = 1 << 20;

/// Replay settings besides the filter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReplayOptions {
    /// The first `warmup` arrivals update the filter and the ground truth but are not
    /// counted (the models describe a filter in steady state).
    pub warmup: u64,
    /// Confidence level of the batch-means intervals.
    pub confidence: f64,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            warmup: 0,
            confidence: 0.99,
        }
    }
}

/// Counts over the measured (post-warm-up) arrivals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub arrivals: u64,
    pub new: u64,
    pub non_repeat: u64,
    pub repeat: u64,
    /// New messages classified as repeat.
    pub false_positives: u64,
    /// Non-repeats classified as new.
    pub false_negatives: u64,
    /// Non-repeats classified as repeat (FN paper: they "got lucky").
    pub lucky: u64,
    /// Arrivals that set at least one bit.
    pub bit_setting: u64,
    /// Repeat arrivals whose message's first arrival in its recorded stretch was
    /// classified as repeat (the extra terms of the FP paper's count-each measure).
    pub repeats_of_misclassified: u64,
    /// Repeats classified as new. A Bloom filter cannot do this while the message is
    /// recorded, so anything but 0 is a bug; it is counted, not assumed.
    pub repeat_classified_new: u64,
}

/// A finished (or in-progress) replay's results.
#[derive(Clone, Debug, Serialize)]
pub struct ReplayReport {
    pub filter: FilterConfig,
    pub warmup: u64,
    #[serde(flatten)]
    pub counts: Counts,
    /// FN paper's false-positive rate: false positives / arrivals.
    pub fp_rate: f64,
    /// False negatives / arrivals.
    pub fn_rate: f64,
    /// FP paper's count-instance rate: first-in-cycle arrivals (new or non-repeat)
    /// classified as repeat, over first-in-cycle arrivals.
    pub fp_rate_count_instance: f64,
    /// FP paper's count-first: first-in-cycle misclassifications over all arrivals.
    pub fp_rate_count_first: f64,
    /// FP paper's count-each: arrivals of messages whose first arrival in the cycle was
    /// misclassified, over all arrivals.
    pub fp_rate_count_each: f64,
    /// False positives over new arrivals.
    pub fp_rate_per_new: f64,
    /// Recycles during the measured arrivals.
    pub cycles: u64,
    /// Distinct keys seen, warm-up included.
    pub distinct_keys: u64,
    pub per_cycle: PerCycle,
    /// Filters (hash seeds) behind `confidence`; the counts above are the first's.
    pub hash_seeds: u64,
    /// Intervals over the complete cycles of every hash seed's filter, by batch means
    /// (absent with fewer than two batches). Their estimates are the steady-state rates
    /// to judge (`compare::Observed`).
    pub confidence: Option<Confidence>,
}

/// The keys of a trace source in batches of 8192, each handed to `each`; Ctrl-C (with
/// the interrupt handler installed) stops it between batches.
pub fn source_batches(
    source: &mut dyn rbf_data::ingest::MessageSource,
    mut each: impl FnMut(&[u64]) -> Result<()>,
) -> Result<()> {
    const BATCH: usize = 8192;
    let mut batch = Vec::with_capacity(BATCH);
    let mut keys = Vec::with_capacity(BATCH);
    loop {
        batch.clear();
        source.fill(&mut batch, BATCH);
        keys.clear();
        keys.extend(batch.iter().map(|m: &Message| m.key));
        each(&keys)?;
        rbf_foundations::progress::check_interrupt()?;
        if batch.len() < BATCH {
            return Ok(());
        }
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Counts of the current cycle, kept as small arrays so the per-arrival work is a few
/// increments; folded into [`Counts`] and the per-cycle statistics when the cycle ends.
#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    /// Indexed by `truth * 2 + found` (Truth: New 0, NonRepeat 1, Repeat 2).
    class: [u64; 6],
    bit_setting: u64,
    distinct: u64,
    repeats_of_misclassified: u64,
}

impl Tally {
    fn add_to(&self, c: &mut Counts) {
        let k = &self.class;
        c.arrivals += k.iter().sum::<u64>();
        c.new += k[0] + k[1];
        c.false_positives += k[1];
        c.non_repeat += k[2] + k[3];
        c.false_negatives += k[2];
        c.lucky += k[3];
        c.repeat += k[4] + k[5];
        c.repeat_classified_new += k[4];
        c.bit_setting += self.bit_setting;
        c.repeats_of_misclassified += self.repeats_of_misclassified;
    }

    fn sums(&self) -> CycleSums {
        let k = &self.class;
        CycleSums {
            cycles: 1,
            arrivals: k.iter().sum(),
            first: k[0] + k[1] + k[2] + k[3],
            bit_setting: self.bit_setting,
            distinct: self.distinct,
            false_positives: k[1],
            false_negatives: k[2],
            lucky: k[3],
        }
    }
}

/// A replay in progress: one filter and its own ground truth.
pub struct Replay {
    lane: Lane,
    truth: GroundTruth,
    seen: u64,
}

impl Replay {
    pub fn new(config: &FilterConfig, options: ReplayOptions) -> Result<Self> {
        Ok(Replay {
            lane: Lane::new(config, options)?,
            truth: GroundTruth::new(),
            seen: 0,
        })
    }

    /// Replays every message of a stream, in batches so that ground-truth lookups can be
    /// prefetched ahead of use.
    pub fn run<I: IntoIterator<Item = Message>>(&mut self, stream: I) {
        for_each_key_batch(stream, |keys| self.run_keys(keys));
    }

    /// Sizes the ground truth for `distinct` keys up front (while it is still empty):
    /// the table then never doubles, which saves the copies and the moment when the
    /// old and the new table are both in memory.
    pub fn expect_distinct(&mut self, distinct: u64) {
        if self.truth.distinct() == 0 {
            self.truth = GroundTruth::with_capacity(distinct);
        }
    }

    /// Replays every message of a trace source, taken in batches (one dynamic call per
    /// batch, where iterating would make one per message). Before the ground truth
    /// grows, the memory it needs is checked against what the machine has: a trace
    /// with more distinct keys than fit stops with an error, not in swap. Ctrl-C
    /// (with the interrupt handler installed) stops it between batches.
    pub fn run_source(&mut self, source: &mut dyn rbf_data::ingest::MessageSource) -> Result<()> {
        source_batches(source, |keys| {
            if let Some(bytes) = self.growth_bytes(keys.len()) {
                check_growth(self.distinct(), bytes)?;
            }
            self.run_keys(keys);
            Ok(())
        })
    }

    /// Replays a slice of keys. Lookups of the key a few arrivals ahead are started
    /// before each arrival is processed, hiding memory latency ([`Lane::run_keys`]).
    pub fn run_keys(&mut self, keys: &[u64]) {
        self.lane
            .run_keys(keys, &mut Own(&mut self.truth), self.seen);
        self.seen += keys.len() as u64;
    }

    /// Replays one arrival.
    #[inline(always)]
    pub fn push(&mut self, key: u64) {
        self.lane
            .push_with(&mut Own(&mut self.truth), 0, key, self.seen, |f| {
                f.process(key)
            });
        self.seen += 1;
    }

    /// Arrivals replayed so far, warm-up included.
    pub fn seen(&self) -> u64 {
        self.seen
    }

    /// Measured arrivals so far (after the warm-up).
    pub fn measured(&self) -> u64 {
        self.seen.saturating_sub(self.lane.options().warmup)
    }

    /// Statistics of the complete cycles so far.
    pub fn cycle_stats(&self) -> &CycleStats {
        self.lane.cycle_stats()
    }

    pub fn filter(&self) -> &RecyclingFilter {
        &self.lane.filter
    }

    /// Counts so far (the current cycle included).
    pub fn counts(&self) -> Counts {
        self.lane.counts()
    }

    /// Bytes held by the ground-truth table.
    pub fn truth_bytes(&self) -> usize {
        self.truth.allocated_bytes()
    }

    /// Bytes of the grown ground-truth table if `more` new keys arrived, or None
    /// when it would not grow.
    pub fn growth_bytes(&self, more: usize) -> Option<u64> {
        self.truth.growth_bytes(more)
    }

    /// Distinct keys seen so far.
    pub fn distinct(&self) -> usize {
        self.truth.distinct()
    }

    /// Bytes held by the filter's bit arrays and their clear lists.
    pub fn filter_bytes(&self) -> usize {
        self.lane.filter.allocated_bytes()
    }

    pub fn report(&self) -> ReplayReport {
        self.lane.report(self.seen, self.truth.distinct() as u64)
    }
}

/// `bytes` of ground truth growing past `distinct` keys, checked against the machine.
pub fn check_growth(distinct: usize, bytes: u64) -> Result<()> {
    rbf_foundations::resources::check_memory(
        &format!("the ground truth growing past {distinct} distinct keys"),
        bytes as f64,
    )
}

/// Replays a whole stream and reports.
pub fn replay<I: IntoIterator<Item = Message>>(
    config: &FilterConfig,
    options: ReplayOptions,
    stream: I,
) -> Result<ReplayReport> {
    let mut r = Replay::new(config, options)?;
    r.run(stream);
    Ok(r.report())
}
