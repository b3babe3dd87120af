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
//! What is `pub` is what a user of the library may call:
//!
//! * the pipeline's stages: [`message`] (the 64-bit keyed [`message::Message`] every
//!   stage consumes), [`filter`] (one- and two-phase recycling Bloom filters), [`ingest`]
//!   (readers that turn traces into message streams), [`workload`] and [`synth`] (the FN
//!   paper's arrival model and traces drawn from it), [`replay`] (a stream through a
//!   filter with exact ground truth), [`fit`] (the workload model estimated from a
//!   stream), [`model`] (the FP paper's and the FN paper's models, docs/MODEL.md),
//!   [`compare`] (the judge: one [`compare::Record`] per bound of [`compare::Bound::ALL`],
//!   with its claim, standing and verdict), [`size`] (the smallest filter for FP and FN
//!   targets, confirmed by replay), [`report`] (tables and judged records in words) and
//!   [`experiment`] (config-driven grids, observed next to predicted, tables and plots);
//! * [`args`]: the command line's options as library types, each command run as `rbf`
//!   runs it (the `rbf` binary and the Python package are built on it);
//! * [`error`], [`Error`], [`Result`]: one error type that says where;
//! * the foundations a caller outside the crate needs: [`stop`] and [`progress`] (the
//!   interrupt flag and `--quiet`: the binaries and the Python package), [`console`]
//!   (the `outln!`/`errln!` lines that never panic on a closed stream) and [`signals`]
//!   (the binaries' `main`), [`output_file`] and [`resources`] (outputs written whole,
//!   requests checked against the machine: `rbf-bench` writes and checks as the commands
//!   do), [`stats`] (the intervals in the results);
//! * [`coverage`], the coverage study, which the `rbf-bench` binary runs.
//!
//! The rest of the foundations are the crate's own (`numbers`, the flag and config
//! number parser, reached through [`args`] and [`experiment`]; `simd`, the vector level
//! chosen at run time; `prefetch`; `slot_table`, the replay's and the fit's key tables).

mod data;
mod foundations;
mod judge;
mod observed;
mod predicted;
mod study;

pub mod args;

pub use data::{filter, ingest, message, synth, workload};
pub use foundations::{console, error, output_file, progress, resources, signals, stats, stop};
pub(crate) use foundations::{numbers, prefetch, simd, slot_table};
pub use judge::{compare, experiment, report, size};
pub use observed::{fit, replay, trace_renewal};
pub use predicted::model;
pub use study::coverage;

pub use error::{Error, Result};
