//! `rbf compare` on real traces: the FN models on the FITTED workload next to the FN
//! observed by exact replay (the synthetic round trip, fitted against true workload, is
//! in `fit_bound.rs`).
//!
//! Real traces are not drawn from the model, so no number here is a proof for the trace,
//! and nothing below copies a number from the program's own output. What is asserted
//! comes from elsewhere:
//!
//! * the replay: the observed FN and its interval equal what the library's `Replays`
//!   (one filter per hash seed, as many as `rbf compare` uses by default) measures on
//!   the same trace over their complete cycles, and each bound's verdict is what that interval says
//!   about the bound's value;
//! * derivations: a bound on a fitted workload stands "for the fitted model", never
//!   "proven"; the Markov bounds are not proven with p_r < 1 (Theorems 3-6 need repeat
//!   draws only); the one-phase conservative end is at or above the point estimate (the
//!   ratio is non-decreasing in every U_j, docs/FIT.md); and where the trace pins U down
//!   (a single key), the renewal bound is at most what the renewal ratio allows.

use std::path::Path;
use std::process::Command;

use rbf_data::filter::FilterConfig;
use rbf_data::ingest::packet::key::{FlowKeyKind, KeySpec};
use rbf_data::ingest::{self, IngestOptions};
use rbf_observed::fit::{fit, FitOptions};
use rbf_observed::replay::{ReplayOptions, Replays, DEFAULT_HASH_SEEDS};

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
    crate::cli::json_of(&out)
}

fn num(v: &serde_json::Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number: {}", v[key]))
}

/// The judged record of `bound` ("renewal", "renewal-conservative", ...).
fn record<'a>(v: &'a serde_json::Value, bound: &str) -> &'a serde_json::Value {
    v["models"]
        .as_array()
        .expect("models")
        .iter()
        .find(|r| r["bound"] == bound)
        .unwrap_or_else(|| panic!("no {bound} record: {}", v["models"]))
}

/// The verdict an interval gives a bound: holds when the whole interval is on the
/// bound's side, violated when it is wholly on the other, undecided otherwise.
fn expected_verdict(value: f64, upper: bool, low: f64, high: f64) -> &'static str {
    let (inside, outside) = if upper {
        (high <= value, low > value)
    } else {
        (low >= value, high < value)
    };
    if inside {
        "holds"
    } else if outside {
        "violated"
    } else {
        "undecided"
    }
}

/// Every judged bound's verdict follows from its value and the observed interval.
fn verdicts_follow_from_the_interval(v: &serde_json::Value) {
    let i = &v["observed_fn_interval"];
    let (low, high) = (num(i, "low"), num(i, "high"));
    for r in v["models"].as_array().expect("models") {
        if r["standing"] == "not-judged" {
            assert!(r["verdict"].is_null(), "shown, not judged: {r}");
            continue;
        }
        let upper = match r["claim"].as_str() {
            Some("upper-bound") => true,
            Some("lower-bound") => false,
            _ => {
                assert!(
                    r["verdict"].is_null(),
                    "an approximation is not judged: {r}"
                );
                continue;
            }
        };
        let value = num(r, "value");
        assert_eq!(
            r["verdict"],
            expected_verdict(value, upper, low, high),
            "{}: {value} against [{low}, {high}]",
            r["bound"]
        );
    }
}

/// The replay the library runs on `path` with `filter`, `warmup` and `key`.
fn replay(
    path: &str,
    filter: &FilterConfig,
    warmup: u64,
    key: Option<FlowKeyKind>,
) -> rbf_observed::replay::ReplayReport {
    let mut options = IngestOptions::default();
    if let Some(k) = key {
        options.key = KeySpec::new(k, 24, 48).expect("key");
    }
    let source = ingest::open(Path::new(path), &options).expect("trace opens");
    // As `rbf compare` replays: per-cycle positions unless the filter says otherwise.
    let mut r = Replays::new(
        &rbf_judge::compare::with_judged_positions(filter),
        ReplayOptions {
            warmup,
            confidence: 0.99,
        },
        DEFAULT_HASH_SEEDS,
    )
    .expect("filter");
    r.run(source);
    r.report()
}

