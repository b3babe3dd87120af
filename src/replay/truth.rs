//! Exact ground truth: for every key ever seen, the cycle in which it was last recorded.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

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

/// Keys are already uniform 64-bit hashes, so one multiply suffices to spread them over
/// the table's control bytes (hashbrown takes its 7-bit tag from the top bits). It also
/// keeps small sequential keys, as tests use, from collapsing onto one tag.
#[derive(Default, Clone, Copy)]
pub struct KeyMix(u64);

impl Hasher for KeyMix {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01B3);
        }
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.0 = (x ^ (x >> 32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

pub type KeyMap<V> = HashMap<u64, V, BuildHasherDefault<KeyMix>>;

/// Top bit of a record: the message's first arrival in its current recorded stretch
/// was classified as a repeat (for the FP paper's count-each measure).
const FLAG: u64 = 1 << 63;

/// Key -> record, in an open-addressing table built for replay's access pattern.
///
/// A record is `(cycle + 1) | flag`, with 0 meaning "seen but never recorded" (a new
/// message found only in a frozen half without copy-over). Slots are 16-byte
/// `[key, record]` pairs (key 0 marks an empty slot; the real key 0 lives in a side
/// slot), probed linearly from a multiplicative hash, at most 3/4 full. A lookup is
/// usually one cache line, and [`GroundTruth::prefetch`] lets replay request that line
/// several arrivals ahead: with a million-key table the lookups are memory-bound, and
/// overlapping their latency is what makes replay fast.
///
/// Memory: 16 bytes per slot, 21-43 bytes per key between resizes; while doubling,
/// old and new tables coexist for at most 64 bytes per key.
pub struct GroundTruth {
    slots: Vec<[u64; 2]>,
    shift: u32,
    len: usize,
    zero: Option<u64>,
}

const MIN_BITS: u32 = 10;

impl Default for GroundTruth {
    fn default() -> Self {
        GroundTruth {
            slots: vec![[0, 0]; 1 << MIN_BITS],
            shift: 64 - MIN_BITS,
            len: 0,
            zero: None,
        }
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

    /// Distinct keys seen so far.
    pub fn distinct(&self) -> usize {
        self.len + usize::from(self.zero.is_some())
    }

    /// Bytes allocated by the table.
    pub fn allocated_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<[u64; 2]>()
    }

    #[inline(always)]
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// Asks the CPU to start loading the slot of `key` (a hint; no effect on results).
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let p = self.slots.as_ptr().wrapping_add(self.home(key));
            // SAFETY: prefetch is a hint and never faults, even on invalid addresses;
            // `p` points into (or one past) the slot vector anyway.
            unsafe {
                std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0)
            };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    /// Finds or creates the record of `key` and says what the arrival truly is, given
    /// the current cycle and how many recent cycles count as recorded.
    #[inline]
    pub fn lookup(&mut self, key: u64, cycle: u64, window: u64) -> Slot<'_> {
        if key == 0 {
            let fresh = self.zero.is_none();
            let value = self.zero.get_or_insert(0);
            return Slot::classify(value, fresh, cycle, window);
        }
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let k = self.slots[i][0];
            if k == key {
                return Slot::classify(&mut self.slots[i][1], false, cycle, window);
            }
            if k == 0 {
                self.len += 1;
                self.slots[i] = [key, 0];
                return Slot::classify(&mut self.slots[i][1], true, cycle, window);
            }
            i = (i + 1) & mask;
        }
    }

    #[cold]
    fn grow(&mut self) {
        let bits = 64 - self.shift + 1;
        let old = std::mem::replace(&mut self.slots, vec![[0, 0]; 1 << bits]);
        self.shift = 64 - bits;
        let mask = self.slots.len() - 1;
        for [k, v] in old {
            if k != 0 {
                let mut i = self.home(k);
                while self.slots[i][0] != 0 {
                    i = (i + 1) & mask;
                }
                self.slots[i] = [k, v];
            }
        }
    }
}

impl<'a> Slot<'a> {
    #[inline(always)]
    fn classify(value: &'a mut u64, fresh: bool, cycle: u64, window: u64) -> Self {
        let rec = *value & !FLAG;
        let truth = if fresh {
            Truth::New
        } else if rec != 0 && rec + window > cycle + 1 {
            Truth::Repeat
        } else {
            Truth::NonRepeat
        };
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
