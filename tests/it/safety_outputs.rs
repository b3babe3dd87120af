//! A user's files are sacred: outputs never overwrite an input, appear only
//! whole, survive kill -9 and Ctrl-C unchanged, and bad output paths fail before any
//! work; `-` is stdout; a closed pipe ends rbf quietly.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::cli::{ok, rbf, stderr};
use crate::scratch::Scratch;

fn synth(dir: &Path, name: &str, arrivals: &str) -> PathBuf {
    let out = rbf(
        dir,
        &[
            "synth",
            "--distinct",
            "300",
            "--p-repeat",
            "0.9",
            "--arrivals",
            arrivals,
            "-o",
            name,
        ],
    );
    ok(&out);
    dir.join(name)
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

#[test]
fn an_input_is_never_an_output() {
    let dir = Scratch::new("safe-inputs");
    let trace = synth(&dir, "t.csv", "2000");
    let before = std::fs::read(&trace).unwrap();
    std::os::unix::fs::symlink("t.csv", dir.join("link.csv")).unwrap();
    std::fs::hard_link(&trace, dir.join("hard.csv")).unwrap();
    for target in ["t.csv", "./t.csv", "link.csv", "hard.csv"] {
        for args in [
            vec!["ingest", "t.csv", "-o", target],
            vec!["fit", "t.csv", "-o", target],
            vec!["fit", "t.csv", "--table", target],
        ] {
            // fit --table needs a .csv name: the links above all end in .csv.
            let out = rbf(&dir, &args);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
            assert!(stderr(&out).contains("is the input"), "{}", stderr(&out));
        }
    }
    assert_eq!(std::fs::read(&trace).unwrap(), before, "the input changed");
    // synth's input is its workload file.
    ok(&rbf(&dir, &["fit", "t.csv", "-o", "w.json"]));
    let out = rbf(
        &dir,
        &[
            "synth",
            "--workload",
            "w.json",
            "--arrivals",
            "10",
            "-o",
            "w.json",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // Two outputs on stdout cannot both be read.
    let out = rbf(&dir, &["fit", "t.csv", "-o", "-", "--table", "-"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn bad_output_paths_fail_before_any_work() {
    let dir = Scratch::new("safe-paths");
    synth(&dir, "t.csv", "2000");
    // A billion arrivals would take minutes: the missing directory is found first.
    let start = Instant::now();
    for args in [
        vec![
            "synth",
            "--distinct",
            "10",
            "--p-repeat",
            "0.5",
            "--arrivals",
            "1e9",
            "-o",
            "no/such/dir/x.csv",
        ],
        vec!["ingest", "t.csv", "-o", "no/such/dir/x.rbfs"],
        vec!["fit", "t.csv", "--table", "no/such/dir/x.csv"],
    ] {
        let out = rbf(&dir, &args);
        assert!(!out.status.success(), "{args:?}");
        assert!(stderr(&out).contains("does not exist"), "{}", stderr(&out));
    }
    assert!(start.elapsed() < Duration::from_secs(5));
    // An output that is a directory is refused by name.
    std::fs::create_dir(dir.join("d")).unwrap();
    let out = rbf(&dir, &["ingest", "t.csv", "-o", "d"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is a directory"), "{}", stderr(&out));
    // A full disk is an I/O error naming the output (fault injection with /dev/full).
    let out = rbf(&dir, &["ingest", "t.csv", "-o", "/dev/full"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("/dev/full"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    // Writing to a device is writing in place, not replacing it.
    ok(&rbf(&dir, &["ingest", "t.csv", "-o", "/dev/null"]));
    use std::os::unix::fs::FileTypeExt;
    assert!(Path::new("/dev/null")
        .metadata()
        .unwrap()
        .file_type()
        .is_char_device());
}

#[test]
fn dash_is_stdout_and_the_stream_reads_back() {
    let dir = Scratch::new("safe-stdout");
    synth(&dir, "t.csv", "3000");
    let piped = rbf(&dir, &["ingest", "t.csv", "-o", "-"]);
    ok(&piped);
    assert!(piped.stdout.starts_with(b"RBFS"));
    // The summary went to stderr, not into the stream.
    assert!(stderr(&piped).contains("message(s)"), "{}", stderr(&piped));
    std::fs::write(dir.join("piped.rbfs"), &piped.stdout).unwrap();
    ok(&rbf(&dir, &["ingest", "t.csv", "-o", "file.rbfs"]));
    let replay = |name: &str| {
        let out = rbf(
            &dir,
            &[
                "replay", name, "-m", "3000", "-k", "3", "--sigma", "900", "--json",
            ],
        );
        ok(&out);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(v["ingest"]["damage"].is_null(), "{name}: {}", v["ingest"]);
        (v["arrivals"].clone(), v["false_negatives"].clone())
    };
    assert_eq!(replay("piped.rbfs"), replay("file.rbfs"));
    // Tables and workloads on stdout.
    let table = rbf(&dir, &["fit", "t.csv", "--table", "-"]);
    ok(&table);
    assert!(table.stdout.starts_with(b"rank,q,zeta\n"));
    let log = rbf(
        &dir,
        &[
            "synth",
            "--distinct",
            "5",
            "--p-repeat",
            "0.5",
            "--arrivals",
            "3",
            "-o",
            "-",
        ],
    );
    ok(&log);
    assert_eq!(log.stdout.iter().filter(|b| **b == b'\n').count(), 8);
    // A directory of outputs cannot go to stdout.
    let out = rbf(&dir, &["merge", "x", "-o", "-"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let dir = Scratch::new("safe-pipe");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rbf"))
        .args([
            "synth",
            "--distinct",
            "100",
            "--p-repeat",
            "0.5",
            "--arrivals",
            "5000000",
            "-o",
            "-",
        ])
        .current_dir(&*dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0u8; 100];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut head)
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    use std::os::unix::process::ExitStatusExt;
    // Like coreutils: killed by SIGPIPE (141 in a shell) or a clean 0; never a panic.
    assert!(
        out.status.signal() == Some(13) || out.status.code() == Some(0),
        "{:?}",
        out.status
    );
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
}

/// Starts `rbf args` and kills it with SIGKILL after `after`.
fn kill_after(dir: &Path, args: &[&str], after: Duration) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rbf"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    let _ = child.kill();
    let _ = child.wait();
}

/// Starts `rbf args`, presses Ctrl-C (SIGINT) after `after`, and waits for it.
fn interrupt_after(dir: &Path, args: &[&str], after: Duration) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_rbf"))
        .args(args)
        .current_dir(dir)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    child.wait_with_output().unwrap()
}

/// A synthetic trace that takes many seconds to write.
const BIG_SYNTH: [&str; 9] = [
    "synth",
    "--distinct",
    "1000",
    "--p-repeat",
    "0.9",
    "--arrivals",
    "1e8",
    "-o",
    "big.csv",
];

#[test]
fn killed_writers_leave_the_old_file() {
    let dir = Scratch::new("safe-kill");
    let old = b"the user's previous results\n";
    std::fs::write(dir.join("big.csv"), old).unwrap();
    std::fs::write(dir.join("big.rbfs"), old).unwrap();
    synth(&dir, "t.csv", "300000");
    for ms in [30, 120] {
        kill_after(&dir, &BIG_SYNTH, Duration::from_millis(ms));
        assert_eq!(std::fs::read(dir.join("big.csv")).unwrap(), old);
        kill_after(
            &dir,
            &["ingest", "t.csv", "-o", "big.rbfs"],
            Duration::from_millis(ms / 6),
        );
        assert_eq!(std::fs::read(dir.join("big.rbfs")).unwrap(), old);
    }
    // Ctrl-C: the generator stops and removes its temporary file.
    let out = interrupt_after(&dir, &BIG_SYNTH, Duration::from_millis(200));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert_eq!(std::fs::read(dir.join("big.csv")).unwrap(), old);
    // kill -9 leaves temporary files (nothing can remove them then); the next write
    // of the same output removes those of dead processes.
    synth(&dir, "big.csv", "10");
    ok(&rbf(&dir, &["ingest", "t.csv", "-o", "big.rbfs"]));
    let left: Vec<String> = listing(&dir)
        .into_iter()
        .filter(|n| n.starts_with(".big."))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

const GRID: &str = r#"name = "resume"
seeds = [1, 2]
measures = ["observed", "fp-model", "drop-pins"]

[[synthetic]]
distinct = 400
zipf = 1.0
p_repeat = 0.9
arrivals = 40000

[grid]
memory = [3000, 5000, 8000]
hashes = [2, 3, 4]
sigma_fraction = [0.3, 0.5]
phases = [1, 2]
"#;

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

/// kill -9 at `kills` pseudo-random moments, each followed by a rerun that is killed
/// in turn, then a final complete rerun: its outputs must equal an uninterrupted run's.
/// `kills` are fractions (per mille) of an uninterrupted run's wall time, so that the
/// kills land from start-up to the final exchange whatever the machine's speed.
fn resume_after_kills(tag: &str, kills: &[u64]) {
    let scratch = Scratch::new(tag);
    let dir: &Path = &scratch;
    std::fs::write(dir.join("grid.toml"), GRID).unwrap();
    let t = Instant::now();
    ok(&rbf(dir, &["run", "grid.toml", "-o", "whole", "-q"]));
    let wall = t.elapsed().as_millis() as u64;
    let kills: Vec<u64> = kills.iter().map(|k| 5 + k * wall / 1000).collect();
    let whole = outputs(&dir.join("whole"));
    // The old outputs in `part` are replaced only at the very end.
    ok(&rbf(dir, &["run", "grid.toml", "-o", "part", "-q"]));
    std::fs::write(dir.join("part/results.csv"), "stale\n").unwrap();
    let mut resumable = 0;
    for &ms in &kills {
        if dir.join(".part.rbf-run/cells.jsonl").exists() {
            resumable += 1;
        }
        kill_after(
            dir,
            &["run", "grid.toml", "-o", "part", "-q"],
            Duration::from_millis(ms),
        );
        let now = outputs(&dir.join("part"));
        let stale = now
            .iter()
            .any(|(n, b)| n == "results.csv" && b == b"stale\n");
        // Either still the old directory, or (killed after the swap) the new one.
        assert!(
            stale || now == whole,
            "after a kill at {ms} ms: a mix of old and new outputs"
        );
    }
    // Ctrl-C: the run stops between points or refuses its outputs whole (a signal
    // during the final writes), says how to resume, exit status 130. The moments run
    // from the grid to the writes, which a fixed delay once missed and once hit.
    for per_mille in [250, 700, 900, 960, 990] {
        let stopped = interrupt_after(
            dir,
            &["run", "grid.toml", "-o", "part", "-q"],
            Duration::from_millis(5 + per_mille * wall / 1000),
        );
        if stopped.status.code() == Some(130) {
            assert!(stderr(&stopped).contains("resume"), "{}", stderr(&stopped));
        } else {
            ok(&stopped); // it had finished before the signal
        }
        let now = outputs(&dir.join("part"));
        let stale = now
            .iter()
            .any(|(n, b)| n == "results.csv" && b == b"stale\n");
        assert!(stale || now == whole, "after Ctrl-C: a mix of old and new");
    }
    let out = rbf(dir, &["run", "grid.toml", "-o", "part"]);
    ok(&out);
    assert_eq!(outputs(&dir.join("part")), whole, "resumed run differs");
    println!(
        "{} kills; {resumable} reruns started from a journal; final outputs identical",
        kills.len()
    );
    assert!(
        !dir.join(".part.rbf-run").exists(),
        "the journal is removed at the end"
    );
    let hidden: Vec<String> = listing(dir)
        .into_iter()
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(hidden.is_empty(), "left behind: {hidden:?}");
}

#[test]
fn run_resumes_after_kill_9_with_identical_outputs() {
    resume_after_kills("safe-resume", &[200, 500, 800]);
}

/// `cargo test --release -- --ignored run_resume_kill_storm`: 40 kills spread over
/// start-up, the grid and the final writes.
#[test]
#[ignore]
fn run_resume_kill_storm() {
    // A fixed pseudo-random schedule (xorshift), from early start-up to the end.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let kills: Vec<u64> = (0..40)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % 1100
        })
        .collect();
    resume_after_kills("safe-storm", &kills);
}

#[test]
fn run_output_directories_are_checked_first() {
    let dir = Scratch::new("safe-rundir");
    std::fs::write(dir.join("grid.toml"), GRID).unwrap();
    // A directory holding the user's own files is not replaced.
    std::fs::create_dir(dir.join("mine")).unwrap();
    std::fs::write(dir.join("mine/notes.txt"), "mine").unwrap();
    let out = rbf(&dir, &["run", "grid.toml", "-o", "mine"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("notes.txt"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(dir.join("mine/notes.txt")).unwrap(),
        "mine"
    );
    // Nor the directory holding the config (an input).
    let out = rbf(&dir, &["run", "grid.toml", "-o", "."]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // Nor a shard merged onto itself.
    ok(&rbf(
        &dir,
        &["run", "grid.toml", "-o", "s0", "--shard", "0/1", "-q"],
    ));
    let out = rbf(&dir, &["merge", "s0", "-o", "s0"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(dir.join("s0/results.json").exists());
    // A parent that cannot be created (under a file) fails at once.
    let out = rbf(&dir, &["run", "grid.toml", "-o", "grid.toml/sub/out"]);
    assert!(stderr(&out).contains("cannot create"), "{}", stderr(&out));
    // Two runs into one directory: the second is refused while the first works.
    let first = Command::new(env!("CARGO_BIN_EXE_rbf"))
        .args(["run", "grid.toml", "-o", "busy", "-q"])
        .current_dir(&*dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lock = dir.join(".busy.rbf-run/lock");
    let start = Instant::now();
    while !lock.exists() && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let second = rbf(&dir, &["run", "grid.toml", "-o", "busy", "-q"]);
    let first = first.wait_with_output().unwrap();
    assert!(first.status.success());
    if !second.status.success() {
        assert!(
            stderr(&second).contains("another rbf run"),
            "{}",
            stderr(&second)
        );
    } // (else the first had finished before the second started)
      // More threads than cores are capped with a note.
    let out = rbf(
        &dir,
        &["run", "grid.toml", "-o", "t", "--threads", "100000"],
    );
    ok(&out);
    assert!(stderr(&out).contains("using"), "{}", stderr(&out));
}

/// Whether some process holds a lock on `path`, read from /proc/locks (taking a lock
/// to test it could make the run's own flock fail).
fn is_locked(path: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(m) = std::fs::metadata(path) else {
        return false;
    };
    let inode = format!(":{} ", m.ino());
    std::fs::read_to_string("/proc/locks").is_ok_and(|locks| {
        locks
            .lines()
            .any(|l| l.contains("FLOCK") && l.contains(&inode))
    })
}

/// A run into a symlink to a directory another run is writing is refused (before,
/// both ran, each with its own journal, and the last one won). The first run is
/// stopped (SIGSTOP) while it holds its lock, so the test does not race it.
#[test]
fn a_second_run_through_a_symlink_is_refused() {
    let dir = Scratch::new("safe-symlink-lock");
    std::fs::write(dir.join("grid.toml"), GRID).unwrap();
    std::fs::create_dir(dir.join("out")).unwrap();
    std::os::unix::fs::symlink("x", dir.join("out/xlink")).unwrap();
    let first = Command::new(env!("CARGO_BIN_EXE_rbf"))
        .args(["run", "grid.toml", "-o", "out/x", "-q"])
        .current_dir(&*dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lock = dir.join("out/.x.rbf-run/lock");
    // The lock file appears just before it is locked: stopping the run in between (a
    // loaded machine) would leave it unlocked, so wait until it is held.
    let start = Instant::now();
    while !is_locked(&lock) && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(2));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(first.id() as i32, libc::SIGSTOP) };
    for other in ["out/xlink", "out/../out/x", "./out/x"] {
        let second = rbf(&dir, &["run", "grid.toml", "-o", other, "-q"]);
        assert_eq!(
            second.status.code(),
            Some(2),
            "{other}: {}",
            stderr(&second)
        );
        assert!(
            stderr(&second).contains("another rbf run"),
            "{other}: {}",
            stderr(&second)
        );
    }
    unsafe { libc::kill(first.id() as i32, libc::SIGCONT) };
    let first = first.wait_with_output().unwrap();
    assert!(first.status.success());
    assert!(dir.join("out/x/results.csv").exists());
    assert!(
        std::fs::symlink_metadata(dir.join("out/xlink"))
            .unwrap()
            .file_type()
            .is_symlink(),
        "the symlink was replaced"
    );
}

/// A FIFO as a config's trace is refused at once: `rbf run` reads each trace several
/// times, and the second read of a FIFO used to block forever, silently.
#[test]
fn a_fifo_trace_in_a_config_is_refused_at_once() {
    let dir = Scratch::new("safe-fifo");
    let fifo = dir.join("trace.fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    std::fs::write(
        dir.join("fifo.toml"),
        "name = \"f\"\n[[trace]]\npath = \"trace.fifo\"\n[grid]\nmemory = [2000]\nhashes = [3]\nsigma_fraction = [0.5]\n",
    )
    .unwrap();
    let start = Instant::now();
    let out = rbf(&dir, &["run", "fifo.toml", "-o", "out"]);
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("FIFO") && err.contains("rbf ingest"), "{err}");
    // A character device is no better (it could be /dev/stdin).
    std::fs::write(
        dir.join("dev.toml"),
        "name = \"d\"\n[[trace]]\npath = \"/dev/zero\"\n[grid]\nmemory = [2000]\nhashes = [3]\nsigma_fraction = [0.5]\n",
    )
    .unwrap();
    let out = rbf(&dir, &["run", "dev.toml", "-o", "out"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("character device"),
        "{}",
        stderr(&out)
    );
}

/// Two outputs of one command on one file (`fit -o w.csv --table w.csv`, through
/// `./`, a symbolic link or a hard link, existing or not) are refused naming both
/// flags, and the file is left as it was.
#[test]
fn two_outputs_on_one_file_are_refused_naming_both_flags() {
    let dir = Scratch::new("safe-two-outputs");
    synth(&dir, "t.csv", "2000");
    std::fs::write(dir.join("w.csv"), "kept\n").unwrap();
    std::os::unix::fs::symlink("w.csv", dir.join("link.csv")).unwrap();
    std::os::unix::fs::symlink("new.csv", dir.join("dangling.csv")).unwrap();
    std::fs::hard_link(dir.join("w.csv"), dir.join("hard.csv")).unwrap();
    for (o, table) in [
        ("w.csv", "w.csv"),
        ("w.csv", "./w.csv"),
        ("w.csv", "link.csv"),
        ("hard.csv", "w.csv"),
        ("fresh.csv", "fresh.csv"),
        ("new.csv", "dangling.csv"),
    ] {
        let out = rbf(&dir, &["fit", "t.csv", "-o", o, "--table", table]);
        let said = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{o} {table}: {said}");
        assert!(
            said.contains(&format!("`-o {o}`")) && said.contains(&format!("`--table {table}`")),
            "{o} {table}: {said}"
        );
    }
    assert_eq!(std::fs::read(dir.join("w.csv")).unwrap(), b"kept\n");
    assert!(!dir.join("fresh.csv").exists() && !dir.join("new.csv").exists());
    // Two different files are still written.
    ok(&rbf(
        &dir,
        &["fit", "t.csv", "-o", "w.json", "--table", "r.csv"],
    ));
}

/// With stdout closed by the shell (`>&-`), `ingest -o -`, `synth -o -` and a command
/// printing its table fail naming standard output, where they reported success with
/// nothing written; a file written meanwhile is written whole.
#[test]
fn a_closed_stdout_is_an_error_not_a_success() {
    let dir = Scratch::new("safe-closed-stdout");
    synth(&dir, "t.csv", "3000");
    for args in [
        "ingest t.csv -o -",
        "synth --distinct 10 --p-repeat 0.5 --arrivals 100 -o -",
        "replay t.csv -m 3000 -k 3 --sigma 900",
    ] {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("exec \"$0\" {args} >&-"))
            .arg(env!("CARGO_BIN_EXE_rbf"))
            .current_dir(&*dir)
            .output()
            .unwrap();
        let said = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args}: {said}");
        assert!(said.contains("standard output is closed"), "{args}: {said}");
    }
    // An output file written with stdout closed is written whole.
    let out = Command::new("sh")
        .arg("-c")
        .arg("exec \"$0\" ingest t.csv -o x.rbfs -q >&-")
        .arg(env!("CARGO_BIN_EXE_rbf"))
        .current_dir(&*dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let again = rbf(&dir, &["ingest", "x.rbfs", "-o", "y.rbfs", "-q"]);
    ok(&again);
}

/// `-o /proc/self/x`: refused before any work (exit 2, as other refused outputs),
/// naming the path as given and the directory it leads to.
#[test]
fn an_output_in_an_unwritable_directory_is_named_as_given() {
    let dir = Scratch::new("safe-proc-output");
    synth(&dir, "t.csv", "2000");
    for args in [
        vec!["ingest", "t.csv", "-o", "/proc/self/x"],
        vec![
            "synth",
            "--distinct",
            "10",
            "--p-repeat",
            "0.5",
            "--arrivals",
            "10",
            "-o",
            "/proc/self/x",
        ],
        vec!["fit", "t.csv", "--table", "/proc/self/x.csv"],
    ] {
        let out = rbf(&dir, &args);
        let said = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {said}");
        assert!(
            said.contains("refusing to write /proc/self/x")
                && said.contains("its directory /proc/"),
            "{args:?}: {said}"
        );
    }
}
