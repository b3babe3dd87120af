//! Studies of rbf itself: measurements of what its outputs claim, run outside the
//! commands a user runs.
//!
//! * `coverage`: the coverage study: do printed intervals hold their level.
//!
//! The `rbf-bench` binary (the root package's src/bench/) runs the benchmarks and this
//! study; nothing in the libraries uses either.

pub mod coverage;
