//! Analytical models of recycling Bloom filters (predicted rates), fed by a filter
//! configuration and, for false negatives, a workload.
//!
//! * [`tau`]: bit-count transitions of one insertion, shared by every model.

pub mod tau;
