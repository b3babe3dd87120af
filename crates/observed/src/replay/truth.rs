//! Exact ground truth: for every key ever seen, the cycle in which it was last recorded.

use rbf_foundations::slot_table::{SlotTable, ZERO_SLOT};

/// What an arrival truly is, whatever the filter says (FN paper §3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Truth {
    /// Never seen before.
    New = 0,
    /// Seen before, but not recorded in the current cycle (one phase) or in either half
    /// (two phases).
    NonRepeat = 1,
    /// Recorded in the current window.
    Repeat = 2,
}

/// Top bit of a record: the message's first arrival in its current recorded stretch
/// was classified as a repeat (for the FP paper's count-each measure).
const FLAG: u64 = 1 << 63;

/// Key -> record, in an open-addressing [`SlotTable`] built for replay's access pattern.
///
/// A record is `(cycle + 1) | flag`, with 0 meaning "seen but never recorded" (a new
/// message found only in a frozen half without copy-over). The record lives in the
/// key's slot, so a lookup is usually one cache line, and [`GroundTruth::prefetch`] lets
/// replay request that line several arrivals ahead: with a million-key table the
/// lookups are memory-bound, and overlapping their latency is what makes replay fast.
///
/// Memory: 16 bytes per slot, 21-43 bytes per key between resizes; while doubling,
/// old and new tables coexist for at most 64 bytes per key.
pub type GroundTruth = Records<2>;

/// A ground-truth table with `W - 1` value words per key in its [`SlotTable`]:
/// [`GroundTruth`] (one filter's 64-bit record) or [`SharedTruth`] (the records of up
/// to [`SHARED_FILTERS`] filters side by side). What both do with the table alone
/// (sizing, counting, prefetching) is written here once.
#[derive(Default)]
pub struct Records<const W: usize> {
    table: SlotTable<W>,
}

impl<const W: usize> Records<W> {
    /// A table that holds `keys` keys without growing (no doubling: no copy, and no
    /// moment with the old and the new table in memory together).
    pub fn with_capacity(keys: u64) -> Self {
        Records {
            table: SlotTable::with_capacity(keys),
        }
    }

    /// Bytes of the new table if `more` new keys arrived and the table had to grow
    /// (the old one stays until the keys moved over), or None when it would not.
    pub fn growth_bytes(&self, more: usize) -> Option<u64> {
        self.table.growth_bytes(more)
    }

    /// Distinct keys seen so far.
    pub fn distinct(&self) -> usize {
        self.table.len()
    }

    /// Bytes allocated by the table.
    pub fn allocated_bytes(&self) -> usize {
        self.table.allocated_bytes()
    }

    /// Asks the CPU to start loading the slot of `key` (a hint; no effect on results).
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        self.table.prefetch(key);
    }
}

/// A located record, returned by [`GroundTruth::lookup`].
pub struct Slot<'a> {
    pub truth: Truth,
    value: &'a mut u64,
}

impl GroundTruth {
    pub fn new() -> Self {
        Self::default()
    }

    /// Finds or creates the record of `key` and says what the arrival truly is, given
    /// the current cycle and how many recent cycles count as recorded.
    #[inline(always)]
    pub fn lookup(&mut self, key: u64, cycle: u64, window: u64) -> Slot<'_> {
        let (value, fresh) = self.table.entry(key);
        Slot::classify(value, fresh, cycle, window)
    }
}

impl<'a> Slot<'a> {
    /// The arrival of a key whose record (see [`GroundTruth`]) is `value`, `fresh` when
    /// the key was never seen before.
    #[inline(always)]
    pub(super) fn classify(value: &'a mut u64, fresh: bool, cycle: u64, window: u64) -> Self {
        let rec = *value & !FLAG;
        // Without branches (whether an arrival is new, a repeat or neither is random):
        // 0 New, 1 NonRepeat, 2 Repeat.
        let repeat = (rec != 0) & (rec + window > cycle + 1);
        let code = u8::from(!fresh) + u8::from(!fresh & repeat);
        let truth = [Truth::New, Truth::NonRepeat, Truth::Repeat][usize::from(code)];
        Slot { truth, value }
    }

    /// Whether the first arrival of the current recorded stretch was a misclassification.
    #[inline]
    pub fn flagged(&self) -> bool {
        *self.value & FLAG != 0
    }

