//! Fit: estimate the FN paper's workload model (§3.1) from a message stream.
//!
//! The model has D previously seen messages ranked by popularity Q = {q_i}; each
//! arrival is a repeat draw from Q with probability p_r, otherwise a new message placed
//! at rank i with probability zeta_i (pushing lower ranks down, evicting rank D). A
//! [`Fitter`] consumes the stream one message at a time (so `compare` feeds one pass to
//! a replay and a fitter together) in memory proportional to the distinct keys.
//!
//! Estimators, all over the measured arrivals (after the warm-up; keys first seen in
//! the warm-up count as previously seen afterwards):
//!
//! * **p_r** = arrivals whose key was seen before / arrivals. This is the model's
//!   meaning exactly: a repeat draw is an arrival of a previously seen message, a new
//!   message is a first sight. The interval is batch means over windows.
//! * **Q** = rank statistics within windows ([`profile`]): per window of W arrivals,
//!   repeat draws per key sorted largest first, summed by rank over windows.
//! * **D (model)** = the number of ranks that received a draw in some window: ranks
//!   never drawn within any window carry no observable mass. Reported beside the
//!   number of distinct keys ever seen, which is *not* the model's D: messages leave Q
//!   (evicted at rank D) while the trace goes on.
//! * **zeta** = maximum-likelihood mixing weights of new messages' draw counts in the W
//!   arrivals after their first sight ([`placement`]).
//! * **one-hit wonders** = distinct keys seen exactly once in the whole trace (warm-up
//!   included), over distinct keys.
//! * the successor-entropy diagnostic of FN §7.2 ([`successor`]) and per-window p_r and
//!   head of Q ([`WindowFit`]) to show non-stationarity.
//!
//! Ties and one-hit wonders: see [`profile`] (ties cannot change a sorted profile; a
//! one-hit wonder has no repeat draw, so it enters Q nowhere) and [`placement`] (a new
//! message never drawn again is attributed to the ranks that best explain zero draws).

pub mod adequacy;
pub mod band;
pub mod placement;
pub mod profile;
pub mod reuse;
pub mod successor;
pub mod table;
pub mod uncertainty;

use std::collections::VecDeque;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::message::{for_each_key_batch, Message, KEY_BATCH};
use crate::prefetch::prefetch_ptr;
use crate::replay::KeyIndex;
use crate::stats::{ratio_interval, Interval};
use crate::workload::{Placement, Workload};
use placement::HorizonCounts;
use profile::RankProfile;
use reuse::{ReuseCounts, ReuseEstimate, ReuseSummary};
use successor::{SuccessorCounts, SuccessorEntropy};
use uncertainty::{FitUncertainty, Groups};

/// Fitting settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FitOptions {
    /// Arrivals that only make keys "seen" (and feed the entropy chain's key ids).
    pub warmup: u64,
    /// W: window length in arrivals, for Q and for the placement horizon.
    pub window: u64,
    /// Bound on distinct (message, successor) pairs of the entropy diagnostic.
    pub pair_cap: usize,
    /// Ranks reported per window in the non-stationarity table.
    pub head: usize,
    /// Confidence level of the p_r interval.
    pub confidence: f64,
}

pub const DEFAULT_WINDOW: u64 = 1 << 16;

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            warmup: 0,
            window: DEFAULT_WINDOW,
            pair_cap: successor::DEFAULT_PAIR_CAP,
            head: 5,
            confidence: 0.99,
        }
    }
}

impl FitOptions {
    pub fn validate(&self) -> Result<()> {
        if self.window < 2 {
            return Err(Error::config(
                "window",
                format!("must be at least 2 arrivals, found {}", self.window),
            ));
        }
        if !(self.confidence > 0.0 && self.confidence < 1.0) {
            return Err(Error::config(
                "confidence",
                format!("must lie in (0, 1), found {}", self.confidence),
            ));
        }
        Ok(())
    }
}

