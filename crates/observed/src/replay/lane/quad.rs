//! The four filters of a shared table ([`super::super::Replays`]) replayed together,
//! arrival by arrival: one pass over a located block, one load and one store of the
//! slot's record word for the four, the four records classified side by side in that
//! word's 16-bit lanes (SWAR), the counts kept in 16-bit lanes of a few registers.
//!
//! Why: with the per-filter kernel ([`super::kernel`]) each filter went through the block
//! on its own, about 146 instructions per arrival and filter, of which setting the k
//! bits is about a third; the rest (the record's load, classification and store, the counts,
//! the trigger, the loop) was paid four times (docs/history/PERFORMANCE-log.md, "the four
//! filters in SIMD lanes").
//!
//! Only the arrivals of a block that no filter can recycle in run here (each filter's
//! [`RecyclingFilter::headroom`] covers what they can add to its trigger's level), up
//! to the end of the warm-up if it falls in the block; [`Quad::run`] says how many, and
//! the rest of the block (a few blocks per cycle and filter, or most of each block
//! when a filter recycles every few arrivals) goes through the per-filter kernel, filter
//! by filter. So a recycle, with its retained record and per-cycle positions, never
//! happens here, and the results are those of the per-filter kernel bit for bit
//! (tests/it/replay_shared.rs, `replay::replicas::tests`). The loop is scalar: no
//! level-dependent arithmetic, only the block positions use AVX2 where present.
//!
//! [`RecyclingFilter::headroom`]: rbf_data::filter::RecyclingFilter::headroom

use super::kernel::CycleCut;
use super::Lane;
use crate::replay::truth::{SharedSlot, SHARED_FILTERS};
use crate::replay::{Tally, CACHED_FILTER_BYTES};
use rbf_data::filter::{OnePhase, PositionBlock, POSITION_BLOCK};
use rbf_foundations::simd::with_avx2;

/// A 1 in each 16-bit lane.
const ONES: u64 = 0x0001_0001_0001_0001;
/// The top bit of each 16-bit lane (a record's flag).
const TOPS: u64 = 0x8000_8000_8000_8000;
/// The lowest 15 bits of each lane.
const LOWS: u64 = !TOPS;

/// The four filters' positions for a block of arrivals, in one allocation (the loop
/// addresses the four with one base register).
struct Blocks([PositionBlock; SHARED_FILTERS]);

/// The four filters' cycle constants ([`CycleCut`]) in 16-bit lanes, filter f's in
/// bits 16f to 16f + 15.
#[derive(Clone, Copy)]
struct Cuts {
    /// A record at or above this is a repeat: `repeat_above + 1` (at most
    /// `current`, so below 2^15: the lane's subtraction never borrows).
    repeat_from: u64,
    /// The record of an arrival recorded in the current cycle.
    current: u64,
}

/// A block's counts for the four filters, one 16-bit lane each (a block has at most
/// [`POSITION_BLOCK`] arrivals and an arrival sets at most 8 bits per filter, so a lane
/// holds at most 2048). Each field counts the arrivals that were ...
#[derive(Clone, Copy, Default)]
struct Sums {
    /// ... the key's first (shared by the four: a scalar).
    fresh: u64,
    /// Bits newly set (not arrivals).
    newly: u64,
    /// ... found (set no bit).
    found: u64,
    /// ... the key's first and found.
    fresh_found: u64,
    /// ... repeats (truth Repeat).
    repeat: u64,
    /// ... repeats and found.
    repeat_found: u64,
    /// ... repeats of a message whose stretch's first arrival was misclassified.
    repeat_flagged: u64,
    /// ... not yet recorded in the current cycle.
    newly_recorded: u64,
    /// ... recorded in the current cycle of all four (probes left out; a scalar).
    all_now: u64,
}

