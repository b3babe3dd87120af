//! Open-addressing tables for per-key state that is looked up once per arrival.
//!
//! Both replay's ground truth and the fit touch a random entry of a table of up to
//! millions of keys for every arrival: the lookups are memory-bound, and what makes them
//! fast is starting the memory access several arrivals ahead (a prefetch), which
//! std's `HashMap` does not offer. [`KeyIndex`] maps a 64-bit key to a dense id
//! (0, 1, 2, ... in order of first sight), so callers keep their per-key state in a
//! plain `Vec` indexed by id, which they can prefetch too.

use crate::prefetch::{advise_huge_pages, prefetch_ptr};

/// A zeroed slot vector of `n` slots, backed by huge pages when large
/// ([`advise_huge_pages`]: lookups land on uniformly random slots).
fn zeroed_slots<const W: usize>(n: usize) -> Vec<[u64; W]> {
    let slots = vec![[0u64; W]; n];
    advise_huge_pages(&slots);
    slots
}

const MIN_BITS: u32 = 10;

/// Key -> one u64 value (`W - 1` of them: replay's filters sharing one table,
/// `replay::truth::SharedTruth`), open addressing.
///
/// Slots are 16-byte `[key, value]` pairs (8 W bytes in general) probed linearly from a multiplicative hash, at
/// most 3/4 full, so a lookup is usually one cache line. Key 0 marks an empty slot, and
/// the real key 0 lives in a side field. Memory: 16 bytes per slot, 21-43 bytes per key
/// between resizes; while doubling, old and new tables coexist for at most 64 bytes per
/// key. A table sized for a known number of keys ([`slots_for`]) takes 21.3 bytes per
/// key and never doubles.
///
/// The home slot is the high half of the product of the mixed key and the slot count
/// (a multiply-shift range reduction), so a table can have any number of slots: grown
/// tables keep doubling from 1024 (a power of two, where this is the plain shift of
/// the mixed key), tables sized for a known count are no larger than it needs.
///
/// The doubled slot vector of a mid-sized table is zeroed ahead of need on a helper
/// thread ([`prefault_at`]): fresh memory is zeroed by the kernel when first touched,
/// and on the replay's thread that was a third of its time on the project machine.
pub struct SlotTable<const W: usize = 2> {
    slots: Vec<[u64; W]>,
    /// 64 - log2(slots) when the slot count is a power of two (the home slot is then
    /// a shift of the mixed key, which replay measured 5-10 % faster than the
    /// multiply), else 0.
    shift: u32,
    len: usize,
    /// The slot of key 0 (its key field unused).
    zero: Option<[u64; W]>,
    /// `len` at which the next slot vector is prepared (usize::MAX: never).
    prefault_len: usize,
    /// Whether doubled slot vectors are prepared ahead at all ([`SlotTable::in_place`]).
    ahead: bool,
    next: Option<std::thread::JoinHandle<Vec<[u64; W]>>>,
    /// Slots a growth stops at instead of doubling past them ([`SlotTable::capped`];
    /// usize::MAX: none).
    ceiling: usize,
}

impl<const W: usize> Default for SlotTable<W> {
    fn default() -> Self {
        Self::with_slots(1 << MIN_BITS)
    }
}

/// Smallest and largest tables (slots) whose doubled slot vector is prepared ahead on
/// a helper thread. Below, zeroing is quick; above, the prepared vector would hold a
/// lot of memory for nothing when the trace ends before the table fills (from half
/// to three quarters full): here at most 128 MiB (192 MiB with 24-byte slots).
const PREFAULT_SLOTS: std::ops::RangeInclusive<usize> = (1 << 16)..=(1 << 22);

/// The number of keys at which a table of `slots` slots starts preparing its doubled
/// successor (half full: a quarter of the slots arrive before it is needed), if it
/// does.
pub fn prefault_at(slots: u64) -> Option<u64> {
    PREFAULT_SLOTS
        .contains(&(slots as usize))
        .then_some(slots / 2)
}

