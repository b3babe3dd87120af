//! The law of S_c, the balls beyond c + 1 that an array of M bits needs to pass c set
//! bits (colliding hashes: every ball is a uniform bit, set or not).
//!
//! Ball by ball, the set-bit count is a pure-birth chain: with i bits set, a ball sets
//! a new one with probability 1 - q_i, q_i = i / M. The balls spent at i are therefore
//! a geometric number, 1 + F_i with P(F_i = f) = (1 - q_i) q_i^f, independent over i,
//! and the count passes c after T_{c+1} = c + 1 + S_c balls, S_c = F_1 + ... + F_c.
//! Hence P(bit count after b balls <= c) = P(T_{c+1} > b) = P(S_c >= b - c): exactly,
//! with no recursion over the balls.
//!
//! S_c's generating function is G(z) = prod_i (1 - q_i) / (1 - q_i z), so
//! log G(z) = sum_{r >= 1} (P_r / r) (z^r - 1) with the power sums P_r = sum_i q_i^r
//! (Euler-Maclaurin, exact to rounding for r < 6 and within a stated remainder above).
//! The law on a window [lo, lo + W) is the inverse DFT of G at the W-th roots of unity:
//! that gives P(S = s) plus the mass congruent to s outside the window (aliasing),
//! which Chernoff bounds from G at real points make below 1e-32. Every error (the
//! series' tail, the power sums' remainder, the rounding of the series, exp and the
//! FFT) is bounded and carried, so [`HittingLaw::at_least`] returns a proven interval.

use crate::model::false_negative::fft::{Plan, C64};

const UNIT: f64 = f64::EPSILON / 2.0;

/// The law of S_c on a window, with proven error terms.
pub struct HittingLaw {
    /// First value of the window.
    lo: i64,
    /// suffix[i] = computed P(S >= lo + i) within the window (i < W), suffix[W] = 0.
    suffix: Vec<f64>,
    /// Bounds of P(S < lo) and P(S >= lo + W).
    below: f64,
    above: f64,
    /// L1 bound of the computed window law's error (rounding), suffix sums included.
    err: f64,
    pub mean: f64,
    pub sd: f64,
}

/// Why the law cannot be computed here (the caller runs the exact engine).
pub const TOO_FULL: &str =
    "the threshold is too close to the filter's size for the hitting-time series; the exact engine ran";

/// The series of log E[z^S]: the power sums P_r over the terms the real-z bounds
/// need, and how many the unit circle needs.
struct Series {
    /// c, and q = c / M (the largest q_i).
    c: f64,
    q: f64,
    p: Vec<f64>,
    p_err: Vec<f64>,
    /// Terms for |z| = 1 (the first `r_unit` of `p`).
    r_unit: usize,
    /// The largest real z the terms serve: z_max q = (1 + q) / 2.
    z_max: f64,
}