impl Sums {
    /// Filter `f`'s counts of a block of `n` arrivals as [`Tally`]'s.
    fn tally(&self, f: usize, n: u64) -> Tally {
        let lane = |w: u64| (w >> (16 * f)) & 0xffff;
        let (found, fresh_found) = (lane(self.found), lane(self.fresh_found));
        let (repeat, repeat_found) = (lane(self.repeat), lane(self.repeat_found));
        // Indexed by truth * 2 + found: New 0, NonRepeat 1, Repeat 2.
        let non_repeat_found = found - fresh_found - repeat_found;
        let class = [
            self.fresh - fresh_found,
            fresh_found,
            n - self.fresh - repeat - non_repeat_found,
            non_repeat_found,
            repeat - repeat_found,
            repeat_found,
        ];
        Tally {
            class,
            bit_setting: n - found,
            distinct: lane(self.newly_recorded),
            repeats_of_misclassified: lane(self.repeat_flagged),
        }
    }
}

/// The quad kernel's scratch (the four filters' block positions) and count.
pub(in super::super) struct Quad {
    blocks: Box<Blocks>,
    /// Arrivals replayed here so far (for tests and benchmarks).
    arrivals: u64,
    /// Of those, the arrivals whose probes were left out (for tests and benchmarks).
    left_out: u64,
}

impl Quad {
    /// A kernel for `lanes` if they can take it: four filters that take the per-filter
    /// kernel ([`Lane::shared_kernel`]), with the same k, array size and trigger kind,
    /// whose recycles zero their whole array (so that no list of touched words is kept:
    /// [`rbf_data::filter::RecyclingFilter::clears_whole`]), and whose arrays are in the
    /// caches: the quad loop does not prefetch, and filters beyond the caches are
    /// bound by their misses, which the per-filter kernel's prefetch overlaps
    /// (docs/history/PERFORMANCE-log.md, "the big trace").
    pub(in super::super) fn for_lanes(lanes: &[Lane]) -> Option<Quad> {
        let first = lanes.first()?;
        let like_first = |l: &Lane| {
            l.shared_kernel()
                && l.filter.array_bytes() <= CACHED_FILTER_BYTES
                && l.filter.clears_whole()
                && l.filter.k() == first.filter.k()
                && l.filter.array_bytes() == first.filter.array_bytes()
                && l.filter.sigma_bounded() == first.filter.sigma_bounded()
        };
        let fits = cfg!(target_endian = "little")
            && lanes.len() == SHARED_FILTERS
            && lanes.iter().all(like_first);
        fits.then(|| Quad {
            blocks: Box::new(Blocks(std::array::from_fn(|_| *PositionBlock::new()))),
            arrivals: 0,
            left_out: 0,
        })
    }

    /// Replays the first arrivals of a located block (`keys`, the first being arrival
    /// `seen`, filter f's records in `slots` relative to `bases[f]`) through the four
    /// `lanes` together, as [`Lane::run_shared`] would one by one: as many as no
    /// filter can recycle in, up to the end of the warm-up if it falls in the block.
    /// Returns how many (0 when none can; the caller replays the rest filter by
    /// filter).
    pub(in super::super) fn run(
        &mut self,
        lanes: &mut [Lane],
        keys: &[u64],
        slots: &[SharedSlot],
        bases: &[u64],
        seen: u64,
    ) -> usize {
        let Some(first) = lanes.first() else {
            return 0;
        };
        let warmup = first.options.warmup;
        let mut n = keys.len().min(slots.len()).min(POSITION_BLOCK) as u64;
        if seen < warmup {
            // All warm-up or all measured: the counts are kept whole or not at all.
            n = n.min(warmup - seen);
        }
        // What an arrival can add to a trigger's level: k bits, or one bit-setting
        // arrival. A filter whose level stays at or below its limit does not recycle.
        let rise = if first.filter.sigma_bounded() {
            first.filter.k() as u64
        } else {
            1
        };
        for lane in lanes.iter() {
            n = n.min(lane.filter.headroom() / rise);
        }
        let n = n as usize;
        if n == 0 {
            return 0;
        }
        let (keys, slots) = (&keys[..n], &slots[..n]);
        let done = match first.filter.k() {
            1 => self.run_k::<1>(lanes, keys, slots, bases, seen),
            2 => self.run_k::<2>(lanes, keys, slots, bases, seen),
            3 => self.run_k::<3>(lanes, keys, slots, bases, seen),
            4 => self.run_k::<4>(lanes, keys, slots, bases, seen),
            5 => self.run_k::<5>(lanes, keys, slots, bases, seen),
            6 => self.run_k::<6>(lanes, keys, slots, bases, seen),
            7 => self.run_k::<7>(lanes, keys, slots, bases, seen),
            _ => self.run_k::<8>(lanes, keys, slots, bases, seen),
        };
        if !done {
            return 0;
        }
        self.arrivals += n as u64;
        n
    }

