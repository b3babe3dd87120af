//! Floors under the bi-uniform chain's values, several splits at once.
//!
//! [`super::nonrepeat::biuniform`] makes a floor for every split it may try (up to
//! [`super::nonrepeat::MAX_SPLITS`]) over every state, twice: once to order the
//! splits, once to prune each against the best values so far. Each floor is a chain of
//! divisions, state after state, so one split at a time waits on every division's
//! latency: at 126 540 states (a 2^20-bit filter at sigma 400 000) the floors of 256
//! splits took 0.35 s per model where the one chain they left to run took 1 ms.
//! [`Lanes`] runs [`LANES`] splits in lockstep: their steps are independent, so the
//! divisions overlap (and vectorise). Each lane does exactly the arithmetic of
//! [`floor_values`], in the same order, so its values have the same bits
//! (`tests::lanes_give_the_bits_of_one_split_at_a_time`).

/// Splits per lockstep run.
pub(super) const LANES: usize = 8;

/// A floor under [`super::nonrepeat`]'s `biuniform_one` values for states 0, 1, ..., last, in O(last),
/// handed to `visit` in order rather than stored (the search needs a sum, then one
/// state, of each split's), or false (nothing visited) where ph < pl (no split the
/// search tries has that).
///
/// With L = D - s - i, the chance of a high draw given a is
/// h(a) = (s - a) ph / T(a), T(a) = (s - a) ph + (L + a) pl, and
/// E[a_{i+1}] = E[a_i] + E[h(a_i)]. Where T > 0 and ph >= pl, h is concave
/// (h'' = -2 ph pl (s + L)(ph - pl) / T^3 <= 0), so E[h(a)] <= h(E[a]) (Jensen); and
/// x + h(x) does not decrease while ph pl (s + L) <= T(x)^2 (h' = -ph pl (s + L) / T^2,
/// steepest at the largest x, since T falls with x). So m_{i+1} = m_i + h(m_i) from
/// m_0 = 0 stays at or above E[a_i], checked at each m_i, and the values
/// ph (s - E[a]) + pl (L + E[a]) fall with E[a]: taken at m_i they are at or below the
/// chain's values (whose truncated E[a] is lower still, see `nonrepeat::TINY`).
///
/// From the first state where the check fails (near the end of the chain when the
/// states outnumber D) the floor takes E[a] at its largest, min(i, s): the values
/// still fall with E[a], and the chain's E[a] never exceeds it (a <= i, a <= s), so
/// ph (s - min(i, s)) + pl (L + min(i, s)) (pl (D - i) once i >= s) is below them too.
/// Without it no split got a floor on the grid's D = 10^4 cells (16 416 states), and
/// every chain ran.
///
/// The reference for [`Lanes`], which the search uses (kept for the tests).
#[cfg(test)]
pub(super) fn floor_values(
    d: usize,
    s: usize,
    ph: f64,
    pl: f64,
    last: usize,
    mut visit: impl FnMut(usize, f64),
) -> bool {
    if ph < pl {
        return false;
    }
    let mut m = Some(0.0f64);
    for i in 0..=last {
        if i >= d {
            visit(i, 0.0);
            continue;
        }
        let l = (d - s) as f64 - i as f64;
        let Some(mean) = m else {
            let most = i.min(s) as f64;
            visit(i, ((s as f64 - most) * ph + (l + most) * pl).max(0.0));
            continue;
        };
        let (high, low) = ((s as f64 - mean) * ph, (l + mean) * pl);
        visit(i, (high + low).max(0.0));
        let t = high + low;
        // (t > 0 fails for NaN too.)
        m = if t.is_nan() || t <= 0.0 || ph * pl * (s as f64 + l) > t * t {
            None
        } else {
            Some(mean + high / t)
        };
    }
    true
}

/// Up to [`LANES`] splits (s, ph, pl), each with ph >= pl, whose floors are made in
/// lockstep. Unused lanes repeat the last split and are not visited.
pub(super) struct Lanes {
    used: usize,
    s: [f64; LANES],
    /// (D - s) as a double, as [`floor_values`] makes it.
    rest: [f64; LANES],
    ph: [f64; LANES],
    pl: [f64; LANES],
}

impl Lanes {
    /// None where `splits` is empty, longer than [`LANES`] or has a split with ph < pl.
    pub(super) fn new(d: usize, splits: &[(usize, f64, f64)]) -> Option<Lanes> {
        let &(s0, ph0, pl0) = splits.first()?;
        if splits.len() > LANES || splits.iter().any(|&(s, ph, pl)| ph < pl || s > d) {
            return None;
        }
        let mut lanes = Lanes {
            used: splits.len(),
            s: [s0 as f64; LANES],
            rest: [(d - s0) as f64; LANES],
            ph: [ph0; LANES],
            pl: [pl0; LANES],
        };
        for (j, &(s, ph, pl)) in splits.iter().enumerate() {
            lanes.s[j] = s as f64;
            lanes.rest[j] = (d - s) as f64;
            lanes.ph[j] = ph;
            lanes.pl[j] = pl;
        }
        Some(lanes)
    }

    /// Every split's floor at states 0..=last: `visit(i, values)` with the used lanes'
    /// values first, in state order, the bits of [`floor_values`] lane by lane.
    pub(super) fn run(&self, d: usize, last: usize, visit: impl FnMut(usize, &[f64])) {
        let wide = rbf_foundations::simd::Simd::detect() >= rbf_foundations::simd::Simd::Avx2;
        rbf_foundations::simd::with_avx2(
            wide,
            #[inline(always)]
            || self.steps(d, last, visit),
        )
    }

