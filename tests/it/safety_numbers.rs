//! Numbers that must not lie: an interval only where the replay has
//! the cycles for one, a size never called met when its own replay misses, and a long
//! model that says how long it takes and stops when asked. Each test reproduces a
//! command that once got one of these wrong, on a small input.

use std::io::{BufRead, Write};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::cli::rbf;
use crate::scratch::Scratch;

fn stdout(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn json(o: &Output) -> serde_json::Value {
    crate::cli::json_of(o)
}

/// The first `lines` lines of the shipped TRAGEN log, as a file in `dir`.
fn tragen_head(dir: &std::path::Path, lines: usize) -> std::path::PathBuf {
    let src = format!("{}/tests/data/tragen-100k.csv", env!("CARGO_MANIFEST_DIR"));
    let f = std::fs::File::open(src).expect("the TRAGEN sample");
    let path = dir.join("tragen-head.csv");
    let mut out = std::fs::File::create(&path).expect("scratch file");
    for line in std::io::BufReader::new(f).lines().take(lines) {
        writeln!(out, "{}", line.expect("a line")).expect("written");
    }
    path
}

/// `w.json` in `dir`: `rbf fit` of the TRAGEN log's first 20 000 lines, a fit that
/// fails its test (the cases below need one).
fn rejected_fit(dir: &std::path::Path) {
    let trace = tragen_head(dir, 20_000);
    let fit = rbf(
        dir,
        &["fit", trace.to_str().expect("utf-8"), "-o", "w.json", "-q"],
    );
    assert!(
        stdout(&fit).contains("DOES NOT FIT"),
        "the case needs a misfit"
    );
}

/// Every `low` in a JSON value, wherever it is nested.
fn lows(v: &serde_json::Value, out: &mut Vec<(String, f64)>, at: &str) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let here = format!("{at}.{k}");
                if k == "low" {
                    if let Some(f) = x.as_f64() {
                        out.push((here.clone(), f));
                    }
                }
                lows(x, out, &here);
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                lows(x, out, &format!("{at}[{i}]"));
            }
        }
        _ => {}
    }
}

/// A replay with one recycle printed "FN per arrival 0 [0, 0]" next to
/// 600 false negatives and judged markov-lower VIOLATED on it. Now every output says
/// "too few cycles", the point is the rate over every arrival, and no bound is judged.
#[test]
fn one_cycle_replays_print_no_interval_and_judge_no_bound() {
    let dir = Scratch::new("safe-numbers-cycles");
    let synth = [
        "synth",
        "--distinct",
        "1000",
        "--zipf",
        "1",
        "--p-repeat",
        "0.9",
        "--placement",
        "uniform",
        "--arrivals",
        "20000",
        "--seed",
        "1",
        "-o",
        "syn.csv",
    ];
    stdout(&rbf(&dir, &synth));
    let filter = ["--memory", "10000", "--hashes", "5", "--sigma", "7000"];
    let mut args = vec!["compare", "syn.csv"];
    args.extend(filter);
    let text = stdout(&rbf(&dir, &args));
    args.push("--json");
    let v = json(&rbf(&dir, &args));
    // The replay saw false negatives: the point printed must not be 0.
    let fn_rate = v["observed_fn"].as_f64().expect("observed_fn");
    assert!(fn_rate > 0.0, "{v}");
    assert!(v["observed_fn_interval"].is_null(), "{v}");
    for r in v["models"].as_array().expect("models") {
        assert!(r["verdict"].is_null(), "{r}");
    }
    let fn_line = text
        .lines()
        .find(|l| l.starts_with("FN per arrival"))
        .expect("the FN row");
    assert!(fn_line.contains("too few cycles"), "{fn_line}");
    assert!(!fn_line.contains('['), "{fn_line}");
    // No verdict cell anywhere (the legend under the table still explains them).
    for line in text.lines().map(str::trim_end) {
        assert!(
            !line.ends_with("holds")
                && !line.ends_with("undecided")
                && !line.contains("VIOLATED ("),
            "a verdict in: {line}"
        );
    }
    assert!(text.contains("not judged"), "{text}");

    // rbf replay of the first 20 000 TRAGEN lines: 360 false negatives, one recycle.
    let trace = tragen_head(&dir, 20_000);
    let trace = trace.to_str().expect("utf-8 path");
    for filter in [
        ["--memory", "65536", "--hashes", "4", "--sigma", "24000"],
        ["--memory", "1", "--hashes", "1", "--sigma", "0"],
    ] {
        let mut args = vec!["replay", trace];
        args.extend(filter);
        let text = stdout(&rbf(&dir, &args));
        args.push("--json");
        let v = json(&rbf(&dir, &args));
        assert!(v["confidence"].is_null(), "{filter:?}: {v}");
        let errors =
            v["false_negatives"].as_u64().unwrap_or(0) + v["false_positives"].as_u64().unwrap_or(0);
        assert!(errors > 0, "{filter:?}: the case has errors to hide");
        for row in ["FP rate", "FN rate", "FP count-instance"] {
            let line = text
                .lines()
                .find(|l| l.starts_with(row))
                .unwrap_or_else(|| panic!("{row} in:\n{text}"));
            assert!(line.ends_with("too few cycles"), "{filter:?}: {line}");
        }
    }

    // rbf run on the same synthetic workload: no verdict, so no "by chance" line.
    std::fs::write(
        dir.join("one.toml"),
        "name = \"one-cycle\"\nseeds = [1, 2, 3]\nmeasures = [\"observed\", \"renewal\", \
         \"markov-lower\"]\n\n[[synthetic]]\nname = \"zipf1\"\ndistinct = 1000\nzipf = 1.0\n\
         p_repeat = 0.9\narrivals = 20000\n\n[grid]\nmemory = [10000]\nhashes = [5]\n\
         sigma = [7000]\n",
    )
    .expect("config written");
    let text = stdout(&rbf(&dir, &["run", "one.toml", "-o", "out"]));
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(!words.contains("by chance"), "{text}");
    assert!(words.contains("not judged at 1: too few cycles"), "{text}");
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/results.json")).expect("json"))
            .expect("results.json");
    let row = &results["rows"][0];
    assert!(row["observed_fn_low"].is_null(), "{row}");
    let csv = std::fs::read_to_string(dir.join("out/results.csv")).expect("results.csv");
    assert!(csv.contains("too few cycles"), "{csv}");
}

