//! The hitting-time engine for two phases with copy-over (docs/RENEWAL-TOLERANCE.md,
//! section 6.9). The active half runs the one-phase process, so both sides follow it
//! block by block as for one phase, with unit weights: each piece's part of the
//! numerator, sum_j c_j over its arrivals, is recorded. Eqs. (27)-(28) weigh arrival j
//! with p_r W_j, W_j = E[U_{J' + j}], J' the frozen cycle's length, whose law is the
//! same cycle's: P(J' >= t) = A_t, the chance the cycle still runs at arrival t. So
//! once the cycle has been followed:
//! * U is non-increasing, so W_j falls with j and with J' (stochastically);
//! * the side with more insertions gives a lower bound of A at every block's end, so a
//!   frozen length J'_lo that is stochastically smaller than the exact engine's
//!   (its mass at block ends, cut where that engine cannot yet have stopped); the
//!   side with fewer insertions an upper bound at every block's start, so a J'_hi
//!   that is stochastically larger (cut where the engine has surely stopped, or at
//!   infinity);
//! * W+_a = sum_x P(J'_lo = x) U+(x + a) is at least W_j over a piece [a, b], and
//!   W-_b = sum_x P(J'_hi = x) U-(x + b) at most;
//!
//! and the numerator's monotonicity in the weights (section 6.1) does the rest.
//! Moving mass of J'_lo down (of J'_hi up) keeps these bounds: the points are grouped
//! to a relative width [`GROUP_WIDTH`] of the tolerance, so that W costs a few hundred
//! terms.

use super::blocks::ProfileU;
use super::fields::Span;

const UNIT: f64 = f64::EPSILON / 2.0;
/// Group width of the frozen length's points, relative to their position, as a share
/// of the tolerance: U at x and at x (1 + T / 4) differ by about a quarter of T times
/// the profile's log-log slope (below 1 on every measured profile).
pub const GROUP_WIDTH: f64 = 0.25;
/// Mass of a group below which it may be as wide as it likes: it moves W by at most
/// that share of U.
const LIGHT: f64 = 1e-12;
/// Arrivals per piece while a side is followed in closed form, relative to the
/// arrival's position plus the first insertion count the cycle can end at, as a share
/// of the tolerance: W falls by about that share times the slope over a piece.
pub const PIECE_WIDTH: f64 = 0.1;

/// A block followed: its arrivals and the sides' bounds of A at the arrival after it.
pub struct BlockEnd {
    pub start: u64,
    pub len: u64,
    /// The side with more insertions: a lower bound.
    pub plus_lo: f64,
    /// The side with fewer insertions: an upper bound.
    pub minus_hi: f64,
}

/// A piece's part of the numerator per unit weight on one side: sum over its
/// arrivals of E[sets_cap(N_{j-1})] (lower on the side with more insertions, upper on
/// the other).
pub struct PieceSum {
    pub start: u64,
    pub len: u64,
    pub c: f64,
    /// The block it belongs to.
    pub block: usize,
}

/// What the two-phase sums need from the cycle followed.
#[derive(Default)]
pub struct Record {
    pub blocks: Vec<BlockEnd>,
    pub plus: Vec<PieceSum>,
    pub minus: Vec<PieceSum>,
}

impl Record {
    /// Records a block's pieces: `each` holds one entry per piece of `pieces` (lengths,
    /// from `start`), or one for the whole block.
    pub fn pieces(
        list: &mut Vec<PieceSum>,
        block: usize,
        start: u64,
        pieces: &[(u64, f64)],
        each: &[Span],
        lower: bool,
    ) {
        let pick = |s: &Span| if lower { s.lo } else { s.hi };
        if each.len() == pieces.len() {
            let mut a = start;
            for (&(len, _), s) in pieces.iter().zip(each) {
                list.push(PieceSum {
                    start: a,
                    len,
                    c: pick(s),
                    block,
                });
                a += len;
            }
        } else {
            let len = pieces.iter().map(|p| p.0).sum();
            list.push(PieceSum {
                start,
                len,
                c: each.iter().map(pick).sum(),
                block,
            });
        }
    }
}

