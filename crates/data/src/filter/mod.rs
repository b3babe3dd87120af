//! Recycling Bloom filters (FP paper §II, FN paper §2-3): one-phase and two-phase,
//! sigma- or N-bounded, colliding or distinct hashing, retaining or not, with or
//! without copy-over.
//!
//! One mechanism serves both phase counts: a filter owns one bit array (one-phase) or
//! two (two-phase: active and frozen). A recycle clears the array that is about to
//! become active: for one phase that is the only array, for two phases it is the frozen
//! one, after which the roles swap.

mod bits;
mod config;
mod positions;

pub use bits::{BitArray, RawBits};
pub use config::{FilterConfig, Hashing, Positions, Trigger, MAX_HASHES, MAX_MEMORY};
pub use positions::{
    mix64, PositionBlock, PositionBuf, PositionHasher, BLOCK_HASHES, POSITION_BLOCK,
};

use rbf_foundations::error::Result;

/// What one arrival did to the filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Classified as a repeat: all k bits set in the active array, or (two-phase) in the
    /// frozen one.
    pub found: bool,
    /// Bits this arrival set in the active array before any recycle (0 for a message
    /// classified as repeat).
    pub new_bits: u32,
    /// The message is recorded in the array that was active when it arrived: it was
    /// inserted there (always, for one phase; for two phases unless it was found only in
    /// the frozen half without copy-over).
    pub inserted: bool,
    /// This arrival's insertion pushed the filter over its trigger and it recycled.
    pub recycled: bool,
}

/// A recycling Bloom filter.
#[derive(Clone, Debug)]
pub struct RecyclingFilter {
    arrays: Vec<BitArray>,
    hashers: Vec<PositionHasher>,
    /// Each array's own seed, from which its per-cycle seeds derive.
    seeds: Vec<u64>,
    positions: Positions,
    active: usize,
    trigger: Trigger,
    retaining: bool,
    copy_over: bool,
    /// Bit-setting insertions into the active array in this cycle.
    inserts: u64,
    recycles: u64,
    k: usize,
    /// Scratch space for positions, kept here so a call does not zero 512 bytes.
    buf: PositionBuf,
}

impl RecyclingFilter {
    pub fn new(config: &FilterConfig) -> Result<Self> {
        config.validate()?;
        rbf_foundations::resources::check_memory(
            &format!("a filter of M = {} bits", config.memory),
            config.memory as f64 / 8.0,
        )?;
        let phases = usize::from(config.phases);
        let half = config.half_memory();
        let seeds: Vec<u64> = (0..phases)
            .map(|i| {
                // Independent halves: the second array draws positions with another seed.
                if config.independent_halves {
                    config.seed ^ mix64(i as u64 + 1)
                } else {
                    config.seed
                }
            })
            .collect();
        let hashers = seeds
            .iter()
            .map(|&seed| {
                let seed = cycle_seed(config.positions_or(Positions::Fixed), seed, 0);
                PositionHasher::new(half, config.hashes, config.hashing, seed)
            })
            .collect();
        Ok(RecyclingFilter {
            arrays: (0..phases).map(|_| BitArray::new(half)).collect(),
            hashers,
            seeds,
            positions: config.positions_or(Positions::Fixed),
            active: 0,
            trigger: config.trigger()?,
            retaining: config.retaining,
            copy_over: config.copy_over,
            inserts: 0,
            recycles: 0,
            k: config.hashes as usize,
            buf: [0; MAX_HASHES as usize],
        })
    }

    /// 1 or 2.
    pub fn phases(&self) -> usize {
        self.arrays.len()
    }

    /// How many most recent cycles a message stays recorded for: 1 for one phase
    /// (the current cycle), 2 for two phases (the active and the frozen half).
    pub fn record_window(&self) -> u64 {
        self.arrays.len() as u64
    }

    /// Recycles so far.
    pub fn recycles(&self) -> u64 {
        self.recycles
    }

    /// Bits set in the active array.
    pub fn active_bits(&self) -> u64 {
        self.arrays[self.active].count_ones()
    }

    /// Bits set in the frozen array (0 for one phase).
    pub fn frozen_bits(&self) -> u64 {
        if self.arrays.len() == 2 {
            self.arrays[1 - self.active].count_ones()
        } else {
            0
        }
    }

