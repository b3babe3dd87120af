//! The level of the fit's goodness-of-fit test, and whether its ranges hold the truth,
//! on traces drawn from the FN paper's arrival model itself (issue 38; docs/FIT.md).
//!
//! ```sh
//! cargo run --release --example fit_level -- [--cells N] [--first C] [--seeds S] [--only C,C,...]
//!     [--methods-up-to D] [--no-methods]
//! ```
//!
//! `--only` runs just the listed cells (to measure the level on a few with more seeds);
//! `--methods-up-to D` evaluates the methods on cells of D up to that (default 10^4);
//! `--no-methods` skips the FN methods (the level and the range of D only: evaluating
//! every method on alternatives of millions of ranks takes minutes per trace).
//!
//! For each cell of a grid (Zipf exponent, D, p_r, placement, trace length; drawn
//! deterministically, cell by cell) and each seed, it synthesises a trace with
//! `rbf_data::synth`, fits it with `rbf_observed::fit`, and records: whether the fit passes its own
//! 99 % test, whether the *true* workload passes the same test, the fitted D and the
//! range of D the fit says the trace allows, and (D <= 10^4, or `--methods-up-to`)
//! every Q-based FN method, on a one-phase and a two-phase filter, on the fitted and on
//! the true workload. A method is counted as `rbf compare` states it
//! ([`Range::pins`]): where its range over the fit and the alternatives is narrow it is a
//! point, which must be within 5 % of the true workload's; elsewhere a range, which must
//! hold the true value (exactly, and as printed, ends rounded outward to two digits).
//! It prints one markdown row per cell and a summary; nothing here is tuned: the cells
//! and seeds are fixed in advance.

use rbf_data::filter::FilterConfig;
use rbf_data::message::KeyHasher;
use rbf_data::synth::{Rng, SynthConfig, Synthesizer};
use rbf_data::workload::{Placement, Workload};
use rbf_judge::compare::Range;
use rbf_judge::report::fit::IDENTIFIED;
use rbf_judge::report::verdicts::outward_value;
use rbf_observed::fit::min_distance::{test_member, Family};
use rbf_observed::fit::{fit, FitOptions};
use rbf_predicted::model::false_negative::{FnModel, Method, RenewalOptions};

#[derive(Clone, Debug)]
struct Cell {
    alpha: f64,
    distinct: usize,
    p_r: f64,
    placement: &'static str,
    arrivals: u64,
}

const ALPHAS: [f64; 5] = [0.5, 0.7, 0.9, 1.1, 1.3];
const DISTINCTS: [usize; 4] = [1_000, 10_000, 100_000, 1_000_000];
const P_RS: [f64; 5] = [0.5, 0.7, 0.9, 0.98, 1.0];
const PLACEMENTS: [&str; 4] = ["top", "bottom", "uniform", "segments"];
const SEGMENT_WEIGHTS: [f64; 4] = [0.4, 0.3, 0.2, 0.1];

fn cell(c: u64) -> Cell {
    let mut r = Rng::seed(0x5eed_0000 + c);
    let distinct = DISTINCTS[r.below(4) as usize];
    // 10^5 to 10^7 arrivals, at least 20 per message of D.
    let arrivals = [100_000u64, 1_000_000, 3_000_000, 10_000_000][r.below(4) as usize]
        .max(20 * distinct as u64)
        .min(10_000_000);
    Cell {
        alpha: ALPHAS[r.below(5) as usize],
        distinct,
        p_r: P_RS[r.below(5) as usize],
        placement: PLACEMENTS[r.below(4) as usize],
        arrivals,
    }
}

fn placement(name: &str) -> Placement {
    match name {
        "top" => Placement::Top,
        "bottom" => Placement::Bottom,
        "uniform" => Placement::Uniform,
        _ => Placement::Segments(SEGMENT_WEIGHTS.to_vec()),
    }
}

fn truth(c: &Cell) -> Family {
    let mut t = Family::zipf_uniform(c.distinct as f64, c.alpha);
    match c.placement {
        "top" => (t.top, t.segments) = (1.0, [0.0; 4]),
        "bottom" => (t.bottom, t.segments) = (1.0, [0.0; 4]),
        "segments" => t.segments = SEGMENT_WEIGHTS,
        _ => {}
    }
    t
}

