//! The renewal bound's certified tolerance mode (`--tolerance T`): a value V with
//! exact <= V <= exact (1 + T), where exact is the exact engine's value, without the
//! eq. (24) recursion over every rank and arrival. The proof is in
//! docs/RENEWAL-TOLERANCE.md; in short:
//!
//! 1. *Monotonicity (one phase).* The renewal sums of eqs. (16)-(26), truncated after
//!    any fixed number m of arrivals, move the ratio up when the sequence U_j is
//!    replaced by a pointwise larger one, and down for a pointwise smaller one, as long
//!    as the replacing sequence is non-increasing in j (coupling by bit-setting
//!    index). So a non-increasing bracket U-_j <= U_j <= U+_j of the exact engine's U
//!    gives a bracket of its numerator and denominator at every m.
//! 2. *Stopping.* The exact engine stops at an arrival m that depends on U; the rules
//!    it uses are monotone too, so m lies between the stops m_lo and m_hi that the two
//!    bracketing processes certify, and with N non-decreasing and A non-decreasing in
//!    m, V = N+(m_hi) / A+(m_lo) >= exact >= N-(m_lo) / A-(m_hi) = V-.
//! 3. *The bracket of U.* When no message changes rank during a cycle (p_r = 1, or
//!    new messages always enter at the last rank), eq. (24) has no shift term and
//!    U_j = sum_i q_i (1 - kappa_i)^j with kappa_i = p_r q_i + (1 - p_r) zeta_i: a
//!    power sum that [`PowerSums`] evaluates in time independent of D, to about 1e-13.
//!    The margin around it also covers the exact engine's own rounding (at most four
//!    unit roundoffs per arrival and the lane sums over D ranks).
//! 4. *Windows and rounding.* Dropped mass is added to V as in the exact engine, with
//!    a bound that covers the exact engine's windows too; both runs' sequential sums
//!    carry at most m unit roundoffs, which V and V- absorb as a relative factor.
//!
//! The certified tolerance is V / V- - 1. When it exceeds T (or the workload is one
//! this mode has no proof or no faster bracket for), the exact engine runs instead and
//! the result says why ([`RenewalResult::mode_note`]).

use super::cycle::{Draws, Record, Side, Tracker};
use super::input::{RenewalInput, RenewalMode, RenewalOptions, RenewalResult};
use super::process::{bit_process, Stepper};
use crate::model::false_negative::powersums::PowerSums;
use rbf_foundations::error::Result;

/// Why the exact engine ran although a tolerance was given.
pub const TOO_WIDE: &str =
    "the certified bracket was wider than the tolerance; the exact engine ran";
const TWO_PHASES: &str =
    "the certified mode's proof (monotonicity in U) covers one phase only; the exact engine ran";
pub(super) const SHIFTS: &str = "new messages enter above other ranks, so ranks shift and U needs the eq. (24) recursion, for which no faster certified method exists yet; the exact engine ran";
const DIRECT: &str = "the certified mode follows the insertion-count decomposition, not the direct reference recursion; the exact engine ran";
const LONG: &str = "cycles last longer than the certified mode's rounding margin covers (2^28 arrivals); the exact engine ran";

/// Arrivals per step of the two sides.
const BLOCK: usize = 1024;
/// Most arrivals the rounding margin is sized for.
const MAX_ARRIVALS: u64 = 1 << 28;
/// Unit roundoff of f64.
const UNIT: f64 = f64::EPSILON / 2.0;
/// Slack of the exhausted-cycle stopping test: its threshold compares sums that both
/// engines round differently.
const TEST_SLACK: f64 = 1e-6;

