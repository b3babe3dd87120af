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
//!   message is a first sight. Its interval is batch means ([`reuse`]).
//! * **the reuse profile** S(n) = P(d > n) of the repeats' reuse distances ([`reuse`]):
//!   what the renewal bound needs of Q and zeta, measured directly (docs/FIT.md).
//! * **Q, D and zeta** for the Markov methods, by minimum distance: the piecewise-Zipf
//!   Q and mixture placement whose exactly predicted repeat statistics (reuse distance,
//!   age, distance to the second-last arrival: [`observables`]) come closest to the
//!   trace's, with a goodness-of-fit test and the range of D the trace allows
//!   ([`min_distance`], [`adequacy`]).
//! * **one-hit wonders** = distinct keys seen exactly once in the whole trace (warm-up
//!   included), over distinct keys.
//! * the successor-entropy diagnostic of FN §7.2 ([`successor`]) and per-window p_r and
//!   head of the window's own sorted counts ([`WindowFit`]) to show non-stationarity.

pub mod adequacy;
pub mod band;
pub mod beside;
pub mod command;
mod error;
pub mod least_squares;
pub mod min_distance;
pub mod observables;
pub mod reuse;
pub mod successor;
pub mod successor_feed;
pub mod table;

use serde::Serialize;

use adequacy::QFitCheck;
use min_distance::{Family, Hints, MinDistanceFit};
use observables::{ObservableCounts, RepeatValues};
use rbf_data::message::{for_each_key_batch, Message, KEY_BATCH};
use rbf_data::workload::{Placement, Workload};
use rbf_foundations::error::{Error, Problem, Result};
use rbf_foundations::prefetch::prefetch_ptr;
use rbf_foundations::slot_table::KeyIndex;
use rbf_foundations::stats::Interval;
use reuse::{ReuseCounts, ReuseEstimate, ReuseSummary};
use successor::SuccessorEntropy;
use successor_feed::SuccessorFeed;

pub use error::FitError;

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
    /// Fit Q, D and the placement (the Markov methods' inputs; most of a short trace's
    /// fitting time). Off where only p_r and the reuse profile are used (the renewal
    /// bound from a profile does not read Q: the coverage study's fit units).
    pub popularity: bool,
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
            popularity: true,
        }
    }
}