/// p_r and the head of Q in one window.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct WindowFit {
    pub index: u64,
    /// Measured arrivals before the window.
    pub start: u64,
    pub arrivals: u64,
    pub repeats: u64,
    pub p_repeat: f64,
    /// Keys drawn again at least once in the window.
    pub drawn: u64,
    /// The window's own Q-hat at ranks 0..head.
    pub head: Vec<f64>,
}

/// Everything the fit measured, besides the Q and zeta vectors.
#[derive(Clone, Debug, Serialize)]
pub struct FitSummary {
    pub estimator: &'static str,
    pub warmup: u64,
    /// Measured arrivals (after the warm-up).
    pub arrivals: u64,
    pub repeats: u64,
    pub new: u64,
    pub p_repeat: f64,
    /// Batch means over windows (absent with fewer than two complete windows).
    pub p_repeat_interval: Option<Interval>,
    /// Distinct keys in the whole trace, warm-up included.
    pub distinct_keys: u64,
    pub one_hit_wonders: u64,
    pub one_hit_share: f64,
    /// The fitted D: ranks of Q-hat.
    pub model_distinct: usize,
    pub window: u64,
    /// Windows behind Q-hat.
    pub windows: u64,
    /// The trace was shorter than one window, so Q-hat comes from one partial window.
    pub partial_window: bool,
    /// New messages whose horizon was complete (the placement sample).
    pub placement_sample: u64,
    /// New messages whose horizon ran past the end of the trace (not used).
    pub placement_censored: u64,
    /// Share of the placement sample never drawn again within its horizon.
    pub placement_never_redrawn: f64,
    /// Set when zeta could not be estimated and uniform was written instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement_note: Option<String>,
    pub successor_entropy: SuccessorEntropy,
    /// The reuse-distance profile behind the renewal bound ([`reuse`]).
    pub reuse: Option<ReuseSummary>,
    /// Intervals of Q's head and tail mass and of the placement ([`uncertainty`]).
    pub uncertainty: FitUncertainty,
    pub per_window: Vec<WindowFit>,
}

/// A finished fit.
#[derive(Clone, Debug)]
pub struct Fit {
    pub summary: FitSummary,
    /// Q-hat, most popular first.
    pub q: Vec<f64>,
    /// zeta-hat over the same ranks.
    pub zeta: Vec<f64>,
    /// Mean draws per window at each rank (the Poisson means behind zeta-hat).
    pub mean_counts: Vec<f64>,
    /// S(n) = P(reuse distance > n | repeat), estimated and at its upper end.
    pub reuse: Option<ReuseEstimate>,
    /// Whether Q and zeta reproduce the measured reuse profile (None: not checked).
    pub q_check: Option<adequacy::QFitCheck>,
}

impl Fit {
    /// The fitted workload (point estimates, the measured reuse profile), with the
    /// summary (minus the per-window table) as provenance.
    pub fn workload(&self) -> Result<Workload> {
        self.workload_with(
            self.summary.p_repeat,
            self.reuse.as_ref().map(|r| r.point.clone()),
        )
    }

    /// The workload at the conservative end of the fit's uncertainty, for the renewal
    /// bound (a list of one; empty without a reuse profile): the reuse profile at the
    /// upper end of its band, simultaneous over every knot, and p_r's whole interval
    /// (`p_repeat_interval`, over which the renewal bound takes its worst case in one
    /// computation, [`crate::model::fneg::cycle::Draws`]). Both at the conservative level
    /// (1 + level) / 2, so that both hold together with probability at least `level`
    /// (docs/FIT.md). The one-phase ratio is non-decreasing in every U_j, so this is an
    /// upper bound of the true workload's bound whenever both hold.
    pub fn conservative_workloads(&self) -> Result<Vec<Workload>> {
        let Some(r) = &self.reuse else {
            return Ok(Vec::new());
        };
        let p = self.summary.p_repeat;
        let mut w = self.workload_with(p, Some(r.conservative_upper.clone()))?;
        w.p_repeat_interval = r
            .conservative_p_repeat
            .map(|i| [i.low.clamp(0.0, p), i.high.clamp(p, 1.0)]);
        w.validate()?;
        Ok(vec![w])
    }

