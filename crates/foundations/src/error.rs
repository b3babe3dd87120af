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

    /// A request this machine cannot serve (memory, threads, sizes): says what it
    /// needs and what there is, before any work starts.
    #[error("{0}")]
    Resource(String),

    /// The input holds no usable record: says how many were rejected and why.
    #[error("{0}")]
    NoData(String),

    /// The user pressed Ctrl-C (or sent SIGTERM); the work stopped between two steps.
    #[error(
        "interrupted ({}): stopped before finishing, nothing was written",
        crate::stop::describe()
    )]
    Interrupted,
}

/// Process exit statuses: 1 for unusable input data, 2 for requests that cannot be
/// served as given (bad flags or settings, limits of this machine; clap's usage errors
/// exit 2 as well), 128 + the signal after a stop (the shell's convention: 130 for
/// Ctrl-C, 143 for SIGTERM, 129 for SIGHUP; [`crate::signals`]).
pub mod exit_status {
    pub const DATA: u8 = 1;
    pub const USAGE: u8 = 2;
    pub const INTERRUPTED: u8 = 130;
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

    /// The same error with its setting named inside `section` (`memory` becomes
    /// `grid.memory`), for values read from a section of a config file.
    pub fn in_section(self, section: &str) -> Self {
        match self {
            Error::Config { key, message } => Error::Config {
                key: format!("{section}.{key}"),
                message,
            },
            other => other,
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Error::Invalid(message.into())
    }

    /// The process exit status for this error (see [`exit_status`]).
    pub fn exit_status(&self) -> u8 {
        match self {
            Error::Io { .. } | Error::Parse { .. } | Error::Format { .. } | Error::NoData(_) => {
                exit_status::DATA
            }
            Error::Config { .. } | Error::Invalid(_) | Error::Resource(_) => exit_status::USAGE,
            Error::Interrupted => crate::stop::exit_status(),
        }
    }
}

/// Longest line of a parser's message quoted in an error: a TOML parser quotes the
/// offending line, which may be a file's whole content.
const QUOTED_LINE: usize = 160;

/// Whether `line` is the parser's quote of the input (`3 | measures = ...`) or its
/// marker line (`  |   ^^^`), not a message: only those are cut.
fn is_quote(line: &str) -> bool {
    let rest = line
        .trim_start()
        .trim_start_matches(|c: char| c.is_ascii_digit());
    rest.trim_start().starts_with('|')
}

/// `text` (a parser's message) with every quoted input line longer than
/// [`QUOTED_LINE`] characters cut, saying how much was left out, and trailing
/// whitespace removed. The messages themselves (a list of allowed values) stay whole.
pub fn clip_lines(text: &str) -> String {
    let lines: Vec<String> = text
        .trim_end()
        .lines()
        .map(
            |l| match l.char_indices().nth(QUOTED_LINE).filter(|_| is_quote(l)) {
                Some((at, _)) => format!(
                    "{}... ({} more characters)",
                    &l[..at],
                    l[at..].chars().count()
                ),
                None => l.to_string(),
            },
        )
        .collect();
    lines.join("\n")
}

#[cfg(test)]
mod clip_tests {
    use super::clip_lines;

    #[test]
    fn long_lines_are_cut_and_counted() {
        let long = format!(
            "1 | a = {}\n  |     ^\nrecursion limit",
            "[".repeat(400_000)
        );
        let c = clip_lines(&long);
        assert!(c.len() < 400, "{}", c.len());
        assert!(c.contains("(399848 more characters)"), "{c}");
        assert!(c.ends_with("recursion limit"));
        assert_eq!(clip_lines("short\n"), "short");
        let quote = format!("12 | {}", "é".repeat(156));
        assert_eq!(
            clip_lines(&quote),
            format!("12 | {}... (1 more characters)", "é".repeat(155))
        );
        // A message (the allowed values of a key) is never cut, however long.
        let message = format!("measures: unknown; allowed: {}", "renewal, ".repeat(40));
        assert_eq!(clip_lines(&message), message.trim_end());
    }
}
