//! `rbf size TRACE`: a filter sized on a trace by the renewal-trace bound, next to the
//! smallest memory a replay of the same trace shows sufficient.
//!
//! Nothing here copies a number from the program's output. What is asserted, on a
//! trace no stationary model describes (regime switches, scans, packet trains):
//!
//! * both sizes are what the trace shows: at the bound's memory the bound meets the FN
//!   target and at its failing memory it does not; the same for the replay's observed
//!   FN; asked again at a single memory (`--memory`, a pass that decodes the trace
//!   rather than reading the spooled keys), the chosen filter gets the same values;
//! * the chosen filter's bound and observed FN are those `rbf compare` prints for the
//!   same filter on the same trace (one argument, one replay, whatever the command);
//! * standard input is sized like the file, and the answer does not depend on the
//!   number of threads;
//! * flags that describe a workload or a synthetic replay are refused with a trace.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

use super::cli::{json_of, rbf, stderr};
use super::scratch::Scratch;
use super::trace_bound::hostile_trace;

const TARGET_FP: &str = "0.01";
const TARGET_FN: f64 = 0.01;

/// The hostile trace as a `lines` file.
fn trace_file(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("hostile.txt");
    let mut text = String::new();
    for k in hostile_trace(11, 120_000) {
        text.push_str(&format!("k{k}\n"));
    }
    std::fs::write(&path, text).expect("trace written");
    path
}

fn size_args<'a>(trace: &'a str, goal: &'a [&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "size",
        trace,
        "--format",
        "lines",
        "--target-fp",
        TARGET_FP,
        "--max-hashes",
        "4",
        "--json",
        "-q",
    ];
    a.extend_from_slice(goal);
    a
}

fn f(v: &Value) -> f64 {
    v.as_f64().expect("a number")
}

fn u(v: &Value) -> u64 {
    v.as_u64().expect("an integer")
}

/// The candidate's filter flags for `rbf compare`.
fn filter_flags(c: &Value) -> Vec<String> {
    vec![
        "--memory".into(),
        u(&c["memory"]).to_string(),
        "--hashes".into(),
        u(&c["hashes"]).to_string(),
        "--sigma".into(),
        u(&c["sigma"]).to_string(),
        "--phases".into(),
        u(&c["phases"]).to_string(),
    ]
}

/// The lowest bound and the lowest observed FN at one memory (`--memory`).
fn at_memory(dir: &std::path::Path, trace: &str, m: u64) -> (f64, f64) {
    let m = m.to_string();
    let d = json_of(&rbf(dir, &size_args(trace, &["--memory", &m])));
    (
        f(&d["chosen"]["bound"]["upper"]),
        f(&d["by_replay"]["observed_fn"]["rate"]),
    )
}

/// What must not depend on how the trace was read or on the threads: the two
/// candidates and the search.
fn answer(d: &Value) -> (Value, Value, Value) {
    (
        d["chosen"].clone(),
        d["by_replay"].clone(),
        d["search"].clone(),
    )
}

#[test]
fn both_sizes_are_what_the_trace_shows() {
    let dir = Scratch::new("size-trace");
    let path = trace_file(&dir);
    let trace = path.to_str().expect("utf-8 path");
    let g = TARGET_FN.to_string();
    let goal = ["--target-fn", g.as_str()];
    let d = json_of(&rbf(&dir, &size_args(trace, &goal)));
    let (chosen, by_replay) = (&d["chosen"], &d["by_replay"]);

    // The bound's size meets by the bound; its failing memory does not.
    let bound = f(&chosen["bound"]["upper"]);
    assert!(bound <= TARGET_FN, "{bound}");
    let fails = u(&d["bound_fails"]);
    assert!(fails < u(&chosen["memory"]));
    let (bound_there, _) = at_memory(&dir, trace, fails);
    assert!(bound_there > TARGET_FN, "{bound_there} at {fails} bits");
    // The same filter asked at its memory alone: the same bound, the same replay.
    let (again, _) = at_memory(&dir, trace, u(&chosen["memory"]));
    assert_eq!(again, bound);

    // The replay's size: observed FN within the target there, beyond it below.
    let observed = f(&by_replay["observed_fn"]["rate"]);
    assert!(observed <= TARGET_FN, "{observed}");
    let (_, observed_below) = at_memory(&dir, trace, u(&d["replay_fails"]));
    assert!(observed_below > TARGET_FN, "{observed_below}");
    let ratio = f(&d["memory_ratio"]);
    assert_eq!(
        ratio,
        u(&chosen["memory"]) as f64 / u(&by_replay["memory"]) as f64
    );

    // `rbf compare` of the chosen filter on the same trace: the same two numbers.
    let mut args: Vec<String> = ["compare", trace, "--format", "lines", "--json", "-q"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(filter_flags(chosen));
    args.extend(["--method".into(), "renewal-trace".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let c = json_of(&rbf(&dir, &args));
    assert_eq!(f(&c["fn_renewal_trace"]), bound);
    assert_eq!(f(&c["observed_fn"]), f(&chosen["observed_fn"]["rate"]));

    // Standard input, and one thread: the same answer.
    let args = size_args("-", &goal);
    let (bin, _) = super::cli::program(&["rbf"]);
    let mut child = Command::new(bin)
        .args(&args)
        .current_dir(&*dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rbf starts");
    let bytes = std::fs::read(&path).expect("trace read");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(&bytes));
    let out = child.wait_with_output().expect("rbf runs");
    writer.join().expect("writer").expect("trace piped");
    assert_eq!(answer(&json_of(&out)), answer(&d));
    let one = Command::new(bin)
        .args(size_args(trace, &goal))
        .current_dir(&*dir)
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .expect("rbf runs");
    assert_eq!(answer(&json_of(&one)), answer(&d));
}

#[test]
fn a_trace_refuses_the_flags_of_a_workload_or_a_synthetic_replay() {
    let dir = Scratch::new("size-trace-flags");
    std::fs::write(dir.join("t.txt"), "a\nb\na\n").expect("written");
    for extra in [
        &["--zipf", "1"][..],
        &["--distinct", "10", "--p-repeat", "0.5"],
        &["--workload", "w.json"],
        &["--confirm-arrivals", "5"],
        &["--seed", "3"],
    ] {
        let mut args = vec![
            "size",
            "t.txt",
            "--target-fp",
            "0.01",
            "--target-fn",
            "0.01",
        ];
        args.extend_from_slice(extra);
        let out = rbf(&dir, &args);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", stderr(&out));
        let e = stderr(&out);
        assert!(
            e.contains("cannot be used with") && e.contains(extra[0]),
            "{e}"
        );
    }
    // Without a trace, the workload is still required.
    let out = rbf(
        &dir,
        &["size", "--target-fp", "0.01", "--target-fn", "0.01"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--distinct"), "{}", stderr(&out));
}
