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
    /// Coefficients of the renewal step: g_i <- stay_i g_i + shift_i g_{i-1}.
    stay: Vec<f64>,
    shift: Vec<f64>,
    g: Vec<f64>,
    /// Chunk buffers of the blocked update (rank c0 - 1 at index 0), and those of the
    /// lower part when the ranks are split.
    cur: Vec<f64>,
    nxt: Vec<f64>,
    cur_low: Vec<f64>,
    nxt_low: Vec<f64>,
    /// Run the two parts on two threads (same results either way).
    threads: bool,
    /// Vector level of the kernels (same results at every level).
    simd: Simd,
    /// U after each of the arrivals computed ahead, and how many were consumed.
    ahead: Vec<f64>,
    ahead_pos: usize,
    head: usize,
    u: f64,
}

/// Arrivals advanced per pass over the ranks.
const BLOCK: usize = 32;
/// Ranks per chunk: the five arrays of a chunk (a, b, q and two g buffers, 20 KB) stay
/// in a core's 32 KB L1 cache for the BLOCK steps. With 2048 ranks (80 KB, L2) the
/// kernel was 20-25 % slower (`rbf bench fn --suite scale`, 2^16 and 2^17).
const CHUNK: usize = 512;
/// Live ranks from which the update is split in two parts (two threads when there are
/// two cores); below that a block costs too little to share.
const SPLIT_MIN: usize = 16_384;
/// Blocks advanced per call when split: the lower part starts one block late, so the
/// pipeline idles one block in SUB_BLOCKS + 1.
const SUB_BLOCKS: usize = 8;

const UNDERFLOW: f64 = 1e-300;

use super::simd::Simd;

/// The per-rank coefficients of one chunk: g_i <- a_i g_i + b_i g_{i-1}, weights q_i.
#[derive(Clone, Copy)]
struct Coefficients<'c> {
    a: &'c [f64],
    b: &'c [f64],
    q: &'c [f64],
}

/// Advances one chunk of ranks by [`BLOCK`] arrivals (see [`Disabling::advance_block`]).
/// `cur` holds the chunk's g with the rank above the chunk at index 0 and is left with
/// the values after the block; `boundary[t]` is that rank's value at step t, `below[t]`
/// receives the chunk's last rank at step t, and `ahead[t]` gets the chunk's share of U
/// after step t + 1.
///
/// One pass per step both updates the ranks and sums q_i g_i, eight partial sums as
/// in [`dot`] (same order, so the same bits as updating first and then calling
/// [`dot`]); a second pass over the chunk only to sum cost a third of the time.
fn chunk_block(
    simd: Simd,
    c: Coefficients,
    (cur, nxt): (&mut [f64], &mut [f64]),
    boundary: &[f64; BLOCK],
    below: &mut [f64; BLOCK],
    ahead: &mut [f64],
) {
    let w = c.a.len();
    let (mut cur, mut nxt) = (cur, nxt);
    for t in 0..BLOCK {
        cur[0] = boundary[t];
        below[t] = cur[w];
        let (n1, gc, gp) = (&mut nxt[1..=w], &cur[1..=w], &cur[..w]);
        ahead[t] += step_and_sum(c, n1, gc, gp, simd);
        std::mem::swap(&mut cur, &mut nxt);
    }
    // BLOCK is even, so after the swaps the latest values are back in the caller's
    // `cur`.
    const _: () = assert!(BLOCK.is_multiple_of(2));
}

/// n_i = a_i gc_i + b_i gp_i for every rank of the chunk; returns sum_i q_i n_i,
/// with lane l of eight partial sums taking the ranks i = l mod 8 and the ranks past
/// the last multiple of eight summed apart (the order of [`super::simd::dot`]).
///
/// The x86_64 copies below do the same operations in the same order with AVX2 or
/// AVX-512 registers (the compiler's own vectoriser left the fused loop scalar), so
/// every level gives the same bits.
#[inline(always)]
fn step_and_sum(c: Coefficients, n: &mut [f64], gc: &[f64], gp: &[f64], simd: Simd) -> f64 {
    let w = n.len();
    let (a, b, q, gc, gp) = (&c.a[..w], &c.b[..w], &c.q[..w], &gc[..w], &gp[..w]);
    let split = w / 8 * 8;
    let mut acc = [0.0f64; 8];
    let body = &mut n[..split];
    #[cfg(target_arch = "x86_64")]
    match simd {
        // SAFETY: `simd` comes from `Simd::detect`, so the CPU has the instructions,
        // and every slice is at least `body.len()` long.
        Simd::Avx512 => unsafe { lanes_avx512([a, b, q, gc, gp], body, &mut acc) },
        Simd::Avx2 => unsafe { lanes_avx2([a, b, q, gc, gp], body, &mut acc) },
        Simd::Base => lanes([a, b, q, gc, gp], body, &mut acc),
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = simd;
        lanes([a, b, q, gc, gp], body, &mut acc);
    }
    let mut tail = 0.0;
    for i in split..w {
        let v = a[i] * gc[i] + b[i] * gp[i];
        n[i] = v;
        tail += q[i] * v;
    }
    acc.iter().sum::<f64>() + tail
}

