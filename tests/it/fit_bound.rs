//! The renewal bound from the FITTED workload against the bound from the TRUE
//! workload, on synthetic traces drawn from the FN paper's arrival model: a small
//! version of configs/fit-grid.toml (docs/FIT.md has the full grid).
//!
//! The fit gives the renewal bound its U_j through the measured reuse profile
//! (U_j = S(j - 1), docs/FIT.md), so under the model the fitted bound converges to the
//! true one. What is asserted per cell, for cells with at least 10 recycles (the
//! models describe the steady state):
//!
//! * the fitted bound is within 3 % of the true one (the fit's criterion, stated for
//!   2 M arrivals; here 400 k, where the sampling error of S is about 2.2 times larger
//!   and the measured error stays below 1 %);
//! * the true bound is at most the conservative one: the conservative end uses the
//!   upper end of the band of S, simultaneous over every knot, and the worst case over
//!   p_r's whole interval, both at 99.5 %, so a true bound above it has probability at
//!   most 1 % per cell (docs/coverage measures it);
//! * the conservative bound is at or above the lower end of the observed FN's 99 %
//!   interval, and at or above the point estimate.

use rbf_data::filter::FilterConfig;
use rbf_data::message::KeyHasher;
use rbf_data::synth::{SynthConfig, Synthesizer};
use rbf_data::workload::{Placement, Workload};
use rbf_judge::compare::judge::conservative_renewal;
use rbf_judge::compare::observe;
use rbf_observed::fit::FitOptions;
use rbf_observed::replay::ReplayOptions;
use rbf_predicted::model::false_negative::{FnModel, RenewalOptions};

const D: usize = 1000;
const ARRIVALS: u64 = 400_000;
const WARMUP: u64 = D as u64 + ARRIVALS / 10;
const EPS: f64 = 1e-10;

fn renewal(filter: &FilterConfig, w: &Workload) -> f64 {
    FnModel::new(filter, w, EPS)
        .expect("modelled variant")
        .renewal(RenewalOptions {
            eps: EPS,
            ..RenewalOptions::default()
        })
        .expect("renewal bound")
        .fn_upper
}

fn cell(alpha: f64, p_r: f64, placement: &str, filters: &[FilterConfig], seed: u64) {
    let truth = Workload::zipf(
        D,
        alpha,
        p_r,
        Placement::parse(placement).expect("placement"),
    );
    for filter in filters {
        let synth = Synthesizer::new(&SynthConfig {
            workload: truth.clone(),
            arrivals: ARRIVALS,
            seed,
            prologue: true,
        })
        .expect("valid workload");
        let obs = observe(
            filter,
            ReplayOptions {
                warmup: WARMUP,
                confidence: 0.99,
            },
            rbf_observed::replay::DEFAULT_HASH_SEEDS,
            FitOptions {
                window: 4 * D as u64,
                ..FitOptions::default()
            },
            None,
            false,
            synth.messages(KeyHasher::default()),
        )
        .expect("replay and fit");
        let label = format!(
            "Zipf {alpha}, p_r {p_r}, {placement}, {}",
            filter.describe()
        );
        let r = &obs.replay;
        assert!(r.cycles >= 10, "{label}: only {} cycles", r.cycles);
        let observed = rbf_judge::compare::Observed::of_one(r, rbf_judge::compare::Rate::Fn);
        let low = observed.interval.expect("an interval with 10 cycles").low;
        let true_bound = renewal(filter, &truth);
        let fitted = renewal(filter, &obs.fit.workload().expect("fitted workload"));
        let conservative = conservative_renewal(
            filter,
            &obs.fit.conservative_workloads().expect("workloads"),
            EPS,
        )
        .expect("conservative renewal")
        .expect("a reuse profile")
        .0
        .fn_upper;
        let err = fitted / true_bound - 1.0;
        eprintln!(
            "{label}: observed {:.4} (low {low:.4}), true {true_bound:.4}, fitted {fitted:.4} ({:+.2} %), conservative {conservative:.4}",
            observed.rate,
            100.0 * err
        );
        assert!(err.abs() <= 0.03, "{label}: fitted / true - 1 = {err:+.4}");
        assert!(
            true_bound <= conservative,
            "{label}: true {true_bound} above the conservative {conservative}"
        );
        assert!(
            conservative >= low,
            "{label}: conservative {conservative} < observed low {low}"
        );
        assert!(
            conservative >= fitted,
            "{label}: conservative below the point estimate"
        );
    }
}

/// One- and two-phase filters of 2 and 8 bits per message (FN ~0.1-0.7 here).
fn filters() -> Vec<FilterConfig> {
    let mut out = Vec::new();
    for (m, sigma) in [(2 * D as u64, 360), (8 * D as u64, 1440)] {
        out.push(FilterConfig::sigma_bounded(m, 4, sigma));
        let mut two = FilterConfig::sigma_bounded(m, 4, sigma / 2);
        two.phases = 2;
        two.independent_halves = true;
        out.push(two);
    }
    out
}

#[test]
fn uniform_and_top_placement() {
    cell(1.0, 0.9, "uniform", &filters(), 21);
    cell(0.8, 0.5, "top", &filters(), 22);
}

#[test]
fn bottom_placement() {
    cell(1.2, 0.9, "bottom", &filters(), 23);
}

#[test]
fn explicit_placements_near_the_head_and_near_the_tail() {
    cell(0.6, 0.9, "segments:8,4,2,1", &filters(), 24);
    cell(1.0, 0.99, "segments:1,2,4,8", &filters(), 25);
}
