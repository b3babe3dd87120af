//! Levenberg-Marquardt for the small, bounded least-squares problems of the fit: a
//! dozen parameters, a hundred residuals. The Jacobian is taken by forward differences,
//! its columns on threads of their own (each column is computed alone, so the result
//! does not depend on the thread count).

use rayon::prelude::*;

/// A bounded problem: residuals r(x) with lower <= x <= upper; parameters with
/// `free[j] == false` stay at their starting value.
pub struct Problem<'a> {
    pub residuals: &'a (dyn Fn(&[f64]) -> Vec<f64> + Sync),
    pub lower: Vec<f64>,
    pub upper: Vec<f64>,
    pub free: Vec<bool>,
}

#[derive(Clone, Debug)]
pub struct Solution {
    pub x: Vec<f64>,
    /// Sum of squared residuals at x.
    pub chi2: f64,
    pub iterations: usize,
}

/// A step that lowers the sum of squares by less than this ends the search: the
/// residuals are standardised, so this is a thousandth of one standard error squared.
const CHI2_TOLERANCE: f64 = 1e-3;

fn chi2(r: &[f64]) -> f64 {
    r.iter().map(|v| v * v).sum()
}

impl Problem<'_> {
    fn clamp(&self, x: &mut [f64]) {
        for ((v, lo), hi) in x.iter_mut().zip(&self.lower).zip(&self.upper) {
            *v = v.clamp(*lo, *hi);
        }
    }

    /// Minimises from `x0` for at most `max_iterations` steps.
    pub fn minimize(&self, x0: &[f64], max_iterations: usize) -> Solution {
        let n = x0.len();
        let mut x = x0.to_vec();
        self.clamp(&mut x);
        let mut r = (self.residuals)(&x);
        let mut best = chi2(&r);
        let mut lambda = 1e-3;
        let mut iterations = 0;
        while iterations < max_iterations {
            iterations += 1;
            let jac = self.jacobian(&x, &r);
            // Normal equations on the free parameters.
            let idx: Vec<usize> = (0..n).filter(|&j| self.free[j]).collect();
            let m = idx.len();
            if m == 0 {
                break;
            }
            let mut jtj = vec![vec![0.0; m]; m];
            let mut jtr = vec![0.0; m];
            for (a, &ja) in idx.iter().enumerate() {
                for (b, &jb) in idx.iter().enumerate().skip(a) {
                    let v: f64 = jac[ja].iter().zip(&jac[jb]).map(|(p, q)| p * q).sum();
                    jtj[a][b] = v;
                    jtj[b][a] = v;
                }
                jtr[a] = jac[ja].iter().zip(&r).map(|(p, q)| p * q).sum();
            }
            let mut improved = false;
            for _ in 0..12 {
                let mut sys = jtj.clone();
                for (a, row) in sys.iter_mut().enumerate() {
                    row[a] += lambda * jtj[a][a].max(1e-9);
                }
                let Some(step) = solve(sys, jtr.iter().map(|v| -v).collect()) else {
                    lambda *= 10.0;
                    continue;
                };
                let mut trial = x.clone();
                for (a, &j) in idx.iter().enumerate() {
                    trial[j] += step[a];
                }
                self.clamp(&mut trial);
                let rt = (self.residuals)(&trial);
                let ct = chi2(&rt);
                if ct.is_finite() && ct < best {
                    let gain = best - ct;
                    x = trial;
                    r = rt;
                    best = ct;
                    lambda = (lambda / 3.0).max(1e-9);
                    improved = true;
                    if gain < CHI2_TOLERANCE {
                        return Solution {
                            x,
                            chi2: best,
                            iterations,
                        };
                    }
                    break;
                }
                lambda *= 4.0;
            }
            if !improved {
                break;
            }
        }
        Solution {
            x,
            chi2: best,
            iterations,
        }
    }

    /// For each gradient g (of some functional of the parameters), the direction in
    /// which the functional grows fastest for a given rise in the sum of squares, to
    /// first order: (J^T J)^-1 g, scaled so that a unit step adds 1 to the sum of
    /// squares (with g = e_i, the linearised profile of parameter i: the others follow
    /// it). Only the free parameters the residuals depend on move; a gradient without
    /// a component along them has no direction.
    pub fn directions(&self, x: &[f64], gradients: &[Vec<f64>]) -> Vec<Vec<f64>> {
        let r = (self.residuals)(x);
        let jac = self.jacobian(x, &r);
        let seen: Vec<usize> = (0..x.len())
            .filter(|&j| self.free[j] && jac[j].iter().any(|v| *v != 0.0))
            .collect();
        let normal: Vec<Vec<f64>> = seen
            .iter()
            .map(|&i| {
                seen.iter()
                    .map(|&j| {
                        let dot: f64 = jac[i].iter().zip(&jac[j]).map(|(u, v)| u * v).sum();
                        // A relative ridge: nearly flat directions stay solvable.
                        if i == j {
                            dot * (1.0 + 1e-9) + 1e-12
                        } else {
                            dot
                        }
                    })
                    .collect()
            })
            .collect();
        gradients
            .iter()
            .filter_map(|g| {
                let g: Vec<f64> = seen
                    .iter()
                    .map(|&j| g.get(j).copied().unwrap_or(0.0))
                    .collect();
                let c = solve(normal.clone(), g.clone())?;
                let scale = g.iter().zip(&c).map(|(a, b)| a * b).sum::<f64>().sqrt();
                if !(scale.is_finite() && scale > 0.0) {
                    return None;
                }
                let mut d = vec![0.0; x.len()];
                for (q, &j) in seen.iter().enumerate() {
                    d[j] = c[q] / scale;
                }
                Some(d)
            })
            .collect()
    }

    /// Columns of dr/dx (zero for fixed parameters), by forward differences stepping
    /// inward at a bound.
    fn jacobian(&self, x: &[f64], r: &[f64]) -> Vec<Vec<f64>> {
        (0..x.len())
            .into_par_iter()
            .map(|j| {
                if !self.free[j] {
                    return vec![0.0; r.len()];
                }
                let mut h = 1e-5 * x[j].abs().max(1.0);
                if x[j] + h > self.upper[j] {
                    h = -h;
                }
                let mut xp = x.to_vec();
                xp[j] += h;
                let rp = (self.residuals)(&xp);
                rp.iter().zip(r).map(|(a, b)| (a - b) / h).collect()
            })
            .collect()
    }
}

