//! The renewal argument on a trace's own recycles (`rbf_observed::trace_renewal`, the
//! renewal-trace bound, docs/TRACE-BOUND.md), checked against exact replay.
//!
//! Nothing here copies a number from the program's output. What is asserted:
//!
//! * the identity behind it: on a non-stationary trace (regime switches, scans, packet
//!   trains), the paths' mean equals the mean FN of filters that draw new hash positions
//!   at every recycle (the hash model the argument assumes), over many hash seeds,
//!   within a tolerance from both sample sizes; with two phases (shared, fixed
//!   positions: the default) the mean is at or above the replays' (frozen-half luck is
//!   left out, which only raises it);
//! * the bound is a prediction limit for one filter: over 64 filters, at most the
//!   number of exceedances a 99 % limit allows (binomial, 1e-4 false-alarm);
//! * where a stationary model's bound lies below the trace's own recycles, it loses its
//!   standing in `rbf compare`, saying why.

use std::process::Command;

use rbf_data::filter::{FilterConfig, Positions};
use rbf_data::synth::Rng;
use rbf_judge::compare::{Observed, Rate};
use rbf_observed::replay::{ReplayOptions, Replays};
use rbf_observed::trace_renewal::{TraceBound, TraceRenewal};

/// A trace that no stationary model describes: Zipf phases on working sets that move,
/// round-robin scans over keys larger than a cycle, and packet trains.
pub(crate) fn hostile_trace(seed: u64, arrivals: usize) -> Vec<u64> {
    let mut rng = Rng::seed(seed);
    let mut out = Vec::with_capacity(arrivals);
    let mut base = 0u64;
    let mut regime = 0u64;
    while out.len() < arrivals {
        match regime % 3 {
            0 => {
                // Zipf-like: rank = floor(n^u) over a working set that shifts by half.
                let n = 3000.0f64;
                for _ in 0..20_000 {
                    let rank = n.powf(rng.next_f64()) as u64;
                    out.push(base + rank);
                }
                base += 1500;
            }
            1 => {
                // A scan, twice round: every key's reuse distance is the scan's length.
                let len = 1000 + rng.below(3000);
                for _ in 0..2 {
                    for i in 0..len {
                        out.push((1 << 40) + (regime << 20) + i);
                    }
                }
            }
            _ => {
                // Packet trains: 40 flows at a time, geometric lengths.
                let mut live: Vec<(u64, u64)> = Vec::new();
                let mut next = (2u64 << 40) + (regime << 20);
                for _ in 0..15_000 {
                    while live.len() < 40 {
                        live.push((next, 1 + rng.below(40)));
                        next += 1;
                    }
                    let i = rng.below(live.len() as u64) as usize;
                    out.push(live[i].0);
                    live[i].1 -= 1;
                    if live[i].1 == 0 {
                        live.swap_remove(i);
                    }
                }
            }
        }
        regime += 1;
    }
    out.truncate(arrivals);
    out
}

/// Packet trains only: 40 flows at a time, geometric lengths, a third of new flows
/// an old one returning. Few non-repeats, most of them flows that straddle a recycle,
/// where what the recycle's trigger does (retained or not) is a large part of them.
fn trains(seed: u64, arrivals: usize) -> Vec<u64> {
    let mut rng = Rng::seed(seed);
    let mut out = Vec::with_capacity(arrivals);
    let mut live: Vec<(u64, u64)> = Vec::new();
    let mut next = 0u64;
    while out.len() < arrivals {
        while live.len() < 40 {
            let flow = if next > 100 && rng.below(3) == 0 {
                rng.below(next)
            } else {
                next += 1;
                next
            };
            live.push((flow, 1 + rng.below(30)));
        }
        let i = rng.below(live.len() as u64) as usize;
        out.push(live[i].0);
        live[i].1 -= 1;
        if live[i].1 == 0 {
            live.swap_remove(i);
        }
    }
    out
}

fn trace_bound(filter: &FilterConfig, keys: &[u64], warmup: u64) -> TraceBound {
    let mut t = TraceRenewal::new(filter, warmup).expect("covered");
    for chunk in keys.chunks(4096) {
        t.run_keys(chunk);
    }
    t.finish().expect("measured arrivals")
}

/// Observed FN per arrival (over complete cycles, as every output states it) of one
/// filter per seed.
fn observed(filter: &FilterConfig, keys: &[u64], warmup: u64, seeds: u64) -> Vec<f64> {
    (1..=seeds)
        .map(|seed| {
            let mut f = filter.clone();
            f.seed = seed;
            let mut r = Replays::new(
                &f,
                ReplayOptions {
                    warmup,
                    confidence: 0.99,
                },
                1,
            )
            .expect("a valid filter");
            for chunk in keys.chunks(4096) {
                r.run_keys(chunk);
            }
            Observed::of_one(&r.report(), Rate::Fn).rate
        })
        .collect()
}

fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    (
        m,
        (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt(),
    )
}

/// The paths against `seeds` replays of `filter` on `keys`: the paths' mean and the
/// replays' mean, the standard error of their difference (independent draws on both
/// sides: `seeds` filters, 32 paths), and how many filters lie above the bound.
struct Against {
    paths: f64,
    replays: f64,
    se: f64,
    above: usize,
}

fn against(filter: &FilterConfig, keys: &[u64], seeds: u64) -> Against {
    let obs = observed(filter, keys, 0, seeds);
    let (m, sd) = mean_sd(&obs);
    let b = trace_bound(filter, keys, 0);
    assert!(b.over_complete_cycles);
    assert!(
        m > 0.0 && b.estimate > 0.0,
        "the trace must give false negatives"
    );
    Against {
        paths: b.estimate,
        replays: m,
        se: ((sd * sd) / seeds as f64 + (b.sd * b.sd) / 32.0).sqrt(),
        above: obs.iter().filter(|&&x| x > b.upper).count(),
    }
}

#[test]
fn the_paths_mean_is_the_hash_averaged_fn_of_a_non_stationary_trace() {
    let mut one = FilterConfig::sigma_bounded(4096, 4, 1228);
    one.positions = Some(Positions::PerCycle);
    for (name, keys) in [
        ("regimes", hostile_trace(11, 150_000)),
        ("trains", trains(13, 200_000)),
    ] {
        let a = against(&one, &keys, 64);
        assert!(
            (a.paths - a.replays).abs() <= 4.0 * a.se,
            "{name}: paths {:.5e} against replays {:.5e} (standard error {:.2e})",
            a.paths,
            a.replays,
            a.se
        );
        // The limit is for one filter: a 99 % limit exceeded by more than 6 of 64
        // filters happens with probability below 1e-4 when it holds.
        assert!(a.above <= 6, "{name}: {} of 64 filters above", a.above);
    }
}

#[test]
fn two_phases_with_shared_positions_stay_at_or_below_the_paths() {
    let mut two = FilterConfig::sigma_bounded(4096, 4, 614);
    two.phases = 2;
    two.positions = Some(Positions::Fixed);
    let a = against(&two, &hostile_trace(12, 150_000), 48);
    assert!(
        a.paths >= a.replays - 4.0 * a.se,
        "paths {:.5e} below replays {:.5e} (standard error {:.2e})",
        a.paths,
        a.replays,
        a.se
    );
    assert!(a.above <= 5, "{} of 48 filters above", a.above);
}

#[test]
fn a_stationary_bound_below_the_trace_own_recycles_loses_its_standing() {
    // Round-robin scans of 2 000 keys (longer than a cycle of 355 attempts: every
    // arrival after the first round is a non-repeat) between long runs of two keys:
    // the reuse profile the fitted model reads is dominated by the two keys, and its
    // renewal bound is a fifth of what happens.
    let dir = crate::scratch::Scratch::new("trace-bound-rr");
    let mut text = String::new();
    for _ in 0..3 {
        for _ in 0..5 {
            for i in 0..2000 {
                text.push_str(&format!("a{i}\n"));
            }
        }
        for i in 0..100_000 {
            text.push_str(&format!("b{}\n", i % 2));
        }
    }
    let path = dir.join("rr.txt");
    std::fs::write(&path, text).expect("scratch is writable");
    let out = Command::new(env!("CARGO_BIN_EXE_rbf"))
        .args([
            "compare", "--format", "lines", "--memory", "4096", "--hashes", "4",
        ])
        .args(["--sigma", "1228", "--json", "-q"])
        .arg(&path)
        .output()
        .expect("the rbf binary runs");
    let j = crate::cli::json_of(&out);
    let observed = j["observed_fn"].as_f64().expect("observed FN");
    let model = |name: &str| {
        j["models"]
            .as_array()
            .expect("models")
            .iter()
            .find(|m| m["bound"] == name)
            .unwrap_or_else(|| panic!("{name} in {j}"))
            .clone()
    };
    let renewal = model("renewal");
    let value = renewal["value"].as_f64().expect("value");
    // The premise: the stationary bound is far below what happened.
    assert!(value < 0.5 * observed, "{value} against {observed}");
    assert_eq!(renewal["standing"], "not-proven", "{renewal}");
    let note = renewal["note"].as_str().expect("note");
    assert!(note.contains("below this trace's own recycles"), "{note}");
    let trace = model("renewal-trace");
    assert_eq!(trace["standing"], "this-trace");
    assert!(
        trace["value"].as_f64().expect("value") >= observed,
        "{trace}"
    );
    assert_ne!(trace["verdict"], "violated");
}
