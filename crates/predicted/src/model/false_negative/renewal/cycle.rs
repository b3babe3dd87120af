//! One cycle of the renewal model seen arrival by arrival: a bit process with the
//! running sums of eqs. (20)-(23) ([`Side`]), and the progress display and Ctrl-C
//! polling of the loop that drives it ([`Tracker`]). The exact engine drives one side
//! with the eq. (24) U; the certified mode drives two, one per end of its bracket of U.

use super::input::RenewalOptions;
use super::process::Stepper;
use crate::model::false_negative::bitdist::Summary;
use rbf_foundations::error::Result;

/// What an arrival of the renewal model draws, given U (the chance that a draw from Q
/// is a non-repeat): it may set bits with probability eta = (1 - p_r) + p_r U (eq. 25)
/// and is a non-repeat draw with probability p_r U (eqs. 21, 26).
///
/// For p_r known only to lie in [low, high], one computation bounds every p_r in it
/// (one phase): take eta at `low` and the non-repeat chance eta_low rho_high, where
/// rho = p_r U / eta is the chance that a bit-setting arrival is a non-repeat. In the
/// coupling of docs/RENEWAL-TOLERANCE.md (section 1, "Monotonicity in U"),
/// eta_low >= eta(p_r) makes every bit-setting arrival come no later, and rho is
/// non-decreasing in p_r and in U (so non-increasing along the cycle), so rho_high at
/// the earlier time is at least rho(p_r) at the later one: pathwise at least as many
/// false negatives and at most as many arrivals per cycle, for every p_r in the
/// interval at once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Draws {
    pub low: f64,
    pub high: f64,
}

impl Draws {
    pub fn exact(p_r: f64) -> Draws {
        Draws {
            low: p_r,
            high: p_r,
        }
    }

    /// The chance that the arrival may set bits.
    #[inline]
    pub fn eta(&self, u: f64) -> f64 {
        ((1.0 - self.low) + self.low * u).clamp(0.0, 1.0)
    }

    /// The chance that the arrival is a non-repeat draw.
    #[inline]
    pub fn non_repeat(&self, u: f64) -> f64 {
        if self.low == self.high {
            return self.high * u;
        }
        let eta_high = (1.0 - self.high) + self.high * u;
        if eta_high <= 0.0 {
            return 0.0;
        }
        self.eta(u) * (self.high * u / eta_high).min(1.0)
    }
}

/// One bit process of a cycle and its running sums over the arrivals (eqs. 20-23).
pub(super) struct Side {
    pub bits: Stepper,
    /// sum_j E[A_j], sum_j E[C_j], sum_j of the lucky (FP) mass.
    pub a_sum: f64,
    pub c_sum: f64,
    pub lucky_sum: f64,
    /// Expected insertions so far.
    pub insertions: f64,
}

/// A side's state after an arrival (see [`Side::block`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Record {
    pub alive_cap: f64,
    pub a_sum: f64,
    pub c_sum: f64,
    pub lucky_sum: f64,
    pub insertions: f64,
}

impl Side {
    pub fn new(bits: Stepper) -> Side {
        Side {
            bits,
            a_sum: 0.0,
            c_sum: 0.0,
            lucky_sum: 0.0,
            insertions: 0.0,
        }
    }

    /// Adds the arrival whose draw is a non-repeat with probability p_r U; returns
    /// the bit process's sums before it.
    pub fn arrival(&mut self, draws: Draws, u: f64) -> Summary {
        let s = self.bits.summary();
        self.a_sum += s.alive;
        self.c_sum += draws.non_repeat(u) * s.sets_cap;
        self.lucky_sum += s.lucky;
        s
    }

    /// Moves the bit process past that arrival: it sets bits with probability
    /// eta = (1 - p_r) + p_r U (eq. 25).
    pub fn step(&mut self, draws: Draws, u: f64) {
        let eta = draws.eta(u);
        self.insertions += eta;
        self.bits.step(eta);
    }

    /// Adds and steps past the arrivals with the given U, one after another, and
    /// returns the state after adding each one (before its step).
    pub fn block(&mut self, draws: Draws, us: &[f64]) -> Vec<Record> {
        us.iter()
            .map(|&u| {
                let s = self.arrival(draws, u);
                let r = Record {
                    alive_cap: s.alive_cap,
                    a_sum: self.a_sum,
                    c_sum: self.c_sum,
                    lucky_sum: self.lucky_sum,
                    insertions: self.insertions,
                };
                self.step(draws, u);
                r
            })
            .collect()
    }

    /// The one-phase stopping rule's "exhausted" test: a further arrival adds at most
    /// a negligible share to the numerator (see the module doc).
    pub fn exhausted(&self, draws: Draws, u: f64) -> bool {
        draws.non_repeat(u) <= 1e-9 * self.c_sum / self.a_sum
    }
}

/// Progress of a renewal computation, measured in expected insertions out of those
/// after which cycles are over (the per-insertion process falls below epsilon there).
pub(super) struct Tracker {
    bar: rbf_foundations::progress::Progress,
    arrivals: u64,
}

impl Tracker {
    /// Progress of the per-arrival loop on the bit process `bits` (the per-insertion
    /// sums before it show their own).
    pub fn new(opt: &RenewalOptions, what: &str, bits: &Stepper) -> Tracker {
        let bar = if opt.progress {
            let total = bits.insertions_to(opt.eps) as f64;
            rbf_foundations::progress::Progress::new(what, total, "insertions")
        } else {
            rbf_foundations::progress::Progress::hidden()
        };
        Tracker { bar, arrivals: 0 }
    }

    /// One more arrival, after which `insertions` are expected; polls Ctrl-C now and
    /// then.
    pub fn arrival(&mut self, insertions: f64) -> Result<()> {
        self.arrivals(1, insertions)
    }

    /// `n` more arrivals, after which `insertions` are expected.
    pub fn arrivals(&mut self, n: u64, insertions: f64) -> Result<()> {
        let before = self.arrivals;
        self.arrivals += n;
        if before / 4096 != self.arrivals / 4096 {
            rbf_foundations::progress::check_interrupt()?;
            self.bar.set(insertions);
        }
        Ok(())
    }
}
