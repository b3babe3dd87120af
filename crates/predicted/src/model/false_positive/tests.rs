//! Exact checks of the chain: the renewal pass against a direct linear solve of the
//! paper's folded chain, eq. 19 against the pass, and numerical robustness at scale.

use super::closed_form::fp_k1;
use super::*;
use crate::model::tau::{FoldedTable, Transitions};
use rbf_data::filter::Hashing;

/// pi P = pi, sum pi = 1 by Gaussian elimination with partial pivoting (dense, small).
fn dense_stationary(p: &FoldedTable) -> Vec<f64> {
    let n = p.top() as usize + 1;
    // Rows: (P^T - I) pi = 0, last equation replaced by sum pi = 1.
    let mut a = vec![vec![0.0; n + 1]; n];
    for (j, row) in a.iter_mut().enumerate() {
        for (i, cell) in row.iter_mut().enumerate().take(n) {
            *cell = p.get(i as u64, j as u64) - if i == j { 1.0 } else { 0.0 };
        }
    }
    a[n - 1] = vec![1.0; n + 1];
    for c in 0..n {
        let piv = (c..n)
            .max_by(|x, y| a[*x][c].abs().total_cmp(&a[*y][c].abs()))
            .expect("non-empty");
        a.swap(c, piv);
        let d = a[c][c];
        for x in a[c].iter_mut() {
            *x /= d;
        }
        for r in 0..n {
            if r != c && a[r][c] != 0.0 {
                let f = a[r][c];
                let src = a[c].clone();
                for (x, s) in a[r].iter_mut().zip(&src) {
                    *x -= f * s;
                }
            }
        }
    }
    a.iter().map(|r| r[n]).collect()
}

#[test]
fn renewal_matches_linear_solve_of_the_folded_chain() {
    for hashing in [Hashing::Colliding, Hashing::Distinct] {
        for retaining in [false, true] {
            for (m, k, sigma) in [
                (40, 1, 20),
                (40, 3, 25),
                (30, 5, 12),
                (24, 4, 2),
                (50, 7, 45),
            ] {
                let t = Transitions::new(m, k, hashing);
                let folded = FoldedTable::new(t, sigma, retaining);
                for i in 0..=folded.top() {
                    let s: f64 = (0..=folded.top()).map(|j| folded.get(i, j)).sum();
                    assert!((s - 1.0).abs() < 1e-12, "folded row {i} sums to {s}");
                }
                let dense = dense_stationary(&folded);
                let pi = Renewal::new(t, retaining).stationary(sigma).unwrap();
                assert_eq!(pi.len(), dense.len());
                for (i, (a, b)) in pi.iter().zip(&dense).enumerate() {
                    assert!(
                        (a - b).abs() < 1e-10,
                        "{hashing:?} retaining={retaining} M={m} k={k} sigma={sigma} state {i}: {a} vs {b}"
                    );
                }
            }
        }
    }
}

#[test]
fn k1_matches_closed_form_eq19() {
    for (m, sigma) in [
        (10, 0),
        (10, 9),
        (1000, 500),
        (1 << 20, 1 << 19),
        (1 << 20, (1 << 20) - 1),
    ] {
        let r = Renewal::new(Transitions::new(m, 1, Hashing::Colliding), false);
        let p = predict_sigma(&r, sigma, 1, true).unwrap();
        let c = fp_k1(m, sigma);
        assert!(
            (p.fp_sigma - c).abs() <= 1e-12 * c.max(1e-300),
            "M={m} sigma={sigma}: {} vs {c}",
            p.fp_sigma
        );
        // One hash: every state is entered once, E[N_0] = sum M/(M - i).
        let n0: f64 = (0..=sigma).map(|i| m as f64 / (m - i) as f64).sum();
        assert!((p.expected_messages_per_cycle / n0 - 1.0).abs() < 1e-12);
    }
}

#[test]
fn one_recycle_per_cycle() {
    for hashing in [Hashing::Colliding, Hashing::Distinct] {
        for retaining in [false, true] {
            let r = Renewal::new(Transitions::new(5000, 6, hashing), retaining);
            let p = predict_sigma(&r, 2500, 2, true).unwrap();
            assert!((p.recycle_mass - 1.0).abs() < 1e-9, "{}", p.recycle_mass);
        }
    }
}

fn assert_sane(pi: &[f64], what: &str) {
    let s: f64 = pi.iter().sum();
    assert!((s - 1.0).abs() < 1e-9, "{what}: sum {s}");
    assert!(pi.iter().all(|p| p.is_finite() && *p >= 0.0), "{what}");
}

#[test]
fn robust_at_scale() {
    // Corners of M <= 2^26, k <= 32, sigma <= M - 1, sized to run in seconds.
    let cases: [(u64, u32, u64); 6] = [
        (1 << 26, 1, (1 << 26) - 1),
        (1 << 26, 32, 1 << 14),
        (1 << 16, 32, (1 << 16) - 1),
        (1 << 18, 32, (1 << 18) - 1),
        (64, 32, 63),
        (33, 32, 32),
    ];
    for (m, k, sigma) in cases {
        for hashing in [Hashing::Colliding, Hashing::Distinct] {
            for retaining in [false, true] {
                let what = format!("M={m} k={k} sigma={sigma} {hashing:?} retaining={retaining}");
                let r = Renewal::new(Transitions::new(m, k, hashing), retaining);
                let p = predict_sigma(&r, sigma, 1, true).unwrap();
                for x in [p.fp_sigma, p.expected_messages_per_cycle, p.recycle_mass] {
                    assert!(x.is_finite() && x >= 0.0, "{what}: {p:?}");
                }
                assert!(p.fp_sigma <= 1.0, "{what}");
                assert!((p.recycle_mass - 1.0).abs() < 1e-9, "{what}: {p:?}");
                if m <= 1 << 16 {
                    assert_sane(&r.stationary(sigma).unwrap(), &what);
                }
            }
        }
    }
}

