//! The repeat distribution Q as rank statistics within windows.
//!
//! The measured trace is cut into consecutive windows of W arrivals. In each window the
//! repeat draws (arrivals of keys seen before) are counted per key, and the counts are
//! sorted, largest first: the i-th largest count is the number of draws that went to
//! whichever message held popularity rank i in that window. Summing these sorted
//! profiles position by position over windows and normalising gives Q-hat.
//!
//! Why within windows: in the FN model (§3.1) ranks are latent and message identities
//! move across them (a new message placed at rank i shifts every rank >= i down), so
//! ranking keys by their frequency over the whole trace mixes the draws that rank 0
//! received from many different holders. A window short enough that the ranks that
//! carry most of Q change holders rarely within it sees each rank held by one message.
//!
//! Ties need no rule: tied counts are equal, so whichever tied key takes which of the
//! tied ranks, the profile is the same. One-hit wonders never receive a repeat draw, so
//! they add nothing to Q; they matter only through the placement (they are new messages
//! placed at ranks too unpopular to be drawn again) and through the one-hit share.

/// Sum of sorted per-window repeat-count profiles.
#[derive(Clone, Debug, Default)]
pub struct RankProfile {
    /// sums[i]: draws received by the i-th most drawn key, summed over windows.
    sums: Vec<u64>,
    windows: u64,
    draws: u64,
}

impl RankProfile {
    /// Adds one window's per-key repeat counts (any order; sorted here).
    pub fn add_window(&mut self, counts: &mut [u64]) {
        counts.sort_unstable_by(|a, b| b.cmp(a));
        if self.sums.len() < counts.len() {
            self.sums.resize(counts.len(), 0);
        }
        for (s, &c) in self.sums.iter_mut().zip(counts.iter()) {
            *s += c;
        }
        self.windows += 1;
        self.draws += counts.iter().sum::<u64>();
    }

    pub fn windows(&self) -> u64 {
        self.windows
    }

    /// Number of ranks that received a draw in at least one window: the fitted D.
    pub fn ranks(&self) -> usize {
        self.sums.len()
    }

    /// Q-hat: draws per rank over all draws (non-increasing by construction: a sum of
    /// non-increasing sequences aligned at rank 0).
    pub fn repeat_distribution(&self) -> Vec<f64> {
        let total = self.draws.max(1) as f64;
        self.sums.iter().map(|&s| s as f64 / total).collect()
    }

    /// Mean number of draws per window at each rank: the Poisson means the placement
    /// estimator compares new messages' draw counts with.
    pub fn mean_counts(&self) -> Vec<f64> {
        let w = self.windows.max(1) as f64;
        self.sums.iter().map(|&s| s as f64 / w).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_profiles_add_by_rank() {
        let mut p = RankProfile::default();
        p.add_window(&mut [1, 5, 2]);
        p.add_window(&mut [3, 3]);
        assert_eq!(p.ranks(), 3);
        assert_eq!(p.mean_counts(), vec![4.0, 2.5, 0.5]);
        let q = p.repeat_distribution();
        assert!((q.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((q[0] - 8.0 / 14.0).abs() < 1e-12);
    }
}
