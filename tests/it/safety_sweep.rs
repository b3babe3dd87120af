//! Hostile numbers everywhere a user can put a number: each numeric
//! flag of every subcommand, each weight of a placement on the command line, each value
//! of an experiment config and each number of a workload file gets in turn 0, 1, -1,
//! 2^32, 2^63, u64::MAX, 1e308, NaN, inf and a 300-digit number, everything else
//! keeping small working values. Every run must end without a panic or an abort, with
//! exit status 0 or 2 (or 1 for a workload file that is not JSON) and within
//! [`DEADLINE`], or, if it is long work the user asked for, have said so on stderr (an
//! estimate or a progress line) by then.
//!
//! The CI test runs the whole sweep on two workers (about 20 s); the ignored test adds
//! more values and writes the counts docs/RELIABILITY.md reports.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::scratch::Scratch;

/// An answer or a message within this time (2 s, plus the time to start a
/// process on a loaded two-core machine, and the first progress line at 2 s).
const DEADLINE: Duration = Duration::from_millis(2600);
/// Time allowed after the first line on stderr for the run to end by itself.
const GRACE: Duration = Duration::from_millis(400);

pub fn hostile_values() -> Vec<String> {
    vec![
        "0".into(),
        "1".into(),
        "-1".into(),
        "4294967296".into(),
        "9223372036854775808".into(),
        "18446744073709551615".into(),
        "1e308".into(),
        "NaN".into(),
        "inf".into(),
        format!("1{}", "0".repeat(299)),
    ]
}

