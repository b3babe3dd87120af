//! Studies of rbf itself: measurements of what its outputs claim, run outside the
//! commands a user runs.
//!
//! * `coverage`: the coverage study: do printed intervals hold their level.
//!
//! `bench/` beside this file is not a module of the library: it is the `rbf-bench`
//! binary (Cargo.toml's second `[[bin]]`), which runs the benchmarks and this study.

pub mod coverage;