/// A zeroed slot vector of `n` slots whose pages are all touched (so the kernel has
/// zeroed and mapped them), split over the cores when large and `parallel`.
fn faulted_slots<const W: usize>(n: usize, parallel: bool) -> Vec<[u64; W]> {
    let page = 4096 / std::mem::size_of::<[u64; W]>();
    let mut slots = zeroed_slots(n);
    let touch = |part: &mut [[u64; W]]| {
        // One write (or more) per 4 KiB page: a read would only map the shared zero
        // page.
        for s in part.iter_mut().step_by(page) {
            // SAFETY: a valid, aligned element of the vector; volatile so that the
            // store of the value it already holds is not optimised away.
            unsafe { std::ptr::write_volatile(s, [0; W]) };
        }
    };
    let threads = crate::resources::available_threads();
    if !parallel || n * std::mem::size_of::<[u64; W]>() < 16 << 20 || threads < 2 {
        touch(&mut slots);
        return slots;
    }
    // Parts of whole 2 MiB pages, so that no huge page is touched by two threads.
    let part = n.div_ceil(threads).next_multiple_of(page * 512);
    std::thread::scope(|scope| {
        for chunk in slots.chunks_mut(part) {
            scope.spawn(move || touch(chunk));
        }
    });
    slots
}

/// Slots of a table that grew by doubling to hold `keys` keys: a power of two, at
/// most 3/4 full.
pub fn grown_slots(keys: u64) -> u64 {
    slots_for(keys).next_power_of_two()
}

/// Slots of a table of 16-byte slots sized up front for `keys` keys: the fewest that
/// stay at most 3/4 full, in whole 2 MiB huge pages when larger than one (else whole
/// 1024 slots).
pub(crate) fn slots_for(keys: u64) -> u64 {
    slots_of(keys, SLOT_BYTES)
}

/// [`slots_for`] with slots of `slot_bytes` bytes (whole huge pages, as near as
/// slots of that size fill them).
pub fn slots_of(keys: u64, slot_bytes: u64) -> u64 {
    // The largest count a table of n slots holds is 3n/4 (see `entry`).
    let least = keys.saturating_mul(4).div_ceil(3).max(1 << MIN_BITS);
    let huge = (2u64 << 20) / slot_bytes;
    least.next_multiple_of(if least > huge { huge } else { 1 << MIN_BITS })
}

/// [`SlotTable::shift`] of a table of `n` slots.
fn shift_for(n: usize) -> u32 {
    if n.is_power_of_two() {
        64 - n.trailing_zeros()
    } else {
        0
    }
}

/// Bytes of one slot.
pub const SLOT_BYTES: u64 = std::mem::size_of::<[u64; 2]>() as u64;

/// [`SlotTable::entry_index`] of key 0, which lives beside the slots.
pub const ZERO_SLOT: usize = usize::MAX;

/// Bytes of one slot of a [`SlotTable`]`<W>`.
pub(crate) const fn slot_bytes(w: usize) -> u64 {
    8 * w as u64
}

impl<const W: usize> SlotTable<W> {
    /// A table that holds `keys` keys without growing, its memory mapped up front
    /// (so that lookups do not wait for the kernel to zero pages as they go).
    pub fn with_capacity(keys: u64) -> Self {
        let slots = slots_of(keys, slot_bytes(W)) as usize;
        Self::from_slots(faulted_slots(slots, true), true)
    }

    /// A growing table that zeroes each doubled slot vector as it grows, on the
    /// caller's thread, rather than preparing it ahead on a helper thread: for callers
    /// whose process already keeps every core busy (the flow table of `--flows`, beside
    /// the decoding thread), where the helper took CPU from both and the successor
    /// prepared for keys that never came held memory for nothing (64 MiB at 10^6 flows).
    pub fn in_place() -> Self {
        let mut t = SlotTable {
            ahead: false,
            ..Self::default()
        };
        t.set_prefault(false);
        t
    }

    /// A growing table for at most `keys` keys (its caller stores no more): it doubles
    /// as [`SlotTable::in_place`] does, but the growth that would double past the
    /// slots `keys` keys need ([`slots_of`]) stops there. A table capped at 4 M keys
    /// (the fit's successor pairs) ends at 5.3 M slots (85 MB) where doubling made 8 M
    /// (128 MB, beside the 64 MB it grew from).
    pub fn capped(keys: u64) -> Self {
        SlotTable {
            ceiling: slots_of(keys, slot_bytes(W)) as usize,
            ..Self::in_place()
        }
    }

