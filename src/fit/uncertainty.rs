//! Uncertainty of the fitted Q and zeta: the fit repeated on [`GROUPS`] interleaved
//! subsets of the trace (window w and the new messages first seen in it belong to
//! subset w mod GROUPS), and the spread of a summary over the subsets turned into a
//! t-interval around the whole-trace value. Interleaving (rather than contiguous
//! blocks) lets every subset see the whole trace, so the interval measures the
//! estimators' sampling error under a stationary workload; drift over the trace shows
//! in the per-window table instead.
//!
//! Summaries: Q's head mass (its [`HEAD_RANKS`] most popular ranks) and tail mass (the
//! less popular half of the fitted ranks); zeta's share on the most popular tenth of the
//! ranks and its mean relative rank (0 = always on top, 1 = always at the bottom).

use serde::Serialize;

use super::placement::HorizonCounts;
use super::profile::RankProfile;
use crate::stats::{mean_interval, Interval};

pub const GROUPS: usize = 8;
pub const HEAD_RANKS: usize = 10;

/// The per-subset fit state.
#[derive(Clone, Debug)]
pub struct Groups {
    profiles: Vec<RankProfile>,
    horizons: Vec<HorizonCounts>,
}

impl Default for Groups {
    fn default() -> Self {
        Groups {
            profiles: vec![RankProfile::default(); GROUPS],
            horizons: vec![HorizonCounts::default(); GROUPS],
        }
    }
}

/// Intervals of the fit's summaries.
#[derive(Clone, Debug, Serialize)]
pub struct FitUncertainty {
    /// Interleaved subsets behind the intervals.
    pub groups: u64,
    /// Mass of the HEAD_RANKS most popular ranks of Q-hat.
    pub q_head_mass: Option<Interval>,
    /// Mass of the less popular half of the fitted ranks.
    pub q_tail_mass: Option<Interval>,
    /// zeta-hat's mass on the most popular tenth of the ranks.
    pub placement_top_share: Option<Interval>,
    /// zeta-hat's mean rank over D (0 = top, 1 = bottom).
    pub placement_mean_rank: Option<Interval>,
}

pub fn head_mass(q: &[f64]) -> f64 {
    q.iter().take(HEAD_RANKS).sum()
}

/// Mass of ranks >= half of `ranks` (the fitted D), for a Q-hat of any length.
pub fn tail_mass(q: &[f64], ranks: usize) -> f64 {
    q.iter().skip(ranks / 2).sum()
}

pub fn top_share(zeta: &[f64]) -> f64 {
    let top = zeta.len().div_ceil(10);
    zeta.iter().take(top).sum()
}

pub fn mean_rank(zeta: &[f64]) -> f64 {
    let d = zeta.len().max(1) as f64;
    zeta.iter()
        .enumerate()
        .map(|(i, z)| z * i as f64)
        .sum::<f64>()
        / d
}

impl Groups {
    /// A complete window's per-key repeat counts.
    pub fn add_window(&mut self, window: u64, counts: &mut [u64]) {
        self.profiles[window as usize % GROUPS].add_window(counts);
    }

    /// A new message's draws within its horizon, by the window it was first seen in.
    pub fn record_horizon(&mut self, window: u64, count: u64) {
        self.horizons[window as usize % GROUPS].record(count);
    }

    /// Intervals around the whole-trace values (`q`, `zeta`, over `lambda` = the
    /// whole trace's mean counts per rank) at confidence `level`.
    pub fn uncertainty(
        &self,
        q: &[f64],
        zeta: &[f64],
        lambda: &[f64],
        level: f64,
    ) -> FitUncertainty {
        let ranks = q.len();
        let qs: Vec<Vec<f64>> = self
            .profiles
            .iter()
            .filter(|p| p.windows() > 0)
            .map(RankProfile::repeat_distribution)
            .collect();
        let zetas: Vec<Vec<f64>> = self
            .horizons
            .iter()
            .filter_map(|h| h.placement(lambda))
            .collect();
        let around = |whole: f64, parts: Vec<f64>| spread_interval(whole, &parts, level);
        FitUncertainty {
            groups: GROUPS as u64,
            q_head_mass: around(head_mass(q), qs.iter().map(|g| head_mass(g)).collect()),
            q_tail_mass: around(
                tail_mass(q, ranks),
                qs.iter().map(|g| tail_mass(g, ranks)).collect(),
            ),
            placement_top_share: around(
                top_share(zeta),
                zetas.iter().map(|z| top_share(z)).collect(),
            ),
            placement_mean_rank: around(
                mean_rank(zeta),
                zetas.iter().map(|z| mean_rank(z)).collect(),
            ),
        }
    }
}

/// A t-interval centred on `whole`, with the standard error of the mean of `parts`
/// (the whole-trace statistic behaves like the mean of the subsets' ones). Clamped to
/// [0, 1]: every summary here is a share.
fn spread_interval(whole: f64, parts: &[f64], level: f64) -> Option<Interval> {
    let i = mean_interval(parts, level)?;
    let h = i.half_width();
    Some(Interval {
        estimate: whole,
        low: (whole - h).max(0.0),
        high: (whole + h).min(1.0),
        ..i
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries() {
        let q = [0.5, 0.2, 0.1, 0.1, 0.05, 0.05];
        assert!((head_mass(&q) - 1.0).abs() < 1e-12);
        assert!((tail_mass(&q, 6) - 0.2).abs() < 1e-12);
        let zeta = vec![0.1; 10];
        assert!((top_share(&zeta) - 0.1).abs() < 1e-12);
        assert!((mean_rank(&zeta) - 0.45).abs() < 1e-12);
        let i = spread_interval(0.5, &[0.4, 0.6, 0.5, 0.5], 0.99).unwrap();
        assert_eq!(i.estimate, 0.5);
        assert!(i.low < 0.5 && i.high > 0.5 && i.low >= 0.0);
    }
}