#[test]
fn n_bounded_ordering() {
    // f_o <= f_a (real users also skip false positives, which only adds them) <= f_w.
    let p = predict_n_bounded(10_000, 5, held_range(1000, false)).unwrap();
    assert!(p.fp_oracle < p.fp_actual_lower_bound);
    assert!(p.fp_actual_lower_bound < p.fp_worst_case);
    assert_eq!(p.bit_setting_per_cycle, 1001);
    assert_eq!(worst_case(1000, 3, 0), 0.0);
}

#[test]
fn capacity_sweep_matches_direct_solves() {
    // The one-pass sweep must pick the same sigma and numbers as solving each sigma.
    for retaining in [false, true] {
        for hashing in [Hashing::Colliding, Hashing::Distinct] {
            let q = CapacityQuery {
                memory: 2000,
                target: 0.02,
                k_max: 5,
                hashing,
                retaining,
                copy_over: true,
            };
            let c = capacity(&q).unwrap();
            for kc in &c.per_k {
                for (phases, got, m) in [(1u8, kc.one_phase, 2000), (2, kc.two_phase, 1000)] {
                    let got = got.unwrap();
                    let r = Renewal::new(Transitions::new(m, kc.k, hashing), retaining);
                    let at = predict_sigma(&r, got.sigma, phases, true).unwrap();
                    let next = predict_sigma(&r, got.sigma + 1, phases, true).unwrap();
                    let what = format!(
                        "{hashing:?} retaining={retaining} k={} phases={phases}",
                        kc.k
                    );
                    assert!(
                        at.fp_sigma <= q.target && next.fp_sigma > q.target,
                        "{what}"
                    );
                    assert!(
                        (at.fp_sigma - got.fp).abs() < 1e-12,
                        "{what}: {at:?} {got:?}"
                    );
                    assert!(
                        (at.expected_messages_per_cycle / got.messages_per_cycle - 1.0).abs()
                            < 1e-12,
                        "{what}"
                    );
                }
            }
        }
    }
}

#[test]
fn worst_case_capacity_is_about_30_percent_below_sigma() {
    // FP paper §V-B, Figs. 6-7: f_w sizing takes about 30 % fewer messages.
    for (m, target) in [(1 << 14, 0.01), (1 << 16, 0.01), (1 << 14, 0.001)] {
        let c = capacity(&CapacityQuery {
            memory: m,
            target,
            k_max: 16,
            hashing: Hashing::Colliding,
            retaining: false,
            copy_over: true,
        })
        .unwrap();
        assert!(
            c.ratio_fw > 0.6 && c.ratio_fw < 0.75,
            "M={m} target={target}: {}",
            c.ratio_fw
        );
        assert!((c.ratio_fa - 1.0).abs() < 0.05, "{}", c.ratio_fa);
    }
}

#[test]
fn sigma_for_target_is_the_largest_sigma_meeting_the_target() {
    // A filter whose sigma is yet to be chosen (no trigger): the pass must pick the
    // sigma a direct solve at that sigma and the next confirms, for every variant.
    for (phases, copy_over) in [(1u8, true), (2, true), (2, false)] {
        for retaining in [false, true] {
            for hashing in [Hashing::Colliding, Hashing::Distinct] {
                for (k, target) in [(1u32, 0.02), (4, 1e-3), (7, 1e-4)] {
                    let mut f = rbf_data::filter::FilterConfig::sigma_bounded(4000, k, 0);
                    f.sigma = None;
                    (f.phases, f.copy_over, f.retaining, f.hashing) =
                        (phases, copy_over, retaining, hashing);
                    let what = format!("{f:?} target {target}");
                    let got = match sigma_for_target(&f, target) {
                        Ok(s) => s,
                        Err(e) => {
                            // Only when even sigma = k misses the target.
                            let mut at_k = f.clone();
                            at_k.sigma = Some(u64::from(k));
                            let p = predict(&at_k).unwrap().sigma.unwrap();
                            assert!(p.fp_sigma > target, "{what}: {e}");
                            assert!(e.to_string().contains("target-fp"), "{e}");
                            continue;
                        }
                    };
                    let at = |sigma: u64| {
                        let mut c = f.clone();
                        c.sigma = Some(sigma);
                        predict(&c).unwrap().sigma.unwrap().fp_sigma
                    };
                    assert!(got.sigma >= u64::from(k), "{what}");
                    assert!(at(got.sigma) <= target, "{what}: {got:?}");
                    if got.sigma + 1 < f.half_memory() {
                        assert!(at(got.sigma + 1) > target, "{what}: {got:?}");
                    }
                    assert!(
                        (at(got.sigma) - got.fp).abs() <= 1e-12 * got.fp.max(1e-300),
                        "{what}"
                    );
                }
            }
        }
    }
    let f = rbf_data::filter::FilterConfig::sigma_bounded(4000, 4, 100);
    assert!(sigma_for_target(&f, 1.5).is_err());
    assert!(sigma_for_target(&f, 1e-30)
        .unwrap_err()
        .to_string()
        .contains("smallest sigma"));
}
