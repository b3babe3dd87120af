//! The popularity ranking of the FN paper's arrival model: D message ids in rank order,
//! where a new message is inserted at a rank, pushing lower ranks down and evicting the
//! last one.
//!
//! Blocks of equal size B (square-root decomposition): rank r lives at block r / B,
//! offset r % B. An insertion shifts within one block (O(B)) and then moves one id
//! across each later block boundary (O(D / B)), so with B ~ sqrt(D) each new arrival
//! costs O(sqrt D) instead of the O(D) of a plain vector.

use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub struct Ranking {
    blocks: Vec<VecDeque<u64>>,
    block: usize,
    len: usize,
}

impl Ranking {
    /// Ranks 0..ids.len() hold `ids` in order.
    pub fn new(ids: impl IntoIterator<Item = u64>) -> Self {
        let ids: Vec<u64> = ids.into_iter().collect();
        let len = ids.len();
        let block = ((len as f64).sqrt() as usize).max(64);
        let mut blocks: Vec<VecDeque<u64>> = Vec::with_capacity(len.div_ceil(block));
        for id in ids {
            match blocks.last_mut() {
                Some(b) if b.len() < block => b.push_back(id),
                _ => {
                    let mut b = VecDeque::with_capacity(block + 1);
                    b.push_back(id);
                    blocks.push(b);
                }
            }
        }
        Ranking { blocks, block, len }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The id at `rank`.
    #[inline]
    pub fn get(&self, rank: usize) -> u64 {
        self.blocks[rank / self.block][rank % self.block]
    }

    /// Inserts `id` at `rank`, shifting ranks >= `rank` down by one; the id that falls
    /// off the end is returned.
    pub fn insert(&mut self, rank: usize, id: u64) -> u64 {
        assert!(rank < self.len);
        let b = rank / self.block;
        self.blocks[b].insert(rank % self.block, id);
        for j in b..self.blocks.len() - 1 {
            let moved = self.blocks[j].pop_back().expect("blocks are never empty");
            self.blocks[j + 1].push_front(moved);
        }
        self.blocks
            .last_mut()
            .and_then(|last| last.pop_back())
            .expect("blocks are never empty")
    }

    /// Ids in rank order (for tests and explicit dumps).
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.blocks.iter().flat_map(|b| b.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::rng::Rng;

    #[test]
    fn agrees_with_a_vector() {
        let n = 1000;
        let mut r = Ranking::new(0..n as u64);
        let mut v: Vec<u64> = (0..n as u64).collect();
        let mut rng = Rng::seed(9);
        for id in n as u64..n as u64 + 3000 {
            let rank = rng.below(n as u64) as usize;
            let rank = match id % 3 {
                0 => 0,
                1 => n - 1,
                _ => rank,
            };
            v.insert(rank, id);
            let evicted = v.pop().unwrap();
            assert_eq!(r.insert(rank, id), evicted);
        }
        assert_eq!(r.iter().collect::<Vec<_>>(), v);
        assert!((0..n).all(|i| r.get(i) == v[i]));
    }
}