    /// Bit-setting insertions into the active array in this cycle.
    pub fn active_inserts(&self) -> u64 {
        self.inserts
    }

    /// Positions of `key` in physical array `array` (for tests and reference models).
    pub fn positions(&self, key: u64, array: usize) -> Vec<u64> {
        let mut buf = [0; MAX_HASHES as usize];
        self.hashers[array].positions(key, &mut buf).to_vec()
    }

    /// Physical index of the active array.
    pub fn active_index(&self) -> usize {
        self.active
    }

    /// Classifies and records one arrival.
    #[inline(always)]
    pub fn process(&mut self, key: u64) -> Outcome {
        if self.arrays.len() == 1 {
            // Insert and test in one pass: a message is found iff it sets no bit.
            let new_bits = if self.hashers[0].hashing() == Hashing::Colliding {
                self.arrays[0].insert_iter(self.hashers[0].colliding(key))
            } else {
                let p = self.hashers[0].positions(key, &mut self.buf);
                self.arrays[0].insert(p)
            };
            return self.settle(key, new_bits == 0, new_bits, true);
        }
        let buf = &mut self.buf;
        let a = self.active;
        let f = 1 - a;
        let in_frozen = {
            let pf = self.hashers[f].positions(key, buf);
            self.arrays[f].contains_all(pf)
        };
        let pa = self.hashers[a].positions(key, buf);
        let (found, new_bits, inserted) = if !in_frozen || self.copy_over {
            let new_bits = self.arrays[a].insert(pa);
            (in_frozen || new_bits == 0, new_bits, true)
        } else {
            // Found in the frozen half and no copy-over: the active half is left
            // alone; the message counts as recorded there only if it already is.
            let in_active = self.arrays[a].contains_all(pa);
            (true, 0, in_active)
        };
        self.settle(key, found, new_bits, inserted)
    }

    /// [`RecyclingFilter::process`] for a one-phase filter whose caller computed the
    /// key's positions itself ([`RecyclingFilter::hasher`]), with k known at compile
    /// time.
    #[inline(always)]
    pub fn process_positions(&mut self, key: u64, positions: &[u64]) -> Outcome {
        debug_assert_eq!(self.arrays.len(), 1);
        let new_bits = self.arrays[0].insert(positions);
        self.settle(key, new_bits == 0, new_bits, true)
    }

