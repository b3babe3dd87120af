//! The renewal upper bound (FN §5): a cycle is a renewal period, so
//! FN = sum_j E[C_j] / sum_j E[A_j] (eqs. 16-17), where A_j says arrival j falls in the
//! cycle and C_j that it is a false negative.
//!
//! Per arrival j of a cycle (eqs. 18-26, with the corrections of docs/MODEL.md):
//! * U_j = sum_i q_i (1 - h_i(j-1)) is the chance that a draw from Q is a non-repeat,
//!   with the disabling recursion h of eq. (24) (see [`super::disabling`]); for p_r = 1
//!   it is eq. (18), sum_i q_i (1 - q_i)^{j-1};
//! * P(eta_j = 1) = (1 - p_r) + p_r U_j: the arrival may set bits (eq. 25);
//! * B_{l,j} follows eq. (19) with that eta_j ([`super::bitdist`]);
//! * E[A_j] = sum_{l <= sigma} B_{l,j-1} (eq. 20);
//! * E[C_j] = p_r U_j sum_{l <= sigma + k} B+_{l,j-1} (1 - tau(l, l)) (eqs. 21-22, 26),
//!   where B+ is the same recursion followed up to sigma + k bits instead of sigma:
//!   Theorem 7 bounds the bit count conditioned on the drawn message not having been
//!   drawn before by the unconditioned one k bits higher.
//!
//! A retaining filter starts each cycle with the retained message's bits (its identity
//! is not tracked, so it still counts as enabled: U_j is over-estimated, which errs
//! towards a larger bound); a non-retaining one starts empty.
//!
//! Truncation (appendix E.1): the sums stop once the probability that a cycle is still
//! running in the sigma + k process is below epsilon (or, one phase with p_r = 1, once
//! a further arrival's false-negative chance p_r U_j is below 1e-9 of the running
//! ratio: Q is nearly exhausted and cycles may never end); the per-arrival
//! false-negative chance falls along a cycle, so the ratio of the truncated sums is at
//! least the full one. With p_r < 1 new messages keep setting bits, so cycles end:
//! once U is that small it is held at its value (an upper bound of every later U, and
//! the one-phase ratio is non-decreasing in U) and the cycle is followed to its end.
//!
//! Window error: the bit distribution drops cells below `tiny` (see
//! [`super::bitdist`]). Write the full sums as C = C_w + C_d and A = A_w + A_d, where the
//! d parts come from dropped mass W. Every unit of mass contributes at most 1 to C per
//! arrival and the sums run over m arrivals, so C_d <= W (m + 1) and
//! C / A <= (C_w + W (m + 1)) / A_w. That term is added to the reported bound, so the
//! window keeps it an upper bound; with tiny = 1e-30 it is far below 1e-12.
//!
//! Two phases with copy-over (eqs. 27-28): the active half runs the one-phase process on
//! M/2 bits, and an arrival j of the active cycle is a false negative when its message
//! is enabled since the start of the frozen cycle, which lasted j' arrivals with
//! probability zeta_{j'} = E[A_{j'}] - E[A_{j'+1}]:
//! numerator = p_r sum_j c_j sum_{j'} zeta_{j'} U_{j + j'} with
//! c_j = sum_{l <= sigma+k} B+_{l,j-1} (1 - tau(l, l)), U_s the enabled mass after s - 1
//! arrivals from the start of the frozen cycle. A frozen-half "lucky" hit is ignored,
//! which only raises the bound. Values of j' with zeta_{j'} below `tiny` are skipped and
//! their mass Z_s is accounted the same way: at most Z_s sum_j c_j is missing.

pub mod certified;
pub mod correlate;
pub mod cycle;
pub mod hitting;
pub mod input;
pub mod inscount;
mod insertions;
pub mod lanes;
pub mod process;
pub mod shared;
mod stream;
pub mod worst;

pub use input::{RenewalInput, RenewalMode, RenewalOptions, RenewalResult};
pub use shared::SharedBits;