impl Series {
    fn new(m: u64, c: u64) -> Result<Series, &'static str> {
        let q = c as f64 / m as f64;
        if q > 0.97 || c >= m {
            return Err(TOO_FULL);
        }
        let rho = (1.0 + q) / 2.0;
        // Terms until the next would be below 1e-22 of the sum's scale c.
        let terms = |ratio: f64| {
            ((1e-22 / (c as f64 + 1.0)).ln() / ratio.ln())
                .ceil()
                .max(8.0) as usize
                + 2
        };
        let r_real = terms(rho);
        if r_real > 4000 {
            return Err(TOO_FULL);
        }
        let (p, p_err) = power_sums(m, c, r_real);
        Ok(Series {
            c: c as f64,
            q,
            p,
            p_err,
            r_unit: terms(q).min(r_real),
            z_max: rho / q,
        })
    }

    /// An upper bound of log E[z^S] for real z in (0, z_max]: sum_r (P_r / r)(z^r - 1)
    /// with the power sums' errors and a margin for the rounding.
    ///
    /// Where z^r is huge or P_r tiny (a filter many times larger than c: q^r underflows
    /// and z_max^r overflows long before the terms end), the term is bounded instead by
    /// P_r z^r / r <= c (q z)^r / r (each q_i <= q; q z <= (1 + q) / 2 < 1), and by 0 for
    /// z < 1, where it is negative.
    fn log_g(&self, z: f64) -> f64 {
        let (mut s, mut zr, mut mag) = (0.0, 1.0, 0.0);
        let mut qzr = 1.0;
        for (i, (&pr, &pe)) in self.p.iter().zip(&self.p_err).enumerate() {
            zr *= z;
            qzr *= self.q * z;
            if zr > 1e280 || pr < 1e-280 {
                let t = if z >= 1.0 {
                    self.c * qzr / (i + 1) as f64 * (1.0 + 8.0 * UNIT)
                } else {
                    0.0
                };
                s += t;
                mag += t;
                continue;
            }
            // The larger of the two ends of P_r's interval: z^r - 1 has either sign.
            let d = zr - 1.0;
            let t = (pr + pe.copysign(d)) / (i + 1) as f64 * d;
            s += t;
            mag += t.abs();
        }
        s + (self.p.len() as f64 + 4.0) * UNIT * mag + 1e-20
    }

    /// Chernoff: P(S >= x) <= G(z) z^-x (z >= 1), P(S <= x) <= G(z) z^-x (z <= 1).
    fn chernoff(&self, x: f64, upper: bool) -> f64 {
        let f = |t: f64| {
            let z = if upper { t.exp() } else { (-t).exp() };
            self.log_g(z) - x * z.ln()
        };
        let hi = if upper { self.z_max.ln() } else { 8.0 };
        golden_min(f, 0.0, hi).exp().min(1.0)
    }

    /// The window [lo, lo + w) with the bounds of the mass below and above it; None
    /// when the Chernoff bounds do not fall below `tail` within 10^4 steps of a
    /// standard deviation (they always should; this keeps a failure finite).
    fn window(&self, mean: f64, sd: f64, tail: f64) -> Option<(i64, usize, f64, f64)> {
        let mut steps = 0u32;
        let mut lo = (mean - 12.0 * sd).floor().max(0.0);
        while lo > 0.0 && self.chernoff(lo - 1.0, false) > tail {
            lo = (lo - sd).floor().max(0.0);
            steps += 1;
        }
        let mut hi = (mean + 12.0 * sd).ceil();
        while self.chernoff(hi + 1.0, true) > tail {
            hi = (hi + sd).ceil();
            steps += 1;
            if steps > 10_000 {
                return None;
            }
        }
        let below = if lo > 0.0 {
            self.chernoff(lo - 1.0, false)
        } else {
            0.0
        };
        let w = ((hi - lo) as usize + 2).next_power_of_two().max(64);
        Some((lo as i64, w, below, self.chernoff(lo + w as f64, true)))
    }

    /// The window, unless it is too wide to transform (over 2^26 cells).
    fn window_within(&self, mean: f64, sd: f64, tail: f64) -> Option<(i64, usize, f64, f64)> {
        if 30.0 * sd > (1u64 << 26) as f64 {
            return None;
        }
        self.window(mean, sd, tail).filter(|w| w.1 <= 1 << 26)
    }

    /// log E[e^{i theta S}] and a bound on its error, at theta = 2 pi mi / w.
    fn log_g_unit(&self, mi: usize, w: usize) -> (C64, f64) {
        let theta = 2.0 * std::f64::consts::PI * (mi as f64 / w as f64);
        let half = (theta / 2.0).sin();
        let step = C64::new(-2.0 * half * half, theta.sin()); // omega - 1
        let omega = C64::new(1.0 + step.re, step.im);
        let (mut re, mut im, mut mag, mut derr) = (0.0, 0.0, 0.0, 0.0);
        let (mut d, mut since) = (step, 0usize); // d = omega^(r+1) - 1
        for r in 0..self.r_unit {
            if r > 0 && r % 64 == 0 {
                // Resynchronise from the exactly reduced angle (r + 1) theta.
                let k = ((r as u64 + 1) * mi as u64) % w as u64;
                let a = 2.0 * std::f64::consts::PI * (k as f64 / w as f64);
                let hh = (a / 2.0).sin();
                d = C64::new(-2.0 * hh * hh, a.sin());
                since = 0;
            } else if r > 0 {
                d = C64::new(
                    omega.re * d.re - omega.im * d.im + step.re,
                    omega.re * d.im + omega.im * d.re + step.im,
                );
                since += 1;
            }
            let coef = self.p[r] / (r + 1) as f64;
            let dmag = (d.re * d.re + d.im * d.im).sqrt();
            re += coef * d.re;
            im += coef * d.im;
            mag += coef * dmag;
            // |error of d| <= 8 u (steps since resync + 1) min(2, (r + 1) theta).
            let de = 8.0 * UNIT * (since as f64 + 1.0) * (((r + 1) as f64) * theta).min(2.0);
            derr += coef * de + self.p_err[r] / (r + 1) as f64 * (dmag + de);
        }
        let r = self.r_unit;
        let tail = 2.0 * self.p[r - 1] * self.q / ((r as f64) * (1.0 - self.q)) + 1e-30;
        (
            C64::new(re, im),
            derr + (r as f64 + 2.0) * UNIT * mag + tail,
        )
    }

    /// E[omega^S] omega^-lo at the w-th roots of unity and the 2-norm of its errors.
    fn spectrum(&self, lo: i64, w: usize) -> (Vec<C64>, f64) {
        let mut h = vec![C64::default(); w];
        let mut dh2 = 0.0;
        for mi in 0..=w / 2 {
            let (l, dl) = self.log_g_unit(mi, w);
            // exp(L) e^{-i lo theta}, the phase reduced exactly.
            let k = ((lo as u64 % w as u64) * mi as u64) % w as u64;
            let phase = -2.0 * std::f64::consts::PI * (k as f64 / w as f64);
            let (ps, pc) = phase.sin_cos();
            let g = l.re.exp();
            let (cs, cc) = l.im.sin_cos();
            let val = C64::new(g * (cc * pc - cs * ps), g * (cc * ps + cs * pc));
            let e = g * ((dl.exp() - 1.0) * 1.01 + 12.0 * UNIT);
            h[mi] = val;
            let edge = mi == 0 || mi == w / 2;
            dh2 += if edge { e * e } else { 2.0 * e * e };
            if !edge {
                h[w - mi] = C64::new(val.re, -val.im);
            }
        }
        (h, dh2.sqrt())
    }
}

