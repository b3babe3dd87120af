//! The bit process of one renewal cycle (eq. 19): the insertion-count decomposition
//! ([`super::inscount`]), or eq. (19) literally for the reference, followed to sigma + k
//! bits (Theorem 7).

use super::input::{RenewalInput, RenewalOptions};
use super::inscount::Decomposed;
use super::shared::{BitsKey, SharedBits};
use super::stream::Streamed;
use crate::error::{Error, Result};
use crate::model::false_negative::bitdist::{BitDist, Summary};
use crate::model::false_negative::nbounded::JointDist;
use crate::model::tau::Transitions;

/// Most insertions [`per_insertion`] follows (2^26 summaries of 32 bytes: 2 GiB). A
/// sigma-bounded filter with sigma + k below M bits leaves the sigma + k process after
/// about (M / k) ln(M / (M - sigma - k)) insertions, far fewer for any filter the models
/// can otherwise handle.
pub(super) const MAX_INSERTIONS: usize = 1 << 26;
/// The bit process of the renewal model: the insertion-count decomposition (or, with
/// `direct`, eq. 19 literally). The decomposition's per-insertion sums depend on the
/// filter alone, not on Q, U or p_r: when `input.shared_bits` holds them for this
/// filter and `tiny` they are copied, not built again (same values).
pub(super) fn bit_process(input: &RenewalInput, opt: RenewalOptions) -> Result<Stepper> {
    if opt.direct && input.max_inserts.is_none() {
        let k = u64::from(input.t.k);
        return Ok(Stepper::Direct(BitDist::new(
            input.t,
            input.sigma,
            input.sigma + k,
            input.retaining,
            opt.tiny,
        )));
    }
    if let Some(shared) = input.shared_bits {
        if shared.key == BitsKey::of(input, opt) {
            return Ok(Stepper::Decomposed(shared.bits.clone()));
        }
    }
    decomposed(input, opt).map(Stepper::Decomposed)
}

/// [`bit_process`], with the decomposition's per-insertion sums built on a thread of
/// `scope` while the caller steps through arrivals (same values: [`super::stream`]).
/// Shared sums and the literal eq. 19 are returned as [`bit_process`] returns them.
pub(super) fn bit_process_streamed<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    input: &'env RenewalInput<'env>,
    opt: RenewalOptions,
) -> Result<Stepper> {
    let shared = input
        .shared_bits
        .is_some_and(|s| s.key == BitsKey::of(input, opt));
    if shared || (opt.direct && input.max_inserts.is_none()) {
        return bit_process(input, opt);
    }
    Ok(Stepper::Streamed(Box::new(Streamed::start(
        scope, input, opt,
    )?)))
}

impl SharedBits {
    /// The sums for `input`'s filter and `opt.tiny` (None for the literal eq. 19,
    /// which has none).
    pub fn build(input: &RenewalInput, opt: RenewalOptions) -> Result<Option<SharedBits>> {
        if opt.direct && input.max_inserts.is_none() {
            return Ok(None);
        }
        Ok(Some(SharedBits {
            key: BitsKey::of(input, opt),
            bits: decomposed(input, opt)?,
        }))
    }
}

impl BitsKey {
    fn of(input: &RenewalInput, opt: RenewalOptions) -> BitsKey {
        BitsKey {
            t: input.t,
            sigma: input.sigma,
            max_inserts: input.max_inserts,
            retaining: input.retaining,
            tiny: opt.tiny,
        }
    }
}

/// The insertion-count decomposition's per-insertion sums, followed to sigma + k
/// bits (or through the N-bounded joint law).
fn decomposed(input: &RenewalInput, opt: RenewalOptions) -> Result<Decomposed> {
    let stage = stage_progress(input, opt);
    let mut per_n = Vec::new();
    let (dropped, frozen) = per_insertion_sums(input, opt, &stage, &mut |s| {
        per_n.push(s);
        Ok(())
    })?;
    Ok(Decomposed::from_per_n(per_n, dropped, frozen, opt.tiny))
}

