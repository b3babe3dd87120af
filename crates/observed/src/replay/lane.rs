//! One filter's replay: its bit arrays, counts and per-cycle statistics, and the loops
//! that run a batch of arrivals through it. Where an arrival's ground-truth record
//! lives is the [`Records`] the loop is given: a table of the filter's own
//! ([`super::Replay`]) or a slot shared with the other hash seeds' filters
//! ([`super::Replays`]), so both replay with the same code.

use super::cycles::{confidence, CycleStats};
use super::truth::{GroundTruth, Slot, Truth};
use super::{ratio, Counts, ReplayOptions, ReplayReport, Tally};
use super::{
    CACHED_FILTER_BYTES, POSITIONS_AHEAD, POSITIONS_AHEAD_DRAM, PREFETCH_DISTANCE,
    PREFETCH_DISTANCE_DRAM, RING,
};
use rbf_data::filter::{
    FilterConfig, Outcome, PositionBlock, PositionBuf, RecyclingFilter, MAX_HASHES, POSITION_BLOCK,
};
use rbf_foundations::error::Result;
use rbf_foundations::simd::{with_avx2, Simd};

mod kernel;
mod quad;

pub(super) use quad::Quad;

/// Where a filter's loop finds the ground-truth record of each arrival of a batch.
pub(super) trait Records {
    /// Asks for the record of arrival `i` (key `key`) ahead of use (a hint).
    fn prefetch(&self, i: usize, key: u64);
    /// Classifies arrival `i` (key `key`) for a filter in `cycle` whose records count
    /// for `window` cycles, and hands its record to `f`.
    fn visit<R>(
        &mut self,
        i: usize,
        key: u64,
        cycle: u64,
        window: u64,
        f: impl FnOnce(Slot<'_>) -> R,
    ) -> R;
}

/// A filter's own table, looked up by key.
pub(super) struct Own<'a>(pub &'a mut GroundTruth);

