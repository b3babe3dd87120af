//! Weights are relative: `segments:1e308,1e308` is `segments:1,1`, on the
//! command line and in workload files, for every command that builds a distribution
//! from them (models, generator, sizing, experiment configs). Their plain sum
//! overflowed to infinity: the renewal "upper bound" came out 150 times too small and
//! marked proven, the Markov rows 0, and the generator panicked (exit 101).

use std::path::Path;

use crate::cli::{json_of, ok, rbf};
use crate::scratch::Scratch;

const FILTER: [&str; 6] = ["--memory", "10000", "--hashes", "4", "--sigma", "1500"];

/// Every FN method's value of `rbf model fn ... --json`.
fn fn_values(dir: &Path, extra: &[&str]) -> Vec<(String, f64)> {
    let mut args = vec!["model", "fn", "--json"];
    args.extend(FILTER);
    args.extend(extra);
    let v = json_of(&rbf(dir, &args));
    let methods = v["methods"].as_object().expect("methods");
    methods
        .iter()
        .map(|(k, m)| (k.clone(), m["fn_rate"].as_f64().expect("a rate")))
        .collect()
}

fn same(a: &[(String, f64)], b: &[(String, f64)]) {
    assert_eq!(a.len(), b.len());
    for ((ka, va), (kb, vb)) in a.iter().zip(b) {
        assert_eq!(ka, kb);
        assert!(
            (va - vb).abs() <= 1e-12 * vb.abs().max(1e-300),
            "{ka}: {va} vs {vb}"
        );
        assert!(*va > 0.0, "{ka} is 0");
    }
}

#[test]
fn huge_weights_on_the_command_line_mean_what_small_ones_do() {
    let dir = Scratch::new("weights-cli");
    let workload = ["--zipf", "1", "--distinct", "1000", "--p-repeat", "0.9"];
    let with = |placement: &str| {
        let mut a = workload.to_vec();
        a.extend(["--placement", placement]);
        fn_values(&dir, &a)
    };
    let small = with("segments:1,1");
    same(&with("segments:1e308,1e308"), &small);
    same(
        &with("segments:1.7976931348623157e308,1.7976931348623157e308"),
        &small,
    );
    same(&with("segments:5e-324,5e-324"), &small);
    // Unequal huge weights keep their ratio.
    same(&with("segments:3e307,1e307"), &with("segments:3,1"));
    // The generator, the sizer: the same trace and answer as with small weights.
    let synth = |placement: &str, out: &str| {
        ok(&rbf(
            &dir,
            &[
                "synth",
                "--distinct",
                "300",
                "--p-repeat",
                "0.8",
                "--arrivals",
                "3000",
                "--placement",
                placement,
                "-o",
                out,
            ],
        ));
        std::fs::read(dir.join(out)).unwrap()
    };
    assert_eq!(
        synth("segments:1e308,1e308,1e308", "a.csv"),
        synth("segments:1,1,1", "b.csv")
    );
    let size = |placement: &str| {
        let out = rbf(
            &dir,
            &[
                "size",
                "--zipf",
                "1",
                "--distinct",
                "1000",
                "--p-repeat",
                "0.9",
                "--placement",
                placement,
                "--target-fp",
                "0.01",
                "--memory",
                "10000",
                "--confirm-arrivals",
                "0",
                "--json",
            ],
        );
        let mut v = json_of(&out);
        v["seconds"] = serde_json::Value::Null; // wall time
        v
    };
    assert_eq!(size("segments:1e308,1e308"), size("segments:1,1"));
}

fn workload_file(dir: &Path, name: &str, q: f64, z: f64) -> String {
    let text = format!(
        r#"{{"format": "rbf-workload/1", "popularity": {{"explicit": [{q:e}, {q:e}, {q:e}, {q:e}]}},
            "p_repeat": 0.9, "placement": {{"explicit": [{z:e}, {z:e}, {z:e}, {z:e}]}}}}"#
    );
    std::fs::write(dir.join(name), text).unwrap();
    name.to_string()
}

#[test]
fn huge_weights_in_workload_files_mean_what_small_ones_do() {
    let dir = Scratch::new("weights-file");
    let huge = workload_file(&dir, "huge.json", 1e308, 1e308);
    let max = workload_file(&dir, "max.json", f64::MAX, f64::MAX);
    let small = workload_file(&dir, "small.json", 1.0, 1.0);
    let filter = ["--memory", "200", "--hashes", "2", "--sigma", "30"];
    let values = |w: &str| {
        let mut args = vec!["model", "fn", "--json", "--workload", w];
        args.extend(filter);
        let v = json_of(&rbf(&dir, &args));
        ["fn_renewal_upper", "fn_markov_lower", "fn_markov_swr"].map(|k| v[k].as_f64().expect(k))
    };
    let expected = values(&small);
    assert!(expected.iter().all(|x| *x > 0.0), "{expected:?}");
    assert_eq!(values(&huge), expected);
    assert_eq!(values(&max), expected);
    // The generator reads the same files: no panic, the same trace.
    let trace = |w: &str, out: &str| {
        ok(&rbf(
            &dir,
            &["synth", "--workload", w, "--arrivals", "500", "-o", out],
        ));
        std::fs::read(dir.join(out)).unwrap()
    };
    assert_eq!(trace(&huge, "h.csv"), trace(&small, "s.csv"));
    // Infinite or negative weights are refused, naming the key and the entry.
    std::fs::write(
        dir.join("bad.json"),
        r#"{"popularity": {"explicit": [1, -1]}, "p_repeat": 0.9, "placement": "uniform"}"#,
    )
    .unwrap();
    let out = rbf(
        &dir,
        &[
            "synth",
            "--workload",
            "bad.json",
            "--arrivals",
            "5",
            "-o",
            "x.csv",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("`popularity`") && err.contains("entry 1 is -1"),
        "{err}"
    );
}

#[test]
fn huge_weights_in_an_experiment_config_run_like_small_ones() {
    let dir = Scratch::new("weights-run");
    let config = |placement: &str| {
        format!(
            "name = \"w\"\nmeasures = [\"observed\", \"renewal\", \"markov-swr\"]\n[[synthetic]]\nname = \"s\"\ndistinct = 200\nzipf = 1.0\np_repeat = 0.9\nplacement = \"{placement}\"\narrivals = 20000\n[grid]\nmemory = [2000]\nhashes = [3]\nsigma_fraction = [0.4]\n"
        )
    };
    std::fs::write(dir.join("huge.toml"), config("segments:1e308,1e308")).unwrap();
    std::fs::write(dir.join("small.toml"), config("segments:1,1")).unwrap();
    ok(&rbf(&dir, &["run", "huge.toml", "-o", "huge", "-q"]));
    ok(&rbf(&dir, &["run", "small.toml", "-o", "small", "-q"]));
    let csv = |d: &str| std::fs::read_to_string(dir.join(d).join("results.csv")).unwrap();
    assert_eq!(csv("huge"), csv("small"));
}
