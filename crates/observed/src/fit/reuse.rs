//! The reuse profile S(n) = P(d > n | repeat) from a trace, with its uncertainty.
//!
//! Every measured repeat (an arrival whose key was seen before, in the warm-up or not)
//! records its reuse distance d, the arrivals since the key's previous arrival, in a
//! log-linear histogram: exact below [`EXACT`], then [`SUB`] buckets per octave (a
//! relative width below 1 %), so memory is fixed however long the trace is.
//!
//! Uncertainty by batch means: the measured arrivals are cut into consecutive batches,
//! one histogram each; S(n) is a ratio of sums over batches (repeats with d > n over
//! repeats), whose interval comes from [`ratio_interval`]. Batches start at
//! [`FIRST_BATCH`] arrivals and are merged pairwise whenever there are [`MAX_BATCHES`],
//! so there are always 32 to 64 of them, whatever the trace length.
//!
//! Censoring: a repeat at trace index t has d <= t, so it can only show d > n when
//! t > n: S(n) is estimated over the repeats at t > n (every repeat with d > n is one
//! of them), which matters only for n beyond the warm-up. Each batch also counts its
//! repeats by the bucket of t for that. Past the longest distance seen, the point
//! estimate is 0 and the upper profile holds its last value (an upper bound, S being
//! non-increasing).

use serde::Serialize;

use super::band::{group_for, upper_band, Knot};
use rbf_data::workload::{Between, ReuseProfile};
use rbf_foundations::stats::{ratio_interval, Interval};

/// Distances below this have a bucket each.
const EXACT: u64 = 1 << 10;
/// log2 of the buckets per octave above EXACT.
const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;
pub const FIRST_BATCH: u64 = 1 << 12;
pub const MAX_BATCHES: usize = 64;

/// Files the current batch; at [`MAX_BATCHES`] neighbours are merged pairwise and later
/// batches are twice as long, so the memory stays fixed however long the trace.
pub(super) fn close_batch<B: Default + Clone>(
    done: &mut Vec<B>,
    current: &mut B,
    batch_len: &mut u64,
    absorb: fn(&mut B, &B),
) {
    done.push(std::mem::take(current));
    if done.len() == MAX_BATCHES {
        let old = std::mem::take(done);
        for pair in old.chunks(2) {
            let mut b = pair[0].clone();
            if let Some(second) = pair.get(1) {
                absorb(&mut b, second);
            }
            done.push(b);
        }
        *batch_len *= 2;
    }
}

/// The bucket of distance d >= 1.
pub(crate) fn bucket(d: u64) -> usize {
    if d < EXACT {
        return d as usize;
    }
    let e = 63 - d.leading_zeros();
    let sub = (d >> (e - SUB_BITS)) & (SUB - 1);
    (EXACT + u64::from(e - EXACT.trailing_zeros()) * SUB + sub) as usize
}

/// The smallest distance in bucket b.
pub(crate) fn bucket_low(b: usize) -> u64 {
    let b = b as u64;
    if b < EXACT {
        return b;
    }
    let e = (b - EXACT) / SUB + u64::from(EXACT.trailing_zeros());
    let sub = (b - EXACT) % SUB;
    (1 << e) + (sub << (e - u64::from(SUB_BITS)))
}

#[derive(Clone, Debug, Default)]
struct Batch {
    arrivals: u64,
    repeats: u64,
    /// Repeats by bucket of their reuse distance d.
    hist: Vec<u64>,
    /// Repeats by bucket of their trace index t (warm-up included), from bucket
    /// `t_base` on: a batch spans few buckets of t.
    t_base: usize,
    t_hist: Vec<u64>,
}

fn add_into(into: &mut Vec<u64>, offset: usize, from: &[u64]) {
    if into.len() < offset + from.len() {
        into.resize(offset + from.len(), 0);
    }
    for (a, b) in into[offset..].iter_mut().zip(from) {
        *a += b;
    }
}

impl Batch {
    fn absorb(&mut self, other: &Batch) {
        self.arrivals += other.arrivals;
        self.repeats += other.repeats;
        add_into(&mut self.hist, 0, &other.hist);
        // Batches are absorbed in time order, so t_base only grows.
        add_into(&mut self.t_hist, other.t_base - self.t_base, &other.t_hist);
    }

    /// tail[b] = repeats with d >= bucket_low(b), for b = 0..=len.
    fn tails(&self, len: usize) -> Vec<u64> {
        let mut tail = vec![0u64; len + 1];
        for b in (0..len).rev() {
            tail[b] = tail[b + 1] + self.hist.get(b).copied().unwrap_or(0);
        }
        tail
    }