/// Intervals of counts per cycle went negative
/// (arrivals_per_cycle low -123 754). Every interval end of a replay with a few cycles,
/// rates and counts alike, is >= 0.
#[test]
fn count_intervals_never_go_negative() {
    let dir = Scratch::new("safe-numbers-counts");
    let trace = tragen_head(&dir, 100_000);
    let trace = trace.to_str().expect("utf-8 path");
    let mut checked = 0;
    for sigma in ["6000", "12000", "24000"] {
        let v = json(&rbf(
            &dir,
            &[
                "replay", trace, "--memory", "65536", "--hashes", "4", "--sigma", sigma, "--json",
            ],
        ));
        let mut found = Vec::new();
        lows(&v["confidence"], &mut found, "confidence");
        for (at, low) in &found {
            assert!(*low >= 0.0, "sigma {sigma}: {at} = {low}");
        }
        checked += found.len();
    }
    assert!(checked >= 6, "no interval was checked");
}

/// `rbf size --workload` from a fit that failed its test recommended a
/// size whose bound "meets" the FN target while its own confirming replay MISSES it, and
/// nothing said the fit had failed.
#[test]
fn size_says_the_fit_failed_and_never_calls_a_missed_target_met() {
    let dir = Scratch::new("safe-numbers-size");
    rejected_fit(&dir);
    let w: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("w.json")).expect("w.json"))
            .expect("workload JSON");
    assert_eq!(
        w["provenance"]["q_check"]["fits"], false,
        "{}",
        w["provenance"]
    );
    let size = [
        "size",
        "--workload",
        "w.json",
        "--target-fp",
        "1e-3",
        "--target-fn",
        "0.2",
        "--phases",
        "1",
        "--max-hashes",
        "4",
        "--confirm-arrivals",
        "300000",
        "-q",
    ];
    let text = stdout(&rbf(&dir, &size));
    assert!(
        text.starts_with("warning: the workload does not fit its trace"),
        "{text}"
    );
    let mut args = size.to_vec();
    args.push("--json");
    let v = json(&rbf(&dir, &args));
    let misfit = v["workload_misfit"].as_str().expect("workload_misfit");
    assert!(misfit.contains("does not fit"), "{misfit}");
    let fn_verdict = &v["confirmation"]["fn_verdict"];
    let bound = v["fn_renewal_upper"].as_f64().expect("bound");
    assert!(bound <= 0.2, "the search met the target by the bound");
    // The case reproduces the failure: the replay misses what the bound meets.
    assert_eq!(fn_verdict, "misses", "{v}");
    assert_eq!(v["confirmed"], false, "{v}");
    let fn_row = text
        .lines()
        .find(|l| l.starts_with("FN renewal upper bound"))
        .expect("the bound's row");
    assert!(fn_row.ends_with("NOT CONFIRMED"), "{fn_row}");
    assert!(!fn_row.contains("meets"), "{fn_row}");
    assert!(text.contains("NOT CONFIRMED: its confirming replay MISSES the FN target"));
    // The bound and the replay describe different workloads: it is not judged.
    for r in v["models"].as_array().expect("models") {
        assert_eq!(r["standing"], "not-judged", "{r}");
    }
}

