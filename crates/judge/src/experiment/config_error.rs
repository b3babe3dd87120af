//! Why an experiment config is refused as a whole: a file that is not TOML of the
//! expected shape, a value its checks refuse (said with the file, so the reader knows
//! which config to fix), or a grid with no valid filter at all.

use std::path::PathBuf;

use rbf_foundations::error::{Error, Kind};

/// An experiment config that cannot be run.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file is not TOML, or has a key or value type the config does not know;
    /// `message` is the TOML reader's, clipped to a few lines. Also the coverage
    /// study's config (`rbf_study::coverage`), read the same way.
    #[error("{}: {message}", path.display())]
    Unreadable { path: PathBuf, message: String },

    /// A value of the file refused by the config's checks (a bad setting, most often):
    /// `error` says which, and the message names the file first.
    #[error("{}: {error}", path.display())]
    Refused { path: PathBuf, error: Error },

    /// Every point of the grid is an invalid filter: the run would compute nothing.
    /// The first point's filter (`filter`, on source `source_name`) and why it is
    /// refused (`why`) stand for the rest.
    #[error(
        "no point of the grid is a valid filter; the first ({filter} on `{source_name}`): {why}"
    )]
    NoValidPoint {
        filter: String,
        source_name: String,
        why: Error,
    },
}

impl rbf_foundations::error::LayerError for ConfigError {
    // A refused value keeps the kind of its own error (a setting's, or a limit of this
    // machine's); the rest are requests that cannot be served as given.
    fn kind(&self) -> Kind {
        match self {
            ConfigError::Refused { error, .. } => error.kind(),
            _ => Kind::Request,
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn wrapped(&self) -> Option<&Error> {
        match self {
            ConfigError::Refused { error, .. } => Some(error),
            _ => None,
        }
    }
}
