//! Sizing a recycling Bloom filter from FP and FN targets: the two questions the FN
//! paper asks in §7.1, answered with the models and confirmed by replay ([`confirm`]).
//!
//! 1. Best FN at a given memory ([`best_fn`]): over k and phases, the lowest renewal
//!    upper bound whose sigma keeps the FP paper's average FP rate at the target.
//! 2. Smallest memory for an FP and an FN target ([`smallest_memory`]): the least M at
//!    which some (k, phases) has both.
//!
//! For a candidate (M, k, phases), sigma is the largest one whose count-instance FP
//! rate f_sigma meets the FP target ([`rbf_predicted::model::false_positive::sigma_for_target`]): a larger
//! sigma means longer cycles, so fewer recycles and fewer false negatives, and the FP
//! rate grows with sigma, so the largest admissible sigma is the best one for FN. The
//! decision uses the renewal upper bound (FN paper §5) rather than an approximation so
//! that "meets the FN target" is a guarantee where the bound is proven (one phase;
//! two phases with independent halves, which is why two-phase candidates use them).
//! The chosen filter's bound, its standing and its verdict against the confirming
//! replay come from the judge ([`renewal_judgement`], [`crate::compare::judge()`]), like every
//! other command's.

pub mod command;
pub mod confirm;
pub mod spool;
pub mod trace;

pub use command::{size, ConfirmReplay, Goal, SizeOutput, SizeRequest, SizeRun};

use serde::Serialize;

use crate::compare::judge::misfit_note;
use crate::compare::{judge, JudgeOptions, Judgement, Observed, Standing, Subject};
use rbf_data::filter::{FilterConfig, Hashing};
use rbf_data::workload::Workload;
use rbf_foundations::error::{Error, Problem, Result};
use rbf_foundations::progress::Progress;
use rbf_observed::fit::adequacy::QFitCheck;
use rbf_predicted::model::false_negative::{
    FnModel, Method, RenewalMode, RenewalOptions, RenewalResult,
};
use rbf_predicted::model::false_positive::{sigma_for_target_tracked, sigma_states};

/// Where the memory search starts (bits).
pub const MIN_MEMORY: u64 = 1 << 8;
/// Where it gives up (bits): 128 MiB of filter is beyond what the question is about,
/// and the renewal computation grows with sigma.
pub const MAX_MEMORY: u64 = 1 << 30;
/// Bisection stops when the gap between a failing and a meeting M is at most this
/// fraction of the meeting M (and at least one bit).
pub const RELATIVE_PRECISION: f64 = 0.01;
/// Doublings of M without a 1 % improvement of the best FN bound after which the
/// target is declared out of the models' reach.
pub const PLATEAU: u32 = 3;

/// What to search over.
#[derive(Clone, Debug)]
pub struct SizeOptions {
    pub target_fp: f64,
    /// Phase counts to try (1, 2 or both).
    pub phases: Vec<u8>,
    /// k is tried from 1 to this.
    pub max_hashes: u32,
    pub hashing: Hashing,
    /// Truncation of the FN models.
    pub eps: f64,
    /// Renewal bound's certified tolerance mode (`RenewalOptions::tolerance`); every
    /// candidate's FN is then still an upper bound, within this of the exact one.
    pub renewal_tolerance: Option<f64>,
    /// Show the renewal bound's progress for a candidate that takes more than a couple
    /// of seconds (the command line; off for library callers).
    pub progress: bool,
}

/// One evaluated (M, k, sigma, phases).
#[derive(Clone, Debug, Serialize)]
pub struct Candidate {
    pub memory: u64,
    pub hashes: u32,
    pub sigma: u64,
    pub phases: u8,
    /// FP paper's average FP rate at this sigma (count-instance f_sigma).
    pub fp_model: f64,
    /// FN paper's renewal upper bound on FN per arrival.
    pub fn_renewal_upper: f64,
    /// The engine behind it and its proven distance from the exact engine's value.
    pub fn_renewal_mode: RenewalMode,
    pub fn_renewal_tolerance: f64,
}

