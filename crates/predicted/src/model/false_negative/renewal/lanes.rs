//! Renewal computations that share one bit process: the bound at p_r = x and the
//! bounds over intervals [x, b] (the worst-case search's cut at x, the upper half
//! beside it and the halves that later start at x: [`super::worst`]).
//!
//! An arrival sets bits with probability eta = (1 - low) + low U ([`Draws::eta`]),
//! whatever the top of the interval, and with a measured reuse profile U does not
//! depend on p_r: inputs that differ only in the top of their draws step the same bit
//! process with the same eta, arrival after arrival, and get the same per-arrival
//! sums. They differ in the numerator's sum alone (the non-repeat chance reads the
//! top) and, through it, in the one-phase "exhausted" test. [`renewal_lanes`] follows
//! the cycle once, as the first input's own computation does, and keeps every
//! input's numerator, each added in the order its own computation adds it; an input
//! whose exhausted test disagrees with the first's where the answer could change what
//! the loop does next is dropped (computed apart by the caller where needed). The
//! results are therefore [`super::renewal`]'s, bit for bit.

use super::cycle::Draws;
use super::{
    check_sigma, followed, result, RenewalInput, RenewalOptions, RenewalResult, REUSE_SOURCE,
};
use crate::model::false_negative::disabling::EnabledMassSeq;
use rbf_data::workload::ReuseProfile;
use rbf_foundations::error::Result;

/// [`super::renewal`] of `first` and of each of `others` that shares its bit process
/// (see the module doc): None for the others that do not, and for every input when
/// the first cannot lend its process (the caller computes those apart). An error is
/// the first input's own: everything that can fail is common to the inputs while
/// they share the process.
pub fn renewal_lanes(
    first: &RenewalInput,
    others: &[RenewalInput],
    opt: RenewalOptions,
) -> Result<Vec<Option<RenewalResult>>> {
    let Some(profile) = first
        .reuse
        .filter(|_| first.tolerance(&opt).is_none() && !opt.progress)
    else {
        return Ok(vec![None; others.len() + 1]);
    };
    check_sigma(first)?;
    let mut inputs = vec![first];
    inputs.extend(others.iter().filter(|o| shares_bits(first, o)));
    let mut enabled = EnabledMassSeq::from_profile(profile);
    let mut found = follow_lanes(&inputs, opt, &mut enabled)?.into_iter();
    // Back in the order asked, None where an input did not share the process.
    let mut out = vec![found.next().flatten()];
    for o in others {
        out.push(if shares_bits(first, o) {
            found.next().flatten()
        } else {
            None
        });
    }
    Ok(out
        .into_iter()
        .map(|r| {
            r.map(|r| RenewalResult {
                mode_note: REUSE_SOURCE,
                ..r
            })
        })
        .collect())
}

/// `b` steps `a`'s bit process with the same eta at every arrival: the same filter
/// and per-insertion sums, the same reuse profile (U read from it, whatever p_r), the
/// same bottom of its draws.
fn shares_bits(a: &RenewalInput, b: &RenewalInput) -> bool {
    let same_profile = matches!((a.reuse, b.reuse), (Some(x), Some(y)) if same_profile(x, y));
    let same_sums = match (a.shared_bits, b.shared_bits) {
        (Some(x), Some(y)) => std::ptr::eq(x, y),
        (None, None) => true,
        _ => false,
    };
    same_profile
        && same_sums
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

/// One input's own numerator and whether it still follows the first's loop.
struct Lane {
    draws: Draws,
    c_sum: f64,
    with_first: bool,
}

/// [`super::followed`] for inputs that share the first's bit process
/// ([`shares_bits`]), the first driving the loop; None for those whose loop would
/// have parted from the first's.
fn follow_lanes(
    inputs: &[&RenewalInput],
    opt: RenewalOptions,
    enabled: &mut EnabledMassSeq,
) -> Result<Vec<Option<RenewalResult>>> {
    let first = inputs[0];
    let two = first.phases == 2;
    let repeats_only = first.draws().low >= 1.0;
    let mut lanes: Vec<Lane> = inputs[1..]
        .iter()
        .map(|i| Lane {
            draws: i.draws(),
            c_sum: 0.0,
            with_first: true,
        })
        .collect();
    let f = followed(first, opt, enabled, |a| {
        // The test is read where Q can be exhausted with repeats only, and (one
        // phase) until U is held: there a lane's loop could part from the first's.
        let read = repeats_only || (!two && a.drawing);
        for lane in lanes.iter_mut().filter(|l| l.with_first) {
            let non_repeat = lane.draws.non_repeat(a.u);
            lane.c_sum += non_repeat * a.summary.sets_cap;
            let own = non_repeat <= 1e-9 * lane.c_sum / a.a_sum;
            lane.with_first = !(read && own != a.exhausted);
        }
    })?;
    let of = |input: &RenewalInput, c_sum: f64| {
        result(input, opt, &f.side, c_sum, f.two.as_ref(), f.m, f.truncated)
    };
    let mut out = vec![Some(of(first, f.side.c_sum))];
    for (input, lane) in inputs[1..].iter().zip(&lanes) {
        out.push(lane.with_first.then(|| of(input, lane.c_sum)));
    }
    Ok(out)
}
