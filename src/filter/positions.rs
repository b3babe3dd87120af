//! From one 64-bit message key to k bit positions.
//!
//! Each position comes from its own 64-bit value: the key is mixed with the filter seed,
//! then position i uses the SplitMix64 finaliser of `h + (i+1) * GOLDEN`, reduced to
//! `[0, range)` with Lemire's multiply-shift. This costs k multiplies-and-shifts more than
//! plain double hashing, but double hashing's positions lie on an arithmetic progression
//! modulo M, a correlation the models (which assume independent uniform positions) do
//! not have; with small M (1000 bits, as in the papers) that shows up in tight
//! model-vs-replay comparisons.

use super::config::{Hashing, MAX_HASHES};

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's output function (Steele, Lea, Flood 2014): a bijective 64-bit mixer.
#[inline(always)]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Maps a uniform 64-bit value to [0, range) (Lemire 2019, "fastrange").
#[inline(always)]
fn reduce(x: u64, range: u64) -> u64 {
    ((u128::from(x) * u128::from(range)) >> 64) as u64
}

/// Bit-position generator for one filter array.
#[derive(Clone, Copy, Debug)]
pub struct PositionHasher {
    range: u64,
    k: usize,
    hashing: Hashing,
    seed: u64,
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

    /// The colliding positions of `key`, computed lazily (no buffer): position i is
    /// `reduce(mix64(h + (i+1) GOLDEN))` with `h = mix64(key ^ seed)`.
    #[inline(always)]
    pub fn colliding(&self, key: u64) -> impl Iterator<Item = u64> + '_ {
        let h = mix64(key ^ self.seed);
        (1..=self.k as u64).map(move |i| self.colliding_at(h, i))
    }

    #[inline(always)]
    fn colliding_at(&self, h: u64, draw: u64) -> u64 {
        reduce(mix64(h.wrapping_add(draw.wrapping_mul(GOLDEN))), self.range)
    }

    /// [`PositionHasher::positions`] with k known at compile time (`K == k`), so the
    /// colliding loop unrolls; K = 0 means any k.
    #[inline(always)]
    pub fn positions_k<'a, const K: usize>(&self, key: u64, out: &'a mut PositionBuf) -> &'a [u64] {
        if K == 0 || self.hashing == Hashing::Distinct {
            return self.positions(key, out);
        }
        debug_assert_eq!(K, self.k);
        let h = mix64(key ^ self.seed);
        for (i, slot) in out[..K].iter_mut().enumerate() {
            *slot = self.colliding_at(h, i as u64 + 1);
        }
        &out[..K]
    }

    /// Writes the k positions of `key` into `out[..k]` and returns that slice.
    #[inline(always)]
    pub fn positions<'a>(&self, key: u64, out: &'a mut PositionBuf) -> &'a [u64] {
        let h = mix64(key ^ self.seed);
        match self.hashing {
            Hashing::Colliding => {
                for (slot, p) in out[..self.k].iter_mut().zip(self.colliding(key)) {
                    *slot = p;
                }
            }
            Hashing::Distinct => {
                // Rejection sampling without replacement: k <= 64 and in practice
                // k << range, so redraws are rare and the scan is short.
                let mut draw = 0u64;
                let mut i = 0;
                while i < self.k {
                    draw += 1;
                    let p = self.colliding_at(h, draw);
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
}
