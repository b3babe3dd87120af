//! Per-state non-repeat estimates f^_n[i] (FN §4.2): the probability that a draw from Q
//! is not among the i distinct messages recorded in the current cycle.
//!
//! The exact value needs P(message j is among i draws without replacement), which has
//! no tractable form (§4.1.4); each estimator replaces it by something computable:
//! * [`lower`]: the i most popular messages are recorded (eq. 5, as corrected in
//!   docs/MODEL.md: the tail sum of q_j for j >= i);
//! * [`with_replacement`]: i draws with replacement (eq. 6);
//! * [`uniform`]: Q replaced by the uniform distribution on D messages (eq. 7);
//! * [`biuniform`]: the tightest bi-uniform distribution of Corollary 5 (eqs. 8-9);
//! * [`drop_pins`]: with-replacement draws at the average count l*(i) that yields i
//!   distinct messages (eqs. 10-11).

#[cfg(test)]
use super::floor::floor_values;
use super::floor::{by_floor_total, Lanes, LANES};
use crate::model::false_negative::powersums::PowerSums;

/// Tail sums: `lower(q, i)` = sum_{j >= i} q_j (eq. 5).
pub fn lower(q: &[f64], states: std::ops::RangeInclusive<usize>) -> Vec<f64> {
    let mut tail = vec![0.0; q.len() + 1];
    for j in (0..q.len()).rev() {
        tail[j] = tail[j + 1] + q[j];
    }
    states.map(|i| tail[i.min(q.len())]).collect()
}

/// sum_j q_j (1 - q_j)^i (eq. 6), by [`PowerSums`] (no O(D) pass per state).
pub fn with_replacement(q: &[f64], states: std::ops::RangeInclusive<usize>) -> Vec<f64> {
    with_replacement_of(PowerSums::new(q), states)
}

/// [`with_replacement`] from the power sums of Q.
pub fn with_replacement_of(
    mut sums: PowerSums,
    states: std::ops::RangeInclusive<usize>,
) -> Vec<f64> {
    states.map(|i| sums.at(i as u64).1).collect()
}

/// 1 - i/D (eq. 7), 0 once all D messages are recorded.
pub fn uniform(d: usize, states: std::ops::RangeInclusive<usize>) -> Vec<f64> {
    states
        .map(|i| (1.0 - i as f64 / d as f64).max(0.0))
        .collect()
}

/// Most bi-uniform splits tried per model.
pub const MAX_SPLITS: usize = 256;

/// Probability below which an end cell of the bi-uniform chain is dropped. The cells
/// kept evolve as in the full chain (it is linear with non-negative weights), so their
/// sum of a p(a) never exceeds E[a]; f^b falls with E[a] (ph > pl), so each split's
/// f^b stays at or above its exact value: an upper bound still, looser by at most
/// (ph - pl) min(i, s) times the mass dropped. Each cell is made once (one new cell
/// per draw) and dropped at most once, so that mass is below 1e-30 (last + 2): the
/// bound moves by less than 1e-20 at 10^4 states. Keeping the tails down to 1e-30
/// instead of 1e-300 keeps about a third of the cells (a Gaussian tail at 11 instead
/// of 37 standard deviations): 6 000 states at D = 10^7 took 7 s, now 2.5 s.
const TINY: f64 = 1e-30;

/// Non-repeat probability for the bi-uniform distribution with s messages of
/// probability `ph` and D - s of probability `pl`, sampled without replacement: the
/// count a of high messages among i draws is a Markov chain (a high draw has
/// probability (s - a) ph / ((s - a) ph + (D - s - (i - a)) pl)), and
/// f^b[i] = ph (s - E[a_i]) + pl (D - s - i + E[a_i]) (what eqs. 8-9 compute; their
/// printed form is garbled). Mass below `tiny` is dropped from the chain.
fn biuniform_one(d: usize, s: usize, ph: f64, pl: f64, last: usize) -> Vec<f64> {
    let wide = rbf_foundations::simd::Simd::detect() >= rbf_foundations::simd::Simd::Avx2;
    rbf_foundations::simd::with_avx2(
        wide,
        #[inline(always)]
        || biuniform_chain(d, s, ph, pl, last),
    )
}

