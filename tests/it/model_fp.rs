//! The FP paper's models against exact replay of streams drawn from the paper's own
//! arrival model.
//!
//! Statistics: every comparison is the model value against a batch-means confidence
//! interval over complete cycles (`ReplayReport::confidence`, cycles are renewals, so
//! batches of cycles are independent). There are [`COMPARISONS`] comparisons in this
//! file; each interval is taken at level 1 - 0.01 / COMPARISONS (Bonferroni), so the
//! whole file is a family-wise 99 % test: a correct model fails any of it with
//! probability at most 1 %. Seeds were fixed once when the tests were written and are
//! not re-rolled. Stream lengths are set so intervals are a few percent of the rate
//! wide (printed with `--nocapture`), tight enough that an off-by-one in sigma or the
//! wrong boundary convention falls outside them.

use rbf_data::filter::{mix64, FilterConfig, Hashing};
use rbf_data::message::KeyHasher;
use rbf_data::synth::{SynthConfig, Synthesizer};
use rbf_data::workload::{Placement, Workload};
use rbf_foundations::stats::Interval;
use rbf_observed::replay::{Replay, ReplayOptions, ReplayReport};
use rbf_predicted::model::false_positive::{held_range, predict, predict_n_bounded, FpPrediction};

/// Model-vs-interval comparisons made in this file (for the Bonferroni level).
const COMPARISONS: f64 = 63.0;

fn level() -> f64 {
    1.0 - 0.01 / COMPARISONS
}

/// (M, k, sigma) points: k = 1 at the paper's M = 1000, k = 5, and k = 8 on a larger M.
const POINTS: [(u64, u32, u64); 3] = [(1000, 1, 500), (1000, 5, 600), (4096, 8, 2500)];

fn config(m: u64, k: u32, sigma: u64, hashing: Hashing, retaining: bool) -> FilterConfig {
    let mut c = FilterConfig::sigma_bounded(m, k, sigma);
    c.hashing = hashing;
    c.retaining = retaining;
    c.seed = 0x5EED_0001;
    c
}

/// Replays `arrivals` distinct keys (p_r = 0: every arrival is new) after skipping a few
/// cycles' worth of warm-up, so the first (empty-filter) cycles are not measured.
fn replay_new(config: &FilterConfig, arrivals: u64, warmup: u64, key_seed: u64) -> ReplayReport {
    let mut r = Replay::new(
        config,
        ReplayOptions {
            warmup,
            confidence: level(),
        },
    )
    .expect("valid config");
    for i in 0..warmup + arrivals {
        r.push(mix64(i ^ key_seed));
    }
    r.report()
}

fn check(what: &str, model: f64, ci: &Interval, failures: &mut Vec<String>) {
    let ok = ci.contains(model);
    eprintln!(
        "{:<60} model {:<12.6e} replay {:.6e} [{:.6e}, {:.6e}] ({} batches) {}",
        what,
        model,
        ci.estimate,
        ci.low,
        ci.high,
        ci.samples,
        if ok { "ok" } else { "OUTSIDE" }
    );
    if !ok {
        failures.push(format!(
            "{what}: model {model} outside [{}, {}]",
            ci.low, ci.high
        ));
    }
}

/// Compares f_sigma and E[N_0] (and the bit-setting arrivals per cycle) with a replay.
fn compare_sigma(what: &str, p: &FpPrediction, r: &ReplayReport, failures: &mut Vec<String>) {
    let s = p.sigma.expect("sigma-bounded prediction");
    let c = r.confidence.as_ref().expect("enough cycles for intervals");
    assert!(c.batches >= 32, "{what}: only {} batches", c.batches);
    check(
        &format!("{what} fp_sigma"),
        s.fp_sigma,
        &c.fp_rate_count_instance,
        failures,
    );
    check(
        &format!("{what} E[N_0]"),
        s.expected_messages_per_cycle,
        &c.first_per_cycle,
        failures,
    );
    check(
        &format!("{what} bit-setting/cycle"),
        s.expected_bit_setting_per_cycle,
        &c.bit_setting_per_cycle,
        failures,
    );
}

