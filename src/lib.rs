//! `rbf`: trace-replay analysis of recycling Bloom filters.
//!
//! The data flows one way, and the modules follow it:
//!
//! ```text
//! ingest ──> message stream ──> replay (observed FP/FN, exact ground truth)
//!   │                      └──> fit (workload: Q, p_r, placement) ──> model (predicted)
//! synth ──┘                                                            │
//!                               report / experiment (side by side) <───┘
//! ```
//!
//! * [`message`]: the 64-bit keyed [`message::Message`] every stage consumes.
//! * [`ingest`]: readers that turn traces into message streams.
//! * [`synth`]: synthetic traces from the FN paper's arrival model ([`workload`]).
//! * [`filter`]: one- and two-phase recycling Bloom filters.
//! * [`replay`]: runs a stream through a filter with exact ground truth.
//! * [`fit`]: estimates the workload model (Q, p_r, placement) from a stream.
//! * [`report`]: tables for people; JSON comes from the result types' serde forms.
//! * [`experiment`]: config-driven grids, observed next to predicted, tables and plots.
//! * [`output_file`]: outputs written whole or not at all, never onto an input.
//! * [`resources`]: requests checked against this machine's memory, disk and cores.
//! * [`progress`]: progress bars with an ETA for long work, and a clean stop on Ctrl-C.

pub mod compare;
pub mod coverage;
pub mod error;
pub mod experiment;
pub mod filter;
pub mod fit;
pub mod ingest;
pub mod message;
pub mod model;
pub mod output_file;
mod prefetch;
pub mod progress;
pub mod replay;
pub mod report;
pub mod resources;
pub mod size;
pub mod stats;
pub mod synth;
pub mod workload;

pub use error::{Error, Result};
