//! The placement distribution zeta: where newly seen messages enter the ranking.
//!
//! A new message placed at rank r is drawn again, over the next W arrivals, about as
//! often as the message holding rank r in a window of W arrivals: Poisson with mean
//! lambda_r, the mean per-window count at rank r from [`super::profile::RankProfile`].
//! So each new message's draw count c over the W arrivals after its first sight is a
//! draw from the mixture sum_r zeta_r Poisson(c; lambda_r), and zeta-hat is the
//! nonparametric maximum-likelihood estimate of the mixing weights (EM iterations).
//!
//! Ranks with nearly the same lambda cannot be told apart by any count, so ranks are
//! grouped (consecutive ranks whose lambda differ by less than [`GROUP_TOLERANCE`],
//! relative) and a group's weight is spread evenly over its ranks. A message never drawn
//! again (c = 0, e.g. a one-hit wonder) is most likely at the least popular ranks, and
//! the EM puts it there, in proportion to how well each rank explains a zero.
//! New messages whose horizon runs past the end of the trace are censored (counted,
//! not used).

/// Relative difference of lambda below which neighbouring ranks share a group.
pub const GROUP_TOLERANCE: f64 = 0.02;
const MAX_ITERATIONS: usize = 2000;
const TOLERANCE: f64 = 1e-10;

/// Histogram of new messages' draw counts over their horizon.
#[derive(Clone, Debug, Default)]
pub struct HorizonCounts {
    /// hist[c]: new messages drawn again exactly c times within their horizon.
    hist: Vec<u64>,
}

impl HorizonCounts {
    pub fn record(&mut self, count: u64) {
        let c = count as usize;
        if self.hist.len() <= c {
            self.hist.resize(c + 1, 0);
        }
        self.hist[c] += 1;
    }

    pub fn messages(&self) -> u64 {
        self.hist.iter().sum()
    }

    /// Share of new messages never drawn again within their horizon.
    pub fn zero_share(&self) -> f64 {
        let n = self.messages();
        if n == 0 {
            0.0
        } else {
            self.hist.first().copied().unwrap_or(0) as f64 / n as f64
        }
    }

    /// zeta-hat over the ranks of `lambda` (mean counts per rank, non-increasing);
    /// None when there are no ranks or no new messages.
    pub fn placement(&self, lambda: &[f64]) -> Option<Vec<f64>> {
        let n = self.messages();
        if lambda.is_empty() || n == 0 {
            return None;
        }
        let groups = group_ranks(lambda);
        let counts: Vec<(f64, f64)> = self
            .hist
            .iter()
            .enumerate()
            .filter(|(_, &m)| m > 0)
            .map(|(c, &m)| (c as f64, m as f64))
            .collect();
        // Poisson(c; lambda_g) relative to the row's best group (the c-only factor
        // cancels in posteriors), computed once: only the weights change in EM.
        let lik: Vec<Vec<f64>> = counts
            .iter()
            .map(|&(c, _)| {
                let row: Vec<f64> = groups
                    .iter()
                    .map(|g| {
                        let l = g.lambda.max(1e-300);
                        c * l.ln() - l
                    })
                    .collect();
                let top = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                row.iter().map(|l| (l - top).exp()).collect()
            })
            .collect();
        let d = lambda.len() as f64;
        let mut w: Vec<f64> = groups.iter().map(|g| g.len as f64 / d).collect();
        let mut prev = f64::NEG_INFINITY;
        for _ in 0..MAX_ITERATIONS {
            let mut next = vec![0.0; groups.len()];
            let mut ll = 0.0;
            for ((_, m), row) in counts.iter().zip(&lik) {
                let z: f64 = row.iter().zip(&w).map(|(l, wg)| l * wg).sum();
                if z <= 0.0 {
                    continue;
                }
                ll += m * z.ln();
                let scale = m / z;
                for ((nx, l), wg) in next.iter_mut().zip(row).zip(&w) {
                    *nx += scale * l * wg;
                }
            }
            next.iter_mut().for_each(|x| *x /= n as f64);
            w = next;
            if (ll - prev).abs() <= TOLERANCE * ll.abs().max(1.0) {
                break;
            }
            prev = ll;
        }
        let mut zeta = Vec::with_capacity(lambda.len());
        for (g, wg) in groups.iter().zip(&w) {
            zeta.extend(std::iter::repeat_n(wg / g.len as f64, g.len));
        }
        Some(zeta)
    }
}

struct Group {
    len: usize,
    lambda: f64,
}

/// Consecutive ranks whose lambda lie within GROUP_TOLERANCE of the group's first.
fn group_ranks(lambda: &[f64]) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    let mut start = 0;
    let mut sum = 0.0;
    for (i, &l) in lambda.iter().enumerate() {
        let head = lambda[start];
        if i > start && (head - l) > GROUP_TOLERANCE * head {
            groups.push(Group {
                len: i - start,
                lambda: sum / (i - start) as f64,
            });
            start = i;
            sum = 0.0;
        }
        sum += l;
    }
    groups.push(Group {
        len: lambda.len() - start,
        lambda: sum / (lambda.len() - start) as f64,
    });
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separates_hot_and_cold_placements() {
        let lambda = [20.0, 10.0, 5.0, 0.05];
        let mut h = HorizonCounts::default();
        // 100 messages placed at rank 0 (about 20 draws), 300 never drawn again.
        for c in 15..25 {
            for _ in 0..10 {
                h.record(c);
            }
        }
        for _ in 0..300 {
            h.record(0);
        }
        let z = h.placement(&lambda).unwrap();
        assert!((z.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert!((z[0] - 0.25).abs() < 0.01, "{z:?}");
        assert!(z[3] > 0.7, "{z:?}");
        assert!((h.zero_share() - 0.75).abs() < 1e-12);
    }

    #[test]
    fn groups_near_equal_ranks() {
        let g = group_ranks(&[10.0, 9.99, 5.0, 1.0, 1.0, 1.0]);
        assert_eq!(g.iter().map(|g| g.len).collect::<Vec<_>>(), vec![2, 1, 3]);
    }
}
