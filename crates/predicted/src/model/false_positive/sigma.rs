//! sigma-bounded average FP rates: one phase (f_sigma^1, eqs. 15-18) and two phases
//! (f_sigma^2, eqs. 24-26), with the expected messages per cycle E[N_0] (eqs. 20-23).

use std::ops::ControlFlow;

use serde::Serialize;

use super::renewal::{Renewal, Visit, PROGRESS_FROM};
use crate::model::domain::OutsideModel;
use rbf_foundations::error::Result;
use rbf_foundations::progress::Progress;

/// Sums over one cycle of the one-phase chain for a threshold sigma.
///
/// Kept as sums (not rates) so the capacity sweep can grow them one state at a time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CycleSums {
    /// sum v_i: expected arrivals per cycle (E[N_0]).
    pub arrivals: f64,
    /// sum v_i rho(i): expected false positives per cycle.
    pub false_positives: f64,
    /// sum v_i (1 - tau(i, i)): expected bit-setting arrivals per cycle.
    pub bit_setting: f64,
}

impl CycleSums {
    pub fn add(&mut self, v: &Visit) {
        self.arrivals += v.visits;
        self.false_positives += v.visits * v.rho();
        self.bit_setting += v.visits * v.leave;
    }

    /// f_sigma^1 (eq. 18): sum pi_i rho(i) with pi = v / sum v.
    pub fn fp(&self) -> f64 {
        self.false_positives / self.arrivals
    }
}

/// The state of the half that was active when a cycle ended, which becomes the frozen
/// half for the whole next cycle (eqs. 24-25).
///
/// The paper weighs F by the state *before* the recycling insertion (i in
/// sigma-k+1..sigma). Our frozen half keeps the recycling message's bits, so it holds
/// j = i + d > sigma bits; we weigh rho by j, which is what a lookup in that half sees.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrozenSums {
    /// sum over exits of v_i tau(i, j): recycles per cycle (1 when the chain is right).
    pub recycles: f64,
    /// sum v_i tau(i, j) rho(j).
    pub rho: f64,
    /// sum v_i tau(i, j) rho(j) / (1 - rho(j)), for the no-copy-over variant.
    pub rho_odds: f64,
    /// sum v_i tau(i, j) / (1 - rho(j)).
    pub stretch: f64,
}

impl FrozenSums {
    /// Adds the exits of state `v` for threshold sigma; `rho_at(j)` is rho(j).
    pub fn add(&mut self, v: &Visit, sigma: u64, rho_at: impl Fn(u64) -> f64) {
        if v.visits == 0.0 {
            return;
        }
        let first = (sigma + 1).saturating_sub(v.state).max(1) as usize;
        for (d, p) in v.row.iter().enumerate().skip(first) {
            if *p == 0.0 {
                continue;
            }
            self.add_exit(v.visits * p, rho_at(v.state + d as u64));
        }
    }

    /// Adds `w` expected exits per cycle to a state whose rho is `r`.
    #[inline]
    pub fn add_exit(&mut self, w: f64, r: f64) {
        if w == 0.0 {
            return;
        }
        self.recycles += w;
        self.rho += w * r;
        self.rho_odds += w * r / (1.0 - r);
        self.stretch += w / (1.0 - r);
    }

    /// Mean rho of the frozen half over cycles: sum_j F_j rho(j) (eq. 26's second sum).
    pub fn fp(&self) -> f64 {
        self.rho / self.recycles
    }
}

/// Two-phase long-run count-instance FP rate from the active chain's sums and the
/// frozen half's distribution.
///
/// With copy-over every arrival is inserted into the active half, so the active half
/// runs the one-phase chain on M/2 bits and a cycle's length does not depend on the
/// frozen half: f_sigma^2 = 1 - (1 - f_active)(1 - f_frozen) (eq. 26).
/// Without copy-over an arrival found in the frozen half (probability r) leaves the
/// active half alone, which stretches the cycle by 1/(1 - r); by renewal-reward the rate
/// is (V E[r/(1-r)] + R) / (V E[1/(1-r)]) with V, R the active chain's arrivals and false
/// positives per cycle and the expectations over F.
/// Both are exact when the halves use independent positions; with shared positions a
/// message's k bits are the same in both halves and the events are correlated (and
/// copy-over then puts bits the frozen half has into the active one), so the formula
/// is the paper's independence approximation.
pub fn two_phase_fp(active: &CycleSums, frozen: &FrozenSums, copy_over: bool) -> f64 {
    if copy_over {
        1.0 - (1.0 - active.fp()) * (1.0 - frozen.fp())
    } else {
        let odds = frozen.rho_odds / frozen.recycles;
        let stretch = frozen.stretch / frozen.recycles;
        (active.arrivals * odds + active.false_positives) / (active.arrivals * stretch)
    }
}

/// The sigma-bounded model's predictions for one filter array of `m` bits.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SigmaPrediction {
    /// f_sigma^1 of this array (for two phases: the active half's own rate).
    pub fp_active: f64,
    /// Mean rho of the frozen half (two phases only; 0 for one).
    pub fp_frozen: f64,
    /// f_sigma^1 (one phase) or f_sigma^2 (two phases).
    pub fp_sigma: f64,
    /// E[N_0]: expected arrivals per cycle, the false positives included (eqs. 20-23).
    pub expected_messages_per_cycle: f64,
    /// Expected arrivals per cycle that set at least one bit.
    pub expected_bit_setting_per_cycle: f64,
    /// Expected recycles per cycle from the chain (1 up to rounding: a self-check).
    pub recycle_mass: f64,
}

/// Solves the chain for threshold sigma.
///
/// Boundary convention: the paper stops at b >= sigma (E[N_b] = 0 for b >= sigma, eqs.
/// 20, 22); our filters recycle when *more than* sigma bits are set, so here state sigma
/// is still inside the cycle and the exits are the insertions that end above sigma.
/// The paper's numbers for sigma equal ours for sigma - 1.
pub fn predict_sigma(
    renewal: &Renewal,
    sigma: u64,
    phases: u8,
    copy_over: bool,
) -> Result<SigmaPrediction> {
    let mut active = CycleSums::default();
    let mut frozen = FrozenSums::default();
    let t = renewal.transitions;
    let progress = if sigma >= PROGRESS_FROM {
        Progress::new(
            format!("FP model (eqs. 15-18), M = {}, sigma = {sigma}", t.m),
            sigma as f64,
            "states",
        )
    } else {
        Progress::hidden()
    };
    renewal.pass(Some(sigma), &progress, |v| {
        active.add(v);
        frozen.add(v, sigma, |j| t.all_set(j));
        ControlFlow::Continue(())
    })?;
    let two = phases == 2;
    let (fp_frozen, fp_sigma) = if two {
        (frozen.fp(), two_phase_fp(&active, &frozen, copy_over))
    } else {
        (0.0, active.fp())
    };
    // Without copy-over, arrivals found in the frozen half do not advance the cycle.
    let stretch = if two && !copy_over {
        frozen.stretch / frozen.recycles
    } else {
        1.0
    };
    if !stretch.is_finite() || !fp_sigma.is_finite() {
        return Err(OutsideModel::FrozenHalfFull.into());
    }
    Ok(SigmaPrediction {
        fp_active: active.fp(),
        fp_frozen,
        fp_sigma,
        expected_messages_per_cycle: active.arrivals * stretch,
        expected_bit_setting_per_cycle: active.bit_setting,
        recycle_mass: frozen.recycles,
    })
}
