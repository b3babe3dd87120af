//! Round trip of the workload fit on synthetic traces drawn from the FN paper's arrival
//! model (known Q, p_r, zeta), plus exact checks on the real TRAGEN trace.
//!
//! Tolerances come from sample sizes: p_r is a proportion of independent Bernoulli
//! draws (binomial half-width at 99.9 %); a rank's share of repeat draws is a
//! proportion of the R repeat draws behind Q-hat (binomial half-width at 99.9 %), plus,
//! where ranks move (uniform placement), a derived bound on the bias of window ranks:
//! a rank's holder changes within a window of W arrivals with probability
//! 1 - exp(-(1 - p_r) W (i + 1) / D), and a change can cost the rank at most its gap
//! q_i - q_{i+1} to its neighbour.

use std::path::Path;

use crate::scratch::Scratch;

use rbf::fit::{fit, Fit, FitOptions};
use rbf::ingest::{self, IngestOptions};
use rbf::message::KeyHasher;
use rbf::stats::binomial_half_width;
use rbf::synth::{SynthConfig, Synthesizer};
use rbf::workload::{Placement, Workload};

const D: usize = 1000;
const P_R: f64 = 0.9;
const ARRIVALS: u64 = 400_000;
const WARMUP: u64 = 20_000;
/// Window: 4 D arrivals, so that on average 0.4 D new messages arrive per window.
const WINDOW: u64 = 4 * D as u64;
const LEVEL: f64 = 0.999;

fn run(placement: Placement, seed: u64) -> (Workload, Fit) {
    let w = Workload::zipf(D, 1.0, P_R, placement);
    let s = Synthesizer::new(&SynthConfig {
        workload: w.clone(),
        arrivals: ARRIVALS,
        seed,
        prologue: true,
    })
    .expect("valid workload");
    let f = fit(
        FitOptions {
            warmup: WARMUP,
            window: WINDOW,
            ..FitOptions::default()
        },
        s.messages(KeyHasher::default()),
    )
    .expect("fit succeeds");
    (w, f)
}

/// Kolmogorov-Smirnov distance between two rank distributions, ranks scaled to (0, 1]
/// (the fitted D differs from the true one).
fn ks(a: &[f64], b: &[f64]) -> f64 {
    let cdf = |z: &[f64], x: f64| -> f64 {
        let n = z.len() as f64;
        z.iter()
            .enumerate()
            .take_while(|(i, _)| (*i as f64 + 1.0) / n <= x + 1e-12)
            .map(|(_, p)| p)
            .sum()
    };
    let grid = (0..a.len())
        .map(|i| (i as f64 + 1.0) / a.len() as f64)
        .chain((0..b.len()).map(|i| (i as f64 + 1.0) / b.len() as f64));
    grid.map(|x| (cdf(a, x) - cdf(b, x)).abs())
        .fold(0.0, f64::max)
}

fn check_p_repeat(f: &Fit) {
    let s = &f.summary;
    let tol = binomial_half_width(P_R, s.arrivals as f64, LEVEL);
    assert!(
        (s.p_repeat - P_R).abs() <= tol,
        "p_r {} vs {P_R} (tolerance {tol})",
        s.p_repeat
    );
    assert_eq!(s.arrivals, ARRIVALS + D as u64 - WARMUP);
    assert_eq!(s.repeats + s.new, s.arrivals);
}

/// Checks ranks 0..5 of Q-hat; `drift` adds the window-rank bias bound.
fn check_head(w: &Workload, f: &Fit, drift: bool) {
    let q = w.repeat_distribution().expect("valid");
    let r = f.summary.windows as f64 * WINDOW as f64 * P_R;
    for i in 0..5 {
        let mut tol = binomial_half_width(q[i], r, LEVEL);
        if drift {
            let change = 1.0 - (-(1.0 - P_R) * WINDOW as f64 * (i as f64 + 1.0) / D as f64).exp();
            tol += change * (q[i] - q[i + 1]);
        }
        assert!(
            (f.q[i] - q[i]).abs() <= tol,
            "rank {i}: fitted {} vs true {} (tolerance {tol})",
            f.q[i],
            q[i]
        );
    }
}

fn placement_distances(f: &Fit) -> [f64; 3] {
    [Placement::Uniform, Placement::Top, Placement::Bottom]
        .map(|p| ks(&f.zeta, &p.probabilities(D).expect("valid")))
}

#[test]
fn bottom_placement_round_trip() {
    let (w, f) = run(Placement::Bottom, 11);
    check_p_repeat(&f);
    // Bottom placement never moves ranks 0..D-1: no drift term.
    check_head(&w, &f, false);
    let [u, t, b] = placement_distances(&f);
    assert!(b < u && b < t, "KS to bottom {b}, uniform {u}, top {t}");
    // A message placed at rank D is evicted by the next new one: almost never redrawn.
    assert!(f.summary.placement_never_redrawn > 0.9);
    let wl = f.workload().expect("valid workload");
    wl.validate().expect("fitted workload validates");
    assert_eq!(wl.distinct(), f.summary.model_distinct);
}

