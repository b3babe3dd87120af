//! One cycle of the renewal model seen arrival by arrival: a bit process with the
//! running sums of eqs. (20)-(23) ([`Side`]), and the progress display and Ctrl-C
//! polling of the loop that drives it ([`Tracker`]). The exact engine drives one side
//! with the eq. (24) U; the certified mode drives two, one per end of its bracket of U.

use super::input::RenewalOptions;
use super::process::Stepper;
use crate::error::Result;
use crate::model::fneg::bitdist::Summary;

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
    pub fn arrival(&mut self, p_r: f64, u: f64) -> Summary {
        let s = self.bits.summary();
        self.a_sum += s.alive;
        self.c_sum += p_r * u * s.sets_cap;
        self.lucky_sum += s.lucky;
        s
    }

    /// Moves the bit process past that arrival: it sets bits with probability
    /// eta = (1 - p_r) + p_r U (eq. 25).
    pub fn step(&mut self, p_r: f64, u: f64) {
        let eta = ((1.0 - p_r) + p_r * u).clamp(0.0, 1.0);
        self.insertions += eta;
        self.bits.step(eta);
    }

    /// Adds and steps past the arrivals with the given U, one after another, and
    /// returns the state after adding each one (before its step).
    pub fn block(&mut self, p_r: f64, us: &[f64]) -> Vec<Record> {
        us.iter()
            .map(|&u| {
                let s = self.arrival(p_r, u);
                let r = Record {
                    alive_cap: s.alive_cap,
                    a_sum: self.a_sum,
                    c_sum: self.c_sum,
                    lucky_sum: self.lucky_sum,
                    insertions: self.insertions,
                };
                self.step(p_r, u);
                r
            })
            .collect()
    }

    /// The one-phase stopping rule's "exhausted" test: a further arrival adds at most
    /// a negligible share to the numerator (see the module doc).
    pub fn exhausted(&self, p_r: f64, u: f64) -> bool {
        p_r * u <= 1e-9 * self.c_sum / self.a_sum
    }
}

/// Progress of a renewal computation, measured in expected insertions out of those
/// after which cycles are over (the per-insertion process falls below epsilon there).
pub(super) struct Tracker {
    bar: crate::progress::Progress,
    arrivals: u64,
}

impl Tracker {
    /// Progress of the per-arrival loop on the bit process `bits` (the per-insertion
    /// sums before it show their own).
    pub fn new(opt: &RenewalOptions, what: &str, bits: &Stepper) -> Tracker {
        let bar = if opt.progress {
            let total = bits.insertions_to(opt.eps) as f64;
            crate::progress::Progress::new(what, total, "insertions")
        } else {
            crate::progress::Progress::hidden()
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
            crate::progress::check_interrupt()?;
            self.bar.set(insertions);
        }
        Ok(())
    }
}