impl HittingLaw {
    /// The law of S_c for an array of `m` bits, tails outside the window at most
    /// `tail` each.
    pub fn new(m: u64, c: u64, tail: f64) -> Result<HittingLaw, &'static str> {
        if c == 0 {
            return Ok(HittingLaw {
                lo: 0,
                suffix: vec![1.0, 0.0],
                below: 0.0,
                above: 0.0,
                err: 0.0,
                mean: 0.0,
                sd: 0.0,
            });
        }
        let series = Series::new(m, c)?;
        let mean: f64 = series.p.iter().sum();
        let var: f64 = series
            .p
            .iter()
            .enumerate()
            .map(|(i, x)| (i + 1) as f64 * x)
            .sum();
        let sd = var.sqrt().max(1.0);
        let Some((lo, w, below, above)) = series.window_within(mean, sd, tail) else {
            return Err(TOO_FULL);
        };
        let (mut h, dh) = series.spectrum(lo, w);
        let h_norm = h
            .iter()
            .map(|c| c.re * c.re + c.im * c.im)
            .sum::<f64>()
            .sqrt();
        let plan = Plan::new(w);
        plan.transform(&mut h, false);
        let scale = 1.0 / w as f64;
        // L1 error: ||dH||_2 + e_fft ||H||_2 (see the module doc), then the suffix sums.
        let mut err = dh + plan.relative_error() * h_norm * 1.01;
        let mut suffix = vec![0.0; w + 1];
        for i in (0..w).rev() {
            suffix[i] = suffix[i + 1] + (h[i].re * scale).max(0.0);
        }
        err += (w as f64 + 2.0) * UNIT * suffix[0].max(1.0);
        Ok(HittingLaw {
            lo,
            suffix,
            below,
            above,
            err,
            mean,
            sd,
        })
    }

    /// First value of the window.
    pub fn lo(&self) -> i64 {
        self.lo
    }

    /// One past the window's last value.
    pub fn end(&self) -> i64 {
        self.lo + self.suffix.len() as i64 - 1
    }

    /// Mass the window may miss below and above it.
    pub fn below(&self) -> f64 {
        self.below
    }

    /// A bound of P(S_c >= end): the mass beyond the window.
    pub fn above(&self) -> f64 {
        self.above
    }

    /// A proven interval of P(S_c >= x).
    pub fn at_least(&self, x: i64) -> (f64, f64) {
        if x <= self.lo {
            return ((1.0 - self.below).max(0.0), 1.0);
        }
        if x >= self.end() {
            return (0.0, self.above.min(1.0));
        }
        let s = self.suffix[(x - self.lo) as usize];
        let alias = self.below + self.above;
        (
            (s - self.err - alias).clamp(0.0, 1.0),
            (s + self.err + self.above).clamp(0.0, 1.0),
        )
    }
}

/// P_r = sum_{i=1}^{c} (i / M)^r for r = 1..=terms, with a bound on each one's error.
fn power_sums(m: u64, c: u64, terms: usize) -> (Vec<f64>, Vec<f64>) {
    let mf = m as f64;
    let mut p = vec![0.0; terms];
    let mut e = vec![0.0; terms];
    if c <= 20_000 {
        for i in 1..=c {
            let x = i as f64 / mf;
            let mut xr = 1.0;
            for v in p.iter_mut() {
                xr *= x;
                if xr < 1e-300 {
                    break;
                }
                *v += xr;
            }
        }
        for (r, (v, er)) in p.iter().zip(e.iter_mut()).enumerate() {
            *er = (c as f64 + r as f64 + 4.0) * 2.0 * UNIT * v;
        }
        return (p, e);
    }
    let x = c as f64 / mf;
    for r in 1..=terms {
        (p[r - 1], e[r - 1]) = euler_maclaurin(r, x, mf);
    }
    (p, e)
}

