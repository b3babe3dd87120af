//! The command line's flags, described for the Python side: the package builds its
//! functions' keyword arguments, docstrings and type stub from this, so the option list
//! exists once, in the clap definitions of the command line's options (`rbf::args`).

use clap::{ArgAction, CommandFactory};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use serde::Serialize;

use rbf::args;

#[derive(Serialize)]
struct Flag {
    /// The keyword argument: the flag's id (`max_inserts`).
    name: String,
    /// The flag on the command line (`--max-inserts`); None for a positional argument.
    long: Option<String>,
    /// "switch" (a flag without a value), "value", or "values" (one or more).
    kind: &'static str,
    /// "int", "float", "path", "str" or "bool".
    value_type: &'static str,
    default: Option<String>,
    choices: Vec<String>,
    required: bool,
    help: String,
}

#[derive(Serialize)]
struct CommandSchema {
    /// The words of the command (`["model", "fn"]`).
    path: Vec<String>,
    about: String,
    flags: Vec<Flag>,
}

/// `schema()`: every command and its flags, as JSON.
pub fn schema(py: Python<'_>, _args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let root = args::numbers::plain_numbers(args::Cli::<args::Command>::command());
    let mut out = Vec::new();
    walk(&root, &mut Vec::new(), &mut out);
    let text = serde_json::to_string(&out)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    Ok(PyString::new(py, &text).into_any().unbind())
}

/// Every command without subcommands, and the root's own (global) flags with an empty
/// path.
fn walk(cmd: &clap::Command, path: &mut Vec<String>, out: &mut Vec<CommandSchema>) {
    if cmd.has_subcommands() {
        if path.is_empty() {
            out.push(command(cmd, path));
        }
        for sub in cmd.get_subcommands() {
            path.push(sub.get_name().to_string());
            walk(sub, path, out);
            path.pop();
        }
        return;
    }
    out.push(command(cmd, path));
}

fn command(cmd: &clap::Command, path: &[String]) -> CommandSchema {
    let flags = cmd
        .get_arguments()
        .filter(|a| !a.is_global_set() || path.is_empty())
        .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
        .map(describe)
        .collect();
    CommandSchema {
        path: path.to_vec(),
        about: cmd.get_about().map(|s| s.to_string()).unwrap_or_default(),
        flags,
    }
}

fn describe(a: &clap::Arg) -> Flag {
    use std::any::TypeId;
    let switch = matches!(a.get_action(), ArgAction::SetTrue | ArgAction::SetFalse);
    let many = a.get_num_args().is_some_and(|n| n.max_values() > 1);
    let t = a.get_value_parser().type_id();
    let value_type = if switch {
        "bool"
    } else if t == TypeId::of::<u64>()
        || t == TypeId::of::<usize>()
        || t == TypeId::of::<u32>()
        || t == TypeId::of::<u8>()
    {
        "int"
    } else if t == TypeId::of::<f64>() {
        "float"
    } else if t == TypeId::of::<std::path::PathBuf>() {
        "path"
    } else {
        "str"
    };
    Flag {
        name: a.get_id().as_str().to_string(),
        long: a.get_long().map(|l| format!("--{l}")),
        kind: if switch {
            "switch"
        } else if many {
            "values"
        } else {
            "value"
        },
        value_type,
        default: (!switch)
            .then(|| {
                a.get_default_values()
                    .first()
                    .map(|v| v.to_string_lossy().into_owned())
            })
            .flatten(),
        choices: a
            .get_possible_values()
            .iter()
            .filter(|v| !v.is_hide_set())
            .map(|v| v.get_name().to_string())
            .collect(),
        required: a.is_required_set(),
        help: a
            .get_long_help()
            .or_else(|| a.get_help())
            .map(|s| s.to_string())
            .unwrap_or_default(),
    }
}