/// More values for the long sweep: negative fractions, tiny and huge reals, spellings.
fn extra_values() -> Vec<String> {
    [
        "-0.1", "0.5", "1e-300", "-inf", "2^40", "1e11", "1.5", "", "abc", "0x10", "1e19",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// A subcommand with working arguments and its numeric flags.
struct Case {
    base: Vec<String>,
    flags: Vec<&'static str>,
}

/// `base` is the command line, split at spaces (the scratch paths have none).
fn case(base: &str, flags: &[&[&'static str]]) -> Case {
    Case {
        base: base.split_whitespace().map(str::to_string).collect(),
        flags: flags.concat(),
    }
}

const FILTER: &[&str] = &[
    "--memory",
    "--hashes",
    "--sigma",
    "--max-inserts",
    "--phases",
    "--seed",
];

const TRACE: &[&str] = &[
    "--prefix-v4",
    "--prefix-v6",
    "--csv-key-column",
    "--csv-time-column",
];

fn cases(dir: &Path) -> Vec<Case> {
    let t = dir.join("t.csv").display().to_string();
    let cfg = dir.join("grid.toml").display().to_string();
    let d = dir.display();
    let filter = "-m 4000 -k 3 --sigma 1200";
    let workload = "--zipf 1 --distinct 100 --p-repeat 0.9";
    vec![
        case(
            &format!("replay {t} {filter}"),
            &[FILTER, TRACE, &["--warmup", "--confidence"]],
        ),
        case(
            &format!("compare {t} {filter}"),
            &[
                FILTER,
                &[
                    "--target-fp",
                    "--warmup",
                    "--window",
                    "--eps",
                    "--confidence",
                ],
            ],
        ),
        case(
            &format!("synth --distinct 100 --p-repeat 0.9 --arrivals 1000 -o {d}/s.csv"),
            &[&["--distinct", "--zipf", "--p-repeat", "--arrivals", "--seed"]],
        ),
        case(&format!("ingest {t} -o {d}/o.rbfs"), &[TRACE]),
        case(
            &format!("fit {t}"),
            &[&["--warmup", "--window", "--pair-cap", "--confidence"]],
        ),
        case(&format!("model fp {filter}"), &[FILTER]),
        case(
            "model capacity --memory 10000 --target-fp 0.01",
            &[&["--memory", "--target-fp", "--max-hashes"]],
        ),
        case(
            &format!("model fn {filter} {workload}"),
            &[FILTER, &["--zipf", "--distinct", "--p-repeat", "--eps"]],
        ),
        case(
            &format!("size {workload} --target-fp 0.01 --memory 4000 --confirm-arrivals 2000"),
            &[&[
                "--zipf",
                "--distinct",
                "--p-repeat",
                "--target-fp",
                "--memory",
                "--max-hashes",
                "--confirm-arrivals",
                "--seed",
                "--eps",
            ]],
        ),
        case(&format!("run {cfg} -o {d}/run-out"), &[&["--threads"]]),
        case(
            "rbf-bench replay --arrivals 1000 --distinct 100 --memory 4096 --repeats 1",
            &[&[
                "--arrivals",
                "--distinct",
                "--zipf",
                "--p-repeat",
                "--memory",
                "--hashes",
                "--sigma",
                "--repeats",
            ]],
        ),
        case(
            "rbf-bench fp --memory 4096 --capacity-memory 4096 --repeats 1",
            &[&[
                "--memory",
                "--hashes",
                "--sigma",
                "--capacity-memory",
                "--target-fp",
                "--max-hashes",
                "--repeats",
            ]],
        ),
        case(
            "rbf-bench fit --arrivals 1000 --distinct 100 --chunk 100",
            &[&[
                "--arrivals",
                "--distinct",
                "--zipf",
                "--p-repeat",
                "--window",
                "--pair-cap",
                "--chunk",
            ]],
        ),
        case(
            "rbf-bench fn --suite scale --distinct 100 --min-log2 8 --max-log2 8 --repeats 1",
            &[&[
                "--repeats",
                "--distinct",
                "--zipf",
                "--min-log2",
                "--max-log2",
                "--max-seconds",
            ]],
        ),
        case(
            "rbf-bench ingest --which jedi --jedi-mb 1 --repeats 1",
            &[&["--jedi-mb", "--rbfs-messages", "--pcap-passes", "--repeats"]],
        ),
        case(
            &format!("rbf-bench experiment {cfg} --runs 1"),
            &[&["--threads", "--runs"]],
        ),
    ]
}

/// The arguments of `case` with `flag` set to `value` (replaced where the base has it).
fn with_value(case: &Case, flag: &str, value: &str) -> Vec<String> {
    let short = match flag {
        "--memory" => Some("-m"),
        "--hashes" => Some("-k"),
        _ => None,
    };
    let mut args = case.base.clone();
    let at = args
        .iter()
        .position(|a| a == flag || Some(a.as_str()) == short);
    match at {
        Some(i) => args[i + 1] = value.to_string(),
        None => {
            // `--sigma` and `--max-inserts` exclude each other: replace, not add.
            if flag == "--max-inserts" {
                if let Some(i) = args.iter().position(|a| a == "--sigma") {
                    args.drain(i..i + 2);
                }
            }
            args.push(flag.to_string());
            args.push(value.to_string());
        }
    }
    args
}

/// What one run did.
#[derive(Debug)]
pub enum Verdict {
    /// Ended in time with 0 or 2 and no panic text.
    Fine,
    /// Still working at the deadline and had said so on stderr (then stopped by us).
    LongWorkAnnounced,
    Bad(String),
}

/// Runs `rbf args`, judging it by the sweep's rule, with the exit statuses that count
/// as an answer.
fn judge_statuses(args: &[String], dir: &Path, statuses: &[i32]) -> Verdict {
    let mut child = crate::cli::spawn(dir, args, Stdio::null());
    let mut stderr = child.stderr.take().expect("stderr");
    let text = Mutex::new(Vec::new());
    let start = Instant::now();
    let status: Result<Option<std::process::ExitStatus>, String> = std::thread::scope(|s| {
        s.spawn(|| {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf) {
                if n == 0 {
                    break;
                }
                text.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        let mut said_at: Option<Instant> = None;
        loop {
            if let Some(st) = child.try_wait().expect("wait") {
                break Ok(Some(st));
            }
            // Long work that has said so (an estimate, a progress line) has answered;
            // a grace period lets a message that precedes a quick exit be judged by it.
            if said_at.is_none() && !text.lock().unwrap().is_empty() {
                said_at = Some(Instant::now());
            }
            if said_at.is_some_and(|t| t.elapsed() > GRACE) || start.elapsed() > DEADLINE {
                let said = said_at.is_some();
                let _ = child.kill();
                let _ = child.wait();
                if said {
                    break Ok(None);
                }
                break Err(format!("no answer and no message within {DEADLINE:?}"));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    let status = match status {
        Ok(s) => s,
        Err(why) => return Verdict::Bad(why),
    };
    let err = String::from_utf8_lossy(&text.lock().unwrap()).into_owned();
    if err.contains("panicked") || err.contains("RUST_BACKTRACE") {
        return Verdict::Bad(format!("panic: {}", err.lines().next().unwrap_or("")));
    }
    match status {
        None => Verdict::LongWorkAnnounced,
        Some(st) => match st.code() {
            Some(c) if statuses.contains(&c) => Verdict::Fine,
            code => Verdict::Bad(format!(
                "exit status {code:?} (signal: {}): {}",
                !st.success() && code.is_none(),
                err.lines().last().unwrap_or("")
            )),
        },
    }
}

/// Small inputs the cases read.
fn prepare(dir: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_rbf"))
        .args([
            "synth",
            "--distinct",
            "200",
            "--p-repeat",
            "0.9",
            "--arrivals",
            "5000",
            "-o",
            dir.join("t.csv").to_str().unwrap(),
        ])
        .output()
        .expect("synth");
    assert!(out.status.success());
    std::fs::write(
        dir.join("grid.toml"),
        "name = \"sweep\"\nmeasures = [\"observed\", \"fp-model\"]\n[[synthetic]]\ndistinct = 100\nzipf = 1.0\np_repeat = 0.9\narrivals = 2000\n[grid]\nmemory = [2000]\nhashes = [3]\nsigma_fraction = [0.5]\n",
    )
    .expect("config");
}

/// What a hostile value is put into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    Flags,
    Weights,
    Configs,
    Workloads,
}

/// One run of the sweep: the command line, a file it reads (name, text; written just
/// before the run when `write`, else before the sweep), and the exit statuses that
/// count as an answer.
struct Job {
    group: Group,
    args: Vec<String>,
    file: Option<(String, String)>,
    write: bool,
    statuses: &'static [i32],
}

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_string).collect()
}

/// Placement weights on the command line: `segments:V,1`, `segments:V,V` and an
/// explicit `V,1,1`, for the models, the generator and the sizer.
fn weight_jobs(values: &[String]) -> Vec<Job> {
    let model = "model fn -m 4000 -k 3 --sigma 1200 --zipf 1 --p-repeat 0.9";
    let mut jobs = Vec::new();
    for (i, v) in values.iter().enumerate() {
        for (j, placement) in [
            format!("segments:{v},1"),
            format!("segments:{v},{v}"),
            format!("{v},1,1"),
        ]
        .into_iter()
        .enumerate()
        {
            let distinct = if j == 2 { "3" } else { "100" };
            let mut lines = vec![
                format!("{model} --distinct {distinct}"),
                format!(
                    "synth --distinct {distinct} --p-repeat 0.9 --arrivals 1000 -o w{i}-{j}.csv"
                ),
            ];
            if j < 2 {
                lines.push(
                    "size --zipf 1 --distinct 100 --p-repeat 0.9 --target-fp 0.01 --memory 4000 --confirm-arrivals 2000"
                        .to_string(),
                );
            }
            for line in lines {
                let mut args = words(&line);
                // The weights are one argument even when empty or spaced.
                args.extend(["--placement".to_string(), placement.clone()]);
                jobs.push(Job {
                    group: Group::Weights,
                    args,
                    file: None,
                    write: false,
                    statuses: &[0, 2],
                });
            }
        }
    }
    jobs
}

/// A hostile value as TOML writes it: numbers as numbers (NaN and infinities as TOML
/// spells them), anything else as a string.
fn toml_value(v: &str) -> String {
    match v {
        "NaN" => "nan".into(),
        "inf" | "-inf" => v.into(),
        _ if v.parse::<f64>().is_ok() || v.starts_with("0x") => v.into(),
        _ => format!("{v:?}"),
    }
}

/// (table, key, working value) of every value of an experiment config the sweep sets.
const CONFIG_KEYS: &[(&str, &str, &str)] = &[
    ("", "seeds", "[1]"),
    ("", "eps", "1e-10"),
    ("", "confidence", "0.99"),
    ("", "renewal_tolerance", "1e-3"),
    ("synthetic", "distinct", "100"),
    ("synthetic", "zipf", "1.0"),
    ("synthetic", "p_repeat", "0.9"),
    ("synthetic", "arrivals", "2000"),
    ("synthetic", "warmup", "200"),
    ("synthetic", "fit_window", "500"),
    ("synthetic", "placement", "\"segments:V,1\""),
    ("grid", "memory", "[2000]"),
    ("grid", "hashes", "[3]"),
    ("grid", "sigma_fraction", "[0.5]"),
    ("grid", "sigma", "[800]"),
    ("grid", "target_fp", "[0.05]"),
    ("grid", "max_inserts", "[300]"),
    ("grid", "phases", "[1]"),
    ("grid", "bits_per_distinct", "[20]"),
];

/// An experiment config whose `key` (in `table`) is `value` (TOML), all else working.
fn config_text(table: &str, key: &str, value: &str) -> String {
    let mut sections: Vec<(&str, Vec<String>)> = vec![
        (
            "",
            vec![
                "name = \"sweep\"".into(),
                "measures = [\"observed\", \"fp-model\", \"renewal\", \"drop-pins\"]".into(),
            ],
        ),
        ("[[synthetic]]", Vec::new()),
        ("[grid]", Vec::new()),
    ];
    // One sigma rule and one memory rule: the key under test replaces its rivals.
    let sigma_rules = ["sigma_fraction", "sigma", "target_fp", "max_inserts"];
    let memory_rules = ["memory", "bits_per_distinct"];
    for &(t, k, working) in CONFIG_KEYS {
        let chosen = if sigma_rules.contains(&k) {
            k == if sigma_rules.contains(&key) {
                key
            } else {
                "sigma_fraction"
            }
        } else if memory_rules.contains(&k) {
            k == if memory_rules.contains(&key) {
                key
            } else {
                "memory"
            }
        } else {
            !(k == "renewal_tolerance" && key != k)
        };
        if !chosen {
            continue;
        }
        let text = if (t, k) == (table, key) {
            value.to_string()
        } else {
            working.replace('V', "1")
        };
        let at = match t {
            "" => 0,
            "synthetic" => 1,
            _ => 2,
        };
        sections[at].1.push(format!("{k} = {text}"));
    }
    let mut out = String::new();
    for (head, lines) in sections {
        if !head.is_empty() {
            out.push_str(head);
            out.push('\n');
        }
        for l in lines {
            out.push_str(&l);
            out.push('\n');
        }
    }
    out
}

/// Every config value with every hostile value, read by `rbf run`.
fn config_jobs(values: &[String]) -> Vec<Job> {
    let mut jobs = Vec::new();
    for (i, v) in values.iter().enumerate() {
        for (j, &(table, key, working)) in CONFIG_KEYS.iter().enumerate() {
            let t = toml_value(v);
            let value = if key == "placement" {
                format!("\"segments:{v},1\"")
            } else if working.starts_with('[') {
                format!("[{t}]")
            } else {
                t
            };
            let name = format!("cfg{i}-{j}.toml");
            jobs.push(Job {
                group: Group::Configs,
                args: words(&format!("run {name} -o cout{i}-{j}")),
                file: Some((name, config_text(table, key, &value))),
                write: true,
                statuses: &[0, 2],
            });
        }
    }
    jobs
}

/// A hostile value as JSON writes it: numbers as numbers, NaN and infinities bare
/// (not JSON: the reader must say so), anything else as a string.
fn json_value(v: &str) -> String {
    let number = !v.is_empty()
        && v.bytes()
            .all(|b| b.is_ascii_digit() || b"-+.eE".contains(&b))
        && v.parse::<f64>().is_ok();
    match v {
        "NaN" | "inf" | "-inf" => v.into(),
        _ if number => v.into(),
        _ => format!("{v:?}"),
    }
}

/// The numbers of a workload file the sweep sets, with their working values: the
/// first entries of an explicit popularity and placement, p_r, a knot and a survival
/// value of a reuse profile, and a Zipf popularity's D and alpha.
const WORKLOAD_NUMBERS: [&str; 7] = ["0.5", "0.9", "1", "10", "0.5", "100", "1"];

/// A workload file whose number `field` (of [`WORKLOAD_NUMBERS`]) is `x` (JSON).
fn workload_text(field: usize, x: &str) -> String {
    let mut n = WORKLOAD_NUMBERS;
    n[field] = x;
    if field < 5 {
        format!(
            r#"{{"format": "rbf-workload/1", "popularity": {{"explicit": [{}, 0.3, 0.2]}}, "p_repeat": {},
  "placement": {{"explicit": [{}, 1, 1]}},
  "reuse": {{"n": [0, {}, 20], "survival": [1, {}, 0.1], "between": "step"}}}}"#,
            n[0], n[1], n[2], n[3], n[4]
        )
    } else {
        format!(
            r#"{{"format": "rbf-workload/1", "popularity": {{"zipf": {{"distinct": {}, "alpha": {}}}}}, "p_repeat": 0.9, "placement": "uniform"}}"#,
            n[5], n[6]
        )
    }
}

/// The models, the generator and the sizer reading workload file `name`.
fn workload_readers(name: &str, out: &str) -> [String; 3] {
    [
        format!("model fn --workload {name} -m 4000 -k 3 --sigma 1200"),
        format!("synth --workload {name} --arrivals 1000 -o {out}"),
        format!("size --workload {name} --target-fp 0.01 --memory 4000 --confirm-arrivals 2000"),
    ]
}

/// Every number of a workload file with every hostile value, read by the models, the
/// generator and the sizer.
fn workload_jobs(values: &[String]) -> Vec<Job> {
    let mut jobs = Vec::new();
    for (i, v) in values.iter().enumerate() {
        let x = json_value(v);
        for j in 0..WORKLOAD_NUMBERS.len() {
            let name = format!("w{i}-{j}.json");
            let text = workload_text(j, &x);
            for line in workload_readers(&name, &format!("ws{i}-{j}.csv")) {
                jobs.push(Job {
                    group: Group::Workloads,
                    args: words(&line),
                    // Three jobs read each file: it is written before the sweep.
                    file: Some((name.clone(), text.clone())),
                    write: false,
                    statuses: &[0, 1, 2],
                });
            }
        }
    }
    jobs
}

/// Counts of one sweep.
#[derive(Debug, Default)]
pub struct Tally {
    pub runs: usize,
    pub fine: usize,
    pub announced: usize,
    pub bad: Vec<String>,
    /// Runs per group, in the order of [`Group`].
    pub per_group: [usize; 4],
}

fn sweep(values: &[String], workers: usize) -> Tally {
    let dir = Scratch::new("sweep");
    prepare(&dir);
    let cases = cases(&dir);
    let mut jobs: Vec<Job> = cases
        .iter()
        .flat_map(|c| {
            c.flags.iter().flat_map(move |f| {
                values.iter().map(move |v| Job {
                    group: Group::Flags,
                    args: with_value(c, f, v),
                    file: None,
                    write: false,
                    statuses: &[0, 2],
                })
            })
        })
        .collect();
    jobs.extend(weight_jobs(values));
    jobs.extend(config_jobs(values));
    for job in workload_jobs(values) {
        if let Some((name, text)) = &job.file {
            std::fs::write(dir.join(name), text).expect("workload file");
        }
        jobs.push(job);
    }
    let next = AtomicUsize::new(0);
    let tally = Mutex::new(Tally::default());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                if let (Some((name, text)), true) = (&job.file, job.write) {
                    std::fs::write(dir.join(name), text).expect("input file");
                }
                let v = judge_statuses(&job.args, &dir, job.statuses);
                let mut t = tally.lock().unwrap();
                t.runs += 1;
                t.per_group[job.group as usize] += 1;
                match v {
                    Verdict::Fine => t.fine += 1,
                    Verdict::LongWorkAnnounced => t.announced += 1,
                    Verdict::Bad(why) => {
                        let file = job
                            .file
                            .as_ref()
                            .map_or(String::new(), |(n, text)| format!("\n  {n}:\n{text}"));
                        t.bad
                            .push(format!("rbf {}: {why}{file}", job.args.join(" ")))
                    }
                }
            });
        }
    });
    tally.into_inner().unwrap()
}

