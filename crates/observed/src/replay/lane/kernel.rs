//! The loop of a filter that shares its ground truth with other hash seeds' filters
//! ([`super::super::Replays`]), for one-phase filters with block positions (`rbf
//! replay`'s default): a kernel with few instructions per arrival.
//!
//! Why a loop of its own: with the key lookups shared, each filter's own work is what
//! four filters pay four times, and the general loop ([`Lane::push_with`] through
//! [`super::Records`]) took about 250 instructions per arrival and filter: the
//! record widened to 64 bits and back, the counts read and written through memory
//! per arrival, bounds checks, the filter's state reloaded after every store
//! (docs/history/PERFORMANCE-log.md, "the filter kernel"). Here a stretch of arrivals
//! runs with the filter's state and the cycle's constants in locals, the record
//! classified in its 16 bits without branches, and the counts packed in two registers,
//! added to the cycle's once per stretch. A stretch ends at the end of a block of
//! positions, at the end of the warm-up, or at a recycle. The results are those of the
//! general loop, bit for bit (tests/it/replay_shared.rs, `replay::replicas::tests`).

use super::Lane;
use crate::replay::truth::{SharedSlot, SHARED_FLAG, SHARED_REL_MAX};
use crate::replay::{Tally, CACHED_FILTER_BYTES, POSITIONS_AHEAD, POSITIONS_AHEAD_DRAM};
use rbf_data::filter::{OnePhase, PositionBlock, POSITION_BLOCK};
use rbf_foundations::simd::with_avx2;

/// What a filter's 16-bit records ([`crate::replay::truth::SharedTruth`]) mean in
/// its current cycle: [`crate::replay::truth::Slot::classify`] and
/// [`Lane::push_with`]'s record, relative to the filter's base.
#[derive(Clone, Copy, Debug)]
pub(super) struct CycleCut {
    /// A record (cycle last recorded + 1 - base) above this is in the window: a repeat.
    /// rec + window > cycle + 1 with rec = rel + base; saturated at 0, which leaves
    /// "rel != 0".
    pub(super) repeat_above: u32,
    /// The record of an arrival recorded in the current cycle: cycle + 1 - base (at
    /// least 1: a base never passes the current cycle).
    pub(super) current: u32,
    /// A recycling arrival is retained: it is recorded in the next cycle.
    retained: bool,
}

impl CycleCut {
    /// Whether a record (relative, flag cleared) says the message was recorded in the
    /// current cycle. Such a message's probes would find every one of its k bits set
    /// and change nothing (no new bit, so no trigger, and its record and flag stay as
    /// they are), so the kernels leave them out: every arrival inserts its k
    /// positions ([`OnePhase::insert`]), a retained one into the cleared array
    /// ([`rbf_data::filter::RecyclingFilter::recycle_fired`]), and only a recycle clears
    /// bits or draws new positions. Exact, not an estimate: tests/it/replay_shared.rs
    /// compares with separate replays that probe every arrival.
    #[inline(always)]
    pub(super) fn recorded_now(self, rel: u32) -> bool {
        rel == self.current
    }

    pub(super) fn new(cycle: u64, base: u64, window: u64, retaining: bool) -> Self {
        // The group rebases before a block could take a record past SHARED_REL_MAX.
        debug_assert!(base <= cycle && cycle + 2 - base <= SHARED_REL_MAX);
        CycleCut {
            repeat_above: (cycle + 1).saturating_sub(base + window) as u32,
            current: (cycle + 1 - base) as u32,
            retained: retaining,
        }
    }
}

/// Bits per class count in [`Packed::class`] (6 classes): a stretch has at most
/// [`POSITION_BLOCK`] arrivals.
const CLASS_BITS: u32 = 10;
/// Bits per count in [`Packed::other`] (3 counts).
const OTHER_BITS: u32 = 21;
const _: () = assert!(POSITION_BLOCK < 1 << CLASS_BITS && 6 * CLASS_BITS <= 64);

