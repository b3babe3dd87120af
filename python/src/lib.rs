//! `rbf._native`: the `rbf` command line, callable from Python.
//!
//! The package's functions (`rbf.replay`, `rbf.fit`, ...; python/rbf/__init__.py) turn
//! their keyword arguments into the command line's flags and call [`call`], which parses
//! them with the CLI's own clap definitions and runs the CLI's own command code
//! (`../src/cli`, compiled in here): the option names, defaults, checks and error
//! messages are the command line's, by construction. Results come back as the JSON the
//! command prints with `--json`.

// The CLI's sources, as `crate::cli` (their own paths say `crate::cli::...`). Parts the
// package does not call (argument parsing from the process, `bench`) are dead code here.
#[allow(dead_code)]
#[path = "../../src/cli/mod.rs"]
mod cli;

mod call;
mod keys;
mod module;
mod schema;