impl FitOptions {
    pub fn validate(&self) -> Result<()> {
        if self.window < 2 {
            return Err(Error::setting(
                "window",
                Problem::range("must be at least 2 arrivals", self.window),
            ));
        }
        if !(self.confidence > 0.0 && self.confidence < 1.0) {
            return Err(Error::setting(
                "confidence",
                Problem::range("must lie in (0, 1)", self.confidence),
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
    /// Batch means (absent with fewer than two batches).
    pub p_repeat_interval: Option<Interval>,
    /// Distinct keys in the whole trace, warm-up included.
    pub distinct_keys: u64,
    pub one_hit_wonders: u64,
    pub one_hit_share: f64,
    /// The fitted D: ranks of Q.
    pub model_distinct: usize,
    /// Keys seen again at least once (what a static ranking of the trace would hold).
    pub keys_repeated: u64,
    /// W: window of the per-window table, and how many windows there are.
    pub window: u64,
    pub windows: u64,
    pub successor_entropy: SuccessorEntropy,
    /// The reuse-distance profile behind the renewal bound ([`reuse`]).
    pub reuse: Option<ReuseSummary>,
    /// Q, D and the placement by minimum distance ([`min_distance`]), with its test;
    /// None when the trace is too short for it (then Q is the static ranking of the
    /// keys' repeat counts, untested: `Fit::q_check` says so).
    pub popularity: Option<PopularitySummary>,
    pub per_window: Vec<WindowFit>,
}

/// The minimum-distance fit of Q, D and the placement, for people and JSON.
#[derive(Clone, Debug, Serialize)]
pub struct PopularitySummary {
    /// D, rounded.
    pub distinct: usize,
    /// Q's exponent per decade of rank (ranks 1-9, 10-99, ... counting from 1).
    pub exponents: Vec<f64>,
    /// Placement weights: the top rank, the bottom rank, equal segments (most popular
    /// first).
    pub placement_top: f64,
    pub placement_bottom: f64,
    pub placement_segments: Vec<f64>,
    /// Sum of squared standardised residuals over the compared points.
    pub chi2: f64,
    pub points: usize,
    /// The goodness-of-fit test and the D the trace cannot rule out.
    pub check: adequacy::QFitCheck,
}

impl PopularitySummary {
    fn of(f: &MinDistanceFit) -> PopularitySummary {
        PopularitySummary {
            distinct: (f.family.distinct.round() as usize).max(1),
            exponents: f.family.exponents.clone(),
            placement_top: f.family.top,
            placement_bottom: f.family.bottom,
            placement_segments: f.family.segments.to_vec(),
            chi2: f.chi2,
            points: f.points,
            check: f.check.clone(),
        }
    }
}

/// A finished fit.
#[derive(Clone, Debug)]
pub struct Fit {
    pub summary: FitSummary,
    /// Q-hat, most popular first.
    pub q: Vec<f64>,
    /// zeta-hat over the same ranks.
    pub zeta: Vec<f64>,
    /// S(n) = P(reuse distance > n | repeat), estimated and at its upper end.
    pub reuse: Option<ReuseEstimate>,
    /// The minimum-distance fit behind Q and zeta (None: the windowed estimates are
    /// used, unchecked).
    pub family: Option<Family>,
    /// Whether Q and zeta reproduce the trace's repeat statistics (None: not checked).
    pub q_check: Option<adequacy::QFitCheck>,
    /// The trace's repeat statistics the fit compared with ([`observables`]).
    pub observed: observables::Measured,
}

impl Fit {
    /// D as an estimate: the fitted D where the fitted Q passed its test, None where Q
    /// was not fitted, the trace was too short to test it or the model was rejected (a
    /// rejected fit's D is the closest member's, not an estimate).
    pub fn distinct_estimate(&self) -> Option<usize> {
        let p = self.summary.popularity.as_ref()?;
        p.check.fits.then_some(p.distinct)
    }

    /// What the outputs print for D: the estimate, or why there is none.
    pub fn distinct_label(&self) -> String {
        if let Some(d) = self.distinct_estimate() {
            return d.to_string();
        }
        match &self.summary.popularity {
            Some(_) => "none (the model does not fit this trace)".to_string(),
            None => "not fitted".to_string(),
        }
    }

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
    /// computation, `rbf_predicted::model::false_negative::renewal::cycle::Draws`).
    /// Both at the conservative level (1 + level) / 2, so that both hold together with probability at least `level`
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
        reuse: Option<rbf_data::workload::ReuseProfile>,
    ) -> Result<Workload> {
        let mut w = match &self.family {
            Some(f) => f.workload(p_repeat),
            None => Workload::explicit(
                self.q.clone(),
                p_repeat,
                Placement::Explicit(self.zeta.clone()),
            ),
        };
        w.reuse = reuse;
        let mut prov = serde_json::to_value(&self.summary)
            .map_err(|e| Error::encode("serialise fit summary", e))?;
        if let Some(o) = prov.as_object_mut() {
            o.remove("per_window");
            // The Q-fit test goes with the workload (also when no test could be
            // made), so that a command reading the file can say the fit failed.
            if let Some(c) = &self.q_check {
                let c = serde_json::to_value(c)
                    .map_err(|e| Error::encode("serialise the Q-fit check", e))?;
                o.insert(adequacy::PROVENANCE_KEY.to_string(), c);
            }
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
    /// Measured index of the key's first sight, u64::MAX if in the warm-up.
    born: u64,
    /// Trace index (warm-up included) of the key's latest arrival.
    last: u64,
    /// Trace index of the arrival before that, u64::MAX if none.
    before_last: u64,
}

impl KeyState {
    const FRESH: KeyState = KeyState {
        total: 0,
        window: u32::MAX,
        window_count: 0,
        born: u64::MAX,
        last: 0,
        before_last: u64::MAX,
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
    /// Keys (by id) drawn in the current window.
    touched: Vec<u32>,
    window: u32,
    window_arrivals: u64,
    window_repeats: u64,
    windows: Vec<WindowFit>,
    successors: SuccessorFeed,
    reuse: ReuseCounts,
    observables: ObservableCounts,
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
            touched: Vec::new(),
            window: 0,
            window_arrivals: 0,
            window_repeats: 0,
            windows: Vec::new(),
            successors: SuccessorFeed::new(options.pair_cap),
            reuse: ReuseCounts::default(),
            observables: ObservableCounts::default(),
        })
    }

    /// Consumes a stream, in batches so that memory accesses can be started ahead.
    pub fn run<I: IntoIterator<Item = Message>>(&mut self, stream: I) {
        for_each_key_batch(stream, |keys| self.run_keys(keys));
    }

    /// Consumes a slice of keys: first resolves every key to its id (prefetching index
    /// slots ahead), then processes the arrivals in order (prefetching per-key states
    /// ahead; the successor pairs are counted on their own thread, which prefetches
    /// them). Ids are handed out in arrival order either way, so the result equals
    /// pushing the keys one by one.
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
        }
        let state = &mut self.states[id as usize];
        state.total = state.total.saturating_add(1);
        let previous = std::mem::replace(&mut state.last, index);
        let before = std::mem::replace(
            &mut state.before_last,
            if fresh { u64::MAX } else { previous },
        );
        let Some(m) = measured else {
            return;
        };
        self.reuse.record(index, (!fresh).then(|| index - previous));
        self.observables.record(
            m,
            (!fresh).then(|| RepeatValues {
                reuse: index - previous,
                age: (state.born != u64::MAX).then(|| m - state.born),
                second: (before != u64::MAX).then(|| index - before),
            }),
        );
        self.successors.push(id);
        self.window_arrivals += 1;
        if fresh {
            self.new += 1;
            state.born = m;
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
    }

    /// Ends the current window: its sorted profile joins Q-hat if it is complete.
    fn close_window(&mut self) {
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
        self.window_arrivals = 0;
        self.window_repeats = 0;
    }
}

impl Fitter {
    /// Ends the stream and estimates the workload.
    pub fn finish(mut self) -> Result<Fit> {
        self.close_window();
        let arrivals = self.repeats + self.new;
        if arrivals == 0 {
            return Err(FitError::AllInWarmup {
                arrivals: self.seen,
                warmup: self.options.warmup,
            }
            .into());
        }
        if self.repeats == 0 {
            return Err(FitError::NoRepeat { arrivals }.into());
        }
        // The diagnostic first, and its pair table (the fit's largest, up to 85 MB)
        // freed before the popularity fit allocates its own.
        let successors = self.successors.finish();
        let successor_entropy = successors.entropy(self.states.len());
        drop(successors);
        let reuse = self.reuse.estimate(self.options.confidence);
        let one_hit = self.states.iter().filter(|s| s.total == 1).count() as u64;
        let distinct = self.states.len() as u64;
        let keys_repeated = self.states.iter().filter(|s| s.total >= 2).count() as u64;
        let p_repeat = self.repeats as f64 / arrivals as f64;
        let measured = self.observables.estimate(&min_distance::scales(arrivals));
        let popularity = if self.options.popularity {
            min_distance::fit(
                &measured,
                p_repeat,
                Hints {
                    distinct: keys_repeated.max(2) as f64,
                    keys: distinct as f64,
                },
            )
        } else {
            None
        };
        let (q, zeta, q_check) = match &popularity {
            Some(f) => {
                let w = f.family.workload(p_repeat);
                (
                    w.repeat_distribution()?.into(),
                    w.placement_distribution()?.into(),
                    f.check.clone(),
                )
            }
            None => {
                let q = static_ranking(&self.states);
                let zeta = vec![1.0 / q.len() as f64; q.len()];
                (
                    q,
                    zeta,
                    QFitCheck::untested(if self.options.popularity {
                        format!(
                            "the trace is too short to test a fit of Q ({arrivals} measured arrivals): Q is the keys' repeat counts ranked, the placement uniform"
                        )
                    } else {
                        "Q and the placement were not fitted (only p_r and the reuse profile were asked for): Q is the keys' repeat counts ranked, the placement uniform".to_string()
                    }),
                )
            }
        };
        let summary = FitSummary {
            estimator: "p_r: repeats over arrivals; reuse-distance survival S(n) per repeat (renewal bound: U_j = S(j - 1)); Q (piecewise Zipf, D) and placement (top, bottom, segments) by minimum distance on the exactly predicted transforms of the repeats' reuse distance, age and second-last distance",
            warmup: self.options.warmup,
            arrivals,
            repeats: self.repeats,
            new: self.new,
            p_repeat,
            p_repeat_interval: reuse.as_ref().and_then(|r| r.p_repeat).map(Interval::rate),
            distinct_keys: distinct,
            one_hit_wonders: one_hit,
            one_hit_share: one_hit as f64 / distinct.max(1) as f64,
            model_distinct: q.len(),
            keys_repeated,
            window: self.options.window,
            windows: self.windows.len() as u64,
            successor_entropy,
            reuse: reuse.as_ref().map(|r| r.summary.clone()),
            popularity: popularity.as_ref().map(PopularitySummary::of),
            per_window: self.windows,
        };
        Ok(Fit {
            summary,
            q,
            zeta,
            reuse,
            family: popularity.map(|f| f.family),
            q_check: Some(q_check),
            observed: measured,
        })
    }
}

/// Q as the keys' repeat counts over the whole trace, most repeated first: the ranking
/// of a static workload, the fallback when the trace is too short for the fit.
fn static_ranking(states: &[KeyState]) -> Vec<f64> {
    let mut counts: Vec<u64> = states
        .iter()
        .filter(|s| s.total >= 2)
        .map(|s| u64::from(s.total) - 1)
        .collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let total: u64 = counts.iter().sum();
    counts.iter().map(|&c| c as f64 / total as f64).collect()
}

/// Fits a whole stream.
pub fn fit<I: IntoIterator<Item = Message>>(options: FitOptions, stream: I) -> Result<Fit> {
    let mut f = Fitter::new(options)?;
    f.run(stream);
    f.finish()
}