#[test]
fn uniform_placement_round_trip() {
    let (w, f) = run(Placement::Uniform, 12);
    check_p_repeat(&f);
    check_head(&w, &f, true);
    let [u, t, b] = placement_distances(&f);
    assert!(u < t && u < b, "KS to uniform {u}, top {t}, bottom {b}");
}

/// Documented limitation (README, "Fitting"): with top placement the holder of rank 0
/// changes at every new arrival (every 1 / (1 - p_r) = 10 arrivals here), so no window
/// of counts can see the head; window ranks see each message's lifetime average and
/// Q-hat comes out nearly flat. p_r is still exact. If this test starts failing because
/// the head is recovered, the estimator improved: update the README.
#[test]
fn top_placement_head_is_not_identifiable_from_window_counts() {
    let (w, f) = run(Placement::Top, 13);
    check_p_repeat(&f);
    let q = w.repeat_distribution().expect("valid");
    assert!(
        f.q[0] < q[0] / 4.0,
        "fitted q_0 {} vs true {}: the head was recovered",
        f.q[0],
        q[0]
    );
}

#[test]
fn fits_are_deterministic() {
    let (_, a) = run(Placement::Uniform, 5);
    let (_, b) = run(Placement::Uniform, 5);
    assert_eq!(a.q, b.q);
    assert_eq!(a.zeta, b.zeta);
}

#[test]
fn small_stream_counts_are_exact() {
    use rbf::message::Message;
    // keys: 1 2 1 3 1 2 4 | warm-up 2 arrivals (1, 2)
    let keys = [1u64, 2, 1, 3, 1, 2, 4];
    let f = fit(
        FitOptions {
            warmup: 2,
            window: 2,
            ..FitOptions::default()
        },
        keys.iter().map(|&k| Message::new(k)),
    )
    .expect("fit");
    let s = &f.summary;
    assert_eq!(s.arrivals, 5);
    assert_eq!(s.repeats, 3); // 1, 1, 2
    assert_eq!(s.new, 2); // 3, 4
    assert_eq!(s.distinct_keys, 4);
    assert_eq!(s.one_hit_wonders, 2); // 3 and 4
                                      // Windows of 2 measured arrivals: [1 3] [1 2] [4]; complete ones give profiles
                                      // [1] and [1, 1] -> Q = (2/3, 1/3).
    assert_eq!(s.windows, 2);
    assert!((f.q[0] - 2.0 / 3.0).abs() < 1e-12 && (f.q[1] - 1.0 / 3.0).abs() < 1e-12);
    assert!((f.zeta.iter().sum::<f64>() - 1.0).abs() < 1e-9);
}

#[test]
fn errors_instead_of_fitting_nothing() {
    use rbf::message::Message;
    let all_new = fit(FitOptions::default(), (0..100u64).map(Message::new));
    let e = all_new.expect_err("no repeats").to_string();
    assert!(e.contains("Q cannot be estimated"), "{e}");
    let warm = fit(
        FitOptions {
            warmup: 10,
            ..FitOptions::default()
        },
        (0..5u64).map(Message::new),
    );
    assert!(warm
        .expect_err("all warm-up")
        .to_string()
        .contains("warm-up"));
    let bad = fit(
        FitOptions {
            window: 1,
            ..FitOptions::default()
        },
        std::iter::empty(),
    );
    assert!(bad.expect_err("bad window").to_string().contains("window"));
}

/// The real TRAGEN trace (BSD-2-Clause, see tests/data/TRAGEN-LICENSE.txt): without a
/// warm-up every non-first sight is a repeat, so p_r = 1 - distinct / arrivals exactly.
#[test]
fn tragen_trace_fit_is_consistent() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tragen-100k.csv");
    let source = ingest::open(&path, &IngestOptions::default()).expect("open TRAGEN trace");
    let f = fit(
        FitOptions {
            window: 10_000,
            ..FitOptions::default()
        },
        source,
    )
    .expect("fit");
    let s = &f.summary;
    assert_eq!(s.arrivals, 100_001);
    let exact = 1.0 - s.distinct_keys as f64 / s.arrivals as f64;
    assert!((s.p_repeat - exact).abs() < 1e-12);
    assert_eq!(s.windows, 10);
    // Ten complete windows and a partial one of a single arrival (reported, not in Q).
    assert_eq!(s.per_window.len(), 11);
    assert_eq!(s.per_window[10].arrivals, 1);
    let e = s.successor_entropy.mean_entropy.expect("entropy defined");
    assert!((0.0..=1.0).contains(&e));
    assert!(!s.successor_entropy.truncated);
    let w = f.workload().expect("fitted workload");
    let dir = Scratch::new("fit-test");
    let file = dir.join("w.json");
    w.save(&file).expect("save");
    assert_eq!(Workload::load(&file).expect("load").p_repeat, s.p_repeat);
    for name in ["q.csv", "q.parquet"] {
        let t = dir.join(name);
        rbf::fit::table::write_rank_table(&f, &t).expect("write table");
        assert!(std::fs::metadata(&t).expect("table written").len() > 0);
    }
    let csv = std::fs::read_to_string(dir.join("q.csv")).expect("read csv");
    assert_eq!(csv.lines().count(), f.q.len() + 1);
    assert!(csv.starts_with("rank,q,zeta,mean_count"));
}
