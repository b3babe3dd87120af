//! The fast renewal engine (insertion-count decomposition, windows) against eq. (19)
//! followed literally with no window: within 1e-6 absolute and never below it (the
//! window term keeps the result an upper bound).

use rbf_data::filter::{FilterConfig, Hashing};
use rbf_data::workload::{Placement, Workload};
use rbf_predicted::model::false_negative::{FnModel, RenewalOptions};

#[test]
fn fast_renewal_matches_the_exact_recursion() {
    let mut cases = Vec::new();
    for (phases, sigma) in [(1u8, 300u64), (2, 150)] {
        for p_r in [1.0, 0.9, 0.5] {
            for alpha in [0.0, 1.0, 2.0] {
                let mut f = FilterConfig::sigma_bounded(1000, 3, sigma);
                f.phases = phases;
                f.independent_halves = true;
                cases.push((f, Workload::zipf(1000, alpha, p_r, Placement::Uniform)));
            }
        }
    }
    let mut f = FilterConfig::sigma_bounded(2000, 4, 700);
    f.hashing = Hashing::Distinct;
    f.retaining = false;
    cases.push((f.clone(), Workload::zipf(500, 1.0, 0.8, Placement::Top)));
    cases.push((f, Workload::zipf(500, 0.5, 0.8, Placement::Bottom)));
    cases.push((
        FilterConfig::sigma_bounded(10_000, 5, 3000),
        Workload::zipf(1000, 1.0, 0.9, Placement::Uniform),
    ));
    // Large D with a small filter: the disabling recursion (eq. 24) runs split in two
    // parts (two threads on two cores), the bit side through the vectorised
    // decomposition.
    cases.push((
        FilterConfig::sigma_bounded(2000, 3, 700),
        Workload::zipf(40_000, 1.0, 0.9, Placement::Uniform),
    ));
    for (f, w) in cases {
        let model = FnModel::new(&f, &w, 1e-10).unwrap();
        let exact = model
            .renewal(RenewalOptions {
                direct: true,
                tiny: 0.0,
                ..RenewalOptions::default()
            })
            .unwrap();
        let fast = model.renewal(RenewalOptions::default()).unwrap();
        let diff = fast.fn_upper - exact.fn_ratio;
        assert!(
            diff.abs() < 1e-6 && diff > -1e-12,
            "{} p_r={} {:?}: fast {} exact {}",
            f.describe(),
            w.p_repeat,
            w.popularity,
            fast.fn_upper,
            exact.fn_ratio
        );
        assert!((fast.fp_rate - exact.fp_rate).abs() < 1e-9);
        assert!(fast.window_term >= 0.0 && fast.window_term < 1e-9);
    }
}

/// With k = 1 every bit-setting insertion sets exactly one bit, so an N-bounded filter
/// is the sigma-bounded filter with sigma = N: the joint (insertions, bits) engine must
/// reproduce the sigma engine, for the renewal bound and every Markov method.
#[test]
fn n_bounded_with_one_hash_is_sigma_bounded() {
    for (phases, retaining, p_r) in [(1u8, true, 0.9), (1, false, 1.0), (2, true, 0.5)] {
        let mut s = FilterConfig::sigma_bounded(600, 1, 120);
        s.phases = phases;
        s.retaining = retaining;
        s.independent_halves = true;
        let mut n = s.clone();
        n.sigma = None;
        n.max_inserts = Some(120);
        let w = Workload::zipf(400, 1.0, p_r, Placement::Uniform);
        let a = FnModel::new(&s, &w, 1e-10).unwrap();
        let b = FnModel::new(&n, &w, 1e-10).unwrap();
        let ra = a
            .evaluate(
                &rbf_predicted::model::false_negative::Method::ALL,
                RenewalOptions::default(),
            )
            .unwrap();
        let rb = b
            .evaluate(
                &rbf_predicted::model::false_negative::Method::ALL,
                RenewalOptions::default(),
            )
            .unwrap();
        for (x, y) in ra.results.iter().zip(&rb.results) {
            assert!(
                (x.fn_rate - y.fn_rate).abs() < 1e-9 && (x.fp_rate - y.fp_rate).abs() < 1e-9,
                "{} phases={phases} retaining={retaining}: sigma {} vs N {}",
                x.method.name(),
                x.fn_rate,
                y.fn_rate
            );
        }
    }
}