/// A stretch's counts ([`Tally`]'s), packed so that an arrival adds to two registers:
/// `class` holds the six `truth * 2 + found` counts, [`CLASS_BITS`] each; `other` the
/// bit-setting arrivals, the newly recorded and the repeats of misclassified
/// messages, [`OTHER_BITS`] each.
#[derive(Clone, Copy, Debug, Default)]
struct Packed {
    class: u64,
    other: u64,
}

impl Packed {
    /// The arrivals not recorded in the current cycle before they came.
    fn newly_recorded(self) -> u64 {
        (self.other >> OTHER_BITS) & ((1 << OTHER_BITS) - 1)
    }

    fn add_to(self, t: &mut Tally) {
        let field = |word: u64, i: u32, bits: u32| (word >> (i * bits)) & ((1 << bits) - 1);
        for (i, c) in (0..).zip(&mut t.class) {
            *c += field(self.class, i, CLASS_BITS);
        }
        t.bit_setting += field(self.other, 0, OTHER_BITS);
        t.distinct += field(self.other, 1, OTHER_BITS);
        t.repeats_of_misclassified += field(self.other, 2, OTHER_BITS);
    }
}

/// Where a stretch ended: the next arrival's index in the chunk, and whether the last
/// one fired the trigger.
struct Stop {
    next: usize,
    fired: bool,
}

impl Lane {
    /// Whether [`Lane::run_shared`] applies to this filter: one phase, positions
    /// drawn in blocks (what [`Lane::run_keys_blockwise`] runs for filters in the
    /// caches).
    pub(in super::super) fn shared_kernel(&self) -> bool {
        self.filter.phases() == 1 && self.filter.hasher(0).blockwise()
    }

    /// Whether the filter's array fits in the caches ([`CACHED_FILTER_BYTES`]).
    fn in_caches(&self) -> bool {
        self.filter.array_bytes() <= CACHED_FILTER_BYTES
    }

    /// How many arrivals ahead the kernel prefetches the words an arrival probes, and
    /// whether the filter is beyond the caches. In the caches a short lead does (the
    /// other filters' arrays took L1 since this one last ran; L2 is near); beyond them
    /// every probe is a memory access, which needs a lead of its own latency, and a
    /// block's first arrivals get theirs before the loop. The lone filter's lead
    /// ([`POSITIONS_AHEAD_DRAM`]): 8, 32 and 64 measured alike or slower on a 2^28-bit
    /// filter (docs/history/PERFORMANCE-log.md, "the big trace").
    fn words_ahead(&self) -> (usize, bool) {
        if self.in_caches() {
            (POSITIONS_AHEAD, false)
        } else {
            (POSITIONS_AHEAD_DRAM, true)
        }
    }

    /// Replays a block of keys, the first being arrival `seen`, whose records are
    /// filter `filter`'s in `slots` (relative to `base`), as
    /// [`Lane::run_keys`] with [`super::Records`] over the same slots would. Only where
    /// [`Lane::shared_kernel`].
    pub(in super::super) fn run_shared(
        &mut self,
        keys: &[u64],
        slots: &[SharedSlot],
        filter: usize,
        base: u64,
        seen: u64,
    ) {
        debug_assert!(self.shared_kernel() && keys.len() == slots.len());
        let records = Records {
            slots,
            filter,
            base,
        };
        match self.filter.k() {
            1 => self.run_shared_k::<1>(keys, records, seen),
            2 => self.run_shared_k::<2>(keys, records, seen),
            3 => self.run_shared_k::<3>(keys, records, seen),
            4 => self.run_shared_k::<4>(keys, records, seen),
            5 => self.run_shared_k::<5>(keys, records, seen),
            6 => self.run_shared_k::<6>(keys, records, seen),
            7 => self.run_shared_k::<7>(keys, records, seen),
            _ => self.run_shared_k::<8>(keys, records, seen),
        }
    }

