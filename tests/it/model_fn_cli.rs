//! `rbf model fn` end to end: JSON keys and honesty flags, workload files, errors that
//! name the setting.

use std::process::Command;

use crate::scratch::Scratch;

fn rbf(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rbf"))
        .args(args)
        .output()
        .expect("the rbf binary runs")
}

fn json(args: &[&str]) -> serde_json::Value {
    let out = rbf(args);
    crate::cli::json_of(&out)
}

const BASE: [&str; 12] = [
    "model",
    "fn",
    "--memory",
    "1000",
    "--hashes",
    "3",
    "--sigma",
    "300",
    "--zipf",
    "1",
    "--distinct",
    "1000",
];

#[test]
fn json_has_every_method_key_and_flags_unproven_bounds() {
    let mut a = BASE.to_vec();
    a.extend(["--p-repeat", "0.9", "--json"]);
    let v = json(&a);
    for key in [
        "fn_renewal_upper",
        "fn_markov_lower",
        "fn_markov_swr",
        "fn_markov_uniform",
        "fn_markov_biuniform",
        "fn_drop_pins",
        "fp_rate",
    ] {
        assert!(v[key].as_f64().is_some(), "{key} missing in {v}");
    }
    let m = &v["methods"];
    assert_eq!(m["renewal"]["guarantee"]["claim"], "upper-bound");
    assert_eq!(m["renewal"]["guarantee"]["guaranteed"], true);
    // p_r < 1: the Markov bounds are not proven and must not be presented as bounds.
    for name in [
        "markov-lower",
        "markov-swr",
        "markov-uniform",
        "markov-biuniform",
    ] {
        assert_eq!(m[name]["guarantee"]["guaranteed"], false, "{name}");
    }
    assert_eq!(m["drop-pins"]["guarantee"]["claim"], "approximation");
    let r = v["fn_renewal_upper"].as_f64().unwrap();
    let lo = v["fn_markov_lower"].as_f64().unwrap();
    assert!(lo < r && r < 1.0);
}

#[test]
fn methods_not_run_are_null_and_p_r_one_is_proven() {
    let mut a = BASE.to_vec();
    a.extend([
        "--p-repeat",
        "1",
        "--method",
        "markov-swr,drop-pins",
        "--json",
    ]);
    let v = json(&a);
    assert!(v["fn_renewal_upper"].is_null() && v["fn_markov_lower"].is_null());
    assert!(v["fn_markov_swr"].as_f64().is_some() && v["fn_drop_pins"].as_f64().is_some());
    assert_eq!(v["methods"]["markov-swr"]["guarantee"]["guaranteed"], true);
    assert_eq!(v["fp_rate_from"], "markov-swr");
}

#[test]
fn workload_file_and_table_output() {
    let dir = Scratch::new("model-fn");
    let path = dir.join("w.json");
    rbf_data::workload::Workload::explicit(
        vec![0.4, 0.3, 0.2, 0.1],
        0.8,
        rbf_data::workload::Placement::Top,
    )
    .save(&path)
    .unwrap();
    let p = path.to_str().unwrap();
    let out = rbf(&[
        "model",
        "fn",
        "--memory",
        "200",
        "--hashes",
        "2",
        "--sigma",
        "40",
        "--phases",
        "2",
        "--workload",
        p,
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Two phases with the filter's default shared hash positions: nothing is proven.
    assert!(
        text.contains("renewal") && text.contains("not proven"),
        "{text}"
    );
    assert!(text.contains("appendix G.1"), "{text}");
}

#[test]
fn bad_settings_name_the_key() {
    let cases: [(&[&str], &str); 4] = [
        (&["--p-repeat", "0.9", "--method", "magic"], "method"),
        (&["--p-repeat", "1.5"], "p_repeat"),
        (&["--p-repeat", "0.9", "--placement", "middle"], "placement"),
        (
            &["--p-repeat", "0.9", "--no-copy-over", "--phases", "2"],
            "copy_over",
        ),
    ];
    for (extra, key) in cases {
        let mut a = BASE.to_vec();
        a.extend_from_slice(extra);
        let out = rbf(&a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(key),
            "{extra:?}: {err}"
        );
    }
    let out = rbf(&[
        "model",
        "fn",
        "--memory",
        "1000",
        "--hashes",
        "3",
        "--max-inserts",
        "5000",
        "--zipf",
        "1",
        "--distinct",
        "100",
        "--p-repeat",
        "1",
    ]);
    // N-bounded is modelled, but N must stay below the bits per array.
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("max_inserts"));
}
