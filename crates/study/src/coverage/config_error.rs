//! The coverage study's config file itself unusable, before any of its keys can be
//! judged (a bad key's value is an [`rbf_foundations::error::Setting`]).

use std::path::PathBuf;

/// A coverage config that cannot be read as the study's TOML.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file is not TOML, or its tables do not have the study's shape (an unknown
    /// key, a value of the wrong type): `message` is the TOML reader's own, clipped,
    /// which points at the line.
    #[error("{}: {message}", path.display())]
    Unreadable {
        /// The config file.
        path: PathBuf,
        /// The reader's message.
        message: String,
    },
}

// A request that cannot be served as given (the study's own config): exit status 2.
rbf_foundations::layer_error!(ConfigError => rbf_foundations::error::Kind::Request);
