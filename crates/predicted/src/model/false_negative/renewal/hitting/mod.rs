//! The renewal bound's hitting-time engine: the certified tolerance mode (`--tolerance
//! T`) for sigma-bounded filters (one phase, or two with copy-over: [`two_phase`])
//! with colliding hashes and U from a measured reuse profile, in time about linear in M instead of M^1.5-M^2
//! (docs/RENEWAL-TOLERANCE.md, section 6, gives the argument).
//!
//! The exact engine follows the bit-count law at every insertion and the
//! insertion-count law at every arrival, on windows of a few standard deviations. This
//! one uses instead:
//! 1. *The bit side in closed form.* With colliding hashes the bit count passes c
//!    after a sum of independent geometric numbers of balls, whose law is one inverse
//!    FFT of a generating function known in closed form ([`law`]); alive, alive_cap and
//!    sets_cap at every insertion count follow as proven intervals ([`fields`]).
//! 2. *The arrival side in blocks.* U is bracketed by step sequences, constant over
//!    blocks of arrivals ([`blocks`]); by the monotonicity in U (section 1) the run
//!    with the upper steps bounds the exact engine's value from above and the run with
//!    the lower steps from below. Within a block the insertion count gains a binomial
//!    number of insertions: in closed form while the cycle is surely far from its end,
//!    on a window near it ([`side`]).
//! 3. *The stop and the rounding* as in the bracket mode (sections 2 and 4), with a
//!    margin for the exact engine's own rounding of its recursions, which this engine
//!    does not share.
//!
//! The result is V with exact <= V and V / V- - 1 <= T proven, V- <= exact.
//!
//! p_r known only to lie in an interval ([`Draws`]) runs the same way: the exact engine
//! then sets bits with chance eta_low(U) and draws a non-repeat with chance
//! eta_low(U) rho_high(U), both non-decreasing in U, which is all the bracket uses
//! (section 6.6).

pub mod binomial;
pub mod blocks;
pub mod fields;
pub mod law;
pub mod qtable;
pub mod side;
pub mod two_phase;

use super::correlate;
use super::cycle::Draws;
use super::input::{certified_tolerance, RenewalInput, RenewalMode, RenewalOptions, RenewalResult};
use blocks::{Blocks, ProfileU};
use fields::BitFields;
use rbf_data::filter::Hashing;
use rbf_foundations::error::Result;
use side::Side;
use two_phase::{BlockEnd, Record, Weights};

const UNIT: f64 = f64::EPSILON / 2.0;
/// Tails the hitting-time laws leave outside their windows (below the exact
/// engine's `tiny`, so that its truncation point lies inside them).
const LAW_TAIL: f64 = 1e-32;
/// Slack of the exhausted-cycle test, as in the bracket mode.
const TEST_SLACK: f64 = 1e-6;

const NOT_COVERED: &str = "the hitting-time engine covers sigma-bounded filters (one phase, or two with copy-over) with colliding hashes and U from a reuse profile; the exact engine ran";
const REPEATS_ONLY: &str = "p_r (or the bottom of its interval) is 1, or within 1e-5 of it: cycles may end by exhausting Q, which the hitting-time engine does not follow; the exact engine ran";
const LONG: &str = "cycles last longer than the arrivals the exact engine follows (max_arrivals); the exact engine ran";

