//! Walker's alias method (Vose's numerically stable construction): O(D) setup, O(1)
//! per draw from a discrete distribution.

use super::rng::Rng;
use crate::workload::Probabilities;
use rbf_foundations::error::{Error, Problem, Result};

#[derive(Clone, Debug)]
pub struct AliasTable {
    prob: Vec<f64>,
    alias: Vec<u32>,
}

impl AliasTable {
    /// A table drawing index i with probability `p[i]`. [`Probabilities`] are
    /// validated (finite, in [0, 1], summing to 1), so every scaled entry below lies
    /// in [0, n]; the only refusal left is a table of 2^32 entries or more.
    pub fn new(p: &Probabilities) -> Result<Self> {
        let n = p.len();
        if n > u32::MAX as usize {
            return Err(Error::setting(
                "distinct",
                Problem::range("the generator draws from at most 2^32 - 1 ranks", n),
            ));
        }
        let mut scaled: Vec<f64> = p.iter().map(|w| w * n as f64).collect();
        let mut prob = vec![0.0; n];
        let mut alias = vec![0u32; n];
        let (mut small, mut large): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
        for (i, &p) in scaled.iter().enumerate() {
            if p < 1.0 {
                small.push(i as u32);
            } else {
                large.push(i as u32);
            }
        }
        while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
            small.pop();
            prob[s as usize] = scaled[s as usize];
            alias[s as usize] = l;
            scaled[l as usize] = (scaled[l as usize] + scaled[s as usize]) - 1.0;
            if scaled[l as usize] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        // Leftovers are 1 up to rounding.
        for i in large.into_iter().chain(small) {
            prob[i as usize] = 1.0;
        }
        Ok(AliasTable { prob, alias })
    }

    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> usize {
        let i = rng.below(self.prob.len() as u64) as usize;
        if rng.next_f64() < self.prob[i] {
            i
        } else {
            self.alias[i] as usize
        }
    }

    pub fn len(&self) -> usize {
        self.prob.len()
    }

    pub fn is_empty(&self) -> bool {
        self.prob.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_weights() {
        let w = [5.0, 3.0, 1.5, 0.5, 0.0];
        let t = AliasTable::new(&Probabilities::from_weights("w", &w).unwrap()).unwrap();
        let mut r = Rng::seed(3);
        let n = 200_000;
        let mut c = [0u32; 5];
        for _ in 0..n {
            c[t.sample(&mut r)] += 1;
        }
        assert_eq!(c[4], 0);
        for i in 0..4 {
            let p = w[i] / 10.0;
            let sd = (n as f64 * p * (1.0 - p)).sqrt();
            assert!((c[i] as f64 - n as f64 * p).abs() < 5.0 * sd, "{c:?}");
        }
    }

    #[test]
    fn huge_and_tiny_weights_draw_like_their_ratios() {
        // Weights whose plain sum overflows used to reach an assertion here (exit 101).
        for w in [[1e308, 1e308], [f64::MAX, f64::MAX], [5e-324, 5e-324]] {
            let t = AliasTable::new(&Probabilities::from_weights("w", &w).unwrap()).unwrap();
            let mut r = Rng::seed(5);
            let ones = (0..10_000).filter(|_| t.sample(&mut r) == 1).count();
            // Binomial(10^4, 1/2): sd 50.
            assert!((ones as i64 - 5000).abs() < 300, "{w:?}: {ones}");
        }
    }
}