/// TRAGEN (real CDN requests, 100 k), k = 5, FP target 1e-4, warm-up 10 000, one phase.
/// Measured (renewal on the fitted workload, point estimate and conservative end):
///
/// | M | sigma | observed FN (99 % CI) | renewal, point | renewal, conservative |
/// |---|---|---|---|---|
/// | 10 000 | 2226 | 0.1592 [0.1540, 0.1644] | 0.1591 | 0.1697 |
/// | 30 000 | 6681 | 0.1083 [0.1032, 0.1135] | 0.1080 | 0.1178 |
/// | 100 000 | 22275 | 0.0623 [0.0542, 0.0704] | 0.0618 | 0.0771 |
///
/// (observed with per-cycle positions, as `rbf compare` replays by default, 2026-11-26)
///
/// TRAGEN generates its requests from reuse-distance footprints, which the measured
/// reuse profile captures almost exactly: the point bound lands inside the observed
/// interval (checked against the library's own replay below).
#[test]
fn tragen_bounds_against_the_replay() {
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
        // The observed FN is the replay's, independently run.
        let sigma = v["sigma"].as_u64().expect("sigma");
        let filter = FilterConfig::sigma_bounded(m.parse().unwrap(), 5, sigma);
        let r = replay(&t, &filter, 10_000, None);
        let ci = r.confidence.as_ref().expect("an interval").fn_rate;
        // The point the interval is about: over the complete cycles of every filter.
        assert_eq!(num(&v, "observed_fn"), ci.estimate, "M = {m}");
        let i = &v["observed_fn_interval"];
        assert_eq!(num(i, "high"), ci.high, "M = {m}");
        assert_eq!(num(i, "low"), ci.low.max(0.0), "M = {m}");
        let ren = num(&v, "fn_renewal_upper");
        let cons = num(&v, "fn_renewal_conservative");
        eprintln!(
            "tragen M = {m}: observed {:.4} [{:.4}, {:.4}], renewal {ren:.4}, conservative {cons:.4}",
            ci.estimate, ci.low, ci.high
        );
        // One phase: the ratio is non-decreasing in every U_j (docs/FIT.md), and the
        // conservative end has every U_j at least the point estimate's.
        assert!(cons >= ren, "M = {m}: conservative {cons} < point {ren}");
        // A real trace: a bound for the fitted model, not a proof for the trace; and not
        // even that where the trace's own recycles show (99 %) an expected FN above it
        // (docs/TRACE-BOUND.md), which on this log happens within 0.3 % of the observed FN.
        let floor = num(&v["fn_renewal_trace_detail"], "lower");
        for bound in ["renewal", "renewal-conservative"] {
            let r = record(&v, bound);
            let value = r["value"].as_f64().expect("value");
            if value >= floor {
                assert_eq!(r["standing"], "fitted-model", "M = {m}: {bound}");
            } else {
                assert_eq!(r["standing"], "not-proven", "M = {m}: {bound}");
                assert!(value >= 0.99 * ci.estimate, "M = {m}: {bound} {value}");
                let note = r["note"].as_str().expect("note");
                assert!(note.contains("below this trace's own recycles"), "{note}");
            }
        }
        // p_r < 1 (a CDN log has new requests): Theorem 3 covers repeat draws only. And
        // no fitted (Q, zeta) reproduces this log's repeat statistics (correlated
        // requests), so the Q-based rows are shown but not judged, saying why.
        assert!(num(&v, "p_repeat") < 1.0);
        let lower = record(&v, "markov-lower");
        if v["fit"]["popularity"]["check"]["fits"] == true {
            assert_eq!(lower["standing"], "not-proven", "M = {m}");
        } else {
            assert_eq!(lower["standing"], "not-judged", "M = {m}");
            assert!(lower["verdict"].is_null(), "M = {m}");
            let note = lower["note"].as_str().expect("a note");
            assert!(note.starts_with("model does not fit this trace"), "{note}");
        }
        assert_eq!(record(&v, "drop-pins")["claim"], "approximation");
        verdicts_follow_from_the_interval(&v);
        // The bound against the replay: not below the observed interval on this trace
        // (not a theorem for a real trace: a change in the models or the replay shows
        // up here).
        assert!(
            ren >= ci.low,
            "M = {m}: renewal {ren} below observed {}",
            ci.low
        );
    }
}

