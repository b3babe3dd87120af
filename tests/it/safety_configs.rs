//! A value in an experiment config is accepted or refused exactly as the same value on
//! the command line: `zipf = nan`, `[grid] memory = [0]` or `hashes = [0]`
//! used to run to exit 0 with every point "not run: invalid setting", where the flag
//! was refused with exit 2. Refusals come before any work and name the config key.

use crate::cli::{rbf, stderr};
use crate::scratch::Scratch;

/// A config with `synthetic` and `grid` lines in their tables.
fn config(synthetic: &str, grid: &str) -> String {
    format!(
        "name = \"c\"\nmeasures = [\"observed\", \"fp-model\"]\n[[synthetic]]\narrivals = 2000\n{synthetic}\n[grid]\n{grid}\n"
    )
}

/// TOML spelling of a hostile value.
fn toml(v: &str) -> String {
    match v {
        "NaN" => "nan".into(),
        other => other.into(),
    }
}

#[test]
fn config_values_are_judged_like_the_flags() {
    let dir = Scratch::new("safe-configs");
    let trace = "t.csv";
    let out = rbf(
        &dir,
        &[
            "synth",
            "--distinct",
            "100",
            "--p-repeat",
            "0.9",
            "--arrivals",
            "2000",
            "-o",
            trace,
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let values = ["0", "-1", "1.5", "NaN", "inf", "1e308", "4294967296", "2"];
    // (config key, its table, the other keys of the table, the command line)
    let synthetic = "distinct = 100\nzipf = 1.0\np_repeat = 0.9";
    let grid = "memory = [2000]\nhashes = [3]\nsigma = [1]";
    let synth = |flag: &str, v: &str| -> Vec<String> {
        let mut a: Vec<String> =
            "synth --distinct 100 --zipf 1 --p-repeat 0.9 --arrivals 2000 -o s.csv"
                .split(' ')
                .map(String::from)
                .collect();
        let at = a.iter().position(|x| x == flag).expect("flag in base");
        a[at + 1] = v.to_string();
        a
    };
    let replay = |flag: &str, v: &str| -> Vec<String> {
        let mut a: Vec<String> = format!("replay {trace} -m 2000 -k 3 --sigma 1")
            .split(' ')
            .map(String::from)
            .collect();
        match a.iter().position(|x| x == flag) {
            Some(at) => a[at + 1] = v.to_string(),
            None => {
                if flag == "--max-inserts" {
                    a.truncate(a.len() - 2); // it replaces --sigma
                }
                a.extend([flag.to_string(), v.to_string()]);
            }
        }
        a
    };
    let mut compared = 0;
    for v in values {
        let t = toml(v);
        let cases: Vec<(&str, String, Vec<String>)> = vec![
            (
                "synthetic.zipf",
                config(
                    &synthetic.replace("zipf = 1.0", &format!("zipf = {t}")),
                    grid,
                ),
                synth("--zipf", v),
            ),
            (
                "synthetic.p_repeat",
                config(
                    &synthetic.replace("p_repeat = 0.9", &format!("p_repeat = {t}")),
                    grid,
                ),
                synth("--p-repeat", v),
            ),
            (
                "synthetic.distinct",
                config(
                    &synthetic.replace("distinct = 100", &format!("distinct = {t}")),
                    grid,
                ),
                synth("--distinct", v),
            ),
            (
                "grid.memory",
                config(synthetic, &grid.replace("[2000]", &format!("[{t}]"))),
                replay("-m", v),
            ),
            (
                "grid.hashes",
                config(synthetic, &grid.replace("[3]", &format!("[{t}]"))),
                replay("-k", v),
            ),
            (
                "grid.phases",
                config(synthetic, &format!("{grid}\nphases = [{t}]")),
                replay("--phases", v),
            ),
            (
                "grid.max_inserts",
                config(
                    synthetic,
                    &format!("{}\nmax_inserts = [{t}]", grid.replace("sigma = [1]", "")),
                ),
                replay("--max-inserts", v),
            ),
        ];
        for (key, cfg, cli) in cases {
            // Values both accept that mean long work are left out: the point is
            // refusals, not a 512 MiB replay or an FP model of N = 2^32 insertions.
            if matches!(key, "grid.memory" | "grid.max_inserts") && v == "4294967296" {
                continue;
            }
            std::fs::write(dir.join("c.toml"), &cfg).unwrap();
            let from_config = rbf(&dir, &["run", "c.toml", "-o", "out", "-q"]);
            let cli: Vec<&str> = cli.iter().map(String::as_str).collect();
            let from_flag = rbf(&dir, &cli);
            let (c, f) = (from_config.status.code(), from_flag.status.code());
            assert!(
                matches!(c, Some(0) | Some(2)) && matches!(f, Some(0) | Some(2)),
                "{key} = {v}: config {c:?} ({}), flag {f:?} ({})",
                stderr(&from_config),
                stderr(&from_flag)
            );
            assert_eq!(
                c,
                f,
                "{key} = {v}: the config {} where the flag {}:\nconfig: {}\nflag: {}",
                if c == Some(0) { "ran" } else { "was refused" },
                if f == Some(0) { "ran" } else { "was refused" },
                stderr(&from_config),
                stderr(&from_flag)
            );
            if c == Some(2) {
                let err = stderr(&from_config);
                let leaf = key.rsplit('.').next().unwrap();
                // A setting names its key; a machine limit says what it needs.
                assert!(
                    err.contains(leaf) || err.contains(" needs "),
                    "{key} = {v}: not named in: {err}"
                );
                assert!(!dir.join("out").exists(), "{key} = {v}: outputs written");
            } else {
                let table = std::fs::read_to_string(dir.join("out/results.csv")).unwrap();
                assert!(
                    !table.contains("not run"),
                    "{key} = {v}: accepted but not run:\n{table}"
                );
                std::fs::remove_dir_all(dir.join("out")).unwrap();
            }
            compared += 1;
        }
    }
    assert!(compared >= 50, "{compared}");
}

#[test]
fn a_grid_with_no_valid_point_is_refused_one_with_some_runs() {
    let dir = Scratch::new("safe-grid-points");
    let synthetic = "distinct = 100\nzipf = 1.0\np_repeat = 0.9";
    std::fs::write(
        dir.join("none.toml"),
        config(synthetic, "memory = [100]\nhashes = [3]\nsigma = [500]"),
    )
    .unwrap();
    let out = rbf(&dir, &["run", "none.toml", "-o", "out"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no point of the grid") && stderr(&out).contains("grid.sigma"),
        "{}",
        stderr(&out)
    );
    std::fs::write(
        dir.join("some.toml"),
        config(
            synthetic,
            "memory = [100, 4000]\nhashes = [3]\nsigma = [500]",
        ),
    )
    .unwrap();
    let out = rbf(&dir, &["run", "some.toml", "-o", "out", "-q"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let table = std::fs::read_to_string(dir.join("out/results.csv")).unwrap();
    assert_eq!(table.matches("not run").count(), 1, "{table}");
}