/// The N-bounded FN model at N = 9999 printed nothing and took 230 s
/// to act on a SIGTERM sent at 10 s. It now says up front how long it will take, stops
/// within a few seconds of the signal (2 s granted for a loaded machine on top of the
/// one second asked of it), and left alone ends with an error that says why.
#[test]
fn a_long_n_bounded_model_announces_itself_and_stops_at_sigterm() {
    let dir = Scratch::new("safe-numbers-nbounded");
    let args = [
        "model",
        "fn",
        "--memory",
        "10000",
        "--hashes",
        "5",
        "--max-inserts",
        "9999",
        "--zipf",
        "1",
        "--distinct",
        "1000",
        "--p-repeat",
        "0.9",
        "--json",
    ];
    let mut child = Command::new(env!("CARGO_BIN_EXE_rbf"))
        .args(args)
        .current_dir(&*dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rbf starts");
    std::thread::sleep(Duration::from_secs(5));
    let sent = Instant::now();
    // SAFETY: the pid is our own child's, still running or a zombie we have not reaped.
    let finished_early = child.try_wait().expect("waits").is_some();
    if !finished_early {
        unsafe {
            libc::kill(child.id() as i32, libc::SIGTERM);
        }
    }
    let out = child.wait_with_output().expect("rbf ends");
    let waited = sent.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    if !finished_early {
        assert!(
            waited < Duration::from_secs(3),
            "stopped {waited:?} after SIGTERM: {err}"
        );
        assert_eq!(out.status.code(), Some(143), "{err}");
        assert!(
            err.contains("is expected to take about"),
            "no estimate up front: {err}"
        );
    }
    // Left alone, it ends with an answer: this filter's bits can all be set before
    // N + 1 insertions, and such a cycle never ends, which the models do not cover
    // (followed on, it ran for half an hour).
    let out = Command::new(env!("CARGO_BIN_EXE_rbf"))
        .args(args)
        .current_dir(&*dir)
        .stdin(Stdio::null())
        .output()
        .expect("rbf runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("`max_inserts`"), "{err}");
    assert!(err.contains("never ends"), "{err}");
}

/// A rejected fit warns wherever its workload file is read: `model fn --workload`
/// (text, first line, and `workload_misfit` in `--json`) and `synth --workload`
/// (stderr), as `size` does; a workload given as the truth gets no warning.
#[test]
fn a_rejected_fit_is_named_by_every_command_reading_its_workload() {
    let dir = Scratch::new("safe-numbers-misfit");
    rejected_fit(&dir);
    let model = [
        "model",
        "fn",
        "--workload",
        "w.json",
        "-m",
        "65536",
        "-k",
        "4",
        "--sigma",
        "20000",
    ];
    let text = stdout(&rbf(&dir, &model));
    assert!(
        text.starts_with("warning: the workload does not fit its trace (model does not fit"),
        "{text}"
    );
    assert!(text.contains("D and the bounds below are for"), "{text}");
    let mut args = model.to_vec();
    args.push("--json");
    let v = json(&rbf(&dir, &args));
    let misfit = v["workload_misfit"].as_str().expect("workload_misfit");
    assert!(misfit.contains("does not fit"), "{misfit}");

    let synth = rbf(
        &dir,
        &[
            "synth",
            "--workload",
            "w.json",
            "--arrivals",
            "1000",
            "-o",
            "s.csv",
        ],
    );
    let said = String::from_utf8_lossy(&synth.stderr);
    assert!(synth.status.success(), "{said}");
    assert!(
        said.contains("warning: the workload does not fit its trace"),
        "{said}"
    );

    // Given as the truth: no warning, a null in the JSON.
    let given = [
        "model",
        "fn",
        "--distinct",
        "500",
        "--p-repeat",
        "0.9",
        "-m",
        "65536",
        "-k",
        "4",
        "--sigma",
        "20000",
    ];
    assert!(!stdout(&rbf(&dir, &given)).contains("warning"));
    let mut args = given.to_vec();
    args.push("--json");
    assert!(json(&rbf(&dir, &args))["workload_misfit"].is_null());
}

/// `rbf fit` of a trace its model does not fit marks every line that shows the rejected
/// fit's numbers (Q's exponents, the placement) and every file it writes of them.
#[test]
fn a_rejected_fit_marks_its_exponents_placement_and_files() {
    let dir = Scratch::new("safe-numbers-fit-lines");
    let trace = tragen_head(&dir, 20_000);
    let out = rbf(
        &dir,
        &[
            "fit",
            trace.to_str().expect("utf-8"),
            "-o",
            "w.json",
            "--table",
            "r.csv",
        ],
    );
    let text = stdout(&out);
    assert!(text.contains("DOES NOT FIT"), "the case needs a misfit");
    for row in [
        "Q: Zipf exponent per rank decade",
        "placement: top, bottom, segments",
    ] {
        let line = text.lines().find(|l| l.contains(row)).expect(row);
        assert!(line.contains("rejected fit"), "{line}");
    }
    let said = String::from_utf8_lossy(&out.stderr);
    for what in ["workload", "rank table"] {
        assert!(
            said.contains(&format!("wrote {what} of a rejected fit")),
            "{said}"
        );
    }
}