    /// Cycle in which the key was last recorded, if any.
    #[inline]
    pub fn recorded_cycle(&self) -> Option<u64> {
        let rec = *self.value & !FLAG;
        (rec != 0).then(|| rec - 1)
    }

    /// Marks the key as recorded in `cycle`, with the count-each flag.
    #[inline]
    pub fn record(&mut self, cycle: u64, flag: bool) {
        *self.value = (cycle + 1) | if flag { FLAG } else { 0 };
    }

    /// Keeps the cycle, sets the flag.
    #[inline]
    pub fn set_flag(&mut self, flag: bool) {
        *self.value = (*self.value & !FLAG) | if flag { FLAG } else { 0 };
    }
}

/// Filters sharing one [`SharedTruth`] slot.
pub const SHARED_FILTERS: usize = 4;

/// Largest relative cycle a [`SharedTruth`] record holds (15 bits).
pub(super) const SHARED_REL_MAX: u64 = (1 << 15) - 1;

/// The count-each flag of a [`SharedTruth`] record (its top bit).
pub(super) const SHARED_FLAG: u16 = 1 << 15;

/// Key -> one record per filter for up to [`SHARED_FILTERS`] filters replaying the same
/// stream (one per hash seed, [`super::Replays`]): one lookup per arrival serves them
/// all, and their records sit side by side in the key's 16-byte slot, `[key, records
/// of filters 0-3]`, the slot size of a filter's own table.
///
/// A filter's record is 16 bits: the top bit is [`GroundTruth`]'s count-each flag, the
/// other 15 the cycle last recorded plus one, relative to the filter's base (0: never
/// recorded, or recorded so long ago that it no longer matters, see
/// [`SharedTruth::rebase`]; a base moves every 2^14 to 2^15 cycles). [`expand`] and
/// [`compress`] turn it into [`GroundTruth`]'s 64-bit record and back, so a filter
/// classifies its arrivals with the same code whether it has a table of its own or
/// shares one.
///
/// Memory: 16 bytes per slot, 21.3 bytes per key when sized up front, as one filter's
/// own table (four tables of their own took 85; 32-bit records, 32).
pub type SharedTruth = Records<2>;

/// The 64-bit record ([`GroundTruth`]'s) of a shared 16-bit record relative to `base`.
#[inline(always)]
pub(super) fn expand(r: u16, base: u64) -> u64 {
    let rel = u64::from(r & !SHARED_FLAG);
    let rec = if rel == 0 { 0 } else { rel + base };
    rec | u64::from(r >> 15) << 63
}

/// The shared 16-bit record of a 64-bit record, relative to `base` (which the caller
/// keeps within [`SHARED_REL_MAX`] of every cycle recorded).
#[inline(always)]
pub(super) fn compress(v: u64, base: u64) -> u16 {
    let rec = v & !FLAG;
    let rel = if rec == 0 { 0 } else { rec - base };
    debug_assert!(rel <= SHARED_REL_MAX, "record {rec} base {base}");
    rel as u16 | ((v >> 63) as u16) << 15
}

/// Raw access to a [`SharedTruth`]'s records by [`SharedTruth::locate`]'s indices,
/// taken once the keys of a batch are located (the table does not grow until the
/// next batch, so its slots stay where they are).
pub struct SharedView {
    slots: *mut [u64; 2],
    zero: *mut [u64; 2],
}

impl SharedView {
    /// The records of the key located at `index` (`fresh`: it was new).
    ///
    /// # Safety
    /// `index` came from [`SharedTruth::locate`] on the table this view was taken
    /// from, which has not grown or been dropped since.
    #[inline(always)]
    pub unsafe fn slot(&self, index: usize, fresh: bool) -> SharedSlot {
        let slot = if index == ZERO_SLOT {
            self.zero
        } else {
            self.slots.add(index)
        };
        SharedSlot {
            // The slot's value word holds SHARED_FILTERS u16s.
            records: slot.cast::<u16>().add(4),
            fresh,
        }
    }
}

/// Where a located key's records are in a [`SharedTruth`] ([`SharedView::slot`]),
/// valid while the view is.
#[derive(Clone, Copy, Debug)]
pub struct SharedSlot {
    records: *mut u16,
    /// The key was seen for the first time when it was located.
    pub fresh: bool,
}

