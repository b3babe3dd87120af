//! A bad setting: which key, and what is wrong with its value, as a kind a caller can
//! match (a Python binding raises `ValueError` naming the key; `rbf run` says which
//! config line to fix) and a sentence a person reads after `invalid setting`.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// A bad setting: the key as the user wrote it (`sigma`, `grid.memory`,
/// `synthetic.zipf`) and the problem with its value.
#[derive(Debug, thiserror::Error)]
#[error("invalid setting `{key}`: {problem}{}", in_file(.file))]
pub struct Setting {
    pub key: String,
    pub problem: Problem,
    /// The file the value came from, when it is not the command line or the config
    /// being read (a workload file named by a config).
    pub file: Option<PathBuf>,
}

fn in_file(file: &Option<PathBuf>) -> String {
    match file {
        Some(f) => format!(" (in {})", f.display()),
        None => String::new(),
    }
}

/// What is wrong with a setting's value. The texts are `&'static str` where the
/// sentence is fixed, so the kind, not the wording, is what a caller matches.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// A value outside what is allowed: `allowed` says what is (`must lie in (0, 1)`),
    /// `found` is the value given, when there is one to show.
    OutOfRange {
        allowed: Cow<'static, str>,
        found: Option<String>,
    },
    /// A name the setting does not know: `unknown {what} `{found}`; allowed: ...`.
    Unknown {
        what: &'static str,
        found: String,
        allowed: Cow<'static, str>,
    },
    /// Required and not given; the text says how to give it.
    Missing(&'static str),
    /// Given together with settings it excludes, or where it does not apply; the text
    /// says which to keep.
    Conflict(Cow<'static, str>),
    /// An empty list; the text says what to give.
    Empty(&'static str),
    /// A value listed twice.
    Duplicate(String),
    /// A value whose text cannot be read (`bad pattern`, a config's TOML): the reader's
    /// own message.
    Unreadable(String),
    /// Beyond the kinds above, a sentence for a person. Few sites use it; a test of
    /// the architecture counts them.
    Other(String),
}

impl Problem {
    /// `allowed` and the value `found`: `{allowed}, found {found}`.
    pub fn range(allowed: impl Into<Cow<'static, str>>, found: impl std::fmt::Display) -> Self {
        Problem::OutOfRange {
            allowed: allowed.into(),
            found: Some(found.to_string()),
        }
    }

    /// `allowed` with no value to show.
    pub fn rule(allowed: impl Into<Cow<'static, str>>) -> Self {
        Problem::OutOfRange {
            allowed: allowed.into(),
            found: None,
        }
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::OutOfRange {
                allowed,
                found: Some(found),
            } => write!(f, "{allowed}, found {found}"),
            Problem::OutOfRange {
                allowed,
                found: None,
            } => f.write_str(allowed),
            Problem::Unknown {
                what,
                found,
                allowed,
            } => write!(f, "unknown {what} `{found}`; allowed: {allowed}"),
            Problem::Missing(how) | Problem::Empty(how) => f.write_str(how),
            Problem::Conflict(how) => f.write_str(how),
            Problem::Duplicate(value) => {
                write!(f, "`{value}` is given twice: give each value once")
            }
            Problem::Unreadable(message) | Problem::Other(message) => f.write_str(message),
        }
    }
}

impl Setting {
    pub fn new(key: impl Into<String>, problem: Problem) -> Self {
        Setting {
            key: key.into(),
            problem,
            file: None,
        }
    }

    /// The same setting named inside `section` (`memory` becomes `grid.memory`).
    pub fn in_section(self, section: &str) -> Self {
        Setting {
            key: format!("{section}.{}", self.key),
            ..self
        }
    }

    /// The same setting, said to come from `file`.
    pub fn in_file(self, file: &Path) -> Self {
        Setting {
            file: Some(file.to_path_buf()),
            ..self
        }
    }

    /// The same problem under another key (`popularity` read as `synthetic.distinct`).
    pub fn renamed(self, key: impl Into<String>) -> Self {
        Setting {
            key: key.into(),
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn each_problem_reads_as_a_sentence_after_its_key() {
        let cases = [
            (
                Problem::range("must lie in (0, 1)", 1.5),
                "invalid setting `k`: must lie in (0, 1), found 1.5",
            ),
            (
                Problem::rule("columns are numbered from 1"),
                "invalid setting `k`: columns are numbered from 1",
            ),
            (
                Problem::Unknown {
                    what: "method",
                    found: "x".into(),
                    allowed: "a, b".into(),
                },
                "invalid setting `k`: unknown method `x`; allowed: a, b",
            ),
            (
                Problem::Duplicate("4".into()),
                "invalid setting `k`: `4` is given twice: give each value once",
            ),
        ];
        for (problem, text) in cases {
            assert_eq!(Error::setting("k", problem).to_string(), text);
        }
        let e = Error::setting("p_repeat", Problem::Missing("give it"))
            .in_file(Path::new("w.json"))
            .in_section("synthetic");
        assert_eq!(
            e.to_string(),
            "invalid setting `synthetic.p_repeat`: give it (in w.json)"
        );
        assert_eq!(
            e.setting_error().map(|s| s.key.as_str()),
            Some("synthetic.p_repeat")
        );
        assert_eq!(e.exit_status(), crate::error::exit_status::USAGE);
    }
}