    /// Arrivals replayed here so far.
    pub(in super::super) fn arrivals(&self) -> u64 {
        self.arrivals
    }

    /// Arrivals replayed here whose probes were left out.
    pub(in super::super) fn left_out(&self) -> u64 {
        self.left_out
    }

    /// [`Quad::run`] for k = K, for arrivals no filter can recycle in, all warm-up or
    /// all measured; false (nothing done) if a filter keeps a list of touched words or
    /// the arrays' sizes differ after all.
    fn run_k<const K: usize>(
        &mut self,
        lanes: &mut [Lane],
        keys: &[u64],
        slots: &[SharedSlot],
        bases: &[u64],
        seen: u64,
    ) -> bool {
        let [a, b, c, d] = lanes else {
            return false;
        };
        let mut cuts = Cuts {
            repeat_from: 0,
            current: 0,
        };
        for (f, (lane, block)) in [&*a, &*b, &*c, &*d]
            .into_iter()
            .zip(&mut self.blocks.0)
            .enumerate()
        {
            let hasher = *lane.filter.hasher(0);
            with_avx2(lane.avx2, || hasher.block_positions::<K>(keys, block));
            let cut = CycleCut::new(lane.filter.recycles(), bases[f], lane.window, false);
            cuts.repeat_from |= u64::from(cut.repeat_above + 1) << (16 * f);
            cuts.current |= u64::from(cut.current) << (16 * f);
        }
        let blocks = &*self.blocks;
        let sums = a.filter.with_one_phase(|fa| {
            b.filter.with_one_phase(|fb| {
                c.filter.with_one_phase(|fc| {
                    d.filter.with_one_phase(|fd| {
                        let words = [
                            fa.bits().unlisted_words(),
                            fb.bits().unlisted_words(),
                            fc.bits().unlisted_words(),
                            fd.bits().unlisted_words(),
                        ];
                        let [Some(w0), Some(w1), Some(w2), Some(w3)] = words else {
                            return None;
                        };
                        let mask = w0.1;
                        if [w1.1, w2.1, w3.1].iter().any(|&m| m != mask) {
                            return None;
                        }
                        let words = [w0.0, w1.0, w2.0, w3.0];
                        // SAFETY: the words are those of the four filters' arrays, lent
                        // out by with_one_phase for this call, written at `w & mask`
                        // only (RawBits::unlisted_words); the slots were taken after the
                        // block's keys were located and the table has not grown since
                        // (Group::run_block), and nothing else accesses them meanwhile.
                        let sums = unsafe { arrivals::<K>(blocks, words, mask, slots, cuts) };
                        let n = keys.len() as u64;
                        settle(fa, &sums, 0, n);
                        settle(fb, &sums, 1, n);
                        settle(fc, &sums, 2, n);
                        settle(fd, &sums, 3, n);
                        Some(sums)
                    })
                })
            })
        });
        let Some(sums) = sums else {
            return false;
        };
        self.left_out += sums.all_now;
        // A block is all warm-up or all measured (Quad::run).
        if seen >= a.options.warmup {
            for (f, lane) in [a, b, c, d].into_iter().enumerate() {
                let t = sums.tally(f, keys.len() as u64);
                let u = &mut lane.tally;
                for (x, y) in u.class.iter_mut().zip(t.class) {
                    *x += y;
                }
                u.bit_setting += t.bit_setting;
                u.distinct += t.distinct;
                u.repeats_of_misclassified += t.repeats_of_misclassified;
            }
        }
        true
    }
}

