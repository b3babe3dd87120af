//! Hostile runs, shards and outputs: `rbf merge` refuses shards of
//! other runs, edited shards and wrong shard indices, naming what differs; a resumed
//! `rbf run` writes every output byte for byte as the uninterrupted run, whatever
//! stopped it; refused runs leave nothing behind; duplicates in a config are errors;
//! grid values take the command line's spellings; report.md shows user text as text.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cli::{ok, rbf, stderr};
use crate::scratch::Scratch;

use rbf_judge::experiment::{self, output, ExperimentConfig, Journal, RunOptions, Shard};

/// A synthetic trace of `arrivals` written as a CSV the runs read as a [[trace]].
fn trace(dir: &Path, name: &str, p_repeat: &str, arrivals: &str) {
    ok(&rbf(
        dir,
        &[
            "synth",
            "--distinct",
            "300",
            "--p-repeat",
            p_repeat,
            "--arrivals",
            arrivals,
            "-o",
            name,
            "-q",
        ],
    ));
}

/// A config over trace `path` and one synthetic source with `p_repeat`.
fn config(path: &str, p_repeat: &str, measures: &str) -> String {
    format!(
        r#"name = "same-name"
seeds = [1]
measures = [{measures}]

[[trace]]
name = "the trace"
path = "{path}"

[[synthetic]]
name = "the model"
distinct = 300
zipf = 1.0
p_repeat = {p_repeat}
arrivals = 5000

[grid]
memory = [2000, 4000]
hashes = [3]
sigma_fraction = [0.5]
"#
    )
}

/// Files in `dir` (names), sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Every output file of a run directory, relative path -> bytes.
fn outputs(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v = Vec::new();
    for name in listing(dir) {
        let p = dir.join(&name);
        if p.is_dir() {
            for (n, b) in outputs(&p) {
                v.push((format!("{name}/{n}"), b));
            }
        } else {
            v.push((name, std::fs::read(p).unwrap()));
        }
    }
    v
}

/// `rbf merge` of `shards` into `m`: its stderr, asserting it was refused.
fn refused_merge(dir: &Path, shards: &[&str]) -> String {
    let mut args = vec!["merge"];
    args.extend(shards);
    args.extend(["-o", "m", "-q"]);
    let out = rbf(dir, &args);
    assert_eq!(
        out.status.code(),
        Some(2),
        "merge of {shards:?} must be refused"
    );
    assert!(!dir.join("m").exists(), "a refused merge writes nothing");
    stderr(&out)
}

