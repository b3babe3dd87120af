//! `rbf size TRACE`: a filter sized on a trace by the bound that holds on it, and the
//! smallest memory a replay of the same trace shows sufficient, side by side.
//!
//! Why not the fitted model: on real traffic the fitted model's renewal bound has fallen
//! to a fifth of what happened (docs/TRACE-BOUND.md), so a size read off it can be far
//! too small. The renewal argument on the trace's own recycles (renewal-trace,
//! [`rbf_observed::trace_renewal`]) is an upper bound on this trace whatever its workload does,
//! and it is computed in the replay's pass. So each memory size tried costs one pass
//! over the trace, which replays every candidate filter (k = 1..K, one and two phases,
//! sigma from the FP model for the FP target) and follows the attempt chain for each:
//!
//! * the **bound's size** is the smallest memory at which some candidate's renewal-trace
//!   bound meets the FN target: what the tool recommends;
//! * the **replay's size** is the smallest memory at which some candidate's observed FN
//!   (the point over its hash seeds' complete cycles) meets it: what hindsight on this
//!   trace would have needed, the yardstick of the bound's price.
//!
//! Both come from the same passes (a pass evaluates the midpoints of both bisections).
//! The workload is fitted in the first pass, and the fitted model's renewal bound at the
//! chosen filter is judged against the trace (it keeps a standing only where the trace's
//! own recycles do not show it too low), so the output says whether the model alone
//! would have sized this trace safely.
//!
//! Memory: the candidates' ground truths and last-seen tables, each growing with the
//! trace's distinct keys. The trace is decoded once; its keys wait on disk for the
//! later passes ([`super::spool`]), never in memory.

use rayon::prelude::*;
use serde::Serialize;

use super::{MAX_MEMORY, MIN_MEMORY, RELATIVE_PRECISION};
use crate::compare::{
    judge, with_judged_positions, Fitted, JudgeOptions, Judgement, Observed, Rate, Subject,
};
use rbf_data::filter::{FilterConfig, Hashing};
use rbf_data::ingest::{IngestSummary, MessageSource};
use rbf_foundations::error::{Error, Problem, Result};
use rbf_foundations::progress::Progress;
use rbf_observed::fit::beside::beside;
use rbf_observed::fit::{FitOptions, FitSummary, Fitter};
use rbf_observed::replay::{source_batches, ReplayOptions, Replays, DEFAULT_HASH_SEEDS};
use rbf_observed::trace_renewal::{TraceBound, TraceRenewal};
use rbf_predicted::model::false_negative::{Method, DEFAULT_EPS};
use rbf_predicted::model::false_positive::{predict, sigma_for_target};

use super::spool::Spool;

/// What `rbf size TRACE` is asked.
#[derive(Clone, Debug)]
pub struct TraceSizeRequest {
    pub target_fp: f64,
    /// The FN target (smallest memory); None with `memory` (best FN there).
    pub target_fn: Option<f64>,
    pub memory: Option<u64>,
    /// Phase counts to try (1, 2 or both).
    pub phases: Vec<u8>,
    /// k is tried from 1 to this.
    pub max_hashes: u32,
    pub hashing: Hashing,
    /// Warm-up and interval level of every replay.
    pub replay: ReplayOptions,
    /// Filters (hash seeds) per candidate: the observed point and interval cover the
    /// hash positions, as in `rbf compare`.
    pub hash_seeds: u32,
    /// The fitted model's renewal bound at the chosen filter: truncation and tolerance.
    pub eps: f64,
    pub tolerance: Option<f64>,
    /// Progress on stderr (the command line; off for library callers).
    pub progress: bool,
}

