//! A full or closed stdout or stderr never panics: every subcommand
//! runs with `> /dev/full` and with `2> /dev/full`. A full stdout is an error exit
//! naming it (status 1, never 101); a full stderr costs only the notes: the results
//! still reach stdout and the status is the same as with a working stderr.

use std::fs::OpenOptions;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::cli::{ok, program, rbf, stderr};
use crate::scratch::Scratch;

/// Runs `args` (see [`program`]) in `dir` with stdout (`out_full`) or stderr sent to
/// /dev/full.
fn with_full(dir: &Path, args: &[&str], out_full: bool) -> Output {
    let full = || {
        OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full")
    };
    let (bin, args) = program(args);
    let mut cmd = Command::new(bin);
    cmd.args(args).current_dir(dir).stdin(Stdio::null());
    if out_full {
        cmd.stdout(full()).stderr(Stdio::piped());
    } else {
        cmd.stdout(Stdio::piped()).stderr(full());
    }
    cmd.output().expect("rbf runs")
}

const GRID: &str = r#"name = "streams"
measures = ["observed", "fp-model"]

[[trace]]
path = "t.csv"

[grid]
memory = [2000]
hashes = [3]
sigma_fraction = [0.5]
"#;

/// A capture whose last packet is cut short: its reader warns on stderr.
fn truncated_pcap(dir: &Path) -> String {
    let src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/pcap/zeek_gre-aruba_vlan_gre.pcap");
    let mut bytes = std::fs::read(src).expect("shipped capture");
    bytes.truncate(bytes.len() - 7);
    std::fs::write(dir.join("cut.pcap"), bytes).expect("write");
    "cut.pcap".into()
}

#[test]
fn full_stdout_or_stderr_never_panics() {
    let dir = Scratch::new("safe-full");
    ok(&rbf(
        &dir,
        &[
            "synth",
            "--distinct",
            "200",
            "--p-repeat",
            "0.9",
            "--arrivals",
            "4000",
            "-o",
            "t.csv",
        ],
    ));
    std::fs::write(dir.join("g.toml"), GRID).unwrap();
    ok(&rbf(&dir, &["run", "g.toml", "-o", "shard", "-q"]));
    let cut = truncated_pcap(&dir);
    let filter = ["--memory", "2000", "--hashes", "3", "--sigma", "600"];
    let with = |head: &[&str], tail: &[&str]| -> Vec<String> {
        head.iter().chain(tail).map(|s| (*s).to_string()).collect()
    };
    let commands: Vec<Vec<String>> = vec![
        with(&["--help"], &[]),
        with(&["--version"], &[]),
        with(&["rbf-bench", "--help"], &[]),
        with(&["replay", "--help"], &[]),
        with(
            &[
                "synth",
                "--distinct",
                "50",
                "--p-repeat",
                "0.5",
                "--arrivals",
                "500",
            ],
            &["-o", "-"],
        ),
        with(
            &[
                "synth",
                "--distinct",
                "50",
                "--p-repeat",
                "0.5",
                "--arrivals",
                "500",
            ],
            &["-o", "s.csv"],
        ),
        with(&["replay", "t.csv"], &filter),
        with(&["replay", "t.csv", "--json"], &filter),
        with(&["replay", &cut, "--json"], &filter),
        with(&["replay", &cut], &filter),
        with(&["ingest", "t.csv", "-o", "t.rbfs"], &[]),
        with(&["ingest", "t.csv", "-o", "-"], &[]),
        with(&["model", "fp"], &filter),
        with(&["model", "fp", "--json"], &filter),
        with(
            &[
                "model",
                "capacity",
                "--memory",
                "10000",
                "--target-fp",
                "0.01",
            ],
            &[],
        ),
        with(
            &[
                "model",
                "fn",
                "--zipf",
                "1",
                "--distinct",
                "100",
                "--p-repeat",
                "0.9",
            ],
            &filter,
        ),
        with(&["fit", "t.csv"], &[]),
        with(&["fit", "t.csv", "-o", "-"], &[]),
        with(&["compare", "t.csv"], &filter),
        with(&["run", "g.toml", "-o", "out"], &[]),
        with(&["merge", "shard", "-o", "merged"], &[]),
        with(
            &[
                "size",
                "--zipf",
                "1",
                "--distinct",
                "100",
                "--p-repeat",
                "0.9",
            ],
            &["--target-fp", "1e-2", "--target-fn", "1e-1"],
        ),
        with(
            &[
                "rbf-bench",
                "fp",
                "--memory",
                "10000",
                "--capacity-memory",
                "10000",
            ],
            &["--repeats", "1"],
        ),
    ];
    for args in &commands {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let normal = rbf(&dir, &args);
        let shown = args.join(" ");
        assert!(normal.status.success(), "{shown}: {}", stderr(&normal));
        // stdout full: an error naming it when there was something to write, never a panic.
        let out = with_full(&dir, &args, true);
        assert!(
            !stderr(&out).contains("panicked"),
            "{shown}: {}",
            stderr(&out)
        );
        if normal.stdout.is_empty() {
            assert!(out.status.success(), "{shown}: {}", stderr(&out));
        } else {
            assert_eq!(out.status.code(), Some(1), "{shown}: {}", stderr(&out));
            assert!(
                stderr(&out).contains("No space left on device"),
                "{shown}: {}",
                stderr(&out)
            );
        }
        // stderr full: the same status and results on stdout.
        let err = with_full(&dir, &args, false);
        assert_eq!(err.status.code(), Some(0), "{shown}: stderr full");
        assert_eq!(
            err.stdout.is_empty(),
            normal.stdout.is_empty(),
            "{shown}: results must still reach stdout"
        );
    }
    // The warning of the cut capture was on stderr, and its JSON on stdout.
    let normal = rbf(
        &dir,
        &with(&["replay", &cut, "--json"], &filter)
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert!(!stderr(&normal).is_empty(), "the cut packet is reported");
    let err = with_full(
        &dir,
        &with(&["replay", &cut, "--json"], &filter)
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        false,
    );
    assert_eq!(err.stdout, normal.stdout, "same JSON with stderr full");
}
