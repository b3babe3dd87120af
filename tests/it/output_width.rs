//! Every command's text output fits 100 columns (tables, notes, ingest lines and
//! summaries alike), including the cases that used to run wide: a fit whose successor
//! diagnostic hit its pair cap, a capture series with many skip reasons, a compare with
//! methods left out. With stderr redirected, no progress bar reaches it.

use crate::cli::{ok, rbf, stderr};
use crate::scratch::Scratch;

const WIDTH: usize = 100;

fn root(p: &str) -> String {
    format!("{}/{p}", env!("CARGO_MANIFEST_DIR"))
}

/// Runs rbf with `args`; fails on an error, a line over WIDTH columns on stdout or
/// stderr, or a progress bar drawn into redirected stderr.
fn narrow(args: &[&str]) {
    let out = rbf(std::path::Path::new(env!("CARGO_MANIFEST_DIR")), args);
    ok(&out);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr(&out),
    );
    for (name, text) in [("stdout", &stdout), ("stderr", &stderr)] {
        for line in text.lines() {
            assert!(
                line.chars().count() <= WIDTH,
                "{args:?} {name}: {} columns: {line}",
                line.chars().count()
            );
        }
    }
    assert!(
        !stderr.contains("ETA") && !stderr.contains('\r'),
        "{args:?}: {stderr}"
    );
}

#[test]
fn every_command_fits_100_columns() {
    let tragen = root("tests/data/tragen-100k.csv");
    let ndpi = root("traces/ndpi");
    let dir = Scratch::new("output-width");
    let w = dir.join("w.json");
    let w = w.to_str().expect("utf-8");
    narrow(&[
        "fit",
        &tragen,
        "--warmup",
        "10000",
        "--pair-cap",
        "100",
        "-o",
        w,
    ]);
    narrow(&["fit", &ndpi, "--warmup", "2000", "--window", "1000"]);
    narrow(&[
        "replay", &ndpi, "--memory", "4096", "--hashes", "4", "--sigma", "1000",
    ]);
    narrow(&[
        "compare",
        &tragen,
        "--memory",
        "10000",
        "--hashes",
        "5",
        "--target-fp",
        "1e-4",
        "--warmup",
        "10000",
        "--method",
        "renewal,markov-lower",
    ]);
    narrow(&[
        "model", "fp", "--memory", "10000", "--hashes", "5", "--sigma", "2000",
    ]);
    narrow(&[
        "model",
        "capacity",
        "--memory",
        "10000",
        "--target-fp",
        "1e-3",
    ]);
    narrow(&[
        "model",
        "fn",
        "--memory",
        "10000",
        "--hashes",
        "5",
        "--sigma",
        "2000",
        "--workload",
        w,
        "--phases",
        "2",
    ]);
    narrow(&[
        "size",
        "--workload",
        w,
        "--target-fp",
        "1e-4",
        "--memory",
        "10000",
        "--phases",
        "1",
        "--confirm-arrivals",
        "20000",
    ]);
    let config = dir.join("c.toml");
    std::fs::write(
        &config,
        format!(
            "name = \"width\"\nmeasures = [\"observed\", \"fp-model\", \"renewal\", \
             \"markov-lower\", \"markov-swr\", \"markov-uniform\", \"drop-pins\"]\n\
             [[trace]]\nname = \"nDPI mix\"\npath = \"{ndpi}\"\nwarmup = 2000\n\
             [grid]\nmemory = [4096, 16384]\nhashes = [4]\ntarget_fp = [1e-3]\nphases = [1, 2]\n"
        ),
    )
    .expect("config");
    let out = dir.join("out");
    narrow(&[
        "run",
        config.to_str().expect("utf-8"),
        "-o",
        out.to_str().expect("utf-8"),
    ]);
    let report = std::fs::read_to_string(out.join("report.md")).expect("report");
    // The report's table block is the terminal table.
    let table = report
        .split("```text\n")
        .nth(1)
        .and_then(|t| t.split("```").next())
        .expect("a table in the report");
    assert!(table.lines().all(|l| l.chars().count() <= WIDTH), "{table}");
}
