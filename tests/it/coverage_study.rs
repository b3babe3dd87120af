//! A small version of the coverage study (configs/coverage.toml, docs/coverage/): two
//! cells of the FN paper's arrival model with D = 1000 (few messages, so the hash
//! positions move a filter's FN as much as the arrivals do), one and two phases, 40
//! seeds each (a new trace and new hash positions per seed), every interval rbf prints
//! checked against the truth: the exact p_r and S(n), and the long-run FN and FP of
//! replays 10 times longer, averaged over 2 traces x 8 hash seeds. The same seeds
//! through filters with per-cycle positions are checked against that process's own
//! long replays.
//!
//! Tolerance from the sample size: each interval must cover at 98 % or more; with 40
//! seeds a coverage of exactly 98 % gives at most 4 misses with probability 0.998
//! (Binomial(40, 0.02)), so more than 4 misses fails. The
//! conservative bound must be at or above the true-workload bound in at least as many
//! seeds (it claims 99 %). With fixed seeds the outcome is deterministic.

use rbf_judge::experiment::grid::Shard;
use rbf_study::coverage::{self, summary, CoverageConfig};

use super::scratch::Scratch;

const CONFIG: &str = r#"
name = "coverage-ci"
seeds = 40
truth_traces = 2
truth_hash_seeds = 8
truth_length = 10

[[cell]]
name = "bottom-one-phase"
distinct = 1000
zipf = 1.0
p_repeat = 0.9
placement = "bottom"
arrivals = 200000
memory = 8000
hashes = 4
target_fp = 1e-3
per_cycle_seeds = 40

[[cell]]
name = "uniform-two-phase"
distinct = 1000
zipf = 0.8
p_repeat = 0.5
placement = "uniform"
arrivals = 200000
memory = 8000
hashes = 4
target_fp = 1e-3
phases = 2
per_cycle_seeds = 40
"#;

/// The interval rbf prints: the only row of its name, or the one marked printed among
/// the numbers of hash seeds and positions.
fn printed<'a>(c: &'a summary::CellSummary, name: &str) -> &'a summary::Coverage {
    c.rows
        .iter()
        .find(|r| {
            r.interval.starts_with(name)
                && (!r.interval.contains("hash seed") || r.interval.contains("printed"))
        })
        .unwrap_or_else(|| panic!("{}: no row {name}", c.cell))
}

/// Most misses of 40 when the coverage is 98 %, at probability 0.998.
const MAX_MISSES: u64 = 4;

#[test]
fn printed_intervals_hold_their_level_on_a_small_study() {
    let dir = Scratch::new("coverage-study");
    let config: CoverageConfig = toml::from_str(CONFIG).expect("config");
    config.validate().expect("valid");
    coverage::run(&config, &dir, Shard::ALL, false).expect("study runs");
    let cells = coverage::write_summary(&config, &dir).expect("summary");
    let md = std::fs::read_to_string(dir.join("summary.md")).expect("summary.md");
    eprintln!("{md}");
    assert_eq!(cells.len(), 2);
    for c in &cells {
        assert_eq!(c.seeds, 40, "{}", c.cell);
        assert!(c.truth.is_some(), "{}: no truth", c.cell);
        assert!(
            c.mean_cycles >= 30.0,
            "{}: {} cycles per seed",
            c.cell,
            c.mean_cycles
        );
        assert_eq!(c.point_outside_interval, 0, "{}", c.cell);
        for name in [
            "observed FN",
            "observed FP count-instance",
            "p_r",
            "S at the median distance",
            "reuse band",
            "conservative bound",
        ] {
            let r = printed(c, name);
            assert_eq!(r.seeds + r.without, 40, "{}: {name}", c.cell);
            assert!(
                r.seeds >= 38,
                "{}: {name}: {} without an interval",
                c.cell,
                r.without
            );
            assert!(
                r.seeds - r.covered <= MAX_MISSES,
                "{}: {}: {} of {} covered",
                c.cell,
                r.interval,
                r.covered,
                r.seeds
            );
        }
    }
    // The observed intervals rbf prints are the per-cycle filters' (checked above),
    // judged against their own process's long-run rates (one salted long replay per
    // truth trace); the fixed-position filters' 4-hash-seed intervals are also judged
    // against the seeds' pooled mean.
    for c in &cells {
        assert!(c.salted_fn.is_some() && c.salted_fp.is_some(), "{}", c.cell);
        for name in ["observed FN", "observed FP count-instance"] {
            let r = printed(c, name);
            assert_eq!(
                r.interval,
                format!("{name}, per-cycle positions (4 hash seeds, printed)")
            );
        }
        let pooled: Vec<_> = c
            .rows
            .iter()
            .filter(|r| r.interval.ends_with("against the 40 seeds' pooled mean"))
            .collect();
        assert_eq!(pooled.len(), 2, "{}", c.cell);
        assert!(pooled
            .iter()
            .all(|r| r.interval.contains("fixed positions (4 hash seeds)")));
        assert!(pooled.iter().all(|r| r.seeds == 40), "{}", c.cell);
    }
    // Records are resumable: a second run finds every unit done and changes nothing.
    let before = std::fs::read_to_string(dir.join("records/shard-0-of-1.jsonl")).unwrap();
    coverage::run(&config, &dir, Shard::ALL, false).expect("resume");
    let after = std::fs::read_to_string(dir.join("records/shard-0-of-1.jsonl")).unwrap();
    assert_eq!(before, after);
}

/// The shipped studies (configs/coverage*.toml, which the experiment-config test leaves
/// to this file) load and validate.
#[test]
fn shipped_studies_load() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    let mut found = 0;
    for e in std::fs::read_dir(&dir).expect("configs/") {
        let p = e.expect("entry").path();
        let name = p.file_name().expect("name").to_string_lossy().to_string();
        if !(name.starts_with("coverage") && name.ends_with(".toml")) {
            continue;
        }
        let c = CoverageConfig::load(&p).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!c.cells.is_empty(), "{name}: no cell");
        found += 1;
    }
    assert!(
        found >= 2,
        "configs/coverage.toml and coverage-corner.toml: {found} found"
    );
}

/// A cell's `observed_seeds` adds observed replays beyond the study's seeds, never fits;
/// fewer than the study's seeds is an error that names the key.
#[test]
fn observed_seeds_add_replays_not_fits() {
    use rbf_study::coverage::Unit;
    let text = CONFIG.replacen(
        "target_fp = 1e-3\n",
        "target_fp = 1e-3\nobserved_seeds = 100\n",
        1,
    );
    let config: CoverageConfig = toml::from_str(&text).expect("config");
    config.validate().expect("valid");
    let count = |cell: usize| {
        let units = coverage::units(&config);
        let observed = units
            .iter()
            .filter(|u| matches!(u, Unit::Observed { cell: c, .. } if *c == cell))
            .count();
        let fits = units
            .iter()
            .filter(|u| matches!(u, Unit::Fit { cell: c, .. } if *c == cell))
            .count();
        (observed, fits)
    };
    assert_eq!(count(0), (100, 40));
    assert_eq!(count(1), (40, 40));

    let text = CONFIG.replacen(
        "target_fp = 1e-3\n",
        "target_fp = 1e-3\nobserved_seeds = 20\n",
        1,
    );
    let config: CoverageConfig = toml::from_str(&text).expect("config");
    let err = config.validate().expect_err("fewer than seeds").to_string();
    assert!(
        err.contains("cell `bottom-one-phase`: observed_seeds") && err.contains("(40)"),
        "{err}"
    );
}
