//! "Disabled" messages (FN §5.2 eq. 24 and appendix G.2): a message of Q is disabled
//! when a draw from it would not be a non-repeat, because it was already drawn in the
//! current cycle or entered Q as a new message during it. New messages shift the ranks
//! below their placement down by one, so the state is per rank.
//!
//! We track the complement g_i = 1 - h_i ("enabled"). Eq. (24) becomes, with
//! Z<_i = sum_{i' < i} zeta_{i'} and Z>_i = sum_{i' > i} zeta_{i'},
//!
//! g_i(j) = p_r (1 - q_i) g_i(j-1) + (1 - p_r) [Z<_i g_{i-1}(j-1) + Z>_i g_i(j-1)]
//!
//! (a new message at rank i is disabled, one above rank i brings the message from rank
//! i - 1 down, one below leaves rank i alone). The quantity the models need is the
//! enabled repeat mass U = sum_i q_i g_i, the probability that a draw from Q is a
//! non-repeat: the corrected eqs. (25)-(26) of MODEL-NOTES.md use it as
//! P(eta_j = 1) = (1 - p_r) + p_r U and P(non-repeat draw) = p_r U.
//!
//! Window: the maximum of g over a prefix of ranks never grows, whatever the placement
//! (each update is a combination of the previous g_{i-1} and g_i with weights summing
//! to at most 1), so once every rank of a prefix is below 1e-300 it stays there; those
//! ranks are skipped, which changes U by less than 1e-300.
//!
//! One `Disabling` serves either the renewal model ([`Disabling::arrival`]) or the
//! Markov chain ([`Disabling::distinct_arrival`]), never both.

/// The enabled-rank vector g and its update.
pub struct Disabling<'a> {
    q: &'a [f64],
    p_r: f64,
    z_below: Vec<f64>,
    z_above: Vec<f64>,
    /// Coefficients of the renewal step, g_i <- stay_i g_i + shift_i g_{i-1}, and the
    /// weights q, in cache-line-aligned copies padded with zeros to a multiple of
    /// [`LANES`] ranks (padding ranks stay at g = 0 and weigh nothing).
    stay: AlignedVec,
    shift: AlignedVec,
    q_pad: AlignedVec,
    g: AlignedVec,
    /// Run the two parts on two threads (same results either way).
    threads: bool,
    /// Vector level of the kernels (same results at every level).
    simd: Simd,
    /// U after each of the arrivals computed ahead, and how many were consumed.
    ahead: Vec<f64>,
    ahead_pos: usize,
    /// Ranks below `head` are below [`UNDERFLOW`] for good and held at 0.
    head: usize,
    /// Split calls of [`Disabling::advance_block`] so far.
    calls: u32,
    u: f64,
}

/// Arrivals advanced per pass over the ranks (1.3 M arrivals with D = 10^5 on two
/// threads: 8.0 s with 64, 8.5 s with 32 or 128).
const BLOCK: usize = 64;
/// Ranks per chunk: the four arrays of a chunk (a, b, q and g, 16 KB) stay in a
/// core's L1 cache for the BLOCK steps. With 2048 ranks (L2) the kernel was 20-25 %
/// slower (`rbf bench fn --suite scale`, 2^16 and 2^17); 256 was slower too.
const CHUNK: usize = 512;
/// Live ranks from which the update is split in two parts (two threads when there are
/// two cores); below that a block costs too little to share.
const SPLIT_MIN: usize = 16_384;
/// Blocks advanced per call when split, at most: the lower part starts one block late,
/// so the pipeline idles one block in SUB_BLOCKS + 1. The first calls advance 1, 2,
/// 4, ... blocks, so that short cycles do not compute many arrivals they never use.
const SUB_BLOCKS: usize = 128;

const UNDERFLOW: f64 = 1e-300;

use super::eq24::{self, Coefficients, LANES};
use super::simd::{sum_lanes, AlignedVec, Simd};
use crate::workload::reuse::{ReuseProfile, ReuseSequence};

/// Lane sums of U for each arrival of a block.
type BlockLanes = [[f64; LANES]; BLOCK];

/// A run of consecutive ranks advanced together (its start a multiple of [`LANES`]).
struct Part<'p> {
    stay: &'p [f64],
    shift: &'p [f64],
    q: &'p [f64],
    g: &'p mut [f64],
}

