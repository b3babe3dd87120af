//! Replay with exact ground truth: a message stream runs through a recycling Bloom
//! filter while an exact table (key -> cycle last recorded) decides what each arrival
//! truly is, so every false positive and false negative is counted, not estimated.

mod cycles;
pub(crate) mod index;
pub mod memory;
mod replicas;
mod truth;

pub use cycles::{
    batch_length, confidence, rebatch, Confidence, CycleStats, CycleSums, Distribution, PerCycle,
    MIN_INTERVAL_BATCHES, TOO_FEW_CYCLES, TOO_FEW_CYCLES_WHY,
};
pub use index::KeyIndex;
pub use replicas::{replay_seeds, replica_seed, Replays, DEFAULT_HASH_SEEDS, MAX_HASH_SEEDS};
pub use truth::{GroundTruth, Truth};

use serde::Serialize;

use crate::error::Result;
use crate::filter::{FilterConfig, Outcome, PositionBuf, RecyclingFilter, MAX_HASHES};
use crate::message::{for_each_key_batch, Message};

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
pub(crate) fn source_batches(
    source: &mut dyn crate::ingest::MessageSource,
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
        crate::progress::check_interrupt()?;
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

type PositionRing = [PositionBuf; RING];

/// How far ahead the one-phase loop works: positions computed (and, for filters in
/// memory, their words prefetched) `positions` arrivals ahead, ground-truth slots
/// prefetched `truth` ahead.
#[derive(Clone, Copy, Debug)]
struct Lead {
    positions: usize,
    truth: usize,
    words: bool,
}

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
    pub fn run_source(&mut self, source: &mut dyn crate::ingest::MessageSource) -> Result<()> {
        source_batches(source, |keys| {
            if let Some(bytes) = self.truth_growth_bytes(keys.len()) {
                self.check_growth(bytes)?;
            }
            self.run_keys(keys);
            Ok(())
        })
    }

    /// Bytes the ground truth would take if `more` new keys made it grow now (None when
    /// it would not grow).
    pub(crate) fn truth_growth_bytes(&self, more: usize) -> Option<u64> {
        self.truth.growth_bytes(more)
    }

    /// `bytes` of ground truth growing past the keys seen so far, checked against the
    /// machine.
    pub(crate) fn check_growth(&self, bytes: u64) -> Result<()> {
        crate::resources::check_memory(
            &format!(
                "the ground truth growing past {} distinct keys",
                self.truth.distinct()
            ),
            bytes as f64,
        )
    }

    /// Replays a slice of keys. Lookups of the key PREFETCH_DISTANCE arrivals ahead are
    /// started before each arrival is processed, hiding memory latency.
    pub fn run_keys(&mut self, keys: &[u64]) {
        if self.filter.phases() == 1 {
            return self.run_keys_one_phase(keys);
        }
        if self.filter.array_bytes() > CACHED_FILTER_BYTES {
            return self.run_keys_two_phase_in_memory(keys);
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

    /// [`Replay::run_keys`] for two-phase filters larger than the caches: the words a
    /// key probes in both halves are prefetched [`POSITIONS_AHEAD_DRAM`] arrivals
    /// ahead (its positions computed twice, then and when it is processed: cheap next
    /// to 2k memory loads).
    fn run_keys_two_phase_in_memory(&mut self, keys: &[u64]) {
        for &k in keys.iter().take(PREFETCH_DISTANCE_DRAM) {
            self.truth.prefetch(k);
        }
        for &k in keys.iter().take(POSITIONS_AHEAD_DRAM) {
            self.filter.prefetch_key(k);
        }
        for (i, &k) in keys.iter().enumerate() {
            if let Some(&ahead) = keys.get(i + PREFETCH_DISTANCE_DRAM) {
                self.truth.prefetch(ahead);
            }
            if let Some(&ahead) = keys.get(i + POSITIONS_AHEAD_DRAM) {
                self.filter.prefetch_key(ahead);
            }
            self.push(k);
        }
    }

    /// [`Replay::run_keys`] for one-phase filters, which computes each key's bit
    /// positions a few arrivals early into a ring: that work does not wait for the
    /// ground-truth load of the current arrival, and out-of-order execution does not
    /// reach that far ahead by itself. Common k get their own copy of the loop, with
    /// the position loops unrolled.
    ///
    /// Filters larger than [`CACHED_FILTER_BYTES`] also have the positions' words
    /// prefetched when the positions are computed, [`POSITIONS_AHEAD_DRAM`] arrivals
    /// ahead: their probes go to memory, like the ground-truth lookups, and without the
    /// prefetch every arrival waited for k of them (a 2^28-bit filter replayed at a
    /// third of the speed of a 2^20-bit one, docs/PERFORMANCE.md, issue 31). Smaller
    /// filters sit in L2, whose latency out-of-order execution hides, and there the
    /// prefetches cost 5 % (they compete for line-fill buffers with the ground-truth
    /// lookups).
    fn run_keys_one_phase(&mut self, keys: &[u64]) {
        let lead = if self.filter.array_bytes() > CACHED_FILTER_BYTES {
            Lead {
                positions: POSITIONS_AHEAD_DRAM,
                truth: PREFETCH_DISTANCE_DRAM,
                words: true,
            }
        } else {
            Lead {
                positions: POSITIONS_AHEAD,
                truth: PREFETCH_DISTANCE,
                words: false,
            }
        };
        match self.filter.k() {
            1 => self.run_keys_one_phase_k::<1>(keys, lead),
            2 => self.run_keys_one_phase_k::<2>(keys, lead),
            3 => self.run_keys_one_phase_k::<3>(keys, lead),
            4 => self.run_keys_one_phase_k::<4>(keys, lead),
            5 => self.run_keys_one_phase_k::<5>(keys, lead),
            6 => self.run_keys_one_phase_k::<6>(keys, lead),
            7 => self.run_keys_one_phase_k::<7>(keys, lead),
            8 => self.run_keys_one_phase_k::<8>(keys, lead),
            _ => self.run_keys_one_phase_k::<0>(keys, lead),
        }
    }

    /// The loop of [`Replay::run_keys_one_phase`] for k = K (K = 0: any k). The
    /// positions of arrival j live in ring slot j mod [`RING`] from `lead.positions`
    /// arrivals before it until it is processed.
    ///
    /// With per-cycle positions a recycle changes the hasher: the positions computed
    /// ahead for the next cycle's first arrivals are then computed again.
    #[inline(always)]
    fn run_keys_one_phase_k<const K: usize>(&mut self, keys: &[u64], lead: Lead) {
        debug_assert!(lead.positions <= RING && RING.is_power_of_two());
        let per_cycle = !self.filter.positions_mode().is_fixed();
        let mut hasher = *self.filter.hasher(0);
        let k = if K == 0 { hasher.k() } else { K };
        debug_assert_eq!(k, hasher.k());
        let slot = |j: usize| j & (RING - 1);
        let mut ring = self
            .ring
            .take()
            .unwrap_or_else(|| Box::new([[0; MAX_HASHES as usize]; RING]));
        for (j, &key) in keys.iter().enumerate().take(lead.positions) {
            let p = hasher.positions_k::<K>(key, &mut ring[slot(j)]);
            if lead.words {
                self.filter.prefetch_positions(p);
            }
        }
        for &key in keys.iter().take(lead.truth) {
            self.truth.prefetch(key);
        }
        for (i, &key) in keys.iter().enumerate() {
            if let Some(&next) = keys.get(i + lead.truth) {
                self.truth.prefetch(next);
            }
            let positions = &ring[slot(i)][..k];
            let recycles = self.filter.recycles();
            self.push_with(key, |f| f.process_positions(key, positions));
            if per_cycle && self.filter.recycles() != recycles {
                hasher = *self.filter.hasher(0);
                for (j, &next) in keys.iter().enumerate().take(i + lead.positions).skip(i + 1) {
                    hasher.positions_k::<K>(next, &mut ring[slot(j)]);
                }
            }
            let j = i + lead.positions;
            if let Some(&next) = keys.get(j) {
                let p = hasher.positions_k::<K>(next, &mut ring[slot(j)]);
                if lead.words {
                    self.filter.prefetch_positions(p);
                }
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
            let end = self.seen - self.options.warmup;
            if self.options.warmup == 0 {
                // Without warm-up the first complete cycle began on an empty filter.
                self.stats.record_fill(&self.tally.sums(), end);
            } else {
                self.stats.record(&self.tally.sums(), end);
            }
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
