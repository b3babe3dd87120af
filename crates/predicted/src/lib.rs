//! Predicted: the analytical models, fed by a filter and (for false negatives) a workload.
//!
//! * `model`: the FP paper's model and the FN paper's renewal and Markov bounds.

pub mod model;
