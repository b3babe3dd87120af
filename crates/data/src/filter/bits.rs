//! A bit array that keeps its set-bit count exact and clears in time proportional to
//! what was set, not to its size.

/// Largest array (bytes of words) backed by huge pages. Probes of a large filter land
/// on random words, and 2 MiB pages spare them a page walk each (about 17 % of the
/// replay time of a 2^28-bit filter); but a huge page is zeroed whole on its
/// first touch, so a short trace through a filter far larger than it would pay for
/// zeroing all of it (512 MiB at 2^32 bits). Up to 2^30 bits (128 MiB, the
/// gigabit filters of the papers) that costs at most about a tenth of a second.
const HUGE_PAGES_UP_TO: usize = 128 << 20;

/// Fixed-size bit array with an exact population count.
///
/// Clearing: the array remembers each 64-bit word that went from zero to non-zero
/// since the last clear, and clears only those. A recycle therefore costs
/// O(words touched) <= O(bits set) = O(sigma + k), which amortises to O(k) per
/// bit-setting message, where a full memset would cost O(M) per recycle (and O(M) per
/// message when sigma is small). The list holds at most one entry per word: M/16 bytes
/// (up to twice that, and M/8 bytes of words, with the power-of-two padding).
///
/// Insertion has no data-dependent branch: whether a bit or a word was already set is
/// random for new messages, so a branch on it mispredicts often, and each misprediction
/// waits for the word's load from L2 (a filter of 2^20 bits does not fit in L1). The
/// clear list is therefore preallocated and written unconditionally, advancing only
/// when the word was zero.
#[derive(Clone, Debug)]
pub struct BitArray {
    /// A power-of-two number of words (see [`BitArray::insert_iter`]).
    words: Vec<u64>,
    mask: usize,
    len: u64,
    set: u64,
    /// Words that became non-zero since the last clear: `touched[..n_touched]`, if
    /// `listed` (else some may be missing, and a clear zeroes every word).
    touched: Vec<u32>,
    n_touched: usize,
    listed: bool,
}

impl BitArray {
    pub fn new(len: u64) -> Self {
        let n_words = (len.div_ceil(64) as usize).next_power_of_two();
        let words = vec![0; n_words];
        if n_words * 8 <= HUGE_PAGES_UP_TO {
            rbf_foundations::prefetch::advise_huge_pages(&words);
        }
        BitArray {
            words,
            mask: n_words - 1,
            len,
            set: 0,
            // One spare entry: the unconditional write lands there once every word is
            // listed.
            touched: vec![0; n_words + 1],
            n_touched: 0,
            listed: true,
        }
    }

    /// Number of bits.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of bits currently set (exact).
    #[inline]
    pub fn count_ones(&self) -> u64 {
        self.set
    }

    #[inline]
    pub fn get(&self, pos: u64) -> bool {
        debug_assert!(pos < self.len);
        let w = (pos >> 6) as usize & self.mask;
        // SAFETY: w <= mask = words.len() - 1.
        let word = unsafe { *self.words.get_unchecked(w) };
        (word >> (pos & 63)) & 1 == 1
    }

    /// Asks the CPU to start loading the word of `pos` (a hint; no effect on results).
    #[inline(always)]
    pub fn prefetch(&self, pos: u64) {
        let w = (pos >> 6) as usize & self.mask;
        rbf_foundations::prefetch::prefetch_ptr(self.words.as_ptr().wrapping_add(w));
    }

    /// Bytes of the bit words (without the clear list).
    pub fn word_bytes(&self) -> usize {
        self.words.len() * 8
    }

    /// True when every position is set.
    #[inline]
    pub fn contains_all(&self, positions: &[u64]) -> bool {
        positions.iter().all(|&p| self.get(p))
    }

    /// Sets every position; returns how many bits went from 0 to 1.
    #[inline(always)]
    pub fn insert(&mut self, positions: &[u64]) -> u32 {
        self.insert_iter(positions.iter().copied())
    }

    /// [`BitArray::insert`] over positions computed on the fly.
    #[inline(always)]
    pub fn insert_iter(&mut self, positions: impl Iterator<Item = u64>) -> u32 {
        self.with_raw(|raw| raw.insert_iter(positions))
    }

