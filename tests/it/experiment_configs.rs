//! Every shipped config parses, and a reduced version of it (fewer points, shorter
//! synthetic traces) runs end to end and writes its tables, plots and report.

use std::path::{Path, PathBuf};

use crate::scratch::Scratch;

use rbf_judge::experiment::{self, output, ExperimentConfig, RunOptions};

/// The experiment configs in configs/ (the coverage studies, `coverage*.toml`, are
/// `rbf-bench coverage` files: tests/it/coverage_study.rs checks those).
fn shipped() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("configs/ exists")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("coverage"))
        })
        .collect();
    v.sort();
    v
}

/// Keeps the first two values of every axis and shortens synthetic traces, so the
/// whole suite of configs runs in seconds while exercising every code path they use.
fn reduce(mut c: ExperimentConfig) -> ExperimentConfig {
    fn two<T>(v: &mut Vec<T>) {
        v.truncate(2);
    }
    let g = &mut c.grid;
    g.memory.truncate(1);
    two(&mut g.hashes);
    two(&mut g.sigma);
    two(&mut g.sigma_fraction);
    two(&mut g.target_fp);
    two(&mut g.max_inserts);
    c.seeds.truncate(2);
    c.traces.truncate(1);
    c.synthetic.truncate(2);
    for s in &mut c.synthetic {
        s.distinct = s.distinct.min(1000);
        s.arrivals = s.arrivals.min(40_000);
        s.warmup = None;
    }
    c
}

#[test]
fn every_shipped_config_parses_and_a_reduced_version_runs() {
    let configs = shipped();
    for name in [
        "quickstart.toml",
        "fn-fig2.toml",
        "fn-fig4.toml",
        "fn-fig5.toml",
        "fn-fig6.toml",
        "fn-table1.toml",
        "fp-fig6-7.toml",
        "real-traces.toml",
        "bench-grid.toml",
    ] {
        assert!(
            configs.iter().any(|p| p.ends_with(name)),
            "configs/{name} is missing"
        );
    }
    let out = tempdir("configs");
    for path in configs {
        let config = ExperimentConfig::load(&path)
            .unwrap_or_else(|e| panic!("{} does not parse: {e}", path.display()));
        let small = reduce(config);
        let results = experiment::run(&small, RunOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(results.rows.len(), results.total_points);
        for r in &results.rows {
            assert!(
                !r.notes_text().contains("not run:"),
                "{}: point {} did not run: {}",
                path.display(),
                r.point,
                r.notes_text()
            );
            for m in &small.measures {
                let v = match m {
                    experiment::Measure::Observed => r.observed_fn,
                    experiment::Measure::FpModel => r.fp_model,
                    experiment::Measure::Capacity => r.capacity_sigma,
                    experiment::Measure::Fn(m) => r.value(rbf_judge::compare::Bound::of(*m)),
                };
                assert!(
                    v.is_some_and(f64::is_finite),
                    "{}: point {}: {m:?} missing ({})",
                    path.display(),
                    r.point,
                    r.notes_text()
                );
            }
        }
        let dir = out.join(path.file_stem().expect("stem"));
        let w = output::write(&results, &dir).expect("outputs written");
        for f in [&w.csv, &w.parquet, &w.json, &w.report] {
            assert!(
                f.metadata().map(|m| m.len() > 0).unwrap_or(false),
                "{}",
                f.display()
            );
        }
        assert!(!w.plots.is_empty(), "{}: no plot", path.display());
        crate::svg_layout::check_dir(&dir.join("plots"));
        let report = std::fs::read_to_string(&w.report).expect("report");
        for p in &w.plots {
            let rel = p.strip_prefix(&dir).expect("plot inside output dir");
            assert!(
                report.contains(&rel.display().to_string()),
                "report links {}",
                rel.display()
            );
        }
    }
}

fn tempdir(tag: &str) -> Scratch {
    Scratch::new(&format!("test-{tag}"))
}
