//! `rbf compare` with the FN models: the renewal bound computed on the FITTED workload,
//! next to the bound on the true workload (synthetic traces from the FN paper's arrival
//! model) and next to the FN observed by exact replay (synthetic and real traces).
//!
//! Real traces are not drawn from the model, so the renewal bound is not guaranteed to
//! hold on them: each case records the measured outcome. Where the bound holds, the test
//! asserts it; where it does not, the test asserts the measured shortfall and says why,
//! so a change of either the models or the replay shows up here.

use std::process::Command;

use rbf::compare::{fn_rows, observe};
use rbf::filter::FilterConfig;
use rbf::fit::FitOptions;
use rbf::message::KeyHasher;
use rbf::model::fneg::Method;
use rbf::replay::ReplayOptions;
use rbf::synth::{SynthConfig, Synthesizer};
use rbf::workload::{Placement, Workload};

const D: usize = 1000;
const P_R: f64 = 0.9;
const ARRIVALS: u64 = 200_000;
const WARMUP: u64 = 20_000;
const WINDOW: u64 = 4 * D as u64;

/// Observed FN, its 99 % half-width, renewal on the fitted and on the true workload.
struct RoundTrip {
    observed: f64,
    half_width: f64,
    fitted: f64,
    truth: f64,
}

fn round_trip(placement: Placement, seed: u64, filter: &FilterConfig) -> RoundTrip {
    let w = Workload::zipf(D, 1.0, P_R, placement);
    let s = Synthesizer::new(&SynthConfig {
        workload: w.clone(),
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
        FitOptions {
            window: WINDOW,
            ..FitOptions::default()
        },
        s.messages(KeyHasher::default()),
    )
    .expect("replay and fit");
    let r = &obs.replay;
    let ci = r
        .confidence
        .as_ref()
        .expect("enough cycles for an interval");
    let renewal = |wl: &Workload| {
        fn_rows(
            filter,
            wl,
            &[Method::Renewal],
            1e-10,
            r.fn_rate,
            Some(&ci.fn_rate),
        )
        .expect("FN models")
        .rows[0]
            .value
    };
    let fitted = obs.fit.workload().expect("fitted workload");
    RoundTrip {
        observed: r.fn_rate,
        half_width: (ci.fn_rate.high - ci.fn_rate.low) / 2.0,
        fitted: renewal(&fitted),
        truth: renewal(&w),
    }
}

/// M = 2000, k = 3, sigma = 600: about 200 messages per cycle against D = 1000, so FN
/// is large (~0.39) and its 99 % interval narrow (~±0.003).
fn filter() -> FilterConfig {
    FilterConfig::sigma_bounded(2000, 3, 600)
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b) / b
}

/// Bottom placement (ranks never move), seed 11. Measured: observed FN 0.3934 (99 %
/// interval [0.3906, 0.3963]), renewal on the true workload 0.3957, on the fitted
/// workload 0.3751, i.e. 5.2 % below the true one. The fit recovers the head of Q but
/// only D-hat = 685 of the 1000 ranks (ranks with no draw in any window of W = 4000
/// arrivals get no mass), so Q-hat is more concentrated than Q and predicts fewer
/// misses. FINDING: with this window the fitted-workload renewal number is NOT an upper
/// bound for this trace (it lies below the observed interval); the true-workload bound
/// holds. Asserted as measured, so an improvement of the fit shows up here.
#[test]
fn bottom_placement_fitted_renewal_vs_true_and_observed() {
    let r = round_trip(Placement::Bottom, 11, &filter());
    let d = rel(r.fitted, r.truth);
    eprintln!(
        "bottom: observed {:.4} ± {:.4}, renewal true {:.4}, fitted {:.4} ({:+.1} %)",
        r.observed,
        r.half_width,
        r.truth,
        r.fitted,
        100.0 * d
    );
    assert!(r.truth >= r.observed - r.half_width, "true-workload bound");
    assert!(d.abs() < 0.07, "fitted vs true renewal: {d:+.4}");
    assert!(
        r.fitted < r.observed - r.half_width,
        "the fitted bound now covers the observed FN ({} vs {} - {}): the fit improved, update the finding",
        r.fitted,
        r.observed,
        r.half_width
    );
}

/// Uniform placement, seed 12. Measured: observed FN 0.3799 ([0.3770, 0.3829]),
/// renewal true 0.3834, fitted 0.3772 (-1.6 %; D-hat = 743). The fitted bound is above
/// the observed FN minus the 99 % half-width, by a narrow margin (~2e-4).
#[test]
fn uniform_placement_fitted_renewal_vs_true_and_observed() {
    let r = round_trip(Placement::Uniform, 12, &filter());
    let d = rel(r.fitted, r.truth);
    eprintln!(
        "uniform: observed {:.4} ± {:.4}, renewal true {:.4}, fitted {:.4} ({:+.1} %)",
        r.observed,
        r.half_width,
        r.truth,
        r.fitted,
        100.0 * d
    );
    assert!(r.truth >= r.observed - r.half_width, "true-workload bound");
    assert!(d.abs() < 0.03, "fitted vs true renewal: {d:+.4}");
    assert!(
        r.fitted >= r.observed - r.half_width,
        "fitted bound {} below observed {} - {}",
        r.fitted,
        r.observed,
        r.half_width
    );
}

