//! `rbf model fp` and `rbf model capacity` through the binary: JSON keys, agreement with
//! the library, and clear errors for bad settings.

use std::process::Command;

use rbf_data::filter::{FilterConfig, Hashing};
use rbf_predicted::model::false_positive::{capacity, predict, CapacityQuery};

fn rbf(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rbf"))
        .args(args)
        .output()
        .expect("run rbf");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-14 * b.abs()
}

fn json(args: &[&str]) -> serde_json::Value {
    let (ok, out, err) = rbf(args);
    assert!(ok, "rbf {args:?} failed: {err}");
    serde_json::from_str(&out).expect("JSON output")
}

#[test]
fn model_fp_json_matches_the_library() {
    let v = json(&[
        "model",
        "fp",
        "--memory",
        "2000",
        "--hashes",
        "5",
        "--sigma",
        "600",
        "--phases",
        "2",
        "--hashing",
        "distinct",
        "--non-retaining",
        "--json",
    ]);
    let mut c = FilterConfig::sigma_bounded(2000, 5, 600);
    c.phases = 2;
    c.hashing = Hashing::Distinct;
    c.retaining = false;
    let p = predict(&c).expect("model").sigma.expect("sigma");
    let fp = v["fp_sigma"].as_f64().expect("fp_sigma");
    let n0 = v["expected_messages_per_cycle"].as_f64().expect("E[N_0]");
    // serde_json's default float parser may be one ulp off.
    assert!(close(fp, p.fp_sigma) && close(n0, p.expected_messages_per_cycle));
    // Two phases: f_sigma^2 = 1 - (1 - active)(1 - frozen) (eq. 26, copy-over default).
    let a = v["fp_active"].as_f64().expect("fp_active");
    let f = v["fp_frozen"].as_f64().expect("fp_frozen");
    assert!((fp - (1.0 - (1.0 - a) * (1.0 - f))).abs() < 1e-15);
    assert!(v["notes"].as_array().is_some_and(|n| !n.is_empty()));
}

#[test]
fn model_fp_n_bounded_and_table() {
    let v = json(&[
        "model",
        "fp",
        "-m",
        "10000",
        "-k",
        "5",
        "--max-inserts",
        "1000",
        "--json",
    ]);
    for key in ["fp_worst_case", "fp_oracle", "fp_actual_lower_bound"] {
        assert!(v[key].as_f64().is_some(), "{key} missing: {v}");
    }
    let (ok, out, _) = rbf(&["model", "fp", "-m", "1000", "-k", "1", "--sigma", "500"]);
    assert!(
        ok && out.contains("f_sigma^1") && out.contains("E[N_0]"),
        "{out}"
    );
}

#[test]
fn model_capacity_json_matches_the_library() {
    let v = json(&[
        "model",
        "capacity",
        "--memory",
        "16384",
        "--target-fp",
        "0.01",
        "--json",
    ]);
    let c = capacity(&CapacityQuery {
        memory: 16384,
        target: 0.01,
        k_max: 16,
        hashing: Hashing::Colliding,
        // Retaining by default, like `rbf replay`.
        retaining: true,
        copy_over: true,
    })
    .expect("capacity");
    for (key, want) in [
        ("capacity_sigma", c.capacity_sigma),
        ("capacity_fa", c.capacity_fa),
        ("capacity_fw", c.capacity_fw),
    ] {
        assert!(v[key].as_f64().is_some_and(|x| close(x, want)), "{key}");
    }
    assert_eq!(v["best_k"].as_u64(), Some(u64::from(c.best_k)));
    assert_eq!(v["per_k"].as_array().map(Vec::len), Some(16));
}

#[test]
fn bad_settings_name_the_key() {
    let (ok, _, err) = rbf(&[
        "model",
        "capacity",
        "--memory",
        "1000",
        "--target-fp",
        "1.5",
    ]);
    assert!(!ok && err.contains("target-fp"), "{err}");
    let (ok, _, err) = rbf(&[
        "model", "fp", "--memory", "1000", "--hashes", "3", "--sigma", "1000",
    ]);
    assert!(!ok && err.contains("`sigma`"), "{err}");
    let (ok, _, err) = rbf(&["model", "fp", "--memory", "1000", "--hashes", "3"]);
    assert!(!ok && err.contains("sigma"), "{err}");
}