use super::bitdist::Summary;
use super::disabling::EnabledMassSeq;
use crate::model::domain::OutsideModel;
use cycle::{Draws, Side, Tracker};
use process::{bit_process_streamed, Stepper};
use rbf_data::filter::Hashing;
use rbf_foundations::error::{Error, Problem, Result};

/// Bits per array from which the renewal bound, when no tolerance is asked, runs the
/// hitting-time engine where it applies ([`hitting`]; one phase or two), certified within
/// [`DEFAULT_TOLERANCE`]: from there on it is the faster (measured on a fitted Zipf
/// workload: equal at 2^18 bits, 4x faster at 2^20, 17x at 2^23; docs/PERFORMANCE.md).
/// Below it the exact engine runs, as it always did.
pub const CERTIFIED_FROM: u64 = 1 << 19;
/// The tolerance of the default certified mode.
pub const DEFAULT_TOLERANCE: f64 = 1e-3;

impl RenewalInput<'_> {
    /// What the arrivals draw: p_r, or its interval.
    pub fn draws(&self) -> Draws {
        match self.p_r_interval {
            Some((low, high)) => Draws { low, high },
            None => Draws::exact(self.p_r),
        }
    }
}

impl RenewalInput<'_> {
    /// The tolerance a computation runs with (None: the exact engine): the one asked,
    /// 0 meaning the exact engine; when none is asked, [`DEFAULT_TOLERANCE`] for
    /// sigma-bounded filters (one phase, or two) with colliding hashes of at least
    /// [`CERTIFIED_FROM`] bits and U from a reuse profile, or from Q where no rank
    /// shifts with p_r below 1 (the hitting-time engine's ground), else the exact
    /// engine.
    pub fn tolerance(&self, opt: &RenewalOptions) -> Option<f64> {
        match opt.tolerance {
            Some(0.0) => None,
            Some(t) => Some(t),
            None => ((self.reuse.is_some() || self.q_without_shifts())
                && self.max_inserts.is_none()
                && self.t.hashing == Hashing::Colliding
                && self.t.m >= CERTIFIED_FROM
                && !opt.direct)
                .then_some(DEFAULT_TOLERANCE),
        }
    }

    /// U from Q (no reuse profile, p_r at a point below 1 - 1e-5) where no rank ever
    /// shifts: new messages enter at the last rank.
    fn q_without_shifts(&self) -> bool {
        self.reuse.is_none()
            && self.p_r_interval.is_none()
            && self.p_r < 1.0 - 1e-5
            && !certified::ranks_shift(self)
    }
}

/// Where U_j came from when a measured reuse profile gave it.
const REUSE_SOURCE: &str = "U_j read from the measured reuse profile, no eq. 24 recursion";
/// The certified tolerance (`--tolerance`), relative: in (0, 1), or 0 for the exact
/// engine.
pub fn check_tolerance(t: f64) -> Result<()> {
    if t == 0.0 || (t > 0.0 && t < 1.0) {
        Ok(())
    } else {
        // "; found" as before: the value stays in the rule's text.
        Err(Error::setting(
            "tolerance",
            Problem::rule(format!(
                "the renewal tolerance is relative and must lie in (0, 1), e.g. 1e-3, or be 0 for the exact engine; found {t}"
            )),
        ))
    }
}

