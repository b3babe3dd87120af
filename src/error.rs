//! One error type for the library. Every variant says where the problem is (file and
//! line or byte offset, or the configuration key) and what was expected, because the
//! people reading these messages are holding a trace or a config, not our source code.

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

    /// A bad setting: names the key and says which values are allowed.
    #[error("invalid setting `{key}`: {message}")]
    Config { key: String, message: String },

    #[error("{0}")]
    Invalid(String),

    /// The user pressed Ctrl-C; the work stopped between two steps.
    #[error("interrupted (Ctrl-C): stopped before finishing, nothing was written")]
    Interrupted,
}

impl Error {
    pub fn io(path: impl AsRef<Path>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.as_ref().to_path_buf(),
            source,
        }
    }

    pub fn config(key: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Config {
            key: key.into(),
            message: message.into(),
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Error::Invalid(message.into())
    }
}
