//! Analytical models of recycling Bloom filters (predicted rates), fed by a filter
//! configuration and, for false negatives, a workload.
//!
//! * [`tau`]: bit-count transitions of one insertion, shared by every model.
//! * [`false_positive`]: the FP paper's average false-positive rates, E[N_0] and capacity.
//! * [`false_negative`]: false-negative bounds and approximations (FN paper).
//! * [`domain`]: what the models refuse to compute for a filter and workload.

pub mod domain;
pub mod false_negative;
pub mod false_positive;
pub mod tau;