/// The certified result, or why this engine does not apply.
pub fn bracket(
    input: &RenewalInput,
    opt: RenewalOptions,
) -> Result<std::result::Result<RenewalResult, &'static str>> {
    if input.reuse.is_none() && input.p_r_interval.is_some() {
        return Ok(Err(NOT_COVERED));
    }
    if input.phases > 2
        || input.max_inserts.is_some()
        || input.t.hashing != Hashing::Colliding
        || opt.direct
    {
        return Ok(Err(NOT_COVERED));
    }
    let draws = input.draws();
    if !(draws.high > 0.0 && draws.low < 1.0 - 1e-5) {
        return Ok(Err(REPEATS_ONLY));
    }
    // U first: a Q whose ranks shift is refused before the fields are built.
    // The exact engine holds U once the non-repeat chance is below 1e-9 of a ratio at
    // most 1, and that chance is at least p_r U (high U for an interval).
    let held = 1e-9 / draws.high * (1.0 + TEST_SLACK);
    let u = match input.reuse {
        Some(profile) => ProfileU::new(profile, held),
        None => match q_table(input, opt) {
            Some(table) => ProfileU::from_table(table, held),
            None => return Ok(Err(super::certified::SHIFTS)),
        },
    };
    let (m, k) = (input.t.m, input.t.k);
    let shared = input
        .hitting_fields
        .filter(|f| f.built_for(m, k, input.sigma, input.retaining, LAW_TAIL));
    let built;
    let fields = match shared {
        Some(f) => f,
        None => match BitFields::new(m, k, input.sigma, input.retaining, LAW_TAIL) {
            Ok(f) => {
                built = f;
                &built
            }
            Err(why) => return Ok(Err(why)),
        },
    };
    let engine = Engine {
        u,
        fields,
        draws,
        k: f64::from(k),
        opt,
        // The frozen half's E[tau(l, l)] at its last bit count, taken at sigma + 1 (the
        // exact engine averages over the counts sigma + 1 ..= sigma + k at which cycles
        // end: a relative difference of about k^2 / sigma). It feeds the FP rate only.
        frozen_lucky: (input.phases == 2).then(|| input.t.all_set(input.sigma + 1)),
    };
    Ok(match engine.follow()? {
        Ok(f) => Ok(engine.result(&f)),
        Err(why) => Err(why),
    })
}

/// U from Q where no rank shifts ([`qtable`]), or None where ranks shift. The margin
/// is the exact engine's rounding of U as the certified mode bounds it (its
/// recursion's coefficient and one fused multiply-add per rank and arrival, the lane
/// sums over the ranks), over every arrival it may follow (twice as many for two
/// phases, whose numerator reads U past the cycle's end).
fn q_table(input: &RenewalInput, opt: RenewalOptions) -> Option<qtable::Table> {
    let kill = super::certified::no_shift_kills(input)?;
    let last = opt.max_arrivals.saturating_mul(u64::from(input.phases));
    let margin = 4.0 * UNIT * last as f64 + (input.q.len() as f64 / 16.0 + 64.0) * UNIT;
    Some(qtable::Table::new(&kill, input.q, last, margin))
}

/// The fields of `input`'s filter (which depend on nothing else), to be shared by
/// computations on it through [`RenewalInput::hitting_fields`]; None where they cannot
/// be built (the engine then says why on each computation).
pub fn shared_fields(input: &RenewalInput) -> Option<BitFields> {
    BitFields::new(input.t.m, input.t.k, input.sigma, input.retaining, LAW_TAIL).ok()
}

/// Pieces of a block: (arrivals, weight: the non-repeat chance p_r U) each.
type Pieces = Vec<(u64, f64)>;

/// What one run needs.
struct Engine<'a> {
    u: ProfileU<'a>,
    fields: &'a BitFields,
    draws: Draws,
    k: f64,
    opt: RenewalOptions,
    /// Two phases: the frozen half's lucky-hit chance (None: one phase).
    frozen_lucky: Option<f64>,
}

/// A cycle followed: both sides' sums, where the exact engine may stop, and the
/// sides' own rounding.
struct Followed {
    sums: Sums,
    /// The eta+ side's lower A and lower C over the arrivals before the exact engine
    /// can stop.
    a_plus_lo: f64,
    c_plus_lo: f64,
    /// The arrival by which it has surely stopped, when certified.
    m_certified: Option<u64>,
    end: u64,
    truncated: f64,
    blocks: u64,
    widest: usize,
    /// Two phases: the blocks and pieces, with the block before which the exact engine
    /// cannot have stopped.
    two: Option<(Record, usize)>,
}

