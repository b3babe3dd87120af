//! Laws of insertion counts on windows, with an L1 error bound: the binomial law of
//! the insertions in a block of arrivals with one bit-setting chance, and their
//! convolution ([`Law::convolve`], a product tree in [`Law::product`]).

use crate::model::false_negative::fft;

const UNIT: f64 = f64::EPSILON / 2.0;

/// A law on the integers x0, x0 + 1, ... (zero elsewhere): the computed values p^
/// and the exact ones p satisfy p^ = p (1 + theta) + delta with |theta| <= `rel` at
/// every value and |delta|_1 <= `abs` in all (the window's tails, trims, FFTs).
///
/// Every law here is that of a sum of independent Bernoulli variables, with exact
/// `mean` and `var`, so Bernstein's bound confines it: values beyond the window
/// [`Law::cut`] keeps hold at most 2 [`TAIL`] in all, and cutting the computed values
/// there also removes the rounding noise an FFT leaves far out in the tails.
#[derive(Clone, Debug)]
pub struct Law {
    pub x0: u64,
    pub p: Vec<f64>,
    pub rel: f64,
    pub abs: f64,
    pub mean: f64,
    pub var: f64,
}

/// Mass Bernstein's bound leaves out on either side of a law's window. Carried as an
/// absolute error (at most 2e-20 per cut and per arrival, against sums of at least
/// one arrival), it costs nothing measurable, and at 1e-32 the windows were a quarter
/// wider (measured: 0.28 s against 0.22 s at 2^20 bits, the certified tolerance the
/// same to 2 %).
pub const TAIL: f64 = 1e-20;

/// Bernstein's bound: P(X - mean >= t) <= tail for a sum of independent [0, 1]
/// variables with variance `var`, solved for t.
pub fn bernstein(var: f64, tail: f64) -> f64 {
    let l = (1.0 / tail).ln();
    l / 3.0 + (l * l / 9.0 + 2.0 * var * l).sqrt()
}

impl Law {
    /// All mass at `x`.
    pub fn point(x: u64) -> Law {
        Law {
            x0: x,
            p: vec![1.0],
            rel: 0.0,
            abs: 0.0,
            mean: x as f64,
            var: 0.0,
        }
    }

    /// Binomial(n, eta) on the window where Bernstein leaves at most [`TAIL`] out on
    /// either side.
    pub fn binomial(n: u64, eta: f64) -> Law {
        let tail = TAIL;
        if n == 0 || eta <= 0.0 {
            return Law::point(0);
        }
        if eta >= 1.0 {
            return Law::point(n);
        }
        let mean = n as f64 * eta;
        let t = bernstein(n as f64 * eta * (1.0 - eta), tail);
        let (lo, hi) = if n <= 64 {
            (0, n)
        } else {
            (
                (mean - t - 1.0).floor().max(0.0) as u64,
                ((mean + t + 1.0).ceil() as u64).min(n),
            )
        };
        let mode = (((n + 1) as f64 * eta).floor() as u64).clamp(lo, hi);
        let w = (hi - lo + 1) as usize;
        let mut p = vec![0.0; w];
        let odds = eta / (1.0 - eta);
        p[(mode - lo) as usize] = 1.0;
        for x in mode..hi {
            let i = (x - lo) as usize;
            p[i + 1] = p[i] * ((n - x) as f64 / (x + 1) as f64) * odds;
        }
        for x in (lo + 1..=mode).rev() {
            let i = (x - lo) as usize;
            p[i - 1] = p[i] * (x as f64 / (n - x + 1) as f64) / odds;
        }
        let z: f64 = p.iter().sum();
        for v in &mut p {
            *v /= z;
        }
        // Each ratio step errs by at most 5 u relative, so a value |x - mode| steps
        // away by 5 u |x - mode|, and so does the window's sum; normalising by the
        // window's sum instead of the whole law's scales by 1 / (1 - tails) <= 1 +
        // 2.1 tails; the tails themselves are out; values that underflowed are below
        // 1e-300 each.
        let outside = if lo == 0 && hi == n { 0.0 } else { 2.0 * tail };
        let steps = (hi - lo) as f64;
        Law {
            x0: lo,
            p,
            rel: 2.0 * 5.0 * UNIT * steps + 2.1 * outside + (w as f64 + 4.0) * UNIT,
            abs: outside + w as f64 * 1e-300,
            mean,
            var: n as f64 * eta * (1.0 - eta),
        }
    }

