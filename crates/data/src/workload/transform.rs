//! What the arrival model predicts, exactly, for three statistics of a trace's repeats.
//!
//! For a repeat (an arrival of a previously seen message), let
//!
//! * d, its *reuse distance*, be the arrivals since the message's previous arrival,
//! * a, its *age*, the arrivals since the message's first arrival (its birth as a new
//!   message), and
//! * d2 the arrivals since its arrival before the previous one (infinite when the
//!   message has arrived only once before),
//!
//! and S(n) = P(d > n), A(n) = P(a > n), S2(n) = P(d2 > n) their survival functions
//! over repeats. Under the FN paper's workload model (§3.1: ranks 0..D with popularity
//! q_i, repeat probability p_r, placement zeta_i), each is sum_i q_i g_i(n) for a
//! per-rank recursion of the form of eq. (24) (docs/FIT.md, "Fitting Q and the
//! placement"):
//!
//! g_i(n) = a_i g_i(n - 1) + b_i g_{i-1}(n - 1),   g_i(0) = 1,
//!
//! with b_i = (1 - p_r) Z<_i (a new message above rank i brings the holder of rank
//! i - 1 down) and
//!
//! * S: a_i = p_r (1 - q_i) + (1 - p_r) Z>_i (eq. 24: a draw of the holder or a new
//!   message at rank i disables the rank), so S(n) = U_{n+1} of the renewal bound;
//! * A: a_i = p_r + (1 - p_r) Z>_i (draws do not make a message younger);
//! * S2: two states per rank, no arrival (g0, the S recursion) and exactly one (g1):
//!   g1_i(n) = a_i g1_i(n-1) + b_i g1_{i-1}(n-1) + p_r q_i g0_i(n-1) + (1 - p_r) zeta_i,
//!   with S2(n) = sum_i q_i (g0_i(n) + g1_i(n)).
//!
//! Z<_i and Z>_i are the placement mass above and below rank i. The recursions run over
//! n, but their generating functions at z = e^(-1/tau) take one pass over the ranks
//! (a forward substitution of the bidiagonal system (I - zA) x = 1):
//!
//! x_i = (1 + z b_i x_{i-1}) / (1 - z a_i),   sum_n S(n) z^n = sum_i q_i x_i,
//!
//! and L(tau) = (1 - z) sum_n S(n) z^n = E[1 - z^d] is S averaged over n drawn from a
//! geometric law of mean about tau: the reuse profile seen at time scale tau. A trace
//! gives E[1 - z^d] directly (a mean over its repeats), so the model is tested and
//! fitted at a few dozen scales tau in O(D) each, however long the trace.
//!
//! Runs: ranks that share their q and zeta per rank form a run whose recursion has a
//! closed form (a geometric sequence), so a popularity that is smooth in the rank
//! costs the number of runs, not D ([`RankRuns`]). A run of one rank is exact; in a
//! longer run Z<_i, which grows linearly across the run, is taken at the run's middle.

mod age;

/// Popularity and placement per rank, in runs of ranks that share both.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RankRuns {
    /// Ranks in each run (the last run may be a fraction of a rank, so that D can
    /// vary continuously in a fit).
    pub width: Vec<f64>,
    /// q per rank in each run.
    pub q: Vec<f64>,
    /// zeta per rank in each run.
    pub zeta: Vec<f64>,
}

impl RankRuns {
    /// One run per rank: the exact recursion.
    pub fn exact(q: &[f64], zeta: &[f64]) -> RankRuns {
        RankRuns {
            width: vec![1.0; q.len()],
            q: q.to_vec(),
            zeta: zeta.to_vec(),
        }
    }

    pub fn push(&mut self, width: f64, q: f64, zeta: f64) {
        self.width.push(width);
        self.q.push(q);
        self.zeta.push(zeta);
    }

    /// The number of ranks, D.
    pub fn ranks(&self) -> f64 {
        self.width.iter().sum()
    }
}

/// The three statistics, each as L(tau) = E[1 - e^(-x / tau)] per tau.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Transforms {
    /// Of the reuse distance d.
    pub reuse: Vec<f64>,
    /// Of the age a.
    pub age: Vec<f64>,
    /// Of the distance d2 to the arrival before the previous one.
    pub second: Vec<f64>,
}

