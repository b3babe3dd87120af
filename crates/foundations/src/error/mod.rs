//! The error every layer returns. Every variant says where the problem is (file and
//! line or byte offset, or the setting's key) and what was expected, because the
//! people reading these messages are holding a trace or a config, not our source code.
//!
//! One type crosses every crate boundary, as `ArrowError` does in arrow-rs and
//! `DataFusionError` in DataFusion: a caller of `rbf_judge` matches the same variants
//! as a caller of `rbf_data`, without unwrapping a layer per crate. What is particular
//! to a layer is that layer's own enum (a series of trace files in `rbf_data`, a fit
//! in `rbf_observed`, a model's domain in `rbf_predicted`, shards in `rbf_judge`),
//! converted into [`Error::Layer`] at its crate's boundary by `?` ([`LayerError`]) and
//! recovered with [`Error::layer`].
//!
//! The exit status derives from the [`Kind`], never from a message.

mod clip;
mod layer;
mod setting;

pub use clip::clip_lines;
pub use layer::LayerError;
pub use setting::{Problem, Setting};

use std::path::{Path, PathBuf};

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },

    /// A text input line that could not be parsed (only raised when the caller asked
    /// for strict parsing; lenient readers count and report such lines instead).
    #[error("{}:{line}: {message}", path.display())]
    Parse {
        path: PathBuf,
        line: u64,
        message: String,
    },

    /// A binary input that is damaged or not in the expected format.
    #[error("{}: byte offset {offset}: {message}", path.display())]
    Format {
        path: PathBuf,
        offset: u64,
        message: String,
    },

    /// A bad setting (a flag, a config key, a field of a workload file): names the
    /// key and says what is allowed.
    #[error(transparent)]
    Setting(#[from] Setting),

    /// An output the request may not write: onto an input, into a directory it cannot
    /// create, two outputs on stdout. Checked before any work starts.
    #[error("refusing to write {}: {why}", path.display())]
    Output { path: PathBuf, why: String },

    /// Two outputs asked for stdout (`-`).
    #[error("only one output can go to stdout (`-`); give the others file names")]
    TwoOnStdout,

    /// A result that could not be encoded (JSON, a table): says which.
    #[error("cannot {what}: {message}")]
    Encode { what: &'static str, message: String },

    /// A request this machine cannot serve (memory, threads, sizes): says what it
    /// needs and what there is, before any work starts.
    #[error("{0}")]
    Resource(String),

    /// The input holds no usable record: says how many were rejected and why.
    #[error("{0}")]
    NoData(String),

    /// A layer's own problem (see the module's text): its message and its kind.
    #[error("{0}")]
    Layer(Box<dyn LayerError>),

    /// A state the code should never reach: a bug, to be reported.
    #[error("internal error (please report it): {0}")]
    Internal(&'static str),

    /// The user pressed Ctrl-C (or sent SIGTERM); the work stopped between two steps.
    #[error(
        "interrupted ({}): stopped before finishing, nothing was written",
        crate::stop::describe()
    )]
    Interrupted,
}

/// What went wrong, as a caller acts on it; the exit status derives from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The input data is unusable: unreadable, damaged, or without a usable record.
    Input,
    /// The request cannot be served as given: a bad flag, setting or combination.
    Request,
    /// This machine cannot serve the request (memory, disk, threads).
    Resource,
    /// A bug in rbf.
    Internal,
    /// A stop was asked for (Ctrl-C, SIGTERM, SIGHUP).
    Interrupted,
}

/// Process exit statuses: 1 for unusable input data, 2 for requests that cannot be
/// served as given (bad flags or settings, limits of this machine; clap's usage errors
/// exit 2 as well), 70 for a bug (sysexits' EX_SOFTWARE), 128 + the signal after a
/// stop (the shell's convention: 130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP;
/// [`crate::signals`]).
pub mod exit_status {
    pub const DATA: u8 = 1;
    pub const USAGE: u8 = 2;
    pub const INTERNAL: u8 = 70;
    pub const INTERRUPTED: u8 = 130;
}

impl Kind {
    /// The process exit status for an error of this kind (see [`exit_status`]).
    pub fn exit_status(self) -> u8 {
        match self {
            Kind::Input => exit_status::DATA,
            Kind::Request | Kind::Resource => exit_status::USAGE,
            Kind::Internal => exit_status::INTERNAL,
            Kind::Interrupted => crate::stop::exit_status(),
        }
    }
}

impl Error {
    pub fn io(path: impl AsRef<Path>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.as_ref().to_path_buf(),
            source,
        }
    }

    /// A bad setting: `key` and what is wrong with its value.
    pub fn setting(key: impl Into<String>, problem: Problem) -> Self {
        Error::Setting(Setting::new(key, problem))
    }

    /// A result that could not be encoded: `what` says which (`serialise the fit
    /// summary`), `source` the encoder's reason.
    pub fn encode(what: &'static str, source: impl std::fmt::Display) -> Self {
        Error::Encode {
            what,
            message: source.to_string(),
        }
    }

    /// An output `path` may not be written, and why.
    pub fn output(path: impl AsRef<Path>, why: impl Into<String>) -> Self {
        Error::Output {
            path: path.as_ref().to_path_buf(),
            why: why.into(),
        }
    }

    /// The same error with its setting named inside `section` (`memory` becomes
    /// `grid.memory`), for values read from a section of a config file.
    pub fn in_section(self, section: &str) -> Self {
        match self {
            Error::Setting(s) => Error::Setting(s.in_section(section)),
            other => other,
        }
    }

    /// The same error with a bad setting said to come from `file` (a workload file's
    /// field): the message ends in ` (in FILE)`.
    pub fn in_file(self, file: &Path) -> Self {
        match self {
            Error::Setting(s) => Error::Setting(s.in_file(file)),
            other => other,
        }
    }

    /// The bad setting, when this error is one or a layer's error wraps one (a
    /// config's refused value names the file, then the setting).
    pub fn setting_error(&self) -> Option<&Setting> {
        match self {
            Error::Setting(s) => Some(s),
            Error::Layer(e) => e.wrapped().and_then(Error::setting_error),
            _ => None,
        }
    }

    /// A layer's own error of type `E`, when this error is one: how a caller matches
    /// on, say, `rbf_judge::experiment::ShardError`.
    pub fn layer<E: LayerError>(&self) -> Option<&E> {
        match self {
            Error::Layer(e) => e.as_any().downcast_ref::<E>(),
            _ => None,
        }
    }

    pub fn kind(&self) -> Kind {
        match self {
            Error::Io { .. } | Error::Parse { .. } | Error::Format { .. } | Error::NoData(_) => {
                Kind::Input
            }
            Error::Setting(_) | Error::Output { .. } | Error::TwoOnStdout => Kind::Request,
            Error::Resource(_) => Kind::Resource,
            Error::Encode { .. } | Error::Internal(_) => Kind::Internal,
            Error::Layer(e) => e.kind(),
            Error::Interrupted => Kind::Interrupted,
        }
    }

    /// The process exit status for this error (see [`exit_status`]).
    pub fn exit_status(&self) -> u8 {
        self.kind().exit_status()
    }
}

impl<E: LayerError> From<E> for Error {
    fn from(e: E) -> Self {
        Error::Layer(Box::new(e))
    }
}