/// Insertions until the sigma + k (or N + 1) process is over, about: the expected
/// count to reach sigma + k bits (FP paper eq. 1's mean), for the progress display.
pub(super) fn expected_insertions(input: &RenewalInput) -> f64 {
    let k = u64::from(input.t.k);
    let m = input.t.m as f64;
    match input.max_inserts {
        Some(n) => n as f64,
        None => m / k as f64 * (m / (m - (input.sigma + k) as f64).max(1.0)).ln(),
    }
}

/// The bit distribution stage's progress bar (hidden without `opt.progress`).
fn stage_progress(input: &RenewalInput, opt: RenewalOptions) -> crate::progress::Progress {
    if opt.progress {
        crate::progress::Progress::new(
            "renewal bound (bit distribution)",
            expected_insertions(input),
            "insertions",
        )
    } else {
        crate::progress::Progress::hidden()
    }
}

/// Hands the per-insertion sums to `sink` in order, n = 0, 1, ..., until the sigma + k
/// (or N + 1) process is over; returns the mass the recursion dropped and the frozen
/// half's E[tau(l, l)].
pub(super) fn per_insertion_sums(
    input: &RenewalInput,
    opt: RenewalOptions,
    stage: &crate::progress::Progress,
    sink: &mut dyn FnMut(Summary) -> Result<()>,
) -> Result<(f64, f64)> {
    let k = u64::from(input.t.k);
    if let Some(n) = input.max_inserts {
        // Mass below `tiny` at the rows' edges is dropped and counted, as the
        // sigma-bounded distribution's is: the window term covers it.
        let mut joint = JointDist::new(input.t, n, input.retaining, opt.tiny);
        let mut steps = 0u64;
        per_insertion(opt.tiny, MAX_INSERTIONS, stage, sink, || {
            let s = joint.summary();
            joint.step();
            steps += 1;
            if steps.is_multiple_of(16) {
                // Stuck mass above `tiny` would keep the process running to its limit.
                joint.check(opt.tiny.max(1e-300))?;
            }
            Ok(s)
        })?;
        Ok((joint.dropped(), joint.frozen_lucky()))
    } else {
        let mut bits = BitDist::new(
            input.t,
            input.sigma,
            input.sigma + k,
            input.retaining,
            opt.tiny,
        );
        per_insertion(opt.tiny, MAX_INSERTIONS, stage, sink, || {
            let s = bits.summary();
            bits.step(1.0);
            Ok(s)
        })?;
        let frozen = frozen_lucky(&input.t, input.sigma, bits.crossed());
        Ok((bits.dropped(), frozen))
    }
}

/// The per-arrival bit-count process of a cycle, followed either literally (eq. 19) or
/// through the insertion count.
///
/// Decomposition: in eq. (19) whether arrival j sets bits (probability eta_j) does not
/// depend on the bit count, so after j arrivals the number N_j of insertions is a
/// Poisson-binomial variable independent of which bits those insertions set, and
/// B_{l,j} = sum_n P(N_j = n) psi(l, n), with psi the bit distribution after n
/// insertions (eq. 1 without the cut, followed to sigma + k). Every per-arrival sum the
/// model needs is then sum_n P(N_j = n) x(n) for a per-insertion sum x(n) computed once.
/// The two windows (over n for N_j, over bits for psi) drop cells below `tiny`; each
/// per-arrival sum then misses at most the dropped masses W_N + W_psi (plus the psi
/// tail beyond the last n followed, below `tiny`), which the window term covers.
pub(super) enum Stepper {
    Direct(BitDist),
    Decomposed(Decomposed),
    /// The decomposition with its per-insertion sums arriving from a thread of their
    /// own ([`super::stream`]).
    Streamed(Box<Streamed>),
}

impl Stepper {
    /// Insertions after which the sigma + k process holds less than `eps` (the
    /// per-insertion sums' length when they do not reach it).
    pub fn insertions_to(&self, eps: f64) -> usize {
        match self {
            Stepper::Direct(_) => 0,
            Stepper::Decomposed(d) => d.insertions_to(eps),
            // Not known before the insertion stage ends: its expected length.
            Stepper::Streamed(s) => s.expected,
        }
    }

    pub fn summary(&mut self) -> Summary {
        match self {
            Stepper::Direct(b) => b.summary(),
            Stepper::Decomposed(d) => d.summary(),
            Stepper::Streamed(s) => s.d.summary(),
        }
    }

