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
//! non-repeat: the corrected eqs. (25)-(26) of docs/MODEL.md use it as
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
    /// Parts the ranks are cut into, each on a thread of its own (1: no threads).
    /// The results do not depend on it.
    parts: usize,
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
/// slower (`rbf-bench fn --suite scale`, 2^16 and 2^17); 256 was slower too.
const CHUNK: usize = 512;
/// Ranks per group: U's partial sums restart at every group and the groups' sums are
/// added in rank order, so a cut between parts at a group boundary changes no bit.
/// Four chunks: the reduction per group and step is 0.4 % of the kernel's work, and
/// parts balance to within one group.
const GROUP: usize = 4 * CHUNK;
/// Live ranks from which the update is split in parts on threads of their own; below
/// that a block costs too little to share.
const SPLIT_MIN: usize = 16_384;
/// Blocks advanced per call when split, at most: part p starts p blocks late, so the
/// pipeline idles about (parts - 1) / 2 blocks per part in SUB_BLOCKS + parts - 1.
/// The first calls advance 1, 2, 4, ... blocks, so that short cycles do not compute
/// many arrivals they never use.
const SUB_BLOCKS: usize = 128;

const UNDERFLOW: f64 = 1e-300;

use super::disabling_step::{self, Coefficients, LANES};
use rbf_data::workload::reuse::{ReuseProfile, ReuseSequence};
use rbf_foundations::simd::{AlignedVec, Simd};

/// Lane sums of U for each arrival of a block.
type BlockLanes = [[f64; LANES]; BLOCK];
/// One group's share of U after each arrival of a block.
type GroupSums = [f64; BLOCK];

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
    /// at step t. Writes each [`GROUP`]'s share of U after each step to `sums` (one
    /// entry per group of the part) and returns its last rank's values at the BLOCK
    /// steps (the edge of the part below).
    fn advance(&mut self, simd: Simd, edge: &[f64; BLOCK], sums: &mut [GroupSums]) -> [f64; BLOCK] {
        let d = self.g.len();
        debug_assert_eq!(sums.len(), d.div_ceil(GROUP));
        let mut boundary = *edge;
        for (k, out) in sums.iter_mut().enumerate() {
            let end = ((k + 1) * GROUP).min(d);
            let mut acc: BlockLanes = [[0.0; LANES]; BLOCK];
            let mut c0 = k * GROUP;
            while c0 < end {
                let c1 = (c0 + CHUNK).min(end);
                let coef = Coefficients {
                    a: &self.stay[c0..c1],
                    b: &self.shift[c0..c1],
                    q: &self.q[c0..c1],
                };
                let g = &mut self.g[c0..c1];
                let mut below = [0.0f64; BLOCK];
                for t in 0..BLOCK {
                    below[t] = g[g.len() - 1];
                    disabling_step::step(simd, coef, g, boundary[t], &mut acc[t]);
                }
                boundary = below;
                c0 = c1;
            }
            for (o, lanes) in out.iter_mut().zip(&acc) {
                *o = group_sum(lanes);
            }
        }
        boundary
    }
}

/// A group's lanes added as a fixed tree (halves added lane by lane: four dependent
/// adds instead of the fifteen of a running sum, once per group and step).
fn group_sum(lanes: &[f64; LANES]) -> f64 {
    let mut v = *lanes;
    let mut n = LANES;
    while n > 1 {
        n /= 2;
        for i in 0..n {
            v[i] += v[i + n];
        }
    }
    v[0]
}