    /// Runs `f` on a one-phase filter's state taken out for a loop of arrivals
    /// ([`OnePhase`]: the bit array's pointers and counts and the trigger in locals,
    /// which the compiler keeps in registers), then puts it back. When
    /// [`OnePhase::insert`] says the trigger fired, `f` must return, and the caller
    /// recycle with [`RecyclingFilter::recycle_fired`] before the next arrival.
    #[inline(always)]
    pub fn with_one_phase<R>(&mut self, f: impl FnOnce(&mut OnePhase<'_>) -> R) -> R {
        debug_assert_eq!(self.arrays.len(), 1);
        let (sigma, limit) = match self.trigger {
            Trigger::Sigma(s) => (true, s),
            Trigger::MaxInserts(n) => (false, n),
        };
        let mut inserts = self.inserts;
        let unlisted = self.clears_whole();
        let r = self.arrays[0].with_raw(|bits| {
            if unlisted {
                bits.unlist();
            }
            let mut state = OnePhase {
                bits,
                inserts,
                sigma,
                limit,
            };
            let r = f(&mut state);
            inserts = state.inserts;
            r
        });
        self.inserts = inserts;
        r
    }

    /// Whether every recycle of a one-phase filter zeroes its whole array
    /// ([`BitArray::clear`] does when one word in eight or more was touched): a cycle
    /// ends with more than sigma bits set (sigma-bounded) or more than N bit-setting
    /// insertions, so at least as many bits, and a word holds 64. Then the list of
    /// words touched is not needed ([`RawBits::unlist`]).
    pub fn clears_whole(&self) -> bool {
        clears_whole(self.trigger, self.arrays[0].word_bytes() as u64 / 8)
    }

    /// How far the trigger's level (set bits of the active array when sigma-bounded,
    /// bit-setting insertions in the cycle otherwise) is below the level that fires
    /// it: arrivals that raise it by no more than this in all cannot recycle the filter.
    pub fn headroom(&self) -> u64 {
        match self.trigger {
            Trigger::Sigma(s) => s.saturating_sub(self.arrays[self.active].count_ones()),
            Trigger::MaxInserts(n) => n.saturating_sub(self.inserts),
        }
    }

    /// Whether the trigger counts set bits (sigma-bounded), else bit-setting insertions.
    pub fn sigma_bounded(&self) -> bool {
        matches!(self.trigger, Trigger::Sigma(_))
    }

    /// Recycles a one-phase filter after [`OnePhase::insert`] said the trigger fired
    /// on the arrival of `key` (as [`RecyclingFilter::process`] would have).
    #[cold]
    pub fn recycle_fired(&mut self, key: u64) {
        self.recycle(key);
    }

    /// Asks the CPU to start loading the words of `positions` in a one-phase filter's
    /// array (a hint; no effect on results).
    #[inline(always)]
    pub fn prefetch_positions(&self, positions: &[u64]) {
        for &p in positions {
            self.arrays[0].prefetch(p);
        }
    }

    /// [`RecyclingFilter::prefetch_positions`] for one position.
    #[inline(always)]
    pub fn prefetch_position(&self, position: u32) {
        self.arrays[0].prefetch(u64::from(position));
    }

    /// Asks the CPU to start loading every word `key` probes, in every array (a hint;
    /// no effect on results).
    #[inline(always)]
    pub fn prefetch_key(&self, key: u64) {
        let mut buf = [0; MAX_HASHES as usize];
        for (array, hasher) in self.arrays.iter().zip(&self.hashers) {
            for &p in hasher.positions(key, &mut buf) {
                array.prefetch(p);
            }
        }
    }

    /// Bytes of the largest bit array's words: whether it fits in a cache.
    pub fn array_bytes(&self) -> usize {
        self.arrays
            .iter()
            .map(BitArray::word_bytes)
            .max()
            .unwrap_or(0)
    }

    /// Fixed positions, or new ones at every recycle.
    pub fn positions_mode(&self) -> Positions {
        self.positions
    }

    /// The position generator of physical array `array` (for [`Positions::PerCycle`],
    /// the current cycle's).
    pub fn hasher(&self, array: usize) -> &PositionHasher {
        &self.hashers[array]
    }

    /// Counts a bit-setting insertion and recycles when the trigger fires.
    #[inline(always)]
    fn settle(&mut self, key: u64, found: bool, new_bits: u32, inserted: bool) -> Outcome {
        // Whether an arrival sets a bit is random: counted without a branch, and the
        // trigger (which only a bit-setting arrival can fire) tested without a
        // short-circuit, so that the one branch left is the rarely taken recycle.
        let bit_setting = new_bits > 0;
        self.inserts += u64::from(bit_setting);
        let recycled = bit_setting & self.exceeded();
        if recycled {
            self.recycle(key);
        }
        Outcome {
            found,
            new_bits,
            inserted,
            recycled,
        }
    }

    #[inline(always)]
    fn exceeded(&self) -> bool {
        match self.trigger {
            Trigger::Sigma(s) => self.arrays[self.active].count_ones() > s,
            Trigger::MaxInserts(n) => self.inserts > n,
        }
    }

    /// Clears the array that becomes active and, when retaining, records the message
    /// that triggered the recycle as the new cycle's first message. The retained
    /// insertion is not checked against the trigger (only possible when sigma < k).
    #[cold]
    fn recycle(&mut self, key: u64) {
        let next = if self.arrays.len() == 2 {
            1 - self.active
        } else {
            self.active
        };
        self.arrays[next].clear();
        self.active = next;
        self.inserts = 0;
        self.recycles += 1;
        if self.positions == Positions::PerCycle {
            let h = &self.hashers[next];
            let seed = cycle_seed(self.positions, self.seeds[next], self.recycles);
            self.hashers[next] = PositionHasher::new(h.range(), h.k() as u32, h.hashing(), seed);
        }
        if self.retaining {
            let p = self.hashers[next].positions(key, &mut self.buf);
            if self.arrays[next].insert(p) > 0 {
                self.inserts = 1;
            }
        }
    }

    /// Bytes held by the bit arrays and their clear lists.
    pub fn allocated_bytes(&self) -> usize {
        self.arrays.iter().map(BitArray::allocated_bytes).sum()
    }

    pub fn k(&self) -> usize {
        self.k
    }
}

/// A one-phase filter's state lent out by [`RecyclingFilter::with_one_phase`].
pub struct OnePhase<'a> {
    bits: &'a mut RawBits,
    /// Bit-setting insertions in the cycle before the current stretch of arrivals
    /// ([`OnePhase::insert`]).
    inserts: u64,
    /// The trigger: sigma-bounded (fires when the set bits pass `limit`) or N-bounded
    /// (when the bit-setting insertions do).
    sigma: bool,
    limit: u64,
}