/// Captures keyed by destination /24 (`--key dst-prefix`), M = 1000 and 4000, k = 3, FP
/// target 1e-4. Every capture here has a single destination /24 (protocol test
/// captures), so every arrival after the first is a repeat of the one key: no
/// non-repeat, observed FN exactly 0. Under the model the renewal bound then follows
/// from the fit alone: every repeat comes one arrival after the previous one (reuse
/// distance 0), so S(0) = 1 and S(n) = 0 for n >= 1, i.e. U_1 = 1 and U_j = 0 after:
/// only the first arrival of a cycle can be a non-repeat, so the numerator is at most
/// p_r per cycle, while a cycle needs at least n = ceil((sigma + 1 - k) / k) insertions
/// after the retained message, n - 1 of them from new messages (probability 1 - p_r
/// each): the bound is at most (1 - p_r) / (n - 1). The conservative end, whose U_j
/// for j >= 2 is the upper band's (above 0), is at or above it (one phase).
#[test]
fn captures_by_destination_prefix() {
    for file in ["zeek_echo-connections.pcap.zst", "zeek_irc-dcc-send.pcapng"] {
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
            // The trace, read by the library: one key, so nothing is a non-repeat.
            let options = IngestOptions {
                key: KeySpec::new(FlowKeyKind::DstPrefix, 24, 48).expect("key"),
                ..IngestOptions::default()
            };
            let source = ingest::open(Path::new(&f), &options).expect("opens");
            let keys: std::collections::HashSet<u64> = source.map(|x| x.key).collect();
            assert_eq!(keys.len(), 1, "{file}");
            assert_eq!(num(&v, "observed_fn"), 0.0, "{file}");
            let source = ingest::open(Path::new(&f), &options).expect("opens");
            let fitted = fit(FitOptions::default(), source).expect("fit");
            let p = fitted.summary.p_repeat;
            let reuse = fitted.reuse.as_ref().expect("a reuse profile");
            assert_eq!(reuse.point.at(0), 1.0, "{file}: every reuse distance is 0");
            assert_eq!(reuse.point.at(1), 0.0, "{file}");
            let sigma = v["sigma"].as_u64().expect("sigma") as f64;
            let n = ((sigma + 1.0 - 3.0) / 3.0).ceil();
            let limit = (1.0 - p) / (n - 1.0);
            let ren = num(&v, "fn_renewal_upper");
            let cons = num(&v, "fn_renewal_conservative");
            eprintln!(
                "{file} M = {m}: renewal {ren:.3e} (at most {limit:.3e}), conservative {cons:.3e}"
            );
            // The window term adds at most ~1e-12 (renewal.rs).
            assert!(
                ren > 0.0 && ren <= limit * (1.0 + 1e-9) + 1e-12,
                "{file} M = {m}"
            );
            assert!(
                reuse.upper.at(1) > 0.0,
                "{file}: the band is not zero-width"
            );
            assert!(cons >= ren, "{file} M = {m}");
            // One key never recycles the filter: no cycle, no interval, nothing judged
            // (the bounds are still computed and shown).
            assert!(v["observed_fn_interval"].is_null(), "{file}");
            for bound in ["renewal", "renewal-conservative"] {
                assert_eq!(record(&v, bound)["standing"], "not-judged", "{file}");
                let note = record(&v, bound)["note"].as_str().unwrap_or_default();
                assert!(note.starts_with("too few cycles"), "{file}: {note}");
            }
        }
    }
}

