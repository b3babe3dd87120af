//! End-to-end: `rbf synth` writes a request log, `rbf replay` reads it back.

use std::path::Path;

use crate::scratch::Scratch;
use std::process::Command;

fn rbf(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rbf"))
        .args(args)
        .output()
        .expect("the rbf binary runs")
}

fn synth(path: &Path, seed: &str) {
    let out = rbf(&[
        "synth",
        "--distinct",
        "500",
        "--zipf",
        "1",
        "--p-repeat",
        "0.8",
        "--placement",
        "uniform",
        "--arrivals",
        "20000",
        "--seed",
        seed,
        "-o",
        path.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `rbf replay path` through the tests' filter (M 4000, k 3, sigma 1200) and `extra`.
fn replay_out(path: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "replay",
        path.to_str().unwrap(),
        "--memory",
        "4000",
        "--hashes",
        "3",
        "--sigma",
        "1200",
    ];
    args.extend_from_slice(extra);
    rbf(&args)
}

fn replay_json(path: &Path, extra: &[&str]) -> serde_json::Value {
    let mut extra = extra.to_vec();
    extra.push("--json");
    crate::cli::json_of(&replay_out(path, &extra))
}

/// `rbf replay csv --filter-config FILE extra...` with `text` written to FILE in `dir`.
fn replay_with_filter_file(
    dir: &Path,
    csv: &Path,
    text: &str,
    extra: &[&str],
) -> std::process::Output {
    let cfg = dir.join("filter.toml");
    std::fs::write(&cfg, text).unwrap();
    let mut args = vec![
        "replay",
        csv.to_str().unwrap(),
        "--filter-config",
        cfg.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    rbf(&args)
}

#[test]
fn synth_then_replay_json_has_the_documented_keys() {
    let dir = Scratch::new("cli-a");
    let csv = dir.join("a.csv");
    synth(&csv, "3");
    let j = replay_json(&csv, &["--warmup", "500"]);
    for key in [
        "arrivals",
        "new",
        "non_repeat",
        "repeat",
        "false_positives",
        "false_negatives",
        "fp_rate",
        "fn_rate",
        "fp_rate_count_instance",
        "cycles",
        "lucky",
        "per_cycle",
        "confidence",
        "ingest",
    ] {
        assert!(j.get(key).is_some(), "missing `{key}` in {j}");
    }
    let n = |k: &str| j[k].as_u64().unwrap();
    assert_eq!(
        n("arrivals"),
        20_000,
        "the 500-line prologue is the warm-up"
    );
    assert_eq!(n("new") + n("non_repeat") + n("repeat"), n("arrivals"));
    assert!(
        n("false_positives") <= n("new") && n("false_negatives") + n("lucky") == n("non_repeat")
    );
    let fn_rate = j["fn_rate"].as_f64().unwrap();
    assert!((fn_rate - n("false_negatives") as f64 / 20_000.0).abs() < 1e-12);
    // With p_r = 0.8 the share of new arrivals is 0.2 (binomial, 20k draws: sd 0.0028).
    let new_share = n("new") as f64 / 20_000.0;
    assert!(
        (new_share - 0.2).abs() < 6.0 * (0.2f64 * 0.8 / 20_000.0).sqrt(),
        "{new_share}"
    );
    assert!(n("cycles") >= 2);
    assert_eq!(j["ingest"]["malformed"].as_u64(), Some(0));
}

#[test]
fn zstd_traces_read_transparently_and_synth_is_deterministic() {
    let dir = Scratch::new("cli-b");
    let csv = dir.join("b.csv");
    let zst = dir.join("b.trace.zst");
    let again = dir.join("b2.csv");
    synth(&csv, "7");
    synth(&zst, "7");
    synth(&again, "7");
    assert_eq!(std::fs::read(&csv).unwrap(), std::fs::read(&again).unwrap());
    assert_eq!(
        &std::fs::read(&zst).unwrap()[..4],
        &[0x28, 0xB5, 0x2F, 0xFD]
    );
    let a = replay_json(&csv, &[]);
    let b = replay_json(&zst, &[]);
    for k in [
        "arrivals",
        "new",
        "false_positives",
        "false_negatives",
        "cycles",
    ] {
        assert_eq!(a[k], b[k], "{k}");
    }
}

#[test]
fn malformed_lines_are_counted_with_line_numbers() {
    let dir = Scratch::new("cli-bad");
    let path = dir.join("bad.csv");
    std::fs::write(
        &path,
        "0,1,10\n1,2,10\nnot,a,line\n3,2\n\n4,1,10\n5,3,x\n6,4,10",
    )
    .unwrap();
    let out = rbf(&[
        "replay",
        path.to_str().unwrap(),
        "--memory",
        "64",
        "--hashes",
        "2",
        "--sigma",
        "20",
        "--json",
    ]);
    assert!(out.status.success());
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["arrivals"], 4);
    assert_eq!(j["new"], 3);
    assert_eq!(j["ingest"]["malformed"], 3);
    assert_eq!(j["ingest"]["skipped"]["blank or comment line"], 1);
    let ex = j["ingest"]["examples"].to_string();
    assert!(
        ex.contains("bad.csv:3:") && ex.contains("bad.csv:4:") && ex.contains("bad.csv:7:"),
        "{ex}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("3 malformed record(s)"), "{stderr}");
}

#[test]
fn bad_settings_name_the_key_and_exit_2() {
    let dir = Scratch::new("cli-c");
    let csv = dir.join("c.csv");
    synth(&csv, "1");
    let out = rbf(&[
        "replay",
        csv.to_str().unwrap(),
        "--memory",
        "100",
        "--hashes",
        "3",
        "--sigma",
        "100",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("`sigma`") && e.contains("100"), "{e}");
    let out = rbf(&[
        "replay",
        "/nonexistent/trace.csv",
        "--memory",
        "100",
        "--hashes",
        "3",
        "--sigma",
        "10",
    ]);
    // A missing input is a data error (exit 1, like cat), not a usage error.
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/trace.csv"));
    let out = replay_with_filter_file(
        &dir,
        &csv,
        "[filter]\nmemory = 100\nhashes = 3\nsigma = 10\nphase = 2\n",
        &[],
    );
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(2) && e.contains("phase") && e.contains("phases"),
        "{e}"
    );
}

#[test]
fn filter_config_file_matches_flags() {
    let dir = Scratch::new("cli-d");
    let csv = dir.join("d.csv");
    synth(&csv, "5");
    let a = replay_json(&csv, &["--phases", "2", "--non-retaining"]);
    let out = replay_with_filter_file(
        &dir,
        &csv,
        "[filter]\nmemory = 4000\nhashes = 3\nsigma = 1200\nphases = 2\nretaining = false\n",
        &["--json"],
    );
    let b: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(a["false_negatives"], b["false_negatives"]);
    assert_eq!(a["cycles"], b["cycles"]);
    assert_eq!(b["filter"]["phases"], 2);
}

/// `--positions per-cycle` (or `positions = "per-cycle"` in a filter file) replays the
/// same arrivals through filters whose positions change at every recycle: arrivals and
/// new messages stay (the rest depends on where cycles end), the filter's errors change, the JSON names the mode; a bad
/// value names the flag's allowed values.
#[test]
fn per_cycle_positions_change_the_errors_not_the_arrivals() {
    let dir = Scratch::new("cli-positions");
    let csv = dir.join("p.csv");
    synth(&csv, "6");
    let fixed = replay_json(&csv, &[]);
    let per_cycle = replay_json(&csv, &["--positions", "per-cycle"]);
    for key in ["arrivals", "new"] {
        assert_eq!(fixed[key], per_cycle[key], "{key}");
    }
    assert!(per_cycle["cycles"].as_u64().unwrap() > 5, "{per_cycle}");
    assert_ne!(fixed["false_negatives"], per_cycle["false_negatives"]);
    assert_eq!(per_cycle["filter"]["positions"], "per-cycle");
    assert!(
        fixed["filter"].get("positions").is_none(),
        "{}",
        fixed["filter"]
    );
    let out = replay_with_filter_file(
        &dir,
        &csv,
        "[filter]\nmemory = 4000\nhashes = 3\nsigma = 1200\npositions = \"per-cycle\"\n",
        &["--json"],
    );
    let b = crate::cli::json_of(&out);
    for key in ["false_negatives", "false_positives", "cycles"] {
        assert_eq!(per_cycle[key], b[key], "{key}");
    }
    // Shared halves cannot have per-cycle positions: refused, naming the key.
    let shared = replay_out(&csv, &["--phases", "2", "--positions", "per-cycle"]);
    assert_eq!(shared.status.code(), Some(2));
    let err = String::from_utf8_lossy(&shared.stderr);
    assert!(
        err.contains("positions") && err.contains("independent"),
        "{err}"
    );
    let bad = replay_out(&csv, &["--positions", "sometimes"]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("fixed") && err.contains("per-cycle"), "{err}");
}