impl Candidate {
    /// The filter this candidate describes.
    pub fn filter(&self, hashing: Hashing) -> FilterConfig {
        filter(
            self.memory,
            self.hashes,
            self.phases,
            hashing,
            Some(self.sigma),
        )
    }
}

/// The filter of a candidate; without sigma, the shape whose sigma the FP target sets.
fn filter(memory: u64, k: u32, phases: u8, hashing: Hashing, sigma: Option<u64>) -> FilterConfig {
    let mut f = FilterConfig::sigma_bounded(memory, k, 0);
    f.sigma = sigma;
    f.phases = phases;
    f.hashing = hashing;
    // Eqs. 27-28 are proven for rotating hash positions (appendix G.1); the filter
    // we recommend should be the one the bound covers.
    f.independent_halves = phases == 2;
    f
}

/// Which of the two questions of §7.1 a search answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Question {
    /// The smallest memory meeting an FP and an FN target.
    SmallestMemory,
    /// The best FN bound at a given memory, meeting an FP target.
    BestFn,
}

/// Outcome of a search.
#[derive(Clone, Debug, Serialize)]
pub struct Sizing {
    pub question: Question,
    pub best: Candidate,
    /// (M, k, phases) triples whose FN bound was computed.
    pub candidates_evaluated: u64,
    /// Smallest-memory: the largest M found to fail (None when the first M met both).
    pub memory_fails: Option<u64>,
    /// Memories tried, in order, with whether some (k, phases) met both targets.
    pub search: Vec<(u64, bool)>,
}

/// What `rbf size` says when it is given neither question's goal.
pub(crate) const GIVE_A_GOAL: &str = "give --target-fn G (smallest memory) or --memory M (best FN)";

/// Checks the targets and search settings, naming the flag at fault.
pub fn check(options: &SizeOptions, target_fn: Option<f64>) -> Result<()> {
    let t = options.target_fp;
    if !(t > 0.0 && t < 1.0) {
        return Err(Error::setting(
            "target-fp",
            Problem::range("must lie strictly between 0 and 1", t),
        ));
    }
    if let Some(t) = target_fn {
        if !(t > 0.0 && t < 1.0) {
            return Err(Error::setting(
                "target-fn",
                Problem::range("must lie strictly between 0 and 1", t),
            ));
        }
    }
    if options.max_hashes == 0 || options.max_hashes > rbf_data::filter::MAX_HASHES {
        return Err(Error::setting(
            "max-hashes",
            Problem::range(
                format!("must lie in 1..={}", rbf_data::filter::MAX_HASHES),
                options.max_hashes,
            ),
        ));
    }
    if options.phases.is_empty() || options.phases.iter().any(|p| !(1..=2).contains(p)) {
        return Err(Error::setting(
            "phases",
            Problem::rule("must be 1, 2 or both"),
        ));
    }
    Ok(())
}

/// Evaluates one (M, k, phases): None when no sigma meets the FP target there.
pub fn evaluate(
    memory: u64,
    hashes: u32,
    phases: u8,
    options: &SizeOptions,
    workload: &Workload,
) -> Result<Option<Candidate>> {
    evaluate_tracked(
        memory,
        hashes,
        phases,
        options,
        workload,
        &Progress::hidden(),
    )
}