impl Engine<'_> {
    /// Relative bound of the exact engine's rounding of its sums over a cycle of
    /// `arrivals` (section 6.5 of docs/RENEWAL-TOLERANCE.md).
    fn gamma(&self, arrivals: f64) -> f64 {
        let per_insertion = self.k * self.k + 2.0 * self.k + 8.0;
        ((self.fields.n_last() as f64 + 2.0) * per_insertion + 6.0 * arrivals + 64.0) * UNIT
    }

    /// eta on either side of the exact engine's rounded one.
    fn eta(&self, u: f64, up: bool) -> f64 {
        let low = self.draws.low;
        let e = (1.0 - low) + low * u;
        if up {
            (e * (1.0 + 4.0 * UNIT)).min(1.0)
        } else {
            e * (1.0 - 4.0 * UNIT)
        }
    }

    /// The non-repeat chance on either side of the exact engine's rounded one: p_r U
    /// at a point (the margin of U covers its one rounding), and over an interval
    /// [`Draws::non_repeat`], whose at most a dozen roundings the factor covers.
    fn weight(&self, u: f64, up: bool) -> f64 {
        let w = self.draws.non_repeat(u);
        match (self.draws.low == self.draws.high, up) {
            (true, _) => w,
            (false, true) => w * (1.0 + 32.0 * UNIT),
            (false, false) => w * (1.0 - 32.0 * UNIT),
        }
    }

    /// The blocks of the cycle: the two sides' insertion counts drift apart by the
    /// blocks' widths in insertions, a budget spent half far from the end of the cycle
    /// (many cheap blocks) and half near it (few blocks, each two convolutions).
    /// Returns them with the budget near the end and the insertion count from which
    /// it applies.
    fn blocks(&self, tolerance: f64) -> (Blocks<'_>, f64, f64) {
        let (n_cross, sd_t) = self.fields.crossing();
        let cap = 2.0 * sd_t.max(1.0);
        let target = tolerance * n_cross / 10.0;
        let n_first = self.fields.n_first() as f64;
        let beta = calibrate(&self.u, self.draws.low, cap, n_first, target / 2.0);
        let near_blocks =
            ((self.fields.n_last() as f64 - n_first) + 24.0 * n_first.sqrt()) / cap + 8.0;
        let near_from = n_first - 2.0 * cap;
        (
            Blocks::new(&self.u, self.draws.low, beta, cap),
            target / 2.0 / near_blocks,
            near_from,
        )
    }

    /// What the cycle may still add after the blocks followed on `side`, in arrivals
    /// that see alive_cap > 0: with N <= n_last, at most n_last + 1 more insertions,
    /// each arrival inserting with probability at least 1 - p_r (the interval's
    /// bottom); beyond n_last
    /// alive_cap is below the hitting law's tail at every arrival the exact engine may
    /// follow.
    fn tail_arrivals(&self, side: &Side) -> f64 {
        let n_last = self.fields.n_last();
        side.at_most(n_last) * (n_last as f64 + 1.0) / (1.0 - self.draws.low)
            + self.opt.max_arrivals as f64 * self.fields.cap_tail()
    }

    /// Both sides block by block until the eta- side's sums are complete.
    fn follow(&self) -> Result<std::result::Result<Followed, &'static str>> {
        let opt = self.opt;
        let tolerance = opt.tolerance.unwrap_or(1e-3);
        // The weights p_r U of the numerator are bracketed piece by piece, U falling by
        // at most `delta` of its value over a piece.
        let delta = tolerance / 20.0;
        let (mut blocks, beta_near, near_from) = self.blocks(tolerance);
        // The side with more insertions and the lower weights, and the side with fewer
        // insertions and the upper weights.
        let (mut plus, mut minus) = (Side::new(self.fields), Side::new(self.fields));
        let gamma_max = self.gamma(opt.max_arrivals as f64);
        let (thr_lo, thr_hi) = (opt.eps * (1.0 + gamma_max), opt.eps * (1.0 - gamma_max));
        let mut sums = Sums::default();
        let (mut stop_lo, mut m_certified) = (None, None);
        let mut cap_minus_start = 1.0;
        let (mut mean_plus, mut var_plus, mut near) = (0.0, 0.0, false);
        let mut count = 0u64;
        // Two phases: the sides run with unit weights and every piece's part is kept.
        let mut record = self.frozen_lucky.map(|_| Record::default());
        let (mut each_plus, mut each_minus) = (Vec::new(), Vec::new());
        let mut stop_block = 0usize;
        loop {
            let b = blocks.next_block();
            count += 1;
            let (eta_plus, eta_minus) = (self.eta(b.up, true), self.eta(b.low, false));
            mean_plus += b.len as f64 * eta_plus;
            var_plus += b.len as f64 * eta_plus * (1.0 - eta_plus);
            if !near && mean_plus + side::reach(var_plus) >= near_from {
                blocks.set_beta(beta_near);
                // Near the end a block's weight is bracketed whole; the arrivals there
                // carry a small share of the numerator, so a coarser bracket costs little.
                blocks.set_relative(tolerance / 4.0);
                near = true;
            }
            let flat = plus.is_flat() || minus.is_flat();
            let (lower, upper, w_lo, w_hi) = match record {
                None => {
                    let (lower, upper) = self.weights(&blocks, &b, flat, delta);
                    (
                        lower,
                        upper,
                        self.weight(b.low, false),
                        self.weight(b.up, true),
                    )
                }
                Some(_) => {
                    let n0 = self.fields.n_first() as f64;
                    let pieces = if flat {
                        two_phase::pieces(b.start, b.len, n0, tolerance)
                    } else {
                        vec![(b.len, 1.0)]
                    };
                    (pieces.clone(), pieces, 1.0, 1.0)
                }
            };
            if count.is_multiple_of(64) {
                rbf_foundations::progress::check_interrupt()?;
            }
            let keep = record.is_some();
            each_plus.clear();
            each_minus.clear();
            let (op, om) = rayon::join(
                || plus.block(&lower, w_lo, eta_plus, keep.then_some(&mut each_plus)),
                || minus.block(&upper, w_hi, eta_minus, keep.then_some(&mut each_minus)),
            );
            let index = (count - 1) as usize;
            if let Some(r) = record.as_mut() {
                Record::pieces(&mut r.plus, index, b.start, &lower, &each_plus, true);
                Record::pieces(&mut r.minus, index, b.start, &upper, &each_minus, false);
                r.blocks.push(BlockEnd {
                    start: b.start,
                    len: b.len,
                    plus_lo: op.alive_next.lo,
                    minus_hi: om.alive_next.hi,
                });
            }
            // The exact engine cannot stop before the first block after which the side
            // with more insertions surely holds less than eps ...
            if stop_lo.is_none() && op.cap_next.lo < thr_lo {
                stop_lo = Some((sums.a_plus_lo, sums.c_plus_lo));
                stop_block = index;
            }
            sums.add(&op, &om);
            // ... and has stopped by the first arrival of a block at which the side
            // with fewer insertions surely holds less than eps, if its error allows that
            // to be certified (else the window term takes every arrival it may follow).
            if m_certified.is_none() && cap_minus_start < thr_hi {
                m_certified = Some(b.start);
            }
            cap_minus_start = om.cap_next.hi;
            if b.start + b.len >= opt.max_arrivals {
                return Ok(Err(LONG));
            }
            // The upper sums run to the end of the cycle: what is left is bounded.
            let tm = self.tail_arrivals(&minus);
            if let Some((a_plus_lo, c_plus_lo)) = stop_lo.filter(|_| tm <= 1e-8 * sums.a_minus_hi) {
                sums.c_minus_hi += w_hi * tm;
                sums.a_minus_hi += tm;
                if let Some(r) = record.as_mut() {
                    // The rest of the cycle, weighed as at its first arrival.
                    r.minus.push(two_phase::PieceSum {
                        start: b.start + b.len,
                        len: 1,
                        c: tm,
                        block: r.blocks.len(),
                    });
                }
                return Ok(Ok(Followed {
                    sums,
                    a_plus_lo,
                    c_plus_lo,
                    m_certified,
                    end: b.start + b.len,
                    truncated: om.cap_next.hi,
                    blocks: count,
                    widest: plus.widest.max(minus.widest),
                    two: record.map(|r| (r, stop_block)),
                }));
            }
        }
    }

    /// The pieces of block `b` with the lower and the upper weights (pieces of
    /// falling U while a side is followed in closed form, else the block whole).
    fn weights(
        &self,
        blocks: &Blocks,
        b: &blocks::Block,
        flat: bool,
        delta: f64,
    ) -> (Pieces, Pieces) {
        let pieces = if flat {
            blocks.pieces(b.start, b.len, delta)
        } else {
            vec![(b.start, b.len)]
        };
        (
            pieces
                .iter()
                .map(|&(a, l)| (l, self.weight(self.u.lower(a + l - 1), false)))
                .collect(),
            pieces
                .iter()
                .map(|&(a, l)| (l, self.weight(self.u.upper(a), true)))
                .collect(),
        )
    }

    /// V+ and V- (section 6.4), with the exact engine's window term and both engines'
    /// rounding.
    fn result(&self, f: &Followed) -> RenewalResult {
        let opt = self.opt;
        let m_hi = f.m_certified.unwrap_or(opt.max_arrivals) as f64;
        // The exact engine's windows: its per-insertion recursion drops at most one cell
        // below `tiny` for each cell it ever creates (k per insertion), its last count's
        // mass is below `tiny`, and its insertion-count window drops at most 2 tiny per
        // arrival (docs/RENEWAL-TOLERANCE.md, section 4).
        let n_end = self.fields.n_last() as f64 + 1.0;
        let dropped =
            opt.tiny * ((self.k + 1.0) * (n_end + 1.0) + 1.0) + 2.0 * (m_hi + 1.0) * opt.tiny;
        let window = dropped * (2.0 * m_hi + 1.0);
        let own = (f.blocks as f64 * 16.0 + f.widest as f64 + 256.0) * 4.0 * UNIT;
        let g = self.gamma(m_hi);
        let (c_hi, c_lo, lucky) = match (&f.two, self.frozen_lucky) {
            (Some((record, stop)), Some(frozen)) => {
                let (c_hi, c_lo) = self.two_phase_sums(record, *stop, f, m_hi);
                let lucky = f.sums.lucky_plus * (1.0 - frozen) + f.sums.a_plus_hi * frozen;
                (c_hi, c_lo, lucky)
            }
            _ => (f.sums.c_minus_hi, f.c_plus_lo, f.sums.lucky_plus),
        };
        let ratio = c_hi / f.a_plus_lo;
        let window_term = window / f.a_plus_lo;
        let fn_upper = ((ratio + window_term) * (1.0 + 2.0 * g + own + 1e-15)).min(1.0);
        let fn_lower = (c_lo / f.sums.a_minus_hi * (1.0 - 2.0 * g - own))
            .max(0.0)
            .min(fn_upper);
        let certified_tolerance = certified_tolerance(fn_upper, fn_lower);
        RenewalResult {
            fn_upper,
            fn_ratio: ratio,
            window_term,
            fp_rate: (1.0 - self.draws.low) * lucky / f.sums.a_plus_hi,
            arrivals_per_cycle: 0.5 * (f.sums.a_plus_hi + f.sums.a_minus_hi),
            arrivals_followed: f.end,
            truncated_mass: f.truncated,
            mode: RenewalMode::Certified,
            tolerance: opt.tolerance,
            certified_tolerance,
            fn_lower,
            mode_note: "",
        }
    }
}