impl OnePhase<'_> {
    /// Whether the trigger counts set bits (sigma-bounded), else bit-setting
    /// insertions: the `SIGMA` of [`OnePhase::insert`].
    pub fn sigma_bounded(&self) -> bool {
        self.sigma
    }

    /// [`RecyclingFilter::process_positions`] without the recycle: the bits an
    /// arrival with `positions` sets, and whether it fired the trigger. The caller
    /// counts the bit-setting arrivals of a stretch itself (it does anyway):
    /// `stretch` is that count before this arrival, added to the cycle's by
    /// [`OnePhase::end_stretch`]; `SIGMA` is [`OnePhase::sigma_bounded`] (a constant,
    /// so that the loop keeps one comparison and no extra count).
    #[inline(always)]
    pub fn insert<const K: usize, const SIGMA: bool>(
        &mut self,
        positions: [u32; K],
        stretch: u64,
    ) -> (u32, bool) {
        debug_assert_eq!(SIGMA, self.sigma);
        let new_bits = self
            .bits
            .insert_listed(positions.into_iter().map(u64::from));
        // As RecyclingFilter::settle: only a bit-setting arrival fires the trigger.
        let bit_setting = new_bits > 0;
        let level = if SIGMA {
            self.bits.count_ones()
        } else {
            self.inserts + stretch + u64::from(bit_setting)
        };
        (new_bits, bit_setting & (level > self.limit))
    }

    /// Ends a stretch of arrivals that had `bit_setting` bit-setting ones.
    #[inline(always)]
    pub fn end_stretch(&mut self, bit_setting: u64) {
        self.inserts += bit_setting;
    }

    /// The bit array, for a kernel that sets the bits of several filters itself
    /// ([`RawBits::unlisted_words`]).
    #[inline(always)]
    pub fn bits(&mut self) -> &mut RawBits {
        self.bits
    }

    /// Asks the CPU to start loading the word of `pos` (a hint; no effect on results).
    #[inline(always)]
    pub fn prefetch(&self, pos: u32) {
        self.bits.prefetch(u64::from(pos));
    }
}

/// [`RecyclingFilter::clears_whole`] for a trigger and an array of `words` words.
fn clears_whole(trigger: Trigger, words: u64) -> bool {
    let limit = match trigger {
        Trigger::Sigma(s) => s,
        Trigger::MaxInserts(n) => n,
    };
    limit / 64 >= words / 8
}

/// Whether a filter of `config`, replayed beside other hash seeds' filters by the
/// shared kernel (one phase, positions drawn in blocks), never writes its clear list:
/// every recycle zeroes its whole array ([`RecyclingFilter::with_one_phase`]), so the
/// list's pages stay untouched (for the memory predicted up front).
pub fn shared_kernel_unlisted(config: &FilterConfig) -> bool {
    let words = config.half_memory().div_ceil(64).next_power_of_two();
    let blockwise =
        PositionHasher::new(config.half_memory(), config.hashes, config.hashing, 0).blockwise();
    config.phases == 1 && blockwise && config.trigger().is_ok_and(|t| clears_whole(t, words))
}

/// The seed of an array whose own seed is `seed` for the cycle that starts with
/// recycle number `recycle` (0: the first cycle): `seed` itself for fixed positions.
pub fn cycle_seed(positions: Positions, seed: u64, recycle: u64) -> u64 {
    match positions {
        Positions::Fixed => seed,
        Positions::PerCycle => mix64(seed ^ mix64(recycle.wrapping_add(0x5a17))),
    }
}

#[cfg(test)]
mod tests;