/// Computes the renewal bound (one or two phases).
///
/// Errors when the sigma + k process of Theorem 7 can never end (sigma + k >= M bits per
/// array: mass at M bits stays "alive" forever) or would need more than
/// `insertions::MAX_INSERTIONS` insertions to end, when the tolerance is not in (0, 1), and with
/// [`Error::Interrupted`] when the user pressed Ctrl-C.
pub fn renewal(input: &RenewalInput, opt: RenewalOptions) -> Result<RenewalResult> {
    check_sigma(input)?;
    if let Some(t) = opt.tolerance {
        check_tolerance(t)?;
    }
    let opt = RenewalOptions {
        tolerance: input.tolerance(&opt),
        ..opt
    };
    let mut note = "";
    if let Some(t) = opt.tolerance {
        // The hitting-time engine first (a reuse profile, or Q where no rank shifts);
        // for Q, the certified mode's own bracket where it does not certify.
        let hit = hitting::bracket(input, opt)?;
        if input.reuse.is_some() {
            match hit {
                Ok(mut r) if r.certified_tolerance <= t => {
                    r.mode_note = REUSE_SOURCE;
                    return Ok(r);
                }
                Ok(_) => note = certified::TOO_WIDE,
                Err(why) => note = why,
            }
        } else if let Some(r) = hit.ok().filter(|r| r.certified_tolerance <= t) {
            return Ok(r);
        } else {
            match certified::bracket(input, opt)? {
                Ok(r) if r.certified_tolerance <= t => return Ok(r),
                Ok(_) => note = certified::TOO_WIDE,
                Err(why) => note = why,
            }
        }
    }
    // U_j comes from threads of its own when Q is large (`EnabledMassSeq`); they start
    // now, so they already run while the bit process's per-insertion sums are built,
    // and end with the scope.
    if input.reuse.is_some() && note.is_empty() {
        note = REUSE_SOURCE;
    }
    let mut r = if let Some(profile) = input.reuse {
        run(input, opt, &mut EnabledMassSeq::from_profile(profile))?
    } else {
        std::thread::scope(|scope| {
            let mut enabled = EnabledMassSeq::start(scope, input.q, input.zeta, input.p_r);
            run(input, opt, &mut enabled)
        })?
    };
    r.mode_note = note;
    Ok(r)
}

/// The sigma + k process of Theorem 7 must end within the bits per array.
fn check_sigma(input: &RenewalInput) -> Result<()> {
    let k = u64::from(input.t.k);
    if input.max_inserts.is_none() && input.sigma.saturating_add(k) >= input.t.m {
        // Two values follow "; found": they stay in the rule's text.
        return Err(Error::setting(
            "sigma",
            Problem::rule(format!(
                "the renewal bound follows the bit count up to sigma + k (Theorem 7), which must stay below the {} bits per array; found sigma = {} and k = {k}",
                input.t.m, input.sigma
            )),
        ));
    }
    Ok(())
}

/// [`renewal`] once the setting is checked, with U_0, U_1, ... from `enabled`.
fn run(
    input: &RenewalInput,
    opt: RenewalOptions,
    enabled: &mut EnabledMassSeq,
) -> Result<RenewalResult> {
    let f = followed(input, opt, enabled, |_| {})?;
    Ok(result(
        input,
        opt,
        &f.side,
        f.side.c_sum,
        f.two.as_ref(),
        f.m,
        f.truncated,
    ))
}

/// A cycle followed to its truncation: what [`result`] reads.
struct Followed {
    side: Side,
    two: Option<TwoPhaseSums>,
    /// Arrivals followed.
    m: u64,
    /// The mass still running then.
    truncated: f64,
}

