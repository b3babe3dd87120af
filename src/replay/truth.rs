//! Exact ground truth: for every key ever seen, the cycle in which it was last recorded.

use super::index::SlotTable;

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
#[derive(Default)]
pub struct GroundTruth {
    table: SlotTable,
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

    /// A table that holds `keys` keys without growing (no doubling: no copy, and no
    /// moment with the old and the new table in memory together).
    pub fn with_capacity(keys: u64) -> Self {
        GroundTruth {
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

    /// Finds or creates the record of `key` and says what the arrival truly is, given
    /// the current cycle and how many recent cycles count as recorded.
    #[inline(always)]
    pub fn lookup(&mut self, key: u64, cycle: u64, window: u64) -> Slot<'_> {
        let (value, fresh) = self.table.entry(key);
        Slot::classify(value, fresh, cycle, window)
    }
}

impl<'a> Slot<'a> {
    #[inline(always)]
    fn classify(value: &'a mut u64, fresh: bool, cycle: u64, window: u64) -> Self {
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
