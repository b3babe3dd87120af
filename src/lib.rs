//! `rbf`: trace-replay analysis of recycling Bloom filters: the command line.
//!
//! The engine is a crate per layer of the pipeline (crates/, lowest first; a crate can
//! only name the crates below it, so the compiler holds the order, docs/ARCHITECTURE.md):
//!
//! ```text
//! rbf_foundations   errors, intervals, console, progress, outputs, resources, SIMD level
//! rbf_data          message, filter, ingest, workload, synth
//! rbf_observed      replay (exact ground truth), fit, trace_renewal
//! rbf_predicted     model (the FP paper's and the FN paper's models)
//! rbf_judge         compare, size, report, experiment
//! rbf_study         coverage (the coverage study)
//! rbf               args: the command line's options as library types (this crate)
//! ```
//!
//! This crate holds [`args`], each command run as `rbf` runs it: the `rbf` and
//! `rbf-bench` binaries and the Python package are built on it.

pub mod args;