/// The sweep's templates work as they are: a hostile value is the only thing wrong in
/// each run.
#[test]
fn the_sweep_templates_run() {
    let dir = Scratch::new("sweep-templates");
    prepare(&dir);
    let ok = |args: &[String]| {
        let (bin, rest) = crate::cli::program(args);
        let out = Command::new(bin)
            .args(rest)
            .current_dir(&*dir)
            .stdin(Stdio::null())
            .output()
            .expect("rbf");
        assert!(
            out.status.success(),
            "rbf {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let working = vec!["1".to_string()];
    for (table, key, _) in CONFIG_KEYS {
        let value = match *key {
            "placement" => "\"uniform\"".to_string(),
            "renewal_tolerance" => "1e-3".to_string(),
            "seeds" | "memory" | "hashes" | "phases" => "[2]".to_string(),
            "sigma_fraction" => "[0.5]".to_string(),
            "target_fp" => "[0.05]".to_string(),
            "sigma" | "max_inserts" => "[300]".to_string(),
            "bits_per_distinct" => "[20]".to_string(),
            "eps" => "1e-10".to_string(),
            "confidence" => "0.9".to_string(),
            "zipf" => "1.0".to_string(),
            "p_repeat" => "0.5".to_string(),
            _ => "1000".to_string(),
        };
        let value = if *key == "memory" {
            "[2000]".into()
        } else {
            value
        };
        let value = if *key == "hashes" {
            "[3]".into()
        } else {
            value
        };
        let value = if *key == "phases" {
            "[1]".into()
        } else {
            value
        };
        std::fs::write(dir.join("t.toml"), config_text(table, key, &value)).unwrap();
        ok(&words("run t.toml -o out -q"));
    }
    for job in weight_jobs(&working) {
        ok(&job.args);
    }
    for (j, x) in WORKLOAD_NUMBERS.iter().enumerate() {
        std::fs::write(dir.join("w.json"), workload_text(j, x)).unwrap();
        for line in workload_readers("w.json", "w.csv") {
            ok(&words(&line));
        }
    }
}

#[test]
fn hostile_numbers_on_every_flag_end_cleanly() {
    let t = sweep(&hostile_values(), 2);
    println!(
        "hostile-number sweep (CI): {} runs ({} flags, {} weights, {} configs, {} workload files), {} long runs announced",
        t.runs, t.per_group[0], t.per_group[1], t.per_group[2], t.per_group[3], t.announced
    );
    assert!(t.runs > 1400, "the sweep ran only {} cases", t.runs);
    assert!(t.per_group.iter().all(|&n| n >= 80), "{:?}", t.per_group);
    assert!(
        t.bad.is_empty(),
        "{} of {} runs misbehaved:\n{}",
        t.bad.len(),
        t.runs,
        t.bad.join("\n")
    );
}

/// The long sweep behind docs/RELIABILITY.md: `cargo test --release -- --ignored
/// long_hostile_number_sweep --nocapture`.
#[test]
#[ignore]
fn long_hostile_number_sweep() {
    let mut values = hostile_values();
    values.extend(extra_values());
    let t = sweep(&values, 2);
    println!(
        "hostile-number sweep: {} runs ({} flags, {} weights, {} configs, {} workload files), {} answered or refused in time, {} long runs announced, {} bad",
        t.runs,
        t.per_group[0],
        t.per_group[1],
        t.per_group[2],
        t.per_group[3],
        t.fine,
        t.announced,
        t.bad.len()
    );
    assert!(t.bad.is_empty(), "{}", t.bad.join("\n"));
}