impl Part<'_> {
    /// Advances the part by [`BLOCK`] arrivals, chunk by chunk (temporal blocking, see
    /// [`Disabling::advance_block`]); `edge[t]` is the value of the rank above the part
    /// at step t. Adds the part's share of U after each step to the lanes of `acc` and
    /// returns its last rank's values at the BLOCK steps (the edge of the part below).
    fn advance(&mut self, simd: Simd, edge: &[f64; BLOCK], acc: &mut BlockLanes) -> [f64; BLOCK] {
        let d = self.g.len();
        let mut boundary = *edge;
        let mut c0 = 0;
        while c0 < d {
            let c1 = (c0 + CHUNK).min(d);
            let coef = Coefficients {
                a: &self.stay[c0..c1],
                b: &self.shift[c0..c1],
                q: &self.q[c0..c1],
            };
            let g = &mut self.g[c0..c1];
            let mut below = [0.0f64; BLOCK];
            for t in 0..BLOCK {
                below[t] = g[g.len() - 1];
                eq24::step(simd, coef, g, boundary[t], &mut acc[t]);
            }
            boundary = below;
            c0 = c1;
        }
        boundary
    }
}

impl<'a> Disabling<'a> {
    /// Start of a cycle: every message of Q is enabled.
    pub fn new(q: &'a [f64], zeta: &[f64], p_r: f64) -> Self {
        let d = q.len();
        let mut z_below = vec![0.0; d];
        let mut acc = 0.0;
        for i in 0..d {
            z_below[i] = acc;
            acc += zeta[i];
        }
        let mut z_above = vec![0.0; d];
        let mut acc = 0.0;
        for i in (0..d).rev() {
            z_above[i] = acc;
            acc += zeta[i];
        }
        let pn = 1.0 - p_r;
        let padded = d.div_ceil(LANES) * LANES;
        let stay: Vec<f64> = (0..d)
            .map(|i| p_r * (1.0 - q[i]) + pn * z_above[i])
            .collect();
        let shift: Vec<f64> = (0..d).map(|i| pn * z_below[i]).collect();
        let u = q.iter().rev().sum();
        Disabling {
            q,
            p_r,
            z_below,
            z_above,
            stay: AlignedVec::padded(&stay, padded),
            shift: AlignedVec::padded(&shift, padded),
            q_pad: AlignedVec::padded(q, padded),
            g: AlignedVec::padded(&vec![1.0; d], padded),
            // A second thread only when rayon would allow two (RAYON_NUM_THREADS=1
            // turns it off) and the caller is not itself a rayon worker, such as the
            // experiment runner's parallel points (the cores are taken already).
            threads: d >= SPLIT_MIN
                && rayon::current_thread_index().is_none()
                && rayon::current_num_threads() >= 2,
            simd: Simd::detect(),
            ahead: Vec::new(),
            ahead_pos: 0,
            head: 0,
            calls: 0,
            u,
        }
    }

    /// U = sum_i q_i g_i: the probability that a draw from Q is still a non-repeat.
    pub fn enabled_mass(&self) -> f64 {
        self.u
    }

    /// One arrival of the renewal model (eq. 24): a draw from Q with probability p_r,
    /// a new message otherwise. The recursion does not depend on the bit process, so
    /// arrivals are computed ahead in blocks (see [`Disabling::advance_block`]).
    pub fn arrival(&mut self) {
        if self.ahead_pos == self.ahead.len() {
            self.advance_block();
        }
        self.u = self.ahead[self.ahead_pos];
        self.ahead_pos += 1;
    }