#[derive(Default)]
struct Tally {
    runs: u32,
    fit_rejected: u32,
    truth_rejected: u32,
    identified: u32,
    identified_d_within: u32,
    truth_in_range: u32,
    /// Methods stated as a point, and those within 5 % of the true workload's.
    methods_checked: u32,
    methods_within: u32,
    methods_in_range: u32,
    /// Inside the range as `rbf compare` prints it (ends rounded outward to two digits).
    methods_in_printed: u32,
    methods_ranged: u32,
    seconds: f64,
    /// Evaluating the methods on the fit and its alternatives (what `rbf compare` adds).
    method_seconds: f64,
}

fn methods() -> Vec<Method> {
    Method::ALL
        .into_iter()
        .filter(|m| m.reads_popularity())
        .collect()
}

fn evaluate(filter: &FilterConfig, w: &Workload) -> Vec<f64> {
    evaluate_model(FnModel::new(filter, w, 1e-10))
}

/// [`evaluate`] of an alternative workload as `rbf compare` evaluates it, for a range
/// end ([`FnModel::for_range_end`]).
fn evaluate_range_end(filter: &FilterConfig, w: &Workload) -> Vec<f64> {
    evaluate_model(FnModel::new(filter, w, 1e-10).map(FnModel::for_range_end))
}

fn evaluate_model(model: rbf_foundations::error::Result<FnModel>) -> Vec<f64> {
    model
        .and_then(|m| m.evaluate(&methods(), RenewalOptions::default()))
        .map(|r| r.results.iter().map(|x| x.fn_rate).collect())
        .unwrap_or_default()
}

fn run(c: &Cell, seed: u64, with_methods: bool, max_method_d: usize, t: &mut Tally) {
    let w = Workload::zipf(c.distinct, c.alpha, c.p_r, placement(c.placement));
    let s = Synthesizer::new(&SynthConfig {
        workload: w.clone(),
        arrivals: c.arrivals,
        seed,
        prologue: true,
    })
    .expect("valid cell");
    let warmup = c.distinct as u64 + c.arrivals / 5;
    let clock = std::time::Instant::now();
    let f = fit(
        FitOptions {
            warmup,
            ..FitOptions::default()
        },
        s.messages(KeyHasher::default()),
    )
    .expect("fit");
    t.seconds += clock.elapsed().as_secs_f64();
    t.runs += 1;
    let check = f.q_check.clone().expect("checked");
    let truth_check = test_member(&f.observed, f.summary.p_repeat, &truth(c));
    t.truth_rejected += u32::from(!truth_check.fits);
    if !check.fits {
        t.fit_rejected += 1;
        return;
    }
    let d = f.summary.model_distinct;
    let (lo, hi) = check.distinct_range.unwrap_or((d, d));
    t.truth_in_range += u32::from(lo <= c.distinct && c.distinct <= hi);
    let identified = check.identifies_distinct(d, IDENTIFIED);
    if identified {
        t.identified += 1;
        t.identified_d_within += u32::from((d as f64 / c.distinct as f64 - 1.0).abs() <= 0.1);
    }
    if with_methods && c.distinct <= max_method_d {
        for filter in filters(c.distinct) {
            judge_methods(&filter, &w, &f, &check, seed, t);
        }
    }
}

/// The filters the methods are judged on: 8 bits per message of D, k = 4, sigma at
/// 40 % of a filter array's bits (the methods far from 0 and 1), one phase and two
/// (each half M/2 bits).
fn filters(distinct: usize) -> [FilterConfig; 2] {
    let m = 8 * distinct as u64;
    let one = FilterConfig::sigma_bounded(m, 4, m * 2 / 5);
    let two = FilterConfig {
        phases: 2,
        ..FilterConfig::sigma_bounded(m, 4, m / 5)
    };
    [one, two]
}