    /// [`Lane::run_shared`] for k = K: the positions of [`POSITION_BLOCK`] arrivals
    /// at a time, as [`Lane::run_keys_blockwise`], then the arrivals in stretches.
    fn run_shared_k<const K: usize>(&mut self, keys: &[u64], records: Records<'_>, seen: u64) {
        let per_cycle = !self.filter.positions_mode().is_fixed();
        let mut hasher = *self.filter.hasher(0);
        let mut block = self.block.take().unwrap_or_else(PositionBlock::new);
        let warmup = self.options.warmup;
        let (ahead, in_memory) = self.words_ahead();
        for (c, (chunk, slots)) in keys
            .chunks(POSITION_BLOCK)
            .zip(records.slots.chunks(POSITION_BLOCK))
            .enumerate()
        {
            with_avx2(self.avx2, || hasher.block_positions::<K>(chunk, &mut block));
            if in_memory {
                self.prefetch_columns::<K>(&block, chunk.len().min(ahead));
            }
            let at = seen + (c * POSITION_BLOCK) as u64;
            // The block holds the positions of chunk[from..], arrival o's in column
            // o - from.
            let mut from = 0;
            let mut o = 0;
            while o < chunk.len() {
                // A stretch is all warm-up or all measured: its counts are kept whole
                // or not at all.
                let first = at + o as u64;
                let end = if first < warmup {
                    (o as u64 + (warmup - first)).min(chunk.len() as u64) as usize
                } else {
                    chunk.len()
                };
                let cut = CycleCut::new(
                    self.filter.recycles(),
                    records.base,
                    self.window,
                    self.retaining,
                );
                let stretch = Stretch {
                    block: &block,
                    from,
                    slots,
                    filter: records.filter,
                    cut,
                    ahead,
                };
                let (stop, counts) = self.filter.with_one_phase(|f| {
                    if f.sigma_bounded() {
                        stretch.run::<K, true>(f, o, end)
                    } else {
                        stretch.run::<K, false>(f, o, end)
                    }
                });
                if first >= warmup {
                    counts.add_to(&mut self.tally);
                }
                // An arrival's probes were left out where its record was current.
                self.left_out += (stop.next - o) as u64 - counts.newly_recorded();
                o = stop.next;
                if stop.fired {
                    self.filter.recycle_fired(chunk[o - 1]);
                    self.end_cycle(at + o as u64);
                    if per_cycle {
                        // A new cycle, new positions: those of the rest of the chunk.
                        hasher = *self.filter.hasher(0);
                        from = o;
                        let rest = &chunk[from..];
                        with_avx2(self.avx2, || hasher.block_positions::<K>(rest, &mut block));
                        if in_memory {
                            self.prefetch_columns::<K>(&block, rest.len().min(ahead));
                        }
                    }
                }
            }
        }
        self.block = Some(block);
    }

    /// Asks for the words of a block's first `columns` arrivals, whose prefetch the
    /// loop (`ahead` arrivals ahead) cannot issue.
    fn prefetch_columns<const K: usize>(&self, block: &PositionBlock, columns: usize) {
        for row in &block.draws[..K] {
            for &p in &row[..columns] {
                self.filter.prefetch_position(p);
            }
        }
    }
}

/// A filter's records in a located block.
#[derive(Clone, Copy)]
struct Records<'a> {
    slots: &'a [SharedSlot],
    filter: usize,
    base: u64,
}

/// What a stretch of one chunk's arrivals needs besides the filter.
struct Stretch<'a> {
    /// Positions of the chunk's arrivals from `from` on.
    block: &'a PositionBlock,
    from: usize,
    /// The chunk's slots.
    slots: &'a [SharedSlot],
    filter: usize,
    cut: CycleCut,
    /// Arrivals ahead whose words are prefetched ([`Lane::words_ahead`]).
    ahead: usize,
}