impl SharedSlot {
    /// The record of filter `filter`.
    ///
    /// # Safety
    /// The view the slot came from is still valid ([`SharedView::slot`]), and
    /// `filter < SHARED_FILTERS`.
    #[inline(always)]
    pub unsafe fn record(self, filter: usize) -> *mut u16 {
        self.records.add(filter)
    }

    /// The [`SHARED_FILTERS`] records as one word, filter f's in its bits 16f to
    /// 16f + 15 on a little-endian CPU (the value word of the slot, 8-byte aligned).
    ///
    /// # Safety
    /// The view the slot came from is still valid ([`SharedView::slot`]).
    #[inline(always)]
    pub unsafe fn records_word(self) -> *mut u64 {
        self.records.cast()
    }
}

/// A filter's records moved to a new base ([`SharedTruth::rebase`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Rebase {
    pub filter: usize,
    pub from: u64,
    pub to: u64,
}

impl SharedTruth {
    /// Makes room for `more` new keys now, so that the pointers [`SharedTruth::locate`]
    /// hands out for the next `more` keys stay valid until then.
    pub fn reserve(&mut self, more: usize) {
        self.table.reserve(more);
    }

    /// Where the records of `key` are (created as zeros if absent; the flag says
    /// whether it was), for [`SharedTruth::view`].
    #[inline(always)]
    pub fn locate(&mut self, key: u64) -> (usize, bool) {
        self.table.entry_index(key)
    }

    /// The records of the keys located since the table last grew.
    pub fn view(&mut self) -> SharedView {
        let (slots, zero) = self.table.slot_ptrs();
        SharedView { slots, zero }
    }

    /// Moves each filter of `moves` from base `from` to base `to` (larger), at a
    /// moment when every cycle below `to` no longer matters to it: a record from
    /// before it becomes 0, which classifies and counts as it did (seen but not
    /// recorded in the current window, not recorded in the current cycle), its flag
    /// kept. One pass over the table for all of them; a filter needs one every 2^14
    /// cycles or more.
    pub(super) fn rebase(&mut self, moves: &[Rebase]) {
        assert!(moves.iter().all(|m| m.filter < SHARED_FILTERS));
        for slot in self.table.slots_mut() {
            // In memory order, as SharedView::record reads them.
            let mut records = slot[1].to_ne_bytes();
            for m in moves {
                let at = 2 * m.filter;
                let r = u16::from_ne_bytes([records[at], records[at + 1]]);
                let v = expand(r, m.from);
                let moved = if v & !FLAG > m.to {
                    compress(v, m.to)
                } else {
                    r & SHARED_FLAG
                };
                records[at..at + 2].copy_from_slice(&moved.to_ne_bytes());
            }
            slot[1] = u64::from_ne_bytes(records);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_tracks_keys_through_growth() {
        let mut t = GroundTruth::new();
        let keys: Vec<u64> = (0..100_000u64)
            .map(|i| i.wrapping_mul(0x2545_F491_4F6C_DD1D))
            .collect();
        for (i, &k) in keys.iter().enumerate() {
            let mut s = t.lookup(k, 5, 1);
            assert_eq!(s.truth, Truth::New);
            s.record(if i % 2 == 0 { 5 } else { 3 }, i % 3 == 0);
        }
        assert_eq!(t.distinct(), keys.len());
        for (i, &k) in keys.iter().enumerate() {
            let s = t.lookup(k, 5, 1);
            let want = if i % 2 == 0 {
                Truth::Repeat
            } else {
                Truth::NonRepeat
            };
            assert_eq!(s.truth, want);
            assert_eq!(s.flagged(), i % 3 == 0);
        }
        // Two-cycle window: cycle 4 still counts at cycle 5, cycle 3 does not.
        let k = 0xdead_beef;
        t.lookup(k, 4, 2).record(4, false);
        assert_eq!(t.lookup(k, 5, 2).truth, Truth::Repeat);
        assert_eq!(t.lookup(k, 6, 2).truth, Truth::NonRepeat);
        assert!(t.allocated_bytes() / t.distinct() <= 64);
    }
}