impl TraceSizeRequest {
    /// The request for `target_fp` and `target_fn` (or the best FN at `memory`), every
    /// other setting at the command's default.
    pub fn new(target_fp: f64, target_fn: Option<f64>, memory: Option<u64>) -> Self {
        TraceSizeRequest {
            target_fp,
            target_fn,
            memory,
            phases: vec![1, 2],
            max_hashes: 8,
            hashing: Hashing::Colliding,
            replay: ReplayOptions::default(),
            hash_seeds: DEFAULT_HASH_SEEDS,
            eps: DEFAULT_EPS,
            tolerance: None,
            progress: false,
        }
    }

    fn check(&self) -> Result<()> {
        let options = super::SizeOptions {
            target_fp: self.target_fp,
            phases: self.phases.clone(),
            max_hashes: self.max_hashes,
            hashing: self.hashing,
            eps: self.eps,
            renewal_tolerance: self.tolerance,
            progress: false,
        };
        super::check(&options, self.target_fn)?;
        if self.target_fn.is_none() && self.memory.is_none() {
            return Err(Error::setting(
                "target-fn",
                Problem::Missing(super::GIVE_A_GOAL),
            ));
        }
        Ok(())
    }
}

/// One candidate filter replayed on the trace.
#[derive(Clone, Debug, Serialize)]
pub struct TraceCandidate {
    pub memory: u64,
    pub hashes: u32,
    pub sigma: u64,
    pub phases: u8,
    /// The FP paper's average FP rate at this sigma (count-instance f_sigma).
    pub fp_model: f64,
    /// renewal-trace: the bound with its paths' mean and spread (None: not covered).
    pub bound: Option<TraceBound>,
    pub observed_fn: Observed,
    pub observed_fp_count_instance: Observed,
    /// Recycles of the first filter during the measured arrivals.
    pub cycles: u64,
}

impl TraceCandidate {
    /// The filter replayed.
    pub fn filter(&self, hashing: Hashing) -> FilterConfig {
        candidate_filter(self.memory, self.hashes, self.phases, hashing, self.sigma)
    }

    /// The renewal-trace bound's value for the rate its replay states (infinite where
    /// the argument does not cover the filter, so such a candidate is never chosen by
    /// the bound).
    pub fn upper(&self) -> f64 {
        self.bound.as_ref().map_or(f64::INFINITY, |b| {
            b.stated(self.observed_fn.interval.is_some())
        })
    }
}

/// A filter of the trace search: the default positions (two halves share theirs, the
/// setting renewal-trace covers, with copy-over).
fn candidate_filter(memory: u64, k: u32, phases: u8, hashing: Hashing, sigma: u64) -> FilterConfig {
    let mut f = FilterConfig::sigma_bounded(memory, k, sigma);
    f.phases = phases;
    f.hashing = hashing;
    f
}

/// Every candidate at one memory size.
#[derive(Clone, Debug, Serialize)]
pub struct AtMemory {
    pub memory: u64,
    pub candidates: Vec<TraceCandidate>,
}

impl AtMemory {
    /// The candidate with the lowest bound (ties: the first, so fewer hashes and one
    /// phase before two).
    pub fn by_bound(&self) -> Option<&TraceCandidate> {
        self.lowest(TraceCandidate::upper)
    }

    /// The candidate with the lowest observed FN.
    pub fn by_replay(&self) -> Option<&TraceCandidate> {
        self.lowest(|c| c.observed_fn.rate)
    }

    /// Some candidate's bound meets the FN target `g`.
    pub fn bound_meets(&self, g: f64) -> bool {
        self.by_bound().is_some_and(|c| c.upper() <= g)
    }

    /// Some candidate's observed FN meets the FN target `g`.
    pub fn replay_meets(&self, g: f64) -> bool {
        self.by_replay().is_some_and(|c| c.observed_fn.rate <= g)
    }

    fn lowest(&self, of: impl Fn(&TraceCandidate) -> f64) -> Option<&TraceCandidate> {
        self.candidates
            .iter()
            .fold(None, |best: Option<&TraceCandidate>, c| match best {
                Some(b) if of(b) <= of(c) => Some(b),
                _ => Some(c),
            })
    }
}