/// [`evaluate`], with the FP model's search for sigma reporting to `progress`.
fn evaluate_tracked(
    memory: u64,
    hashes: u32,
    phases: u8,
    options: &SizeOptions,
    workload: &Workload,
    progress: &Progress,
) -> Result<Option<Candidate>> {
    // sigma >= k needs k < M/phases bits, and sigma_for_target rejects a target that
    // even sigma = k misses: both mean "no such filter", not a user error.
    if u64::from(hashes) >= memory / u64::from(phases) {
        return Ok(None);
    }
    let shape = filter(memory, hashes, phases, options.hashing, None);
    let chosen = match sigma_for_target_tracked(&shape, options.target_fp, progress) {
        Ok(c) => c,
        // Ctrl-C stops the search; no sigma meeting the target means no such filter.
        Err(Error::Interrupted) => return Err(Error::Interrupted),
        Err(_) => return Ok(None),
    };
    let sigma = chosen.sigma;
    let f = filter(memory, hashes, phases, options.hashing, Some(sigma));
    let fp_model = rbf_predicted::model::false_positive::predict(&f)?
        .sigma
        .map_or(chosen.fp, |s| s.fp_sigma);
    if workload.never_recycles(&f) {
        return Ok(Some(Candidate {
            memory,
            hashes,
            sigma,
            phases,
            fp_model,
            fn_renewal_upper: 0.0,
            fn_renewal_mode: RenewalMode::Exact,
            fn_renewal_tolerance: 0.0,
        }));
    }
    let Some(r) = renewal_bound(&f, options, workload)? else {
        return Ok(None);
    };
    Ok(Some(Candidate {
        memory,
        hashes,
        sigma,
        phases,
        fp_model,
        fn_renewal_upper: r.fn_upper,
        fn_renewal_mode: r.mode,
        fn_renewal_tolerance: r.certified_tolerance,
    }))
}

/// The renewal bound of filter `f`, or None when the bound refuses it.
fn renewal_bound(
    f: &FilterConfig,
    options: &SizeOptions,
    workload: &Workload,
) -> Result<Option<RenewalResult>> {
    let model = FnModel::new(f, workload, options.eps)?;
    // The renewal bound refuses sigma + k >= the bits per array (its Theorem 7 process
    // never ends): no bound, so no candidate, like the cases above.
    match model.renewal(RenewalOptions {
        eps: options.eps,
        tolerance: options.renewal_tolerance,
        progress: options.progress,
        ..RenewalOptions::default()
    }) {
        Ok(r) => Ok(Some(r)),
        // Ctrl-C stops the search; any other refusal means no such candidate.
        Err(Error::Interrupted) => Err(Error::Interrupted),
        Err(_) => Ok(None),
    }
}

/// The chosen filter's renewal bound as the judge reports it: its standing (proven,
/// or for the fitted model when `workload` was fitted from a trace) and, with a
/// confirming replay, its verdict against the observed FN.
pub fn renewal_judgement(
    best: &Candidate,
    options: &SizeOptions,
    workload: &Workload,
    observed: Option<&Observed>,
) -> Result<Judgement> {
    let f = best.filter(options.hashing);
    let mut j = judge(
        &Subject::given(&f, workload),
        &JudgeOptions::new(
            vec![Method::Renewal],
            options.eps,
            options.renewal_tolerance,
            false,
        ),
        observed,
    )?;
    if let Some(why) = misfit(workload) {
        // The bound reads the reuse profile measured on the trace, the confirming
        // replay draws from the fitted Q, which does not reproduce it: the two describe
        // different workloads and one cannot judge the other.
        for r in &mut j.records {
            if r.standing != Standing::NotJudged {
                r.standing = Standing::NotJudged;
                r.verdict = None;
                r.regime = None;
                r.excess = None;
                r.note = format!("{why}; {MISFIT_REPLAY}; {}", r.note);
            }
        }
    }
    Ok(j)
}

/// Why a confirming replay of a misfit workload does not judge its bound.
pub const MISFIT_REPLAY: &str = "the confirming replay draws from the fitted Q, whose reuse profile is not the trace's that the bound reads";

/// The fit's failed (or missing) test when `workload` is a file `rbf fit` wrote whose
/// fitted Q does not reproduce its trace ([`QFitCheck::recorded`]): the words every
/// output of `rbf size` shows. None for a workload given as the truth or a fit that
/// passed.
pub fn misfit(workload: &Workload) -> Option<String> {
    QFitCheck::recorded(workload)
        .filter(|c| !c.fits)
        .map(|c| misfit_note(&c))
}