/// sum_{i=1}^{c} (i / M)^r by Euler-Maclaurin on f(t) = (t / M)^r over t = 0..c
/// (x = c / M, f(0) = 0), three Bernoulli terms, and a bound on its error: the
/// remainder, at most 2 zeta(6) / (2 pi)^6 (f^(5)(c) - f^(5)(0)) (zero for r < 6, where
/// the formula is exact), and the rounding.
fn euler_maclaurin(r: usize, x: f64, mf: f64) -> (f64, f64) {
    let bern = [1.0 / 12.0, -1.0 / 720.0, 1.0 / 30240.0];
    let rf = r as f64;
    let xr = x.powi(r as i32);
    let mut s = mf * xr * x / (rf + 1.0) + xr / 2.0;
    for (j, b) in bern.iter().enumerate() {
        // The derivative of order 2j + 1 (j from 0): (r)_order c^(r - order) / M^r.
        let order = 2 * j + 1;
        if order > r {
            break;
        }
        let fall: f64 = (0..order).map(|t| rf - t as f64).product();
        let at_c = fall * x.powi((r - order) as i32) / mf.powi(order as i32);
        let at_0 = if order == r {
            fall / mf.powi(order as i32)
        } else {
            0.0
        };
        s += b * (at_c - at_0);
    }
    let rem = if r >= 6 {
        let fall5: f64 = (0..5).map(|t| rf - t as f64).product();
        2.0 * 1.017_343_061_984_45 / (2.0 * std::f64::consts::PI).powi(6)
            * fall5
            * x.powi(r as i32 - 5)
            / mf.powi(5)
    } else {
        0.0
    };
    (s, rem + (rf + 16.0) * 2.0 * UNIT * s.abs())
}

/// The minimum of a unimodal `f` on [a, b] (golden section, 60 steps), as an upper
/// bound of the true minimum it is only used to choose (any value is a valid bound).
fn golden_min(f: impl Fn(f64) -> f64, mut a: f64, mut b: f64) -> f64 {
    let g = (5f64.sqrt() - 1.0) / 2.0;
    let mut c = b - g * (b - a);
    let mut d = a + g * (b - a);
    let (mut fc, mut fd) = (f(c), f(d));
    for _ in 0..60 {
        if fc < fd {
            b = d;
            d = c;
            fd = fc;
            c = b - g * (b - a);
            fc = f(c);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + g * (b - a);
            fd = f(d);
        }
    }
    fc.min(fd)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bit-count law by the ball-by-ball recursion, for checking.
    fn balls_reference(m: u64, balls: u64) -> Vec<f64> {
        let mut p = vec![0.0; m as usize + 1];
        p[0] = 1.0;
        for _ in 0..balls {
            for l in (0..=m as usize).rev() {
                let stay = l as f64 / m as f64;
                let up = if l > 0 {
                    p[l - 1] * (1.0 - (l - 1) as f64 / m as f64)
                } else {
                    0.0
                };
                p[l] = p[l] * stay + up;
            }
        }
        p
    }

    #[test]
    fn the_hitting_law_matches_the_ball_recursion_within_its_interval() {
        let m = 4096u64;
        for c in [600u64, 1500, 2100] {
            let law = HittingLaw::new(m, c, 1e-32).unwrap();
            for balls in (c..c * 3).step_by(37) {
                let p = balls_reference(m, balls);
                let exact: f64 = p[..=c as usize].iter().sum(); // P(count <= c)
                let (lo, hi) = law.at_least(balls as i64 - c as i64);
                assert!(
                    lo <= exact + 1e-13 && exact <= hi + 1e-13,
                    "c {c} balls {balls}: {exact} outside [{lo}, {hi}]"
                );
                assert!(hi - lo < 1e-9, "c {c} balls {balls}: width {}", hi - lo);
            }
        }
    }
}

#[cfg(test)]
mod far_from_full {
    /// A threshold far below the filter's size (q = c / M under 1e-6, so q^r
    /// underflows and z^r overflows within the terms): the Chernoff bounds still fall,
    /// and the law's window is a few values wide.
    #[test]
    fn a_tiny_threshold_in_a_huge_filter_has_a_narrow_law() {
        for (m, c) in [(1u64 << 32, 1200u64), (1 << 32, 263_347), (1 << 40, 50)] {
            let s = super::Series::new(m, c).expect("series");
            let mean = c as f64 * c as f64 / 2.0 / m as f64;
            assert!(s.chernoff(10.0 * mean + 40.0, true) < 1e-32, "{m} {c}");
            let law = super::HittingLaw::new(m, c, 1e-32).expect("law");
            assert!(
                law.end() - law.lo <= 1 << 12 && law.mean < mean * 1.01 + 1e-9,
                "{m} {c}"
            );
        }
    }
}