    /// Advances g by [`BLOCK`] arrivals (or [`SUB_BLOCKS`] x BLOCK when the ranks are
    /// split in two parts, see below) and stores U after each of them.
    ///
    /// Temporal blocking: g_i(t + 1) = stay_i g_i(t) + shift_i g_{i-1}(t) only looks one
    /// rank up, so ranks are processed in cache-sized chunks, each advanced all BLOCK
    /// steps before the next; the chunk below needs only the last rank's values at the
    /// BLOCK times, kept in `boundary`. The arithmetic per rank and step is that of one
    /// full pass per arrival, but the arrays are streamed from memory once per block
    /// instead of once per arrival. U after each step is summed in [`LANES`] lanes
    /// (rank i in lane i mod LANES, chunks in order), reduced once per step.
    ///
    /// Two parts: with at least [`SPLIT_MIN`] live ranks, the ranks are cut in two
    /// halves and the upper half runs one BLOCK ahead of the lower one, which only needs
    /// the upper half's last rank at each step. With two cores the halves run on two
    /// threads (a pipeline). The U lanes of each half are kept apart and added the same
    /// way whether or not a second thread ran, so the result does not depend on the
    /// machine.
    ///
    /// The kernel starts at the multiple of [`LANES`] at or below `head`: the ranks in
    /// between are 0 and stay 0 (their rank above is 0 too).
    fn advance_block(&mut self) {
        let d = self.g.len();
        let start = self.head / LANES * LANES;
        let live = d - start;
        let sub = if live >= SPLIT_MIN {
            self.calls += 1;
            SUB_BLOCKS.min(1 << self.calls.min(16))
        } else {
            1
        };
        self.ahead.clear();
        self.ahead.resize(sub * BLOCK, 0.0);
        self.ahead_pos = 0;
        let simd = self.simd;
        let zero = [[0.0; LANES]; BLOCK];
        if sub == 1 {
            let mut part = Part {
                stay: &self.stay[start..],
                shift: &self.shift[start..],
                q: &self.q_pad[start..],
                g: &mut self.g[start..],
            };
            let mut lanes = zero;
            part.advance(simd, &[0.0; BLOCK], &mut lanes);
            for (u, l) in self.ahead.iter_mut().zip(&lanes) {
                *u = sum_lanes(l);
            }
        } else {
            // Cut at a chunk boundary near the middle of the live ranks.
            let mid = (start + (live / 2).div_ceil(CHUNK) * CHUNK).min(d);
            let (g_top, g_bottom) = self.g.split_at_mut(mid);
            let mut top = Part {
                stay: &self.stay[start..mid],
                shift: &self.shift[start..mid],
                q: &self.q_pad[start..mid],
                g: &mut g_top[start..],
            };
            let mut bottom = Part {
                stay: &self.stay[mid..],
                shift: &self.shift[mid..],
                q: &self.q_pad[mid..],
                g: g_bottom,
            };
            let mut lanes_top = vec![zero; sub];
            let mut lanes_bottom = vec![zero; sub];
            if self.threads {
                std::thread::scope(|s| {
                    let (tx, rx) = std::sync::mpsc::channel::<[f64; BLOCK]>();
                    let lanes = &mut lanes_bottom;
                    s.spawn(move || {
                        for acc in lanes.iter_mut() {
                            // The sender only stops early if the upper half panicked,
                            // which the scope then reports.
                            let Ok(edge) = rx.recv() else { return };
                            bottom.advance(simd, &edge, acc);
                        }
                    });
                    for acc in lanes_top.iter_mut() {
                        let edge = top.advance(simd, &[0.0; BLOCK], acc);
                        if tx.send(edge).is_err() {
                            break;
                        }
                    }
                });
            } else {
                for (a, b) in lanes_top.iter_mut().zip(lanes_bottom.iter_mut()) {
                    let edge = top.advance(simd, &[0.0; BLOCK], a);
                    bottom.advance(simd, &edge, b);
                }
            }
            let steps = lanes_top
                .iter()
                .flatten()
                .zip(lanes_bottom.iter().flatten());
            for (u, (a, b)) in self.ahead.iter_mut().zip(steps) {
                *u = sum_lanes(a) + sum_lanes(b);
            }
        }
        self.advance_head();
    }

    /// One distinct arrival of the Markov chain (appendix G.2): conditioned on leaving
    /// the state, the arrival is a non-repeat draw with probability
    /// p_r U / (1 - p_r + p_r U) and a new message otherwise. The printed eq. (42) adds
    /// p_r h_i rather than p_r U h_i to the repeat branch, whose weights then do not sum
    /// to one; conditioning properly, a non-repeat draw takes rank i with probability
    /// q_i g_i / U, so g_i loses that share.
    pub fn distinct_arrival(&mut self) {
        let (pr, pn) = (self.p_r, 1.0 - self.p_r);
        let u = self.u;
        let exit = pn + pr * u;
        if exit <= 0.0 {
            return;
        }
        let (wr, wn) = (pr * u / exit, pn / exit);
        let q = self.q;
        let mut nu = 0.0;
        for i in (self.head..q.len()).rev() {
            let below = if i > 0 {
                self.z_below[i] * self.g[i - 1]
            } else {
                0.0
            };
            let gi = self.g[i];
            let drawn = if u > 0.0 { gi * (1.0 - q[i] / u) } else { gi };
            let v = wr * drawn.max(0.0) + wn * (below + self.z_above[i] * gi);
            self.g[i] = v;
            nu += q[i] * v;
        }
        self.u = nu;
        self.advance_head();
    }

    fn advance_head(&mut self) {
        while self.head < self.q.len() && self.g[self.head] < UNDERFLOW {
            self.g[self.head] = 0.0;
            self.head += 1;
        }
    }
}