/// `groups` groups cut into `parts` runs of nearly equal length: run p is groups
/// `cuts[p]..cuts[p + 1]` (the work of a group is proportional to its ranks).
fn cut_groups(groups: usize, parts: usize) -> Vec<usize> {
    (0..=parts).map(|p| p * groups / parts).collect()
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
            // Threads only as many as rayon would allow (RAYON_NUM_THREADS=1 turns
            // them off), and none when the caller is itself a rayon worker, such as
            // the experiment runner's parallel points (the cores are taken already).
            parts: if d >= SPLIT_MIN && rayon::current_thread_index().is_none() {
                rayon::current_num_threads().max(1)
            } else {
                1
            },
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

    /// Advances g by [`BLOCK`] arrivals (or up to [`SUB_BLOCKS`] x BLOCK when the ranks
    /// are cut in parts, see below) and stores U after each of them.
    ///
    /// Temporal blocking: g_i(t + 1) = stay_i g_i(t) + shift_i g_{i-1}(t) only looks one
    /// rank up, so ranks are processed in cache-sized chunks, each advanced all BLOCK
    /// steps before the next; the chunk below needs only the last rank's values at the
    /// BLOCK times, kept in `boundary`. The arithmetic per rank and step is that of one
    /// full pass per arrival, but the arrays are streamed from memory once per block
    /// instead of once per arrival.
    ///
    /// U after each step is summed in [`LANES`] lanes per [`GROUP`] of ranks (rank i in
    /// lane i mod LANES, chunks in order), each group's lanes reduced to one number, and
    /// the groups' numbers added in rank order starting from zero. That order does not
    /// depend on how the ranks are shared out, so U is the same to the last bit for any
    /// number of parts or threads.
    ///
    /// Parts: with at least [`SPLIT_MIN`] live ranks and more than one thread allowed,
    /// the live groups are cut into as many runs of nearly equal length as threads, and
    /// each run advances on a thread of its own, one block behind the run above it
    /// (it only needs that run's last rank at each step): a pipeline.
    ///
    /// The kernel starts at the multiple of [`LANES`] at or below `head`: the ranks in
    /// between are 0 and stay 0 (their rank above is 0 too).
    fn advance_block(&mut self) {
        let d = self.g.len();
        let start = self.head / LANES * LANES;
        let live = d - start;
        let groups = live.div_ceil(GROUP).max(1);
        let parts = if live >= SPLIT_MIN {
            self.parts.min(groups)
        } else {
            1
        };
        let sub = if parts > 1 {
            self.calls += 1;
            SUB_BLOCKS.min(1 << self.calls.min(16))
        } else {
            1
        };
        self.ahead.clear();
        self.ahead.resize(sub * BLOCK, 0.0);
        self.ahead_pos = 0;
        let simd = self.simd;
        let cuts = cut_groups(groups, parts);
        // Per part: its groups' sums, block after block.
        let mut sums: Vec<Vec<GroupSums>> = (0..parts)
            .map(|p| vec![[0.0; BLOCK]; sub * (cuts[p + 1] - cuts[p])])
            .collect();
        let mut g_rest = &mut self.g[start..];
        let mut pieces = Vec::with_capacity(parts);
        for p in 0..parts {
            let (r0, r1) = (cuts[p] * GROUP, (cuts[p + 1] * GROUP).min(live));
            let (g, rest) = g_rest.split_at_mut(r1 - r0);
            g_rest = rest;
            let (r0, r1) = (start + r0, start + r1);
            pieces.push(Part {
                stay: &self.stay[r0..r1],
                shift: &self.shift[r0..r1],
                q: &self.q_pad[r0..r1],
                g,
            });
        }
        if parts == 1 {
            pieces[0].advance(simd, &[0.0; BLOCK], &mut sums[0]);
        } else {
            std::thread::scope(|s| {
                let mut from_above: Option<std::sync::mpsc::Receiver<[f64; BLOCK]>> = None;
                for (p, (mut piece, mine)) in pieces.into_iter().zip(sums.iter_mut()).enumerate() {
                    let (tx, rx) = std::sync::mpsc::channel::<[f64; BLOCK]>();
                    let above = from_above.replace(rx);
                    let own = cuts[p + 1] - cuts[p];
                    let last = p + 1 == parts;
                    s.spawn(move || {
                        for block in mine.chunks_mut(own) {
                            let edge = match &above {
                                None => [0.0; BLOCK],
                                // The sender only stops early if the part above
                                // panicked, which the scope then reports.
                                Some(rx) => match rx.recv() {
                                    Ok(edge) => edge,
                                    Err(_) => return,
                                },
                            };
                            let below = piece.advance(simd, &edge, block);
                            if !last && tx.send(below).is_err() {
                                return;
                            }
                        }
                    });
                }
            });
        }
        for (b, out) in self.ahead.chunks_mut(BLOCK).enumerate() {
            for (t, u) in out.iter_mut().enumerate() {
                let mut acc = 0.0;
                for (p, part) in sums.iter().enumerate() {
                    let own = cuts[p + 1] - cuts[p];
                    for group in &part[b * own..(b + 1) * own] {
                        acc += group[t];
                    }
                }
                *u = acc;
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
        let u = self.u;
        let Some((wr, wn)) = distinct_weights(self.p_r, u) else {
            return;
        };
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
/// [`rbf_data::workload::reuse`]).
///
/// With at least [`SPLIT_MIN`] ranks and more than one thread allowed (the same rule
/// as the split into parts), the sequence is computed on threads of its own, ahead of the
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
        let source = if dis.parts > 1 {
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

/// The weights of a distinct arrival's two branches, conditioned on the arrival being
/// distinct to the cycle: a repeat draw of a rank still disabled, p_r U / (1 - p_r + p_r U),
/// and a new message, (1 - p_r) / (1 - p_r + p_r U). None when no arrival can be distinct
/// (p_r = 1 and U = 0).
pub(crate) fn distinct_weights(p_r: f64, u: f64) -> Option<(f64, f64)> {
    let exit = (1.0 - p_r) + p_r * u;
    (exit > 0.0).then(|| (p_r * u / exit, (1.0 - p_r) / exit))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rbf_foundations::simd::same_bits;

    #[test]
    fn repeats_only_is_geometric() {
        let q = rbf_data::workload::zipf(20, 1.0);
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
        let q = rbf_data::workload::zipf(10, 1.0);
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
    fn any_number_of_parts_gives_the_same_bits_and_eq_24() {
        // Enough ranks for several groups per part; the head of Q dies within the
        // arrivals followed, so the live range (and the cuts) move; 700 arrivals span
        // several calls of growing length.
        let d = 3 * SPLIT_MIN + 5 * LANES + 3;
        let q = rbf_data::workload::zipf(d, 1.3);
        let zeta = vec![1.0 / d as f64; d];
        let p_r = 0.9;
        let run = |parts: usize| {
            let mut dis = Disabling::new(&q, &zeta, p_r);
            dis.parts = parts;
            (0..700)
                .map(|_| {
                    dis.arrival();
                    dis.enabled_mass()
                })
                .collect::<Vec<f64>>()
        };
        let one = run(1);
        for parts in [2, 3, 4, 7] {
            assert!(same_bits(&run(parts), &one), "{parts} parts");
        }
        let serial = Disabling::new(&q, &zeta, p_r);
        let mut g = vec![1.0f64; d];
        for (step, &u) in one.iter().enumerate() {
            let mut next = vec![0.0; d];
            for i in 0..d {
                let up = if i > 0 { g[i - 1] } else { 0.0 };
                next[i] = serial.stay[i] * g[i] + serial.shift[i] * up;
            }
            g = next;
            let want: f64 = q.iter().zip(&g).map(|(x, gi)| x * gi).sum();
            assert!((u - want).abs() < 1e-12, "step {step}: {u} vs {want}");
        }
    }

    #[test]
    fn cuts_cover_the_groups_evenly() {
        for (groups, parts) in [(1, 1), (10, 3), (49, 2), (7, 7), (100, 16)] {
            let c = cut_groups(groups, parts);
            assert_eq!((c[0], c[parts]), (0, groups));
            let sizes: Vec<usize> = c.windows(2).map(|w| w[1] - w[0]).collect();
            let (lo, hi) = (sizes.iter().min(), sizes.iter().max());
            assert!(hi.zip(lo).is_some_and(|(h, l)| h - l <= 1), "{sizes:?}");
        }
    }

    #[test]
    fn the_threaded_sequence_is_the_inline_one() {
        // Enough ranks for the producer thread (when two threads are allowed), and
        // enough arrivals to cross several of its batches.
        let d = SPLIT_MIN + 3 * LANES + 5;
        let q = rbf_data::workload::zipf(d, 1.0);
        let zeta = vec![1.0 / d as f64; d];
        let mut inline = Disabling::new(&q, &zeta, 0.9);
        inline.parts = 1;
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
        let q = rbf_data::workload::zipf(d, 1.0);
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
        let q = rbf_data::workload::zipf(d, 0.8);
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
