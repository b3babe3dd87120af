//! From one 64-bit message key to k bit positions.
//!
//! The key is mixed with the filter seed into `h = mix64(key ^ seed)`, and the positions
//! are drawn from a stream of uniform 64-bit values: `h` itself, then the SplitMix64
//! finaliser of `h + j * GOLDEN` for j = 1, 2, ... A value x is reduced to `[0, range)`
//! with Lemire's multiply-shift: the high word of the 128-bit product `x * range`.
//!
//! Two positions per value (`range` up to [`PAIR_RANGE_MAX`]): the low word of that
//! product is again nearly uniform, and independent of the first position. Given the
//! high word `p`, x runs over about 2^64 / range consecutive integers, so the low word
//! runs over an arithmetic progression of step `range` covering [0, 2^64); its own
//! high word after a second multiply by `range` is then uniform on `[0, range)` up to
//! one count in 2^64 / range^2, a relative deviation below 2^-12 per bit at
//! range = 2^26 (2^-24 at 2^20). Each position thus costs one multiply, and a key one
//! mix per two positions (the first two come from `h`), where a mix per position
//! cost about a third of replay's instructions.
//!
//! Why not plain double hashing (`h1 + i h2 mod M`): its positions lie on an
//! arithmetic progression modulo M, a correlation the models (which assume independent
//! uniform positions) do not have; with small M (1000 bits, as in the papers) that
//! shows up in tight model-vs-replay comparisons.

use super::config::{Hashing, MAX_HASHES};

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// Largest range whose positions are drawn two per 64-bit value (see the module docs);
/// above it each position uses a value of its own.
pub const PAIR_RANGE_MAX: u64 = 1 << 26;

/// Keys whose positions [`PositionHasher::block_positions`] computes in one call.
pub const POSITION_BLOCK: usize = 256;

/// Most positions per key [`PositionHasher::block_positions`] computes.
pub const BLOCK_HASHES: usize = 8;

/// The positions of up to [`POSITION_BLOCK`] keys, one row per draw: `draws[d][i]` is
/// position d of key i. Rows, not one row per key, so that the loops filling them
/// are vectorised across keys; u32, since positions drawn two per value are below
/// [`PAIR_RANGE_MAX`].
pub struct PositionBlock {
    pub draws: [[u32; POSITION_BLOCK]; BLOCK_HASHES],
    /// The keys' mixed keys (`h` of the module docs).
    mixed: [u64; POSITION_BLOCK],
}

impl PositionBlock {
    pub fn new() -> Box<Self> {
        Box::new(PositionBlock {
            draws: [[0; POSITION_BLOCK]; BLOCK_HASHES],
            mixed: [0; POSITION_BLOCK],
        })
    }
}

/// SplitMix64's output function (Steele, Lea, Flood 2014): a bijective 64-bit mixer.
#[inline(always)]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The 128-bit product of `x` and `range`: (high word, low word). The high word is
/// `x` mapped to [0, range) (Lemire 2019, "fastrange").
#[inline(always)]
fn wide(x: u64, range: u64) -> (u64, u64) {
    let p = u128::from(x) * u128::from(range);
    ((p >> 64) as u64, p as u64)
}

/// [`wide`] for `range < 2^32`, from 32-bit halves: what vector units multiply (a
/// 64 x 64 -> 128-bit product has no vector instruction), the same two words.
#[inline(always)]
fn wide_small(x: u64, range: u64) -> (u64, u64) {
    debug_assert!(range >> 32 == 0);
    // The mask tells the compiler the high half is zero: 32 x 32 -> 64-bit multiplies.
    let r = range & 0xFFFF_FFFF;
    let low = (x & 0xFFFF_FFFF) * r;
    let t = (x >> 32) * r + (low >> 32);
    (t >> 32, t << 32 | low & 0xFFFF_FFFF)
}

/// Bit-position generator for one filter array.
#[derive(Clone, Copy, Debug)]
pub struct PositionHasher {
    range: u64,
    k: usize,
    hashing: Hashing,
    seed: u64,
    /// Two positions per 64-bit value (`range <= PAIR_RANGE_MAX`).
    pairs: bool,
}

/// Stack buffer for positions.
pub type PositionBuf = [u64; MAX_HASHES as usize];