    /// Runs `f` on the array's insertion state taken out into a [`RawBits`] (held in
    /// registers across a loop of insertions, where the fields would be reloaded
    /// after every store), then puts it back.
    #[inline(always)]
    pub fn with_raw<R>(&mut self, f: impl FnOnce(&mut RawBits) -> R) -> R {
        let mut raw = RawBits {
            words: self.words.as_mut_ptr(),
            touched: self.touched.as_mut_ptr(),
            mask: self.mask,
            n_touched: self.n_touched,
            listed: self.listed,
            set: self.set,
            #[cfg(debug_assertions)]
            len: self.len,
        };
        let r = f(&mut raw);
        self.n_touched = raw.n_touched;
        self.listed = raw.listed;
        self.set = raw.set;
        r
    }

    /// Clears every bit in O(words touched since the last clear).
    ///
    /// When at least one word in eight was touched, most of the array's cache lines
    /// hold one (a line has eight words), and zeroing the whole array in order is
    /// faster than visiting them at random (for an array larger than the caches each
    /// visit is a memory access). Otherwise the touched words are cleared one by one,
    /// each prefetched a little ahead of its store (the store buffer alone overlaps
    /// few of them).
    pub fn clear(&mut self) {
        const AHEAD: usize = 16;
        if !self.listed || self.n_touched >= self.words.len() / 8 {
            self.words.fill(0);
        } else {
            let touched = &self.touched[..self.n_touched];
            for (i, &w) in touched.iter().enumerate() {
                if let Some(&next) = touched.get(i + AHEAD) {
                    rbf_foundations::prefetch::prefetch_ptr(
                        self.words.as_ptr().wrapping_add(next as usize),
                    );
                }
                self.words[w as usize] = 0;
            }
        }
        self.n_touched = 0;
        self.listed = true;
        self.set = 0;
    }

    /// Bytes held by the words and the clear list.
    pub fn allocated_bytes(&self) -> usize {
        self.words.capacity() * 8 + self.touched.capacity() * 4
    }

    /// Recount from scratch; for tests and debug assertions.
    pub fn recount(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }
}

/// A [`BitArray`]'s insertion state while [`BitArray::with_raw`] lends it out: the
/// words and the clear list by pointer, the counts by value.
pub struct RawBits {
    words: *mut u64,
    touched: *mut u32,
    mask: usize,
    n_touched: usize,
    listed: bool,
    set: u64,
    #[cfg(debug_assertions)]
    len: u64,
}

impl RawBits {
    /// Bits set (exact).
    #[inline(always)]
    pub fn count_ones(&self) -> u64 {
        self.set
    }

    /// Sets every position; returns how many bits went from 0 to 1.
    ///
    /// Indexing is masked instead of bounds-checked (two checks per position were a
    /// tenth of replay's instructions): the word vector has a power-of-two length, so
    /// `w & mask` is always in it. Positions are below the array's length by contract
    /// (the filter's position hasher draws them from [0, len)); a caller breaking it
    /// would set a bit in the padding or in another word, never outside the arrays.
    #[inline(always)]
    pub fn insert_iter(&mut self, positions: impl Iterator<Item = u64>) -> u32 {
        self.insert::<true>(positions)
    }

    /// Stops listing the words insertions touch, until the next clear, which then
    /// zeroes every word: for a caller that knows the clear would do that anyway
    /// (a fill is chosen when one word in eight or more was touched), so that an
    /// insertion saves the list's store and count.
    #[inline(always)]
    pub fn unlist(&mut self) {
        self.listed = false;
    }

    /// The words and the mask that keeps a word index within them (`w & mask`), for a
    /// caller that sets bits itself, if no list of touched words is kept (after
    /// [`RawBits::unlist`]); it then adds the bits it newly set with
    /// [`RawBits::add_set`]. Writing through the pointer is sound while the
    /// [`BitArray::with_raw`] that lent this out runs, at `w & mask` for any `w`.
    #[inline(always)]
    pub fn unlisted_words(&mut self) -> Option<(*mut u64, usize)> {
        (!self.listed).then_some((self.words, self.mask))
    }

    /// Counts `newly` bits set through [`RawBits::unlisted_words`].
    #[inline(always)]
    pub fn add_set(&mut self, newly: u64) {
        self.set += newly;
    }