    fn workload_with(
        &self,
        p_repeat: f64,
        reuse: Option<crate::workload::ReuseProfile>,
    ) -> Result<Workload> {
        let mut w = Workload::explicit(
            self.q.clone(),
            p_repeat,
            Placement::Explicit(self.zeta.clone()),
        );
        w.reuse = reuse;
        let mut prov = serde_json::to_value(&self.summary)
            .map_err(|e| Error::invalid(format!("cannot serialise fit summary: {e}")))?;
        if let Some(o) = prov.as_object_mut() {
            o.remove("per_window");
        }
        w.provenance = Some(prov);
        w.validate()?;
        Ok(w)
    }
}

/// Per-key state, indexed by the key's dense id (which is also its id in the successor
/// chain).
#[derive(Clone, Copy)]
struct KeyState {
    /// Arrivals of the key in the whole trace (saturating).
    total: u32,
    /// Window of `window_count` (u32::MAX: none yet).
    window: u32,
    window_count: u32,
    /// Repeat draws within the horizon after `born`.
    horizon_count: u32,
    /// Measured index of the key's first sight, u64::MAX if in the warm-up.
    born: u64,
    /// Trace index (warm-up included) of the key's latest arrival.
    last: u64,
}

impl KeyState {
    const FRESH: KeyState = KeyState {
        total: 0,
        window: u32::MAX,
        window_count: 0,
        horizon_count: 0,
        born: u64::MAX,
        last: 0,
    };
}

/// Arrivals per batch of [`Fitter::run`], and how far ahead the key-index slots and
/// then the per-key states are prefetched.
const BATCH: usize = KEY_BATCH;
const SLOT_AHEAD: usize = 16;
const STATE_AHEAD: usize = 8;

/// A fit in progress.
pub struct Fitter {
    options: FitOptions,
    keys: KeyIndex,
    states: Vec<KeyState>,
    seen: u64,
    repeats: u64,
    new: u64,
    profile: RankProfile,
    horizons: HorizonCounts,
    /// New keys (by id) whose horizon is open, oldest first.
    open: VecDeque<(u64, u32)>,
    /// Keys (by id) drawn in the current window.
    touched: Vec<u32>,
    window: u32,
    window_arrivals: u64,
    window_repeats: u64,
    windows: Vec<WindowFit>,
    successors: SuccessorCounts,
    partial: Option<Vec<u64>>,
    reuse: ReuseCounts,
    groups: Groups,
}

impl Fitter {
    pub fn new(options: FitOptions) -> Result<Self> {
        options.validate()?;
        Ok(Fitter {
            options,
            keys: KeyIndex::default(),
            states: Vec::new(),
            seen: 0,
            repeats: 0,
            new: 0,
            profile: RankProfile::default(),
            horizons: HorizonCounts::default(),
            open: VecDeque::new(),
            touched: Vec::new(),
            window: 0,
            window_arrivals: 0,
            window_repeats: 0,
            windows: Vec::new(),
            successors: SuccessorCounts::new(options.pair_cap),
            partial: None,
            reuse: ReuseCounts::default(),
            groups: Groups::default(),
        })
    }

    /// Consumes a stream, in batches so that memory accesses can be started ahead.
    pub fn run<I: IntoIterator<Item = Message>>(&mut self, stream: I) {
        for_each_key_batch(stream, |keys| self.run_keys(keys));
    }