/// The lowest renewal bound at `memory` over k = 1..=max_hashes and the phase counts,
/// with the number of candidates evaluated. Ties keep the smaller k (cheaper lookups).
pub fn best_at(
    memory: u64,
    options: &SizeOptions,
    workload: &Workload,
) -> Result<(Option<Candidate>, u64)> {
    let mut best: Option<Candidate> = None;
    let mut evaluated = 0;
    // One display for the FP model's passes over every (k, phases) at this memory:
    // with a large M they dominate, and the first says up front how long they take.
    let progress = if options.progress
        && memory / 2 >= rbf_predicted::model::false_positive::renewal::PROGRESS_FROM
    {
        let states: f64 = options
            .phases
            .iter()
            .flat_map(|&p| {
                (1..=options.max_hashes)
                    .map(move |k| sigma_states(memory / u64::from(p), k, options.target_fp))
            })
            .sum();
        Progress::new(
            format!("rbf size: FP model at M = {memory}"),
            states,
            "states",
        )
    } else {
        Progress::hidden()
    };
    for &phases in &options.phases {
        for k in 1..=options.max_hashes {
            let Some(c) = evaluate_tracked(memory, k, phases, options, workload, &progress)? else {
                continue;
            };
            evaluated += 1;
            let better = match &best {
                Some(b) => c.fn_renewal_upper < b.fn_renewal_upper,
                None => true,
            };
            if better {
                best = Some(c);
            }
        }
    }
    Ok((best, evaluated))
}

/// Question (1) of §7.1: the best FN bound at `memory` for the FP target.
pub fn best_fn(memory: u64, options: &SizeOptions, workload: &Workload) -> Result<Sizing> {
    check(options, None)?;
    workload.validate()?;
    let (best, evaluated) = best_at(memory, options, workload)?;
    // No allowed range to state: the least memory that works is what was not found.
    let best = best.ok_or_else(|| {
        Error::setting(
            "memory",
            Problem::Other(format!(
                "no k in 1..={} and phases {} reach FP {} with {memory} bits: use more memory or a larger --target-fp",
                options.max_hashes,
                options
                    .phases
                    .iter()
                    .map(u8::to_string)
                    .collect::<Vec<_>>()
                    .join(" or "),
                options.target_fp
            )),
        )
    })?;
    Ok(Sizing {
        question: Question::BestFn,
        best,
        candidates_evaluated: evaluated,
        memory_fails: None,
        search: vec![(memory, true)],
    })
}

/// Question (2) of §7.1: the smallest memory at which some (k, phases) meets both
/// targets, to [`RELATIVE_PRECISION`].
///
/// The search doubles M from [`MIN_MEMORY`] until both targets are met, then bisects
/// between the last failing and the first meeting M. That assumes "meets" is monotone
/// in M, which the models do not guarantee (sigma moves in integer steps and the best
/// k changes with M), so the returned M is one that was evaluated and meets both, and
/// the M reported as failing was evaluated and fails; a smaller meeting M below it
/// would need the best FN bound to dip and rise again, which we have not seen.
pub fn smallest_memory(
    target_fn: f64,
    options: &SizeOptions,
    workload: &Workload,
) -> Result<Sizing> {
    check(options, Some(target_fn))?;
    workload.validate()?;
    // Doubling from MIN_MEMORY to MAX_MEMORY, then bisecting to RELATIVE_PRECISION:
    // the most memory sizes the search can try (it usually stops sooner).
    let most =
        (MAX_MEMORY / MIN_MEMORY).ilog2() + 1 + (1.0 / RELATIVE_PRECISION).log2().ceil() as u32;
    let mut probe = Probe {
        target_fn,
        options,
        workload,
        progress: Progress::new(
            format!("rbf size: memory sizes tried (at most {most})"),
            f64::from(most),
            "sizes",
        ),
        evaluated: 0,
        search: Vec::new(),
    };
    let (mut found, mut lo) = probe.double()?;
    if let Some(mut fail) = lo {
        // Invariant: `fail` fails, `found.memory` meets.
        while found.memory - fail > ((found.memory as f64 * RELATIVE_PRECISION) as u64).max(1) {
            let mid = fail + (found.memory - fail) / 2;
            match probe.at(mid)? {
                Some(c) if c.fn_renewal_upper <= target_fn => found = c,
                _ => fail = mid,
            }
        }
        lo = Some(fail);
    }
    Ok(Sizing {
        question: Question::SmallestMemory,
        best: found,
        candidates_evaluated: probe.evaluated,
        memory_fails: lo,
        search: probe.search,
    })
}

