//! What rbf says to the user besides its results: notes on stderr, and the `--quiet`
//! switch that silences them. The lowest layer that talks to the user, so that
//! [`crate::resources`] and [`crate::progress`] can both speak without depending on
//! each other.
//!
//! Every line for the user goes through [`out`] (results, stdout) or [`err`] (notes,
//! stderr), never `print!`: those panic when the stream is full or closed. A full
//! stdout is an error the command reports and exits with; a full or closed stderr is
//! ignored (nothing is left to say it on), so results still reach stdout. A closed
//! pipe ends the process quietly (SIGPIPE's default action, set by `main`).
//! [`crate::out!`], [`crate::outln!`], [`crate::err!`] and [`crate::errln!`] are
//! their `print!`-like forms.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Error, Result};

static QUIET: AtomicBool = AtomicBool::new(false);
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// For a binary's `main`: stdout was closed when the process started (the shell's
/// `>&-`). The Rust runtime has put /dev/null in its place by then (so that no file
/// takes its descriptor); results written to it would vanish, so writing them is an
/// error instead ([`stdout_closed`]).
pub fn set_stdout_closed(closed: bool) {
    STDOUT_CLOSED.store(closed, Ordering::Relaxed);
}

/// Whether stdout was closed when rbf started ([`set_stdout_closed`]).
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}

/// Stands for a stdout the shell closed: every write is an error saying so.
pub struct ClosedStdout;

impl Write for ClosedStdout {
    fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
        Err(closed_stdout_io())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn closed_stdout_io() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::BrokenPipe,
        "standard output is closed (`>&-`): nothing can be written to it",
    )
}

/// The error for writing to a closed stdout.
pub fn closed_stdout_error() -> Error {
    Error::io("<standard output>", closed_stdout_io())
}

/// Turns notes, estimates and every progress display off (`--quiet`).
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

pub fn is_quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// A note for the user on stderr ("note: ..."), unless `--quiet`.
pub fn note(text: &str) {
    if !is_quiet() {
        err(&format!("note: {text}\n"));
    }
}

/// Writes `text` to stdout; a failure (a full device) is an error naming stdout.
pub fn out(text: &str) -> Result<()> {
    if stdout_closed() {
        return Err(closed_stdout_error());
    }
    let mut o = std::io::stdout().lock();
    o.write_all(text.as_bytes())
        .and_then(|()| o.flush())
        .map_err(|e| Error::io("<standard output>", e))
}

/// Writes `text` to stderr, ignoring a failure: a full or closed stderr must not stop
/// a command whose results go elsewhere.
pub fn err(text: &str) {
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(text.as_bytes()).and_then(|()| e.flush());
}

/// `print!` to stdout through [`out`]: returns the error from the enclosing function.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::console::out(&::std::format!($($arg)*))?
    };
}

/// `println!` to stdout through [`out`]: returns the error from the enclosing function.
#[macro_export]
macro_rules! outln {
    () => {
        $crate::console::out("\n")?
    };
    ($($arg:tt)*) => {
        $crate::console::out(&::std::format!("{}\n", ::std::format_args!($($arg)*)))?
    };
}

/// `eprint!` through [`err`]: never panics.
#[macro_export]
macro_rules! err {
    ($($arg:tt)*) => {
        $crate::console::err(&::std::format!($($arg)*))
    };
}

/// `eprintln!` through [`err`]: never panics.
#[macro_export]
macro_rules! errln {
    () => {
        $crate::console::err("\n")
    };
    ($($arg:tt)*) => {
        $crate::console::err(&::std::format!("{}\n", ::std::format_args!($($arg)*)))
    };
}

/// stderr as a writer whose failures are ignored, like [`err`]: for a summary that goes
/// to stderr when stdout carries data (`-o -`).
pub struct Notes;

impl Write for Notes {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let _ = std::io::stderr().write_all(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let _ = std::io::stderr().flush();
        Ok(())
    }
}
