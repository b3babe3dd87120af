//! `rbf._native`: the `rbf` command line, callable from Python.
//!
//! The package's functions (`rbf.replay`, `rbf.fit`, ...; python/rbf/__init__.py) turn
//! their keyword arguments into the command line's flags and call [`call`], which parses
//! them with the library's definitions of the command line's options (`rbf::args`, the
//! ones the `rbf` binary parses its arguments with) and runs the command as `rbf` does
//! (`rbf::args::run`): the option names, defaults, checks and error messages are the
//! command line's, by construction. Results come back as the JSON the command prints
//! with `--json`.

mod call;
mod keys;
mod module;
mod schema;
