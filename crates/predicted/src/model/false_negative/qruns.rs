//! Q and zeta held as runs of ranks: consecutive ranks whose q and zeta are within a
//! relative tolerance of the run's first rank's. What markov-disabling steps on at large
//! D ([`super::markov::runs`]), and what holds a fit's alternative workload of tens of
//! millions of ranks for the Q-based Markov methods ([`super::FnModel::range_end`]):
//! built from the workload block by block ([`rbf_data::workload::ranks`]), it takes a few
//! thousand runs where the ranks took several vectors of D values (an alternative at
//! D = 4.8 x 10^7 held about 1.5 GB).
//!
//! Each run keeps its width, the sums of its ranks' q and zeta (so totals are kept
//! exactly) and the q of its last rank, the smallest of the run (Q is non-increasing):
//! that one is exact, which is what lets markov-lower and markov-biuniform keep their
//! direction on runs ([`QRuns::lower`], [`QRuns::biuniform`]).

use rbf_data::workload::Workload;
use rbf_foundations::error::Result;

/// Runs of ranks of one Q and zeta.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QRuns {
    /// D: the ranks over every run.
    d: usize,
    /// One past the last rank of each run (increasing; the last is D).
    end: Vec<usize>,
    /// Ranks per run (end - start), as a float.
    pub width: Vec<f64>,
    /// Sum of q over the run's ranks, in rank order.
    pub q_sum: Vec<f64>,
    /// Sum of zeta over the run's ranks, in rank order.
    pub zeta_sum: Vec<f64>,
    /// q of the run's last rank.
    q_last: Vec<f64>,
}

/// Forms runs from ranks pushed in order.
struct Former {
    tolerance: f64,
    runs: QRuns,
    /// The open run: its first rank's q and zeta, and its sums so far.
    first: Option<(f64, f64)>,
    q_sum: f64,
    zeta_sum: f64,
    q_last: f64,
}

impl Former {
    fn new(tolerance: f64) -> Self {
        Former {
            tolerance,
            runs: QRuns::default(),
            first: None,
            q_sum: 0.0,
            zeta_sum: 0.0,
            q_last: 0.0,
        }
    }

    fn push(&mut self, q: f64, zeta: f64) {
        let near = |x: f64, first: f64, tol: f64| (x - first).abs() <= tol * first.abs();
        match self.first {
            Some((q0, z0)) if near(q, q0, self.tolerance) && near(zeta, z0, self.tolerance) => {}
            _ => {
                self.close();
                self.first = Some((q, zeta));
                // The sums start at 0 + the first value, as a sum over a slice does.
                self.q_sum = 0.0;
                self.zeta_sum = 0.0;
            }
        }
        self.q_sum += q;
        self.zeta_sum += zeta;
        self.q_last = q;
        self.runs.d += 1;
    }

    fn close(&mut self) {
        if self.first.take().is_some() {
            let r = &mut self.runs;
            let start = r.end.last().copied().unwrap_or(0);
            r.width.push((r.d - start) as f64);
            r.end.push(r.d);
            r.q_sum.push(self.q_sum);
            r.zeta_sum.push(self.zeta_sum);
            r.q_last.push(self.q_last);
        }
    }

    fn finish(mut self) -> QRuns {
        self.close();
        self.runs
    }
}

impl QRuns {
    /// Runs of the ranks of `q` and `zeta` (the same length) at `tolerance` (0: only
    /// ranks with equal q and zeta share a run).
    pub fn from_ranks(q: &[f64], zeta: &[f64], tolerance: f64) -> QRuns {
        let mut former = Former::new(tolerance);
        for (&x, &z) in q.iter().zip(zeta) {
            former.push(x, z);
        }
        former.finish()
    }

    /// The runs of `workload`'s Q and zeta, formed block by block without holding the
    /// ranks: the runs [`QRuns::from_ranks`] forms from the built vectors, to the bit.
    /// None where the workload's shapes are not streamed (explicit vectors).
    pub fn from_workload(workload: &Workload, tolerance: f64) -> Result<Option<QRuns>> {
        let mut former = Former::new(tolerance);
        let streamed = workload.for_each_rank_block(|_, q, zeta| {
            for (&x, &z) in q.iter().zip(zeta) {
                former.push(x, z);
            }
        })?;
        Ok(streamed.then(|| former.finish()))
    }

    /// D.
    pub fn distinct(&self) -> usize {
        self.d
    }

    /// Runs formed.
    pub fn len(&self) -> usize {
        self.end.len()
    }

    pub fn is_empty(&self) -> bool {
        self.end.is_empty()
    }

    /// Each run's mean q and width (for the power sums: the run's ranks as one rate of
    /// that multiplicity).
    pub fn means(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.q_sum.iter().zip(&self.width).map(|(s, w)| (s / w, *w))
    }

    /// markov-lower's estimate (eq. 5: the mass of the ranks from i on) for `states`,
    /// with the ranks of a run from i on counted at the run's smallest q: at most the
    /// rank-by-rank value (so the lower bound stays one), and short of it by less than
    /// the tolerance times the part of one run.
    pub fn lower(&self, states: std::ops::RangeInclusive<usize>) -> Vec<f64> {
        // tail[j]: the q of runs j.. (summed from the last run, as rank by rank).
        let mut tail = vec![0.0; self.len() + 1];
        for j in (0..self.len()).rev() {
            tail[j] = tail[j + 1] + self.q_sum[j];
        }
        let mut j = 0;
        states
            .map(|i| {
                if i >= self.d {
                    return 0.0;
                }
                while self.end[j] <= i {
                    j += 1;
                }
                let start = self.end[j] - self.width[j] as usize;
                if i == start {
                    tail[j]
                } else {
                    tail[j + 1] + (self.end[j] - i) as f64 * self.q_last[j]
                }
            })
            .collect()
    }