impl PositionHasher {
    pub fn new(range: u64, k: u32, hashing: Hashing, seed: u64) -> Self {
        assert!((1..=MAX_HASHES).contains(&k) && range >= 1);
        assert!(hashing == Hashing::Colliding || u64::from(k) <= range);
        PositionHasher {
            range,
            k: k as usize,
            hashing,
            seed: mix64(seed ^ 0x5851_F42D_4C95_7F2D),
            pairs: range <= PAIR_RANGE_MAX,
        }
    }

    pub fn k(&self) -> usize {
        self.k
    }

    pub fn range(&self) -> u64 {
        self.range
    }

    pub fn hashing(&self) -> Hashing {
        self.hashing
    }

    /// The j-th uniform value of a key's stream (j = 0 is `h` itself).
    #[inline(always)]
    fn value(h: u64, j: u64) -> u64 {
        if j == 0 {
            h
        } else {
            mix64(h.wrapping_add(j.wrapping_mul(GOLDEN)))
        }
    }

    /// Draw `d` (0, 1, 2, ...) of the key whose mixed key is `h`.
    #[inline(always)]
    fn draw(&self, h: u64, d: u64) -> u64 {
        if self.pairs {
            let (first, low) = wide(Self::value(h, d / 2), self.range);
            if d.is_multiple_of(2) {
                first
            } else {
                wide(low, self.range).0
            }
        } else {
            wide(Self::value(h, d), self.range).0
        }
    }