/// The model's transforms at each tau (in arrivals, > 0).
///
/// The age's share of each run does not depend on Q (see [`age`]): it is computed once
/// per runs, placement, p_r and scales and reused while only Q changes, as it does
/// across a fit's profile and most of its derivatives. The values are the same bits
/// either way.
pub fn transforms(runs: &RankRuns, p_r: f64, taus: &[f64]) -> Transforms {
    let terms = age::terms(runs, p_r, taus);
    let mut out = Transforms::default();
    for (j, &tau) in taus.iter().enumerate() {
        let (om, z) = scale(tau);
        let (reuse, second) = at_scale(runs, p_r, om, z);
        out.reuse.push(reuse);
        out.age.push(om * terms.sum(j, &runs.q));
        out.second.push(second);
    }
    out
}

/// The recursion's state after a run of ranks: x of the last rank and the running sum
/// of q_i x_i.
#[derive(Clone, Copy, Default)]
struct Sweep {
    x: f64,
    sum: f64,
}

/// 1 - e^(-1/tau) without cancellation at large tau, and e^(-1/tau).
fn scale(tau: f64) -> (f64, f64) {
    (-(-1.0 / tau).exp_m1(), (-1.0 / tau).exp())
}

/// The reuse distance's and the second distance's transforms at the scale with
/// 1 - z = `om` and z = e^(-1/tau) ([`scale`]).
fn at_scale(runs: &RankRuns, p: f64, om: f64, z: f64) -> (f64, f64) {
    let mut s = Sweep::default();
    // The second state of S2 (one arrival in the window) and its running sum.
    let mut s1 = Sweep::default();
    let mut z_above = 0.0f64;
    for ((&h, &q), &rho) in runs.width.iter().zip(&runs.q).zip(&runs.zeta) {
        if h <= 0.0 {
            continue;
        }
        if h == 1.0 {
            // One rank: the plain recursion (the closed form below gives the same).
            let b = (1.0 - p) * z_above;
            let den_s = om + z * (p * q + (1.0 - p) * (z_above + rho));
            let xs = (1.0 + z * b * s.x) / den_s;
            s1.x = (z * (p * q * xs + b * s1.x) + z * (1.0 - p) * rho / om) / den_s;
            s.x = xs;
            s.sum += q * xs;
            s1.sum += q * s1.x;
            z_above = (z_above + rho).min(1.0);
            continue;
        }
        let z_lt = mid_run_above(z_above, rho, h);
        // 1 - a_i for S (1 - a = p q + (1 - p)(Z< + zeta)).
        let keep_s = p * q + (1.0 - p) * (z_lt + rho);
        let geo_s = Geometric::new(z, om, keep_s, p * q + (1.0 - p) * rho, h);
        // S2's second state: x1_k = c1 + d x1_{k-1} + e x_k, forced by the S sequence.
        let c1 = z * (1.0 - p) * rho / (om * geo_s.den);
        let e = z * p * q / geo_s.den;
        let delta = s.x - geo_s.fixed;
        let y_fixed = (c1 + e * geo_s.fixed) / geo_s.one_minus_d;
        let delta1 = s1.x - y_fixed;
        let sum_x1 = h * y_fixed + delta1 * geo_s.g1 + e * delta * geo_s.g2;
        s1.x = y_fixed + (delta1 + e * delta * h) * geo_s.dh;
        s1.sum += q * sum_x1;
        geo_s.advance(&mut s, q);
        z_above = (z_above + rho * h).min(1.0);
    }
    (om * s.sum, om * (s.sum + s1.sum))
}

/// Z< of a run of `h` ranks read at its middle, from the mass above the run.
fn mid_run_above(z_above: f64, rho: f64, h: f64) -> f64 {
    (z_above + rho * (h - 1.0).max(0.0) / 2.0).min(1.0)
}

