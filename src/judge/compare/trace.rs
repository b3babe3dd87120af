//! The renewal argument on the trace's own recycles ([`crate::trace_renewal`]) as a
//! judged record, and what it says of the bounds computed on the fitted model.
//!
//! The fitted model's renewal bound assumes a stationary workload: one reuse profile
//! for every cycle. On real traffic (captures of different sites back to back, scans,
//! packet trains) the recycles fall where the profile does not describe them, and
//! that bound has fallen to a fifth of what happened. The trace's own recycles need no
//! such assumption, so where the fitted model's bound lies below their estimate, it is
//! not a bound for this trace: its standing drops to "not proven", with the reason.

use super::bound::Bound;
use super::record::{Record, Standing};
use crate::model::false_negative::{Claim, Method};
use crate::trace_renewal::{TraceBound, REPLICATES};

/// What the bound is, in the words of every output (the same for every point, so that
/// a run's notes name it once; the paths' mean is in the JSON detail).
fn note() -> String {
    format!(
        "the renewal argument on this trace's own recycles, no stationarity assumed (docs/TRACE-BOUND.md): 99 % prediction limit of one filter's FN over {REPLICATES} paths of the attempt chain"
    )
}

/// The trace bound's record (judged later with the others).
pub fn record(b: &TraceBound) -> Record {
    let bound = Bound::of(Method::RenewalTrace);
    Record {
        bound,
        value: b.upper,
        range: None,
        claim: bound.claim(),
        standing: Standing::ThisTrace,
        verdict: None,
        regime: None,
        excess: None,
        note: note(),
    }
}

/// Why a method that reads the trace has no value on a workload alone.
pub const NEEDS_THE_TRACE: &str = "renewal-trace: reads the trace itself, so it has a value where a trace is replayed (rbf compare, rbf run on a trace), not on a workload alone";

/// The renewal bound's records on the fitted model whose value lies below this
/// trace's own estimate: "not proven", saying why (the verdict against the observed
/// FN is judged as for any bound).
pub fn demote_fitted_bounds_below(b: &TraceBound, records: &mut [Record]) {
    for r in records {
        let fitted_renewal = r.bound.method() == Method::Renewal
            && r.claim == Claim::UpperBound
            && !matches!(r.standing, Standing::NotProven | Standing::NotJudged);
        if fitted_renewal && r.value < b.estimate {
            r.standing = Standing::NotProven;
            r.note = format!(
                "below this trace's own recycles (renewal-trace mean {:.3e}): the trace is not stationary at this filter's scale, so the fitted model's bound is not a bound for it; {}",
                b.estimate, r.note
            );
        }
    }
}