/// Edits the first row of `shard`'s results.json with `edit`.
fn edit_shard(dir: &Path, shard: &str, edit: impl Fn(&mut serde_json::Value)) {
    let path = dir.join(shard).join("results.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

#[test]
fn merge_refuses_shards_of_other_runs_and_edited_shards() {
    let dir = Scratch::new("safe-merge-runs");
    let d: &Path = &dir;
    trace(d, "t.csv", "0.9", "4000");
    trace(d, "u.csv", "0.5", "4000");
    let both = "\"observed\", \"fp-model\"";
    std::fs::write(d.join("a.toml"), config("t.csv", "0.9", both)).unwrap();
    std::fs::write(d.join("b.toml"), config("u.csv", "0.5", both)).unwrap();
    std::fs::write(d.join("c.toml"), config("t.csv", "0.9", "\"fp-model\"")).unwrap();
    let run = |cfg: &str, shard: &str, out: &str| {
        ok(&rbf(d, &["run", cfg, "--shard", shard, "-o", out, "-q"]));
    };
    run("a.toml", "0/2", "a0");
    run("a.toml", "1/2", "a1");
    run("b.toml", "1/2", "b1");
    run("c.toml", "1/2", "c1");
    ok(&rbf(d, &["merge", "a0", "a1", "-o", "whole", "-q"]));

    // Same name and grid, another trace and p_repeat: refused, naming both.
    let e = refused_merge(d, &["a0", "b1"]);
    assert!(
        e.contains("a0/results.json") && e.contains("b1/results.json"),
        "{e}"
    );
    assert!(e.contains("p_repeat: 0.9 vs 0.5"), "{e}");
    assert!(e.contains("trace[0].path"), "{e}");
    // Only the measures differ: that is what the error names.
    let e = refused_merge(d, &["a0", "c1"]);
    assert!(
        e.contains("measures: [observed, fp-model] vs [fp-model]"),
        "{e}"
    );
    // A shard given twice, or shards of different counts.
    let e = refused_merge(d, &["a0", "a0"]);
    assert!(e.contains("given twice"), "{e}");
    run("a.toml", "1/3", "a1of3");
    let e = refused_merge(d, &["a0", "a1of3"]);
    assert!(e.contains("share N"), "{e}");

    // Edited shards: a rate out of range, an interval that excludes its value, a shard
    // index beyond the count, a row moved to another source.
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let edits: Vec<(&str, Edit)> = vec![
        (
            "observed_fn = 2.5",
            Box::new(|v| v["rows"][0]["observed_fn"] = 2.5.into()),
        ),
        (
            "observed_fn_low = -1",
            Box::new(|v| v["rows"][0]["observed_fn_low"] = (-1.0).into()),
        ),
        (
            "observed_fn = 0.5 lies outside its interval [0.9, 0.95]",
            Box::new(|v| {
                v["rows"][0]["observed_fn"] = 0.5.into();
                v["rows"][0]["observed_fn_low"] = 0.9.into();
                v["rows"][0]["observed_fn_high"] = 0.95.into();
            }),
        ),
        (
            "shard 7 of 3",
            Box::new(|v| v["shard"] = serde_json::json!({"index": 7, "count": 3})),
        ),
        (
            "says source `elsewhere`",
            Box::new(|v| v["rows"][0]["source"] = "elsewhere".into()),
        ),
    ];
    for (said, edit) in edits {
        let copy = d.join("a1-edited");
        let _ = std::fs::remove_dir_all(&copy);
        std::fs::create_dir(&copy).unwrap();
        std::fs::copy(d.join("a1/results.json"), copy.join("results.json")).unwrap();
        edit_shard(d, "a1-edited", edit);
        let e = refused_merge(d, &["a0", "a1-edited"]);
        assert!(e.contains(said), "expected `{said}` in: {e}");
    }
    // The same config over a trace whose content changed between the shards.
    trace(d, "t.csv", "0.8", "4000");
    run("a.toml", "1/2", "a1-new-trace");
    let e = refused_merge(d, &["a0", "a1-new-trace"]);
    assert!(e.contains("input `t.csv`"), "{e}");
}

/// A config over one trace with the FN models, so that its report has the fitted
/// workload line, the source's notes and its ingest summary.
const TRACE_GRID: &str = r#"name = "resume-trace"
seeds = [1]
measures = ["observed", "fp-model", "renewal", "drop-pins"]

[[trace]]
name = "cdn-like"
path = "t.csv"
warmup = 2000

[grid]
memory = [2048, 4096]
hashes = [3]
sigma_fraction = [0.5]
phases = [1, 2]
"#;

/// The library's resume path, deterministically: every point journalled by a run that
/// never wrote its outputs, then a rerun that reads no trace at all.
#[test]
fn a_resumed_run_reports_its_sources_as_the_first_did() {
    let dir = Scratch::new("safe-resume-sources");
    trace(&dir, "t.csv", "0.8", "20000");
    let path = dir.join("g.toml");
    std::fs::write(&path, TRACE_GRID).unwrap();
    let c = ExperimentConfig::load(&path).expect("config");
    let out = dir.join("out");
    let options = RunOptions::default();
    let journal = Journal::open(&out, &c, Shard::ALL).expect("journal");
    let first = experiment::run_resumable(&c, options, Some(&journal)).expect("run");
    // Stopped here (kill -9 after the last point): the journal stays.
    drop(journal);
    assert!(
        first.sources[0].workload.is_some(),
        "a fitted workload line"
    );
    assert!(first.sources[0].ingest.is_some(), "an ingest summary");
    let journal = Journal::open(&out, &c, Shard::ALL).expect("journal again");
    assert_eq!(
        journal.resumed(),
        first.rows.len(),
        "every point journalled"
    );
    let second = experiment::run_resumable(&c, options, Some(&journal)).expect("rerun");
    journal.finish().expect("journal removed");
    assert_eq!(second, first, "the resumed results differ");
    let a = output::write(&first, &dir.join("a")).expect("write");
    let b = output::write(&second, &dir.join("b")).expect("write");
    assert_eq!(outputs(&a.dir), outputs(&b.dir));
}

/// Starts `rbf run g.toml -o part`, waits until its journal holds `cells` points (or
/// the run ended), and sends `signal`.
fn stop_after_cells(dir: &Path, cells: usize, signal: i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rbf"))
        .args(["run", "g.toml", "-o", "part", "-q"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let journal = dir.join(".part.rbf-run/cells.jsonl");
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(120) {
        if child.try_wait().unwrap().is_some() {
            return;
        }
        let lines = std::fs::read_to_string(&journal)
            .map_or(0, |t| t.lines().filter(|l| l.contains("\"point\"")).count());
        if lines >= cells {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, signal) };
    let _ = child.wait();
}

/// Stopped by each signal after the first point and after the last one (all journalled,
/// outputs not yet written), then rerun: every output file equals the uninterrupted
/// run's.
#[test]
fn a_run_resumed_after_any_signal_is_byte_for_byte() {
    let dir = Scratch::new("safe-resume-signals");
    let d: &Path = &dir;
    trace(d, "t.csv", "0.8", "20000");
    std::fs::write(d.join("g.toml"), TRACE_GRID).unwrap();
    ok(&rbf(d, &["run", "g.toml", "-o", "whole", "-q"]));
    let whole = outputs(&d.join("whole"));
    let signals = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGKILL];
    let mut resumed = 0;
    for signal in signals {
        for cells in [1, 4] {
            stop_after_cells(d, cells, signal);
            if d.join(".part.rbf-run/cells.jsonl").exists() {
                resumed += 1;
            }
            let out = rbf(d, &["run", "g.toml", "-o", "part", "-q"]);
            ok(&out);
            let part = outputs(&d.join("part"));
            for ((name, a), (_, b)) in whole.iter().zip(&part) {
                assert!(
                    a == b,
                    "signal {signal} after {cells} point(s): {name} differs"
                );
            }
            assert_eq!(part.len(), whole.len());
        }
    }
    println!("{resumed} of 8 reruns resumed from a journal");
    let hidden: Vec<String> = listing(d)
        .into_iter()
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(hidden.is_empty(), "left behind: {hidden:?}");
}

#[test]
fn refused_runs_leave_nothing_behind() {
    let dir = Scratch::new("safe-refused");
    let d: &Path = &dir;
    // Not a trace: refused when the source is read, after the journal was opened.
    std::fs::write(d.join("junk.csv"), "not,a,trace\nat,all,here\n").unwrap();
    std::fs::write(
        d.join("g.toml"),
        "name = \"junk\"\n[[trace]]\npath = \"junk.csv\"\n[grid]\nmemory = [2000]\nhashes = [3]\nsigma_fraction = [0.5]\n",
    )
    .unwrap();
    let out = rbf(d, &["run", "g.toml", "-o", "out", "-q"]);
    assert!(!out.status.success());
    assert!(!stderr(&out).contains("kept"), "{}", stderr(&out));
    assert_eq!(listing(d), ["g.toml", "junk.csv"], "{}", stderr(&out));
}

/// A config with `line` added to a models-only experiment's top level or grid.
fn models_only(top: &str, grid: &str) -> String {
    format!(
        "name = \"m\"\nmeasures = [\"fp-model\"]\n{top}\n[grid]\nhashes = [3]\nsigma_fraction = [0.5]\n{grid}\n"
    )
}

#[test]
fn duplicates_in_a_config_are_errors_naming_key_and_value() {
    let dir = Scratch::new("safe-duplicates");
    let d: &Path = &dir;
    let synthetic = "[[synthetic]]\nname = \"s\"\ndistinct = 100\nzipf = 1.0\np_repeat = 0.9\narrivals = 1000\n";
    let cases = [
        (models_only("seeds = [1, 2, 1]", "memory = [2000]"), "seeds", "`1`"),
        (
            models_only("", "memory = [2000, 4000, 2000]"),
            "grid.memory",
            "`2000`",
        ),
        (
            models_only("", "memory = [2000]\nphases = [1, 1]"),
            "grid.phases",
            "`1`",
        ),
        (
            models_only(
                "measures = [\"fp-model\", \"fp-model\"]",
                "memory = [2000]",
            )
            .replacen("measures = [\"fp-model\"]\n", "", 1),
            "measures",
            "`fp-model`",
        ),
        (
            format!(
                "name = \"m\"\n{synthetic}{synthetic}[grid]\nmemory = [2000]\nhashes = [3]\nsigma_fraction = [0.5]\n"
            ),
            "synthetic.name",
            "`s`",
        ),
        (
"name = \"m\"\n[[synthetic]]\ndistinct = [100, 100]\nzipf = 1.0\np_repeat = 0.9\narrivals = 1000\n[grid]\nmemory = [2000]\nhashes = [3]\nsigma_fraction = [0.5]\n".to_string(),
            "synthetic.name",
            "given twice",
        ),
    ];
    for (text, key, value) in cases {
        std::fs::write(d.join("g.toml"), &text).unwrap();
        let out = rbf(d, &["run", "g.toml", "-o", "out", "-q"]);
        assert_eq!(out.status.code(), Some(2), "{text}");
        let e = stderr(&out);
        assert!(e.contains(key) && e.contains(value), "{text}\n{e}");
        assert_eq!(listing(d), ["g.toml"], "{e}");
    }
}

#[test]
fn toml_grid_values_take_the_command_line_spellings() {
    let dir = Scratch::new("safe-spellings");
    let d: &Path = &dir;
    std::fs::write(
        d.join("plain.toml"),
        models_only("", "memory = [10000, 16384]")
            .replace("sigma_fraction = [0.5]", "sigma = [1000, 4096]"),
    )
    .unwrap();
    std::fs::write(
        d.join("spelled.toml"),
        models_only("", "memory = [1e4, \"2^14\"]")
            .replace("sigma_fraction = [0.5]", "sigma = [\"1e3\", \"2^12\"]")
            .replace("hashes = [3]", "hashes = [\"3\"]"),
    )
    .unwrap();
    ok(&rbf(d, &["run", "plain.toml", "-o", "plain", "-q"]));
    ok(&rbf(d, &["run", "spelled.toml", "-o", "spelled", "-q"]));
    assert_eq!(outputs(&d.join("plain")), outputs(&d.join("spelled")));
    // Refused as the flags refuse them, naming what is allowed.
    for (value, said) in [
        ("1.5", "must be a whole number"),
        ("\"2^70\"", "too large"),
        ("-3", "must not be negative"),
        (
            "\"lots\"",
            "expected a whole number such as 1000, 1e6 or 2^20",
        ),
    ] {
        std::fs::write(
            d.join("bad.toml"),
            models_only("", &format!("memory = [{value}]")),
        )
        .unwrap();
        let out = rbf(d, &["run", "bad.toml", "-o", "bad", "-q"]);
        assert_eq!(out.status.code(), Some(2), "{value}");
        assert!(stderr(&out).contains(said), "{value}: {}", stderr(&out));
        assert!(stderr(&out).contains("memory"), "{}", stderr(&out));
    }
}

#[test]
fn report_md_shows_user_text_that_looks_like_html() {
    let dir = Scratch::new("safe-md-escape");
    let d: &Path = &dir;
    std::fs::write(
        d.join("g.toml"),
        models_only(
            "description = \"before <!-- never closed <b>bold</b> FP <= 1e-3\"",
            "memory = [2000]",
        ),
    )
    .unwrap();
    ok(&rbf(d, &["run", "g.toml", "-o", "out", "-q"]));
    let md = std::fs::read_to_string(d.join("out/report.md")).unwrap();
    assert!(!md.contains("<!--") && !md.contains("<b>"), "{md}");
    assert!(
        md.contains("before &lt;!-- never closed &lt;b>bold&lt;/b> FP <= 1e-3"),
        "{md}"
    );
}

/// A run that fails after finishing points (a full disk at the final write) keeps its
/// journal for the rerun; one that fails before any point removes it.
#[test]
fn a_failed_run_keeps_its_journal_only_when_it_holds_points() {
    let dir = Scratch::new("safe-abandon");
    let path = dir.join("m.toml");
    std::fs::write(&path, models_only("", "memory = [2000, 4000]")).unwrap();
    let c = ExperimentConfig::load(&path).expect("config");
    let out = dir.join("out");
    let journal_dir = dir.join(".out.rbf-run");
    let journal = Journal::open(&out, &c, Shard::ALL).expect("journal");
    assert!(journal_dir.exists());
    assert!(!journal.abandon(), "an empty journal is removed");
    assert!(!journal_dir.exists());
    let journal = Journal::open(&out, &c, Shard::ALL).expect("journal");
    let results =
        experiment::run_resumable(&c, RunOptions::default(), Some(&journal)).expect("run");
    assert!(journal.abandon(), "finished points are kept");
    let journal = Journal::open(&out, &c, Shard::ALL).expect("journal again");
    assert_eq!(journal.resumed(), results.rows.len());
    journal.finish().expect("removed");
    assert!(!journal_dir.exists());
}

/// A JEDI log of `lines` requests (keys over 5 000) whose key at line `changed` is
/// another of the same length: every byte but a few in the middle is the same.
fn jedi_log(lines: usize, changed: Option<usize>) -> String {
    (0..lines)
        .map(|i| {
            let key = 10_000 + i % 5000 + if Some(i) == changed { 1 } else { 0 };
            format!("{i},{key},1\n")
        })
        .collect()
}

/// Writes `text` over `path` keeping its modification time, as `cp -p` of a file of the
/// same age would.
fn replace_keeping_time(path: &Path, text: &str) {
    let mtime = std::fs::metadata(path).unwrap().modified().unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
}

/// A config over the one trace `cur.csv`, two grid points.
const CUR_GRID: &str = r#"name = "cur"
seeds = [1]
measures = ["observed", "fp-model"]

[[trace]]
name = "current"
path = "cur.csv"

[grid]
memory = [2048, 4096]
hashes = [3]
sigma_fraction = [0.5]
"#;

/// Shard 0 of a run on `cur.csv`, then `cur.csv` replaced by a trace of the same size
/// whose first and last MiB (and modification time) are the same, then shard 1: the
/// merge is refused naming the file, by the digests of the whole contents.
#[test]
fn merge_refuses_shards_of_a_trace_changed_in_the_middle() {
    let dir = Scratch::new("safe-merge-digest");
    let d: &Path = &dir;
    let lines = 300_000;
    let old = jedi_log(lines, None);
    let new = jedi_log(lines, Some(lines / 2));
    assert_eq!(old.len(), new.len());
    assert!(
        old.len() > 3 << 20,
        "the change must be beyond both ends' MiB"
    );
    let mib = 1 << 20;
    assert_eq!(old[..mib], new[..mib]);
    assert_eq!(old[old.len() - mib..], new[new.len() - mib..]);
    std::fs::write(d.join("cur.csv"), &old).unwrap();
    std::fs::write(d.join("g.toml"), CUR_GRID).unwrap();
    ok(&rbf(
        d,
        &["run", "g.toml", "--shard", "0/2", "-o", "s0", "-q"],
    ));
    replace_keeping_time(&d.join("cur.csv"), &new);
    ok(&rbf(
        d,
        &["run", "g.toml", "--shard", "1/2", "-o", "s1", "-q"],
    ));
    let e = refused_merge(d, &["s0", "s1"]);
    assert!(
        e.contains("input `") && e.contains("cur.csv`: same size, other content"),
        "{e}"
    );
    // The same trace on both sides merges.
    replace_keeping_time(&d.join("cur.csv"), &old);
    ok(&rbf(
        d,
        &["run", "g.toml", "--shard", "1/2", "-o", "s1-old", "-q"],
    ));
    ok(&rbf(d, &["merge", "s0", "s1-old", "-o", "m", "-q"]));
}

/// A run stopped with every point journalled, its trace then replaced by another of the
/// same size and modification time (`cp -p`): the rerun does not resume (it says which
/// file differs and starts afresh), and its results are those of a run on the new trace;
/// unchanged, the journal is resumed.
#[test]
fn a_resume_onto_a_replaced_trace_starts_afresh_naming_it() {
    let dir = Scratch::new("safe-resume-digest");
    let d: &Path = &dir;
    let old = jedi_log(40_000, None);
    let new = jedi_log(40_000, Some(20_000));
    std::fs::write(d.join("cur.csv"), &old).unwrap();
    std::fs::write(d.join("g.toml"), CUR_GRID).unwrap();
    let c = ExperimentConfig::load(&d.join("g.toml")).expect("config");
    let options = RunOptions::default();
    let run = |out: &str| {
        let journal = Journal::open(&d.join(out), &c, Shard::ALL).expect("journal");
        let r = experiment::run_resumable(&c, options, Some(&journal)).expect("run");
        // Stopped here, as by kill -9 after the last point: the journal stays.
        drop(journal);
        r
    };
    let first = run("out");
    replace_keeping_time(&d.join("cur.csv"), &new);
    let journal = Journal::open(&d.join("out"), &c, Shard::ALL).expect("journal again");
    assert_eq!(journal.resumed(), 0, "points of the old trace resumed");
    let why = journal.afresh_because().expect("a reason").to_string();
    assert!(
        why.contains("cur.csv is not the file the interrupted run read"),
        "{why}"
    );
    let second = experiment::run_resumable(&c, options, Some(&journal)).expect("rerun");
    journal.finish().expect("journal removed");
    assert_ne!(
        second.fingerprint, first.fingerprint,
        "the results name the content they came from"
    );
    let fresh = experiment::run(&c, options).expect("fresh run");
    assert_eq!(second, fresh);
    // Unchanged since, the journal is resumed, its results the same.
    let third = run("again");
    let journal = Journal::open(&d.join("again"), &c, Shard::ALL).expect("journal");
    assert_eq!(journal.resumed(), third.rows.len());
    assert!(journal.afresh_because().is_none());
    journal.finish().expect("journal removed");
}
