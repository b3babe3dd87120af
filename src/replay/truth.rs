//! Exact ground truth: for every key ever seen, the cycle in which it was last recorded.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// What an arrival truly is, whatever the filter says (FN paper §3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Truth {
    /// Never seen before.
    New,
    /// Seen before, but not recorded in the current cycle (one phase) or in either half
    /// (two phases).
    NonRepeat,
    /// Recorded in the current window.
    Repeat,
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

/// Key -> record. A record is `(cycle + 1) | flag`, with 0 meaning "seen but never
/// recorded" (a new message found only in a frozen half without copy-over). 16 bytes per
/// key in the table; hashbrown keeps the load at most 7/8.
#[derive(Default)]
pub struct GroundTruth {
    map: KeyMap<u64>,
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
        self.map.len()
    }

    /// Bytes allocated by the table (approximate: buckets plus control bytes).
    pub fn allocated_bytes(&self) -> usize {
        self.map.capacity() * (std::mem::size_of::<(u64, u64)>() + 1)
    }

    /// Finds or creates the record of `key` and says what the arrival truly is, given
    /// the current cycle and how many recent cycles count as recorded.
    #[inline]
    pub fn lookup(&mut self, key: u64, cycle: u64, window: u64) -> Slot<'_> {
        match self.map.entry(key) {
            Entry::Vacant(v) => Slot {
                truth: Truth::New,
                value: v.insert(0),
            },
            Entry::Occupied(o) => {
                let value = o.into_mut();
                let rec = *value & !FLAG;
                let truth = if rec != 0 && rec + window > cycle + 1 {
                    Truth::Repeat
                } else {
                    Truth::NonRepeat
                };
                Slot { truth, value }
            }
        }
    }
}

impl Slot<'_> {
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
