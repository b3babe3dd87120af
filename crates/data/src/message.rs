//! Messages: the unit every stage of the pipeline works on.
//!
//! A message is one arrival (a packet, a flow record, a CDN request) reduced to a
//! 64-bit key plus an optional timestamp. The key is a seeded 64-bit hash (XXH3) of
//! the original key bytes, so that every later stage (filters, ground truth, fitting)
//! works on fixed-size integers and never on strings. Keys from different inputs are
//! comparable when they were hashed with the same [`KeyHasher`] seed.

use std::collections::HashMap;

/// Nanoseconds since the Unix epoch (or since the start of the trace when the source
/// has only relative times). `u64::MAX` stands for "no timestamp" so that a
/// [`Message`] stays 16 bytes: streams of hundreds of millions of messages are common.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(u64);

impl Timestamp {
    pub const NONE: Timestamp = Timestamp(u64::MAX);

    pub fn from_nanos(ns: u64) -> Self {
        // u64::MAX is reserved; a real timestamp that large (year 2554) saturates one below.
        Timestamp(ns.min(u64::MAX - 1))
    }

    pub fn from_secs(s: u64) -> Self {
        Self::from_nanos(s.saturating_mul(1_000_000_000))
    }

    pub fn nanos(self) -> Option<u64> {
        (self.0 != u64::MAX).then_some(self.0)
    }

    pub fn is_none(self) -> bool {
        self.0 == u64::MAX
    }
}

/// One arrival: a hashed key and an optional timestamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Message {
    pub key: u64,
    pub time: Timestamp,
}

impl Message {
    pub fn new(key: u64) -> Self {
        Message {
            key,
            time: Timestamp::NONE,
        }
    }

    pub fn at(key: u64, time: Timestamp) -> Self {
        Message { key, time }
    }
}

/// Default seed for key hashing. Fixed so that the same trace always yields the same
/// keys (and `.rbfs` files stay comparable across runs).
pub const DEFAULT_KEY_SEED: u64 = 0x7262_665f_6b65_7973; // "rbf_keys"

/// Keys per batch of [`for_each_key_batch`].
pub const KEY_BATCH: usize = 256;

/// Feeds a stream's keys to `f` in slices of up to [`KEY_BATCH`], the last one possibly
/// shorter. Stages that look keys up in large tables (replay, fit) work on slices so
/// that they can start the memory accesses of later keys before using earlier ones.
pub fn for_each_key_batch<I: IntoIterator<Item = Message>>(stream: I, mut f: impl FnMut(&[u64])) {
    let mut it = stream.into_iter();
    let mut batch = [0u64; KEY_BATCH];
    loop {
        let mut n = 0;
        for (slot, m) in batch.iter_mut().zip(&mut it) {
            *slot = m.key;
            n += 1;
        }
        if n > 0 {
            f(&batch[..n]);
        }
        if n < KEY_BATCH {
            return;
        }
    }
}

/// Seeded 64-bit hash of original key bytes (XXH3-64, a specified, stable algorithm:
/// the same bytes and seed give the same key on every platform and version).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyHasher {
    seed: u64,
}

impl Default for KeyHasher {
    fn default() -> Self {
        KeyHasher {
            seed: DEFAULT_KEY_SEED,
        }
    }
}