/// [`biuniform_one`]'s chain. Each cell's step is written as flows (what stays at a,
/// what moves up to a + 1) into separate arrays, so the pass over the cells has no
/// dependence from one cell to the next and is vectorised (it was one chain through
/// memory, `next[a + 1] += ...` then `next[a + 1] += ...`, about three times slower).
/// Each cell's arithmetic is the same as before, so are its bits; E[a] is summed in
/// eight lanes ([`rbf_foundations::simd::dot`]), which moves it by rounding only.
#[inline(always)]
fn biuniform_chain(d: usize, s: usize, ph: f64, pl: f64, last: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(last + 1);
    let mut dist = vec![0.0; s + 2];
    let mut next = vec![0.0; s + 2];
    let mut up = vec![0.0; s + 2];
    // a as a double, loaded rather than converted in the loop.
    let counts: Vec<f64> = (0..=s).map(|a| a as f64).collect();
    dist[0] = 1.0;
    let (mut lo, mut hi) = (0usize, 0usize);
    for i in 0..=last {
        if i >= d {
            out.push(0.0);
            continue;
        }
        // One more draw without replacement; a <= i always, and i - a <= D - s: the
        // low messages left are max(D - s - i + a, 0), exact in doubles.
        let ea = rbf_foundations::simd::dot(&counts[lo..=hi], &dist[lo..=hi]);
        let low_base = (d - s) as f64 - i as f64;
        let sf = s as f64;
        let n = hi - lo + 1;
        let (p, a) = (&dist[lo..lo + n], &counts[lo..lo + n]);
        let (stay, rise) = (&mut next[lo..lo + n], &mut up[lo..lo + n]);
        for c in 0..n {
            let high_left = (sf - a[c]) * ph;
            let low_left = (low_base + a[c]).max(0.0) * pl;
            let tot = high_left + low_left;
            // One division per cell. Where nothing is left to draw (tot = 0) both
            // flows are 0 whatever the divisor: 1 keeps them finite, without a branch.
            let share = p[c] / if tot > 0.0 { tot } else { 1.0 };
            stay[c] = share * low_left;
            rise[c] = share * high_left;
        }
        let top = (hi + 1).min(s);
        if top > hi {
            next[top] = 0.0;
        }
        // The flows up from lo..top land on lo + 1..=top (from a = s nothing rises).
        for (n, r) in next[lo + 1..=top].iter_mut().zip(&up[lo..top]) {
            *n += r;
        }
        out.push((ph * (sf - ea) + pl * ((d - s) as f64 - i as f64 + ea)).max(0.0));
        std::mem::swap(&mut dist, &mut next);
        hi = top;
        while hi > lo && dist[hi] < TINY {
            hi -= 1;
        }
        while lo < hi && dist[lo] < TINY {
            lo += 1;
        }
    }
    out
}

/// The head sizes the bi-uniform search tries: every s whose head ranks are more
/// popular than uniform (q_(s-1) D > 1), or [`MAX_SPLITS`] of them spread geometrically.
fn splits(q: &[f64]) -> Vec<usize> {
    let d = q.len();
    let valid = (1..d).take_while(|&s| q[s - 1] * d as f64 > 1.0).count();
    geometric_selection(valid)
}

/// All of 1..=valid when there are at most [`MAX_SPLITS`], else a geometric selection
/// of them (increasing, without repeats).
pub fn geometric_selection(valid: usize) -> Vec<usize> {
    let mut splits: Vec<usize> = if valid <= MAX_SPLITS {
        (1..=valid).collect()
    } else {
        let ratio = (valid as f64).powf(1.0 / (MAX_SPLITS - 1) as f64);
        (0..MAX_SPLITS)
            .map(|e| (ratio.powi(e as i32).round() as usize).clamp(1, valid))
            .collect()
    };
    splits.dedup();
    splits
}