/// The pieces of [start, start + len) for closed-form blocks: each at most
/// `PIECE_WIDTH` T (n0 + a) arrivals from its start a, unit weights.
pub fn pieces(start: u64, len: u64, n0: f64, tolerance: f64) -> Vec<(u64, f64)> {
    let mut out = Vec::new();
    let mut a = start;
    let end = start + len;
    while a < end {
        let width = ((PIECE_WIDTH * tolerance * (n0 + a as f64)).floor() as u64).max(1);
        let l = width.min(end - a);
        out.push((l, 1.0));
        a += l;
    }
    out
}

/// Survival segments (last x, P(J' >= x) on the segment) to point masses at each
/// segment's end.
fn masses(segments: &[(u64, f64)]) -> Vec<(u64, f64)> {
    segments
        .iter()
        .enumerate()
        .map(|(i, &(x, s))| {
            let next = segments.get(i + 1).map_or(0.0, |n| n.1);
            (x, (s - next).max(0.0))
        })
        .filter(|p| p.1 > 0.0)
        .collect()
}

/// J'_lo: survival a_i (the running minimum of the side with more insertions' lower
/// A after block i) on block i's arrivals, the last block before `stop` (where the
/// exact engine cannot yet have stopped) reaching to its end, 0 after.
pub fn frozen_lower(blocks: &[BlockEnd], stop: usize) -> Vec<(u64, f64)> {
    let mut segments = vec![(0u64, 1.0f64)];
    let mut a = 1.0f64;
    let stop = stop.min(blocks.len());
    for (i, b) in blocks[..stop].iter().enumerate() {
        a = a.min(b.plus_lo).max(0.0);
        let end = if i + 1 == stop {
            b.start + b.len
        } else {
            b.start + b.len - 1
        };
        segments.push((end, a));
    }
    masses(&segments)
}

/// J'_hi: survival h_i (the running minimum of the side with fewer insertions' upper
/// A before block i, 1 before the first) on block i's arrivals; cut at `certified`
/// (a block start by which the exact engine has stopped), else the mass left after
/// the last block is at infinity (returned apart: it adds 0 to W-).
pub fn frozen_upper(blocks: &[BlockEnd], certified: Option<u64>) -> (Vec<(u64, f64)>, f64) {
    let mut segments = vec![(0u64, 1.0f64)];
    let mut h = 1.0f64;
    for b in blocks {
        if certified == Some(b.start) {
            segments.push((b.start, h));
            return (masses(&segments), 0.0);
        }
        segments.push((b.start + b.len - 1, h));
        h = h.min(b.minus_hi).min(1.0);
    }
    let mut points = masses(&segments);
    // The last segment's mass stays above: J'_hi exceeds every arrival followed there.
    if let Some(last) = points.last_mut() {
        if last.0 == segments.last().map_or(0, |s| s.0) {
            last.1 = (last.1 - h).max(0.0);
        }
    }
    (points, h)
}

/// Groups consecutive points: a group closes before a point beyond `(1 + width)`
/// times its first x unless it is still light. Each group's mass goes to its first x
/// (`down`, for J'_lo) or its last (for J'_hi).
pub fn group(points: &[(u64, f64)], width: f64, down: bool) -> Vec<(u64, f64)> {
    let mut out: Vec<(u64, f64)> = Vec::new();
    let (mut first, mut last, mut mass) = (0u64, 0u64, 0.0f64);
    let mut open = false;
    for &(x, m) in points {
        if open && x as f64 > first as f64 * (1.0 + width) && mass >= LIGHT {
            out.push((if down { first } else { last }, mass));
            open = false;
        }
        if !open {
            (first, mass, open) = (x, 0.0, true);
        }
        last = x;
        mass += m;
    }
    if open {
        out.push((if down { first } else { last }, mass));
    }
    out
}