    /// [`Lanes::run`]'s loop, compiled for the vector level it is inlined at.
    #[inline(always)]
    fn steps(&self, d: usize, last: usize, mut visit: impl FnMut(usize, &[f64])) {
        let mut mean = [0.0f64; LANES];
        // Whether the lane's check has held at every state so far (m is Some).
        let mut held = [true; LANES];
        let mut v = [0.0f64; LANES];
        for i in 0..=last {
            if i >= d {
                visit(i, &[0.0; LANES][..self.used]);
                continue;
            }
            let fi = i as f64;
            for j in 0..LANES {
                let (s, ph, pl) = (self.s[j], self.ph[j], self.pl[j]);
                let l = self.rest[j] - fi;
                let high = (s - mean[j]) * ph;
                let low = (l + mean[j]) * pl;
                let t = high + low;
                // min(i, s) as floor_values takes it: both are whole numbers below
                // 2^53, so the minimum of the doubles is the same double.
                let most = fi.min(s);
                let fallback = (s - most) * ph + (l + most) * pl;
                v[j] = if held[j] { t } else { fallback }.max(0.0);
                // The check as floor_values makes it: t > 0 fails for NaN too.
                let steep = (ph * pl * (s + l)).partial_cmp(&(t * t));
                let ok = t > 0.0 && steep != Some(std::cmp::Ordering::Greater);
                let next = mean[j] + high / t;
                mean[j] = if held[j] && ok { next } else { mean[j] };
                held[j] = held[j] && ok;
            }
            visit(i, &v[..self.used]);
        }
    }
}

/// `splits` (s, ph, pl) by the total of their floors over states first..=last, the
/// smallest (the likeliest to lower the minimum) first, ties by s; a split with
/// ph < pl has no floor: its total is -0.0 (its chain always runs). Each total is
/// summed in state order from -0.0, as `Iterator::sum` sums.
pub(super) fn by_floor_total(
    d: usize,
    splits: &[(usize, f64, f64)],
    first: usize,
    last: usize,
) -> Vec<(usize, f64, f64)> {
    let mut totals: Vec<(f64, (usize, f64, f64))> = Vec::with_capacity(splits.len());
    for part in splits.chunks(LANES) {
        let (with, without): (Vec<_>, Vec<_>) =
            part.iter().copied().partition(|&(_, ph, pl)| ph >= pl);
        totals.extend(without.into_iter().map(|x| (-0.0, x)));
        let Some(lanes) = Lanes::new(d, &with) else {
            continue;
        };
        let mut sums = [-0.0f64; LANES];
        lanes.run(d, last, |i, v| {
            if i >= first {
                for (t, x) in sums.iter_mut().zip(v) {
                    *t += x;
                }
            }
        });
        totals.extend(sums.into_iter().zip(with));
    }
    totals.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1 .0.cmp(&b.1 .0)));
    totals.into_iter().map(|(_, x)| x).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each lane's floor, split by split and state by state, equals `floor_values`'
    /// to the bit, with lanes used in part and filled, where the check fails early
    /// (states beyond D) and where it holds throughout.
    #[test]
    fn lanes_give_the_bits_of_one_split_at_a_time() {
        for (d, alpha, last) in [
            (300usize, 1.0, 800usize),
            (5_000, 0.7, 800),
            (50_000, 1.1, 3_000),
            (600, 0.9, 1_200),
            (2_000, 1.3, 3_000),
        ] {
            let q = rbf_data::workload::zipf(d, alpha);
            let splits: Vec<(usize, f64, f64)> = [1usize, 2, 3, 5, 9, 17, 40, 100, 200, 250]
                .into_iter()
                .filter(|&s| s < d)
                .map(|s| {
                    let ph = q[s - 1];
                    (s, ph, (1.0 - s as f64 * ph).max(0.0) / (d - s) as f64)
                })
                .filter(|&(_, ph, pl)| ph >= pl)
                .collect();
            for chunk in [
                &splits[..3],
                &splits[..LANES.min(splits.len())],
                &splits[2..],
            ] {
                for part in chunk.chunks(LANES) {
                    let lanes = Lanes::new(d, part).expect("valid splits");
                    let mut got = vec![Vec::new(); part.len()];
                    lanes.run(d, last, |i, v| {
                        assert_eq!(v.len(), part.len());
                        for (j, x) in v.iter().enumerate() {
                            assert_eq!(got[j].len(), i);
                            got[j].push(*x);
                        }
                    });
                    for (j, &(s, ph, pl)) in part.iter().enumerate() {
                        let mut want = Vec::new();
                        assert!(floor_values(d, s, ph, pl, last, |_, x| want.push(x)));
                        let same = want
                            .iter()
                            .zip(&got[j])
                            .all(|(a, b)| a.to_bits() == b.to_bits());
                        assert!(same && want.len() == got[j].len(), "D = {d}, s = {s}");
                    }
                }
            }
        }
    }

    #[test]
    fn lanes_refuse_what_the_floor_does_not_cover() {
        assert!(Lanes::new(10, &[]).is_none());
        assert!(Lanes::new(10, &[(2, 0.1, 0.2)]).is_none());
        assert!(Lanes::new(10, &[(2, 0.2, 0.1); LANES + 1]).is_none());
        assert!(Lanes::new(10, &[(2, 0.2, 0.1); LANES]).is_some());
    }
}