    fn with_slots(n: usize) -> Self {
        Self::from_slots(zeroed_slots(n), false)
    }

    /// A table over `slots`; `sized` when they were sized for the keys to come, so
    /// that no doubled successor is prepared (it would be zeroed for nothing).
    fn from_slots(slots: Vec<[u64; W]>, sized: bool) -> Self {
        let mut t = SlotTable {
            shift: shift_for(slots.len()),
            slots,
            len: 0,
            zero: None,
            prefault_len: usize::MAX,
            ahead: true,
            next: None,
            ceiling: usize::MAX,
        };
        t.set_prefault(sized);
        t
    }

    /// When the table prepares its doubled successor: never when sized for the keys
    /// to come.
    fn set_prefault(&mut self, sized: bool) {
        self.prefault_len = match prefault_at(self.slots.len() as u64) {
            Some(k) if !sized && self.ahead => k as usize,
            _ => usize::MAX,
        };
    }

    /// Starts preparing the doubled slot vector on a helper thread.
    #[cold]
    fn prefault(&mut self) {
        let n = self.slots.len() * 2;
        self.next = std::thread::Builder::new()
            .name("rbf-table".into())
            .spawn(move || faulted_slots(n, false))
            .ok();
    }

    /// Bytes of the new slot vector if `more` new keys arrived and the table had to
    /// grow (the old one is freed only after the keys moved over), or None when it
    /// would not grow.
    pub fn growth_bytes(&self, more: usize) -> Option<u64> {
        let mut target = self.slots.len() as u64;
        while (self.len + more) as u64 * 4 > target * 3 {
            target *= 2;
        }
        (target > self.slots.len() as u64).then_some(target * slot_bytes(W))
    }

    /// Grows the table now if `more` new keys would make it grow, so that the next
    /// `more` [`SlotTable::entry_slot`] calls leave every slot where it is.
    pub fn reserve(&mut self, more: usize) {
        while (self.len + more) * 4 > self.slots.len() * 3 {
            self.grow();
        }
    }

    /// Distinct keys stored.
    pub fn len(&self) -> usize {
        self.len + usize::from(self.zero.is_some())
    }

