//! Message capacity for a target average FP rate (FP paper §V-B) and the best k (§V-C).
//!
//! "Capacity" is the largest expected number of messages per cycle a filter of M bits
//! can take while its model's average FP rate stays at or below the target, where a
//! message is an arrival that is first in its cycle (with p_r = 0: every arrival), the
//! false positives included:
//!
//! * sigma-bounded: E[N_0] (eqs. 20-23) at the largest sigma whose f_sigma^1 (or
//!   f_sigma^2 for two phases of M/2 bits each, messages per cycle of one half) meets
//!   the target. f_sigma is a prefix average of the increasing rho(i), so it grows with
//!   sigma and the search stops at the first sigma above the target.
//! * f_a: the paper's N bit-setting messages per cycle plus the expected false positives
//!   between them, sum f_i/(1-f_i), for the largest N whose f_a (eq. 3) meets the target.
//! * f_w: the largest n with eq. 1 at or below the target: the classic sizing, a filter
//!   holding n messages before a lookup's FP chance exceeds the target.
//!
//! Each is maximised over k = 1..=k_max; `best_k` is the one-phase sigma-bounded winner.
//! One pass over the bit-count chain per k serves every sigma (see [`super::renewal`]).

use std::collections::VecDeque;
use std::ops::ControlFlow;

use serde::Serialize;

use super::nbounded::{worst_case, NBoundedSums, PROGRESS_TERMS};
use super::renewal::{Renewal, Visit, PROGRESS_FROM};
use super::sigma::{predict_sigma, two_phase_fp, CycleSums, FrozenSums};
use crate::model::tau::Transitions;
use rbf_data::filter::{FilterConfig, Hashing};
use rbf_foundations::error::{Error, Problem, Result};
use rbf_foundations::progress::Progress;

/// What to size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CapacityQuery {
    /// M: total bits (two phases: two halves of M/2).
    pub memory: u64,
    /// Target average (count-instance) FP rate, in (0, 1).
    pub target: f64,
    /// k is searched over 1..=k_max.
    pub k_max: u32,
    pub hashing: Hashing,
    pub retaining: bool,
    /// Two-phase copy-over (only changes the two-phase rate).
    pub copy_over: bool,
}

/// The largest sigma meeting the target and what it yields.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SigmaCapacity {
    pub sigma: u64,
    pub fp: f64,
    pub messages_per_cycle: f64,
}

/// Capacities for one k.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct KCapacity {
    pub k: u32,
    /// None when even sigma = 0 misses the target.
    pub one_phase: Option<SigmaCapacity>,
    pub two_phase: Option<SigmaCapacity>,
    /// The paper's N (bit-setting messages per cycle) for f_a, and the capacity.
    pub n_fa: u64,
    pub capacity_fa: f64,
    /// The largest n with eq. 1 <= target.
    pub capacity_fw: u64,
}

/// The answer to a [`CapacityQuery`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Capacity {
    pub memory: u64,
    pub target_fp: f64,
    pub capacity_sigma: f64,
    pub best_k: u32,
    pub sigma: u64,
    pub capacity_two_phase: f64,
    pub best_k_two_phase: u32,
    pub capacity_fa: f64,
    pub best_k_fa: u32,
    pub capacity_fw: f64,
    pub best_k_fw: u32,
    /// capacity_fa / capacity_sigma and capacity_fw / capacity_sigma (the paper finds
    /// about 0.7 for f_w).
    pub ratio_fa: f64,
    pub ratio_fw: f64,
    pub per_k: Vec<KCapacity>,
}

/// Sizes a filter: capacities for every k and the best of each model.
pub fn capacity(q: &CapacityQuery) -> Result<Capacity> {
    check_query(q)?;
    let progress = if q.memory >= PROGRESS_FROM {
        Progress::new(
            format!("capacity search, M = {}", q.memory),
            search_states(q),
            "states",
        )
    } else {
        Progress::hidden()
    };
    let per_k = (1..=q.k_max)
        .map(|k| k_capacity(q, k, &progress))
        .collect::<Result<Vec<_>>>()?;
    Ok(best_of(q, per_k))
}