/// Adds filter `f`'s bits newly set and bit-setting arrivals of a block of `n`
/// arrivals to its counts.
fn settle(phase: &mut OnePhase<'_>, sums: &Sums, f: usize, n: u64) {
    phase.bits().add_set((sums.newly >> (16 * f)) & 0xffff);
    phase.end_stretch(sums.tally(f, n).bit_setting);
}

/// The block's arrivals through the four filters: for each, its k bits set in each
/// filter's array (the words at `words[f]`, indices masked by `mask`), then the four
/// records classified and rewritten as one word.
///
/// # Safety
/// `words[f]` may be read and written at any index `& mask` for the whole call, and
/// the slots' records ([`SharedSlot::records_word`]) likewise; nothing else accesses
/// either meanwhile.
#[inline(always)]
unsafe fn arrivals<const K: usize>(
    blocks: &Blocks,
    words: [*mut u64; SHARED_FILTERS],
    mask: usize,
    slots: &[SharedSlot],
    cuts: Cuts,
) -> Sums {
    // At most a block: the compiler then knows the columns are within the rows.
    let slots = &slots[..slots.len().min(POSITION_BLOCK)];
    let mut s = Sums::default();
    for (col, slot) in slots.iter().enumerate() {
        let at = slot.records_word();
        let r = *at;
        let rel = r & LOWS;
        // Bits newly set by this arrival, filter f's in lane f.
        let mut newly = 0u64;
        // A message recorded in the current cycle of all four filters set its k bits
        // in each since their last recycle (every arrival inserts, a retained one
        // into the cleared array, and only a recycle clears or changes positions):
        // its probes would find every bit set and change nothing, so they are left
        // out ([`CycleCut::recorded_now`], for the four at once).
        let now = rel == cuts.current;
        s.all_now += u64::from(now);
        if !now {
            for (f, (&w, block)) in words.iter().zip(&blocks.0).enumerate() {
                for row in &block.draws[..K] {
                    let p = row[col];
                    let i = (p >> 6) as usize & mask;
                    let bit = 1u64 << (p & 63);
                    let word = *w.add(i);
                    *w.add(i) = word | bit;
                    newly += u64::from(word & bit == 0) << (16 * f);
                }
            }
        }
        // 1 in the lanes of the filters that set a bit (a lane holds at most 8).
        let set = ((newly | TOPS) - ONES) >> 15 & ONES;
        let found = set ^ ONES;
        let flagged = r >> 15 & ONES;
        // rel >= repeat_from, lane by lane (both below 2^15).
        let repeat = ((rel | TOPS) - cuts.repeat_from) >> 15 & ONES;
        // As the per-filter kernel: the first arrival of a stretch sets the flag, a
        // repeat keeps it.
        let flag = found ^ (repeat & (found ^ flagged));
        *at = cuts.current | flag << 15;
        // rel != current, lane by lane (the difference below 2^15).
        let changed = ((rel ^ cuts.current) + LOWS) >> 15 & ONES;
        let fresh = u64::from(slot.fresh);
        s.fresh += fresh;
        s.newly += newly;
        s.found += found;
        s.fresh_found += found & fresh.wrapping_neg();
        s.repeat += repeat;
        s.repeat_found += repeat & found;
        s.repeat_flagged += repeat & flagged;
        s.newly_recorded += changed;
    }
    s
}