impl Stretch<'_> {
    /// Replays arrivals `start..end` of the chunk, up to and including one that fires
    /// the trigger (`SIGMA`: the filter is sigma-bounded, [`OnePhase::insert`]).
    #[inline(always)]
    fn run<const K: usize, const SIGMA: bool>(
        &self,
        f: &mut OnePhase<'_>,
        start: usize,
        end: usize,
    ) -> (Stop, Packed) {
        let (stop, counts) = self.arrivals::<K, SIGMA>(f, start, end);
        f.end_stretch(counts.other & ((1 << OTHER_BITS) - 1));
        (stop, counts)
    }

    /// [`Stretch::run`] but for the filter's count of bit-setting insertions.
    #[inline(always)]
    fn arrivals<const K: usize, const SIGMA: bool>(
        &self,
        f: &mut OnePhase<'_>,
        start: usize,
        end: usize,
    ) -> (Stop, Packed) {
        let (cut, filter) = (self.cut, self.filter);
        let columns = self.slots.len() - self.from;
        // Every row's positions for the chunk, from column 0 = arrival `from`: the
        // indexing below is within `columns`, which the compiler sees.
        let rows: [&[u32]; K] = std::array::from_fn(|d| &self.block.draws[d][..columns]);
        let mut counts = Packed::default();
        for (o, slot) in (start..end).zip(&self.slots[start..end]) {
            let col = o - self.from;
            // Ask for the words of an arrival ahead ([`Lane::words_ahead`]; in the
            // caches, 4 filters: 5-10 % less CPU, docs/history/PERFORMANCE-log.md,
            // "16-bit records, positions by the block").
            let ahead = col + self.ahead;
            if ahead < columns {
                // Not for an arrival whose probes will be left out (recorded_now): beyond
                // the caches most probes of popular messages are. A record changed
                // before that arrival comes only changes the hint.
                // SAFETY: as for `record` below.
                let r = unsafe { *self.slots[o + self.ahead].record(filter) };
                if !cut.recorded_now(u32::from(r & !SHARED_FLAG)) {
                    for row in &rows {
                        f.prefetch(row[ahead]);
                    }
                }
            }
            let positions: [u32; K] = std::array::from_fn(|d| rows[d][col]);
            // SAFETY: the slots were taken after the block's keys were located, and the
            // table has not grown since (Group::run_block); filter < SHARED_FILTERS.
            let record = unsafe { slot.record(filter) };
            // SAFETY: as above; nothing else accesses the record meanwhile.
            let r = unsafe { *record };
            let rel = u32::from(r & !SHARED_FLAG);
            let flagged = u32::from(r >> 15);
            // Truth: 0 New, 1 NonRepeat, 2 Repeat (a fresh record is 0: never a repeat).
            let repeat = u32::from(rel > cut.repeat_above);
            let truth = u32::from(!slot.fresh) + repeat;
            let stretch_bit_setting = counts.other & ((1 << OTHER_BITS) - 1);
            // A message recorded in the current cycle finds its k bits set and sets none
            // (CycleCut::recorded_now): its probes are left out.
            let (new_bits, fired) = if cut.recorded_now(rel) {
                (0, false)
            } else {
                f.insert::<K, SIGMA>(positions, stretch_bit_setting)
            };
            let found = u32::from(new_bits == 0);
            // The first arrival of a stretch sets the flag, a repeat keeps it.
            let flag = found ^ (repeat & (found ^ flagged));
            // SAFETY: as above.
            unsafe { *record = (cut.current | flag << 15) as u16 };
            counts.class += 1 << ((2 * truth + found) * CLASS_BITS);
            counts.other += u64::from(new_bits > 0)
                | u64::from(rel != cut.current) << OTHER_BITS
                | u64::from(repeat & flagged) << (2 * OTHER_BITS);
            if fired {
                if cut.retained {
                    // Recorded in the next cycle, from its start.
                    // SAFETY: as above.
                    unsafe { *record += 1 };
                }
                let stop = Stop {
                    next: o + 1,
                    fired: true,
                };
                return (stop, counts);
            }
        }
        let stop = Stop {
            next: end,
            fired: false,
        };
        (stop, counts)
    }
}
