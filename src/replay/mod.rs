//! Replay with exact ground truth: a message stream runs through a recycling Bloom
//! filter while an exact table (key -> cycle last recorded) decides what each arrival
//! truly is, so every false positive and false negative is counted, not estimated.

mod cycles;
pub(crate) mod index;
mod replicas;
mod truth;

pub use cycles::{
    batch_length, confidence, rebatch, Confidence, CycleStats, CycleSums, Distribution, PerCycle,
};
pub use index::KeyIndex;
pub use replicas::{replay_seeds, replica_seed, Replays, DEFAULT_HASH_SEEDS, MAX_HASH_SEEDS};
pub use truth::{GroundTruth, Truth};

use serde::Serialize;

use crate::error::Result;
use crate::filter::{FilterConfig, Outcome, PositionBuf, RecyclingFilter, MAX_HASHES};
use crate::message::{for_each_key_batch, Message};

const PREFETCH_DISTANCE: usize = 16;
/// Arrivals ahead whose bit positions are computed (one-phase filters).
const POSITIONS_AHEAD: usize = 8;

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

/// A replay in progress.
pub struct Replay {
    config: FilterConfig,
    filter: RecyclingFilter,
    truth: GroundTruth,
    options: ReplayOptions,
    window: u64,
    retaining: bool,
    seen: u64,
    /// Counts of completed (post-warm-up) cycles; the current cycle is in `tally`.
    counts: Counts,
    tally: Tally,
    /// The current cycle started after the warm-up, so it will be a complete cycle.
    cycle_complete: bool,
    first_recycle: Option<u64>,
    stats: CycleStats,
    /// The one-phase loop's ring of precomputed positions, kept between calls so that
    /// a batch does not start by zeroing 4 KB.
    ring: Option<Box<PositionRing>>,
}

type PositionRing = [PositionBuf; POSITIONS_AHEAD];

impl Replay {
    pub fn new(config: &FilterConfig, options: ReplayOptions) -> Result<Self> {
        let filter = RecyclingFilter::new(config)?;
        Ok(Replay {
            config: config.clone(),
            window: filter.record_window(),
            filter,
            truth: GroundTruth::new(),
            options,
            retaining: config.retaining,
            seen: 0,
            counts: Counts::default(),
            tally: Tally::default(),
            cycle_complete: options.warmup == 0,
            first_recycle: None,
            stats: CycleStats::default(),
            ring: None,
        })
    }

    /// Replays every message of a stream, in batches so that ground-truth lookups can be
    /// prefetched ahead of use.
    pub fn run<I: IntoIterator<Item = Message>>(&mut self, stream: I) {
        for_each_key_batch(stream, |keys| self.run_keys(keys));
    }

    /// Replays a slice of keys. Lookups of the key PREFETCH_DISTANCE arrivals ahead are
    /// started before each arrival is processed, hiding memory latency.
    pub fn run_keys(&mut self, keys: &[u64]) {
        if self.filter.phases() == 1 {
            return self.run_keys_one_phase(keys);
        }
        for &k in keys.iter().take(PREFETCH_DISTANCE) {
            self.truth.prefetch(k);
        }
        for (i, &k) in keys.iter().enumerate() {
            if let Some(&ahead) = keys.get(i + PREFETCH_DISTANCE) {
                self.truth.prefetch(ahead);
            }
            self.push(k);
        }
    }

    /// [`Replay::run_keys`] for one-phase filters, which computes each key's bit
    /// positions [`POSITIONS_AHEAD`] arrivals early into a ring: that work does not
    /// wait for the ground-truth load of the current arrival, and out-of-order
    /// execution does not reach that far ahead by itself. Common k get their own copy
    /// of the loop, with the position loops unrolled.
    ///
    /// The positions' filter words are not prefetched: a 2^20-bit filter sits in L2,
    /// whose latency out-of-order execution hides, and on the current host the
    /// prefetches cost 5 % (they compete for line-fill buffers with the ground-truth
    /// lookups, which do go to memory; docs/PERFORMANCE.md).
    fn run_keys_one_phase(&mut self, keys: &[u64]) {
        match self.filter.k() {
            1 => self.run_keys_one_phase_k::<1>(keys),
            2 => self.run_keys_one_phase_k::<2>(keys),
            3 => self.run_keys_one_phase_k::<3>(keys),
            4 => self.run_keys_one_phase_k::<4>(keys),
            5 => self.run_keys_one_phase_k::<5>(keys),
            6 => self.run_keys_one_phase_k::<6>(keys),
            7 => self.run_keys_one_phase_k::<7>(keys),
            8 => self.run_keys_one_phase_k::<8>(keys),
            _ => self.run_keys_one_phase_k::<0>(keys),
        }
    }