    /// [`RawBits::insert_iter`], without listing the words touched unless `listed`
    /// (a constant in the caller's loop after [`RawBits::unlist`]).
    #[inline(always)]
    pub fn insert_listed(&mut self, positions: impl Iterator<Item = u64>) -> u32 {
        if self.listed {
            self.insert::<true>(positions)
        } else {
            self.insert::<false>(positions)
        }
    }

    /// Sets the bits at `positions`, listing each word on its transition from zero
    /// when `LIST` (a constant: the unlisted loop has no list store or count).
    #[inline(always)]
    fn insert<const LIST: bool>(&mut self, positions: impl Iterator<Item = u64>) -> u32 {
        // Locals, so that the stores through the raw pointers do not make the compiler
        // reload the fields after every position.
        let (words, touched, mask) = (self.words, self.touched, self.mask);
        let mut n_touched = self.n_touched;
        let mut newly = 0u32;
        for p in positions {
            #[cfg(debug_assertions)]
            debug_assert!(p < self.len);
            let w = (p >> 6) as usize & mask;
            let bit = p & 63;
            // SAFETY: the pointers are those of the BitArray lent out by `with_raw`,
            // which holds it borrowed mutably meanwhile. w <= mask = words.len() - 1.
            // n_touched <= words.len() < touched.len(): a word is listed only on its
            // transition from zero, at most once between clears (and not at all after
            // `unlist`, until the clear that zeroes every word).
            let word = unsafe {
                let word = *words.add(w);
                *words.add(w) = word | (1 << bit);
                if LIST {
                    *touched.add(n_touched) = w as u32;
                }
                word
            };
            newly += ((!word >> bit) & 1) as u32;
            if LIST {
                n_touched += usize::from(word == 0);
            }
        }
        self.n_touched = n_touched;
        self.set += u64::from(newly);
        newly
    }

    /// Asks the CPU to start loading the word of `pos` (a hint; no effect on results).
    #[inline(always)]
    pub fn prefetch(&self, pos: u64) {
        let w = (pos >> 6) as usize & self.mask;
        rbf_foundations::prefetch::prefetch_ptr(self.words.wrapping_add(w).cast_const());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_transitions_and_clears() {
        let mut b = BitArray::new(130);
        assert_eq!(b.insert(&[0, 0, 64, 129]), 3);
        assert_eq!(b.count_ones(), 3);
        assert!(b.contains_all(&[0, 64, 129]));
        assert!(!b.contains_all(&[0, 1]));
        assert_eq!(b.insert(&[0, 1]), 1);
        assert_eq!(b.count_ones(), b.recount());
        b.clear();
        assert_eq!(b.count_ones(), 0);
        assert_eq!(b.recount(), 0);
        assert!(!b.get(129));
        assert_eq!(b.insert(&[5]), 1);
        assert_eq!(b.recount(), 1);
    }

    #[test]
    fn unlisted_insertions_are_cleared_whole() {
        // Words touched after `unlist` are not in the clear list: the next clear must
        // zero them all the same, and list again afterwards.
        let mut b = BitArray::new(64 * 64);
        assert_eq!(b.insert(&[3]), 1);
        let newly = b.with_raw(|raw| {
            raw.unlist();
            raw.insert_listed((0..40u64).map(|i| i * 97 % 4096))
        });
        assert_eq!(newly, 40);
        assert_eq!(b.count_ones(), 41);
        assert_eq!(b.count_ones(), b.recount());
        assert!(
            b.n_touched < b.words.len() / 8,
            "a listed clear would miss words"
        );
        b.clear();
        assert_eq!(b.recount(), 0);
        assert!(b.listed);
        assert_eq!(b.insert(&[100, 200]), 2);
        assert_eq!(b.n_touched, 2);
    }

    #[test]
    fn every_word_touched_fits_the_clear_list() {
        // Each of the 3 words goes from zero to non-zero once per cycle, over and over:
        // the clear list must never need more than one entry per word.
        let mut b = BitArray::new(130);
        for round in 0..5u64 {
            for p in 0..130u64 {
                b.insert(&[(p * 7 + round) % 130]);
            }
            assert_eq!(b.count_ones(), 130);
            assert_eq!(b.n_touched, 3);
            b.clear();
            assert_eq!(b.recount(), 0);
        }
    }
}