/// Solves a small dense system by Gaussian elimination with partial pivoting; None if
/// it is singular.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for c in 0..n {
        let p = (c..n).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))?;
        // A NaN pivot is singular too.
        if a[p][c].is_nan() || a[p][c].abs() <= 1e-300 {
            return None;
        }
        a.swap(c, p);
        b.swap(c, p);
        let bc = b[c];
        let (top, rest) = a.split_at_mut(c + 1);
        let pivot = &top[c];
        for (row, bi) in rest.iter_mut().zip(b[c + 1..].iter_mut()) {
            let f = row[c] / pivot[c];
            for (v, pv) in row[c..].iter_mut().zip(&pivot[c..]) {
                *v -= f * pv;
            }
            *bi -= f * bc;
        }
    }
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        let s: f64 = (i + 1..n).map(|k| a[i][k] * x[k]).sum();
        x[i] = (b[i] - s) / a[i][i];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_an_exponential_decay_within_bounds() {
        // y = 3 e^(-0.7 t), exactly: the fit recovers both parameters; with the rate
        // bounded above by 0.5 it stops at the bound.
        let ts: Vec<f64> = (0..20).map(|i| i as f64 * 0.3).collect();
        let f = |x: &[f64]| -> Vec<f64> {
            ts.iter()
                .map(|t| x[0] * (-x[1] * t).exp() - 3.0 * (-0.7 * t).exp())
                .collect()
        };
        let p = Problem {
            residuals: &f,
            lower: vec![0.0, 0.0],
            upper: vec![10.0, 5.0],
            free: vec![true, true],
        };
        let s = p.minimize(&[1.0, 0.1], 100);
        assert!(
            (s.x[0] - 3.0).abs() < 1e-6 && (s.x[1] - 0.7).abs() < 1e-6,
            "{s:?}"
        );
        let bounded = Problem {
            upper: vec![10.0, 0.5],
            ..p
        };
        let s = bounded.minimize(&[1.0, 0.1], 100);
        assert!((s.x[1] - 0.5).abs() < 1e-12 && s.chi2 > 0.0, "{s:?}");
    }
}
