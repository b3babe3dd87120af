//! The Markov chain's disabling estimate (appendix G.2, [`super::disabling_estimates`])
//! on runs of ranks, for large D.
//!
//! The exact update ([`crate::model::false_negative::disabling::Disabling::distinct_arrival`])
//! visits every rank at every state: 6 000 states over Q of 10^7 ranks took minutes.
//! Ranks whose q and zeta agree to a relative [`TOLERANCE`] form a run, and the run
//! carries one enabled value G, the mean of its ranks' g. Writing the per-rank update as
//!
//! g_i <- w_r max(g_i (1 - q_i / U), 0) + w_n [(1 - zeta_i) g_i + Z<_i (g_{i-1} - g_i)]
//!
//! (Z>_i = 1 - zeta_i - Z<_i) and summing it over a run whose ranks share q and zeta
//! and hold equal g, the shift terms telescope to the run's first rank: the run's
//! total changes by w_n Z<_first (G_above - G), where G_above is the last rank of the
//! run above it. The run version takes that rank's value as its run's mean. A run of
//! one rank is therefore the exact update, and U = sum over runs of width q G.
//!
//! What it gives up, and why that is small: (1) q and zeta vary by up to TOLERANCE
//! inside a run; with the run's mean q the first-order terms of sum_i q_i g(q_i)
//! cancel, leaving (TOLERANCE x the ranks' kill exponent)^2 relative; (2) g is not
//! quite flat in a run (new messages push the ranks above into it one rank at a time),
//! and the run mixes what enters at its top across its width; the difference between
//! neighbouring runs' G is itself of order TOLERANCE where runs are wide (their q
//! differ by that much), so the mass misplaced changes U by a second-order amount too.
//! Neither is proven here: the agreement with the exact update is measured, over
//! random workloads (Zipf exponents, placements, p_r, D up to 10^5) in this module's
//! tests, to within [`AGREEMENT`] relative on the FN rate (worst of 24: 1.6e-5 at a
//! TOLERANCE of 1e-3, 1.6e-7 at 1e-4: second order, as argued); markov-disabling is an
//! approximation, so no bound's direction is at stake. Rank by rank Q (a `--workload`
//! file, `rbf model fn`) is run the same way: only ranks within TOLERANCE share a run.

/// Ranks join a run while their q and zeta are within this relative distance of the
/// run's first rank's.
pub const TOLERANCE: f64 = 1e-3;

/// Relative agreement of the FN rate with the exact rank-by-rank update that the tests
/// require (measured: docs/PERFORMANCE.md, "FN: the Markov bounds and drop-pins").
pub const AGREEMENT: f64 = 1e-4;

/// The tolerance for the alternative workloads of a fit, whose values only set the
/// ends of a printed range (two significant digits, rounded outward): ten times
/// [`TOLERANCE`], about ten times fewer runs at large D (an alternative of D = 7 x 10^6
/// took 0.47 of the 3.5 CPU s of cell 11's compare at TOLERANCE), the agreement
/// [`RANGE_AGREEMENT`] (second order, as argued above: measured worst 5.8e-4 of 24
/// random workloads, where TOLERANCE gives 1.6e-5). The point model's own value keeps
/// TOLERANCE.
pub const RANGE_TOLERANCE: f64 = 1e-2;

/// Relative agreement with the exact update that the tests require at
/// [`RANGE_TOLERANCE`]: a tenth of the 1 % step of a two-digit range end.
pub const RANGE_AGREEMENT: f64 = 1e-3;

/// Exact work (states x ranks) above which the estimate runs on runs of ranks: below
/// it, a tenth of a second, the exact update runs and the numbers are the exact ones
/// (a trace of 10^4 arrivals whose fit allows D = 5 x 10^4 spent 0.4 s of its compare
/// there).
pub const EXACT_WORK: f64 = 2e7;

use crate::model::false_negative::qruns::QRuns;

/// Below this, g counts as 0 for good (as in the exact update).
const UNDERFLOW: f64 = 1e-300;

