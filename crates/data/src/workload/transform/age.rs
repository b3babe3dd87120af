//! The age's transform without Q's recursion: its per-run terms, kept while only Q
//! changes.
//!
//! The age a of a repeat follows g_i(n) = a_i g_i(n - 1) + b_i g_{i-1}(n - 1) with
//! a_i = p_r + (1 - p_r) Z>_i and b_i = (1 - p_r) Z<_i: draws do not make a message
//! younger, so neither coefficient reads q. Its generating function's forward
//! substitution x_i (module docs of [`super`]) is therefore the same for every Q on the
//! same runs, placement and p_r, and the transform is the sum of q_i x_i over the ranks
//! (of q times the run's sum of x over its ranks, per run). A fit's profile varies Q's
//! exponent at a fixed D and placement, and most columns of its derivatives vary one
//! exponent: there the x (a logarithm and two exponentials per run and scale) are the
//! ones already computed. [`terms`] keeps the last few sets, keyed by everything they
//! read; the sums are formed in the same order from the same terms, so a value is the
//! same bits whether its terms were kept or computed.

use super::{mid_run_above, scale, Geometric, RankRuns};
use std::sync::{Arc, Mutex};

/// Sets of terms kept: the calls of one fit's search in flight at once (a profile
/// point per thread, a derivative's base point and its columns) without holding more
/// than a few hundred KB each.
const KEPT: usize = 8;

/// Per run and scale, the sum of x over the run's ranks (the factor of its q), and the
/// inputs they were computed from.
pub(super) struct AgeTerms {
    p_r: u64,
    taus: Vec<u64>,
    width: Vec<u64>,
    zeta: Vec<u64>,
    /// terms[j * runs + r]: scale j, run r.
    terms: Vec<f64>,
}

impl AgeTerms {
    fn reads(&self, runs: &RankRuns, p_r: f64, taus: &[f64]) -> bool {
        let same = |kept: &[u64], now: &[f64]| {
            kept.len() == now.len() && kept.iter().zip(now).all(|(k, v)| *k == v.to_bits())
        };
        self.p_r == p_r.to_bits()
            && same(&self.taus, taus)
            && same(&self.width, &runs.width)
            && same(&self.zeta, &runs.zeta)
    }

    /// The sum of q_i x_i at scale `j` with the runs' popularity `q`: the age's
    /// transform over 1 - e^(-1/tau).
    pub(super) fn sum(&self, j: usize, q: &[f64]) -> f64 {
        let n = self.width.len();
        let mut sum = 0.0f64;
        for ((&w, &t), &q) in self
            .width
            .iter()
            .zip(&self.terms[j * n..(j + 1) * n])
            .zip(q)
        {
            // Runs of no ranks add nothing (as in the recursion, which skips them).
            if f64::from_bits(w) > 0.0 {
                sum += q * t;
            }
        }
        sum
    }
}

/// Sets of terms, most recently used first, at most [`KEPT`].
struct Kept(Vec<Arc<AgeTerms>>);

impl Kept {
    /// The kept set that reads these inputs bit for bit, moved to the front.
    fn find(&mut self, runs: &RankRuns, p_r: f64, taus: &[f64]) -> Option<Arc<AgeTerms>> {
        let i = self.0.iter().position(|t| t.reads(runs, p_r, taus))?;
        let t = self.0.remove(i);
        self.0.insert(0, Arc::clone(&t));
        Some(t)
    }

    /// Keeps `terms` in place of the least recently used set.
    fn keep(&mut self, terms: &Arc<AgeTerms>) {
        self.0.insert(0, Arc::clone(terms));
        self.0.truncate(KEPT);
    }
}

/// The process's kept sets.
static KEPT_TERMS: Mutex<Kept> = Mutex::new(Kept(Vec::new()));

/// The terms for `runs` at `p_r` and `taus`: kept ones when they read the same inputs
/// bit for bit, else computed (and kept).
pub(super) fn terms(runs: &RankRuns, p_r: f64, taus: &[f64]) -> Arc<AgeTerms> {
    // A poisoned lock only means another thread panicked while holding it; the kept
    // sets are whole values either way.
    let kept = || KEPT_TERMS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(t) = kept().find(runs, p_r, taus) {
        return t;
    }
    let fresh = Arc::new(compute(runs, p_r, taus));
    kept().keep(&fresh);
    fresh
}