/// Errors naming the flag when the target, the memory or k_max is out of range.
fn check_query(q: &CapacityQuery) -> Result<()> {
    if !(q.target > 0.0 && q.target < 1.0) {
        return Err(Error::setting(
            "target-fp",
            Problem::range("must be strictly between 0 and 1", q.target),
        ));
    }
    if q.memory < 4 || q.memory > rbf_data::filter::MAX_MEMORY {
        return Err(Error::setting(
            "memory",
            Problem::range("must be between 4 bits and 2^40 bits", q.memory),
        ));
    }
    if q.k_max == 0 || q.k_max > rbf_data::filter::MAX_HASHES {
        return Err(Error::setting(
            "max-hashes",
            Problem::range(
                format!("allowed range is 1..={}", rbf_data::filter::MAX_HASHES),
                q.k_max,
            ),
        ));
    }
    Ok(())
}

/// The search's expected states, for the progress bar.
///
/// One pass over the bit chain of M (and M/2) bits per k, up to the sigma where
/// the FP rate passes the target: about m target^(1/k) states (eq. 1 inverted).
/// f_a's sum has a term per message up to eq. 1's capacity, -M ln(1 - t^(1/k)) / k.
fn search_states(q: &CapacityQuery) -> f64 {
    (1..=q.k_max)
        .map(|k| {
            let fill = q.target.powf(1.0 / f64::from(k));
            q.memory as f64 * (1.5 * fill - (-fill).ln_1p() / f64::from(k))
        })
        .sum()
}

/// The capacities of every model for `k` hash functions.
fn k_capacity(q: &CapacityQuery, k: u32, progress: &Progress) -> Result<KCapacity> {
    let shape = |m: u64, phases: u8| SigmaShape {
        m,
        k,
        phases,
        hashing: q.hashing,
        retaining: q.retaining,
        copy_over: q.copy_over,
        target: q.target,
    };
    let one = if q.hashing == Hashing::Colliding || u64::from(k) < q.memory {
        largest_sigma(&shape(q.memory, 1), progress)?
    } else {
        None
    };
    let half = q.memory / 2;
    let two = if q.hashing == Hashing::Colliding || u64::from(k) < half {
        largest_sigma(&shape(half, 2), progress)?
    } else {
        None
    };
    let (n_fa, capacity_fa) = fa_capacity(q.memory, k, q.target, progress)?;
    Ok(KCapacity {
        k,
        one_phase: one,
        two_phase: two,
        n_fa,
        capacity_fa,
        capacity_fw: fw_capacity(q.memory, k, q.target),
    })
}

/// The answer from every k's capacities: the best k of each model (the first of equal
/// ones) and the ratios to the sigma-bounded capacity.
fn best_of(q: &CapacityQuery, per_k: Vec<KCapacity>) -> Capacity {
    let best = |f: &dyn Fn(&KCapacity) -> f64| {
        per_k
            .iter()
            .map(|c| (c.k, f(c)))
            .fold((1, 0.0), |a, b| if b.1 > a.1 { b } else { a })
    };
    let msgs = |s: Option<SigmaCapacity>| s.map_or(0.0, |s| s.messages_per_cycle);
    let (best_k, capacity_sigma) = best(&|c| msgs(c.one_phase));
    let (best_k_two_phase, capacity_two_phase) = best(&|c| msgs(c.two_phase));
    let (best_k_fa, capacity_fa) = best(&|c| c.capacity_fa);
    let (best_k_fw, capacity_fw) = best(&|c| c.capacity_fw as f64);
    let sigma = per_k
        .iter()
        .find(|c| c.k == best_k)
        .and_then(|c| c.one_phase)
        .map_or(0, |s| s.sigma);
    let ratio = |x: f64| {
        if capacity_sigma > 0.0 {
            x / capacity_sigma
        } else {
            0.0
        }
    };
    Capacity {
        memory: q.memory,
        target_fp: q.target,
        capacity_sigma,
        best_k,
        sigma,
        capacity_two_phase,
        best_k_two_phase,
        capacity_fa,
        best_k_fa,
        capacity_fw,
        best_k_fw,
        ratio_fa: ratio(capacity_fa),
        ratio_fw: ratio(capacity_fw),
        per_k,
    }
}