/// x_k = c + d x_{k-1} over the h ranks of a run, in closed form: x_k = x* + (x_prev -
/// x*) d^(k+1) with the fixed point x* = c / (1 - d).
struct Geometric {
    den: f64,
    one_minus_d: f64,
    fixed: f64,
    /// d^h, sum_{j=1..h} d^j and sum_{j=1..h} j d^j.
    dh: f64,
    g1: f64,
    g2: f64,
    h: f64,
}

impl Geometric {
    /// `keep` = 1 - a (the rank's chance to be reset or shifted) and `leak` = 1 - a - b
    /// (what is lost rather than passed down a rank), both exact so that 1 - d keeps
    /// its relative precision when z is close to 1.
    fn new(z: f64, om: f64, keep: f64, leak: f64, h: f64) -> Geometric {
        let den = om + z * keep;
        let one_minus_d = (om + z * leak) / den;
        let fixed = 1.0 / den / one_minus_d;
        // d^h and the sums through eps = -ln d, with series where h eps is tiny.
        let eps = -(-one_minus_d).ln_1p();
        let he = h * eps;
        let dh = (-he).exp();
        let (g1, g2) = if he < 1e-4 {
            let s1 =
                h - eps * h * (h + 1.0) / 2.0 + eps * eps * h * (h + 1.0) * (2.0 * h + 1.0) / 12.0;
            let t = h * (h + 1.0) / 2.0;
            let s2 = t - eps * h * (h + 1.0) * (2.0 * h + 1.0) / 6.0 + eps * eps * t * t / 2.0;
            (s1, s2)
        } else {
            let d_ = 1.0 - one_minus_d;
            let g = -(-he).exp_m1() / one_minus_d;
            (d_ * g, d_ * (g - h * dh) / one_minus_d)
        };
        Geometric {
            den,
            one_minus_d,
            fixed,
            dh,
            g1,
            g2,
            h,
        }
    }

    /// The run's sum of x_k (the q-free part of its share of the sum) and the state
    /// after it.
    fn sweep(&self, x: f64) -> (f64, f64) {
        let delta = x - self.fixed;
        (
            self.h * self.fixed + delta * self.g1,
            self.fixed + delta * self.dh,
        )
    }