    /// markov-biuniform's splits on runs (§4.2.4): a split at s needs q_{s-1} exactly,
    /// so only run ends are splits (there q_{s-1} is the run's last q), each valid one
    /// (q_{s-1} D > 1) an upper bound as rank by rank; the geometric selection of
    /// [`super::markov::nonrepeat::biuniform`] is taken over the run ends (another
    /// selection of bounds, so a state's minimum may land on either side of the rank by
    /// rank one). Returns the estimates for `states` and the number of splits tried.
    pub fn biuniform(&self, states: std::ops::RangeInclusive<usize>) -> (Vec<f64>, usize) {
        let d = self.d;
        // Run ends s < D with q_{s-1} D > 1, in increasing order (q_last falls).
        let valid: Vec<(usize, f64)> = self
            .end
            .iter()
            .zip(&self.q_last)
            .take_while(|&(&s, &q)| s < d && q * d as f64 > 1.0)
            .map(|(&s, &q)| (s, q))
            .collect();
        let chosen = super::markov::nonrepeat::geometric_selection(valid.len())
            .into_iter()
            .map(|k| valid[k - 1]);
        super::markov::nonrepeat::biuniform_over(d, chosen, states)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::false_negative::markov::nonrepeat;
    use rbf_data::workload::{Placement, Popularity};

    fn workload(d: usize) -> Workload {
        Workload {
            popularity: Popularity::PiecewiseZipf {
                distinct: d,
                exponents: vec![1.1, 0.9, 1.2, 1.0, 1.3, 0.8],
            },
            placement: Placement::Mixture {
                top: 0.1,
                bottom: 0.3,
                segments: vec![0.0, 0.5, 0.1, 0.0],
            },
            ..Workload::zipf(10, 1.0, 0.95, Placement::Uniform)
        }
    }

    #[test]
    fn runs_from_the_workload_are_the_runs_of_its_vectors() {
        for d in [4, 7, 10_000, 250_001] {
            let w = workload(d);
            let (q, z) = (
                w.repeat_distribution().unwrap(),
                w.placement_distribution().unwrap(),
            );
            for tol in [0.0, 1e-3, 1e-2] {
                let built = QRuns::from_ranks(q.as_slice(), z.as_slice(), tol);
                let streamed = QRuns::from_workload(&w, tol).unwrap().unwrap();
                assert_eq!(built, streamed, "D = {d}, tolerance {tol}");
                assert_eq!(built.distinct(), d);
                let total: f64 = built.q_sum.iter().sum();
                assert!((total - 1.0).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn lower_on_runs_stays_below_and_close() {
        let w = workload(300_000);
        let q = w.repeat_distribution().unwrap().into_vec();
        let z = w.placement_distribution().unwrap().into_vec();
        let runs = QRuns::from_ranks(&q, &z, 1e-2);
        assert!(runs.len() < 3_000, "{} runs", runs.len());
        let exact = nonrepeat::lower(&q, 0..=300_010);
        let on_runs = runs.lower(0..=300_010);
        let mut j = 0;
        for (i, (e, r)) in exact.iter().zip(&on_runs).enumerate() {
            assert!(*r <= e * (1.0 + 1e-12) + 1e-300, "state {i}: {r} above {e}");
            // Short by at most the tolerance times the run's mass (its ranks from i on
            // at the run's smallest q instead of their own).
            while j + 1 < runs.len() && runs.end[j] <= i {
                j += 1;
            }
            let slack = if i < runs.distinct() {
                1e-2 * runs.q_sum[j]
            } else {
                0.0
            };
            assert!(*r >= e * (1.0 - 1e-12) - slack, "state {i}: {r} vs {e}");
        }
    }

    #[test]
    fn biuniform_on_runs_is_a_selection_of_the_same_splits() {
        let w = workload(300_000);
        let q = w.repeat_distribution().unwrap().into_vec();
        let z = w.placement_distribution().unwrap().into_vec();
        // At tolerance 0 every rank of this Q is a run: the same splits, the same bits.
        let exact = nonrepeat::biuniform(&q, 0..=20_000).0;
        let single = QRuns::from_ranks(&q, &z, 0.0).biuniform(0..=20_000).0;
        assert!(exact
            .iter()
            .zip(&single)
            .all(|(a, b)| a.to_bits() == b.to_bits()));
        // On runs: every split at a run end is one of the ranks' valid splits with its
        // exact q, so each is a bound; the minimum over another selection is close.
        let runs = QRuns::from_ranks(&q, &z, 1e-2);
        let valid = (1..q.len())
            .take_while(|&s| q[s - 1] * q.len() as f64 > 1.0)
            .count();
        assert!(runs
            .end
            .iter()
            .zip(&runs.q_last)
            .all(|(&s, &ql)| s > valid || ql == q[s - 1]));
        let on_runs = runs.biuniform(0..=20_000).0;
        for (i, (e, r)) in exact.iter().zip(&on_runs).enumerate() {
            assert!((r - e).abs() <= 2e-3 * e + 1e-300, "state {i}: {r} vs {e}");
        }
    }
}