fn compute(runs: &RankRuns, p: f64, taus: &[f64]) -> AgeTerms {
    let n = runs.width.len();
    let mut terms = vec![0.0; n * taus.len()];
    for (j, &tau) in taus.iter().enumerate() {
        let (om, z) = scale(tau);
        let out = &mut terms[j * n..(j + 1) * n];
        let mut x = 0.0f64;
        let mut z_above = 0.0f64;
        for (r, (&h, &rho)) in runs.width.iter().zip(&runs.zeta).enumerate() {
            if h <= 0.0 {
                continue;
            }
            if h == 1.0 {
                // One rank: the plain recursion.
                let b = (1.0 - p) * z_above;
                let den_a = om + z * (1.0 - p) * (z_above + rho);
                x = (1.0 + z * b * x) / den_a;
                out[r] = x;
                z_above = (z_above + rho).min(1.0);
                continue;
            }
            let z_lt = mid_run_above(z_above, rho, h);
            // 1 - a_i = (1 - p)(Z< + zeta); what is lost rather than passed down a rank
            // is the new message at the rank itself.
            let geo = Geometric::new(z, om, (1.0 - p) * (z_lt + rho), (1.0 - p) * rho, h);
            (out[r], x) = geo.sweep(x);
            z_above = (z_above + rho * h).min(1.0);
        }
    }
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect();
    AgeTerms {
        p_r: p.to_bits(),
        taus: bits(taus),
        width: bits(&runs.width),
        zeta: bits(&runs.zeta),
        terms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs in the fit's shape: single ranks, then runs about 1/30 of their rank wide,
    /// the last one a fraction of a rank.
    fn runs(alpha: f64, zeta: impl Fn(usize) -> f64) -> RankRuns {
        let mut runs = RankRuns::default();
        let mut r = 0usize;
        while r < 3000 {
            let w = (r / 30).max(1).min(3000 - r);
            let q = ((r + 1) as f64).powf(-alpha);
            runs.push(w as f64, q, zeta(r) * w as f64 / 3000.0);
            r += w;
        }
        runs.push(0.4, 3001f64.powf(-alpha), 0.0);
        let total: f64 = runs.width.iter().zip(&runs.q).map(|(w, q)| w * q).sum();
        runs.q.iter_mut().for_each(|q| *q /= total);
        runs
    }

    /// A kept set of terms gives the bits a fresh one gives, for another Q on the same
    /// runs and placement (what the fit reuses them for); a change in anything the
    /// terms read finds none; at most [`KEPT`] sets are kept.
    #[test]
    fn kept_terms_give_the_bits_of_fresh_ones() {
        let taus = [1.0, 17.0, 900.0, 4e4, 3e6];
        let shapes: [fn(usize) -> f64; 2] = [|_| 1.0, |r| if r < 1500 { 0.0 } else { 2.0 }];
        for shape in shapes {
            let first = runs(0.8, shape);
            let mut kept = Kept(Vec::new());
            let terms = Arc::new(compute(&first, 0.9, &taus));
            kept.keep(&terms);
            for alpha in [0.3, 1.1, 2.0] {
                let other = runs(alpha, shape);
                let found = kept
                    .find(&other, 0.9, &taus)
                    .expect("the same runs and placement");
                assert!(Arc::ptr_eq(&found, &terms));
                let fresh = compute(&other, 0.9, &taus);
                for (j, tau) in taus.iter().enumerate() {
                    let om = scale(*tau).0;
                    let (a, b) = (om * found.sum(j, &other.q), om * fresh.sum(j, &other.q));
                    assert_eq!(a.to_bits(), b.to_bits(), "alpha {alpha} tau {tau}");
                    assert!(a > 0.0 && a < 1.0);
                }
            }
            let mut moved = first.clone();
            moved.zeta[5] += 1e-12;
            assert!(kept.find(&moved, 0.9, &taus).is_none());
            assert!(kept.find(&first, 0.9 + 1e-12, &taus).is_none());
            assert!(kept.find(&first, 0.9, &taus[..4]).is_none());
            for i in 0..KEPT {
                kept.keep(&Arc::new(compute(&first, 0.5 + i as f64 / 100.0, &taus)));
            }
            assert_eq!(kept.0.len(), KEPT);
            assert!(kept.find(&first, 0.9, &taus).is_none());
        }
    }

    /// A second call on the same ranks gives the transforms of the first (its age from
    /// the kept terms), and the age is the terms' sum with the ranks' q (`super::tests`
    /// checks the transforms against the survival functions step by step).
    #[test]
    fn transforms_take_the_age_from_the_kept_terms() {
        let q = crate::workload::zipf(300, 0.9);
        let zeta = vec![1.0 / 300.0; 300];
        let exact = RankRuns::exact(&q, &zeta);
        let taus = [2.0, 50.0, 7e3];
        let t = super::super::transforms(&exact, 0.8, &taus);
        let again = super::super::transforms(&exact, 0.8, &taus);
        assert_eq!(t, again);
        let fresh = compute(&exact, 0.8, &taus);
        for (j, age) in t.age.iter().enumerate() {
            let (om, _) = scale(taus[j]);
            assert_eq!(age.to_bits(), (om * fresh.sum(j, &q)).to_bits());
        }
    }
}