    fn advance(&self, s: &mut Sweep, q: f64) {
        let delta = s.x - self.fixed;
        s.sum += q * (self.h * self.fixed + delta * self.g1);
        s.x = self.fixed + delta * self.dh;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The survival functions by their recursions, step by step, summed into the
    /// transform: the definition, with no generating function.
    fn by_steps(q: &[f64], zeta: &[f64], p: f64, tau: f64) -> (f64, f64, f64) {
        let d = q.len();
        let mut z_lt = vec![0.0; d];
        for i in 1..d {
            z_lt[i] = z_lt[i - 1] + zeta[i - 1];
        }
        let (mut g, mut ga, mut g1) = (vec![1.0; d], vec![1.0; d], vec![0.0; d]);
        let z: f64 = (-1.0 / tau).exp();
        let (mut ls, mut la, mut l2) = (0.0, 0.0, 0.0);
        let mut w = 1.0 - z;
        let steps = (tau * 60.0) as usize + 100;
        for _ in 0..steps {
            let s: f64 = (0..d).map(|i| q[i] * g[i]).sum();
            let sa: f64 = (0..d).map(|i| q[i] * ga[i]).sum();
            let s2: f64 = (0..d).map(|i| q[i] * (g[i] + g1[i])).sum();
            ls += w * s;
            la += w * sa;
            l2 += w * s2;
            w *= z;
            let (og, oga, og1) = (g.clone(), ga.clone(), g1.clone());
            for i in 0..d {
                let zg = 1.0 - z_lt[i] - zeta[i];
                let b = (1.0 - p) * z_lt[i];
                let up = |v: &Vec<f64>| if i > 0 { v[i - 1] } else { 0.0 };
                g[i] = (p * (1.0 - q[i]) + (1.0 - p) * zg) * og[i] + b * up(&og);
                ga[i] = (p + (1.0 - p) * zg) * oga[i] + b * up(&oga);
                g1[i] = (p * (1.0 - q[i]) + (1.0 - p) * zg) * og1[i]
                    + b * up(&og1)
                    + p * q[i] * og[i]
                    + (1.0 - p) * zeta[i];
            }
        }
        (ls, la, l2)
    }

    fn zipf(d: usize) -> Vec<f64> {
        crate::workload::zipf(d, 1.0)
    }

    #[test]
    fn generating_functions_match_the_recursions() {
        let d = 40;
        let q = zipf(d);
        let placements: [Vec<f64>; 3] = [
            vec![1.0 / d as f64; d],
            (0..d).map(|i| if i == 0 { 1.0 } else { 0.0 }).collect(),
            (0..d).map(|i| (i + 1) as f64 / 820.0).collect(),
        ];
        for zeta in &placements {
            for p in [1.0, 0.9, 0.5] {
                for tau in [1.0, 7.0, 60.0] {
                    let want = by_steps(&q, zeta, p, tau);
                    let t = transforms(&RankRuns::exact(&q, zeta), p, &[tau]);
                    for (got, want) in [
                        (t.reuse[0], want.0),
                        (t.age[0], want.1),
                        (t.second[0], want.2),
                    ] {
                        assert!(
                            (got - want).abs() < 1e-9,
                            "p {p} tau {tau}: {got} vs {want}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn runs_of_equal_ranks_match_rank_by_rank() {
        // A popularity and placement constant over blocks: the closed form of a run is
        // exact when zeta is zero inside it and close (Z< at the middle) otherwise.
        let mut q = Vec::new();
        let mut runs = RankRuns::default();
        for (w, qv) in [(1usize, 0.2), (3, 0.1), (50, 0.006), (400, 0.0012)] {
            q.extend(std::iter::repeat_n(qv, w));
            runs.push(w as f64, qv, 0.0);
        }
        let total: f64 = q.iter().sum();
        q.iter_mut().for_each(|x| *x /= total);
        runs.q.iter_mut().for_each(|x| *x /= total);
        let d = q.len();
        let mut top = vec![0.0; d];
        top[0] = 1.0;
        runs.zeta[0] = 1.0;
        let taus = [1.0, 10.0, 100.0, 1e4, 1e7];
        let exact = transforms(&RankRuns::exact(&q, &top), 0.9, &taus);
        let blocked = transforms(&runs, 0.9, &taus);
        for (a, b) in exact.reuse.iter().zip(&blocked.reuse) {
            assert!((a - b).abs() < 1e-12, "{a} {b}");
        }
        for (a, b) in exact.second.iter().zip(&blocked.second) {
            assert!((a - b).abs() < 1e-12, "{a} {b}");
        }
    }

    #[test]
    fn narrow_runs_under_uniform_placement_are_close() {
        // Z< grows across a run under uniform placement and is read at the run's
        // middle: with runs a quarter of a percent of their rank wide (as the fit
        // uses), the transforms move by far less than a trace's noise.
        let d = 20_000usize;
        let mut runs = RankRuns::default();
        let mut r = 0usize;
        while r < d {
            let w = (r / 400).max(1).min(d - r);
            runs.push(
                w as f64,
                ((r + 1) as f64 + (w as f64 - 1.0) / 2.0).recip(),
                1.0 / d as f64,
            );
            r += w;
        }
        let total: f64 = runs.width.iter().zip(&runs.q).map(|(w, q)| w * q).sum();
        runs.q.iter_mut().for_each(|x| *x /= total);
        let mut q = Vec::with_capacity(d);
        for (w, qv) in runs.width.iter().zip(&runs.q) {
            q.extend(std::iter::repeat_n(*qv, *w as usize));
        }
        assert!(runs.width.len() < 4000, "{}", runs.width.len());
        let taus = [1.0, 30.0, 1e3, 3e4, 1e6];
        for p in [0.9, 0.5] {
            let exact = transforms(&RankRuns::exact(&q, &vec![1.0 / d as f64; d]), p, &taus);
            let blocked = transforms(&runs, p, &taus);
            for (e, b) in [
                (&exact.reuse, &blocked.reuse),
                (&exact.age, &blocked.age),
                (&exact.second, &blocked.second),
            ] {
                for (a, b) in e.iter().zip(b) {
                    assert!((a - b).abs() < 2e-5, "p {p}: {a} {b}");
                }
            }
        }
    }
}