/// The enabled mean per run and its update.
pub struct RunDisabling {
    /// Ranks per run, q per rank (the run's mean) and the run's share of U per unit G.
    width: Vec<f64>,
    q: Vec<f64>,
    qw: Vec<f64>,
    /// Coefficients of the new-message part: G <- stay G + into G_above, with
    /// into = Z<_first / width and stay = 1 - zeta - into.
    stay: Vec<f64>,
    into: Vec<f64>,
    g: Vec<f64>,
    /// The next values of g (a buffer the update swaps with g).
    next: Vec<f64>,
    p_r: f64,
    u: f64,
    /// Runs before `head` are below [`UNDERFLOW`] for good.
    head: usize,
}

impl RunDisabling {
    /// Start of a cycle (every message enabled), with runs formed at `tolerance`
    /// (0: only ranks with exactly equal q and zeta share a run).
    pub fn new(q: &[f64], zeta: &[f64], p_r: f64, tolerance: f64) -> RunDisabling {
        RunDisabling::from_runs(&QRuns::from_ranks(q, zeta, tolerance), p_r)
    }

    /// Start of a cycle on runs formed before ([`QRuns`]).
    pub fn from_runs(runs: &QRuns, p_r: f64) -> RunDisabling {
        let n = runs.len();
        let (mut qs, mut stay, mut into) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        let mut z_below = 0.0;
        for ((&w, &q_sum), &zeta_sum) in runs.width.iter().zip(&runs.q_sum).zip(&runs.zeta_sum) {
            // Means keep the totals: sum of q and of zeta over the run.
            let qm = q_sum / w;
            let zm = zeta_sum / w;
            let inflow = z_below / w;
            qs.push(qm);
            into.push(inflow);
            stay.push((1.0 - zm - inflow).max(0.0));
            z_below += zeta_sum;
        }
        let width = runs.width.clone();
        let qw: Vec<f64> = qs.iter().zip(&width).map(|(q, w)| q * w).collect();
        let u = qw.iter().rev().sum();
        RunDisabling {
            g: vec![1.0; width.len()],
            next: vec![0.0; width.len()],
            width,
            q: qs,
            qw,
            stay,
            into,
            p_r,
            u,
            head: 0,
        }
    }

    /// Runs formed.
    pub fn runs(&self) -> usize {
        self.width.len()
    }

    /// U: the enabled repeat mass.
    pub fn enabled_mass(&self) -> f64 {
        self.u
    }

    /// One distinct arrival of the Markov chain, as
    /// [`crate::model::false_negative::disabling::Disabling::distinct_arrival`] on runs.
    pub fn distinct_arrival(&mut self) {
        let u = self.u;
        let Some((wr, wn)) = crate::model::false_negative::disabling::distinct_weights(self.p_r, u)
        else {
            return;
        };
        let wide = rbf_foundations::simd::Simd::detect() >= rbf_foundations::simd::Simd::Avx2;
        rbf_foundations::simd::with_avx2(
            wide,
            #[inline(always)]
            || self.step(u, wr, wn),
        );
        while self.head < self.g.len() && self.g[self.head] < UNDERFLOW {
            self.g[self.head] = 0.0;
            self.head += 1;
        }
    }

