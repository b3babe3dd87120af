//! Blocks of arrivals with one bit-setting chance each: the bracket of U the
//! hitting-time engine runs on. Over a block [a, a + L) the engine's U_j lies between
//! U+ (its value at a, with a margin) and U- (its value at a + L - 1, with a margin);
//! both step sequences are non-increasing, so section 1 of docs/RENEWAL-TOLERANCE.md
//! makes the run with U+ an upper and the one with U- a lower bound. A block is as
//! long as its share of the bracket's width allows: L p_r (U+ - U-) <= beta
//! insertions, and at most `cap` expected insertions (so the end of a cycle is found
//! to within a fraction of its spread).

use super::qtable::Table;
use rbf_data::workload::ReuseProfile;

const UNIT: f64 = f64::EPSILON / 2.0;
/// Relative margin of U+ and U-: it makes the engine's rounded eta and p_r U lie on
/// their side of the bracket's (see the module doc of [`super`]).
const MARGIN: f64 = 1e-10;

/// A block of arrivals and its bracket of U.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Block {
    /// First arrival (1-based) and count.
    pub start: u64,
    pub len: u64,
    pub up: f64,
    pub low: f64,
}

/// The engine's U: from a measured reuse profile, U_j = S(j - 1), read exactly as the
/// exact engine reads it ([`ReuseProfile::at`]); or from Q where no rank shifts,
/// bounded by a [`Table`] of its power sums.
pub struct ProfileU<'a> {
    source: Source<'a>,
    /// The least U+ may be (U held once exhausted, p_r < 1).
    held_floor: f64,
}

enum Source<'a> {
    Profile(&'a ReuseProfile),
    Table(Table),
}

impl<'a> ProfileU<'a> {
    pub fn new(profile: &'a ReuseProfile, held_floor: f64) -> Self {
        ProfileU {
            source: Source::Profile(profile),
            held_floor,
        }
    }

    /// U from Q's power sums ([`Table`]).
    pub fn from_table(table: Table, held_floor: f64) -> ProfileU<'static> {
        ProfileU {
            source: Source::Table(table),
            held_floor,
        }
    }

    /// At least the engine's U_i for every i >= j.
    pub fn upper(&self, j: u64) -> f64 {
        self.bounds_from(j, &mut 0).0
    }

    /// [`ProfileU::upper`] and [`ProfileU::lower`] at `j` with a guess of its knot
    /// (fast when the j asked grow slowly).
    pub fn bounds_from(&self, j: u64, knot: &mut usize) -> (f64, f64) {
        let n = j.saturating_sub(1);
        let (up, low) = match &self.source {
            Source::Profile(p) => {
                // The knot's survival value bounds the rounding of every value read on
                // its segment.
                let (s, top) = p.at_from(n, knot);
                (
                    s * (1.0 + MARGIN) + 8.0 * UNIT * top,
                    s * (1.0 - MARGIN) - 8.0 * UNIT * top,
                )
            }
            Source::Table(t) => t.bounds(n, knot),
        };
        (up.max(self.held_floor).min(1.0), low.max(0.0))
    }

    /// At most the engine's U_i for every i <= j.
    pub fn lower(&self, j: u64) -> f64 {
        self.bounds_from(j, &mut 0).1
    }
}

/// The blocks of a cycle, one after another.
pub struct Blocks<'a> {
    u: &'a ProfileU<'a>,
    p_r: f64,
    beta: f64,
    cap: f64,
    /// When set, U may fall by at most this share of its value over a block.
    relative: Option<f64>,
    next: u64,
}

impl<'a> Blocks<'a> {
    pub fn new(u: &'a ProfileU<'a>, p_r: f64, beta: f64, cap: f64) -> Self {
        Blocks {
            u,
            p_r,
            beta,
            cap,
            relative: None,
            next: 1,
        }
    }

    /// From now on, U falls by at most a share `delta` of its value over a block too.
    pub fn set_relative(&mut self, delta: f64) {
        self.relative = Some(delta);
    }

    /// Splits [a, a + len) into pieces over which U falls by at most a share `delta`
    /// of its value: (start, length) each.
    pub fn pieces(&self, a: u64, len: u64, delta: f64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut t = a;
        while t < a + len {
            let left = a + len - t;
            let top = self.u.upper(t) * (1.0 - delta);
            let ok = |l: u64| self.u.lower(t + l - 1) >= top;
            let mut l = 1u64;
            if ok(1) {
                let mut hi = 2u64;
                while hi <= left && ok(hi) {
                    l = hi;
                    hi *= 2;
                }
                let mut top_l = hi.min(left + 1);
                while top_l - l > 1 {
                    let mid = l + (top_l - l) / 2;
                    if ok(mid) {
                        l = mid;
                    } else {
                        top_l = mid;
                    }
                }
            }
            let l = l.min(left);
            out.push((t, l));
            t += l;
        }
        out
    }

    /// Whether a block of `len` from `a` keeps to the budget (its width in
    /// insertions, and U's relative fall when asked).
    fn fits(&self, a: u64, len: u64) -> bool {
        let (up, low) = (self.u.upper(a), self.u.lower(a + len - 1));
        len as f64 * self.p_r * (up - low) <= self.beta
            && self.relative.is_none_or(|d| low >= up * (1.0 - d))
    }

    /// From now on, blocks spend at most `beta` insertions of the bracket's width.
    pub fn set_beta(&mut self, beta: f64) {
        self.beta = beta;
    }

    pub fn next_block(&mut self) -> Block {
        let a = self.next;
        let up = self.u.upper(a);
        let eta = (1.0 - self.p_r) + self.p_r * up;
        let max_len = ((self.cap / eta.max(1e-300)).floor() as u64).clamp(1, 1 << 40);
        // Largest len <= max_len with width <= beta (width grows with len).
        let mut len = 1u64;
        if self.fits(a, 1) {
            let mut hi = 2u64;
            while hi <= max_len && self.fits(a, hi) {
                len = hi;
                hi *= 2;
            }
            let mut top = hi.min(max_len + 1);
            while top - len > 1 {
                let mid = len + (top - len) / 2;
                if self.fits(a, mid) {
                    len = mid;
                } else {
                    top = mid;
                }
            }
        }
        let len = len.min(max_len);
        self.next = a + len;
        Block {
            start: a,
            len,
            up,
            low: self.u.lower(a + len - 1),
        }
    }
}
