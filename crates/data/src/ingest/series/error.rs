//! What a series of trace files refuses: inputs that cannot be read as one trace,
//! said before any record is read.

use std::fmt;
use std::path::PathBuf;

/// A request for a series of trace files (or for no file at all) that cannot be
/// served as given. Of kind `Request`: the inputs named must change, the data is not
/// at fault.
#[derive(Debug, thiserror::Error)]
pub enum SeriesError {
    /// No input was named: there is nothing to read.
    #[error("no trace file given")]
    NoInput,

    /// `-` was named more than once: standard input can be read only once.
    #[error("`-` (standard input) can be given only once")]
    StdinTwice,

    /// `-` was named with other files: a series opens every file twice (its format
    /// checked, then its records), and standard input gives its data once.
    #[error(
        "`-` (standard input) cannot be part of a series of files: it can be read only once and its format checked only by reading it"
    )]
    StdinInSeries,

    /// A directory of the series nests subdirectories deeper than `max`: refused
    /// rather than walked without end (a link loop the walk could not recognise).
    #[error("{}: directories nested more than {max} deep in a series", dir.display())]
    TooDeep {
        /// The directory past the limit.
        dir: PathBuf,
        /// How deep subdirectories may nest.
        max: usize,
    },

    /// A file that gives its data only once (a FIFO, a socket, a character device)
    /// is part of a series, which reads each of its files twice: the second open
    /// would wait forever for a writer.
    #[error(
        "{}: {kind} {place}: a series reads each of its files twice (to check its format, then its records) and such a file gives its data once; name it alone, or save it to a file first",
        path.display()
    )]
    ReadOnce {
        /// The file.
        path: PathBuf,
        /// What it is (`a FIFO`, `a socket`, ...).
        kind: &'static str,
        /// How it came into the series.
        place: SeriesPlace,
    },
}

rbf_foundations::layer_error!(SeriesError => rbf_foundations::error::Kind::Request);

/// How a file came into a series: named among others, found in a directory, or
/// matched by a glob pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SeriesPlace {
    /// Named on the command line with other files.
    Named,
    /// Found under this directory.
    Directory(PathBuf),
    /// Matched by this glob pattern.
    Pattern(String),
}

impl fmt::Display for SeriesPlace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SeriesPlace::Named => f.write_str("in a series of files"),
            SeriesPlace::Directory(dir) => write!(f, "in directory {}", dir.display()),
            SeriesPlace::Pattern(pattern) => write!(f, "matched by {pattern}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rbf_foundations::error::{exit_status, Error};

    #[test]
    fn a_refused_series_reads_as_before_and_exits_as_a_request() {
        let e: Error = SeriesError::ReadOnce {
            path: PathBuf::from("in/pipe"),
            kind: "a FIFO",
            place: SeriesPlace::Directory(PathBuf::from("in")),
        }
        .into();
        assert_eq!(
            e.to_string(),
            "in/pipe: a FIFO in directory in: a series reads each of its files twice (to check its format, then its records) and such a file gives its data once; name it alone, or save it to a file first"
        );
        assert_eq!(e.exit_status(), exit_status::USAGE);
        assert!(matches!(
            e.layer::<SeriesError>(),
            Some(SeriesError::ReadOnce { kind: "a FIFO", .. })
        ));
        let deep: Error = SeriesError::TooDeep {
            dir: PathBuf::from("a/b"),
            max: 32,
        }
        .into();
        assert_eq!(
            deep.to_string(),
            "a/b: directories nested more than 32 deep in a series"
        );
    }
}
