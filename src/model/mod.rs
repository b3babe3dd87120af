//! Analytical models of recycling Bloom filters (predicted rates), fed by a filter
//! configuration and, for false negatives, a workload.
//!
//! * [`tau`]: bit-count transitions of one insertion, shared by every model.
//! * [`fneg`]: false-negative bounds and approximations (FN paper).

pub mod fneg;
pub mod tau;