    pub fn step(&mut self, eta: f64) {
        match self {
            Stepper::Direct(b) => b.step(eta),
            Stepper::Decomposed(d) => d.step(eta),
            Stepper::Streamed(s) => {
                s.ready_for_step();
                s.d.step(eta);
            }
        }
    }

    /// The insertion stage's error, once known (streamed sums only).
    pub fn check(&mut self) -> Result<()> {
        match self {
            Stepper::Streamed(s) => s.check(),
            _ => Ok(()),
        }
    }

    /// Waits for every per-insertion sum (streamed sums only): [`Stepper::dropped`]
    /// and [`Stepper::frozen_lucky`] read them.
    pub fn finish(&mut self) -> Result<()> {
        match self {
            Stepper::Streamed(s) => s.finish(),
            _ => Ok(()),
        }
    }

    /// See [`Decomposed::set_cap_floor`] (the literal eq. 19 always has every sum).
    pub fn set_cap_floor(&mut self, floor: Option<f64>) {
        match self {
            Stepper::Decomposed(d) => d.set_cap_floor(floor),
            Stepper::Streamed(s) => s.d.set_cap_floor(floor),
            Stepper::Direct(_) => {}
        }
    }

    pub fn dropped(&self) -> f64 {
        match self {
            Stepper::Direct(b) => b.dropped(),
            Stepper::Decomposed(d) => d.dropped_n + d.dropped_psi,
            Stepper::Streamed(s) => s.d.dropped_n + s.d.dropped_psi,
        }
    }

    /// E[tau(l, l)] over the frozen half's final bit count.
    pub fn frozen_lucky(&self, input: &RenewalInput) -> f64 {
        match self {
            Stepper::Direct(b) => frozen_lucky(&input.t, input.sigma, b.crossed()),
            Stepper::Decomposed(d) => d.frozen_lucky,
            Stepper::Streamed(s) => s.d.frozen_lucky,
        }
    }
}

/// E[tau(l, l)] for the bit counts sigma + 1 + d at which cycles crossed sigma.
fn frozen_lucky(t: &Transitions, sigma: u64, crossed: &[f64]) -> f64 {
    let total: f64 = crossed.iter().sum();
    if total <= 0.0 {
        return 0.0;
    }
    crossed
        .iter()
        .enumerate()
        .map(|(d, w)| w * t.all_set(sigma + 1 + d as u64))
        .sum::<f64>()
        / total
}

/// Per-insertion sums until the mass still within the sigma + k (or N + 1) process
/// falls below `tiny`, handed to `sink`. `next` yields the current sums and advances
/// one insertion. Errors instead of allocating without bound when that takes more than
/// `limit` insertions, and on Ctrl-C.
fn per_insertion(
    tiny: f64,
    limit: usize,
    progress: &crate::progress::Progress,
    sink: &mut dyn FnMut(Summary) -> Result<()>,
    mut next: impl FnMut() -> Result<Summary>,
) -> Result<usize> {
    let mut count = 0usize;
    loop {
        let s = next()?;
        sink(s)?;
        count += 1;
        // The stop flag is one atomic load, looked at every insertion: an N-bounded
        // insertion can take tens of milliseconds, and 1024 of them made a SIGTERM
        // wait 40 s (issue 39).
        crate::progress::check_interrupt()?;
        if count.is_multiple_of(64) {
            progress.set(count as f64);
        }
        if s.alive_cap < tiny.max(1e-300) {
            return Ok(count);
        }
        if count >= limit {
            return Err(Error::invalid(format!(
                "the renewal bound's bit process is still running after {limit} insertions (mass {:.3e} left); sigma is too close to the bits per array",
                s.alive_cap
            )));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_insertion_stops_at_its_limit() {
        let stuck = Summary {
            alive: 1.0,
            alive_cap: 1.0,
            sets_cap: 0.0,
            lucky: 1.0,
        };
        assert!(matches!(
            per_insertion(
                1e-30,
                1000,
                &crate::progress::Progress::hidden(),
                &mut |_| Ok(()),
                || Ok(stuck)
            ),
            Err(Error::Invalid(_))
        ));
    }
}