    /// The law of the sum of independent draws from `self` and `other`, cut to its
    /// window: term by term when one is short, else by FFT. Relative errors add
    /// either way (a convolution of values each within a relative r of the exact
    /// ones is within r of the exact convolution); the FFT's noise is absolute.
    pub fn convolve(&self, other: &Law) -> Law {
        let mass_a: f64 = self.p.iter().sum();
        let mass_b: f64 = other.p.iter().sum();
        // Absolute parts carried through: delta_a * b + a * delta_b + delta_a * delta_b.
        let carried = self.abs * mass_b * (1.0 + other.rel)
            + other.abs * mass_a * (1.0 + self.rel)
            + self.abs * other.abs;
        let rel_in = self.rel + other.rel + self.rel * other.rel;
        let short = self.p.len().min(other.p.len());
        let mut law = if short <= 1024 {
            Law {
                x0: self.x0 + other.x0,
                p: fft::convolve_direct(&self.p, &other.p),
                rel: rel_in + (short as f64 + 2.0) * UNIT,
                abs: carried,
                mean: self.mean + other.mean,
                var: self.var + other.var,
            }
        } else {
            let (p, e) = fft::convolve(&self.p, &other.p);
            Law {
                x0: self.x0 + other.x0,
                p,
                // The exact convolution of the computed inputs is within rel_in of the
                // exact law at every value (a sum of non-negative products, each within
                // it); the FFT's noise on top of that is absolute.
                rel: rel_in,
                abs: carried + e,
                mean: self.mean + other.mean,
                var: self.var + other.var,
            }
        };
        law.cut();
        law
    }

    /// Bounds of sum_x p(x) f(x) for f between `lo` and `hi` in [0, 1] at every x.
    pub fn expect(&self, mut lo: impl FnMut(u64) -> (f64, f64)) -> (f64, f64) {
        let (mut a, mut b) = (0.0, 0.0);
        for (i, &v) in self.p.iter().enumerate() {
            let (l, h) = lo(self.x0 + i as u64);
            a += v * l;
            b += v * h;
        }
        let r = (self.p.len() as f64 + 2.0) * UNIT;
        (
            ((a - self.abs) / (1.0 + self.rel) * (1.0 - r)).max(0.0),
            (b + self.abs) / (1.0 - self.rel) * (1.0 + r),
        )
    }

    /// Keeps the window [mean - t - 1, mean + t + 1], t Bernstein's deviation at
    /// [`TAIL`]: the exact law holds at most 2 TAIL outside it, which is what setting
    /// the values there to 0 can cost (whatever was computed there).
    pub fn cut(&mut self) {
        if self.p.is_empty() {
            return;
        }
        let t = bernstein(self.var, TAIL) + 1.0;
        let lo = (self.mean - t).floor().max(0.0) as u64;
        let hi = (self.mean + t).ceil() as u64;
        let (front, back) = (
            lo.saturating_sub(self.x0).min(self.p.len() as u64) as usize,
            (hi + 1).saturating_sub(self.x0).min(self.p.len() as u64) as usize,
        );
        if front > 0 || back < self.p.len() {
            self.p.truncate(back.max(front + 1));
            self.p.drain(..front.min(self.p.len() - 1));
            self.x0 += front as u64;
            self.abs += 2.0 * TAIL;
        }
    }

    /// The law of a sum of independent draws from every law given (a product tree).
    pub fn product(mut laws: Vec<Law>) -> Law {
        if laws.is_empty() {
            return Law::point(0);
        }
        while laws.len() > 1 {
            let mut next = Vec::with_capacity(laws.len().div_ceil(2));
            let mut it = laws.into_iter();
            while let Some(a) = it.next() {
                match it.next() {
                    Some(b) => next.push(a.convolve(&b)),
                    None => next.push(a),
                }
            }
            laws = next;
        }
        laws.pop().unwrap_or_else(|| Law::point(0))
    }

    /// One past the last value.
    pub fn end(&self) -> u64 {
        self.x0 + self.p.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_product_of_binomials_matches_the_bernoulli_recursion() {
        let blocks = [
            (3u64, 1.0),
            (40, 0.8),
            (500, 0.55),
            (2000, 0.3),
            (7000, 0.12),
        ];
        let mut exact = vec![1.0f64];
        for &(n, eta) in &blocks {
            for _ in 0..n {
                let mut next = vec![0.0; exact.len() + 1];
                for (i, &x) in exact.iter().enumerate() {
                    next[i] += x * (1.0 - eta);
                    next[i + 1] += x * eta;
                }
                exact = next;
            }
        }
        let laws = blocks.iter().map(|&(n, e)| Law::binomial(n, e)).collect();
        let law = Law::product(laws);
        let mut dist = 0.0;
        for (x, &e) in exact.iter().enumerate() {
            let v = if (x as u64) >= law.x0 && (x as u64) < law.end() {
                law.p[x - law.x0 as usize]
            } else {
                0.0
            };
            dist += (v - e).abs();
        }
        let bound = law.rel + law.abs;
        assert!(dist <= bound + 1e-12, "L1 {dist} above the bound {bound}");
        assert!(bound < 1e-9, "bound {bound} useless");
    }
}
