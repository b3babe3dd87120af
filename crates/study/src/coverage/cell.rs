//! A cell made ready for its seeds: the filter with sigma settled, the true workload,
//! the renewal bound of the true workload, and the true reuse profile S(n).

use super::config::CellConfig;
use rbf_data::filter::FilterConfig;
use rbf_data::workload::{Placement, Workload};
use rbf_foundations::error::Result;
use rbf_predicted::model::false_negative::disabling::Disabling;
use rbf_predicted::model::false_negative::{FnModel, RenewalOptions};
use rbf_predicted::model::false_positive::sigma_for_target;

/// Truncation of the FN models in the study (rbf's default).
pub const EPS: f64 = rbf_predicted::model::false_negative::DEFAULT_EPS;

/// S(n) below this counts as 0 and is not followed further.
const S_NEGLIGIBLE: f64 = 1e-15;

/// What every seed of a cell shares.
pub struct Cell {
    pub config: CellConfig,
    /// The filter (seed 0; each replay sets its own).
    pub filter: FilterConfig,
    pub workload: Workload,
    /// The renewal bound of the true workload (eq. 24 on Q and zeta, no fit).
    pub true_bound: f64,
    /// The renewal model's mean arrivals per cycle (to plan a study).
    pub arrivals_per_cycle: f64,
    /// S(n) = P(reuse distance > n | repeat) of the true workload, for n = 0, 1, ...
    /// (eq. 24: U_j = S(j - 1)), up to the longest distance a seed's trace can show or
    /// until it is negligible; 0 beyond.
    pub survival: Vec<f64>,
}

impl Cell {
    pub fn new(config: &CellConfig) -> Result<Cell> {
        let workload = Workload::zipf(
            config.distinct,
            config.zipf,
            config.p_repeat,
            Placement::parse(&config.placement)?,
        );
        workload.validate()?;
        let mut filter = FilterConfig::sigma_bounded(config.memory, config.hashes, 1);
        filter.phases = config.phases;
        filter.independent_halves = config.phases == 2;
        filter.sigma = match (config.sigma, config.target_fp) {
            (Some(s), _) => Some(s),
            (None, Some(t)) => {
                let mut probe = filter.clone();
                probe.sigma = Some(u64::from(config.hashes));
                Some(sigma_for_target(&probe, t)?.sigma)
            }
            (None, None) => None,
        };
        filter.validate()?;
        let renewal = FnModel::new(&filter, &workload, EPS)?.renewal(RenewalOptions {
            eps: EPS,
            ..RenewalOptions::default()
        })?;
        let q = workload.repeat_distribution()?;
        let zeta = workload.placement_distribution()?;
        let longest = config.warmup().max(config.distinct as u64) + config.arrivals;
        let survival = true_survival(&q, &zeta, config.p_repeat, longest);
        Ok(Cell {
            config: config.clone(),
            filter,
            workload,
            true_bound: renewal.fn_upper,
            arrivals_per_cycle: renewal.arrivals_per_cycle,
            survival,
        })
    }

    /// The true S(n).
    pub fn s(&self, n: u64) -> f64 {
        self.survival.get(n as usize).copied().unwrap_or(0.0)
    }
}

/// S(0..=longest) from the disabling recursion, cut where it is negligible.
fn true_survival(q: &[f64], zeta: &[f64], p_r: f64, longest: u64) -> Vec<f64> {
    let mut d = Disabling::new(q, zeta, p_r);
    let mut s = Vec::new();
    for _ in 0..=longest {
        let u = d.enabled_mass();
        s.push(u);
        if u < S_NEGLIGIBLE {
            break;
        }
        d.arrival();
    }
    s
}