    /// Repeats at t >= bucket_low(b): the ones that can show d > bucket_low(b) - 1.
    fn repeats_from(&self, b: usize) -> u64 {
        let before: u64 = self.t_hist.iter().take(b.saturating_sub(self.t_base)).sum();
        self.repeats - before
    }
}

/// Reuse distances of the measured repeats, batch by batch.
#[derive(Clone, Debug)]
pub struct ReuseCounts {
    batch_len: u64,
    done: Vec<Batch>,
    current: Batch,
    max_distance: u64,
}

impl Default for ReuseCounts {
    fn default() -> Self {
        ReuseCounts {
            batch_len: FIRST_BATCH,
            done: Vec::new(),
            current: Batch::default(),
            max_distance: 0,
        }
    }
}

impl ReuseCounts {
    /// One measured arrival at trace index `index`; `distance` is Some(d) for a repeat.
    #[inline]
    pub fn record(&mut self, index: u64, distance: Option<u64>) {
        let c = &mut self.current;
        if c.arrivals == 0 {
            c.t_base = bucket(index.max(1));
        }
        c.arrivals += 1;
        if let Some(d) = distance {
            let b = bucket(d.max(1));
            if b >= c.hist.len() {
                c.hist.resize(b + 1, 0);
            }
            c.hist[b] += 1;
            let tb = bucket(index.max(1)) - c.t_base;
            if tb >= c.t_hist.len() {
                c.t_hist.resize(tb + 1, 0);
            }
            c.t_hist[tb] += 1;
            c.repeats += 1;
            self.max_distance = self.max_distance.max(d);
        }
        if self.current.arrivals == self.batch_len {
            self.close_batch();
        }
    }

    fn close_batch(&mut self) {
        close_batch(
            &mut self.done,
            &mut self.current,
            &mut self.batch_len,
            Batch::absorb,
        );
    }

    /// The point and upper profiles at confidence `level`, and a summary.
    pub fn estimate(&self, level: f64) -> Option<ReuseEstimate> {
        let mut batches: Vec<&Batch> = self.done.iter().collect();
        if self.current.arrivals > 0 {
            batches.push(&self.current);
        }
        let repeats: u64 = batches.iter().map(|b| b.repeats).sum();
        if repeats == 0 {
            return None;
        }
        let len = batches.iter().map(|b| b.hist.len()).max().unwrap_or(0);
        let tails: Vec<Vec<u64>> = batches.iter().map(|b| b.tails(len)).collect();
        // Knots n = bucket_low(b) - 1 for b >= 2: S(n) = P(d >= bucket_low(b)), up to
        // the last with repeats that could show it. Every batch keeps its place in
        // each knot's pairs (zero when it has no such repeat), so that the band's
        // bootstrap weighs the same batch alike at every knot.
        let mut knots = Vec::new();
        for b in 2..=len {
            let pairs = knot_pairs(&batches, &tails, b);
            if pairs.iter().map(|p| p.1).sum::<f64>() <= 0.0 {
                break;
            }
            let n = bucket_low(b) - 1;
            knots.push(Knot {
                n,
                group: group_for(n, self.batch_len, batches.len()),
                pairs,
            });
        }
        let mut point = ReuseProfile {
            n: vec![0],
            survival: vec![1.0],
            between: Between::Linear,
        };
        for k in &knots {
            let (h, c) = k
                .pairs
                .iter()
                .fold((0.0, 0.0), |a, p| (a.0 + p.0, a.1 + p.1));
            let prev = *point.survival.last().unwrap_or(&1.0);
            point.n.push(k.n);
            point.survival.push((h / c).min(prev));
        }
        let last_covered = knots.last().map_or(0, |k| k.n);
        let band = |level: f64| {
            let mut upper = ReuseProfile {
                n: vec![0],
                survival: vec![1.0],
                between: Between::Step,
            };
            for (n, u) in upper_band(&knots, level) {
                upper.n.push(n);
                upper.survival.push(u);
            }
            upper
        };
        let conservative_level = (1.0 + level) / 2.0;
        let p_interval = |n: u64| -> Option<Interval> {
            ratio_interval(&survival_pairs(&batches, &tails, bucket(n + 1)), level)
        };
        let arrival_pairs: Vec<(f64, f64)> = batches
            .iter()
            .map(|b| (b.repeats as f64, b.arrivals as f64))
            .collect();
        let median = point.median();
        let summary = ReuseSummary {
            repeats,
            batches: batches.len() as u64,
            batch_arrivals: self.batch_len,
            knots: point.n.len() as u64,
            max_distance: self.max_distance,
            covered_up_to: last_covered,
            median_distance: median,
            survival_at_median: median.and_then(p_interval),
        };
        Some(ReuseEstimate {
            point,
            upper: band(level),
            conservative_upper: band(conservative_level),
            p_repeat: ratio_interval(&arrival_pairs, level),
            conservative_p_repeat: ratio_interval(&arrival_pairs, conservative_level),
            summary,
        })
    }
}

