//! The bit process of one renewal cycle (eq. 19): the insertion-count decomposition
//! ([`super::inscount`]), or eq. (19) literally for the reference, followed to sigma + k
//! bits (Theorem 7).

use super::input::{RenewalInput, RenewalOptions};
use super::inscount::Decomposed;
use super::insertions::{frozen_lucky, per_insertion_sums, stage_progress};
use super::shared::{BitsKey, SharedBits};
use super::stream::Streamed;
use crate::model::false_negative::bitdist::{BitDist, Summary};
use rbf_foundations::error::Result;

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
/// Shared sums, N-bounded filters and the literal eq. 19 are returned as
/// [`bit_process`] returns them.
pub(super) fn bit_process_streamed<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    input: &'env RenewalInput<'env>,
    opt: RenewalOptions,
) -> Result<Stepper> {
    let shared = input
        .shared_bits
        .is_some_and(|s| s.key == BitsKey::of(input, opt));
    // N-bounded: an insertion of the joint law can take tens of milliseconds, stage 1
    // is nearly all the work, and its own progress bar and estimate up front are the
    // useful display (`safety_numbers`' long N-bounded model): built first, as before.
    if shared || opt.direct || input.max_inserts.is_some() {
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
