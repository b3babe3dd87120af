//! Eq. 19: f_sigma^1 in closed form for k = 1, colliding, non-retaining.
//!
//! With one hash, state i moves to i + 1 with probability (M - i)/M, so v_i = M/(M - i)
//! and f = sum_i v_i (i/M) / sum_i v_i = sum_i i/(M (M - i)) / sum_j 1/(M - j), which is
//! eq. 19 with its denominator sum pulled out of the numerator's sum. sigma counts the
//! same way as our trigger (states 0..=sigma are inside the cycle).

/// Eq. 19 for an array of `m` bits and threshold `sigma` < m.
pub fn fp_k1(m: u64, sigma: u64) -> f64 {
    let mf = m as f64;
    let mut num = 0.0;
    let mut den = 0.0;
    for i in 0..=sigma.min(m - 1) {
        let rest = (m - i) as f64;
        num += i as f64 / (mf * rest);
        den += 1.0 / rest;
    }
    num / den
}
