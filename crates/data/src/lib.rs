//! Data: messages, the filter they go through, and where streams of them come from.
//!
//! * `message`: the 64-bit keyed message every stage consumes.
//! * `filter`: one- and two-phase recycling Bloom filters.
//! * `ingest`: traces (captures, flow logs, request logs, .rbfs) into message streams.
//! * `workload`: the FN paper's workload model (Q, p_r, placement, reuse) and its file.
//! * `synth`: synthetic traces drawn from the workload model.

pub mod filter;
pub mod ingest;
pub mod message;
pub mod synth;
pub mod workload;
