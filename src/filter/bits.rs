//! A bit array that keeps its set-bit count exact and clears in time proportional to
//! what was set, not to its size.

/// Fixed-size bit array with an exact population count.
///
/// Clearing: the array remembers each 64-bit word that went from zero to non-zero
/// since the last clear, and clears only those. A recycle therefore costs
/// O(words touched) <= O(bits set) = O(sigma + k), which amortises to O(k) per
/// bit-setting message, where a full memset would cost O(M) per recycle (and O(M) per
/// message when sigma is small). The list holds at most one entry per word: M/16 bytes.
///
/// Insertion has no data-dependent branch: whether a bit or a word was already set is
/// random for new messages, so a branch on it mispredicts often, and each misprediction
/// waits for the word's load from L2 (a filter of 2^20 bits does not fit in L1). The
/// clear list is therefore preallocated and written unconditionally, advancing only
/// when the word was zero.
#[derive(Clone, Debug)]
pub struct BitArray {
    words: Vec<u64>,
    len: u64,
    set: u64,
    /// Words that became non-zero since the last clear: `touched[..n_touched]`.
    touched: Vec<u32>,
    n_touched: usize,
}

impl BitArray {
    pub fn new(len: u64) -> Self {
        let n_words = len.div_ceil(64) as usize;
        BitArray {
            words: vec![0; n_words],
            len,
            set: 0,
            // One spare entry: the unconditional write lands there once every word is
            // listed.
            touched: vec![0; n_words + 1],
            n_touched: 0,
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
        (self.words[(pos >> 6) as usize] >> (pos & 63)) & 1 == 1
    }

    /// True when every position is set.
    #[inline]
    pub fn contains_all(&self, positions: &[u64]) -> bool {
        positions.iter().all(|&p| self.get(p))
    }

    /// Sets every position; returns how many bits went from 0 to 1.
    #[inline]
    pub fn insert(&mut self, positions: &[u64]) -> u32 {
        self.insert_iter(positions.iter().copied())
    }

    /// [`BitArray::insert`] over positions computed on the fly.
    #[inline(always)]
    pub fn insert_iter(&mut self, positions: impl Iterator<Item = u64>) -> u32 {
        let mut newly = 0u32;
        for p in positions {
            debug_assert!(p < self.len);
            let w = (p >> 6) as usize;
            let bit = p & 63;
            let word = self.words[w];
            newly += ((!word >> bit) & 1) as u32;
            self.words[w] = word | (1 << bit);
            self.touched[self.n_touched] = w as u32;
            self.n_touched += usize::from(word == 0);
        }
        self.set += u64::from(newly);
        newly
    }

    /// Asks the CPU to start loading the word of bit `pos` (a hint; no effect on
    /// results).
    #[inline(always)]
    pub fn prefetch(&self, pos: u64) {
        crate::prefetch::prefetch_ptr(self.words.as_ptr().wrapping_add((pos >> 6) as usize));
    }

    /// Clears every bit in O(words touched since the last clear).
    pub fn clear(&mut self) {
        for &w in &self.touched[..self.n_touched] {
            self.words[w as usize] = 0;
        }
        self.n_touched = 0;
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
}
