//! `rbf`: trace-replay analysis of recycling Bloom filters.
//!
//! The data flows one way, and the modules follow it (docs/ARCHITECTURE.md has the
//! layer order, which `tests/it/architecture.rs` enforces, and every submodule). The
//! source folders are the layers (`foundations/`, `data/`, `observed/`, `predicted/`,
//! `judge/`, `study/`; the command line's `args/`): a layer is a private module that only
//! declares its modules, and each module is re-exported here under its own name, so that
//! its path is `rbf::replay`, not `rbf::observed::replay`:
//!
//! ```text
//! ingest ──> message stream ──> replay (observed FP/FN, exact ground truth) ──┐
//!   │                      └──> fit (workload: Q, p_r, placement, reuse) ──> model (predicted)
//! synth ──┘                                                                   │
//!                 compare (the judge: every bound next to what was observed) <─┘
//!                                    │
//!                     size · report · experiment · the `rbf` command line
//! ```
//!
//! * [`stop`], [`error`], [`console`], [`resources`], [`progress`], [`signals`]: stopping
//!   cleanly, errors that say where, notes, machine limits, progress with an ETA.
//! * [`numbers`]: numbers as users write them (`1e6`, `2^20`), for flags and configs.
//! * `prefetch` (private), [`stats`]: cache prefetch; the intervals behind verdicts.
//! * [`simd`]: the widest vector instructions of the CPU, chosen at run time; results the same at every level.
//! * [`output_file`]: outputs written whole or not at all, never onto an input.
//! * [`message`]: the 64-bit keyed [`message::Message`] every stage consumes.
//! * [`filter`]: one- and two-phase recycling Bloom filters.
//! * [`ingest`]: readers that turn traces into message streams.
//! * [`workload`], [`synth`]: the FN paper's arrival model and traces drawn from it.
//! * [`replay`]: runs a stream through a filter with exact ground truth.
//! * [`fit`]: estimates the workload model (Q, p_r, placement, reuse profile) from a stream.
//! * [`model`]: the FP paper's and the FN paper's models (docs/MODEL.md).
//! * [`compare`]: the judge: one [`compare::Record`] per bound of [`compare::Bound::ALL`],
//!   with its claim, standing and verdict, for every command and the report.
//! * [`size`]: the smallest filter for FP and FN targets, confirmed by replay.
//! * [`report`]: tables and judged records in words, the same in every command.
//! * [`experiment`]: config-driven grids, observed next to predicted, tables and plots.
//! * [`args`]: the command line's options as library types (shared by the `rbf` binary
//!   and the Python package), each command run as `rbf` runs it.

mod data;
mod foundations;
mod judge;
mod observed;
mod predicted;
mod study;

pub mod args;

pub use data::{filter, ingest, message, synth, workload};
use foundations::prefetch;
pub(crate) use foundations::slot_table;
pub use foundations::{
    console, error, numbers, output_file, progress, resources, signals, simd, stats, stop,
};
pub use judge::{compare, experiment, report, size};
pub use observed::{fit, replay};
pub use predicted::model;
pub use study::coverage;

pub use error::{Error, Result};