/// W at arrivals asked in increasing order, from a grouped law of the frozen length.
pub struct Weights {
    points: Vec<(u64, f64)>,
    knots: Vec<usize>,
    upper: bool,
}

impl Weights {
    /// W+ (`upper`, from J'_lo) or W- (from J'_hi).
    pub fn new(points: Vec<(u64, f64)>, upper: bool) -> Weights {
        let knots = vec![0; points.len()];
        Weights {
            points,
            knots,
            upper,
        }
    }

    /// W+ at j (at least every W_i for i >= j) or W- (at most every W_i for i <= j),
    /// with the sum's rounding.
    pub fn at(&mut self, u: &ProfileU, j: u64) -> f64 {
        let mut w = 0.0;
        for (&(x, m), knot) in self.points.iter().zip(&mut self.knots) {
            let (up, low) = u.bounds_from(x + j, knot);
            w += m * if self.upper { up } else { low };
        }
        let r = (self.points.len() as f64 + 4.0) * 2.0 * UNIT;
        if self.upper {
            w * (1.0 + r)
        } else {
            (w * (1.0 - r)).max(0.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(start: u64, len: u64, plus_lo: f64, minus_hi: f64) -> BlockEnd {
        BlockEnd {
            start,
            len,
            plus_lo,
            minus_hi,
        }
    }

    /// The frozen laws are laws (mass 1), J'_lo below J'_hi, and the cuts where the
    /// exact engine may stop are kept.
    #[test]
    fn frozen_lengths_bracket_the_cycle() {
        let blocks = vec![
            block(1, 10, 1.0, 1.0),
            block(11, 5, 0.9, 0.95),
            block(16, 5, 0.3, 0.5),
            block(21, 5, 0.01, 0.05),
            block(26, 5, 0.0, 0.001),
        ];
        let lo = frozen_lower(&blocks, 4);
        let total: f64 = lo.iter().map(|p| p.1).sum();
        assert!((total - 1.0).abs() < 1e-15, "{lo:?}");
        // P(J'_lo >= t) <= A_t: on block i, the lower A after it (A falls with t).
        let at_least = |pts: &[(u64, f64)], t: u64| -> f64 {
            pts.iter().filter(|p| p.0 >= t).map(|p| p.1).sum()
        };
        assert!((at_least(&lo, 11) - 0.9).abs() < 1e-15);
        assert!((at_least(&lo, 16) - 0.3).abs() < 1e-15);
        assert!((at_least(&lo, 20) - 0.3).abs() < 1e-15);
        assert!((at_least(&lo, 26) - 0.01).abs() < 1e-15);
        assert_eq!(at_least(&lo, 27), 0.0);
        let (hi, inf) = frozen_upper(&blocks, None);
        let total: f64 = hi.iter().map(|p| p.1).sum::<f64>() + inf;
        assert!((total - 1.0).abs() < 1e-15, "{hi:?} {inf}");
        for t in 0..40 {
            assert!(at_least(&lo, t) <= at_least(&hi, t) + inf + 1e-15, "{t}");
        }
        let (cut, inf) = frozen_upper(&blocks, Some(21));
        assert_eq!(inf, 0.0);
        assert_eq!(at_least(&cut, 22), 0.0);
        assert!((at_least(&cut, 21) - 0.5).abs() < 1e-15, "{cut:?}");
        // Grouping moves mass down (J'_lo) or up (J'_hi) only.
        let g = group(&lo, 0.5, true);
        for t in 0..40 {
            assert!(at_least(&g, t) <= at_least(&lo, t) + 1e-15);
        }
        let g = group(&hi, 0.5, false);
        for t in 0..40 {
            assert!(at_least(&g, t) + 1e-15 >= at_least(&hi, t));
        }
    }
}