/// The tightest bi-uniform upper bound per state (§4.2.4, Lemma 2, Corollary 5): for
/// every split s with q_{s-1} >= 1/D, ph = q_{s-1} and pl = (1 - s ph) / (D - s) give a
/// distribution Q dominates with a flat tail, so each is an upper bound on f^_n[i]
/// state by state (Theorem 6 holds for every number of draws K); the minimum over s is
/// taken per state. s = 0 is the uniform bound. When more than [`MAX_SPLITS`] splits
/// are valid, a geometric selection of them is tried: the minimum over any subset of
/// valid splits is still an upper bound, only possibly a looser one. Returns the
/// estimates for `states` and the number of splits tried.
pub fn biuniform(q: &[f64], states: std::ops::RangeInclusive<usize>) -> (Vec<f64>, usize) {
    let splits = splits(q).into_iter().map(|s| (s, q[s - 1]));
    biuniform_over(q.len(), splits, states)
}

/// [`biuniform`] over the given splits (s, q_{s-1}) of a Q of D = `d` ranks, each with
/// s < D and q_{s-1} D > 1 (any such set gives upper bounds; [`super::super::qruns`]
/// takes the ends of runs of ranks).
pub fn biuniform_over(
    d: usize,
    splits: impl Iterator<Item = (usize, f64)>,
    states: std::ops::RangeInclusive<usize>,
) -> (Vec<f64>, usize) {
    let (first, last) = (*states.start(), *states.end());
    let mut best = uniform(d, 0..=last);
    let mut tried = 1;
    let weights = |s: usize, ph: f64| (ph, (1.0 - s as f64 * ph).max(0.0) / (d - s) as f64);
    // Cheap floors of every split's values, the likeliest winners first (the minimum
    // does not depend on the order). A split's chain runs only up to the last state
    // asked for where its floor is below the best so far: past it the split cannot
    // lower the minimum (the best only falls), and a chain's values do not depend on
    // how far it runs. A split with no such state is not run at all.
    // The order is by each floor's total over the states asked for. Only the totals
    // are kept: a split's floor is made again when its turn comes (the same bits, in
    // O(last) beside its chain's O(last x cells)), where keeping all of them held 256
    // vectors of every state at once (260 MB at 126 540 states, for each alternative
    // judged beside it). Floors are made LANES splits at a time ([`Lanes`]: the same
    // bits as one at a time, 0.35 -> 0.09 s per model at 126 540 states).
    let chosen: Vec<(usize, f64, f64)> = splits
        .map(|(s, q)| {
            let (ph, pl) = weights(s, q);
            (s, ph, pl)
        })
        .collect();
    let order = by_floor_total(d, &chosen, first, last);
    tried += lower_by_chains(d, &order, first, last, &mut best);
    (best[first..=last].to_vec(), tried)
}

/// [`biuniform`]'s splits, in `order`, lowering `best` (states 0..=last): each split's
/// last state asked for (from `first`) where its floor is below the best so far, with
/// a margin far above the floor's rounding so that pruning never changes a value, is
/// found LANES splits at once against the same best; the first split that has one runs
/// its chain to there, which lowers the best, so the splits after it are looked at
/// again. Returns the number of splits looked at.
fn lower_by_chains(
    d: usize,
    order: &[(usize, f64, f64)],
    first: usize,
    last: usize,
    best: &mut [f64],
) -> usize {
    let mut tried = 0;
    let mut next = 0;
    while next < order.len() {
        let (s, ph, pl) = order[next];
        if ph < pl {
            tried += 1;
            next += 1;
            merge_min(best, biuniform_one(d, s, ph, pl, last));
            continue;
        }
        let batch: Vec<(usize, f64, f64)> = order[next..]
            .iter()
            .take(LANES)
            .take_while(|&&(_, ph, pl)| ph >= pl)
            .copied()
            .collect();
        let Some(lanes) = Lanes::new(d, &batch) else {
            // Not reached (the batch is 1..=LANES splits with ph >= pl and s < D); a
            // chain run to the end could only be slower, never another value.
            tried += 1;
            next += 1;
            merge_min(best, biuniform_one(d, s, ph, pl, last));
            continue;
        };
        let mut ends = [None; LANES];
        lanes.run(d, last, |i, v| {
            if i >= first {
                for (e, x) in ends.iter_mut().zip(v) {
                    if x * (1.0 - 1e-9) < best[i] {
                        *e = Some(i);
                    }
                }
            }
        });
        for (j, &(s, ph, pl)) in batch.iter().enumerate() {
            tried += 1;
            next += 1;
            if let Some(end) = ends[j] {
                merge_min(best, biuniform_one(d, s, ph, pl, end));
                break;
            }
        }
    }
    tried
}

