//! Two renewal computations on one bit process: the bound at p_r = a and the bound
//! over the interval [a, b] (the worst-case search's cut and the upper half beside it,
//! [`super::worst`]).
//!
//! An arrival sets bits with probability eta = (1 - low) + low U ([`Draws::eta`]),
//! whatever the top of the interval, and with a measured reuse profile U does not
//! depend on p_r: two inputs that differ only in the top of their draws then step
//! the same bit process with the same eta, arrival after arrival, and get the same
//! per-arrival sums. They differ in the numerator's sum alone (the non-repeat chance
//! reads the top) and, through it, in the one-phase "exhausted" test. [`renewal_pair`]
//! follows the cycle once and keeps both numerators, each added in the order the plain
//! computation adds it; where the exhausted tests of the two disagree and the answer
//! could change what the loop does next, it gives up (the caller computes both apart).
//! The results are therefore [`super::renewal`]'s, bit for bit.

use super::cycle::{Draws, Side, Tracker};
use super::process::bit_process;
use super::{
    check_sigma, result, RenewalInput, RenewalOptions, RenewalResult, Series, REUSE_SOURCE,
};
use crate::error::Result;
use crate::model::false_negative::disabling::EnabledMassSeq;
use crate::workload::ReuseProfile;

/// [`renewal`] of both inputs on one bit process where they share it (see the module
/// doc); None where they do not, or where their loops would part (compute them
/// apart then). An error is the first input's own: everything that can fail is
/// common to both while they share the process.
pub fn renewal_pair(
    a: &RenewalInput,
    b: &RenewalInput,
    opt: RenewalOptions,
) -> Result<Option<[RenewalResult; 2]>> {
    if !shares_bits(a, b, opt) {
        return Ok(None);
    }
    check_sigma(a)?;
    let Some(profile) = a.reuse else {
        return Ok(None);
    };
    let mut enabled = EnabledMassSeq::from_profile(profile);
    Ok(follow_pair([a, b], opt, &mut enabled)?.map(|both| {
        both.map(|r| RenewalResult {
            mode_note: REUSE_SOURCE,
            ..r
        })
    }))
}

/// The inputs step the same bit process with the same eta at every arrival: the same
/// filter and per-insertion sums, the same reuse profile (U read from it, whatever
/// p_r), the same bottom of their draws; and the exact engine without progress.
fn shares_bits(a: &RenewalInput, b: &RenewalInput, opt: RenewalOptions) -> bool {
    let same_profile = matches!((a.reuse, b.reuse), (Some(x), Some(y)) if same_profile(x, y));
    let same_sums = match (a.shared_bits, b.shared_bits) {
        (Some(x), Some(y)) => std::ptr::eq(x, y),
        (None, None) => true,
        _ => false,
    };
    same_profile
        && same_sums
        && opt.tolerance.is_none()
        && !opt.progress
        && a.t == b.t
        && a.sigma == b.sigma
        && a.max_inserts == b.max_inserts
        && a.retaining == b.retaining
        && a.phases == b.phases
        && a.draws().low.to_bits() == b.draws().low.to_bits()
}

/// The same knots, the same way between them and the same values, bit for bit.
fn same_profile(x: &ReuseProfile, y: &ReuseProfile) -> bool {
    std::ptr::eq(x, y)
        || (x.n == y.n
            && x.between == y.between
            && x.survival.len() == y.survival.len()
            && x.survival
                .iter()
                .zip(&y.survival)
                .all(|(a, b)| a.to_bits() == b.to_bits()))
}

/// [`super::follow_cycle`] and [`super::run`] for two inputs that share their bit
/// process ([`shares_bits`]); None where their loops would part.
fn follow_pair(
    inputs: [&RenewalInput; 2],
    opt: RenewalOptions,
    enabled: &mut EnabledMassSeq,
) -> Result<Option<[RenewalResult; 2]>> {
    let draws: [Draws; 2] = inputs.map(|i| i.draws());
    let two = inputs[0].phases == 2;
    let repeats_only = draws[0].low >= 1.0;
    let mut side = Side::new(bit_process(inputs[0], opt)?);
    let mut tracker = Tracker::new(&opt, "renewal bound", &side.bits);
    // The second input's numerator; everything else is the same for both.
    let mut c_other = 0.0f64;
    let mut series = Series::default();
    let mut j = 0u64;
    let mut held: Option<f64> = None;
    let (m, truncated) = loop {
        j += 1;
        let u = match held {
            Some(u) => u,
            None => enabled.next_mass(),
        };
        let s = side.arrival(draws[0], u);
        c_other += draws[1].non_repeat(u) * s.sets_cap;
        if two {
            series.alive.push(s.alive);
            series.c.push(s.sets_cap);
            series.u.push(u);
            series.lucky.push(s.lucky);
        }
        let exhausted = side.exhausted(draws[0], u);
        let other = draws[1].non_repeat(u) <= 1e-9 * c_other / side.a_sum;
        // The test is read where Q can be exhausted with repeats only, and (one
        // phase) until U is held: there the two loops could part.
        if exhausted != other && (repeats_only || (!two && held.is_none())) {
            return Ok(None);
        }
        if s.alive_cap < opt.eps || j >= opt.max_arrivals || (exhausted && !two && repeats_only) {
            break (j, s.alive_cap);
        }
        if exhausted && !two && held.is_none() {
            held = Some(u);
        }
        if two && exhausted && repeats_only {
            return Err(super::never_ends(inputs[0].q.len(), s.alive_cap, j));
        }
        if two && j.is_power_of_two() && j >= 1 << 20 {
            crate::resources::check_memory(
                "the two-phase renewal bound's per-arrival series",
                48.0 * 2.0 * j as f64,
            )?;
        }
        let exact_cap = repeats_only || j + 1 >= opt.max_arrivals;
        side.bits
            .set_cap_floor(if exact_cap { None } else { Some(opt.eps) });
        side.step(draws[0], u);
        tracker.arrival(side.insertions)?;
    };
    if two {
        series.u.reserve(m as usize);
        for _ in 0..m {
            series.u.push(enabled.next_mass());
        }
    }
    let first = result(
        inputs[0],
        opt,
        &side,
        side.c_sum,
        series.clone(),
        m,
        truncated,
    );
    let second = result(inputs[1], opt, &side, c_other, series, m, truncated);
    Ok(Some([first, second]))
}