/// The ranks 0..n.len() (a multiple of 8) of [`step_and_sum`], portably; `x` holds
/// a, b, q, gc and gp.
#[inline(always)]
fn lanes(x: [&[f64]; 5], n: &mut [f64], acc: &mut [f64; 8]) {
    let [a, b, q, gc, gp] = x;
    for i in (0..n.len()).step_by(8) {
        for l in 0..8 {
            let v = a[i + l] * gc[i + l] + b[i + l] * gp[i + l];
            n[i + l] = v;
            acc[l] += q[i + l] * v;
        }
    }
}

/// [`lanes`] with AVX-512: one register holds the eight partial sums.
///
/// # Safety
/// The CPU must support AVX-512F, and every slice of `x` must be at least `n.len()`
/// long.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn lanes_avx512(x: [&[f64]; 5], n: &mut [f64], acc: &mut [f64; 8]) {
    use std::arch::x86_64::*;
    let [a, b, q, gc, gp] = x.map(|s| s.as_ptr());
    let out = n.as_mut_ptr();
    let mut s = _mm512_loadu_pd(acc.as_ptr());
    for i in (0..n.len()).step_by(8) {
        let v = _mm512_add_pd(
            _mm512_mul_pd(_mm512_loadu_pd(a.add(i)), _mm512_loadu_pd(gc.add(i))),
            _mm512_mul_pd(_mm512_loadu_pd(b.add(i)), _mm512_loadu_pd(gp.add(i))),
        );
        _mm512_storeu_pd(out.add(i), v);
        s = _mm512_add_pd(s, _mm512_mul_pd(_mm512_loadu_pd(q.add(i)), v));
    }
    _mm512_storeu_pd(acc.as_mut_ptr(), s);
}

/// [`lanes`] with AVX2: two registers hold partial sums 0-3 and 4-7.
///
/// # Safety
/// The CPU must support AVX2, and every slice of `x` must be at least `n.len()` long.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn lanes_avx2(x: [&[f64]; 5], n: &mut [f64], acc: &mut [f64; 8]) {
    use std::arch::x86_64::*;
    let [a, b, q, gc, gp] = x.map(|s| s.as_ptr());
    let out = n.as_mut_ptr();
    let mut lo = _mm256_loadu_pd(acc.as_ptr());
    let mut hi = _mm256_loadu_pd(acc.as_ptr().add(4));
    for i in (0..n.len()).step_by(8) {
        for (j, s) in [(i, &mut lo), (i + 4, &mut hi)] {
            let v = _mm256_add_pd(
                _mm256_mul_pd(_mm256_loadu_pd(a.add(j)), _mm256_loadu_pd(gc.add(j))),
                _mm256_mul_pd(_mm256_loadu_pd(b.add(j)), _mm256_loadu_pd(gp.add(j))),
            );
            _mm256_storeu_pd(out.add(j), v);
            *s = _mm256_add_pd(*s, _mm256_mul_pd(_mm256_loadu_pd(q.add(j)), v));
        }
    }
    _mm256_storeu_pd(acc.as_mut_ptr(), lo);
    _mm256_storeu_pd(acc.as_mut_ptr().add(4), hi);
}

/// A run of consecutive ranks advanced together, with its chunk buffers.
struct Part<'p> {
    stay: &'p [f64],
    shift: &'p [f64],
    q: &'p [f64],
    g: &'p mut [f64],
    cur: &'p mut [f64],
    nxt: &'p mut [f64],
}

