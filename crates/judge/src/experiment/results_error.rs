//! Why a run's results cannot be read back or trusted: a file that is not an rbf
//! `results.json` of this version, or a trace that changed while the run read it.

use std::path::PathBuf;

use rbf_foundations::error::Kind;

/// Results that cannot be read or that would describe no single input.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    /// The file is not JSON of a results file's shape; `message` is the JSON
    /// reader's.
    #[error("{}: not an rbf results file: {message}", path.display())]
    NotResults { path: PathBuf, message: String },

    /// A results file of another format version (`found`), whose fields this rbf
    /// could misread.
    #[error("{}: format `{found}`, expected `{expected}`", path.display())]
    OtherFormat {
        path: PathBuf,
        found: String,
        expected: &'static str,
    },

    /// A trace whose size changed between the run's start (`before` bytes) and its
    /// digest (`after` bytes): the run's rows would mix two traces.
    #[error(
        "{}: the file changed while this run read it ({before} bytes, then {after}): its results would mix two traces; run again once it is complete",
        path.display()
    )]
    InputChanged {
        path: PathBuf,
        before: u64,
        after: u64,
    },
}

rbf_foundations::layer_error!(ResultsError => Kind::Request);
