//! Flags that contradict each other or do not apply to the chosen mode are errors (exit
//! status 2) that name the flag, not silently resolved or ignored; numbers get one
//! plain line; `--quiet` silences notes and progress.

use std::process::{Command, Output, Stdio};

use crate::scratch::Scratch;

/// Runs the command line `args` (`rbf-bench ...` runs the benchmarks' binary).
fn rbf(dir: &std::path::Path, args: &str) -> Output {
    let args: Vec<&str> = args.split_whitespace().collect();
    let (bin, args) = crate::cli::program(&args);
    Command::new(bin)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("rbf runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn contradictions_and_inapplicable_flags_are_refused() {
    let dir = Scratch::new("safe-flags");
    let synth = "synth --distinct 100 --p-repeat 0.9 --arrivals 2000 -o t.csv";
    assert!(rbf(&dir, synth).status.success());
    let replay = "replay t.csv -m 4000 -k 3 --sigma 1200";
    // (extra arguments, what the message must name)
    let cases = [
        (format!("{replay} --retaining --non-retaining"), "--non-retaining"),
        (format!("{replay} --copy-over --no-copy-over"), "--no-copy-over"),
        (format!("{replay} --no-copy-over"), "two-phase"),
        (format!("{replay} --independent-halves"), "two-phase"),
        (format!("{replay} --max-inserts 5"), "--max-inserts"),
        (format!("{replay} --inactive-timeout 5s"), "--flows"),
        (format!("{replay} --format jedi --key dst"), "packet captures"),
        (format!("{replay} --format pcap --csv-header"), "--csv-*"),
        (format!("{replay} --key src-dst --prefix-v4 16"), "prefix"),
        (format!("{replay} --csv-time-unit ms"), "--csv-time-column"),
        (
            "synth --workload w.json --zipf 2 --arrivals 5 -o x.csv".to_string(),
            "--zipf",
        ),
        (
            "size --zipf 1 --distinct 100 --p-repeat 0.9 --target-fp 0.01 --memory 4000 --confirm-arrivals 0 --seed 7"
                .to_string(),
            "--seed",
        ),
        ("rbf-bench fn --distinct 10".to_string(), "--suite scale"),
        ("rbf-bench ingest --which jedi --pcap-passes 2".to_string(), "--which pcap"),
        // Numbers: one plain line, the flag named, long values not echoed.
        (format!("{replay} --warmup -1"), "must not be negative"),
        (format!("{replay} --confidence NaN"), "NaN"),
        (format!("{replay} --phases 1.5"), "whole number"),
        (format!("{replay} --seed 1{}", "0".repeat(299)), "300 characters"),
        (format!("{replay} --confidence -0.1"), "confidence"),
    ];
    for (args, named) in &cases {
        let out = rbf(&dir, args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "rbf {args}: {err}");
        assert!(
            err.contains(named),
            "rbf {args}: expected `{named}` in: {err}"
        );
        assert!(err.len() < 600, "rbf {args}: a long message: {err}");
    }
    // The same flags where they apply are accepted.
    for args in [
        format!("{replay} --phases 2 --no-copy-over"),
        format!("{replay} --warmup 1e3 --seed 2^10"),
        format!("{replay} --format csv --csv-header"),
    ] {
        let out = rbf(&dir, &args);
        assert!(out.status.success(), "rbf {args}: {}", stderr(&out));
    }
}

#[test]
fn quiet_silences_notes() {
    let dir = Scratch::new("safe-quiet");
    let synth = "synth --distinct 100 --p-repeat 0.9 --arrivals 200 -o t.csv";
    assert!(rbf(&dir, synth).status.success());
    let again = rbf(&dir, synth);
    assert!(
        stderr(&again).contains("note: t.csv exists"),
        "{}",
        stderr(&again)
    );
    let quiet = rbf(&dir, &format!("-q {synth}"));
    assert!(!stderr(&quiet).contains("note:"), "{}", stderr(&quiet));
    let quiet = rbf(&dir, &format!("{synth} --quiet"));
    assert!(!stderr(&quiet).contains("note:"), "{}", stderr(&quiet));
}

/// `compare --eps` and `--tolerance` are checked by the models' own rules before the
/// trace is read: the error comes alone, without the trace's notes (it used to come
/// after the whole replay and fit).
#[test]
fn compare_checks_the_model_settings_before_reading() {
    let dir = Scratch::new("safe-compare-eps");
    let synth = "synth --distinct 100 --p-repeat 0.9 --arrivals 2000 -o t.csv";
    assert!(rbf(&dir, synth).status.success());
    let mut text = std::fs::read_to_string(dir.join("t.csv")).expect("trace");
    text.push_str("zz,,,\n");
    std::fs::write(dir.join("t.csv"), text).expect("trace");
    let compare = "compare t.csv -m 4000 -k 3 --sigma 1200";
    for (extra, named) in [
        ("--eps 0.05", "(0, 0.01)"),
        ("--eps 0", "(0, 0.01)"),
        ("--tolerance 2", "tolerance"),
    ] {
        let out = rbf(&dir, &format!("{compare} {extra}"));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{extra}: {err}");
        assert!(err.contains(named), "{extra}: {err}");
        assert!(
            !err.contains("malformed"),
            "{extra}: the trace was read: {err}"
        );
    }
    // The same trace with working settings is read (and its bad line reported).
    let out = rbf(&dir, &format!("{compare} --eps 1e-8"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("malformed"), "{}", stderr(&out));
}

/// `--hash-seeds` out of its range 1-64 (`2^32`, 65, 0) says that range, before any
/// trace is opened, for `replay` and `compare` alike.
#[test]
fn hash_seeds_out_of_range_say_the_range() {
    let dir = Scratch::new("safe-flags-hash-seeds");
    for cmd in ["replay", "compare"] {
        for v in ["2^32", "65", "0"] {
            let out = rbf(
                &dir,
                &format!("{cmd} missing.csv -m 4096 -k 3 --sigma 1000 --hash-seeds {v}"),
            );
            let said = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{cmd} {v}: {said}");
            assert!(
                said.contains(&format!(
                    "--hash-seeds: allowed range is 1-64 (found `{v}`)"
                )),
                "{cmd} {v}: {said}"
            );
        }
    }
}

/// A TOML config nested past the parser's recursion limit (a 400 KB line) is refused
/// in a few lines, the quoted line cut and its length said, as `rbf run` config and as
/// `--filter-config`.
#[test]
fn a_toml_error_quotes_a_long_line_cut() {
    let dir = Scratch::new("safe-flags-toml-depth");
    let deep = format!("a = {}\n", "[".repeat(400_000));
    std::fs::write(dir.join("deep.toml"), &deep).unwrap();
    std::fs::write(dir.join("t.csv"), "0,1,1\n1,2,1\n").unwrap();
    for args in ["run deep.toml", "replay t.csv --filter-config deep.toml"] {
        let out = rbf(&dir, args);
        let said = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{args}: {said}");
        assert!(said.len() < 2_000, "{args}: {} bytes of error", said.len());
        assert!(said.contains("deep.toml"), "{args}: {said}");
        assert!(said.contains("more characters)"), "{args}: {said}");
    }
}
