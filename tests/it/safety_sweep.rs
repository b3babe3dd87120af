//! Hostile numbers on every numeric flag of every subcommand (issue 24): each flag in
//! turn gets 0, 1, -1, 2^32, 2^63, u64::MAX, 1e308, NaN, inf and a 300-digit number,
//! the other flags keeping small working values. Every run must end without a panic or
//! an abort, with exit status 0 or 2 and within [`DEADLINE`], or, if it is long work
//! the user asked for, have said so on stderr (an estimate or a progress line) by then.
//!
//! The CI test runs the whole sweep on two workers (a few seconds); the ignored test
//! adds more values and writes the counts docs/RELIABILITY.md reports.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::scratch::Scratch;

/// An answer or a message within this time (the 2 s, plus the time to start a
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
            "bench replay --arrivals 1000 --distinct 100 --memory 4096 --repeats 1",
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
            "bench fp --memory 4096 --capacity-memory 4096 --repeats 1",
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
            "bench fit --arrivals 1000 --distinct 100 --chunk 100",
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
            "bench fn --suite scale --distinct 100 --min-log2 8 --max-log2 8 --repeats 1",
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
            "bench ingest --which jedi --jedi-mb 1 --repeats 1",
            &[&["--jedi-mb", "--rbfs-messages", "--pcap-passes", "--repeats"]],
        ),
        case(
            &format!("bench experiment {cfg} --runs 1"),
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

/// Runs `rbf args`, judging it by the sweep's rule.
pub fn judge(args: &[String], dir: &Path) -> Verdict {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rbf"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rbf starts");
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
            Some(0) | Some(2) => Verdict::Fine,
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

/// Counts of one sweep.
#[derive(Debug, Default)]
pub struct Tally {
    pub runs: usize,
    pub fine: usize,
    pub announced: usize,
    pub bad: Vec<String>,
}

fn sweep(values: &[String], workers: usize) -> Tally {
    let dir = Scratch::new("sweep");
    prepare(&dir);
    let cases = cases(&dir);
    let jobs: Vec<Vec<String>> = cases
        .iter()
        .flat_map(|c| {
            c.flags
                .iter()
                .flat_map(move |f| values.iter().map(move |v| with_value(c, f, v)))
        })
        .collect();
    let next = AtomicUsize::new(0);
    let tally = Mutex::new(Tally::default());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(args) = jobs.get(i) else { break };
                let v = judge(args, &dir);
                let mut t = tally.lock().unwrap();
                t.runs += 1;
                match v {
                    Verdict::Fine => t.fine += 1,
                    Verdict::LongWorkAnnounced => t.announced += 1,
                    Verdict::Bad(why) => t.bad.push(format!("rbf {}: {why}", args.join(" "))),
                }
            });
        }
    });
    tally.into_inner().unwrap()
}

#[test]
fn hostile_numbers_on_every_flag_end_cleanly() {
    let t = sweep(&hostile_values(), 2);
    assert!(t.runs > 500, "the sweep ran only {} cases", t.runs);
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
        "hostile-number sweep: {} runs, {} answered or refused in time, {} long runs announced, {} bad",
        t.runs,
        t.fine,
        t.announced,
        t.bad.len()
    );
    assert!(t.bad.is_empty(), "{}", t.bad.join("\n"));
}