/// One memory size tried, and what it showed.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Tried {
    pub memory: u64,
    /// Some candidate's renewal-trace bound meets the FN target (None: not computed,
    /// the replay missed the target there).
    pub bound_meets: Option<bool>,
    /// Some candidate's observed FN meets it.
    pub replay_meets: bool,
}

/// What [`size_from_trace`] found.
#[derive(Clone, Debug, Serialize)]
pub struct TraceSizeRun {
    pub target_fp: f64,
    pub target_fn: Option<f64>,
    /// The chosen filter: the bound's size (smallest memory) or the lowest bound at the
    /// memory asked.
    pub chosen: TraceCandidate,
    /// The smallest memory whose replay meets the FN target, and the candidate there
    /// (smallest-memory question); at the memory asked, the lowest observed FN.
    pub by_replay: TraceCandidate,
    /// The largest memory tried that failed, by the bound and by the replay.
    pub bound_fails: Option<u64>,
    pub replay_fails: Option<u64>,
    /// The bound's memory over the replay's (smallest-memory question).
    pub memory_ratio: Option<f64>,
    /// Every memory size tried, in order.
    pub search: Vec<Tried>,
    /// Passes over the trace.
    pub passes: u64,
    /// renewal-trace and the fitted model's renewal bound at the chosen filter, judged
    /// against its replay (in JSON `models`, as in every command's output).
    #[serde(rename = "models", serialize_with = "records")]
    pub judgement: Judgement,
    pub fit: FitSummary,
    pub arrivals: u64,
    pub distinct: u64,
    pub ingest: IngestSummary,
    pub seconds: f64,
}