#[test]
fn compare_json_has_a_key_per_bound() {
    let t = data("tragen-100k.csv");
    let v = compare_json(&[
        &t, "--memory", "10000", "--hashes", "5", "--sigma", "1500", "--warmup", "10000",
    ]);
    for k in [
        "observed_fn",
        "observed_fp",
        "sigma",
        "p_repeat",
        "distinct",
        "models",
        "fn_model",
        "fp_model",
    ] {
        assert!(!v[k].is_null(), "missing key {k}");
    }
    // Every bound of the one list has its key; on a trace the models already run on the
    // fitted point estimate, so the fitted-against-true rows are not repeated.
    for b in rbf_judge::compare::Bound::ALL {
        assert!(
            v.get(b.value_key()).is_some(),
            "missing key {}",
            b.value_key()
        );
        let expected = b.on() != rbf_judge::compare::EvaluatedOn::FittedPoint;
        assert_eq!(!v[b.value_key()].is_null(), expected, "{}", b.value_key());
    }
    assert_eq!(v["fn_methods_not_run"].as_array().map(Vec::len), Some(0));
    // p_r < 1: the Markov bounds are not proven (and where the fitted Q does not
    // reproduce the trace, not judged at all); the renewal bound (one phase, a fitted
    // workload) is a bound for the fitted model, as `rbf model fn` reports it for the
    // same workload file.
    let fits = v["fit"]["popularity"]["check"]["fits"] == true;
    for r in v["models"].as_array().expect("models") {
        let name = r["bound"].as_str().expect("bound");
        let expected = match name {
            "renewal" | "renewal-conservative" => "fitted-model",
            // Read off the trace itself (docs/TRACE-BOUND.md), above the fitted bound
            // here: that keeps its standing.
            "renewal-trace" => "this-trace",
            _ if fits => "not-proven",
            _ => "not-judged",
        };
        assert_eq!(r["standing"], expected, "{name}");
    }
    verdicts_follow_from_the_interval(&v);
    // A method subset names the rest as not run.
    let v = compare_json(&[
        &t, "--memory", "10000", "--hashes", "5", "--sigma", "1500", "--method", "renewal",
    ]);
    assert!(v["fn_drop_pins"].is_null());
    assert_eq!(v["fn_methods_not_run"].as_array().map(Vec::len), Some(7));
}

/// A Q-based method stated as a range in `rbf compare`'s table comes with the line that
/// says what the range is and why other methods have none; a table without any range
/// does not carry that line.
#[test]
fn printed_method_ranges_are_explained() {
    let dir = crate::scratch::Scratch::new("compare-ranges");
    let run = |args: &[&str]| {
        let out = crate::cli::rbf(&dir, args);
        crate::cli::ok(&out);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // A trace short enough that the fit cannot pin every method down (measured: all six
    // Q-based methods are ranges here).
    run(&[
        "synth",
        "--distinct",
        "2000",
        "--zipf",
        "0.9",
        "--p-repeat",
        "0.6",
        "--placement",
        "bottom",
        "--arrivals",
        "100000",
        "--seed",
        "2",
        "-o",
        "t.csv",
    ]);
    let filter = [
        "t.csv", "--memory", "24000", "--hashes", "4", "--sigma", "8000", "--warmup", "20000",
        "--seed", "2",
    ];
    let legend = "[low, high]: the method over every workload the trace cannot tell apart";
    let ranged_rows = |text: &str| {
        text.lines()
            .filter(|l| l.starts_with("markov-") || l.starts_with("drop-pins"))
            .filter(|l| l.contains(" [") && l.contains("e-"))
            .count()
    };
    let mut all = vec!["compare"];
    all.extend(filter);
    let text = run(&all);
    assert!(ranged_rows(&text) > 0, "{text}");
    assert!(text.contains(legend), "{text}");
    // The renewal rows alone: no Q-based method, so no range and no legend.
    let mut renewal = vec!["compare"];
    renewal.extend(filter);
    renewal.extend(["--method", "renewal"]);
    let text = run(&renewal);
    assert_eq!(ranged_rows(&text), 0, "{text}");
    assert!(!text.contains(legend), "{text}");
}
