//! One command-line call from Python: parse the flags with the command line's parser
//! (`rbf::args`), run the command on a worker thread while the calling thread, detached from the
//! interpreter (other Python threads run), watches for Ctrl-C; map the outcome to a
//! Python value or exception.
//!
//! Errors, by the library error's kind (`rbf_foundations::error::Kind`): a bad setting
//! is `rbf.SettingError` (a `ValueError` whose `key` names the flag or config key);
//! other requests that cannot be served as given (exit status 2 on the command line) a
//! `ValueError`; unreadable files an `OSError`; bad trace data `rbf.TraceError` (a
//! `ValueError`); a stop on Ctrl-C a `KeyboardInterrupt`; a bug (exit status 70, or a
//! panic) a `RuntimeError`, which never unwinds into the interpreter. Messages are the
//! command line's.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use rbf_data::ingest::MessageSource;

use crate::keys::{self, Keys};
use rbf::args::{self, io::Io};

/// How often the waiting thread looks for Ctrl-C (Python's signal handlers run only on
/// the main thread, attached to the interpreter).
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// `call(argv, keys, prehashed, outputs)`: see the module function's documentation.
pub fn call(py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let argv: Vec<String> = args.get_item(0)?.extract()?;
    let keys_obj = args.get_item(1)?;
    let prehashed: bool = args.get_item(2)?.extract()?;
    let outputs = args.get_item(3)?.cast_into::<PyList>()?;
    let cli = std::iter::once("rbf".to_string()).chain(argv);
    let cli = args::try_parse(cli).map_err(usage_error)?;
    // The keys are borrowed from the caller's array for the length of the call.
    let keys = if keys_obj.is_none() {
        None
    } else {
        Some(keys::borrow(py, &keys_obj, prehashed)?)
    };
    let (out, written) = run_detached(py, cli, keys.as_ref())?;
    for dir in written {
        outputs.append(dir.to_string_lossy().into_owned())?;
    }
    let text = String::from_utf8_lossy(&out).into_owned();
    Ok(PyString::new(py, &text).into_any().unbind())
}

type Outcome = std::thread::Result<(rbf_foundations::error::Result<()>, Vec<u8>, Vec<PathBuf>)>;

/// Runs the command on a worker thread; the calling thread waits detached from the
/// interpreter and checks for Ctrl-C between waits. On Ctrl-C the work is asked to stop
/// (the flag every long loop polls, and the end of the trace being read) and the call
/// raises KeyboardInterrupt once it has.
fn run_detached(
    py: Python<'_>,
    command: args::Cli,
    keys: Option<&Keys>,
) -> PyResult<(Vec<u8>, Vec<PathBuf>)> {
    rbf_foundations::stop::clear_interrupt();
    let memory: Option<Box<dyn MessageSource + '_>> = keys.map(|k| k.source());
    let (tx, rx) = mpsc::channel::<Outcome>();
    let mut stopped = None;
    let outcome = std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("rbf-call".into())
            .spawn_scoped(scope, move || {
                let outcome = catch_unwind(AssertUnwindSafe(move || {
                    let mut out = Vec::new();
                    let mut io = Io::terminal(&mut out);
                    io.memory = memory;
                    io.wrap = keys::stop_on_interrupt;
                    io.announce = false;
                    let result = args::run(command, &mut io);
                    let written = std::mem::take(&mut io.written);
                    drop(io);
                    (result, out, written)
                }));
                let _ = tx.send(outcome);
            })
            .map_err(|e| PyRuntimeError::new_err(format!("cannot start a thread: {e}")))?;
        // Only this thread receives; the lock makes the receiver shareable with the
        // detached closure.
        let rx = std::sync::Mutex::new(rx);
        let outcome = loop {
            let received = py.detach(|| match rx.lock() {
                Ok(r) => r.recv_timeout(SIGNAL_POLL),
                Err(_) => Err(mpsc::RecvTimeoutError::Disconnected),
            });
            match received {
                Ok(o) => break o,
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    break Err(Box::new("the worker thread ended without a result") as Box<_>)
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            if stopped.is_none() {
                if let Err(e) = py.check_signals() {
                    rbf_foundations::progress::request_interrupt();
                    stopped = Some(e);
                }
            }
        };
        let _ = worker.join();
        Ok::<Outcome, PyErr>(outcome)
    })?;
    rbf_foundations::stop::clear_interrupt();
    let outcome = outcome.map_err(|panic| {
        PyRuntimeError::new_err(format!(
            "internal error in rbf (a bug, please report it): {}",
            panic_message(&*panic)
        ))
    })?;
    // Stopped by Ctrl-C: whatever the work returned (an error, or results of a trace
    // cut short) is dropped.
    if let Some(e) = stopped {
        return Err(e);
    }
    let (result, out, written) = outcome;
    result.map_err(error)?;
    Ok((out, written))
}

/// The text of a panic's payload.
pub fn panic_message(panic: &(dyn Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// A library error as the Python exception of its kind, with the CLI's message (the
/// CLI prints it after "error: ").
fn error(e: rbf_foundations::error::Error) -> PyErr {
    use rbf_foundations::error::{Error, Kind};
    let message = e.to_string();
    if let Some(s) = e.setting_error() {
        return own_error("SettingError", (message, s.key.clone()));
    }
    match (e.kind(), &e) {
        (Kind::Interrupted, _) => PyKeyboardInterrupt::new_err(message),
        (Kind::Input, Error::Io { .. }) => PyOSError::new_err(message),
        (Kind::Input, _) => own_error("TraceError", (message,)),
        (Kind::Request | Kind::Resource, _) => PyValueError::new_err(message),
        (Kind::Internal, _) => PyRuntimeError::new_err(message),
    }
}

/// One of the package's own exceptions (python/rbf/_errors.py), built from `args`.
fn own_error(name: &str, args: impl pyo3::PyErrArguments + 'static) -> PyErr {
    Python::attach(|py| {
        let class = py
            .import("rbf._errors")
            .and_then(|m| m.getattr(name))
            .and_then(|c| Ok(c.cast_into::<pyo3::types::PyType>()?));
        match class {
            Ok(class) => PyErr::from_type(class, args),
            Err(e) => e,
        }
    })
}

/// A command-line parse error as a ValueError with the message the CLI prints (after
/// "error: "), without the usage lines.
fn usage_error(e: clap::Error) -> PyErr {
    if let Some(line) = args::numbers::bad_value(&e) {
        return PyValueError::new_err(line);
    }
    let text = e.render().to_string();
    let text = text.trim_start_matches("error: ");
    let first = text.split("\n\nUsage:").next().unwrap_or(text).trim();
    PyValueError::new_err(first.to_string())
}