/// The largest sigma whose FP-paper average FP rate (count-instance f_sigma, one phase,
/// or f_sigma^2 for two) meets `target`, for `filter`'s M, k, phases, hashing, retaining
/// and copy-over; its trigger (sigma or N) is ignored, so a filter whose sigma is yet to
/// be chosen is asked as it is. sigma runs from k (the FN models' least) to the bits per
/// array less one; f_sigma grows with sigma, so one pass up the bit-count chain finds it
/// (§V-B). Errors name `target-fp` when the target is not a rate or even sigma = k
/// misses it.
pub fn sigma_for_target(filter: &FilterConfig, target: f64) -> Result<SigmaCapacity> {
    let progress = if filter.half_memory() >= PROGRESS_FROM {
        Progress::new(
            format!(
                "FP model: the largest sigma for FP {target}, M = {}",
                filter.memory
            ),
            sigma_states(filter.half_memory(), filter.hashes, target),
            "states",
        )
    } else {
        Progress::hidden()
    };
    sigma_for_target_tracked(filter, target, &progress)
}

/// About how many states [`sigma_for_target`] visits for `m` bits per array: 1.5 m
/// target^(1/k) (eq. 1 inverted), for a caller that shows one progress display over
/// several searches.
pub fn sigma_states(m: u64, k: u32, target: f64) -> f64 {
    1.5 * m as f64 * target.powf(1.0 / f64::from(k))
}

/// [`sigma_for_target`], reporting its states to `progress`.
pub fn sigma_for_target_tracked(
    filter: &FilterConfig,
    target: f64,
    progress: &Progress,
) -> Result<SigmaCapacity> {
    if !(target > 0.0 && target < 1.0) {
        return Err(Error::setting(
            "target-fp",
            Problem::range("must lie strictly between 0 and 1", target),
        ));
    }
    filter.validate_shape()?;
    let m = filter.half_memory();
    let k = filter.hashes;
    let shape = SigmaShape {
        m,
        k,
        phases: filter.phases,
        hashing: filter.hashing,
        retaining: filter.retaining,
        copy_over: filter.copy_over,
        target,
    };
    match largest_sigma(&shape, progress)? {
        Some(s) if s.sigma >= u64::from(k) => Ok(s),
        _ => {
            let least = u64::from(k).min(m.saturating_sub(1));
            let renewal = Renewal::new(Transitions::new(m, k, filter.hashing), filter.retaining);
            let fp = predict_sigma(&renewal, least, filter.phases, filter.copy_over)?.fp_sigma;
            // The target below what the filter can reach, said with the reachable
            // rate first: a sentence no other kind renders.
            Err(Error::setting(
                "target-fp",
                Problem::Other(format!(
                    "{target} is below the FP rate {fp:.3e} of the smallest sigma (= k = {least}) for M = {}: use more memory or a larger target",
                    filter.memory
                )),
            ))
        }
    }
}

/// One array's settings and the target, for [`largest_sigma`].
struct SigmaShape {
    /// Bits per array.
    m: u64,
    k: u32,
    phases: u8,
    hashing: Hashing,
    retaining: bool,
    copy_over: bool,
    target: f64,
}

