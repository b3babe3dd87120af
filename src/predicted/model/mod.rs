//! Analytical models of recycling Bloom filters (predicted rates), fed by a filter
//! configuration and, for false negatives, a workload.
//!
//! * [`tau`]: bit-count transitions of one insertion, shared by every model.
//! * [`fp`]: the FP paper's average false-positive rates, E[N_0] and capacity.
//! * [`fneg`]: false-negative bounds and approximations (FN paper).

pub mod fneg;
pub mod fp;
pub mod tau;