/// The certified result, or why this mode does not apply (the caller then runs the
/// exact engine). Errors are those of the bit process and Ctrl-C.
pub fn bracket(
    input: &RenewalInput,
    opt: RenewalOptions,
) -> Result<std::result::Result<RenewalResult, &'static str>> {
    if input.phases != 1 {
        return Ok(Err(TWO_PHASES));
    }
    let Some(kill) = no_shift_kills(input) else {
        return Ok(Err(SHIFTS));
    };
    let Stepper::Decomposed(bits) = bit_process(input, opt)? else {
        return Ok(Err(DIRECT));
    };
    let dropped_psi = bits.dropped_psi;
    let p_r = input.p_r;
    let cap = opt.max_arrivals.min(MAX_ARRIVALS);
    let mut u = UBracket::new(input, cap, PowerSums::with_kills(&kill, input.q));
    let mut plus = Side::new(Stepper::Decomposed(bits.clone()));
    let mut minus = Side::new(Stepper::Decomposed(bits));
    let mut tracker = Tracker::new(&opt, "renewal bound (certified)", &plus.bits);
    let tests = StopTests {
        eps: opt.eps,
        max_arrivals: opt.max_arrivals,
        p_r,
    };
    let (mut ups, mut lows) = (Vec::with_capacity(BLOCK), Vec::with_capacity(BLOCK));
    let mut at_lo = None;
    let mut j0 = 0u64;
    // The two sides advance a block of arrivals at a time on two threads (they only
    // meet in the stopping tests, checked per arrival from what each side recorded).
    let stop = loop {
        u.block(j0, &mut ups, &mut lows);
        let draws = Draws::exact(p_r);
        let (rp, rm) = rayon::join(|| plus.block(draws, &ups), || minus.block(draws, &lows));
        if let Some(s) = tests.first_stop(j0, (&rp, &rm), (&ups, &lows), &mut at_lo) {
            break s;
        }
        j0 += BLOCK as u64;
        if j0 >= cap {
            return Ok(Err(LONG));
        }
        tracker.arrivals(BLOCK as u64, rp.last().map_or(0.0, |p| p.insertions))?;
    };
    Ok(Ok(certified_result(opt, p_r, dropped_psi, stop, at_lo)))
}

/// The non-increasing bracket U-_j <= U_j <= U+_j of the exact engine's U (point 3 of
/// the module doc), from the power sums with a margin for their error and the exact
/// engine's rounding.
struct UBracket {
    sums: PowerSums,
    /// Relative margin of U+ and U-.
    margin: f64,
    /// Absolute margin: ranks the power sums leave out.
    floor: f64,
    /// The least U+ can be once U is held (p_r < 1).
    held_floor: f64,
    /// Running minima, which keep both sequences non-increasing (point 1 of the
    /// module doc).
    up: f64,
    low: f64,
}

impl UBracket {
    fn new(input: &RenewalInput, cap: u64, sums: PowerSums) -> UBracket {
        let p_r = input.p_r;
        // Relative margin of U+ and U-: the power sums (about 1e-13, see `powersums`),
        // and the exact engine's rounding of U: per arrival its coefficient (1 ulp) and
        // one fused multiply-add per rank, a relative 4 u over every arrival followed,
        // plus the lane sums over D ranks.
        let margin = 2e-12 + 4.0 * UNIT * cap as f64 + (input.q.len() as f64 / 16.0 + 64.0) * UNIT;
        // With p_r < 1 the exact engine does not stop when U is exhausted: it holds U at
        // its value u* there, with p_r u* <= 1e-9 times a ratio below 1, and follows the
        // cycle to its end. Its sequence then lies between U- and max(U+, 1e-9 / p_r), and
        // only the end of the cycle stops either side.
        let held_floor = if p_r >= 1.0 {
            0.0
        } else {
            1e-9 / p_r * (1.0 + TEST_SLACK)
        };
        UBracket {
            sums,
            margin,
            // Absolute floor: ranks the power sums leave out weigh below 1e-18 in all.
            floor: 1e-17,
            held_floor,
            up: f64::INFINITY,
            low: f64::INFINITY,
        }
    }

    /// U+ and U- for the block of arrivals from `j0`, into `ups` and `lows`.
    fn block(&mut self, j0: u64, ups: &mut Vec<f64>, lows: &mut Vec<f64>) {
        ups.clear();
        lows.clear();
        for j in j0..j0 + BLOCK as u64 {
            let (_, f) = self.sums.at(j);
            self.up = self.up.min(f * (1.0 + self.margin) + self.floor);
            self.low = self
                .low
                .min((f * (1.0 - self.margin) - self.floor).max(0.0));
            ups.push(self.up.max(self.held_floor));
            lows.push(self.low);
        }
    }
}

/// The exact engine's stopping rules, applied to the two bracketing sides (point 2 of
/// the module doc).
struct StopTests {
    eps: f64,
    max_arrivals: u64,
    p_r: f64,
}