/// The smallest-memory search's state: every memory size tried, and whether it met
/// both targets.
struct Probe<'a> {
    target_fn: f64,
    options: &'a SizeOptions,
    workload: &'a Workload,
    progress: Progress,
    /// Candidates evaluated so far, over every memory size.
    evaluated: u64,
    search: Vec<(u64, bool)>,
}

impl Probe<'_> {
    /// The best candidate at `m` bits, recorded in the search.
    fn at(&mut self, m: u64) -> Result<Option<Candidate>> {
        self.progress.step(self.search.len() as f64)?;
        let (best, n) = best_at(m, self.options, self.workload)?;
        self.evaluated += n;
        let meets = self.meets(&best);
        self.search.push((m, meets));
        Ok(best)
    }

    fn meets(&self, c: &Option<Candidate>) -> bool {
        c.as_ref()
            .is_some_and(|c| c.fn_renewal_upper <= self.target_fn)
    }

    /// Doubles M from [`MIN_MEMORY`] to the first size that meets both targets: that
    /// size's candidate and the last size that failed (None when the first met them).
    /// Errors naming `target-fn` when the bound levels off above the target or the cap
    /// is reached.
    fn double(&mut self) -> Result<(Candidate, Option<u64>)> {
        let mut lo = None;
        let mut m = MIN_MEMORY;
        // The renewal bound can level off above the target (e.g. p_r < 1, where it stops
        // falling once cycles are long), and its cost grows with sigma, so doubling to the
        // cap would take hours: stop when PLATEAU doublings in a row improve it by < 1 %.
        let mut previous = f64::INFINITY;
        let mut flat = 0;
        loop {
            let best = self.at(m)?;
            if self.meets(&best) {
                if let Some(c) = best {
                    return Ok((c, lo));
                }
            }
            // Near 1 (tiny M) the bound is flat before it starts to fall: not a plateau.
            if let Some(c) = best.as_ref().filter(|c| c.fn_renewal_upper < 0.5) {
                flat = if c.fn_renewal_upper > 0.99 * previous {
                    flat + 1
                } else {
                    0
                };
                previous = previous.min(c.fn_renewal_upper);
            }
            lo = Some(m);
            if flat >= PLATEAU || m >= MAX_MEMORY {
                return Err(self.unreachable(flat >= PLATEAU, previous, m));
            }
            m *= 2;
        }
    }

    /// Why the targets cannot be met: the bound levelled off at `previous` (a
    /// `plateau`), or the search reached the cap at `m` bits.
    fn unreachable(&self, plateau: bool, previous: f64, m: u64) -> Error {
        let why = if plateau {
            format!("the best renewal bound levels off at {previous:.3e} ({PLATEAU} doublings of M up to {m} bits improved it by less than 1 %)")
        } else {
            format!("no filter up to {MAX_MEMORY} bits (the search cap, 2^30) meets them")
        };
        // A pair of targets the models cannot meet: no range of the one setting says it.
        Error::setting(
            "target-fn",
            Problem::Other(format!(
                "FP {} and FN {} cannot be met by the models: {why}; relax --target-fn or --target-fp, allow more hashes (--max-hashes) or two phases (--phases both)",
                self.options.target_fp, self.target_fn
            )),
        )
    }
}