/// Every Q-based method on the true workload `w`, the fit and its alternatives, on one
/// filter: where the method's own range is narrow ([`Range::pins`], so `rbf compare`
/// states it as a point), the fit within 5 % of the truth; elsewhere the truth inside
/// the range the alternatives span.
fn judge_methods(
    filter: &FilterConfig,
    w: &Workload,
    f: &rbf_observed::fit::Fit,
    check: &rbf_observed::fit::adequacy::QFitCheck,
    seed: u64,
    t: &mut Tally,
) {
    let d = f.summary.model_distinct;
    let truth = evaluate(filter, w);
    let clock = std::time::Instant::now();
    let fitted = evaluate(filter, &f.workload().expect("fitted workload"));
    let alternatives: Vec<Vec<f64>> = check
        .alternatives
        .iter()
        .map(|a| evaluate_range_end(filter, a))
        .collect();
    t.method_seconds += clock.elapsed().as_secs_f64();
    let detail = std::env::var_os("FIT_LEVEL_DETAIL").is_some();
    for (i, (a, b)) in fitted.iter().zip(&truth).enumerate() {
        let lo = alternatives.iter().map(|v| v[i]).fold(*a, f64::min);
        let hi = alternatives.iter().map(|v| v[i]).fold(*a, f64::max);
        if detail {
            eprintln!(
                "seed {seed} phases {} D {d} range {lo_d}-{hi_d} alternatives {:?}; {:?}: true {b:.4e} fitted {a:.4e} range [{lo:.4e}, {hi:.4e}]",
                filter.phases,
                check.alternatives.iter().map(|a| a.distinct()).collect::<Vec<_>>(),
                methods()[i],
                lo_d = check.distinct_range.map_or(0, |r| r.0),
                hi_d = check.distinct_range.map_or(0, |r| r.1),
            );
        }
        if (Range { low: lo, high: hi }).pins(*a) {
            t.methods_checked += 1;
            // Written without a ratio: at p_r = 1 most methods are exactly 0 on both
            // workloads (no new messages, no loss), and 0 / 0 is not a miss.
            t.methods_within += u32::from((a - b).abs() <= 0.05 * b.abs());
        } else {
            t.methods_ranged += 1;
            t.methods_in_range += u32::from(lo <= *b * 1.0000001 && *b <= hi * 1.0000001);
            let (lo, hi) = (outward_value(lo, false), outward_value(hi, true));
            t.methods_in_printed += u32::from(lo <= *b && *b <= hi);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str, default: u64| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let cells = arg("--cells", 64);
    let seeds = arg("--seeds", 3);
    let first = arg("--first", 0);
    let with_methods = !args.iter().any(|a| a == "--no-methods");
    let max_method_d = arg("--methods-up-to", 10_000) as usize;
    let only: Vec<u64> = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .map(|v| v.split(',').filter_map(|c| c.trim().parse().ok()).collect())
        .unwrap_or_else(|| (first..first + cells).collect());
    println!("| cell | Zipf | D | p_r | placement | arrivals | fit rejected | truth rejected | identified (D within 10 %) | truth D in range | methods within 5 % (stated as a point) | true method in its range (stated as a range; as printed) | fit s (mean) |");
    println!("|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut all = Tally::default();
    for c in only {
        let cell = cell(c);
        let mut t = Tally::default();
        for seed in 0..seeds {
            run(&cell, 1000 * c + seed, with_methods, max_method_d, &mut t);
        }
        println!(
            "| {c} | {} | {} | {} | {} | {} | {}/{} | {}/{} | {} ({}) | {}/{} | {}/{} | {}/{} ({}) | {:.1} |",
            cell.alpha, cell.distinct, cell.p_r, cell.placement, cell.arrivals,
            t.fit_rejected, t.runs, t.truth_rejected, t.runs, t.identified, t.identified_d_within,
            t.truth_in_range, t.runs - t.fit_rejected, t.methods_within, t.methods_checked,
            t.methods_in_range, t.methods_ranged, t.methods_in_printed,
            t.seconds / t.runs.max(1) as f64
        );
        all.runs += t.runs;
        all.fit_rejected += t.fit_rejected;
        all.truth_rejected += t.truth_rejected;
        all.identified += t.identified;
        all.identified_d_within += t.identified_d_within;
        all.truth_in_range += t.truth_in_range;
        all.methods_checked += t.methods_checked;
        all.methods_within += t.methods_within;
        all.methods_ranged += t.methods_ranged;
        all.methods_in_range += t.methods_in_range;
        all.methods_in_printed += t.methods_in_printed;
        all.seconds += t.seconds;
        all.method_seconds += t.method_seconds;
    }
    println!(
        "\ntotal: {} traces; fit rejected {} ({:.1} %); true workload rejected {} ({:.1} %); D identified {} (within 10 %: {}); true D in the printed range {}/{}; methods stated as a point within 5 % {}/{}; true method inside its range where stated as a range {}/{} (inside the range as printed, ends to two digits: {}); fit time {:.0} s; methods on the fits and alternatives {:.0} s",
        all.runs,
        all.fit_rejected,
        100.0 * all.fit_rejected as f64 / all.runs.max(1) as f64,
        all.truth_rejected,
        100.0 * all.truth_rejected as f64 / all.runs.max(1) as f64,
        all.identified,
        all.identified_d_within,
        all.truth_in_range,
        all.runs - all.fit_rejected,
        all.methods_within,
        all.methods_checked,
        all.methods_in_range,
        all.methods_ranged,
        all.methods_in_printed,
        all.seconds,
        all.method_seconds
    );
}
