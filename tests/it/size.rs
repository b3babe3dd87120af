//! `rbf size` (FN paper §7.1): the sizing search against direct model evaluations, and
//! its replay confirmation.
//!
//! Workload Zipf(1000, 1), p_r = 0.9, uniform placement; FP target 1e-3. One phase:
//! the renewal bound is proven there (Theorem 7), and for this workload it levels off
//! near 2.3e-2 as M grows, so the FN target is 3e-2.

use rbf_data::filter::Hashing;
use rbf_data::workload::{Placement, Workload};
use rbf_judge::compare::{Bound, Standing, TargetVerdict};
use rbf_judge::size::confirm::confirm;
use rbf_judge::size::{
    best_at, best_fn, evaluate, smallest_memory, Question, SizeOptions, RELATIVE_PRECISION,
};
use rbf_predicted::model::false_negative::Method;

const TARGET_FP: f64 = 1e-3;
const TARGET_FN: f64 = 3e-2;

fn workload() -> Workload {
    Workload::zipf(1000, 1.0, 0.9, Placement::Uniform)
}

fn options(phases: Vec<u8>) -> SizeOptions {
    SizeOptions {
        target_fp: TARGET_FP,
        phases,
        max_hashes: 8,
        hashing: Hashing::Colliding,
        eps: 1e-10,
        renewal_tolerance: None,
        progress: false,
    }
}

fn meets(m: u64, o: &SizeOptions) -> bool {
    best_at(m, o, &workload())
        .unwrap()
        .0
        .is_some_and(|c| c.fn_renewal_upper <= TARGET_FN)
}

#[test]
fn smallest_memory_meets_targets_and_is_minimal() {
    let o = options(vec![1]);
    let s = smallest_memory(TARGET_FN, &o, &workload()).unwrap();
    let b = &s.best;
    assert_eq!(s.question, Question::SmallestMemory);
    assert!(b.fn_renewal_upper <= TARGET_FN, "{b:?}");
    assert!(b.fp_model <= TARGET_FP, "{b:?}");
    let judged = rbf_judge::size::renewal_judgement(b, &o, &workload(), None).unwrap();
    let r = judged
        .get(Bound::of(Method::Renewal))
        .expect("the renewal record");
    assert_eq!(
        r.standing,
        Standing::Proven,
        "one phase, a workload given as the truth: the renewal bound is proven"
    );
    assert_eq!(
        r.value, b.fn_renewal_upper,
        "the judge computes the same bound"
    );
    // The answer is verified directly, not only taken from the search.
    let again = evaluate(b.memory, b.hashes, b.phases, &o, &workload())
        .unwrap()
        .unwrap();
    assert_eq!(again.sigma, b.sigma);
    assert!(again.fn_renewal_upper <= TARGET_FN);
    // Minimal: the last failing M is within the bisection's precision, and neither it
    // nor 0.9 M has any (k, phases) meeting both.
    let fail = s
        .memory_fails
        .expect("the search starts far below the answer");
    assert!(
        (b.memory - fail) as f64 <= (b.memory as f64 * RELATIVE_PRECISION).max(1.0),
        "{fail} .. {}",
        b.memory
    );
    assert!(!meets(fail, &o));
    assert!(!meets(b.memory * 9 / 10, &o));
    assert!(meets(b.memory, &o));
}