/// The largest sigma < m (bits per array) whose f_sigma (one or two phases) meets the
/// target, by one pass with no cutoff.
fn largest_sigma(q: &SigmaShape, progress: &Progress) -> Result<Option<SigmaCapacity>> {
    let m = q.m;
    let t = Transitions::new(m, q.k, q.hashing);
    let renewal = Renewal::new(t, q.retaining);
    // Retaining with sigma below the retained insertion's reach: the cycle's start
    // depends on sigma, so those few thresholds are solved one by one.
    let sweep_from = if q.retaining { renewal.init_top() } else { 0 };
    let mut best = None;
    for sigma in 0..sweep_from.min(m) {
        let p = predict_sigma(&renewal, sigma, q.phases, q.copy_over)?;
        if p.fp_sigma <= q.target {
            best = Some(SigmaCapacity {
                sigma,
                fp: p.fp_sigma,
                messages_per_cycle: p.expected_messages_per_cycle,
            });
        }
    }
    let mut sweep = Sweep::new(t, q.phases, q.copy_over);
    let mut found = None;
    renewal.pass(None, progress, |v| {
        let sigma = v.state;
        if sigma >= m {
            return ControlFlow::Break(());
        }
        let (fp, messages) = sweep.add(v);
        if sigma < sweep_from {
            return ControlFlow::Continue(());
        }
        if fp > q.target || !fp.is_finite() {
            return ControlFlow::Break(());
        }
        found = Some(SigmaCapacity {
            sigma,
            fp,
            messages_per_cycle: messages,
        });
        ControlFlow::Continue(())
    })?;
    Ok(found.or(best))
}

/// Running one- or two-phase rate as sigma grows by one state at a time.
struct Sweep {
    t: Transitions,
    phases: u8,
    copy_over: bool,
    active: CycleSums,
    /// rho(sigma + 1..=sigma + k): what the frozen half can hold after this cycle.
    rho_ahead: VecDeque<f64>,
}

impl Sweep {
    fn new(t: Transitions, phases: u8, copy_over: bool) -> Self {
        Sweep {
            t,
            phases,
            copy_over,
            active: CycleSums::default(),
            rho_ahead: (0..u64::from(t.k)).map(|j| t.all_set(j)).collect(),
        }
    }

    /// Adds state sigma = v.state; returns (f_sigma, messages per cycle) for it.
    fn add(&mut self, v: &Visit) -> (f64, f64) {
        self.active.add(v);
        if self.phases == 1 {
            return (self.active.fp(), self.active.arrivals);
        }
        // Before this state rho_ahead covered v.state..v.state+k-1; slide by one.
        self.rho_ahead.pop_front();
        self.rho_ahead
            .push_back(self.t.all_set(v.state + u64::from(self.t.k)));
        let mut frozen = FrozenSums::default();
        for (w, r) in v.pending.iter().zip(&self.rho_ahead) {
            frozen.add_exit(*w, *r);
        }
        let fp = two_phase_fp(&self.active, &frozen, self.copy_over);
        let stretch = if self.copy_over {
            1.0
        } else {
            frozen.stretch / frozen.recycles
        };
        (fp, self.active.arrivals * stretch)
    }
}

/// The largest paper-N with f_a(N) <= target (held counts 0..N-1), and N plus the
/// expected false positives among its arrivals.
fn fa_capacity(m: u64, k: u32, target: f64, progress: &Progress) -> Result<(u64, f64)> {
    let mut s = NBoundedSums::default();
    let mut best = (0, 0.0);
    for n in 0u64.. {
        if n % PROGRESS_TERMS == PROGRESS_TERMS - 1 {
            progress.advance(PROGRESS_TERMS as f64)?;
        }
        s.add(worst_case(m, k, n));
        if s.actual() > target {
            break;
        }
        best = (s.count, s.messages());
    }
    Ok(best)
}

/// The largest n with eq. 1 at or below the target.
fn fw_capacity(m: u64, k: u32, target: f64) -> u64 {
    // Invert eq. 1, then settle the rounding with the formula itself.
    let filled = target.powf(1.0 / f64::from(k));
    let guess = (-filled).ln_1p() / (f64::from(k) * (-1.0 / m as f64).ln_1p());
    let mut n = if guess.is_finite() && guess > 0.0 {
        guess.floor() as u64
    } else {
        0
    };
    while worst_case(m, k, n + 1) <= target {
        n += 1;
    }
    while n > 0 && worst_case(m, k, n) > target {
        n -= 1;
    }
    n
}
