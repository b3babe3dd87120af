//! Stage 1 of the decomposition: the per-insertion sums of the bit process (eq. 1
//! followed to sigma + k bits, or the N-bounded joint law), handed out in order. Used
//! by the sums built whole ([`super::process`]) and by the sums streamed to the
//! arrivals ([`super::stream`]).

use super::input::{RenewalInput, RenewalOptions};
use crate::model::domain::OutsideModel;
use crate::model::false_negative::bitdist::{BitDist, Summary};
use crate::model::false_negative::nbounded::JointDist;
use crate::model::tau::Transitions;
use rbf_foundations::error::Result;

/// Most insertions [`per_insertion`] follows (2^26 summaries of 32 bytes: 2 GiB). A
/// sigma-bounded filter with sigma + k below M bits leaves the sigma + k process after
/// about (M / k) ln(M / (M - sigma - k)) insertions, far fewer for any filter the models
/// can otherwise handle.
pub(super) const MAX_INSERTIONS: usize = 1 << 26;

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
pub(super) fn stage_progress(
    input: &RenewalInput,
    opt: RenewalOptions,
) -> rbf_foundations::progress::Progress {
    if opt.progress {
        rbf_foundations::progress::Progress::new(
            "renewal bound (bit distribution)",
            expected_insertions(input),
            "insertions",
        )
    } else {
        rbf_foundations::progress::Progress::hidden()
    }
}

/// Hands the per-insertion sums to `sink` in order, n = 0, 1, ..., until the sigma + k
/// (or N + 1) process is over; returns the mass the recursion dropped and the frozen
/// half's E[tau(l, l)].
pub(super) fn per_insertion_sums(
    input: &RenewalInput,
    opt: RenewalOptions,
    stage: &rbf_foundations::progress::Progress,
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

/// E[tau(l, l)] for the bit counts sigma + 1 + d at which cycles crossed sigma.
pub(super) fn frozen_lucky(t: &Transitions, sigma: u64, crossed: &[f64]) -> f64 {
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
    progress: &rbf_foundations::progress::Progress,
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
        // wait 40 s.
        rbf_foundations::progress::check_interrupt()?;
        if count.is_multiple_of(64) {
            progress.set(count as f64);
        }
        if s.alive_cap < tiny.max(1e-300) {
            return Ok(count);
        }
        if count >= limit {
            return Err(OutsideModel::BitProcessRunning {
                limit,
                mass: s.alive_cap,
            }
            .into());
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
                &rbf_foundations::progress::Progress::hidden(),
                &mut |_| Ok(()),
                || Ok(stuck)
            ),
            Err(e) if matches!(
                e.layer::<OutsideModel>(),
                Some(OutsideModel::BitProcessRunning { limit: 1000, .. })
            )
        ));
    }
}