    /// Consumes a slice of keys: first resolves every key to its id (prefetching index
    /// slots ahead), then processes the arrivals in order (prefetching per-key states
    /// and successor pairs ahead). Ids are handed out in arrival order either way, so
    /// the result equals pushing the keys one by one.
    pub fn run_keys(&mut self, keys: &[u64]) {
        for chunk in keys.chunks(BATCH) {
            let mut ids = [(0u32, false); BATCH];
            for &k in chunk.iter().take(SLOT_AHEAD) {
                self.keys.prefetch(k);
            }
            for (i, &k) in chunk.iter().enumerate() {
                if let Some(&ahead) = chunk.get(i + SLOT_AHEAD) {
                    self.keys.prefetch(ahead);
                }
                ids[i] = self.resolve(k);
            }
            let ids = &ids[..chunk.len()];
            for (i, &(id, fresh)) in ids.iter().enumerate() {
                if let Some(&(ahead, _)) = ids.get(i + STATE_AHEAD) {
                    prefetch_ptr(self.states.as_ptr().wrapping_add(ahead as usize));
                    let before = ids.get(i + STATE_AHEAD - 1).map_or(id, |x| x.0);
                    self.successors.prefetch(before, ahead);
                }
                self.arrive(id, fresh);
            }
        }
    }

    /// Arrivals consumed, warm-up included.
    pub fn seen(&self) -> u64 {
        self.seen
    }

    /// Consumes one arrival.
    #[inline]
    pub fn push(&mut self, key: u64) {
        let (id, fresh) = self.resolve(key);
        self.arrive(id, fresh);
    }

    /// The key's compact id (ids beyond u32 saturate the successor chain's ids, which
    /// only the entropy diagnostic uses), creating its state on first sight.
    #[inline(always)]
    fn resolve(&mut self, key: u64) -> (u32, bool) {
        let (id, fresh) = self.keys.get_or_insert(key);
        if fresh {
            self.states.push(KeyState::FRESH);
        }
        (id as u32, fresh)
    }

    #[inline(always)]
    fn arrive(&mut self, id: u32, fresh: bool) {
        let index = self.seen;
        self.seen += 1;
        let measured = index.checked_sub(self.options.warmup);
        let w = self.options.window;
        if let Some(m) = measured {
            let window = (m / w) as u32;
            if window != self.window {
                self.close_window();
                self.window = window;
            }
            // Horizons (born, born + W] that ended before this arrival.
            while let Some(&(born, k)) = self.open.front() {
                if born + w >= m {
                    break;
                }
                self.open.pop_front();
                let count = u64::from(self.states[k as usize].horizon_count);
                self.horizons.record(count);
                self.groups.record_horizon(born / w, count);
            }
        }
        let state = &mut self.states[id as usize];
        state.total = state.total.saturating_add(1);
        let previous = std::mem::replace(&mut state.last, index);
        let Some(m) = measured else {
            return;
        };
        self.reuse.record(index, (!fresh).then(|| index - previous));
        self.successors.push(id);
        self.window_arrivals += 1;
        if fresh {
            self.new += 1;
            state.born = m;
            self.open.push_back((m, id));
            return;
        }
        self.repeats += 1;
        self.window_repeats += 1;
        if state.window != self.window {
            state.window = self.window;
            state.window_count = 0;
            self.touched.push(id);
        }
        state.window_count += 1;
        if state.born != u64::MAX && m - state.born <= w {
            state.horizon_count += 1;
        }
    }