/// Lowers `best` to `chain` state by state, over the states the chain reached.
fn merge_min(best: &mut [f64], chain: Vec<f64>) {
    for (b, x) in best.iter_mut().zip(chain) {
        *b = b.min(x);
    }
}

/// [`floor_values`] as a vector, or None where ph < pl.
#[cfg(test)]
fn biuniform_floor(d: usize, s: usize, ph: f64, pl: f64, last: usize) -> Option<Vec<f64>> {
    let mut out = Vec::with_capacity(last + 1);
    floor_values(d, s, ph, pl, last, |_, v| out.push(v)).then_some(out)
}

/// Drop-pins approximation (eqs. 10-11): l*(i) is the number of draws with replacement
/// whose expected distinct count E[X](l) = sum_j [1 - (1 - q_j)^l] (eq. 10 as corrected
/// in docs/MODEL.md) is closest to i, and f^a[i] = sum_j q_j (1 - q_j)^{l*(i)}.
///
/// With f(l) = E[X](l + 1) - E[X](l) = sum_j q_j (1 - q_j)^l, E[X](l + 1) is at least as
/// close to i as E[X](l) exactly when phi(l) = E[X](l) + f(l) / 2 <= i, and phi grows
/// with l, so l*(i) is the first l with phi(l) > i (or f(l) = 0). Its increments
/// (f(l) + f(l + 1)) / 2 fall with l, so phi(l + m) <= phi(l) + m f(l): jumping
/// m = floor((i - phi(l)) / f(l)) draws never passes l*(i). A few such jumps, then
/// doubling and bisection, find l*(i) with a handful of evaluations of
/// [`PowerSums::at`] per state, each independent of D, where walking l one draw at a
/// time cost O(D) per draw (millions of draws for Q of 10^5 messages).
/// States i >= D - 1/2 are never reached by E[X] and get 0.
pub fn drop_pins(q: &[f64], states: std::ops::RangeInclusive<usize>) -> Vec<f64> {
    drop_pins_of(PowerSums::new(q), states)
}