/// The sequence U_0 = sum_i q_i, U_1, U_2, ... of the renewal model (eq. 24), or the
/// same sequence read from a measured reuse profile (U_j = S(j - 1), see
/// [`crate::workload::reuse`]).
///
/// With at least [`SPLIT_MIN`] ranks and a second core free (the same rule as the
/// two-part split), the sequence is computed on threads of its own, ahead of the
/// caller: it does not depend on the bit process, so the caller's per-arrival work on
/// the bit distribution runs alongside instead of in turn. The values are the same
/// either way.
pub struct EnabledMassSeq<'a> {
    source: Source<'a>,
    batch: Vec<f64>,
    pos: usize,
}

enum Source<'a> {
    Inline(Box<Disabling<'a>>),
    Thread(std::sync::mpsc::Receiver<Vec<f64>>),
    Profile(ReuseSequence<'a>),
}

/// Values sent per message by the producer thread, and messages it may run ahead.
const BATCH: usize = 1024;
const BATCHES_AHEAD: usize = 1024;

impl<'a> EnabledMassSeq<'a> {
    /// Starts the sequence; a producer thread, if any, belongs to `scope` and stops
    /// when the sequence is dropped.
    pub fn start<'scope>(
        scope: &'scope std::thread::Scope<'scope, 'a>,
        q: &'a [f64],
        zeta: &[f64],
        p_r: f64,
    ) -> Self {
        let mut dis = Disabling::new(q, zeta, p_r);
        let u0 = dis.enabled_mass();
        let source = if dis.threads {
            let (tx, rx) = std::sync::mpsc::sync_channel(BATCHES_AHEAD);
            scope.spawn(move || loop {
                let batch = (0..BATCH)
                    .map(|_| {
                        dis.arrival();
                        dis.enabled_mass()
                    })
                    .collect();
                // The receiver is gone once the caller has all it needs.
                if tx.send(batch).is_err() {
                    return;
                }
            });
            Source::Thread(rx)
        } else {
            Source::Inline(Box::new(dis))
        };
        EnabledMassSeq {
            source,
            batch: vec![u0],
            pos: 0,
        }
    }

    /// The sequence S(0), S(1), ... of a reuse profile: no recursion over ranks.
    pub fn from_profile(profile: &'a ReuseProfile) -> Self {
        EnabledMassSeq {
            source: Source::Profile(profile.sequence()),
            batch: Vec::new(),
            pos: 0,
        }
    }

    /// The next U.
    pub fn next_mass(&mut self) -> f64 {
        if self.pos == self.batch.len() {
            match &mut self.source {
                Source::Profile(seq) => return seq.next().unwrap_or(0.0),
                Source::Inline(dis) => {
                    dis.arrival();
                    return dis.enabled_mass();
                }
                // The producer only stops when the receiver is dropped, or by a panic
                // that the scope re-raises.
                Source::Thread(rx) => {
                    self.batch = rx
                        .recv()
                        .unwrap_or_else(|_| panic!("the eq. 24 producer thread stopped"));
                    self.pos = 0;
                }
            }
        }
        let u = self.batch[self.pos];
        self.pos += 1;
        u
    }
}

#[cfg(test)]
mod tests {
    use super::super::simd::same_bits;
    use super::*;

    #[test]
    fn repeats_only_is_geometric() {
        let q = crate::workload::zipf(20, 1.0);
        let zeta = vec![0.05; 20];
        let mut d = Disabling::new(&q, &zeta, 1.0);
        for _ in 0..37 {
            d.arrival();
        }
        let want: f64 = q.iter().map(|x| x * (1.0 - x).powi(37)).sum();
        assert!((d.enabled_mass() - want).abs() < 1e-15);
    }

    #[test]
    fn bottom_placement_is_closed_form() {
        // zeta = bottom: ranks 0..D-2 never move, g_i = (1 - p_r q_i)^j; rank D-1 is
        // replaced by every new message, g = (p_r (1 - q_{D-1}))^j.
        let q = crate::workload::zipf(10, 1.0);
        let mut zeta = vec![0.0; 10];
        zeta[9] = 1.0;
        let mut d = Disabling::new(&q, &zeta, 0.7);
        for _ in 0..25 {
            d.arrival();
        }
        let want: f64 = (0..9)
            .map(|i| q[i] * (1.0 - 0.7 * q[i]).powi(25))
            .sum::<f64>()
            + q[9] * (0.7 * (1.0 - q[9])).powi(25);
        assert!((d.enabled_mass() - want).abs() < 1e-13);
    }