    /// No key stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn allocated_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<[u64; W]>()
    }

    #[inline(always)]
    fn home(&self, key: u64) -> usize {
        let mixed = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        if self.shift != 0 {
            (mixed >> self.shift) as usize
        } else {
            ((u128::from(mixed) * self.slots.len() as u128) >> 64) as usize
        }
    }

    /// The slot after `i`.
    #[inline(always)]
    fn after(&self, i: usize) -> usize {
        if i + 1 == self.slots.len() {
            0
        } else {
            i + 1
        }
    }

    /// Asks the CPU to start loading the slot of `key` and the cache line after it (a
    /// hint; no effect on results).
    ///
    /// A line holds four slots, and at up to 3/4 load a linear probe often runs past
    /// the home slot's line: without the second line, those probes took 13 % of the
    /// replay loop's `perf` samples, and prefetching it raised replay from about 40 to
    /// 44 M arrivals/s (docs/history/PERFORMANCE-log.md, "2026-11-24: target met on the
    /// current host"). [`SlotTable::entry`] reads the four slots from the home slot,
    /// which reach into the second line three times in four: without its prefetch,
    /// replay took half as long again (the same log, "7. The kernel without
    /// data-dependent branches").
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        let home = self.slots.as_ptr().wrapping_add(self.home(key));
        prefetch_ptr(home);
        prefetch_ptr(home.wrapping_add(4));
    }

    /// The slot of `key` (its values from index 1 on), created with values 0 if
    /// absent; the flag says whether it was.
    ///
    /// Replay calls this once per arrival, so it has no data-dependent branch in the
    /// common case: [`SlotTable::probe`] finds the slot without a loop, and a new key
    /// is stored by writing the slot unconditionally (an existing key's slot gets its
    /// own key again; an empty slot's values are always 0, as no key is ever removed).
    /// Whether the key is new is random (a fifth of the arrivals of a typical trace),
    /// and a branch on it mispredicted often.
    #[inline(always)]
    pub fn entry_slot(&mut self, key: u64) -> (&mut [u64; W], bool) {
        if key == 0 {
            let fresh = self.zero.is_none();
            return (self.zero.get_or_insert([0; W]), fresh);
        }
        let (i, fresh) = self.insert(key);
        // SAFETY: `insert` returns an index below slots.len().
        (unsafe { self.slots.get_unchecked_mut(i) }, fresh)
    }

    /// [`SlotTable::entry_slot`] as an index for [`SlotTable::slot_ptrs`]
    /// ([`ZERO_SLOT`] for key 0).
    #[inline(always)]
    pub fn entry_index(&mut self, key: u64) -> (usize, bool) {
        if key == 0 {
            let fresh = self.zero.is_none();
            self.zero.get_or_insert([0; W]);
            return (ZERO_SLOT, fresh);
        }
        self.insert(key)
    }

    /// The slot index of non-zero `key`, stored if absent; the flag says whether it
    /// was.
    #[inline(always)]
    fn insert(&mut self, key: u64) -> (usize, bool) {
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        let i = self.probe(key);
        // SAFETY: `probe` returns an index below slots.len().
        let slot = unsafe { self.slots.get_unchecked_mut(i) };
        let fresh = slot[0] == 0;
        debug_assert!(!fresh || slot[1..].iter().all(|&v| v == 0));
        slot[0] = key;
        self.len += usize::from(fresh);
        if (self.len == self.prefault_len) & fresh {
            self.prefault();
        }
        (i, fresh)
    }

    /// Pointers to the first slot and to key 0's slot (null while key 0 is absent),
    /// for reading slots by [`SlotTable::entry_index`]'s indices; valid until the
    /// table next grows.
    pub fn slot_ptrs(&mut self) -> (*mut [u64; W], *mut [u64; W]) {
        let zero = self
            .zero
            .as_mut()
            .map_or(std::ptr::null_mut(), |z| z as *mut _);
        (self.slots.as_mut_ptr(), zero)
    }

    /// Every slot holding a key, key 0's included (its key field 0), in slot order.
    pub fn slots(&self) -> impl Iterator<Item = &[u64; W]> {
        self.slots
            .iter()
            .filter(|s| s[0] != 0)
            .chain(self.zero.as_ref())
    }

    /// Every slot holding a key, key 0's included (its key field 0).
    pub fn slots_mut(&mut self) -> impl Iterator<Item = &mut [u64; W]> {
        self.slots
            .iter_mut()
            .filter(|s| s[0] != 0)
            .chain(self.zero.as_mut())
    }

    /// The slot of `key` or, if absent, the empty slot where linear probing would store
    /// it: the first slot from the home slot on that holds the key or is empty (keys
    /// are never removed, so a key sits before the first empty slot of its probe run).
    #[inline(always)]
    fn probe(&self, key: u64) -> usize {
        self.first_from(self.home(key), |k| (k == key) | (k == 0))
    }

    /// The first slot from `home` on whose key satisfies `stop` (which must hold for
    /// some slot).
    ///
    /// The four slots from `home` are tested at once and the first hit taken by a bit
    /// scan: how far a probe runs is random, and at up to 3/4 load the exit of a
    /// slot-by-slot loop mispredicted on a large share of the arrivals, while most
    /// probes end within four slots. They span two cache lines unless the home slot
    /// starts one: [`SlotTable::prefetch`] asks for both. Longer runs continue slot by
    /// slot. (Testing only the home slot's line, then looping, was slower: a fifth of
    /// the probes left it.)
    #[inline(always)]
    fn first_from(&self, home: usize, stop: impl Fn(u64) -> bool) -> usize {
        let n = self.slots.len();
        let s = self.slots.as_ptr();
        let wrap = |i: usize| if i >= n { i - n } else { i };
        // SAFETY (all reads below): indices are wrapped below slots.len() (every
        // table has at least 1024 slots, so home + 4 wraps at most once), or below
        // home + 4 <= slots.len().
        let hit = |i: usize| u32::from(stop(unsafe { (*s.add(wrap(i)))[0] }));
        let window = if home + 4 <= n {
            // Nearly always: no wrap-around.
            let at = |j: usize| u32::from(stop(unsafe { (*s.add(home + j))[0] }));
            at(0) | at(1) << 1 | at(2) << 2 | at(3) << 3
        } else {
            hit(home) | hit(home + 1) << 1 | hit(home + 2) << 2 | hit(home + 3) << 3
        };
        if window != 0 {
            return wrap(home + window.trailing_zeros() as usize);
        }
        let mut i = wrap(home + 4);
        while hit(i) == 0 {
            i = self.after(i);
        }
        i
    }

    #[cold]
    fn grow(&mut self) {
        let doubled = self.slots.len() * 2;
        let n = if self.ceiling > self.slots.len() {
            doubled.min(self.ceiling)
        } else {
            doubled
        };
        let fresh = self
            .next
            .take()
            .and_then(|h| h.join().ok())
            .filter(|v| v.len() == n)
            .unwrap_or_else(|| zeroed_slots(n));
        let old = std::mem::replace(&mut self.slots, fresh);
        self.shift = shift_for(n);
        self.set_prefault(false);
        // Every old slot is moved, empty ones included, without a branch on whether
        // it is (half of them are, at random): an empty slot is all zeros and lands
        // on an empty slot of the new table, which it leaves as it was.
        for slot in old {
            debug_assert!(slot[0] != 0 || slot.iter().all(|&v| v == 0));
            let i = self.first_from(self.home(slot[0]), |k| k == 0);
            // SAFETY: `first_from` returns an index below slots.len().
            unsafe { *self.slots.get_unchecked_mut(i) = slot };
        }
    }
}