/// [`drop_pins`] from the power sums of Q.
pub fn drop_pins_of(mut sums: PowerSums, states: std::ops::RangeInclusive<usize>) -> Vec<f64> {
    let d = sums.distinct() as f64;
    let mut eval = |l: u64| {
        let (s, f) = sums.at(l);
        (d - s + f / 2.0, f)
    };
    let mut l = 0u64;
    let mut here = eval(0);
    let mut out = Vec::with_capacity(states.clone().count());
    for i in states {
        let target = i as f64;
        if target >= d - 0.5 {
            out.push(0.0);
            continue;
        }
        let passed = |(phi, f): (f64, f64)| phi > target || f <= 0.0;
        // Jumps that cannot pass l*(i).
        for _ in 0..8 {
            if passed(here) {
                break;
            }
            let m = ((target - here.0) / here.1).floor();
            if !(1.0..=1e15).contains(&m) {
                break;
            }
            l += m as u64;
            here = eval(l);
        }
        if !passed(here) {
            // l fails; find the first passing l above it.
            let (mut lo, mut step) = (l, 1u64);
            let mut hi = loop {
                let cand = lo.saturating_add(step);
                let at = eval(cand);
                if passed(at) || cand == u64::MAX {
                    break (cand, at);
                }
                lo = cand;
                step = step.saturating_mul(2);
            };
            while hi.0 - lo > 1 {
                let mid = lo + (hi.0 - lo) / 2;
                let at = eval(mid);
                if passed(at) {
                    hi = (mid, at);
                } else {
                    lo = mid;
                }
            }
            (l, here) = hi;
        }
        out.push(here.1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact P(j among i draws without replacement) by enumeration of ordered draws.
    fn exact(q: &[f64], i: usize) -> f64 {
        fn rec(q: &[f64], taken: &mut Vec<bool>, left: usize, p: f64, acc: &mut [f64]) {
            if left == 0 {
                for (j, t) in taken.iter().enumerate() {
                    if *t {
                        acc[j] += p;
                    }
                }
                return;
            }
            let rest: f64 = q
                .iter()
                .zip(taken.iter())
                .filter(|(_, t)| !**t)
                .map(|(x, _)| x)
                .sum();
            for j in 0..q.len() {
                if !taken[j] {
                    taken[j] = true;
                    rec(q, taken, left - 1, p * q[j] / rest, acc);
                    taken[j] = false;
                }
            }
        }
        let mut acc = vec![0.0; q.len()];
        rec(q, &mut vec![false; q.len()], i, 1.0, &mut acc);
        q.iter().zip(&acc).map(|(x, p)| x * (1.0 - p)).sum()
    }

    #[test]
    fn bounds_bracket_the_exact_value() {
        let q = rbf_data::workload::zipf(7, 1.2);
        let lo = lower(&q, 0..=7);
        let swr = with_replacement(&q, 0..=7);
        let uni = uniform(7, 0..=7);
        let (bi, tried) = biuniform(&q, 0..=7);
        assert!(tried > 1);
        for i in 0..=6 {
            let x = exact(&q, i);
            assert!(lo[i] <= x + 1e-12, "lower i={i}: {} > {x}", lo[i]);
            assert!(swr[i] >= x - 1e-12, "swr i={i}: {} < {x}", swr[i]);
            assert!(uni[i] >= x - 1e-12, "uniform i={i}");
            assert!(
                bi[i] >= x - 1e-12 && bi[i] <= uni[i] + 1e-15,
                "bi i={i}: {} vs {x}",
                bi[i]
            );
        }
        assert_eq!(lo[7], 0.0);
    }

    /// The chain as it was before it was vectorised: the
    /// reference the vectorised one is compared with.
    fn biuniform_one_reference(d: usize, s: usize, ph: f64, pl: f64, last: usize) -> Vec<f64> {
        let mut out = Vec::with_capacity(last + 1);
        let mut dist = vec![0.0; s + 1];
        let mut next = vec![0.0; s + 1];
        dist[0] = 1.0;
        let (mut lo, mut hi) = (0usize, 0usize);
        for i in 0..=last {
            if i >= d {
                out.push(0.0);
                continue;
            }
            // One more draw without replacement; a <= i always, and i - a <= D - s. E[a]
            // of this state is summed in the same pass (same order, same bits).
            let top = (hi + 1).min(s);
            next[lo..=top].fill(0.0);
            let mut ea = 0.0;
            for a in lo..=hi {
                let p = dist[a];
                ea += a as f64 * p;
                let high_left = (s - a) as f64 * ph;
                let low_left = (d - s).saturating_sub(i - a) as f64 * pl;
                let tot = high_left + low_left;
                if tot > 0.0 {
                    // One division per cell: the loop's cost at D = 10^7.
                    let share = p / tot;
                    next[a] += share * low_left;
                    if a < s {
                        next[a + 1] += share * high_left;
                    }
                }
            }
            out.push((ph * (s as f64 - ea) + pl * ((d - s) as f64 - i as f64 + ea)).max(0.0));
            std::mem::swap(&mut dist, &mut next);
            hi = top;
            while hi > lo && dist[hi] < TINY {
                hi -= 1;
            }
            while lo < hi && dist[lo] < TINY {
                lo += 1;
            }
        }
        out
    }

    #[test]
    fn the_vectorised_chain_is_the_reference_one() {
        // D from 10^2 to 10^7, Zipf 0.5-1.3; states past D where D is small, up to
        // 6 x 10^4 where the chain is cheap (few splits), every split of small D and a
        // spread of them at large D.
        let cases: [(usize, f64, usize); 9] = [
            (100, 0.5, 300),
            (100, 1.3, 150),
            (1_000, 0.9, 1_500),
            (10_000, 0.7, 16_000),
            (10_000, 1.1, 12_000),
            (100_000, 1.3, 60_000),
            (100_000, 0.5, 3_000),
            (1_000_000, 0.9, 4_000),
            (10_000_000, 1.0, 2_000),
        ];
        for (d, alpha, last) in cases {
            let q = rbf_data::workload::zipf(d, alpha);
            let splits = super::splits(&q);
            let step = (splits.len() / 12).max(1);
            for &s in splits.iter().step_by(step) {
                let ph = q[s - 1];
                let pl = (1.0 - s as f64 * ph).max(0.0) / (d - s) as f64;
                let got = biuniform_one(d, s, ph, pl, last);
                let want = biuniform_one_reference(d, s, ph, pl, last);
                for (i, (a, b)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        (a - b).abs() <= 1e-9 * b.abs(),
                        "D = {d}, alpha = {alpha}, s = {s}, state {i}: {a:e} vs {b:e}"
                    );
                }
            }
        }
    }

    /// [`biuniform`] without pruning: every split's chain, in order.
    fn biuniform_unpruned(q: &[f64], last: usize) -> Vec<f64> {
        let d = q.len();
        let mut best = uniform(d, 0..=last);
        let splits = super::splits(q);
        for s in splits {
            let ph = q[s - 1];
            let pl = (1.0 - s as f64 * ph).max(0.0) / (d - s) as f64;
            for (b, x) in best.iter_mut().zip(biuniform_one(d, s, ph, pl, last)) {
                *b = b.min(x);
            }
        }
        best
    }

    #[test]
    fn pruned_splits_change_no_value() {
        let qs = [
            rbf_data::workload::zipf(40, 1.2),
            rbf_data::workload::zipf(3_000, 0.9),
            rbf_data::workload::zipf(20_000, 0.5),
            rbf_data::workload::zipf(200_000, 1.0),
            rbf_data::workload::zipf(500, 2.0),
        ];
        for q in &qs {
            // States past D where D is small; a few thousand where it is not (the
            // unpruned reference runs every chain).
            let lasts = [(q.len() / 3).min(1_200), (q.len() + 5).min(3_000), 1_500];
            for last in lasts {
                let want = biuniform_unpruned(q, last);
                let (got, _) = biuniform(q, 0..=last);
                assert!(
                    rbf_foundations::simd::same_bits(&got, &want),
                    "D = {}, last = {last}",
                    q.len()
                );
                let (tail, _) = biuniform(q, last / 2..=last);
                assert_eq!(tail[..], want[last / 2..]);
            }
        }
    }

    #[test]
    fn the_floor_is_below_the_chain() {
        // Past D where D is small: the floor's fallback after its check fails.
        for (d, alpha, last) in [
            (300, 1.0, 800),
            (5_000, 0.7, 800),
            (50_000, 1.1, 800),
            (600, 0.9, 1_200),
            (2_000, 1.3, 3_000),
        ] {
            let q = rbf_data::workload::zipf(d, alpha);
            for s in [1, 5, 40, 200] {
                let ph = q[s - 1];
                let pl = (1.0 - s as f64 * ph) / (d - s) as f64;
                let chain = biuniform_one(d, s, ph, pl, last);
                if let Some(floor) = biuniform_floor(d, s, ph, pl, last) {
                    for (i, (f, c)) in floor.iter().zip(&chain).enumerate() {
                        assert!(
                            *f <= c * (1.0 + 1e-12),
                            "D = {d}, s = {s}, state {i}: {f} > {c}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn biuniform_chain_matches_enumeration() {
        // A bi-uniform Q is its own tightest bound for s at its split.
        let q = vec![0.3, 0.3, 0.1, 0.1, 0.1, 0.1];
        let f = biuniform_one(6, 2, 0.3, 0.1, 6);
        for i in 0..=5 {
            assert!(
                (f[i] - exact(&q, i)).abs() < 1e-12,
                "i={i}: {} vs {}",
                f[i],
                exact(&q, i)
            );
        }
        assert_eq!(f[6], 0.0);
    }

    /// Eqs. 10-11 the slow way: l walks up one draw at a time, direct O(D) sums.
    fn drop_pins_stepwise(q: &[f64], last: usize) -> Vec<f64> {
        let f_at = |l: i32| q.iter().map(|x| x * (1.0 - x).powi(l)).sum::<f64>();
        let (mut l, mut e) = (0, 0.0);
        let mut f = f_at(0);
        (0..=last)
            .map(|i| {
                let target = i as f64;
                if target >= q.len() as f64 - 0.5 {
                    return 0.0;
                }
                while (e + f - target).abs() <= (e - target).abs() && f > 0.0 {
                    e += f;
                    l += 1;
                    f = f_at(l);
                }
                f
            })
            .collect()
    }

    #[test]
    fn drop_pins_matches_the_stepwise_walk() {
        let mut qs = vec![
            rbf_data::workload::zipf(300, 1.0),
            rbf_data::workload::zipf(120, 2.0),
            rbf_data::workload::zipf(80, 0.0),
            rbf_data::workload::zipf(400, 0.5),
        ];
        qs.push(vec![0.4, 0.3, 0.2, 0.1, 0.0]);
        for q in &qs {
            let last = q.len() + 3;
            let fast = drop_pins(q, 0..=last);
            let slow = drop_pins_stepwise(q, last);
            for (i, (a, b)) in fast.iter().zip(&slow).enumerate() {
                assert!(
                    (a - b).abs() <= 1e-12 * b.max(1e-300),
                    "D = {}, state {i}: {a} vs {b}",
                    q.len()
                );
            }
            // A sub-range gives the same values.
            assert_eq!(drop_pins(q, 7..=last)[..], fast[7..]);
        }
    }

    #[test]
    fn shared_rates_give_the_same_bits() {
        use crate::model::false_negative::powersums::Rates;
        for (d, alpha) in [(500, 1.2), (300_000, 0.9)] {
            let q = rbf_data::workload::zipf(d, alpha);
            let shared = std::sync::Arc::new(Rates::new(&q, &q));
            // Both methods on one set of rates (groups built by the first), in both orders.
            let dp = drop_pins_of(PowerSums::from_rates(shared.clone()), 0..=2_000);
            let swr = with_replacement_of(PowerSums::from_rates(shared.clone()), 0..=2_000);
            let dp_again = drop_pins_of(PowerSums::from_rates(shared), 0..=2_000);
            assert!(rbf_foundations::simd::same_bits(
                &dp,
                &drop_pins(&q, 0..=2_000)
            ));
            assert!(rbf_foundations::simd::same_bits(&dp_again, &dp));
            assert!(rbf_foundations::simd::same_bits(
                &swr,
                &with_replacement(&q, 0..=2_000)
            ));
        }
    }

    #[test]
    fn drop_pins_uses_the_closest_draw_count() {
        let q = rbf_data::workload::zipf(50, 1.0);
        let f = drop_pins(&q, 0..=60);
        // i = 0: l* = 0, f = 1; i = 1: E[X](1) = 1 exactly.
        assert!((f[0] - 1.0).abs() < 1e-15);
        let f1: f64 = q.iter().map(|x| x * (1.0 - x)).sum();
        assert!((f[1] - f1).abs() < 1e-15);
        assert!(f.windows(2).all(|w| w[1] <= w[0]));
        assert_eq!(f[50], 0.0);
        // Brute force for i = 20.
        let ex = |l: i32| q.iter().map(|x| 1.0 - (1.0 - x).powi(l)).sum::<f64>();
        let lstar = (0..5000)
            .min_by(|a, b| (ex(*a) - 20.0).abs().total_cmp(&(ex(*b) - 20.0).abs()))
            .unwrap();
        let want: f64 = q.iter().map(|x| x * (1.0 - x).powi(lstar)).sum();
        assert!((f[20] - want).abs() < 1e-14, "{} vs {want}", f[20]);
    }
}
