//! Bad experiment files get errors that name the file, the key and what is allowed.

use std::path::Path;

use rbf_foundations::error::Problem;
use rbf_judge::experiment::{ConfigError, ExperimentConfig};

const GOOD: &str = r#"
name = "e"
[[synthetic]]
distinct = 100
zipf = 1.0
p_repeat = 0.9
arrivals = 1000
[grid]
memory = [1000]
hashes = [3]
sigma = [300]
"#;

fn err(text: &str) -> String {
    match ExperimentConfig::parse(text, Path::new("configs/bad.toml")) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn assert_mentions(msg: &str, words: &[&str]) {
    for w in words {
        assert!(msg.contains(w), "`{w}` not in error: {msg}");
    }
}

#[test]
fn the_good_config_parses() {
    ExperimentConfig::parse(GOOD, Path::new("configs/good.toml")).expect("parses");
}

#[test]
fn unknown_keys_and_values_name_the_key_and_allowed_values() {
    let e = err(&GOOD.replace("hashes = [3]", "hashes = [3]\nhashez = [3]"));
    assert_mentions(
        &e,
        &["configs/bad.toml", "hashez", "memory", "sigma_fraction"],
    );
    let e = err(&GOOD.replace("name = \"e\"", "name = \"e\"\nmeasures = [\"observd\"]"));
    assert_mentions(&e, &["observd", "observed", "renewal", "drop-pins"]);
    let e = err(&GOOD.replace("[grid]", "[grid]\nhashing = [\"double\"]"));
    assert_mentions(&e, &["double", "colliding", "distinct"]);
    let e = err(&GOOD.replace("zipf = 1.0", "zipf = 1.0\nplacement = \"middle\""));
    assert_mentions(&e, &["synthetic.placement", "uniform, top, bottom"]);
}

#[test]
fn semantic_errors_name_the_key() {
    let e = err(&GOOD.replace("sigma = [300]", "sigma = [300]\ntarget_fp = [0.01]"));
    assert_mentions(&e, &["grid.sigma", "exactly one of", "target_fp"]);
    let e = err(&GOOD.replace("[grid]", "[grid]\nphases = [3]"));
    assert_mentions(&e, &["grid.phases", "1 and 2", "3"]);
    let e = err(&GOOD.replace("memory = [1000]", "memory = []"));
    assert_mentions(&e, &["grid.memory", "empty"]);
    let e = err(&GOOD.replace("name = \"e\"", "name = \"e\"\nmeasures = [\"capacity\"]"));
    assert_mentions(&e, &["capacity", "target_fp"]);
    let e = err(&GOOD.replace("p_repeat = 0.9", "p_repeat = 1.5"));
    assert_mentions(&e, &["synthetic.p_repeat", "[0, 1]"]);
    let no_source = GOOD.replace(
        "[[synthetic]]\ndistinct = 100\nzipf = 1.0\np_repeat = 0.9\narrivals = 1000\n",
        "",
    );
    let e = err(&format!("measures = [\"observed\"]\n{no_source}"));
    assert_mentions(&e, &["trace / synthetic"]);
}

#[test]
fn missing_files_are_named() {
    let e =
        ExperimentConfig::load(Path::new("configs/does-not-exist.toml")).expect_err("missing file");
    assert!(e.to_string().contains("does-not-exist.toml"), "{e}");
    let text = GOOD.replace(
        "[[synthetic]]\ndistinct = 100\nzipf = 1.0\np_repeat = 0.9\narrivals = 1000\n",
        "[[trace]]\npath = \"nowhere.csv\"\n",
    );
    let c = ExperimentConfig::parse(&text, Path::new("configs/t.toml")).expect("parses");
    let e = rbf_judge::experiment::run(&c, Default::default()).expect_err("missing trace");
    assert!(e.to_string().contains("nowhere.csv"), "{e}");
}

#[test]
fn the_renewal_tolerance_is_checked() {
    let good = GOOD.replace("name = \"e\"", "name = \"e\"\nrenewal_tolerance = 1e-3");
    let c = ExperimentConfig::parse(&good, Path::new("configs/good.toml")).expect("parses");
    assert_eq!(c.renewal_tolerance, Some(1e-3));
    // 0 asks for the exact engine.
    let exact = GOOD.replace("name = \"e\"", "name = \"e\"\nrenewal_tolerance = 0.0");
    let c = ExperimentConfig::parse(&exact, Path::new("configs/good.toml")).expect("parses");
    assert_eq!(c.renewal_tolerance, Some(0.0));
    for bad in ["1.0", "1.5", "-1e-3"] {
        let e = err(&GOOD.replace(
            "name = \"e\"",
            &format!("name = \"e\"\nrenewal_tolerance = {bad}"),
        ));
        assert_mentions(&e, &["renewal_tolerance", "between 0 and 1"]);
    }
}

/// eps is checked by the models' own rule when the config is read: a value the models
/// refuse is an error naming the key, not a note on every row after the replays.
#[test]
fn eps_is_checked_by_the_models_rule() {
    let ok = GOOD.replace("name = \"e\"", "name = \"e\"\neps = 1e-6");
    ExperimentConfig::parse(&ok, Path::new("configs/good.toml")).expect("parses");
    for bad in ["0.0", "0.05", "0.5", "-1e-3", "nan"] {
        let e = err(&GOOD.replace("name = \"e\"", &format!("name = \"e\"\neps = {bad}")));
        assert_mentions(&e, &["eps", "(0, 0.01)"]);
    }
}

/// The setting a refused config names, and its problem.
fn refused(text: &str) -> (String, Problem) {
    let e = ExperimentConfig::parse(text, Path::new("c.toml")).expect_err(text);
    match e.layer::<ConfigError>() {
        Some(ConfigError::Refused { error, .. }) => {
            let s = error.setting_error().expect("a setting");
            (s.key.clone(), s.problem.clone())
        }
        _ => panic!("not a refused value: {e}"),
    }
}

#[test]
fn a_refused_value_names_the_file_then_the_setting() {
    let e = ExperimentConfig::parse(&GOOD.replace("sigma = [300]", ""), Path::new("c.toml"))
        .expect_err("no sigma rule");
    assert_eq!(
        e.to_string(),
        "c.toml: invalid setting `grid.sigma`: give exactly one of: sigma, sigma_fraction, target_fp, max_inserts"
    );
    assert_eq!(
        refused(&GOOD.replace("sigma = [300]", "")).1,
        Problem::Missing("give exactly one of: sigma, sigma_fraction, target_fp, max_inserts")
    );
    assert!(matches!(
        refused(&GOOD.replace("sigma = [300]", "sigma = [300]\nmax_inserts = [5]")).1,
        Problem::Conflict(_)
    ));
    assert_eq!(
        refused(&GOOD.replace("hashes = [3]", "hashes = [3, 3]")),
        ("grid.hashes".into(), Problem::Duplicate("3".into()))
    );
    let e = ExperimentConfig::parse("name = ", Path::new("c.toml")).expect_err("not TOML");
    assert!(matches!(
        e.layer::<ConfigError>(),
        Some(ConfigError::Unreadable { .. })
    ));
    assert!(e.to_string().starts_with("c.toml: "), "{e}");
    // The setting inside the refusal is found by a caller that asks for one.
    let e = ExperimentConfig::parse(
        &GOOD.replace("hashes = [3]", "hashes = []"),
        Path::new("c.toml"),
    )
    .expect_err("empty list");
    assert_eq!(
        e.setting_error().map(|s| s.key.as_str()),
        Some("grid.hashes")
    );
    assert!(ExperimentConfig::parse("name = ", Path::new("c.toml"))
        .expect_err("not TOML")
        .setting_error()
        .is_none());
}
