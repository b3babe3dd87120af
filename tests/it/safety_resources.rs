//! Every allocation sized from user input is checked before it is made: a
//! grid of billions of points, a synthetic source of 10^10 messages or 10^15 arrivals,
//! a shard claiming 10^12 points, a "text" input that never ends. Each gets exit status
//! 2 (or 1 for data that is no text) and one line saying what it needs, in well under
//! a second, where they used to abort in the allocator after seconds to minutes.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::cli::rbf;
use crate::scratch::Scratch;

/// `rbf args` ends with `status` within 5 s, its message mentioning `says`.
fn refused(dir: &Path, args: &[&str], status: i32, says: &str) {
    let t = Instant::now();
    let out = rbf(dir, args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(status), "rbf {args:?}: {err}");
    assert!(err.contains(says), "rbf {args:?}: `{says}` not in: {err}");
    assert!(!err.contains("memory allocation"), "{err}");
    assert!(err.lines().count() <= 2, "rbf {args:?}: {err}");
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "rbf {args:?}: {:?}",
        t.elapsed()
    );
}

fn list(n: usize, f: impl Fn(usize) -> String) -> String {
    (0..n).map(f).collect::<Vec<_>>().join(", ")
}

const SYNTHETIC: &str =
    "[[synthetic]]\ndistinct = 100\nzipf = 1.0\np_repeat = 0.9\narrivals = 2000\n";

#[test]
fn huge_grids_and_sources_are_refused_before_they_are_built() {
    let dir = Scratch::new("safe-resources");
    // 10^4 memory sizes x 64 hashes x 10^4 sigma fractions: 6.4e9 points.
    let grid = format!(
        "name = \"g\"\n{SYNTHETIC}[grid]\nmemory = [{}]\nhashes = [{}]\nsigma_fraction = [{}]\n",
        list(10_000, |i| (1000 + i).to_string()),
        list(64, |i| (i + 1).to_string()),
        list(10_000, |i| format!("{}", (i + 1) as f64 / 10_001.0)),
    );
    std::fs::write(dir.join("grid.toml"), grid).unwrap();
    refused(
        &dir,
        &["run", "grid.toml", "-o", "out"],
        2,
        "a grid of 6400000000 points needs",
    );
    let source = |key: &str, value: &str| {
        let text = format!(
            "name = \"s\"\n{}[grid]\nmemory = [2000]\nhashes = [3]\nsigma_fraction = [0.5]\n",
            SYNTHETIC.replace(&format!("{key} = "), &format!("{key} = {value}\n# "))
        );
        std::fs::write(dir.join("s.toml"), text).unwrap();
    };
    source("distinct", "10000000000");
    refused(
        &dir,
        &["run", "s.toml", "-o", "out"],
        2,
        "D = 10000000000 messages needs",
    );
    source("arrivals", "1000000000000000");
    refused(
        &dir,
        &["run", "s.toml", "-o", "out"],
        2,
        "distinct messages, needs",
    );
    // With p_r = 1 no message is new: the memory is D's, and the run is accepted (its
    // length is announced by the run's estimate instead; see safety_sweep).
    assert!(!dir.join("out").exists());
}

#[test]
fn a_shard_claiming_a_huge_grid_is_an_error_not_an_allocation() {
    let dir = Scratch::new("safe-merge");
    let config = format!(
        "name = \"m\"\nmeasures = [\"fp-model\"]\n{SYNTHETIC}[grid]\nmemory = [2000]\nhashes = [3]\nsigma_fraction = [0.5]\n"
    );
    std::fs::write(dir.join("m.toml"), config).unwrap();
    let out = rbf(&dir, &["run", "m.toml", "-o", "s0", "-q"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json = std::fs::read_to_string(dir.join("s0/results.json")).unwrap();
    let claim = json.replacen(
        "\"total_points\": 1,",
        "\"total_points\": 1000000000000,",
        1,
    );
    assert_ne!(claim, json);
    std::fs::write(dir.join("s0/results.json"), claim).unwrap();
    refused(
        &dir,
        &["merge", "s0", "-o", "merged"],
        2,
        "999999999999 of 1000000000000 points are missing",
    );
}

#[test]
fn text_inputs_that_never_end_are_refused_at_once() {
    let dir = Scratch::new("safe-endless");
    // A config, a workload or a results file that is a device of endless NUL bytes.
    refused(&dir, &["run", "/dev/zero", "-o", "out"], 1, "binary data");
    refused(
        &dir,
        &[
            "synth",
            "--workload",
            "/dev/zero",
            "--arrivals",
            "5",
            "-o",
            "x.csv",
        ],
        1,
        "binary data",
    );
    refused(&dir, &["merge", "/dev/zero", "-o", "out"], 1, "binary data");
}