    #[test]
    fn split_update_matches_eq_24_with_and_without_threads() {
        // Enough ranks for the two-part update; 300 arrivals span two calls of it.
        let d = 3 * SPLIT_MIN / 2;
        let q = crate::workload::zipf(d, 1.0);
        let zeta = vec![1.0 / d as f64; d];
        let p_r = 0.9;
        let mut threaded = Disabling::new(&q, &zeta, p_r);
        threaded.threads = true;
        let mut serial = Disabling::new(&q, &zeta, p_r);
        serial.threads = false;
        let mut g = vec![1.0f64; d];
        for step in 0..300 {
            let mut next = vec![0.0; d];
            for i in 0..d {
                let up = if i > 0 { g[i - 1] } else { 0.0 };
                next[i] = serial.stay[i] * g[i] + serial.shift[i] * up;
            }
            g = next;
            threaded.arrival();
            serial.arrival();
            let want: f64 = q.iter().zip(&g).map(|(x, gi)| x * gi).sum();
            assert_eq!(
                threaded.enabled_mass(),
                serial.enabled_mass(),
                "step {step}"
            );
            assert!(
                (serial.enabled_mass() - want).abs() < 1e-12,
                "step {step}: {} vs {want}",
                serial.enabled_mass()
            );
        }
    }

    #[test]
    fn the_threaded_sequence_is_the_inline_one() {
        // Enough ranks for the producer thread (when two threads are allowed), and
        // enough arrivals to cross several of its batches.
        let d = SPLIT_MIN + 3 * LANES + 5;
        let q = crate::workload::zipf(d, 1.0);
        let zeta = vec![1.0 / d as f64; d];
        let mut inline = Disabling::new(&q, &zeta, 0.9);
        inline.threads = false;
        let mut want = vec![inline.enabled_mass()];
        for _ in 0..2 * BATCH + 100 {
            inline.arrival();
            want.push(inline.enabled_mass());
        }
        let got: Vec<f64> = std::thread::scope(|scope| {
            let mut seq = EnabledMassSeq::start(scope, &q, &zeta, 0.9);
            (0..want.len()).map(|_| seq.next_mass()).collect()
        });
        assert!(same_bits(&got, &want));
        // Dropping the sequence early stops its producer (the scope would hang
        // otherwise).
        std::thread::scope(|scope| {
            let mut seq = EnabledMassSeq::start(scope, &q, &zeta, 0.9);
            assert_eq!(seq.next_mass().to_bits(), want[0].to_bits());
        });
    }

    #[test]
    fn every_vector_level_gives_the_same_bits() {
        // A chunk length that is not a multiple of 8 exercises the tail.
        let d = 2 * CHUNK + 13;
        let q = crate::workload::zipf(d, 1.0);
        let zeta = vec![1.0 / d as f64; d];
        let runs: Vec<Vec<f64>> = Simd::available()
            .into_iter()
            .map(|level| {
                let mut dis = Disabling::new(&q, &zeta, 0.9);
                dis.simd = level;
                (0..3 * BLOCK)
                    .map(|_| {
                        dis.arrival();
                        dis.enabled_mass()
                    })
                    .collect()
            })
            .collect();
        for other in &runs[1..] {
            assert!(same_bits(other, &runs[0]));
        }
    }

    #[test]
    fn blocked_update_matches_eq_24_step_by_step() {
        // D spans several chunks; 100 arrivals span several blocks.
        let d = 5000;
        let q = crate::workload::zipf(d, 0.8);
        let zeta = vec![1.0 / d as f64; d];
        let p_r = 0.9;
        let mut blocked = Disabling::new(&q, &zeta, p_r);
        let mut h = vec![0.0f64; d];
        let below: Vec<f64> = (0..d).map(|i| i as f64 / d as f64).collect();
        let above: Vec<f64> = (0..d).map(|i| (d - 1 - i) as f64 / d as f64).collect();
        for step in 0..100 {
            let mut next = vec![0.0; d];
            for i in 0..d {
                let (below, above) = (below[i], above[i]);
                let up = if i > 0 { h[i - 1] } else { 0.0 };
                next[i] = p_r * (h[i] + (1.0 - h[i]) * q[i])
                    + (1.0 - p_r) * (zeta[i] + up * below + h[i] * above);
            }
            h = next;
            blocked.arrival();
            let want: f64 = q.iter().zip(&h).map(|(x, hi)| x * (1.0 - hi)).sum();
            assert!(
                (blocked.enabled_mass() - want).abs() < 1e-12,
                "step {step}: {} vs {want}",
                blocked.enabled_mass()
            );
        }
    }
}