    /// The colliding positions of `key`, computed lazily (no buffer): draws 0..k.
    #[inline(always)]
    pub fn colliding(&self, key: u64) -> impl Iterator<Item = u64> + '_ {
        let h = mix64(key ^ self.seed);
        (0..self.k as u64).map(move |d| self.draw(h, d))
    }

    /// [`PositionHasher::positions`] with k known at compile time (`K == k`), so the
    /// colliding loop unrolls; K = 0 means any k.
    #[inline(always)]
    pub fn positions_k<'a, const K: usize>(&self, key: u64, out: &'a mut PositionBuf) -> &'a [u64] {
        if K == 0 || self.hashing == Hashing::Distinct || !self.pairs {
            return self.positions(key, out);
        }
        debug_assert_eq!(K, self.k);
        let h = mix64(key ^ self.seed);
        // One value per pair of draws, as in `draw`.
        for (j, pair) in out[..K].chunks_mut(2).enumerate() {
            let (first, low) = wide(Self::value(h, j as u64), self.range);
            pair[0] = first;
            if let Some(second) = pair.get_mut(1) {
                *second = wide(low, self.range).0;
            }
        }
        &out[..K]
    }

    /// Whether [`PositionHasher::block_positions`] serves this hasher: colliding
    /// positions, k at most [`BLOCK_HASHES`], below 2^32 (a block's positions are
    /// u32, reduced from 32-bit halves).
    pub fn blockwise(&self) -> bool {
        self.hashing == Hashing::Colliding && self.k <= BLOCK_HASHES && self.range >> 32 == 0
    }

    /// The positions of `keys` (at most [`POSITION_BLOCK`]), k = K, into `block`: the
    /// values [`PositionHasher::positions`] gives, computed draw by draw across the
    /// keys (loops the compiler vectorises, where one key's k positions are a chain
    /// of dependent steps). Only for [`PositionHasher::blockwise`] hashers.
    #[inline(always)]
    pub fn block_positions<const K: usize>(&self, keys: &[u64], block: &mut PositionBlock) {
        debug_assert!(self.blockwise() && K == self.k && keys.len() <= POSITION_BLOCK);
        let n = keys.len().min(POSITION_BLOCK);
        let (range, seed) = (self.range, self.seed);
        let mixed = &mut block.mixed[..n];
        for (h, &key) in mixed.iter_mut().zip(keys) {
            *h = mix64(key ^ seed);
        }
        if !self.pairs {
            return self.block_singles::<K>(n, block);
        }
        // Value j gives draws 2j and 2j + 1 (`draw`); the second row is filled for odd
        // K too (unused), which keeps the loop free of branches.
        for j in 0..K.div_ceil(2) {
            let (a, b) = block.draws.split_at_mut(2 * j + 1);
            let (first, second) = (&mut a[2 * j][..n], &mut b[0][..n]);
            let step = (j as u64).wrapping_mul(GOLDEN);
            for ((&h, p0), p1) in mixed.iter().zip(first).zip(second) {
                let v = if j == 0 {
                    h
                } else {
                    mix64(h.wrapping_add(step))
                };
                let (p, low) = wide_small(v, range);
                *p0 = p as u32;
                *p1 = wide_small(low, range).0 as u32;
            }
        }
    }

    /// [`PositionHasher::block_positions`] for ranges above [`PAIR_RANGE_MAX`] (filters
    /// beyond the caches): draw d from value d alone, as in `draw`.
    #[inline(always)]
    fn block_singles<const K: usize>(&self, n: usize, block: &mut PositionBlock) {
        let range = self.range;
        for (d, row) in block.draws[..K].iter_mut().enumerate() {
            let step = (d as u64).wrapping_mul(GOLDEN);
            for (&h, p) in block.mixed[..n].iter().zip(&mut row[..n]) {
                let v = if d == 0 {
                    h
                } else {
                    mix64(h.wrapping_add(step))
                };
                *p = wide_small(v, range).0 as u32;
            }
        }
    }

    /// Writes the k positions of `key` into `out[..k]` and returns that slice.
    #[inline(always)]
    pub fn positions<'a>(&self, key: u64, out: &'a mut PositionBuf) -> &'a [u64] {
        let h = mix64(key ^ self.seed);
        match self.hashing {
            Hashing::Colliding => {
                for (d, slot) in out[..self.k].iter_mut().enumerate() {
                    *slot = self.draw(h, d as u64);
                }
            }
            Hashing::Distinct => {
                // Rejection sampling without replacement: k <= 64 and in practice
                // k << range, so redraws are rare and the scan is short.
                let mut d = 0u64;
                let mut i = 0;
                while i < self.k {
                    let p = self.draw(h, d);
                    d += 1;
                    if !out[..i].contains(&p) {
                        out[i] = p;
                        i += 1;
                    }
                }
            }
        }
        &out[..self.k]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_in_range_and_deterministic() {
        let h = PositionHasher::new(1000, 7, Hashing::Colliding, 42);
        let mut a = [0; 64];
        let mut b = [0; 64];
        for key in 0..1000u64 {
            let pa = h.positions(key, &mut a).to_vec();
            let pb = h.positions(key, &mut b);
            assert_eq!(pa, pb);
            assert!(pa.iter().all(|&p| p < 1000));
        }
    }

    #[test]
    fn distinct_positions_are_distinct() {
        let h = PositionHasher::new(8, 8, Hashing::Distinct, 1);
        let mut a = [0; 64];
        for key in 0..200u64 {
            let mut p = h.positions(key, &mut a).to_vec();
            p.sort_unstable();
            assert_eq!(p, (0..8).collect::<Vec<_>>());
        }
    }

    #[test]
    fn positions_are_roughly_uniform_and_pairwise_independent() {
        // Chi-square over 16 cells of (pos0, pos1) pairs: 256 cells, 256k samples.
        let h = PositionHasher::new(16, 2, Hashing::Colliding, 7);
        let mut counts = [0u32; 256];
        let mut buf = [0; 64];
        let n = 256 * 1000;
        for key in 0..n as u64 {
            let p = h.positions(key, &mut buf);
            counts[(p[0] * 16 + p[1]) as usize] += 1;
        }
        let e = n as f64 / 256.0;
        let chi2: f64 = counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum();
        // 255 degrees of freedom: the 0.999 quantile is about 330.
        assert!(chi2 < 330.0, "chi2 = {chi2}");
    }

    /// Chi-square over 16 x 16 cells of (position a, position b), positions binned by
    /// sixteenths of the range.
    fn pair_chi2(h: &PositionHasher, a: usize, b: usize, n: u64) -> f64 {
        let mut counts = [0u32; 256];
        let mut buf = [0; 64];
        let r = h.range();
        for key in 0..n {
            let p = h.positions(key, &mut buf);
            let cell = |x: u64| (x * 16 / r) as usize;
            counts[cell(p[a]) * 16 + cell(p[b])] += 1;
        }
        let e = n as f64 / 256.0;
        counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum()
    }

    #[test]
    fn pairs_from_one_value_and_across_values_are_independent() {
        // Two positions per value (1000 and 2^20 bits), one per value (2^27 bits): every
        // pair of the k = 4 positions, within and across values. 255 degrees of freedom;
        // 18 tests at the 0.9999 quantile (about 355): a false alarm in under 0.2 %.
        for (range, pairs) in [(1000u64, true), (1 << 20, true), (1 << 27, false)] {
            let h = PositionHasher::new(range, 4, Hashing::Colliding, 11);
            assert_eq!(h.pairs, pairs);
            for (a, b) in [(0, 1), (2, 3), (1, 2), (0, 3), (0, 2), (1, 3)] {
                let chi2 = pair_chi2(&h, a, b, 256 * 400);
                assert!(
                    chi2 < 355.0,
                    "range {range}, positions {a} and {b}: chi2 = {chi2}"
                );
            }
        }
    }

    /// [`PositionHasher::block_positions`] with k = K, scalar or vectorised.
    fn block_of<const K: usize>(h: &PositionHasher, keys: &[u64], wide: bool) -> Vec<Vec<u64>> {
        let mut block = PositionBlock::new();
        rbf_foundations::simd::with_avx2(wide, || h.block_positions::<K>(keys, &mut block));
        (0..keys.len())
            .map(|i| (0..K).map(|d| u64::from(block.draws[d][i])).collect())
            .collect()
    }

    #[test]
    fn block_positions_are_the_positions() {
        use rbf_foundations::simd::Simd;
        let wides: Vec<bool> = Simd::available().iter().map(|&s| s >= Simd::Avx2).collect();
        let keys: Vec<u64> = (0..POSITION_BLOCK as u64)
            .map(|i| mix64(i) ^ (i << 60))
            .chain([0, 1, u64::MAX])
            .take(POSITION_BLOCK)
            .collect();
        // Drawn two per value up to PAIR_RANGE_MAX, one per value above (filters
        // beyond the caches).
        let ranges = [1u64, 7, 1000, 1 << 20, (1 << 26) - 1, PAIR_RANGE_MAX];
        let singles = [PAIR_RANGE_MAX + 1, 1 << 28, 3 << 29, u64::from(u32::MAX)];
        for range in ranges.into_iter().chain(singles) {
            for k in 1..=BLOCK_HASHES as u32 {
                let h = PositionHasher::new(range, k, Hashing::Colliding, 9 + u64::from(k));
                assert!(h.blockwise());
                let mut buf = [0; 64];
                let want: Vec<Vec<u64>> = keys
                    .iter()
                    .map(|&key| h.positions(key, &mut buf).to_vec())
                    .collect();
                for &wide in &wides {
                    for n in [keys.len(), 1, 37] {
                        let got = match k {
                            1 => block_of::<1>(&h, &keys[..n], wide),
                            2 => block_of::<2>(&h, &keys[..n], wide),
                            3 => block_of::<3>(&h, &keys[..n], wide),
                            4 => block_of::<4>(&h, &keys[..n], wide),
                            5 => block_of::<5>(&h, &keys[..n], wide),
                            6 => block_of::<6>(&h, &keys[..n], wide),
                            7 => block_of::<7>(&h, &keys[..n], wide),
                            _ => block_of::<8>(&h, &keys[..n], wide),
                        };
                        assert_eq!(got, want[..n], "range {range}, k {k}, wide {wide}");
                    }
                }
            }
        }
        assert!(!PositionHasher::new(1 << 32, 4, Hashing::Colliding, 1).blockwise());
        assert!(!PositionHasher::new(1000, 9, Hashing::Colliding, 1).blockwise());
        assert!(!PositionHasher::new(1000, 4, Hashing::Distinct, 1).blockwise());
    }

    #[test]
    fn unrolled_and_generic_positions_agree() {
        for range in [1000u64, 1 << 20, 1 << 27] {
            for k in 1..=8u32 {
                let h = PositionHasher::new(range, k, Hashing::Colliding, 5);
                let (mut a, mut b) = ([0; 64], [0; 64]);
                for key in 0..500u64 {
                    let generic = h.positions(key, &mut a).to_vec();
                    let lazy: Vec<u64> = h.colliding(key).collect();
                    let unrolled = match k {
                        1 => h.positions_k::<1>(key, &mut b),
                        2 => h.positions_k::<2>(key, &mut b),
                        3 => h.positions_k::<3>(key, &mut b),
                        4 => h.positions_k::<4>(key, &mut b),
                        5 => h.positions_k::<5>(key, &mut b),
                        6 => h.positions_k::<6>(key, &mut b),
                        7 => h.positions_k::<7>(key, &mut b),
                        _ => h.positions_k::<8>(key, &mut b),
                    };
                    assert_eq!(generic, unrolled, "range {range}, k {k}, key {key}");
                    assert_eq!(generic, lazy, "range {range}, k {k}, key {key}");
                }
            }
        }
    }
}
