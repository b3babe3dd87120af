//! The experiment runner's side-by-side columns, checked against the theory on the
//! paper's own arrival model: the renewal bound is at or above the observed FN
//! interval (a t-interval over seeds, so the margin comes from the sample), the
//! Markov lower bound at or below it where it is proven, and where a "bound" is not
//! proven the row says so.

use std::path::Path;

use rbf_judge::compare::{Bound, BoundVerdict, Regime, Standing};
use rbf_judge::experiment::{self, ExperimentConfig, RunOptions};
use rbf_predicted::model::false_negative::Method;

const CONFIG: &str = r#"
name = "bounds"
seeds = [1, 2, 3, 4, 5]
confidence = 0.99
measures = ["observed", "renewal", "markov-lower", "drop-pins"]

[[synthetic]]
name = "p_r=1"
distinct = 500
zipf = 2.0
p_repeat = 1.0
arrivals = 60000

[[synthetic]]
name = "p_r=0.9"
distinct = 500
zipf = 1.0
p_repeat = 0.9
arrivals = 60000

[grid]
memory = [1000, 2000]
hashes = [3]
sigma_fraction = [0.3, 0.6]
phases = [1]
"#;

#[test]
fn renewal_holds_and_unproven_bounds_are_flagged() {
    let c = ExperimentConfig::parse(CONFIG, Path::new("bounds.toml")).expect("parses");
    let results = experiment::run(&c, RunOptions::default()).expect("runs");
    assert_eq!(results.rows.len(), 2 * 2 * 2);
    let mut checked = 0;
    let mut nonzero = 0;
    for r in &results.rows {
        let observed = r.observed_fn.expect("observed");
        let ren = r.model(Bound::of(Method::Renewal)).expect("renewal");
        // A point whose replays have too few cycles for an interval (a filter that
        // never recycles with p_r = 1) judges no bound, and says why.
        let (Some(low), Some(high)) = (r.observed_fn_low, r.observed_fn_high) else {
            assert!(
                r.notes_text().contains("too few cycles"),
                "point {}",
                r.point
            );
            assert_eq!(ren.standing, Standing::NotJudged, "point {}", r.point);
            assert_eq!(ren.verdict, None, "point {}", r.point);
            assert!(ren.note.starts_with("too few cycles"), "point {}", r.point);
            continue;
        };
        let renewal = ren.value;
        if observed > 0.0 {
            nonzero += 1;
        }
        // With p_r = 1 a filter whose D messages may not fill sigma bits has cycles that
        // the model lets run forever: the number is then not called a bound for a real
        // filter (fixed hash positions), and the row says why.
        if r.source == "p_r=1" && ren.standing == Standing::NotProven {
            assert!(ren.note.contains("fixed"), "point {}", r.point);
        } else {
            assert_eq!(ren.standing, Standing::Proven, "point {}", r.point);
        }
        // The bound is on the steady-state average; a replay with a handful of
        // recycles measures the transient after the prologue, and says so.
        let notes = r.notes_text();
        if r.cycles.unwrap_or(0.0) < 10.0 {
            assert!(notes.contains("transient"), "point {}: {notes}", r.point);
            // Its verdict is reported, but apart from the steady-state ones.
            assert!(
                ren.verdict_in(Regime::Transient).is_some(),
                "point {}",
                r.point
            );
            assert_eq!(ren.verdict_in(Regime::Steady), None, "point {}", r.point);
            continue;
        }
        checked += 1;
        {
            assert!(
                renewal >= low,
                "point {} ({}, M={}, sigma={:?}): renewal {renewal:.4e} below observed interval low {low:.4e}",
                r.point,
                r.source,
                r.memory,
                r.sigma
            );
            // Never violated; `holds` only when the whole interval is below the bound.
            let v = ren
                .verdict_in(Regime::Steady)
                .expect("steady-state verdict");
            assert_ne!(v, BoundVerdict::Violated, "point {}", r.point);
            assert_eq!(
                v == BoundVerdict::Holds,
                renewal >= high,
                "point {}",
                r.point
            );
        }
        let lower = r
            .model(Bound::of(Method::MarkovLower))
            .expect("markov lower bound");
        if r.source == "p_r=1" {
            let v = lower.verdict_in(Regime::Steady);
            assert_ne!(
                v,
                Some(BoundVerdict::Violated),
                "point {}: {notes}",
                r.point
            );
            assert_eq!(lower.standing, Standing::Proven, "point {}", r.point);
        } else {
            assert_eq!(lower.standing, Standing::NotProven, "point {}", r.point);
            assert!(
                lower.note.contains("p_r < 1"),
                "point {}: {}",
                r.point,
                lower.note
            );
            assert!(
                rbf_judge::experiment::tables::notes_text(r).contains("markov-lower (not proven)"),
                "point {}: the CSV's notes say why",
                r.point
            );
        }
    }
    assert!(
        nonzero >= 5,
        "the grid should produce false negatives to test against"
    );
    assert!(checked >= 4, "too few points in steady state: {checked}");
}
