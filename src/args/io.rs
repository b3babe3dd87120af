//! Where a command's results go and where its trace comes from: stdout and the files
//! named on the command line for `rbf`; a buffer and keys already in memory for the
//! Python package (python/), which runs these same commands with the same flags.

use std::io::Write;
use std::path::{Path, PathBuf};

use rbf_data::ingest::MessageSource;
use rbf_foundations::error::Result;

use super::trace_args::TraceArgs;

pub struct Io<'a> {
    /// Results (the JSON object, tables); notes and progress go to stderr.
    pub out: &'a mut (dyn Write + Send),
    /// A trace already in memory, read instead of the positional trace paths.
    pub memory: Option<Box<dyn MessageSource + 'a>>,
    /// Applied to every trace opened from files (the Python package ends such a
    /// stream on Ctrl-C; the command line stops the process instead).
    pub wrap: for<'s> fn(Box<dyn MessageSource + 's>) -> Box<dyn MessageSource + 's>,
    /// Output directories the command wrote (`rbf run`).
    pub written: Vec<PathBuf>,
    /// Name the files a command wrote on stderr ("wrote ... to ..."): the command
    /// line's user learns where they went; the package's caller named them or reads
    /// them back (its own temporary files are nobody's business).
    pub announce: bool,
}

impl<'a> Io<'a> {
    /// The command line's: results on `out` (stdout), traces from the named files.
    pub fn terminal(out: &'a mut (dyn Write + Send)) -> Self {
        Io {
            out,
            memory: None,
            wrap: |s| s,
            written: Vec::new(),
            announce: true,
        }
    }

    /// The trace: the one in memory if there is one (a flag about reading files is
    /// refused there, not ignored), else the files `paths` names.
    pub fn open(
        &mut self,
        flags: &TraceArgs,
        paths: &[PathBuf],
    ) -> Result<Box<dyn MessageSource + 'a>> {
        match self.memory.take() {
            Some(s) => {
                flags.check_memory()?;
                Ok(s)
            }
            None => Ok((self.wrap)(flags.open(paths)?)),
        }
    }

    /// Says on stderr that `what` was written to `path` (unless `path` is stdout).
    pub fn wrote(&self, what: &str, path: &Path) {
        if self.announce && !rbf_foundations::output_file::is_stdio(path) {
            rbf_foundations::errln!("wrote {what} to {}", path.display());
        }
    }

    /// Writes `value` as pretty JSON.
    pub fn json<T: serde::Serialize>(&mut self, value: &T) -> Result<()> {
        super::write_json(self.out, value)
    }

    /// Writes report text.
    pub fn text(&mut self, text: &str) -> Result<()> {
        super::write_text(self.out, text)
    }
}
