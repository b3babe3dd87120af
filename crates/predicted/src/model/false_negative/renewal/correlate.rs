//! The two-phase renewal numerator's correlation (eqs. 27-28): for every length j' of
//! the frozen cycle, acc(j') = sum_j c_j U_{j' + 1 + j}, with c >= 0 and U >= 0.
//!
//! Directly that is O(m^2) for cycles of m arrivals: fine for short cycles, minutes for
//! m ~ 10^5 (a large filter on a long-tailed reuse profile). Beyond [`DIRECT_LIMIT`]
//! multiply-adds it is computed as a convolution by FFT, O(m log m), and every value is
//! raised by a bound on the FFT's rounding error, so the result stays an upper bound of
//! the exact sums: for a radix-2 transform of length N the error of each convolution
//! entry is at most about log2(N) u ||x||_2 ||y||_2 (Higham, Accuracy and Stability of
//! Numerical Algorithms, §24.1); the factor [`FFT_ERROR_FACTOR`] leaves a wide margin.

use crate::model::false_negative::fft::{Plan, C64};

/// Multiply-adds below which the sums are computed directly (same bits as before).
pub const DIRECT_LIMIT: usize = 1 << 26;
const FFT_ERROR_FACTOR: f64 = 16.0;

/// acc[j'] = sum_{j < c.len()} c[j] u[j' + 1 + j] for j' in 0..lags; `u` must hold at
/// least lags + c.len() values. Upper bounds (never below the exact sums) when the FFT
/// path is taken; the exact sums otherwise.
pub fn lagged_sums(c: &[f64], u: &[f64], lags: usize) -> Vec<f64> {
    let n = c.len();
    assert!(
        u.len() >= lags + n,
        "lagged_sums needs {} values of U",
        lags + n
    );
    if n.saturating_mul(lags) <= DIRECT_LIMIT {
        return (0..lags)
            .map(|jp| {
                c.iter()
                    .zip(&u[jp + 1..jp + 1 + n])
                    .map(|(c, u)| c * u)
                    .sum()
            })
            .collect();
    }
    fft_sums(c, u, lags)
}

/// The FFT path of [`lagged_sums`]: the sums raised by the rounding-error bound.
fn fft_sums(c: &[f64], u: &[f64], lags: usize) -> Vec<f64> {
    let n = c.len();
    let u = &u[..lags + n];
    let size = (u.len() + n).next_power_of_two();
    let plan = Plan::new(size);
    let mut a: Vec<C64> = u.iter().map(|&x| C64::new(x, 0.0)).collect();
    a.resize(size, C64::default());
    let mut b: Vec<C64> = c.iter().rev().map(|&x| C64::new(x, 0.0)).collect();
    b.resize(size, C64::default());
    plan.transform(&mut a, false);
    plan.transform(&mut b, false);
    for (x, y) in a.iter_mut().zip(&b) {
        *x = *x * *y;
    }
    plan.transform(&mut a, true);
    let scale = 1.0 / size as f64;
    let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    let err = FFT_ERROR_FACTOR * (size as f64).log2() * f64::EPSILON * norm(u) * norm(c)
        + f64::MIN_POSITIVE;
    // conv[k] = sum_i u[i] c[n - 1 - (k - i)]; acc[j'] is k = j' + n.
    (0..lags)
        .map(|jp| (a[jp + n].re * scale).max(0.0) + err)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fft_path_bounds_the_direct_sums_tightly() {
        // A decreasing U and a bump of c, as in a renewal cycle.
        let (n, lags) = (3000, 2500);
        let c: Vec<f64> = (0..n)
            .map(|j| (-((j as f64 - 800.0) / 300.0).powi(2)).exp())
            .collect();
        let u: Vec<f64> = (0..lags + n)
            .map(|s| (-(s as f64) / 1500.0).exp())
            .collect();
        let direct = lagged_sums(&c, &u, lags);
        let fast = fft_sums(&c, &u, lags);
        let total: f64 = direct.iter().sum();
        for (jp, (d, f)) in direct.iter().zip(&fast).enumerate() {
            assert!(f >= d, "lag {jp}: {f} below the exact {d}");
            assert!(f - d <= 1e-12 * total, "lag {jp}: {f} vs {d}");
        }
    }
}