/// Per batch, for S at knot bucket_low(b) - 1: (repeats with d >= bucket_low(b), repeats
/// that could show it).
fn knot_pairs(batches: &[&Batch], tails: &[Vec<u64>], b: usize) -> Vec<(f64, f64)> {
    batches
        .iter()
        .zip(tails)
        .map(|(batch, tail)| {
            let hits = tail.get(b).copied().unwrap_or(0);
            (hits as f64, batch.repeats_from(b) as f64)
        })
        .collect()
}

/// [`knot_pairs`] without the batches that have no repeat that could show it.
fn survival_pairs(batches: &[&Batch], tails: &[Vec<u64>], b: usize) -> Vec<(f64, f64)> {
    let mut p = knot_pairs(batches, tails, b);
    p.retain(|p| p.1 > 0.0);
    p
}

/// What [`ReuseCounts::estimate`] gives.
#[derive(Clone, Debug)]
pub struct ReuseEstimate {
    /// S(n) estimated (linear between knots).
    pub point: ReuseProfile,
    /// The upper end of S(n)'s band at the fit's level, simultaneous over every knot
    /// ([`super::band`]; read as steps, held beyond the data).
    pub upper: ReuseProfile,
    /// The same at the conservative level (1 + level) / 2, for the conservative renewal
    /// bound (with `conservative_p_repeat`, both hold together at the fit's level).
    pub conservative_upper: ReuseProfile,
    /// p_r (repeats over arrivals) with its interval over the same batches.
    pub p_repeat: Option<Interval>,
    /// p_r's interval at the conservative level.
    pub conservative_p_repeat: Option<Interval>,
    pub summary: ReuseSummary,
}

/// How much data the reuse profile rests on.
#[derive(Clone, Debug, Serialize)]
pub struct ReuseSummary {
    /// Measured repeats with a known reuse distance.
    pub repeats: u64,
    /// Batches behind the intervals, and their length in arrivals.
    pub batches: u64,
    pub batch_arrivals: u64,
    pub knots: u64,
    /// Longest reuse distance seen.
    pub max_distance: u64,
    /// Largest knot n with repeats at t > n behind S(n) (S beyond it is not measured).
    pub covered_up_to: u64,
    /// Smallest knot with S(n) <= 1/2.
    pub median_distance: Option<u64>,
    /// S there, with its batch-means interval.
    pub survival_at_median: Option<Interval>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous_and_fine() {
        let mut prev = 0;
        for b in 1..EXACT as usize + 40 * SUB as usize {
            let lo = bucket_low(b);
            assert!(lo > prev || b == 1, "bucket {b}");
            assert_eq!(bucket(lo), b, "low end of bucket {b}");
            assert_eq!(
                bucket(lo.saturating_sub(1).max(1)),
                b.max(2) - 1,
                "bucket {b}"
            );
            if lo >= EXACT {
                // Relative width 1 / SUB.
                let next = bucket_low(b + 1);
                assert!(((next - lo) as f64) / (lo as f64) <= 1.0 / SUB as f64 + 1e-12);
            }
            prev = lo;
        }
        assert_eq!(bucket(u64::MAX), bucket(u64::MAX - 1));
    }

    #[test]
    fn geometric_reuse_is_recovered() {
        // One message drawn with probability p at every arrival: d is geometric,
        // S(n) = (1 - p)^n exactly.
        let p = 0.01;
        let mut rng = rbf_data::synth::Rng::seed(5);
        let mut counts = ReuseCounts::default();
        let (mut last, mut t) = (0u64, 0u64);
        while t < 4_000_000 {
            t += 1;
            if rng.chance(p) {
                counts.record(t, Some(t - last));
                last = t;
            } else {
                counts.record(t, None);
            }
        }
        let e = counts.estimate(0.99).unwrap();
        e.point.validate().unwrap();
        e.upper.validate().unwrap();
        assert!(
            e.summary.batches >= 32 && e.summary.batches <= 64,
            "{:?}",
            e.summary
        );
        let n_rep = e.summary.repeats as f64;
        for n in [1u64, 10, 50, 100, 300, 700] {
            let want = (1.0 - p).powi(n as i32);
            let got = e.point.at(n);
            // Binomial sampling error of the fraction of n_rep repeats with d > n.
            let tol = 4.0 * (want * (1.0 - want) / n_rep).sqrt() + 1e-9;
            assert!(
                (got - want).abs() < tol,
                "S({n}) = {got}, want {want} +- {tol}"
            );
            assert!(
                e.upper.at(n) >= want,
                "upper S({n}) = {} < {want}",
                e.upper.at(n)
            );
        }
    }
}