impl SlotTable {
    /// The value of `key`, if stored.
    #[inline]
    pub fn get(&self, key: u64) -> Option<u64> {
        if key == 0 {
            return self.zero.map(|s| s[1]);
        }
        let mut i = self.home(key);
        loop {
            let [k, v] = self.slots[i];
            if k == key {
                return Some(v);
            }
            if k == 0 {
                return None;
            }
            i = self.after(i);
        }
    }

    /// The value of `key`, if stored, to change in place.
    #[inline]
    pub fn get_mut(&mut self, key: u64) -> Option<&mut u64> {
        if key == 0 {
            return self.zero.as_mut().map(|s| &mut s[1]);
        }
        let i = self.probe(key);
        // SAFETY: `probe` returns an index below slots.len().
        let slot = unsafe { self.slots.get_unchecked_mut(i) };
        (slot[0] == key).then_some(&mut slot[1])
    }

    /// The value of `key`, created as 0 if absent; the flag says whether it was
    /// ([`SlotTable::entry_slot`]).
    #[inline(always)]
    pub fn entry(&mut self, key: u64) -> (&mut u64, bool) {
        let (slot, fresh) = self.entry_slot(key);
        (&mut slot[1], fresh)
    }
}

/// Key -> dense id (0, 1, 2, ... in order of first sight).
#[derive(Default)]
pub struct KeyIndex {
    table: SlotTable,
}

impl KeyIndex {
    /// Distinct keys (ids handed out).
    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes allocated by the table.
    pub fn allocated_bytes(&self) -> usize {
        self.table.allocated_bytes()
    }