fn arrivals_for(p: &FpPrediction, cycles: f64) -> (u64, u64) {
    let n0 = p.sigma.expect("sigma").expected_messages_per_cycle;
    ((n0 * cycles) as u64, (n0 * 3.0) as u64 + 10)
}

/// All four variants of the one-phase sigma-bounded model (FP paper eqs. 4-18, 20-23)
/// at three (M, k, sigma) points, p_r = 0. 12 cells x 3 comparisons = 36.
#[test]
fn one_phase_four_variants_match_replay() {
    let mut failures = Vec::new();
    for (n, &(m, k, sigma)) in POINTS.iter().enumerate() {
        for hashing in [Hashing::Colliding, Hashing::Distinct] {
            for retaining in [false, true] {
                let c = config(m, k, sigma, hashing, retaining);
                let p = predict(&c).expect("model");
                let (arrivals, warmup) = arrivals_for(&p, 4000.0);
                let r = replay_new(&c, arrivals, warmup, 0xA000 + n as u64);
                compare_sigma(&c.describe(), &p, &r, &mut failures);
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Two phases (eqs. 24-26), with and without copy-over, p_r = 0, plus one retaining
/// cell. The halves use independent positions, where eq. 26's independence between
/// halves holds exactly. 7 cells x 3 comparisons = 21.
#[test]
fn two_phase_matches_replay_with_independent_halves() {
    let mut failures = Vec::new();
    let cells = POINTS
        .iter()
        .flat_map(|&p| [(p, true, false), (p, false, false)])
        .chain([(POINTS[1], true, true)]);
    for (n, ((m, k, sigma), copy_over, retaining)) in cells.enumerate() {
        let mut c = config(2 * m, k, sigma, Hashing::Colliding, retaining);
        c.phases = 2;
        c.independent_halves = true;
        c.copy_over = copy_over;
        let p = predict(&c).expect("model");
        let (arrivals, warmup) = arrivals_for(&p, 4000.0);
        let r = replay_new(&c, arrivals, warmup, 0xB000 + n as u64);
        compare_sigma(&c.describe(), &p, &r, &mut failures);
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// With p_r > 0 the chain steps only on first-in-cycle arrivals (new or non-repeat):
/// repeats set no bits. A non-repeat is not recorded in the current cycle, so its bits
/// are as independent of the filter's as a new message's and the same model applies
/// to the count-instance rate. One phase only: with two phases a message recorded only
/// in the frozen half is a repeat that still sets bits in the active half (copy-over),
/// so the active chain also steps on some repeats. Measured once (M = 2000 in two halves,
/// k = 5, sigma = 600, independent halves, Zipf(1) D = 5000, p_r = 0.7): 157 first-in-cycle
/// arrivals per cycle against the model's 184, and a count-instance rate of 0.0966
/// [0.0960, 0.0971] against 0.0954: the copied repeats fill the active half without being
/// counted, so the counted arrivals see a fuller filter. 2 cells x 3 comparisons = 6.
#[test]
fn count_instance_with_repeats_matches_the_same_model() {
    let mut failures = Vec::new();
    for (n, &(m, k, sigma, retaining)) in [(1000u64, 1u32, 500u64, false), (1000, 5, 600, true)]
        .iter()
        .enumerate()
    {
        let c = config(m, k, sigma, Hashing::Colliding, retaining);
        let p = predict(&c).expect("model");
        let d = 5000;
        let workload = Workload::zipf(d, 1.0, 0.7, Placement::Uniform);
        let n0 = p.sigma.expect("sigma").expected_messages_per_cycle;
        // Arrivals per first-in-cycle arrival are about 1/(1 - p_r) or fewer.
        let arrivals = (n0 * 4000.0 / 0.3) as u64;
        let synth = Synthesizer::new(&SynthConfig {
            workload,
            arrivals,
            seed: 0xC000 + n as u64,
            prologue: true,
        })
        .expect("workload");
        let warmup = synth.prologue_len() as u64 + (n0 * 10.0 / 0.3) as u64;
        let mut r = Replay::new(
            &c,
            ReplayOptions {
                warmup,
                confidence: level(),
            },
        )
        .expect("config");
        r.run(synth.messages(KeyHasher::default()));
        let report = r.report();
        assert!(report.counts.repeat > 0 && report.counts.non_repeat > 0);
        compare_sigma(
            &format!("{} p_r=0.7", c.describe()),
            &p,
            &report,
            &mut failures,
        );
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// N-bounded (eqs. 2-3): f_o <= f_a are lower bounds of the replayed count-instance rate
/// of a colliding filter; they must not exceed the interval's upper end. Our trigger
/// "more than N bit-setting insertions" admits N + 1 bit-setting arrivals per cycle
/// non-retaining (held 0..=N) and N retaining (held 1..=N). The cycle length check is
/// exact: bit-setting arrivals per cycle are exactly that count.
#[test]
fn n_bounded_oracle_and_real_user_are_lower_bounds() {
    for (n, &(m, k, max_inserts, retaining)) in [
        (1000u64, 3u32, 150u64, false),
        (1000, 3, 150, true),
        (4096, 6, 400, false),
    ]
    .iter()
    .enumerate()
    {
        let mut c = FilterConfig::sigma_bounded(m, k, 0);
        c.sigma = None;
        c.max_inserts = Some(max_inserts);
        c.retaining = retaining;
        c.seed = 0x5EED_0002;
        let p =
            predict_n_bounded(m, k, held_range(max_inserts, retaining)).expect("N-bounded model");
        let cycles = 6000.0;
        let arrivals = (p.expected_messages_per_cycle * cycles) as u64;
        let r = replay_new(&c, arrivals, 3 * max_inserts, 0xD000 + n as u64);
        let ci = r.confidence.expect("intervals").fp_rate_count_instance;
        eprintln!(
            "{}: f_o {:.4e} <= f_a {:.4e} <= replay {:.4e} [{:.4e}, {:.4e}]; f_w {:.4e}",
            c.describe(),
            p.fp_oracle,
            p.fp_actual_lower_bound,
            ci.estimate,
            ci.low,
            ci.high,
            p.fp_worst_case
        );
        assert!(p.fp_oracle <= p.fp_actual_lower_bound);
        assert!(
            p.fp_actual_lower_bound <= ci.high,
            "{}: f_a {} above replay's interval {:?}",
            c.describe(),
            p.fp_actual_lower_bound,
            ci
        );
        assert_eq!(
            r.per_cycle.bit_setting.max,
            p.bit_setting_per_cycle,
            "{}",
            c.describe()
        );
        assert_eq!(r.per_cycle.bit_setting.min, p.bit_setting_per_cycle);
    }
}

/// Where eq. 26's independence fails outright the output must say so: with k = 1,
/// shared positions and no copy-over, the active half can only set bits the frozen half
/// lacks, so once the frozen half holds more than half of them it never fills again.
#[test]
fn two_phase_shared_k1_without_copy_over_is_flagged_and_stalls() {
    let mut c = config(2000, 1, 500, Hashing::Colliding, false);
    c.phases = 2;
    c.copy_over = false;
    let p = predict(&c).expect("model");
    assert!(
        p.notes.iter().any(|n| n.contains("NOT VALID")),
        "{:?}",
        p.notes
    );
    let r = replay_new(&c, 200_000, 0, 0xE000);
    // One recycle (the first half filling), then none in 200k arrivals.
    assert_eq!(r.cycles, 1, "recycled after the first swap");
    assert!(r.fp_rate_count_instance > 0.9);
}