fn data(name: &str) -> String {
    format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn compare_json(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_rbf"))
        .arg("compare")
        .args(args)
        .arg("--json")
        .output()
        .expect("the rbf binary runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

fn num(v: &serde_json::Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number: {}", v[key]))
}

/// TRAGEN (real CDN requests, 100 k), k = 5, FP target 1e-4, warm-up 10 000. Measured:
///
/// | M | sigma | observed FN (99 % CI) | renewal (fitted) | ratio |
/// |---|---|---|---|---|
/// | 10 000 | 2226 | 0.160 [0.155, 0.165] | 0.360 | 2.25 |
/// | 30 000 | 6681 | 0.108 [0.103, 0.113] | 0.349 | 3.22 |
/// | 100 000 | 22275 | 0.061 [0.055, 0.070] | 0.313 | 5.12 |
///
/// The renewal bound holds at every size, loosely (the trace is temporally correlated:
/// FN paper §7), and the looser the larger the filter.
#[test]
fn tragen_renewal_holds_at_fp_target() {
    let t = data("tragen-100k.csv");
    for m in ["10000", "30000", "100000"] {
        let v = compare_json(&[
            &t,
            "--memory",
            m,
            "--hashes",
            "5",
            "--target-fp",
            "1e-4",
            "--warmup",
            "10000",
            "--method",
            "renewal,markov-lower,drop-pins",
        ]);
        let obs = num(&v, "observed_fn");
        let high = num(&v["observed_fn_interval"], "high");
        let ren = num(&v, "fn_renewal_upper");
        eprintln!("tragen M = {m}: observed {obs:.4} (high {high:.4}), renewal {ren:.4}");
        assert!(obs > 0.0);
        assert!(ren >= high, "M = {m}: renewal {ren} below observed {high}");
        let row = v["models"]
            .as_array()
            .expect("models")
            .iter()
            .find(|r| r["name"] == "fn renewal")
            .expect("renewal row");
        assert_eq!(row["guaranteed"], true);
        assert_eq!(row["verdict"], "holds");
    }
}

/// Captures keyed by destination /24 (`--key dst-prefix`), M = 1000 and 4000, k = 3,
/// FP target 1e-4. FINDING: every capture in tests/data has at most two destination
/// /24s (these are protocol test captures, not campus traffic), so the fitted D is 1 or 2
/// and nothing is ever a non-repeat: observed FN = 0 (no interval: fewer than two
/// batches of cycles, the filter never recycles). The renewal bound "holds" but is
/// vacuous here: on echo-connections (82 582 packets, one /24) and irc-dcc-send (1184
/// packets, one /24) it is 0.49999 and 0.49958, i.e. about p_r / 2, whatever M. The
/// renewal computation assumes cycles end; with one message and sigma >= k they never
/// do, and the bound degenerates. Asserted as measured.
#[test]
fn captures_by_destination_prefix() {
    for (file, arrivals, bound) in [
        ("zeek_echo-connections.pcap.zst", 82_582.0, 0.49999),
        ("zeek_irc-dcc-send.pcapng", 1184.0, 0.49958),
    ] {
        let f = data(file);
        for m in ["1000", "4000"] {
            let v = compare_json(&[
                &f,
                "--key",
                "dst-prefix",
                "--memory",
                m,
                "--hashes",
                "3",
                "--target-fp",
                "1e-4",
            ]);
            let ren = num(&v, "fn_renewal_upper");
            eprintln!(
                "{file} M = {m}: observed {}, renewal {ren}",
                v["observed_fn"]
            );
            assert_eq!(num(&v, "observed_fn"), 0.0, "{file}");
            assert_eq!(num(&v, "distinct"), 1.0, "{file}");
            assert_eq!(num(&v["fit"], "arrivals"), arrivals, "{file}");
            assert!((ren - bound).abs() < 1e-4, "{file} M = {m}: renewal {ren}");
        }
    }
}

#[test]
fn compare_json_has_the_keys() {
    let t = data("tragen-100k.csv");
    let v = compare_json(&[
        &t, "--memory", "10000", "--hashes", "5", "--sigma", "1500", "--warmup", "10000",
    ]);
    for k in [
        "observed_fn",
        "observed_fp",
        "fn_renewal_upper",
        "fn_drop_pins",
        "fn_markov_lower",
        "fn_markov_swr",
        "fn_markov_uniform",
        "fn_markov_biuniform",
        "fn_markov_disabling",
        "sigma",
        "p_repeat",
        "distinct",
        "models",
        "fn_model",
    ] {
        assert!(!v[k].is_null(), "missing key {k}");
    }
    assert!(v.get("missing_models").is_none());
    assert_eq!(v["fn_methods_not_run"].as_array().map(Vec::len), Some(0));
    // p_r < 1: the Markov bounds are reported with guaranteed = false, the renewal
    // bound (one phase) with guaranteed = true, as `rbf model fn` reports them.
    for r in v["models"].as_array().expect("models") {
        let name = r["name"].as_str().expect("name");
        if name == "fn renewal" {
            assert_eq!(r["guaranteed"], true);
        } else if name.starts_with("fn markov-") && name != "fn markov-disabling" {
            assert_eq!(r["guaranteed"], false, "{name}");
        }
    }
    // A method subset names the rest as not run.
    let v = compare_json(&[
        &t, "--memory", "10000", "--hashes", "5", "--sigma", "1500", "--method", "renewal",
    ]);
    assert!(v["fn_drop_pins"].is_null());
    assert_eq!(v["fn_methods_not_run"].as_array().map(Vec::len), Some(6));
}
