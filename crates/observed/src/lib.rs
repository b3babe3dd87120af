//! Observed and fitted: what a stream shows when it is run through a filter, and the
//! workload model estimated from it.
//!
//! * `replay`: a stream through a filter with exact ground truth: observed FP and FN.
//! * `fit`: the workload model (Q, p_r, placement, reuse profile) estimated from a stream.
//! * `trace_renewal`: the renewal argument on the trace's own recycles (an FN bound for
//!   one trace, no stationarity assumed).

pub mod fit;
pub mod replay;
pub mod trace_renewal;