impl Part<'_> {
    /// Advances the part by [`BLOCK`] arrivals chunk by chunk (see
    /// [`Disabling::advance_block`]); `edge[t]` is the value of the rank above the part
    /// at step t. Adds the part's share of U after each step to `acc` and returns its
    /// last rank's values at the BLOCK steps (the edge of the part below).
    fn advance(&mut self, simd: Simd, edge: &[f64; BLOCK], acc: &mut [f64]) -> [f64; BLOCK] {
        let d = self.g.len();
        let mut boundary = *edge;
        let mut c0 = 0;
        while c0 < d {
            let c1 = (c0 + CHUNK).min(d);
            let w = c1 - c0;
            let coef = Coefficients {
                a: &self.stay[c0..c1],
                b: &self.shift[c0..c1],
                q: &self.q[c0..c1],
            };
            self.cur[1..=w].copy_from_slice(&self.g[c0..c1]);
            let mut below = [0.0f64; BLOCK];
            let bufs = (&mut self.cur[..=w], &mut self.nxt[..=w]);
            chunk_block(simd, coef, bufs, &boundary, &mut below, acc);
            self.g[c0..c1].copy_from_slice(&self.cur[1..=w]);
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
        let stay = (0..d)
            .map(|i| p_r * (1.0 - q[i]) + pn * z_above[i])
            .collect();
        let shift = (0..d).map(|i| pn * z_below[i]).collect();
        let u = q.iter().rev().sum();
        Disabling {
            q,
            p_r,
            z_below,
            z_above,
            stay,
            shift,
            g: vec![1.0; d],
            cur: vec![0.0; CHUNK + 1],
            nxt: vec![0.0; CHUNK + 1],
            cur_low: vec![0.0; CHUNK + 1],
            nxt_low: vec![0.0; CHUNK + 1],
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
    /// BLOCK times, kept in `boundary`. The arithmetic per rank and step is the same as
    /// one full pass per arrival (only the order of the U partial sums differs), but the
    /// arrays are streamed from memory once per block instead of once per arrival.
    ///
    /// Two parts: with at least [`SPLIT_MIN`] live ranks, the ranks are cut in two
    /// halves and the upper half runs one BLOCK ahead of the lower one, which only needs
    /// the upper half's last rank at each step. With two cores the halves run on two
    /// threads (a pipeline). The U partial sums of each half are kept apart and added
    /// the same way whether or not a second thread ran, so the result does not depend on
    /// the machine.
    fn advance_block(&mut self) {
        let d = self.g.len();
        let live = d - self.head;
        let sub = if live >= SPLIT_MIN { SUB_BLOCKS } else { 1 };
        self.ahead.clear();
        self.ahead.resize(sub * BLOCK, 0.0);
        self.ahead_pos = 0;
        let simd = self.simd;
        let head = self.head;
        if sub == 1 {
            let mut part = Part {
                stay: &self.stay[head..],
                shift: &self.shift[head..],
                q: &self.q[head..],
                g: &mut self.g[head..],
                cur: &mut self.cur,
                nxt: &mut self.nxt,
            };
            part.advance(simd, &[0.0; BLOCK], &mut self.ahead);
        } else {
            // Cut at a chunk boundary near the middle of the live ranks.
            let mid = (head + (live / 2).div_ceil(CHUNK) * CHUNK).min(d);
            let (g_top, g_bottom) = self.g.split_at_mut(mid);
            let mut top = Part {
                stay: &self.stay[head..mid],
                shift: &self.shift[head..mid],
                q: &self.q[head..mid],
                g: &mut g_top[head..],
                cur: &mut self.cur,
                nxt: &mut self.nxt,
            };
            let mut bottom = Part {
                stay: &self.stay[mid..],
                shift: &self.shift[mid..],
                q: &self.q[mid..],
                g: g_bottom,
                cur: &mut self.cur_low,
                nxt: &mut self.nxt_low,
            };
            let mut sum_top = vec![0.0; sub * BLOCK];
            let mut sum_bottom = vec![0.0; sub * BLOCK];
            if self.threads {
                std::thread::scope(|s| {
                    let (tx, rx) = std::sync::mpsc::channel::<[f64; BLOCK]>();
                    let sums = &mut sum_bottom;
                    s.spawn(move || {
                        for acc in sums.chunks_exact_mut(BLOCK) {
                            // The sender only stops early if the upper half panicked,
                            // which the scope then reports.
                            let Ok(edge) = rx.recv() else { return };
                            bottom.advance(simd, &edge, acc);
                        }
                    });
                    for acc in sum_top.chunks_exact_mut(BLOCK) {
                        let edge = top.advance(simd, &[0.0; BLOCK], acc);
                        if tx.send(edge).is_err() {
                            break;
                        }
                    }
                });
            } else {
                for (a, b) in sum_top
                    .chunks_exact_mut(BLOCK)
                    .zip(sum_bottom.chunks_exact_mut(BLOCK))
                {
                    let edge = top.advance(simd, &[0.0; BLOCK], a);
                    bottom.advance(simd, &edge, b);
                }
            }
            for ((u, a), b) in self.ahead.iter_mut().zip(&sum_top).zip(&sum_bottom) {
                *u = a + b;
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
        while self.head < self.g.len() && self.g[self.head] < UNDERFLOW {
            self.g[self.head] = 0.0;
            self.head += 1;
        }
    }
}

#[cfg(test)]
mod tests {
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
            assert!(other
                .iter()
                .zip(&runs[0])
                .all(|(a, b)| a.to_bits() == b.to_bits()));
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