impl Engine<'_> {
    /// The two-phase numerators (eqs. 27-28): (upper, lower), each with the terms the
    /// exact engine adds or may lose to its rounding (docs/RENEWAL-TOLERANCE.md,
    /// section 6.9). `stop` is the block before which the exact engine cannot have
    /// stopped and `m_hi` the most arrivals it follows.
    fn two_phase_sums(&self, record: &Record, stop: usize, f: &Followed, m_hi: f64) -> (f64, f64) {
        let certified = f.m_certified;
        let width = two_phase::GROUP_WIDTH * self.opt.tolerance.unwrap_or(1e-3);
        let lower = two_phase::frozen_lower(&record.blocks, stop);
        let (upper, _) = two_phase::frozen_upper(&record.blocks, certified);
        let mut w_plus = Weights::new(two_phase::group(&lower, width, true), true);
        let mut w_minus = Weights::new(two_phase::group(&upper, width, false), false);
        // c_total = sum_j c_j, and lag0 bounds the largest lag's sum, sum_j c_j U_{j+1}.
        let (mut c_total, mut lag0, mut num_hi) = (0.0, 0.0, 0.0);
        let mut knot = 0;
        for p in &record.minus {
            c_total += p.c;
            lag0 += p.c * self.u.bounds_from(p.start + 1, &mut knot).0;
            num_hi += p.c * w_plus.at(&self.u, p.start);
        }
        let mut num_lo = 0.0;
        for p in record.plus.iter().filter(|p| p.block < stop) {
            num_lo += p.c * w_minus.at(&self.u, p.start + p.len - 1);
        }
        // The products p_r W and the sums over the pieces round too.
        let pieces = (record.minus.len() + record.plus.len()) as f64;
        let r = (pieces + 8.0) * UNIT;
        let p_r = self.draws.high;
        // The exact engine's own two-phase terms, with c_j <= 1 and U <= 1: the lags it
        // skips (each below tiny, at most m of them) it adds back whole, c_total each;
        // its FFT correlation raises each lag by at most 16 log2(size) eps ||c||_2
        // ||U||_2 (size <= 8 m, ||c||_2 <= sqrt(c_total), ||U||_2 <= sqrt(2 m)); its
        // differences of rounded A round by at most 2 g(j) A_j of the largest lag's sum
        // (summation by parts: the lag sums fall with the lag), g(j) its relative
        // rounding by arrival j: g(end) up to the arrivals followed, beyond them A is
        // below the side's upper alive_cap there (`f.truncated`); its direct sums (only
        // for m lags <= 2^26) by 4 m u of it.
        let fft = 16.0
            * (8.0 * m_hi + 8.0).log2()
            * f64::EPSILON
            * (2.0 * m_hi + 2.0).sqrt()
            * c_total.sqrt();
        let direct = m_hi.min(correlate::DIRECT_LIMIT as f64);
        let g_end = self.gamma(f.end as f64);
        let g_beyond = self.gamma(m_hi) * f.truncated.min(1.0);
        let rounding = (2.0 * g_end + 2.0 * g_beyond + 4.0 * direct * UNIT) * lag0 * (1.0 + r);
        let raise = p_r * (c_total * m_hi * self.opt.tiny + fft + rounding);
        (
            p_r * num_hi * (1.0 + r) + raise,
            (p_r * num_lo * (1.0 - r) - p_r * rounding).max(0.0),
        )
    }
}

