//! Studies of rbf itself: measurements of what its outputs claim, run outside the
//! commands a user runs.
//!
//! * `coverage`: the coverage study: do printed intervals hold their level (issue 30).

pub mod coverage;