    /// The update of every live run from the old values into `next` (then swapped in),
    /// so that no run waits for the one before it and the pass is vectorised; U is
    /// summed in eight lanes ([`rbf_foundations::simd::dot`]). Each run's value has the same
    /// arithmetic as the in-place loop this replaced; U moves by rounding only
    /// (`runs::tests::the_vectorised_update_is_the_in_place_one`).
    #[inline(always)]
    fn step(&mut self, u: f64, wr: f64, wn: f64) {
        let (h, n) = (self.head, self.g.len());
        if h == n {
            self.u = 0.0;
            return;
        }
        let update = |gr: f64, above: f64, q: f64, stay: f64, into: f64| {
            let drawn = if u > 0.0 { gr * (1.0 - q / u) } else { gr };
            wr * drawn.max(0.0) + wn * (stay * gr + into * above)
        };
        // Above the first live run: nothing (rank 0) or a dead run, 0 for good (the
        // other buffer may hold an older value there).
        self.next[h] = update(self.g[h], 0.0, self.q[h], self.stay[h], self.into[h]);
        let runs = self.next[h + 1..n]
            .iter_mut()
            .zip(self.g[h + 1..n].iter().zip(&self.g[h..n - 1]))
            .zip(self.q[h + 1..n].iter().zip(&self.stay[h + 1..n]))
            .zip(&self.into[h + 1..n]);
        for (((v, (&gr, &above)), (&q, &stay)), &into) in runs {
            *v = update(gr, above, q, stay, into);
        }
        std::mem::swap(&mut self.g, &mut self.next);
        self.u = rbf_foundations::simd::dot(&self.qw[h..n], &self.g[h..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::false_negative::disabling::Disabling;

    /// U after each of `steps` distinct arrivals, exact and on runs.
    fn both(
        q: &[f64],
        zeta: &[f64],
        p_r: f64,
        tolerance: f64,
        steps: usize,
    ) -> (Vec<f64>, Vec<f64>, usize) {
        let mut exact = Disabling::new(q, zeta, p_r);
        let mut runs = RunDisabling::new(q, zeta, p_r, tolerance);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..steps {
            a.push(exact.enabled_mass());
            b.push(runs.enabled_mass());
            exact.distinct_arrival();
            runs.distinct_arrival();
        }
        (a, b, runs.runs())
    }

    #[test]
    fn runs_of_one_rank_are_the_exact_update() {
        let q = rbf_data::workload::zipf(500, 0.8);
        let zeta: Vec<f64> = (0..500).map(|i| (1.0 + i as f64) / 125_250.0).collect();
        let (a, b, runs) = both(&q, &zeta, 0.7, 0.0, 300);
        assert_eq!(runs, 500);
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() <= 1e-13 * x, "{x} vs {y}");
        }
    }

    /// The in-place update the vectorised [`RunDisabling::step`] replaced, as its
    /// reference.
    fn reference_arrival(r: &mut RunDisabling) {
        let u = r.u;
        let Some((wr, wn)) = crate::model::false_negative::disabling::distinct_weights(r.p_r, u)
        else {
            return;
        };
        let mut nu = 0.0;
        for i in (r.head..r.g.len()).rev() {
            let above = if i > 0 { r.g[i - 1] } else { 0.0 };
            let gr = r.g[i];
            let drawn = if u > 0.0 { gr * (1.0 - r.q[i] / u) } else { gr };
            let v = wr * drawn.max(0.0) + wn * (r.stay[i] * gr + r.into[i] * above);
            r.g[i] = v;
            nu += r.qw[i] * v;
        }
        r.u = nu;
        while r.head < r.g.len() && r.g[r.head] < UNDERFLOW {
            r.g[r.head] = 0.0;
            r.head += 1;
        }
    }

    #[test]
    fn the_vectorised_update_is_the_in_place_one() {
        use crate::model::false_negative::FnModel;
        use rbf_data::workload::{Placement, Workload};
        let mut draw = Draws(3_802);
        let placements = [
            Placement::Uniform,
            Placement::Top,
            Placement::Bottom,
            Placement::Segments(vec![0.4, 0.3, 0.2, 0.1]),
        ];
        // D from 10^2 to 10^7, Zipf 0.5-1.3, sigma up to 6 x 10^4 (the grid's 53 333).
        for (case, d) in [100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000]
            .into_iter()
            .enumerate()
        {
            for (k, placement) in placements.iter().enumerate() {
                let alpha = 0.5 + 0.8 * draw.next();
                let p_r = 0.3 + 0.69 * draw.next();
                let sigma = [200, 2_000, 20_000, 60_000][(case + k) % 4];
                let w = Workload::zipf(d, alpha, p_r, placement.clone());
                let filter = rbf_data::filter::FilterConfig::sigma_bounded(3 * sigma, 4, sigma);
                let model = FnModel::new(&filter, &w, 1e-10).expect("a valid model");
                let states = model.profile(false).expect("a sigma-bounded profile").len();
                let mut fast = RunDisabling::new(&model.q, &model.zeta, p_r, TOLERANCE);
                let mut slow = RunDisabling::new(&model.q, &model.zeta, p_r, TOLERANCE);
                for state in 0..states {
                    let (a, b) = (fast.enabled_mass(), slow.enabled_mass());
                    assert!(
                        (a - b).abs() <= 1e-9 * b.abs(),
                        "D = {d}, alpha = {alpha:.3}, {placement:?}, state {state}: {a:e} vs {b:e}"
                    );
                    fast.distinct_arrival();
                    reference_arrival(&mut slow);
                }
            }
        }
    }

    /// A deterministic stream of uniforms in [0, 1) (splitmix64).
    struct Draws(u64);

    impl Draws {
        fn next(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) as f64 / 2f64.powi(64)
        }
    }