/// Sizes a filter on the trace `source` reads. The first pass decodes it and keeps its
/// keys in a temporary file ([`Spool`]) that every later pass reads.
pub fn size_from_trace(
    request: &TraceSizeRequest,
    source: &mut dyn MessageSource,
) -> Result<TraceSizeRun> {
    let start = std::time::Instant::now();
    request.check()?;
    rbf_foundations::progress::install_interrupt_handler();
    let mut search = Search::new(request, source)?;
    let (chosen, by_replay, bound_fails, replay_fails) = match request.target_fn {
        Some(g) => search.smallest(g)?,
        None => {
            let m = request
                .memory
                .ok_or_else(|| Error::setting("target-fn", Problem::Missing(super::GIVE_A_GOAL)))?;
            let at = search.at(&[(m, true)])?.remove(0);
            let c = at
                .by_bound()
                .cloned()
                .ok_or_else(|| no_filter(request, m))?;
            let r = at
                .by_replay()
                .cloned()
                .ok_or_else(|| no_filter(request, m))?;
            (c, r, None, None)
        }
    };
    let first = search.first.take().ok_or(Error::Internal(
        "the trace was not read (no memory size tried)",
    ))?;
    let judgement = judge_chosen(request, &chosen, &first)?;
    let memory_ratio = request
        .target_fn
        .map(|_| chosen.memory as f64 / by_replay.memory as f64);
    Ok(TraceSizeRun {
        target_fp: request.target_fp,
        target_fn: request.target_fn,
        chosen,
        by_replay,
        bound_fails,
        replay_fails,
        memory_ratio,
        search: search.tried,
        passes: search.passes,
        judgement,
        fit: first.fit.summary.clone(),
        arrivals: first.arrivals,
        distinct: first.distinct,
        ingest: first.ingest,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// The judged records alone, as `models` in every command's JSON.
fn records<S: serde::Serializer>(j: &Judgement, s: S) -> std::result::Result<S::Ok, S::Error> {
    j.records.serialize(s)
}

fn no_filter(request: &TraceSizeRequest, m: u64) -> Error {
    // No allowed range to state: the least memory that works is what the search
    // did not find.
    Error::setting(
        "memory",
        Problem::Other(format!(
            "no k in 1..={} reaches FP {} with {m} bits: use more memory or a larger --target-fp",
            request.max_hashes, request.target_fp
        )),
    )
}

/// The chosen filter's renewal-trace bound and the fitted model's renewal bound,
/// judged against the chosen filter's replay (the fitted one loses its standing where
/// it lies below what the trace's own recycles show).
fn judge_chosen(
    request: &TraceSizeRequest,
    chosen: &TraceCandidate,
    first: &FirstPass,
) -> Result<Judgement> {
    let f = chosen.filter(request.hashing);
    let fitted = Fitted::from_fit(&first.fit, &first.ingest.source.to_string())?;
    let methods = vec![Method::Renewal, Method::RenewalTrace];
    judge(
        &Subject {
            trace: chosen.bound.as_ref(),
            ..Subject::fitted(&f, &fitted)
        },
        &JudgeOptions::new(methods, request.eps, request.tolerance, false),
        Some(&chosen.observed_fn),
    )
}

/// What the first pass also read: the fit, the trace's size and its ingest summary.
struct FirstPass {
    fit: rbf_observed::fit::Fit,
    arrivals: u64,
    distinct: u64,
    ingest: IngestSummary,
}

/// The search's state: the trace, what was tried, the first pass's fit.
struct Search<'r, 'o> {
    request: &'r TraceSizeRequest,
    source: &'r mut (dyn MessageSource + 'o),
    spool: Spool,
    tried: Vec<Tried>,
    passes: u64,
    first: Option<FirstPass>,
    progress: Progress,
}

impl<'r, 'o> Search<'r, 'o> {
    fn new(
        request: &'r TraceSizeRequest,
        source: &'r mut (dyn MessageSource + 'o),
    ) -> Result<Self> {
        // Doubling from MIN_MEMORY to MAX_MEMORY, then bisecting to RELATIVE_PRECISION:
        // the most passes the search can take (it usually stops sooner).
        let most =
            (MAX_MEMORY / MIN_MEMORY).ilog2() + 1 + (1.0 / RELATIVE_PRECISION).log2().ceil() as u32;
        let progress = if request.progress && request.target_fn.is_some() {
            Progress::new(
                format!("rbf size: passes over the trace (at most {most})"),
                f64::from(most),
                "passes",
            )
        } else {
            Progress::hidden()
        };
        Ok(Search {
            request,
            source,
            spool: Spool::create()?,
            tried: Vec::new(),
            passes: 0,
            first: None,
            progress,
        })
    }

    /// The smallest memory by the bound and by the replay, each to RELATIVE_PRECISION:
    /// (the bound's candidate, the replay's, the largest failing memory of each).
    ///
    /// The doubling runs the replays alone until the replay meets the target, and only
    /// then follows the attempt chain: where a filter's observed FN misses the target the
    /// bound, which lies above it, misses it too, and below that size the chain's paths
    /// are costly (nearly every arrival is an attempt) and tell nothing. Were the bound
    /// ever below the observed FN there, skipping it could only make the bound's size
    /// larger, never smaller than the bound allows.
    fn smallest(
        &mut self,
        g: f64,
    ) -> Result<(TraceCandidate, TraceCandidate, Option<u64>, Option<u64>)> {
        let bound_meets = |a: &AtMemory| a.bound_meets(g);
        let replay_meets = |a: &AtMemory| a.replay_meets(g);
        let (mut bound, mut replay) = (Bracket::default(), Bracket::default());
        let mut m = MIN_MEMORY;
        // Doubling: the replays until they meet, then the bound from there on.
        while bound.meet.is_none() {
            if m > MAX_MEMORY {
                return Err(self.unreachable(g));
            }
            let follow = replay.meet.is_some();
            let at = self.at(&[(m, follow)])?.remove(0);
            if !follow {
                replay.record(&at, replay_meets(&at));
                if replay.meet.is_none() {
                    bound.fail = Some(m);
                    m *= 2;
                }
                // Where the replay meets, the same memory is tried again for the bound.
                continue;
            }
            bound.record(&at, bound_meets(&at));
            m *= 2;
        }
        // Bisection: each pass evaluates the midpoints of both brackets still open, the
        // chain's paths only where the bound's bracket asks.
        loop {
            let mut ms: Vec<(u64, bool)> = Vec::new();
            if let Some(b) = bound.mid() {
                ms.push((b, true));
            }
            if let Some(r) = replay.mid() {
                if !ms.iter().any(|&(m, _)| m == r) {
                    ms.push((r, false));
                }
            }
            if ms.is_empty() {
                break;
            }
            for at in &self.at(&ms)? {
                if bound.mid() == Some(at.memory) {
                    bound.record(at, bound_meets(at));
                }
                if replay.mid() == Some(at.memory) {
                    replay.record(at, replay_meets(at));
                }
            }
        }
        let chosen = bound.meet.and_then(|a| a.by_bound().cloned());
        let by_replay = replay.meet.and_then(|a| a.by_replay().cloned());
        match (chosen, by_replay) {
            (Some(c), Some(r)) => Ok((c, r, bound.fail, replay.fail)),
            _ => Err(Error::Internal("the search ended without a size")),
        }
    }

    fn unreachable(&self, g: f64) -> Error {
        // A pair of targets this trace cannot meet: no range of the one setting says it.
        Error::setting(
            "target-fn",
            Problem::Other(format!(
                "FN {g} with FP {} is not met on this trace by any filter up to {MAX_MEMORY} bits (the search cap, 2^30); relax --target-fn or --target-fp",
                self.request.target_fp
            )),
        )
    }

    /// One pass over the trace evaluating every candidate at each of `memories`, with
    /// the attempt chain's paths where its flag says so.
    fn at(&mut self, memories: &[(u64, bool)]) -> Result<Vec<AtMemory>> {
        self.progress.step(self.passes as f64)?;
        let r = self.request;
        let distinct = self.first.as_ref().map(|f| f.distinct);
        let mut lanes = Vec::new();
        for &(m, follow) in memories {
            for &phases in &r.phases {
                for k in 1..=r.max_hashes {
                    if let Some(l) = Lane::new(m, k, phases, r, follow, distinct)? {
                        lanes.push(l);
                    }
                }
            }
        }
        let run = |keys: &[u64]| lanes.par_iter_mut().for_each(|l| l.run_keys(keys));
        match self.first {
            Some(_) => self.spool.for_each_batch(run)?,
            None => self.first_pass(run)?,
        }
        self.passes += 1;
        let mut out: Vec<AtMemory> = memories
            .iter()
            .map(|&(memory, _)| AtMemory {
                memory,
                candidates: Vec::new(),
            })
            .collect();
        for l in lanes {
            let c = l.finish();
            if let Some(at) = out.iter_mut().find(|a| a.memory == c.memory) {
                at.candidates.push(c);
            }
        }
        for at in &out {
            let followed = at.candidates.iter().any(|c| c.bound.is_some());
            self.tried.push(Tried {
                memory: at.memory,
                bound_meets: followed
                    .then(|| self.request.target_fn.is_some_and(|g| at.bound_meets(g))),
                replay_meets: self.request.target_fn.is_some_and(|g| at.replay_meets(g)),
            });
        }
        Ok(out)
    }
}

impl Search<'_, '_> {
    /// The first pass: the trace decoded, its keys spooled and the workload fitted
    /// while `run` replays them.
    fn first_pass(&mut self, mut run: impl FnMut(&[u64])) -> Result<()> {
        let r = self.request;
        let fitter = Fitter::new(FitOptions {
            warmup: r.replay.warmup,
            confidence: r.replay.confidence,
            ..FitOptions::default()
        })?;
        let spool = &mut self.spool;
        let source = &mut *self.source;
        // The fitter on a thread of its own ([`beside`]), the replays here.
        let (fitter, read) = beside(fitter, |feed| {
            source_batches(source, |keys| {
                spool.write(keys)?;
                run(keys);
                feed(keys);
                Ok(())
            })
        });
        read?;
        spool.close()?;
        let summary = self.source.summary();
        summary.require_data()?;
        let fit = fitter.finish()?;
        self.first = Some(FirstPass {
            distinct: fit.summary.distinct_keys,
            fit,
            arrivals: spool.len(),
            ingest: summary.clone(),
        });
        Ok(())
    }
}

/// One side of the smallest-memory search: the largest failing memory and the
/// smallest meeting one seen so far.
#[derive(Default)]
struct Bracket {
    fail: Option<u64>,
    meet: Option<AtMemory>,
}

impl Bracket {
    fn record(&mut self, at: &AtMemory, meets: bool) {
        if meets {
            if self.meet.as_ref().is_none_or(|m| at.memory < m.memory) {
                self.meet = Some(at.clone());
            }
        } else if self.fail.is_none_or(|f| at.memory > f) {
            self.fail = Some(at.memory);
        }
    }

    /// The next memory to try, None once the bracket is closed (within
    /// RELATIVE_PRECISION of the meeting memory, or nothing fails below it).
    fn mid(&self) -> Option<u64> {
        let meet = self.meet.as_ref()?.memory;
        let fail = self.fail?;
        let gap = ((meet as f64 * RELATIVE_PRECISION) as u64).max(1);
        (meet > fail && meet - fail > gap).then(|| fail + (meet - fail) / 2)
    }
}

/// A candidate filter in a pass: its replays and its attempt chain's paths.
struct Lane {
    memory: u64,
    hashes: u32,
    sigma: u64,
    phases: u8,
    fp_model: f64,
    replays: Replays,
    trace: Option<TraceRenewal>,
}

impl Lane {
    /// The candidate (M, k, phases) with the largest sigma whose FP model meets the
    /// target; None when there is none (k too large for the array, or no sigma meets
    /// the target). Its ground truth and paths are sized for `distinct` keys when the
    /// first pass has counted them.
    fn new(
        memory: u64,
        k: u32,
        phases: u8,
        r: &TraceSizeRequest,
        follow: bool,
        distinct: Option<u64>,
    ) -> Result<Option<Lane>> {
        if u64::from(k) >= memory / u64::from(phases) {
            return Ok(None);
        }
        let shape = candidate_filter(memory, k, phases, r.hashing, 0);
        let sigma = match sigma_for_target(&shape, r.target_fp) {
            Ok(c) => c.sigma,
            Err(Error::Interrupted) => return Err(Error::Interrupted),
            Err(_) => return Ok(None),
        };
        let f = candidate_filter(memory, k, phases, r.hashing, sigma);
        f.validate()?;
        let fp_model = predict(&f)?.sigma.map_or(r.target_fp, |s| s.fp_sigma);
        Ok(Some(Lane {
            memory,
            hashes: k,
            sigma,
            phases,
            fp_model,
            replays: Replays::sized(&with_judged_positions(&f), r.replay, r.hash_seeds, distinct)?,
            trace: follow
                .then(|| TraceRenewal::new(&f, r.replay.warmup))
                .flatten()
                .map(|mut t| {
                    if let Some(d) = distinct {
                        t.expect_distinct(d);
                    }
                    t
                }),
        }))
    }

    fn run_keys(&mut self, keys: &[u64]) {
        self.replays.run_keys(keys);
        if let Some(t) = self.trace.as_mut() {
            t.run_keys(keys);
        }
    }

    fn finish(self) -> TraceCandidate {
        let report = self.replays.report();
        TraceCandidate {
            memory: self.memory,
            hashes: self.hashes,
            sigma: self.sigma,
            phases: self.phases,
            fp_model: self.fp_model,
            bound: self.trace.and_then(|t| t.finish()),
            observed_fn: Observed::of_one(&report, Rate::Fn),
            observed_fp_count_instance: Observed::of_one(&report, Rate::FpCountInstance),
            cycles: report.cycles,
        }
    }
}