impl KeyHasher {
    pub fn with_seed(seed: u64) -> Self {
        KeyHasher { seed }
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    #[inline]
    pub fn hash(&self, bytes: &[u8]) -> u64 {
        xxhash_rust::xxh3::xxh3_64_with_seed(bytes, self.seed)
    }

    /// [`KeyHasher::hash`] of the first `len` (9 to 16) little-endian bytes of `word`,
    /// in registers: XXH3-64's 9-16 byte case written out. A key put together in a
    /// register (the IPv4 5-tuple) was stored and read back by the hash as two 8-byte
    /// words, and the second load, across two stores, waited for them: 7 ns a packet,
    /// a fifth of decoding a capture (docs/history/PERFORMANCE-log.md, packet captures,
    /// 2026-11-27 18:20 UTC).
    #[inline(always)]
    pub fn hash_short(&self, word: u128, len: usize) -> u64 {
        debug_assert!((9..=16).contains(&len));
        // XXH3's default secret: its bytes 24..32 ^ 32..40, and 40..48 ^ 48..56.
        const FLIP_LO: u64 = 0x6782_737B_EA42_39B9;
        const FLIP_HI: u64 = 0xAF56_BC3B_0996_523A;
        let lo = word as u64 ^ FLIP_LO.wrapping_add(self.seed);
        let hi = (word >> (8 * (len - 8))) as u64 ^ FLIP_HI.wrapping_sub(self.seed);
        let product = u128::from(lo) * u128::from(hi);
        let acc = (len as u64)
            .wrapping_add(lo.swap_bytes())
            .wrapping_add(hi)
            .wrapping_add(product as u64 ^ (product >> 64) as u64);
        // XXH3's avalanche.
        let x = (acc ^ (acc >> 37)).wrapping_mul(0x1656_6791_9E37_79F9);
        x ^ (x >> 32)
    }
}

/// Keeps the original key bytes of each distinct hashed key, for reports that need to
/// name messages (the most popular objects, a flow that produced false negatives).
/// Off by default: it costs memory proportional to the distinct keys and their length.
#[derive(Debug, Default)]
pub struct KeyDictionary {
    names: HashMap<u64, Box<[u8]>>,
    collisions: u64,
}

impl KeyDictionary {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `original` as the name of `key`. A different name for a key already
    /// present is a 64-bit hash collision: it is counted, and the first name is kept.
    pub fn record(&mut self, key: u64, original: &[u8]) {
        match self.names.get(&key) {
            Some(existing) => {
                if existing.as_ref() != original {
                    self.collisions += 1;
                }
            }
            None => {
                self.names.insert(key, original.into());
            }
        }
    }

    /// Adds the names of `other` (a later part of the same trace): names already
    /// present win, different ones are counted as collisions.
    pub fn merge(&mut self, other: &KeyDictionary) {
        for (&k, v) in &other.names {
            self.record(k, v);
        }
        self.collisions += other.collisions;
    }

    pub fn name(&self, key: u64) -> Option<&[u8]> {
        self.names.get(&key).map(|b| b.as_ref())
    }

    /// The name of `key` as text (lossy UTF-8), or the key in hex when unknown.
    pub fn display(&self, key: u64) -> String {
        match self.name(key) {
            Some(b) => String::from_utf8_lossy(b).into_owned(),
            None => format!("{key:#018x}"),
        }
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    pub fn collisions(&self) -> u64 {
        self.collisions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_is_sixteen_bytes() {
        assert_eq!(std::mem::size_of::<Message>(), 16);
    }

    #[test]
    fn hashing_is_seeded_and_stable() {
        let a = KeyHasher::default();
        let b = KeyHasher::with_seed(1);
        assert_eq!(a.hash(b"10.0.0.1"), a.hash(b"10.0.0.1"));
        assert_ne!(a.hash(b"10.0.0.1"), b.hash(b"10.0.0.1"));
        assert_ne!(a.hash(b"10.0.0.1"), a.hash(b"10.0.0.2"));
    }

    #[test]
    fn short_keys_hash_in_registers_as_in_bytes() {
        let mut rng = crate::synth::Rng::seed(41);
        for i in 0..100_000 {
            let word = u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64());
            let len = 9 + (i % 8);
            let seed = match i % 3 {
                0 => 0,
                1 => DEFAULT_KEY_SEED,
                _ => rng.next_u64(),
            };
            let h = KeyHasher::with_seed(seed);
            let bytes = &word.to_le_bytes()[..len];
            // Bytes of `word` past `len` must not matter either.
            let cut = word & (u128::MAX >> (128 - 8 * len));
            assert_eq!(
                h.hash_short(word, len),
                h.hash(bytes),
                "{word:#x} {len} {seed}"
            );
            assert_eq!(h.hash_short(cut, len), h.hash(bytes));
        }
    }

    #[test]
    fn timestamp_none_is_distinct() {
        assert!(Timestamp::NONE.nanos().is_none());
        assert_eq!(Timestamp::from_secs(3).nanos(), Some(3_000_000_000));
        assert_eq!(Timestamp::from_nanos(u64::MAX).nanos(), Some(u64::MAX - 1));
    }

    #[test]
    fn dictionary_counts_collisions() {
        let mut d = KeyDictionary::new();
        d.record(1, b"a");
        d.record(1, b"a");
        d.record(1, b"b");
        assert_eq!(d.collisions(), 1);
        assert_eq!(d.display(1), "a");
        assert_eq!(d.display(2), "0x0000000000000002");
    }
}