/// Follows `input`'s cycle ([`follow_cycle`], `each` called at every arrival) and
/// builds the two-phase sums: the computation [`run`] makes, and the one that
/// [`lanes`] shares between inputs stepping the same bit process.
fn followed(
    input: &RenewalInput,
    opt: RenewalOptions,
    enabled: &mut EnabledMassSeq,
    each: impl FnMut(Arrival<'_>),
) -> Result<Followed> {
    // The per-insertion sums are built on a thread of their own while the arrivals
    // consume them (the same values as built first: `stream`).
    std::thread::scope(|scope| {
        let bits = bit_process_streamed(scope, input, opt)?;
        follow_with(input, opt, bits, enabled, each)
    })
}

/// [`followed`] on the bit process `bits`.
fn follow_with(
    input: &RenewalInput,
    opt: RenewalOptions,
    bits: Stepper,
    enabled: &mut EnabledMassSeq,
    each: impl FnMut(Arrival<'_>),
) -> Result<Followed> {
    // The largest p_r of the input (the two-phase numerator's factor, the stopping rules).
    let p_r = input.draws().high;
    let mut side = Side::new(bits);
    let mut tracker = Tracker::new(&opt, "renewal bound", &side.bits);
    if opt.progress {
        rbf_foundations::progress::announce_estimate(
            "the renewal bound",
            exact_seconds(input.q.len(), tracker_total(&side.bits, opt.eps, p_r)),
        );
    }
    let two = input.phases == 2;
    let (mut series, m, truncated) =
        follow_cycle(input, opt, &mut side, &mut tracker, enabled, each)?;
    // The dropped mass and the frozen half's E[tau(l, l)] need every per-insertion sum.
    side.bits.finish()?;
    if two {
        // U_s for s up to 2m: keep drawing past the end of the active cycle.
        series.u.reserve(m as usize);
        for _ in 0..m {
            series.u.push(enabled.next_mass());
        }
    }
    let two = two.then(|| TwoPhaseSums::new(input, opt, &side.bits, &series));
    Ok(Followed {
        side,
        two,
        m,
        truncated,
    })
}

/// The result of a cycle followed in `side` (over `m` arrivals, `truncated` still
/// running) whose numerator sum is `c_sum`, with the sums of two phases.
fn result(
    input: &RenewalInput,
    opt: RenewalOptions,
    side: &Side,
    c_sum: f64,
    two: Option<&TwoPhaseSums>,
    m: u64,
    truncated: f64,
) -> RenewalResult {
    let draws = input.draws();
    let (a_sum, lucky_sum) = (side.a_sum, side.lucky_sum);
    let dropped = side.bits.dropped();
    let (numerator, fp_rate, extra) = match two {
        Some(two) => two.for_draws(input, a_sum),
        None => (c_sum, (1.0 - draws.low) * lucky_sum / a_sum, 0.0),
    };
    let ratio = numerator / a_sum;
    let window_term = (dropped * (2 * m + 1) as f64 + extra) / a_sum;
    let fn_upper = (ratio + window_term).min(1.0);
    RenewalResult {
        fn_upper,
        fn_ratio: ratio,
        window_term,
        fp_rate,
        arrivals_per_cycle: a_sum,
        arrivals_followed: m,
        truncated_mass: truncated,
        mode: RenewalMode::Exact,
        tolerance: opt.tolerance,
        certified_tolerance: 0.0,
        fn_lower: fn_upper,
        mode_note: "",
    }
}

/// The active cycle's per-arrival series, kept for the two-phase sums (eqs. 27-28).
#[derive(Default)]
struct Series {
    /// A_j: the chance that the cycle still runs at arrival j.
    alive: Vec<f64>,
    /// c_j = sum_{l <= sigma+k} B+_{l,j-1} (1 - tau(l, l)).
    c: Vec<f64>,
    /// U_s, the enabled mass after s - 1 arrivals.
    u: Vec<f64>,
    /// The active half's lucky-hit chance per arrival.
    lucky: Vec<f64>,
}

/// What [`follow_cycle`] shows its observer at an arrival, before the stopping rules
/// read it.
struct Arrival<'a> {
    /// U at this arrival.
    u: f64,
    /// The bit process's sums before it.
    summary: &'a Summary,
    /// The one-phase "Q exhausted" test ([`Side::exhausted`]).
    exhausted: bool,
    /// U is still drawn (not yet held at its last value).
    drawing: bool,
    /// The denominator's sum so far.
    a_sum: f64,
}

/// Follows one cycle arrival by arrival in `side` until it is truncated (appendix E.1),
/// showing `each` every arrival; returns the series (two phases only), the arrivals
/// followed and the mass still running then.
fn follow_cycle(
    input: &RenewalInput,
    opt: RenewalOptions,
    side: &mut Side,
    tracker: &mut Tracker,
    enabled: &mut EnabledMassSeq,
    mut each: impl FnMut(Arrival<'_>),
) -> Result<(Series, u64, f64)> {
    let draws = input.draws();
    let two = input.phases == 2;
    let mut series = Series::default();
    let mut j = 0u64;
    // One phase with new arrivals: once U is negligible it is held at its last value
    // (U is non-increasing, so this bounds every later U from above, and the one-phase
    // ratio is non-decreasing in U), and the cycle is followed to its end, because
    // new messages keep setting bits. Stopping there instead would leave the rest of
    // the cycle's arrivals out of the denominator: still an upper bound, but a loose
    // one when cycles outlast the repeats (a filter holding the whole working set).
    let mut held: Option<f64> = None;
    loop {
        j += 1;
        let u = match held {
            Some(u) => u,
            None => enabled.next_mass(),
        };
        let s = side.arrival(draws, u);
        if two {
            series.alive.push(s.alive);
            series.c.push(s.sets_cap);
            series.u.push(u);
            series.lucky.push(s.lucky);
        }
        // Stop once cycles are unlikely to still run, or once a further arrival can
        // add at most a negligible share to the numerator (p_r = 1 and Q nearly
        // exhausted: cycles may then last almost forever, and the ratio only falls).
        let exhausted = side.exhausted(draws, u);
        each(Arrival {
            u,
            summary: &s,
            exhausted,
            drawing: held.is_none(),
            a_sum: side.a_sum,
        });
        let repeats_only = draws.low >= 1.0;
        if s.alive_cap < opt.eps || j >= opt.max_arrivals || (exhausted && !two && repeats_only) {
            return Ok((series, j, s.alive_cap));
        }
        if exhausted && !two && held.is_none() {
            held = Some(u);
        }
        if two && exhausted && repeats_only {
            // No new messages and Q exhausted: bits are no longer set, so a cycle still
            // running never ends, and the frozen cycle's length has no distribution.
            return Err(never_ends(input.q.len(), s.alive_cap, j));
        }
        if two && j.is_power_of_two() && j >= 1 << 20 {
            // Five per-arrival series, U for twice as many arrivals: 48 bytes each.
            rbf_foundations::resources::check_memory(
                "the two-phase renewal bound's per-arrival series",
                48.0 * 2.0 * j as f64,
            )?;
        }
        // The next arrival reads alive_cap only as `alive_cap < eps`, unless it is the
        // last one allowed or Q can be exhausted with repeats only (then alive_cap is
        // the result or the error's): the step may leave it out where it is not below.
        let exact_cap = repeats_only || j + 1 >= opt.max_arrivals;
        side.bits
            .set_cap_floor(if exact_cap { None } else { Some(opt.eps) });
        side.step(draws, u);
        side.bits.check()?;
        tracker.arrival(side.insertions)?;
    }
}

/// The error for two phases whose cycles never end (p_r = 1 and Q exhausted).
fn never_ends(d: usize, alive_cap: f64, j: u64) -> Error {
    OutsideModel::CyclesNeverEnd {
        d,
        mass: alive_cap,
        arrivals: j,
    }
    .into()
}

/// The two-phase sums (eqs. 27-28) from the active cycle's series (U for twice its
/// arrivals), before the factors of p_r: they depend on the bit process and U alone.
struct TwoPhaseSums {
    /// sum_{j'} zeta_{j'} sum_j c_j U_{j + j'} over the lags kept.
    num: f64,
    /// The weight of the lags skipped.
    skipped: f64,
    c_total: f64,
    /// The FP numerator.
    fp_num: f64,
}

impl TwoPhaseSums {
    fn new(input: &RenewalInput, opt: RenewalOptions, bits: &Stepper, series: &Series) -> Self {
        // zeta_{j'} = A_{j'} - A_{j'+1}, with A = 0 after the last arrival followed.
        let next = series.alive.iter().skip(1).chain(std::iter::once(&0.0));
        let zeta: Vec<f64> = series
            .alive
            .iter()
            .zip(next)
            .map(|(a, b)| (a - b).max(0.0))
            .collect();
        let mut skipped = 0.0;
        let mut num = 0.0;
        let c_total: f64 = series.c.iter().sum();
        // Frozen cycle of jp + 1 arrivals; active arrival j (index ja = j - 1) needs U
        // after jp + 1 + ja arrivals: u_series[jp + 1 + ja] (u_series holds 2m values).
        // Lags with negligible weight are skipped and accounted below.
        let lags = zeta
            .iter()
            .rposition(|&z| z >= opt.tiny)
            .map_or(0, |i| i + 1);
        let acc = correlate::lagged_sums(&series.c, &series.u, lags);
        for (jp, &z) in zeta.iter().enumerate() {
            if z < opt.tiny {
                skipped += z;
                continue;
            }
            num += z * acc[jp];
        }
        // FP: found in the active half or in the frozen one.
        let frozen_lucky = bits.frozen_lucky(input);
        let alive_total: f64 = series.alive.iter().chain(std::iter::once(&0.0)).sum();
        let fp_num: f64 =
            series.lucky.iter().sum::<f64>() * (1.0 - frozen_lucky) + alive_total * frozen_lucky;
        TwoPhaseSums {
            num,
            skipped,
            c_total,
            fp_num,
        }
    }

    /// The numerator, FP rate and skipped-lag term for `input`'s draws and the
    /// cycle's expected length `a_sum`.
    fn for_draws(&self, input: &RenewalInput, a_sum: f64) -> (f64, f64, f64) {
        let draws = input.draws();
        let p_r = draws.high;
        // With an interval of p_r the numerator takes its largest value (not proven
        // to bound every p_r in it for two phases: docs/FIT.md).
        (
            p_r * self.num,
            (1.0 - draws.low) * self.fp_num / a_sum,
            p_r * self.skipped * self.c_total,
        )
    }
}

/// Arrivals a cycle is expected to last at most, for the up-front estimate: the
/// insertions after which cycles are over, each taking at most 1 / (1 - p_r) arrivals
/// on average (capped at 20 per insertion when p_r is near 1).
fn tracker_total(bits: &Stepper, eps: f64, p_r: f64) -> f64 {
    bits.insertions_to(eps) as f64 * (1.0 / (1.0 - p_r).max(0.05))
}

/// Seconds the exact engine is expected to take for D ranks and that many arrivals:
/// the eq. (24) kernel's 0.14 ns per rank and arrival per core (docs/PERFORMANCE.md,
/// "FN: the renewal bound"), on the threads rayon allows.
fn exact_seconds(d: usize, arrivals: f64) -> f64 {
    d as f64 * arrivals * 0.14e-9 / rayon::current_num_threads().max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tau::Transitions;
    use rbf_data::filter::Hashing;

    fn input<'a>(t: Transitions, sigma: u64, q: &'a [f64], zeta: &'a [f64]) -> RenewalInput<'a> {
        RenewalInput {
            t,
            sigma,
            max_inserts: None,
            retaining: true,
            phases: 1,
            q,
            zeta,
            p_r: 1.0,
            p_r_interval: None,
            reuse: None,
            shared_bits: None,
            hitting_fields: None,
        }
    }

    #[test]
    fn a_process_that_never_ends_is_an_error_not_an_allocation() {
        // sigma + k >= M: the sigma + k process keeps its mass at M bits forever, so
        // the per-insertion sums would grow until memory ran out.
        let (q, zeta) = (vec![1.0], vec![1.0]);
        for sigma in [997u64, 998, 999] {
            let t = Transitions::new(1000, 3, Hashing::Colliding);
            let r = renewal(&input(t, sigma, &q, &zeta), RenewalOptions::default());
            match r {
                Err(Error::Setting(s)) => assert_eq!(s.key, "sigma"),
                other => panic!("sigma = {sigma}: expected a sigma error, got {other:?}"),
            }
        }
        // One bit lower the process ends, and D = 1 with p_r = 1 never recycles.
        let t = Transitions::new(1000, 3, Hashing::Colliding);
        let r = renewal(&input(t, 996, &q, &zeta), RenewalOptions::default());
        assert!(r.is_ok_and(|r| r.fn_upper.is_finite()));
    }
}