    /// The loop of [`Replay::run_keys_one_phase`] for k = K (K = 0: any k).
    #[inline(always)]
    fn run_keys_one_phase_k<const K: usize>(&mut self, keys: &[u64]) {
        let hasher = *self.filter.hasher(0);
        let k = if K == 0 { hasher.k() } else { K };
        debug_assert_eq!(k, hasher.k());
        let mut ring = self
            .ring
            .take()
            .unwrap_or_else(|| Box::new([[0; MAX_HASHES as usize]; POSITIONS_AHEAD]));
        for (&key, buf) in keys.iter().zip(ring.iter_mut()) {
            hasher.positions_k::<K>(key, buf);
        }
        for &key in keys.iter().take(PREFETCH_DISTANCE) {
            self.truth.prefetch(key);
        }
        for (i, &key) in keys.iter().enumerate() {
            if let Some(&ahead) = keys.get(i + PREFETCH_DISTANCE) {
                self.truth.prefetch(ahead);
            }
            let buf = &mut ring[i % POSITIONS_AHEAD];
            let positions = &buf[..k];
            self.push_with(key, |f| f.process_positions(key, positions));
            if let Some(&ahead) = keys.get(i + POSITIONS_AHEAD) {
                hasher.positions_k::<K>(ahead, buf);
            }
        }
        self.ring = Some(ring);
    }

    /// Replays one arrival.
    #[inline(always)]
    pub fn push(&mut self, key: u64) {
        self.push_with(key, |f| f.process(key));
    }

    /// Replays one arrival whose filter step is `process`.
    #[inline(always)]
    fn push_with(&mut self, key: u64, process: impl FnOnce(&mut RecyclingFilter) -> Outcome) {
        let cycle = self.filter.recycles();
        let mut slot = self.truth.lookup(key, cycle, self.window);
        let truth = slot.truth;
        let o = process(&mut self.filter);
        let first = truth != Truth::Repeat;
        let was_flagged = slot.flagged();
        // Became recorded in this cycle (for the per-cycle distinct count).
        let newly_recorded = o.inserted && slot.recorded_cycle() != Some(cycle);
        if o.inserted {
            let at = if o.recycled && self.retaining {
                cycle + 1
            } else {
                cycle
            };
            slot.record(at, if first { o.found } else { was_flagged });
        } else if first {
            slot.set_flag(o.found);
        }
        if self.seen >= self.options.warmup {
            let t = &mut self.tally;
            t.class[truth as usize * 2 + usize::from(o.found)] += 1;
            t.bit_setting += u64::from(o.new_bits > 0);
            t.distinct += u64::from(newly_recorded);
            t.repeats_of_misclassified += u64::from(!first && was_flagged);
        }
        self.seen += 1;
        if o.recycled {
            self.end_cycle();
        }
    }

    #[cold]
    fn end_cycle(&mut self) {
        let counting = self.seen > self.options.warmup;
        if counting {
            self.first_recycle.get_or_insert(self.filter.recycles() - 1);
        }
        if self.cycle_complete {
            self.stats
                .record(&self.tally.sums(), self.seen - self.options.warmup);
        }
        self.tally.add_to(&mut self.counts);
        self.tally = Tally::default();
        // A retained message is recorded in the new cycle from its start.
        if self.retaining && counting {
            self.tally.distinct = 1;
        }
        self.cycle_complete = counting;
    }

    /// Arrivals replayed so far, warm-up included.
    pub fn seen(&self) -> u64 {
        self.seen
    }

    /// Measured arrivals so far (after the warm-up).
    pub fn measured(&self) -> u64 {
        self.seen.saturating_sub(self.options.warmup)
    }

    /// Statistics of the complete cycles so far.
    pub fn cycle_stats(&self) -> &CycleStats {
        &self.stats
    }

    pub fn filter(&self) -> &RecyclingFilter {
        &self.filter
    }

    /// Counts so far (the current cycle included).
    pub fn counts(&self) -> Counts {
        let mut c = self.counts;
        self.tally.add_to(&mut c);
        c
    }

    /// Bytes held by the ground-truth table.
    pub fn truth_bytes(&self) -> usize {
        self.truth.allocated_bytes()
    }

    /// Bytes held by the filter's bit arrays and their clear lists.
    pub fn filter_bytes(&self) -> usize {
        self.filter.allocated_bytes()
    }

    pub fn report(&self) -> ReplayReport {
        let c = self.counts();
        let first = c.new + c.non_repeat;
        let misclassified_first = c.false_positives + c.lucky;
        ReplayReport {
            filter: self.config.clone(),
            warmup: self.options.warmup,
            counts: c,
            fp_rate: ratio(c.false_positives, c.arrivals),
            fn_rate: ratio(c.false_negatives, c.arrivals),
            fp_rate_count_instance: ratio(misclassified_first, first),
            fp_rate_count_first: ratio(misclassified_first, c.arrivals),
            fp_rate_count_each: ratio(misclassified_first + c.repeats_of_misclassified, c.arrivals),
            fp_rate_per_new: ratio(c.false_positives, c.new),
            cycles: self.first_recycle.map_or(0, |f| self.filter.recycles() - f),
            distinct_keys: self.truth.distinct() as u64,
            per_cycle: self.stats.per_cycle(),
            hash_seeds: 1,
            confidence: confidence(&[&self.stats], self.measured(), self.options.confidence),
        }
    }
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
