//! One judge: `rbf compare`, `rbf run` and `rbf size` on the same trace print the same
//! numbers and the same labels for the same bound, because all three take them from
//! `rbf_judge::compare::judge`.
//!
//! The trace is the shipped TRAGEN CDN log (warm-up 10 000). `rbf fit` writes its
//! workload; `rbf size --memory M` picks k and sigma for FP 1e-4 on it (one phase); then
//! `rbf compare` on the trace and `rbf run` with a config naming the trace, both with that
//! filter, fit the same workload themselves. The renewal bound must be the same f64 in
//! all three, stand "for the fitted model" in all three (never "proven": the workload
//! was fitted from a real trace), with the same claim, and `compare` and `run` must
//! agree on the observed FN, the verdict and the conservative bound. The text outputs
//! print the same value and the same standing words.

use crate::scratch::Scratch;

fn rbf(args: &[&str]) -> std::process::Output {
    crate::cli::rbf(std::path::Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

fn text(out: &std::process::Output) -> String {
    crate::cli::ok(out);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn record<'a>(models: &'a serde_json::Value, bound: &str) -> &'a serde_json::Value {
    models
        .as_array()
        .expect("models")
        .iter()
        .find(|r| r["bound"] == bound)
        .unwrap_or_else(|| panic!("no {bound} record in {models}"))
}

#[test]
fn compare_run_and_size_agree_on_one_trace() {
    let dir = Scratch::new("judge-consistency");
    let trace = format!("{}/tests/data/tragen-100k.csv", env!("CARGO_MANIFEST_DIR"));
    let workload = dir.join("w.json");
    let w = workload.to_str().expect("utf-8 path");
    text(&rbf(&["fit", &trace, "--warmup", "10000", "-o", w]));

    // size: the best one-phase filter at 10 000 bits for FP 1e-4 on the fitted workload.
    let size_args = [
        "size",
        "--workload",
        w,
        "--target-fp",
        "1e-4",
        "--memory",
        "10000",
        "--phases",
        "1",
        "--max-hashes",
        "5",
        "--confirm-arrivals",
        "0",
    ];
    let size = crate::cli::json_of(&rbf(&[&size_args[..], &["--json"]].concat()));
    let (k, sigma) = (
        size["hashes"].as_u64().expect("k").to_string(),
        size["sigma"].as_u64().expect("sigma").to_string(),
    );
    let filter = ["--memory", "10000", "--hashes", &k, "--sigma", &sigma];

    // compare: the same trace and filter, fitted in its own pass.
    let compare_args = [
        &[
            "compare", &trace, "--warmup", "10000", "--method", "renewal",
        ][..],
        &filter,
    ]
    .concat();
    let compare = crate::cli::json_of(&rbf(&[&compare_args[..], &["--json"]].concat()));

    // run: a config naming the trace and that one filter.
    let config = dir.join("one.toml");
    std::fs::write(
        &config,
        format!(
            "name = \"one\"\nseeds = [0]\nmeasures = [\"observed\", \"renewal\"]\n\
             [[trace]]\npath = \"{trace}\"\nwarmup = 10000\n\
             [grid]\nmemory = [10000]\nhashes = [{k}]\nsigma = [{sigma}]\n"
        ),
    )
    .expect("config written");
    let out_dir = dir.join("out");
    let config_path = config.to_str().expect("utf-8");
    let out_path = out_dir.to_str().expect("utf-8");
    let run_text = text(&rbf(&["run", config_path, "-o", out_path]));
    let results: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out_dir.join("results.json")).expect("results.json"),
    )
    .expect("JSON");
    let row = &results["rows"][0];

    // The same renewal record in all three.
    let from_size = record(&size["models"], "renewal");
    let from_compare = record(&compare["models"], "renewal");
    let from_run = record(&row["models"], "renewal");
    for (name, r) in [("compare", from_compare), ("run", from_run)] {
        assert_eq!(r["value"], from_size["value"], "{name}: the renewal bound");
    }
    for r in [from_compare, from_run] {
        assert_eq!(r["standing"], "fitted-model", "{r}");
        assert_eq!(r["claim"], "upper-bound", "{r}");
        assert_eq!(r["note"], from_compare["note"], "{r}");
    }
    // size confirms by replaying the fitted Q, not the trace: where that fit failed its
    // test the bound is not judged against that replay, and says why before
    // the judge's own words.
    assert_eq!(from_size["claim"], "upper-bound");
    let size_note = from_size["note"].as_str().expect("note");
    let compare_note = from_compare["note"].as_str().expect("note");
    match size["workload_misfit"].as_str() {
        Some(why) => {
            assert_eq!(from_size["standing"], "not-judged", "{from_size}");
            assert!(size_note.starts_with(why), "{size_note}");
            assert!(size_note.ends_with(compare_note), "{size_note}");
        }
        None => {
            assert_eq!(from_size["standing"], "fitted-model", "{from_size}");
            assert_eq!(size_note, compare_note);
        }
    }
    assert_eq!(size["fn_renewal_upper"], from_size["value"]);
    assert_eq!(compare["fn_renewal_upper"], from_size["value"]);
    // compare and run replay and fit the same trace: the same observation, the same
    // verdict, the same conservative bound.
    assert_eq!(row["observed_fn"], compare["observed_fn"]);
    assert_eq!(
        row["observed_fn_low"],
        compare["observed_fn_interval"]["low"]
    );
    assert_eq!(
        row["observed_fn_high"],
        compare["observed_fn_interval"]["high"]
    );
    assert_eq!(from_run["verdict"], from_compare["verdict"]);
    assert_eq!(from_run["regime"], from_compare["regime"]);
    assert_eq!(from_run["excess"], from_compare["excess"]);
    assert_eq!(
        record(&row["models"], "renewal-conservative"),
        record(&compare["models"], "renewal-conservative")
    );

    // The text outputs print the same number and the same words.
    let value = rbf_judge::report::sci(from_size["value"].as_f64().expect("value"));
    let size_text = text(&rbf(&size_args));
    let compare_text = text(&rbf(&compare_args));
    for (name, t) in [
        ("size", &size_text),
        ("compare", &compare_text),
        ("run", &run_text),
    ] {
        assert!(t.contains(&value), "{name} does not print {value}:\n{t}");
        assert!(
            t.contains("fitted model"),
            "{name} does not say fitted model:\n{t}"
        );
        for line in t.lines() {
            assert!(
                line.chars().count() <= 100,
                "{name}: a line over 100 columns: {line}"
            );
        }
    }
}