/// Both sides' running sums: the side with more insertions and lower weights
/// (`plus`) bounds the denominator from below and the numerator from below; the other
/// bounds both from above.
#[derive(Default)]
struct Sums {
    a_plus_lo: f64,
    a_plus_hi: f64,
    c_plus_lo: f64,
    lucky_plus: f64,
    a_minus_hi: f64,
    c_minus_hi: f64,
}

impl Sums {
    fn add(&mut self, plus: &side::Out, minus: &side::Out) {
        self.a_plus_lo += plus.a.lo;
        self.a_plus_hi += plus.a.hi;
        self.c_plus_lo += plus.c.lo;
        self.lucky_plus += plus.lucky;
        self.a_minus_hi += minus.a.hi;
        self.c_minus_hi += minus.c.hi;
    }
}

/// The per-block width budget beta that spends at most about `target` insertions of
/// bracket width over the insertions up to `until`. The width of a block grows about as
/// the square of its length, so the total about as sqrt(beta); a profile read as steps
/// breaks that (a block swallowing a step spends it all), hence the measured check.
/// `low` is the p_r that sets eta (the interval's bottom).
fn calibrate(u: &ProfileU, low: f64, cap: f64, until: f64, target: f64) -> f64 {
    let width_at = |beta: f64| {
        let mut blocks = Blocks::new(u, low, beta, cap);
        let (mut ins, mut width) = (0.0, 0.0);
        let mut count = 0u32;
        while ins < until && count < 4_000_000 {
            let b = blocks.next_block();
            let eta = (1.0 - low) + low * b.up;
            ins += b.len as f64 * eta;
            width += b.len as f64 * low * (b.up - b.low);
            count += 1;
        }
        width
    };
    let mut beta = 1.0f64;
    let mut best: Option<f64> = None;
    for _ in 0..8 {
        let width = width_at(beta);
        if width <= target {
            best = Some(best.map_or(beta, |b: f64| b.max(beta)));
            if width >= target / 4.0 {
                break;
            }
        }
        let factor = if width > 0.0 {
            (0.8 * target / width).powi(2)
        } else {
            100.0
        };
        beta = (beta * factor.clamp(0.01, 100.0)).clamp(1e-9, 1e9);
    }
    best.unwrap_or(beta)
}
