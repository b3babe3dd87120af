//! Reproductions of the FN paper's §6 claims: the shape of Fig. 2 (against replay) and
//! the accuracy claim of Table 1 (drop-pins vs the renewal bound).

use rbf_data::filter::FilterConfig;
use rbf_data::message::KeyHasher;
use rbf_data::synth::{SynthConfig, Synthesizer};
use rbf_data::workload::{Placement, Workload};
use rbf_observed::replay::{Replay, ReplayOptions};
use rbf_predicted::model::false_negative::{FnModel, Method, RenewalOptions};

/// Six cells with three one-sided checks each: per-interval level 1 - 1e-4 keeps the
/// chance of a sampling-accident failure of the file far below 1 %.
const LEVEL: f64 = 1.0 - 1e-4;

struct Point {
    sigma: u64,
    observed: f64,
    low: f64,
    high: f64,
    renewal: f64,
    lower: f64,
    pins: f64,
}

fn fig2_point(sigma: u64, p_r: f64, seed: u64) -> Point {
    let f = FilterConfig::sigma_bounded(1000, 3, sigma);
    let w = Workload::zipf(1000, 2.0, p_r, Placement::Uniform);
    let model = FnModel::new(&f, &w, 1e-10).unwrap();
    let rep = model
        .evaluate(
            &[Method::Renewal, Method::MarkovLower, Method::DropPins],
            RenewalOptions::default(),
        )
        .unwrap();
    let cycle = rep.renewal.unwrap().arrivals_per_cycle;
    let warmup = 1000 + (20.0 * cycle) as u64;
    let arrivals = ((300.0 * cycle) as u64).clamp(300_000, 4_000_000);
    let s = Synthesizer::new(&SynthConfig {
        workload: w,
        arrivals: warmup - 1000 + arrivals,
        seed,
        prologue: true,
    })
    .unwrap();
    let mut r = Replay::new(
        &f,
        ReplayOptions {
            warmup,
            confidence: LEVEL,
        },
    )
    .unwrap();
    r.run(s.messages(KeyHasher::default()));
    let o = r.report();
    let ci = o.confidence.unwrap().fn_rate;
    let v = |m| rep.get(m).unwrap().fn_rate;
    Point {
        sigma,
        observed: o.fn_rate,
        low: ci.low,
        high: ci.high,
        renewal: v(Method::Renewal),
        lower: v(Method::MarkovLower),
        pins: v(Method::DropPins),
    }
}

/// FN Fig. 2: M = 1000, Q = Zipf(1000, 2); (a) p_r = 1, (b) p_r = 0.5. Shape: the FN
/// rate falls as sigma grows; the renewal bound sits on (just above) replay in both;
/// the lower bound and drop-pins track replay for p_r = 1 but fall well below it for
/// p_r = 0.5, where new arrivals matter (§6.1).
#[test]
fn fig2_shape() {
    let sigmas = [100u64, 200, 300];
    let mut failures = Vec::new();
    for (p_r, seed) in [(1.0, 11u64), (0.5, 12)] {
        let points: Vec<Point> = sigmas
            .iter()
            .enumerate()
            .map(|(i, &s)| fig2_point(s, p_r, seed * 10 + i as u64))
            .collect();
        for p in &points {
            println!(
                "p_r={p_r} sigma={}: observed {:.5} [{:.5}, {:.5}] renewal {:.5} lower {:.5} drop-pins {:.5}",
                p.sigma, p.observed, p.low, p.high, p.renewal, p.lower, p.pins
            );
            let tag = format!("p_r={p_r} sigma={}", p.sigma);
            if p.renewal < p.low || p.renewal > 1.05 * p.high {
                failures.push(format!(
                    "{tag}: renewal {} not on replay {}",
                    p.renewal, p.observed
                ));
            }
            if p.lower > p.high {
                failures.push(format!(
                    "{tag}: lower {} above replay {}",
                    p.lower, p.observed
                ));
            }
            if p_r == 1.0 && (p.pins < 0.95 * p.low || p.pins > 1.05 * p.high) {
                failures.push(format!(
                    "{tag}: drop-pins {} does not track replay {}",
                    p.pins, p.observed
                ));
            }
            if p_r < 1.0 && (p.pins > 0.8 * p.low || p.lower > 0.8 * p.low) {
                failures.push(format!(
                    "{tag}: expected drop-pins {} and lower {} well below replay {}",
                    p.pins, p.lower, p.observed
                ));
            }
        }
        for w in points.windows(2) {
            if w[1].high >= w[0].low {
                failures.push(format!(
                    "p_r={p_r}: observed FN does not fall from sigma {} to {}",
                    w[0].sigma, w[1].sigma
                ));
            }
            if w[1].renewal >= w[0].renewal || w[1].lower >= w[0].lower || w[1].pins >= w[0].pins {
                failures.push(format!(
                    "p_r={p_r}: a model curve does not fall from sigma {} to {}",
                    w[0].sigma, w[1].sigma
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// FN Table 1 claims drop-pins within about 1 % of the renewal bound at M = 10000,
/// k = 5 (the paper's Fig. 3 setting says p_r = 0.9). We find the claim holds for
/// repeat-only workloads (p_r = 1: below 1 % for alpha = 0, 1, 2) and fails once new
/// messages arrive into a skewed Q (p_r <= 0.9 with alpha >= 1: 5 % to 80 % low),
/// because drop-pins draws the recorded set from Q only and ignores that new messages
/// are recorded but rarely repeated. alpha = 2 with p_r = 1 is checked at sigma = 1000
/// only: at sigma = 3000 a cycle lasts about 570,000 arrivals and the bound takes tens
/// of seconds.
#[test]
fn table1_drop_pins_accuracy_conditions() {
    let mut failures = Vec::new();
    for sigma in [1000u64, 2000, 3000] {
        for p_r in [1.0, 0.9, 0.5] {
            for alpha in [0.0, 1.0, 2.0] {
                if p_r == 1.0 && alpha == 2.0 && sigma > 1000 {
                    continue;
                }
                let f = FilterConfig::sigma_bounded(10_000, 5, sigma);
                let w = Workload::zipf(1000, alpha, p_r, Placement::Uniform);
                let model = FnModel::new(&f, &w, 1e-10).unwrap();
                let rep = model
                    .evaluate(
                        &[Method::Renewal, Method::DropPins],
                        RenewalOptions::default(),
                    )
                    .unwrap();
                let r = rep.get(Method::Renewal).unwrap().fn_rate;
                let d = rep.get(Method::DropPins).unwrap().fn_rate;
                let rel = (d - r).abs() / r;
                println!("sigma={sigma} p_r={p_r} alpha={alpha}: renewal {r:.5} drop-pins {d:.5} ({:+.2} %)", 100.0 * (d - r) / r);
                if p_r == 1.0 && rel >= 0.01 {
                    failures.push(format!(
                        "sigma={sigma} p_r=1 alpha={alpha}: {:.2} % apart",
                        rel * 100.0
                    ));
                }
                if p_r < 1.0 && alpha >= 1.0 && rel <= 0.01 {
                    failures.push(format!(
                        "sigma={sigma} p_r={p_r} alpha={alpha}: unexpectedly within 1 %"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
