//! The renewal argument on the trace's own recycles ([`rbf_observed::trace_renewal`]) as a
//! judged record, and what it says of the bounds computed on the fitted model.
//!
//! The fitted model's renewal bound assumes a stationary workload: one reuse profile
//! for every cycle. On real traffic (captures of different sites back to back, scans,
//! packet trains) the recycles fall where the profile does not describe them, and
//! that bound has fallen to a fifth of what happened. The trace's own recycles need no
//! such assumption, so where the fitted model's bound lies below their estimate, it is
//! not a bound for this trace: its standing drops to "not proven", with the reason.

use super::bound::Bound;
use super::observed::Observed;
use super::record::{Record, Standing};
use rbf_observed::trace_renewal::{TraceBound, REPLICATES};
use rbf_predicted::model::false_negative::{Claim, Method};

/// What the bound is, in the words of every output (the same for every point, so that
/// a run's notes name it once; the paths' mean is in the JSON detail).
fn note() -> String {
    format!(
        "the renewal argument on this trace's own recycles, no stationarity assumed (docs/TRACE-BOUND.md): 99 % prediction limit of one filter's FN over {REPLICATES} paths of the attempt chain"
    )
}

/// The trace bound's record (judged later with the others), for the rate `observed`
/// states: over complete cycles where it has an interval, else over every measured
/// arrival ([`TraceBound::stated`]).
pub fn record(b: &TraceBound, observed: Option<&Observed>) -> Record {
    let bound = Bound::of(Method::RenewalTrace);
    Record {
        bound,
        value: b.stated(observed.is_some_and(|o| o.interval.is_some())),
        range: None,
        claim: bound.claim(),
        standing: Standing::ThisTrace,
        verdict: None,
        regime: None,
        excess: None,
        note: note(),
    }
}

/// Whether a replay of a trace follows its own recycles for `methods`: for the
/// renewal-trace bound, and for the renewal bound, whose standing on this trace they
/// decide ([`demote_fitted_bounds_below`]).
pub fn follow_the_trace(methods: &[Method]) -> bool {
    methods.contains(&Method::RenewalTrace) || methods.contains(&Method::Renewal)
}

/// Why a method that reads the trace has no value on a workload alone.
pub const NEEDS_THE_TRACE: &str = "renewal-trace: reads the trace itself, so it has a value where a trace is replayed (rbf compare, rbf run on a trace), not on a workload alone";

/// The renewal bound's records on the fitted model whose value lies below what this
/// trace's own recycles show its expected FN to be at least (the lower end of the 99 %
/// interval of the paths' mean: within the paths' own noise the trace does not tell):
/// "not proven", saying why (the verdict against the observed FN is judged as for any
/// bound).
pub fn demote_fitted_bounds_below(b: &TraceBound, records: &mut [Record]) {
    for r in records {
        let fitted_renewal = r.bound.method() == Method::Renewal
            && r.claim == Claim::UpperBound
            && !matches!(r.standing, Standing::NotProven | Standing::NotJudged);
        if fitted_renewal && r.value < b.lower {
            r.standing = Standing::NotProven;
            r.note = format!(
                "below this trace's own recycles (renewal-trace: expected FN at least {:.3e}, 99 %): the trace is not stationary at this filter's scale, so the fitted model's bound is not a bound for it; {}",
                b.lower, r.note
            );
        }
    }
}