impl StopTests {
    /// The first arrival of the block from `j0` by which the exact engine has surely
    /// stopped, with both sides' records there; records in `at_lo` the sums at the
    /// first arrival at which it may have stopped.
    fn first_stop(
        &self,
        j0: u64,
        (rp, rm): (&[Record], &[Record]),
        (ups, lows): (&[f64], &[f64]),
        at_lo: &mut Option<(f64, f64)>,
    ) -> Option<(u64, Record, Record)> {
        let p_r = self.p_r;
        let repeats_only = p_r >= 1.0;
        for (t, (p, m)) in rp.iter().zip(rm).enumerate() {
            let j = j0 + t as u64 + 1;
            // The exact engine cannot have stopped before the first arrival at which
            // the process with more insertions is over, or U- is exhausted by the
            // larger ratio ...
            let may_stop = p.alive_cap < self.eps
                || j >= self.max_arrivals
                || (repeats_only && p_r * lows[t] <= 1e-9 * (1.0 + TEST_SLACK) * p.c_sum / p.a_sum);
            if at_lo.is_none() && may_stop {
                *at_lo = Some((p.a_sum, m.c_sum));
            }
            // ... and has stopped by the first at which the process with fewer
            // insertions is over, or U+ is exhausted by the smaller ratio.
            let must_stop = m.alive_cap < self.eps
                || j >= self.max_arrivals
                || (repeats_only && p_r * ups[t] <= 1e-9 * (1.0 - TEST_SLACK) * m.c_sum / m.a_sum);
            if must_stop {
                return Some((j, *p, *m));
            }
        }
        None
    }
}

/// The bracket's result from the sides' records at the certified stop (`p` the side
/// with U+, `mm` the one with U-) and at the first possible stop (`at_lo`).
fn certified_result(
    opt: RenewalOptions,
    p_r: f64,
    dropped_psi: f64,
    (j, p, mm): (u64, Record, Record),
    at_lo: Option<(f64, f64)>,
) -> RenewalResult {
    let m = j as f64;
    let (a_plus_lo, n_minus_lo) = at_lo.unwrap_or((p.a_sum, mm.c_sum));
    // Mass either engine's windows may drop: the per-insertion sums' (the same in
    // both), and at most one cell below `tiny` per arrival and one leak of at most
    // `tiny` per arrival from the insertion-count window (each arrival adds at most
    // one cell, and only added cells are trimmed).
    let dropped = dropped_psi + 2.0 * (m + 1.0) * opt.tiny;
    let window = dropped * (2.0 * m + 1.0);
    // Sequential sums of m terms: at most m unit roundoffs each, in both engines.
    let rounding = 4.0 * UNIT * m + 1e-15;
    let ratio = p.c_sum / a_plus_lo;
    let window_term = window / a_plus_lo;
    let fn_upper = ((ratio + window_term) * (1.0 + rounding)).min(1.0);
    let fn_lower = ((n_minus_lo - window).max(0.0) / (mm.a_sum + window) * (1.0 - rounding))
        .max(0.0)
        .min(fn_upper);
    let certified_tolerance = super::input::certified_tolerance(fn_upper, fn_lower);
    RenewalResult {
        fn_upper,
        fn_ratio: ratio,
        window_term,
        fp_rate: (1.0 - p_r) * p.lucky_sum / p.a_sum,
        arrivals_per_cycle: p.a_sum,
        arrivals_followed: j,
        truncated_mass: mm.alive_cap,
        mode: RenewalMode::Certified,
        tolerance: opt.tolerance,
        certified_tolerance,
        fn_lower,
        mode_note: "",
    }
}

/// Whether a message of Q can change rank during a cycle: p_r < 1 and new messages
/// may enter above the last rank.
pub(super) fn ranks_shift(input: &RenewalInput) -> bool {
    let d = input.q.len();
    input.p_r < 1.0 && input.zeta[..d.saturating_sub(1)].iter().any(|&z| z > 0.0)
}

/// The per-arrival kill probabilities kappa_i = 1 - a_i of eq. (24) when no rank
/// ever shifts (every b_i = (1 - p_r) Z<_i is zero: p_r = 1, or new messages always
/// enter at the last rank), else None.
pub(super) fn no_shift_kills(input: &RenewalInput) -> Option<Vec<f64>> {
    if ranks_shift(input) {
        return None;
    }
    let (q, zeta, p_r) = (input.q, input.zeta, input.p_r);
    Some(
        q.iter()
            .zip(zeta)
            .map(|(&qi, &zi)| (p_r * qi + (1.0 - p_r) * zi).min(1.0))
            .collect(),
    )
}