/// Observed FN at the chosen filter is below the target. The renewal bound is proven
/// here, but for this workload it is nearly tight (observed about 3.07e-2 against a
/// bound of 3.0e-2 at 10^6 arrivals), so a point check would be a coin flip. The
/// tolerance is the sampling error: the batch-means interval at level 1 - 1e-4 must
/// reach the target, which fails by accident with probability 0.5e-4 when the true FN
/// is at most the target (as the proven bound says). A second check with a
/// 10 % margin catches a real miss (an FN clearly above target) regardless of interval
/// width.
#[test]
fn replay_confirms_fn_target() {
    let o = options(vec![1]);
    let s = smallest_memory(TARGET_FN, &o, &workload()).unwrap();
    let filter = s.best.filter(Hashing::Colliding);
    let (c, r) = confirm(
        &filter,
        &workload(),
        2_000_000,
        7,
        (TARGET_FP, Some(TARGET_FN)),
        1.0 - 1e-4,
    )
    .unwrap();
    let i = c.intervals.expect("enough cycles for an interval");
    assert!(i.fn_.low <= TARGET_FN, "{i:?}");
    assert!(
        c.observed_fn <= 1.1 * TARGET_FN,
        "observed {}",
        c.observed_fn
    );
    // Nearly tight: the interval may straddle the target, but must not lie above it.
    assert_ne!(c.fn_verdict, Some(TargetVerdict::Misses));
    assert_eq!(c.fn_verdict, Some(c.fn_check(TARGET_FN).target()));
    // FP: sigma sits at the model's edge, so the observed count-instance rate is near the
    // target; the model is an average approximation, so check the interval contains a
    // value at or below the target.
    assert!(i.fp_count_instance.low <= TARGET_FP, "{i:?}");
    assert_ne!(c.fp_verdict, TargetVerdict::Misses);
    assert!(r.counts.arrivals > 1_600_000);
    assert_eq!(r.counts.repeat_classified_new, 0);
}

#[test]
fn best_fn_beats_arbitrary_choices() {
    let o = options(vec![1, 2]);
    let m = 32_768;
    let s = best_fn(m, &o, &workload()).unwrap();
    assert_eq!(s.question, Question::BestFn);
    assert!(s.best.fp_model <= TARGET_FP);
    for (k, phases) in [(3, 1), (6, 2), (1, 1)] {
        let c = evaluate(m, k, phases, &o, &workload()).unwrap().unwrap();
        assert!(
            s.best.fn_renewal_upper <= c.fn_renewal_upper,
            "best {:?} vs k={k} phases={phases}: {}",
            s.best,
            c.fn_renewal_upper
        );
    }
}

fn rbf(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_rbf"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn cli_json_keys() {
    let out = rbf(&[
        "size",
        "--zipf",
        "1",
        "--distinct",
        "1000",
        "--p-repeat",
        "0.9",
        "--target-fp",
        "1e-3",
        "--target-fn",
        "3e-2",
        "--phases",
        "1",
        "--confirm-arrivals",
        "200000",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in [
        "memory",
        "hashes",
        "sigma",
        "phases",
        "fp_model",
        "fn_renewal_upper",
        "models",
        "target_fp",
        "target_fn",
        "question",
        "candidates_evaluated",
        "confirmation",
    ] {
        assert!(v.get(key).is_some(), "missing {key}: {v}");
    }
    assert_eq!(v["question"], "smallest-memory");
    let c = &v["confirmation"];
    for key in [
        "arrivals",
        "observed_fp",
        "observed_fp_count_instance",
        "observed_fn",
        "intervals",
        "fp_verdict",
        "fn_verdict",
    ] {
        assert!(c.get(key).is_some(), "missing confirmation.{key}: {c}");
    }
    assert!(v["fn_renewal_upper"].as_f64().unwrap() <= TARGET_FN);
    // The chosen filter's bound as the judge reports it: proven (one phase, a workload
    // given as the truth) and judged against the confirming replay's FN.
    let m = &v["models"][0];
    assert_eq!(m["bound"], "renewal");
    assert_eq!(m["value"], v["fn_renewal_upper"]);
    assert_eq!(m["standing"], "proven");
    assert!(m["verdict"].is_string(), "{m}");
}

#[test]
fn bad_target_fp_names_the_flag() {
    let out = rbf(&[
        "size",
        "--zipf",
        "1",
        "--distinct",
        "100",
        "--p-repeat",
        "0.9",
        "--target-fp",
        "2",
        "--memory",
        "10000",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("target-fp"), "{err}");
}
