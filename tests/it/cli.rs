//! Running the `rbf` binary from tests.

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// The binary a command line runs, and its arguments: one that starts with `rbf-bench`
/// runs the benchmarks' binary (`rbf-bench fp ...`), any other `rbf`.
pub fn program<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> (&'static str, &[S]) {
    match args.split_first() {
        Some((first, rest)) if first.as_ref() == "rbf-bench" => {
            (env!("CARGO_BIN_EXE_rbf-bench"), rest)
        }
        _ => (env!("CARGO_BIN_EXE_rbf"), args),
    }
}

/// Runs `rbf args` (or `rbf-bench ...`, see [`program`]) in `dir`, with nothing on stdin.
pub fn rbf(dir: &Path, args: &[&str]) -> Output {
    let (bin, args) = program(args);
    Command::new(bin)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("rbf runs")
}

/// What a run said on stderr.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Fails the test with the run's stderr unless it succeeded.
pub fn ok(out: &Output) {
    assert!(out.status.success(), "{}", stderr(out));
}

/// The JSON a successful run printed (the test fails with its stderr otherwise).
pub fn json_of(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON on stdout")
}

/// Starts `rbf args` (or `rbf-bench ...`, see [`program`]) in `dir` with `stdin`, stdout
/// discarded and stderr piped (for tests that watch what it says while it runs, or
/// signal it).
pub fn spawn<I, S>(dir: &Path, args: I, stdin: Stdio) -> std::process::Child
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let args: Vec<S> = args.into_iter().collect();
    let (bin, args) = program(&args);
    Command::new(bin)
        .args(args)
        .current_dir(dir)
        .stdin(stdin)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rbf starts")
}