impl Records for Own<'_> {
    #[inline(always)]
    fn prefetch(&self, _: usize, key: u64) {
        self.0.prefetch(key);
    }

    #[inline(always)]
    fn visit<R>(
        &mut self,
        _: usize,
        key: u64,
        cycle: u64,
        window: u64,
        f: impl FnOnce(Slot<'_>) -> R,
    ) -> R {
        f(self.0.lookup(key, cycle, window))
    }
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

/// One filter replaying a stream (everything but the ground truth).
pub(super) struct Lane {
    config: FilterConfig,
    pub(super) filter: RecyclingFilter,
    options: ReplayOptions,
    pub(super) window: u64,
    retaining: bool,
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
    /// [`Lane::run_keys_blockwise`]'s positions, kept like `ring`.
    block: Option<Box<PositionBlock>>,
    /// The CPU has AVX2, for [`Lane::run_keys_blockwise`]'s positions.
    avx2: bool,
    /// Arrivals whose probes the shared kernel left out (`kernel::CycleCut::recorded_now`;
    /// for tests and benchmarks).
    pub(super) left_out: u64,
}

impl Lane {
    pub fn new(config: &FilterConfig, options: ReplayOptions) -> Result<Self> {
        let filter = RecyclingFilter::new(config)?;
        Ok(Lane {
            config: config.clone(),
            window: filter.record_window(),
            filter,
            options,
            retaining: config.retaining,
            counts: Counts::default(),
            tally: Tally::default(),
            cycle_complete: options.warmup == 0,
            first_recycle: None,
            stats: CycleStats::default(),
            ring: None,
            block: None,
            avx2: Simd::detect() >= Simd::Avx2,
            left_out: 0,
        })
    }

    /// Replays a batch of keys, the first being arrival `seen` (0-based, warm-up
    /// included), their records in `records`.
    pub fn run_keys<R: Records>(&mut self, keys: &[u64], records: &mut R, seen: u64) {
        if self.filter.phases() == 1 {
            return self.run_keys_one_phase(keys, records, seen);
        }
        if self.filter.array_bytes() > CACHED_FILTER_BYTES {
            return self.run_keys_two_phase_in_memory(keys, records, seen);
        }
        for (i, &k) in keys.iter().enumerate().take(PREFETCH_DISTANCE) {
            records.prefetch(i, k);
        }
        for (i, &k) in keys.iter().enumerate() {
            if let Some(&ahead) = keys.get(i + PREFETCH_DISTANCE) {
                records.prefetch(i + PREFETCH_DISTANCE, ahead);
            }
            self.push_with(records, i, k, seen + i as u64, |f| f.process(k));
        }
    }

    /// [`Lane::run_keys`] for two-phase filters larger than the caches: the words a
    /// key probes in both halves are prefetched [`POSITIONS_AHEAD_DRAM`] arrivals
    /// ahead (its positions computed twice, then and when it is processed: cheap next
    /// to 2k memory loads).
    fn run_keys_two_phase_in_memory<R: Records>(
        &mut self,
        keys: &[u64],
        records: &mut R,
        seen: u64,
    ) {
        for (i, &k) in keys.iter().enumerate().take(PREFETCH_DISTANCE_DRAM) {
            records.prefetch(i, k);
        }
        for &k in keys.iter().take(POSITIONS_AHEAD_DRAM) {
            self.filter.prefetch_key(k);
        }
        for (i, &k) in keys.iter().enumerate() {
            if let Some(&ahead) = keys.get(i + PREFETCH_DISTANCE_DRAM) {
                records.prefetch(i + PREFETCH_DISTANCE_DRAM, ahead);
            }
            if let Some(&ahead) = keys.get(i + POSITIONS_AHEAD_DRAM) {
                self.filter.prefetch_key(ahead);
            }
            self.push_with(records, i, k, seen + i as u64, |f| f.process(k));
        }
    }

    /// [`Lane::run_keys`] for one-phase filters, which computes each key's bit
    /// positions a few arrivals early into a ring: that work does not wait for the
    /// ground-truth load of the current arrival, and out-of-order execution does not
    /// reach that far ahead by itself. Common k get their own copy of the loop, with
    /// the position loops unrolled.
    ///
    /// Filters larger than [`CACHED_FILTER_BYTES`] also have the positions' words
    /// prefetched when the positions are computed, [`POSITIONS_AHEAD_DRAM`] arrivals
    /// ahead: their probes go to memory, like the ground-truth lookups, and without the
    /// prefetch every arrival waited for k of them (a 2^28-bit filter replayed at a
    /// third of the speed of a 2^20-bit one: docs/history/PERFORMANCE-log.md,
    /// "DRAM-resident filters"). Smaller filters sit in L2, whose latency out-of-order
    /// execution hides, and there the prefetches cost 5 % (they compete for line-fill
    /// buffers with the ground-truth lookups).
    fn run_keys_one_phase<R: Records>(&mut self, keys: &[u64], records: &mut R, seen: u64) {
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
        if !lead.words && self.filter.hasher(0).blockwise() {
            return match self.filter.k() {
                1 => self.run_keys_blockwise::<1, R>(keys, lead, records, seen),
                2 => self.run_keys_blockwise::<2, R>(keys, lead, records, seen),
                3 => self.run_keys_blockwise::<3, R>(keys, lead, records, seen),
                4 => self.run_keys_blockwise::<4, R>(keys, lead, records, seen),
                5 => self.run_keys_blockwise::<5, R>(keys, lead, records, seen),
                6 => self.run_keys_blockwise::<6, R>(keys, lead, records, seen),
                7 => self.run_keys_blockwise::<7, R>(keys, lead, records, seen),
                _ => self.run_keys_blockwise::<8, R>(keys, lead, records, seen),
            };
        }
        match self.filter.k() {
            1 => self.run_keys_one_phase_k::<1, R>(keys, lead, records, seen),
            2 => self.run_keys_one_phase_k::<2, R>(keys, lead, records, seen),
            3 => self.run_keys_one_phase_k::<3, R>(keys, lead, records, seen),
            4 => self.run_keys_one_phase_k::<4, R>(keys, lead, records, seen),
            5 => self.run_keys_one_phase_k::<5, R>(keys, lead, records, seen),
            6 => self.run_keys_one_phase_k::<6, R>(keys, lead, records, seen),
            7 => self.run_keys_one_phase_k::<7, R>(keys, lead, records, seen),
            8 => self.run_keys_one_phase_k::<8, R>(keys, lead, records, seen),
            _ => self.run_keys_one_phase_k::<0, R>(keys, lead, records, seen),
        }
    }

    /// [`Lane::run_keys_one_phase`] for a filter in the caches with positions drawn
    /// two per value ([`rbf_data::filter::PositionHasher::blockwise`]), k = K: the
    /// positions of [`POSITION_BLOCK`] arrivals at a time are computed first, across
    /// the arrivals in vector registers (hashing the positions one key at a time was
    /// the loop's largest part: docs/history/PERFORMANCE-log.md, "16-bit records,
    /// positions by the block"), then the arrivals replay with them. With per-cycle
    /// positions a recycle changes the hasher: the rest of the block's positions are
    /// then computed again (at most 255 keys, once per cycle).
    fn run_keys_blockwise<const K: usize, R: Records>(
        &mut self,
        keys: &[u64],
        lead: Lead,
        records: &mut R,
        seen: u64,
    ) {
        let per_cycle = !self.filter.positions_mode().is_fixed();
        let mut hasher = *self.filter.hasher(0);
        let mut block = self.block.take().unwrap_or_else(PositionBlock::new);
        for (i, &key) in keys.iter().enumerate().take(lead.truth) {
            records.prefetch(i, key);
        }
        for (c, chunk) in keys.chunks(POSITION_BLOCK).enumerate() {
            with_avx2(self.avx2, || hasher.block_positions::<K>(chunk, &mut block));
            // The block holds the positions of chunk[from..], arrival o's in column
            // o - from.
            let mut from = 0;
            let at = c * POSITION_BLOCK;
            for (o, &key) in chunk.iter().enumerate() {
                let i = at + o;
                if let Some(&next) = keys.get(i + lead.truth) {
                    records.prefetch(i + lead.truth, next);
                }
                let positions: [u64; K] =
                    std::array::from_fn(|d| u64::from(block.draws[d][o - from]));
                let recycles = self.filter.recycles();
                self.push_with(records, i, key, seen + i as u64, |f| {
                    f.process_positions(key, &positions)
                });
                if per_cycle && self.filter.recycles() != recycles {
                    // A new cycle, new positions: those of the rest of the chunk again.
                    hasher = *self.filter.hasher(0);
                    from = o + 1;
                    let rest = &chunk[from..];
                    with_avx2(self.avx2, || hasher.block_positions::<K>(rest, &mut block));
                }
            }
        }
        self.block = Some(block);
    }

    /// The loop of [`Lane::run_keys_one_phase`] for k = K (K = 0: any k). The
    /// positions of arrival j live in ring slot j mod [`RING`] from `lead.positions`
    /// arrivals before it until it is processed.
    ///
    /// With per-cycle positions a recycle changes the hasher: the positions computed
    /// ahead for the next cycle's first arrivals are then computed again.
    #[inline(always)]
    fn run_keys_one_phase_k<const K: usize, R: Records>(
        &mut self,
        keys: &[u64],
        lead: Lead,
        records: &mut R,
        seen: u64,
    ) {
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
        for (i, &key) in keys.iter().enumerate().take(lead.truth) {
            records.prefetch(i, key);
        }
        for (i, &key) in keys.iter().enumerate() {
            if let Some(&next) = keys.get(i + lead.truth) {
                records.prefetch(i + lead.truth, next);
            }
            let positions = &ring[slot(i)][..k];
            let recycles = self.filter.recycles();
            self.push_with(records, i, key, seen + i as u64, |f| {
                f.process_positions(key, positions)
            });
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

    /// Replays arrival `i` of a batch (key `key`, arrival `seen` of the stream, 0-based)
    /// whose filter step is `process`.
    #[inline(always)]
    pub fn push_with<R: Records>(
        &mut self,
        records: &mut R,
        i: usize,
        key: u64,
        seen: u64,
        process: impl FnOnce(&mut RecyclingFilter) -> Outcome,
    ) {
        let cycle = self.filter.recycles();
        let (window, retaining) = (self.window, self.retaining);
        let filter = &mut self.filter;
        let (truth, o, first, was_flagged, newly_recorded) =
            records.visit(i, key, cycle, window, |mut slot| {
                let truth = slot.truth;
                let o = process(filter);
                let first = truth != Truth::Repeat;
                let was_flagged = slot.flagged();
                // Became recorded in this cycle (for the per-cycle distinct count).
                let newly_recorded = o.inserted && slot.recorded_cycle() != Some(cycle);
                if o.inserted {
                    let at = if o.recycled && retaining {
                        cycle + 1
                    } else {
                        cycle
                    };
                    slot.record(at, if first { o.found } else { was_flagged });
                } else if first {
                    slot.set_flag(o.found);
                }
                (truth, o, first, was_flagged, newly_recorded)
            });
        if seen >= self.options.warmup {
            let t = &mut self.tally;
            t.class[truth as usize * 2 + usize::from(o.found)] += 1;
            t.bit_setting += u64::from(o.new_bits > 0);
            t.distinct += u64::from(newly_recorded);
            t.repeats_of_misclassified += u64::from(!first && was_flagged);
        }
        if o.recycled {
            self.end_cycle(seen + 1);
        }
    }

    /// The cycle that ended with arrival `seen` (1-based).
    #[cold]
    fn end_cycle(&mut self, seen: u64) {
        let counting = seen > self.options.warmup;
        if counting {
            self.first_recycle.get_or_insert(self.filter.recycles() - 1);
        }
        if self.cycle_complete {
            let end = seen - self.options.warmup;
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

    /// Computes block positions with AVX2 or without (tests comparing the levels; `on`
    /// only where the CPU has AVX2).
    #[cfg(test)]
    pub(super) fn set_avx2(&mut self, on: bool) {
        self.avx2 = on && Simd::detect() >= Simd::Avx2;
    }

    pub fn options(&self) -> &ReplayOptions {
        &self.options
    }

    /// Statistics of the complete cycles so far.
    pub fn cycle_stats(&self) -> &CycleStats {
        &self.stats
    }

    /// Counts so far (the current cycle included).
    pub fn counts(&self) -> Counts {
        let mut c = self.counts;
        self.tally.add_to(&mut c);
        c
    }

    /// The report after `seen` arrivals (warm-up included) of `distinct` keys.
    pub fn report(&self, seen: u64, distinct: u64) -> ReplayReport {
        let c = self.counts();
        let first = c.new + c.non_repeat;
        let misclassified_first = c.false_positives + c.lucky;
        let measured = seen.saturating_sub(self.options.warmup);
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
            distinct_keys: distinct,
            per_cycle: self.stats.per_cycle(),
            hash_seeds: 1,
            confidence: confidence(&[&self.stats], measured, self.options.confidence),
        }
    }
}