    /// Ends the current window: its sorted profile joins Q-hat if it is complete.
    fn close_window(&mut self) {
        let complete = self.window_arrivals == self.options.window;
        let mut counts: Vec<u64> = self
            .touched
            .iter()
            .map(|&k| u64::from(self.states[k as usize].window_count))
            .collect();
        self.touched.clear();
        if self.window_arrivals == 0 {
            return;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let r = self.window_repeats.max(1) as f64;
        let head = counts
            .iter()
            .take(self.options.head)
            .map(|&c| c as f64 / r)
            .collect();
        self.windows.push(WindowFit {
            index: u64::from(self.window),
            start: u64::from(self.window) * self.options.window,
            arrivals: self.window_arrivals,
            repeats: self.window_repeats,
            p_repeat: self.window_repeats as f64 / self.window_arrivals as f64,
            drawn: counts.len() as u64,
            head,
        });
        // Q-hat uses complete windows; only the last window can be partial, and it is
        // kept aside in case there is no complete window at all.
        if complete {
            self.groups
                .add_window(u64::from(self.window), &mut counts.clone());
            self.profile.add_window(&mut counts);
        } else {
            self.partial = Some(counts);
        }
        self.window_arrivals = 0;
        self.window_repeats = 0;
    }
}

impl Fitter {
    /// Ends the stream and estimates the workload.
    pub fn finish(mut self) -> Result<Fit> {
        self.close_window();
        let mut partial_window = false;
        if self.profile.windows() == 0 {
            if let Some(mut counts) = self.partial.take() {
                self.profile.add_window(&mut counts);
                partial_window = true;
            }
        }
        let arrivals = self.repeats + self.new;
        if arrivals == 0 {
            return Err(Error::invalid(format!(
                "nothing to fit: the trace has {} arrivals, all within the warm-up of {}",
                self.seen, self.options.warmup
            )));
        }
        if self.profile.ranks() == 0 {
            return Err(Error::invalid(format!(
                "no key was seen twice among the {arrivals} measured arrivals: the repeat distribution Q cannot be estimated (p_r = 0)"
            )));
        }
        let q = self.profile.repeat_distribution();
        let mean_counts = self.profile.mean_counts();
        let censored = self.open.len() as u64;
        let (zeta, placement_note) = match self.horizons.placement(&mean_counts) {
            Some(z) => (z, None),
            None => {
                let why = if self.new == 0 {
                    "no new message after the warm-up (p_r = 1): placement never acts; uniform written"
                } else {
                    "every new message's horizon runs past the end of the trace: placement not estimated; uniform written (use a smaller --window or a longer trace)"
                };
                (vec![1.0 / q.len() as f64; q.len()], Some(why.to_string()))
            }
        };
        let w = self.options.window as f64;
        let batches: Vec<(f64, f64)> = self
            .windows
            .iter()
            .filter(|x| x.arrivals as f64 == w)
            .map(|x| (x.repeats as f64, x.arrivals as f64))
            .collect();
        let reuse = self.reuse.estimate(self.options.confidence);
        let one_hit = self.states.iter().filter(|s| s.total == 1).count() as u64;
        let distinct = self.states.len() as u64;
        let summary = FitSummary {
            estimator: "reuse-distance survival S(n) per repeat (renewal bound: U_j = S(j - 1)), rank statistics within windows (Q), Poisson-mixture MLE of new messages' draw counts (zeta)",
            warmup: self.options.warmup,
            arrivals,
            repeats: self.repeats,
            new: self.new,
            p_repeat: self.repeats as f64 / arrivals as f64,
            // The reuse batches (32 to 64 of them) give a far tighter t-interval
            // than a handful of fit windows would.
            p_repeat_interval: reuse
                .as_ref()
                .and_then(|r| r.p_repeat)
                .or_else(|| ratio_interval(&batches, self.options.confidence))
                .map(Interval::rate),
            distinct_keys: distinct,
            one_hit_wonders: one_hit,
            one_hit_share: one_hit as f64 / distinct.max(1) as f64,
            model_distinct: q.len(),
            window: self.options.window,
            windows: self.profile.windows(),
            partial_window,
            placement_sample: self.horizons.messages(),
            placement_censored: censored,
            placement_never_redrawn: self.horizons.zero_share(),
            placement_note,
            successor_entropy: self.successors.entropy(self.states.len()),
            reuse: reuse.as_ref().map(|r| r.summary.clone()),
            uncertainty: self.groups.uncertainty(
                &q,
                &zeta,
                &mean_counts,
                self.options.confidence,
            ),
            per_window: self.windows,
        };
        Ok(Fit {
            summary,
            q,
            zeta,
            mean_counts,
            reuse,
            q_check: None,
        })
    }
}

/// Fits a whole stream.
pub fn fit<I: IntoIterator<Item = Message>>(options: FitOptions, stream: I) -> Result<Fit> {
    let mut f = Fitter::new(options)?;
    f.run(stream);
    f.finish()
}