    /// Asks the CPU to start loading the slot of `key`.
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        self.table.prefetch(key);
    }

    /// The id of `key`, if it has one.
    #[inline]
    pub fn get(&self, key: u64) -> Option<usize> {
        self.table.get(key).map(|id| id as usize)
    }

    /// The id of `key`, giving it the next id if it has none; the flag says whether
    /// the key is new.
    #[inline]
    pub fn get_or_insert(&mut self, key: u64) -> (usize, bool) {
        let next = self.table.len() as u64;
        let (v, fresh) = self.table.entry(key);
        if fresh {
            *v = next;
        }
        (*v as usize, fresh)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_runs_past_four_slots_and_around_the_end() {
        // Keys whose home is one of the last three slots of a 1024-slot table: their
        // run wraps to slot 0 and is longer than the four slots tested at once. Each
        // is found where the slot-by-slot `get` finds it, and a growth moves them all.
        let mut t = SlotTable::default();
        assert_eq!(t.slots.len(), 1 << MIN_BITS);
        let keys: Vec<u64> = (1..)
            .filter(|&k| t.home(k) >= t.slots.len() - 3)
            .take(12)
            .collect();
        for (n, &k) in keys.iter().enumerate() {
            let (v, fresh) = t.entry(k);
            assert!(fresh);
            *v = n as u64 + 1;
        }
        assert!(
            t.slots[..8].iter().any(|s| s[0] != 0),
            "the run wrapped around"
        );
        for (n, &k) in keys.iter().enumerate() {
            assert_eq!(t.get(k), Some(n as u64 + 1));
            assert_eq!(*t.entry(k).0, n as u64 + 1);
            assert!(!t.entry(k).1);
        }
        assert_eq!(t.len(), keys.len());
        t.grow();
        for (n, &k) in keys.iter().enumerate() {
            assert_eq!(t.get(k), Some(n as u64 + 1));
        }
        assert_eq!(t.slots.iter().filter(|s| s[0] != 0).count(), keys.len());
    }

    #[test]
    fn a_table_sized_for_its_keys_holds_them_with_any_slot_count() {
        // 2000 keys: 2667 slots needed, 3072 allocated (not a power of two).
        let mut t = SlotTable::with_capacity(2000);
        assert_eq!(t.slots.len(), 3072);
        assert_eq!(
            t.prefault_len,
            usize::MAX,
            "a sized table prepares no successor"
        );
        // Keys whose home is among the last slots come first: their runs wrap.
        let mut keys: Vec<u64> = (1..)
            .filter(|&k| t.home(k) >= t.slots.len() - 2)
            .take(8)
            .collect();
        keys.extend((0..2296u64).map(|i| i.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1 << 63));
        for (n, &k) in keys.iter().enumerate() {
            let (v, fresh) = t.entry(k);
            assert!(fresh);
            *v = n as u64 + 1;
        }
        assert_eq!(t.slots.len(), 3072, "3/4 full: no growth yet");
        assert!(
            t.slots[..8].iter().any(|s| s[0] != 0),
            "a run wrapped around"
        );
        let check = |t: &SlotTable| {
            for (n, &k) in keys.iter().enumerate() {
                assert_eq!(t.get(k), Some(n as u64 + 1), "key {k:#x}");
            }
            assert_eq!(t.get(12345), None);
        };
        check(&t);
        // One more key doubles it (to 6144 slots), and every key is found again.
        assert!(t.entry(99).1);
        assert_eq!(t.slots.len(), 6144);
        check(&t);
        assert_eq!(t.len(), keys.len() + 1);
    }

    #[test]
    fn ids_are_dense_in_first_sight_order_through_growth() {
        let mut ix = KeyIndex::default();
        // Key 0 included, and small sequential keys next to hashed ones.
        let keys: Vec<u64> = (0..50_000u64)
            .map(|i| {
                if i % 2 == 0 {
                    i / 2
                } else {
                    i.wrapping_mul(0x2545_F491_4F6C_DD1D)
                }
            })
            .collect();
        for (n, &k) in keys.iter().enumerate() {
            assert_eq!(ix.get(k), None);
            assert_eq!(ix.get_or_insert(k), (n, true));
        }
        assert_eq!(ix.len(), keys.len());
        for (n, &k) in keys.iter().enumerate() {
            assert_eq!(ix.get_or_insert(k), (n, false));
            assert_eq!(ix.get(k), Some(n));
        }
        assert!(ix.allocated_bytes() / ix.len() <= 64);
    }

    #[test]
    fn a_capped_table_stops_at_the_slots_its_keys_need() {
        // 3 000 keys need 4 000 slots (whole 1024s: 4 096); doubling would reach 8 192.
        let cap = 3_000u64;
        let mut t = SlotTable::<2>::capped(cap);
        for k in 1..=cap {
            *t.entry(k).0 = k * 7;
        }
        assert_eq!(t.slots.len() as u64, slots_of(cap, SLOT_BYTES));
        assert!(t.slots.len() < 8192);
        assert_eq!(t.len() as u64, cap);
        for k in 1..=cap {
            assert_eq!(t.get(k), Some(k * 7));
            *t.get_mut(k).expect("stored") += 1;
        }
        assert_eq!(t.get_mut(cap + 1), None);
        assert_eq!(t.slots().count() as u64, cap);
        assert!(t.slots().all(|&[k, v]| v == k * 7 + 1));
        // Past its cap it still doubles (a caller that stores more is not stuck).
        for k in cap + 1..=3 * cap {
            t.entry(k);
        }
        assert_eq!(t.len() as u64, 3 * cap);
        assert!((1..=3 * cap).all(|k| t.get(k).is_some()));
    }
}