    #[test]
    fn runs_agree_with_the_exact_update_on_random_workloads() {
        use crate::model::false_negative::markov::{
            disabling_estimates_exact, one_phase, per_state, two_phase,
        };
        use crate::model::false_negative::FnModel;
        use rbf_data::filter::FilterConfig;
        use rbf_data::workload::{Placement, Popularity, Workload};
        let mut draw = Draws(38);
        let mut worst = [0.0f64; 2];
        for case in 0..24 {
            let d = [2_000, 20_000, 100_000][case % 3];
            let alpha = 1.5 * draw.next();
            let p_r = 0.3 + 0.69 * draw.next();
            let placement = match case % 6 {
                0 => Placement::Uniform,
                1 => Placement::Top,
                2 => Placement::Bottom,
                3 => Placement::Segments(vec![8.0, 4.0, 2.0, 1.0]),
                4 => Placement::Mixture {
                    top: draw.next(),
                    bottom: draw.next(),
                    segments: vec![draw.next(), draw.next(), draw.next()],
                },
                _ => Placement::Segments(vec![1.0, 3.0]),
            };
            let mut w = Workload::zipf(d, alpha, p_r, placement.clone());
            if case % 4 == 3 {
                // A fitted shape: an exponent per decade.
                w.popularity = Popularity::PiecewiseZipf {
                    distinct: d,
                    exponents: (0..5).map(|_| 0.3 + draw.next()).collect(),
                };
            }
            let phases = if case % 5 == 4 { 2 } else { 1 };
            let mut filter =
                FilterConfig::sigma_bounded(if phases == 2 { 16_000 } else { 8_000 }, 4, 2_500);
            filter.phases = phases;
            let model = FnModel::new(&filter, &w, 1e-10).expect("a valid model");
            let profile = model.profile(false).expect("a sigma-bounded profile");
            let exact = disabling_estimates_exact(&model.q, &model.zeta, p_r, &profile);
            let rate = |f: &[f64]| {
                if phases == 2 {
                    two_phase(&profile, f, p_r).fn_rate
                } else {
                    one_phase(&profile, f, p_r).fn_rate
                }
            };
            let a = rate(&exact);
            for (k, (tolerance, agreement)) in
                [(TOLERANCE, AGREEMENT), (RANGE_TOLERANCE, RANGE_AGREEMENT)]
                    .into_iter()
                    .enumerate()
            {
                let chain = RunDisabling::new(&model.q, &model.zeta, p_r, tolerance);
                let runs = per_state(chain, &profile);
                let b = rate(&runs);
                let rel = (a - b).abs() / a;
                worst[k] = worst[k].max(rel);
                assert!(
                    rel <= agreement,
                    "case {case}: D = {d}, alpha = {alpha:.3}, p_r = {p_r:.3}, {placement:?}, {phases} phases, tolerance {tolerance}: FN {a:e} exact vs {b:e} on runs (relative {rel:.2e})"
                );
            }
        }
        eprintln!(
            "worst relative difference of the FN rate on runs: {:.2e} (tolerance {TOLERANCE}), {:.2e} (tolerance {RANGE_TOLERANCE})",
            worst[0], worst[1]
        );
    }
}
