//! The judge: the FN models on a filter and workload, one [`Record`] per [`Bound`], each
//! with its claim, its standing (proven, fitted model, checked, not proven, not judged,
//! with the reason) and its verdict against the observed FN. `rbf compare`, `rbf run`,
//! `rbf size` and `rbf model fn` all take their FN numbers and labels from [`judge()`].

use std::sync::Arc;

use rayon::prelude::*;
use serde::Serialize;

use super::bound::Bound;
use super::fit_error::FitError;
use super::observed::Observed;
use super::record::{Range, Record, Standing};
use super::verdict::{Check, Side};
use rbf_data::filter::FilterConfig;
use rbf_data::workload::Workload;
use rbf_foundations::error::{Error, Result};
use rbf_observed::fit::adequacy::QFitCheck;
use rbf_observed::fit::Fit;
use rbf_observed::trace_renewal::TraceBound;
use rbf_predicted::model::false_negative::markov::shared::SharedEstimates;
use rbf_predicted::model::false_negative::renewal::worst::renewal_worst_case;
use rbf_predicted::model::false_negative::{
    BuiltProfile, Claim, FnModel, FnReport, Guarantee, Method, RenewalOptions,
};

/// A workload fitted from a trace, as the judge uses it.
#[derive(Clone, Debug)]
pub struct Fitted {
    /// The point estimate (with the measured reuse profile).
    pub point: Workload,
    /// The workloads at the conservative end of the fit's uncertainty
    /// ([`Fit::conservative_workloads`]); empty without a reuse profile.
    pub conservative: Vec<Workload>,
    /// Whether the fitted Q reproduces the trace, and the alternatives it cannot tell
    /// apart from it (None: not checked).
    pub q_check: Option<QFitCheck>,
    /// D as the outputs state it: the estimate, or why there is none
    /// ([`Fit::distinct_label`]: a rejected fit's D is not an estimate).
    pub distinct_label: String,
}

impl Fitted {
    /// The parts of `fit` the judge needs; `label` (the trace) names it in errors.
    pub fn from_fit(fit: &Fit, label: &str) -> Result<Fitted> {
        let unusable = |error: Error| -> Error {
            FitError::Unusable {
                label: label.to_string(),
                error,
            }
            .into()
        };
        Ok(Fitted {
            point: fit.workload().map_err(unusable)?,
            conservative: fit.conservative_workloads().map_err(unusable)?,
            q_check: fit.q_check.clone(),
            distinct_label: fit.distinct_label(),
        })
    }

    /// A workload file that `rbf fit` wrote: its point estimate only.
    pub fn from_workload(w: Workload) -> Fitted {
        Fitted {
            distinct_label: w.distinct().to_string(),
            point: w,
            conservative: Vec::new(),
            q_check: None,
        }
    }
}

/// Whether a workload (e.g. a workload file) was fitted from a trace rather than given
/// as the truth: `rbf fit` writes its measured reuse profile and its provenance.
pub fn is_fitted(w: &Workload) -> bool {
    w.reuse.is_some() || w.provenance.is_some()
}

/// What the models are judged on.
#[derive(Clone, Copy, Debug)]
pub struct Subject<'a> {
    pub filter: &'a FilterConfig,
    /// The workload the FN models run on.
    pub model: &'a Workload,
    /// `model` was fitted from a trace: its bounds hold for the fitted model, and the
    /// Q-based methods are judged only where the fit reproduces the trace.
    pub fitted_model: bool,
    /// The fit behind the renewal bound's fitted and conservative rows: the trace's own
    /// fit (then `model` is its point estimate), or a synthetic source's fit of its own
    /// trace (then `model` is the true workload).
    pub fit: Option<&'a Fitted>,
    /// The renewal argument on the trace's own recycles, where a trace was read
    /// ([`rbf_observed::trace_renewal`]): the renewal-trace record, and the floor below which
    /// the fitted model's renewal bound is not a bound for the trace.
    pub trace: Option<&'a TraceBound>,
}

impl<'a> Subject<'a> {
    /// A workload given as it is (synthetic, or a workload file, fitted or not as
    /// [`is_fitted`] tells).
    pub fn given(filter: &'a FilterConfig, model: &'a Workload) -> Subject<'a> {
        Subject {
            filter,
            model,
            fitted_model: is_fitted(model),
            fit: None,
            trace: None,
        }
    }

    /// A workload fitted from a trace, the models on its point estimate.
    pub fn fitted(filter: &'a FilterConfig, fit: &'a Fitted) -> Subject<'a> {
        Subject {
            filter,
            model: &fit.point,
            fitted_model: true,
            fit: Some(fit),
            trace: None,
        }
    }
}

/// Which methods, and how the renewal bound is computed.
#[derive(Clone, Debug)]
pub struct JudgeOptions {
    pub methods: Vec<Method>,
    pub renewal: RenewalOptions,
    /// Non-repeat estimates shared with the other filters of a sweep on the same
    /// workload (None: each model computes its own; the values are the same).
    pub estimates: Option<Arc<SharedEstimates>>,
}

impl JudgeOptions {
    /// `methods`, with the renewal bound's truncation, certified tolerance and progress
    /// display (the other renewal settings at their defaults).
    pub fn new(methods: Vec<Method>, eps: f64, tolerance: Option<f64>, progress: bool) -> Self {
        JudgeOptions {
            methods,
            renewal: RenewalOptions {
                eps,
                tolerance,
                progress,
                ..RenewalOptions::default()
            },
            estimates: None,
        }
    }

    /// eps and the tolerance by the models' own rules, so that a bad value is an error
    /// before the trace is read rather than a note on every row after it.
    pub fn check(&self) -> Result<()> {
        rbf_predicted::model::false_negative::check_eps(self.renewal.eps)?;
        match self.renewal.tolerance {
            Some(t) => rbf_predicted::model::false_negative::renewal::check_tolerance(t),
            None => Ok(()),
        }
    }
}

impl Default for JudgeOptions {
    fn default() -> Self {
        JudgeOptions {
            methods: Method::ALL.to_vec(),
            renewal: RenewalOptions::default(),
            estimates: None,
        }
    }
}

/// The renewal bound at the conservative end of a fit's uncertainty.
#[derive(Clone, Debug, Serialize)]
pub struct ConservativeRenewal {
    /// The largest bound over the workloads given (one, from a fit).
    pub fn_upper: f64,
    /// Where in the interval the largest bound at a single p_r was found.
    pub p_repeat: f64,
    /// The interval of p_r the bound covers (every p_r in it at once, one phase;
    /// docs/FIT.md), when the fit gave one.
    pub p_repeat_interval: Option<[f64; 2]>,
    /// The construction is proven to bound the true workload's bound whenever the band
    /// and the interval hold: one phase only (two phases: measured, docs/coverage).
    pub proven: bool,
    pub seconds: f64,
}

/// What [`judge()`] returns.
#[derive(Clone, Debug, Serialize)]
pub struct Judgement {
    /// One record per bound computed, in [`Bound::ALL`] order.
    pub records: Vec<Record>,
    /// The FN models on the model workload (per-method seconds, renewal details).
    pub report: Option<FnReport>,
    /// Details of the conservative renewal bound, when it was computed.
    pub conservative: Option<ConservativeRenewal>,
    /// Methods not asked for, so not computed: never silently absent.
    pub not_run: Vec<Method>,
    /// Why there is nothing to judge, when that is so (e.g. a filter that never
    /// recycles).
    pub notes: Vec<String>,
}

impl Judgement {
    pub fn get(&self, bound: Bound) -> Option<&Record> {
        self.records.iter().find(|r| r.bound == bound)
    }

    pub fn value(&self, bound: Bound) -> Option<f64> {
        self.get(bound).map(|r| r.value)
    }
}

/// What a bound proven for a workload is when that workload was fitted from a trace.
pub const FITTED_MODEL: &str =
    "the workload was fitted from the trace: a bound for the fitted model, not a proof for the trace";

/// Why the two-phase conservative renewal bound is checked rather than proven.
pub const CHECKED_TWO_PHASE: &str = "two phases: the one-phase monotonicity of the renewal bound in U_j and p_r, which makes the conservative end an upper bound, does not carry over as is; measured by the coverage study instead (docs/coverage/README.md)";

/// The label and note of a Q-based method on a fit that does not reproduce the trace
/// (the words every output shows).
pub fn misfit_note(c: &QFitCheck) -> String {
    match &c.untested {
        Some(why) => format!("model not tested against this trace: {why}"),
        None => format!(
            "model does not fit this trace: {} gap {:.3e} at tau {:.0} (noise {:.3e})",
            c.observable.name(),
            c.gap,
            c.tau,
            c.noise
        ),
    }
}

/// Runs the FN models for `subject` and judges each bound against `observed` (FN per
/// arrival, when something was observed).
pub fn judge(
    subject: &Subject,
    options: &JudgeOptions,
    observed: Option<&Observed>,
) -> Result<Judgement> {
    let methods = &options.methods;
    let not_run: Vec<Method> = Method::ALL
        .into_iter()
        .filter(|m| !methods.contains(m))
        .collect();
    let filter = subject.filter;
    // Checks that the models cover the variant and workload, with errors that name
    // the setting, before anything else.
    let model = FnModel::new(filter, subject.model, options.renewal.eps)?
        .sharing(options.estimates.clone());
    if subject.model.never_recycles(filter) {
        let mut records = never_recycling_records(subject, methods);
        judge_all(&mut records, observed);
        return Ok(Judgement {
            records,
            report: None,
            conservative: None,
            not_run,
            notes: Vec::new(),
        });
    }
    // The conservative renewal bound (one core, and on traces with p_r near 1 the
    // longest single computation) needs nothing of the methods: it runs beside them.
    // Each side's result is its own, so the records do not depend on the threads.
    let conservative_fit = subject.fit.filter(|_| methods.contains(&Method::Renewal));
    let (on_model, on_conservative) = rayon::join(
        || -> Result<(FnReport, Vec<Record>)> {
            // The Markov profile reads the filter and eps only: built once for the
            // model, the fit's alternatives and a synthetic source's fit (it was built
            // up to four times; at 2^23 bits each build is about 10 CPU s). Where it
            // fails, each model builds its own and reports the error in its turn.
            let profile = methods
                .iter()
                .any(|m| m.reads_popularity())
                .then(|| model.build_profile(options.renewal.progress).ok())
                .flatten();
            let model = model.with_profile(profile.as_ref());
            let (report, mut records) = model_records(subject, &model, options, profile.as_ref())?;
            if let (Some(fit), false) = (subject.fit, subject.fitted_model) {
                records.extend(fitted_records(filter, fit, options, profile.as_ref())?);
            }
            Ok((report, records))
        },
        || {
            conservative_fit
                .map(|fit| conservative_record(filter, fit, options.renewal.eps))
                .transpose()
        },
    );
    let (report, mut records) = on_model?;
    let mut conservative = None;
    if let Some((record, c)) = on_conservative?.flatten() {
        records.push(record);
        conservative = Some(c);
    }
    let mut notes = Vec::new();
    match subject.trace {
        Some(t) => {
            if methods.contains(&Method::RenewalTrace) {
                records.push(super::trace::record(t, observed));
            }
            // Asked for or not, the trace's own recycles decide whether a fitted
            // model's bound is one for this trace.
            super::trace::demote_fitted_bounds_below(t, &mut records);
        }
        None if methods.contains(&Method::RenewalTrace) => {
            notes.push(super::trace::NEEDS_THE_TRACE.to_string())
        }
        None => {}
    }
    records.sort_by_key(|r| r.bound);
    if filter.phases == 2 {
        product_form_is_no_bound(&mut records);
    }
    judge_all(&mut records, observed);
    state_identified_as_points(&mut records);
    Ok(Judgement {
        records,
        report: Some(report),
        conservative,
        not_run,
        notes,
    })
}

/// Every method's record for a workload whose filter never recycles: exactly 0. The FN
/// models' recursions, which run until the filter recycles, are not needed (and would
/// not end).
fn never_recycling_records(subject: &Subject, methods: &[Method]) -> Vec<Record> {
    let d = subject.model.distinct();
    let note = format!(
        "exact: without new arrivals the D = {d} messages set at most {} bits, the filter never recycles, and FN is 0",
        d as u64 * u64::from(subject.filter.hashes)
    );
    let standing = if subject.fitted_model {
        Standing::FittedModel
    } else {
        Standing::Proven
    };
    let mut records: Vec<Record> = methods
        .iter()
        .filter(|m| !m.reads_trace() || subject.trace.is_some())
        .map(|m| record(Bound::of(*m), 0.0, None, standing, note.clone()))
        .collect();
    records.sort_by_key(|r| r.bound);
    records
}

/// The methods on the subject's model (with their ranges over the fit's alternatives
/// where the model is the fit): the report and one record per method.
fn model_records(
    subject: &Subject,
    model: &FnModel,
    options: &JudgeOptions,
    profile: Option<&Arc<BuiltProfile>>,
) -> Result<(FnReport, Vec<Record>)> {
    let q_check = subject
        .fit
        .and_then(|f| f.q_check.as_ref())
        .filter(|_| subject.fitted_model);
    let (report, alternatives) =
        with_alternatives(subject.filter, q_check, options, profile, || {
            model.evaluate(&options.methods, options.renewal)
        })?;
    let records = Evaluated {
        report: &report,
        fitted_model: subject.fitted_model,
        q_check,
        alternatives: &alternatives,
    }
    .records(Bound::of, options);
    Ok((report, records))
}

/// A synthetic source fitted from its own trace: every method again on the fit, next to
/// the same method on the true workload.
fn fitted_records(
    filter: &FilterConfig,
    fit: &Fitted,
    options: &JudgeOptions,
    profile: Option<&Arc<BuiltProfile>>,
) -> Result<Vec<Record>> {
    let q_check = fit.q_check.as_ref();
    let (fitted, alternatives) = with_alternatives(filter, q_check, options, profile, || {
        FnModel::new(filter, &fit.point, options.renewal.eps)?
            .sharing(options.estimates.clone())
            .with_profile(profile)
            .evaluate(
                &options.methods,
                RenewalOptions {
                    progress: false,
                    ..options.renewal
                },
            )
    })?;
    Ok(Evaluated {
        report: &fitted,
        fitted_model: true,
        q_check: fit.q_check.as_ref(),
        alternatives: &alternatives,
    }
    .records(Bound::fitted, options))
}

/// The conservative renewal bound's record (None without a reuse profile): its
/// standing and the reason, which comes first so that records with the same reason
/// read alike.
fn conservative_record(
    filter: &FilterConfig,
    fit: &Fitted,
    eps: f64,
) -> Result<Option<(Record, ConservativeRenewal)>> {
    let Some((c, g)) = conservative_renewal(filter, &fit.conservative, eps)? else {
        return Ok(None);
    };
    let (standing, note) = if !g.guaranteed {
        (Standing::NotProven, g.note.clone())
    } else if filter.phases == 2 {
        (Standing::Checked, CHECKED_TWO_PHASE.to_string())
    } else {
        let p = match c.p_repeat_interval {
            Some([l, h]) => format!("every p_r in [{l:.4}, {h:.4}]"),
            None => format!("p_r = {:.4}", c.p_repeat),
        };
        (
            Standing::FittedModel,
            format!(
                "a bound for the model with any workload inside the fit's uncertainty (reuse profile at the upper end of its band, simultaneous over every distance, and {p}, both at the level (1 + level) / 2); the fit's sampling error is covered, not the model's assumptions"
            ),
        )
    };
    let r = record(Bound::conservative(), c.fn_upper, None, standing, note);
    Ok(Some((r, c)))
}

/// Why a two-phase Markov "upper bound" is no bound: the product form (FN paper eqs.
/// 12-15) multiplies the halves' non-repeat chances as if independent, which no
/// argument covers with either shared or independent positions, and replays show it
/// below the observed FN by orders of magnitude (3e-16 against 8 %).
pub const PRODUCT_FORM_NOTE: &str = "two phases: the Markov product form (eqs. 12-15) treats the halves as independent, which no argument covers; an approximation, not an upper bound";

/// Two phases: the Markov upper bounds are the product form, which bounds nothing;
/// they are shown as approximations (no verdict), saying why.
fn product_form_is_no_bound(records: &mut [Record]) {
    for r in records {
        if r.claim == Claim::UpperBound && r.bound.reads_q() {
            r.claim = Claim::Approximation;
            r.standing = Standing::NotProven;
            r.note = format!("{PRODUCT_FORM_NOTE}; {}", r.note);
        }
    }
}

/// Each record's verdict against `observed` ([`judge_record`]), when something was
/// observed.
fn judge_all(records: &mut [Record], observed: Option<&Observed>) {
    if let Some(obs) = observed {
        for r in records {
            judge_record(r, obs);
        }
    }
}

/// Drops the range of every record whose range the fit's value pins down
/// ([`Range::pins`]): the trace identifies that method, and every output states it as a
/// point. Called after the verdicts, which stay against the whole spread (a point
/// within 2.5 % of every member the trace allows is still judged against them all:
/// never more optimistic than the evidence).
fn state_identified_as_points(records: &mut [Record]) {
    for r in records {
        if r.range.is_some_and(|x| x.pins(r.value)) {
            r.range = None;
        }
    }
}

/// A method's guarantee as a standing: proven, or (on a fitted workload) proven for the
/// fitted model; otherwise not proven.
fn standing_of(g: &Guarantee, fitted_model: bool) -> Standing {
    match (g.guaranteed, fitted_model) {
        (true, false) => Standing::Proven,
        (true, true) => Standing::FittedModel,
        (false, _) => Standing::NotProven,
    }
}

/// The FN models on one workload, as the judge turns them into records.
struct Evaluated<'a> {
    report: &'a FnReport,
    /// The workload was fitted from a trace.
    fitted_model: bool,
    /// The fit's test, which the Q-based methods are judged by (None: given workload).
    q_check: Option<&'a QFitCheck>,
    /// The Q-based methods on the alternatives of `q_check` ([`alternative_values`]).
    alternatives: &'a [(Method, f64)],
}

impl Evaluated<'_> {
    /// One record per method, named by `as_bound`: the standing from the method's
    /// guarantee, the misfit label where the Q-based methods' fit fails its test, and
    /// their range over the alternatives the trace cannot tell apart from the fit.
    fn records(&self, as_bound: fn(Method) -> Bound, options: &JudgeOptions) -> Vec<Record> {
        let ranges = match self.q_check {
            Some(c) if !c.alternatives.is_empty() => {
                alternative_ranges(options, self.report, self.alternatives)
            }
            _ => Vec::new(),
        };
        let mut records = Vec::new();
        for r in &self.report.results {
            let bound = as_bound(r.method);
            let mut standing = standing_of(&r.guarantee, self.fitted_model);
            let mut note = r.guarantee.note.clone();
            if standing == Standing::FittedModel {
                note = format!("{note}; {FITTED_MODEL}");
            }
            let range = ranges
                .iter()
                .find(|(m, _)| *m == r.method)
                .map(|(_, range)| *range);
            if let (Some(c), true) = (self.q_check, bound.reads_q()) {
                if !c.fits {
                    standing = Standing::NotJudged;
                    note = format!("{}; {note}", misfit_note(c));
                }
            }
            records.push(record(bound, r.fn_rate, range, standing, note));
        }
        records
    }
}

fn record(
    bound: Bound,
    value: f64,
    range: Option<Range>,
    standing: Standing,
    note: String,
) -> Record {
    Record {
        bound,
        value,
        range,
        claim: bound.claim(),
        standing,
        verdict: None,
        regime: None,
        excess: None,
        note,
    }
}

/// Why a bound is not judged against a replay without an FN interval (the reason, up
/// to the ';', is what summaries group by).
pub const TOO_FEW_CYCLES_NOTE: &str = "too few cycles for an observed FN interval";

/// Sets the verdict of a bound against the observed FN: the interval against the bound
/// (or its whole range), in the observation's regime. Approximations, records not
/// judged and observations without an interval get none.
pub fn judge_record(r: &mut Record, observed: &Observed) {
    let side = match r.claim {
        Claim::UpperBound => Side::AtMost,
        Claim::LowerBound => Side::AtLeast,
        Claim::Approximation => return,
    };
    if r.standing == Standing::NotJudged {
        return;
    }
    if observed.interval.is_none() {
        // A point alone cannot tell a bound met from luck, and the point of a replay
        // with too few cycles is mostly its transient: shown, not judged.
        r.standing = Standing::NotJudged;
        r.note = format!("{TOO_FEW_CYCLES_NOTE}; {}", r.note);
        return;
    }
    let check = Check {
        limit: r.value,
        range: r.range.map(|x| (x.low, x.high)),
        side,
        estimate: observed.rate,
        interval: observed.bounds(),
    };
    r.verdict = Some(check.bound());
    r.regime = Some(observed.regime());
    r.excess = check.excess();
}

/// The Q-based methods asked for.
fn q_methods(options: &JudgeOptions) -> Vec<Method> {
    options
        .methods
        .iter()
        .copied()
        .filter(|m| Bound::of(*m).reads_q())
        .collect()
}

/// `evaluate` (the methods on the fit) and [`alternative_values`] on the alternatives
/// of `q_check` at once, on rayon's threads: the alternatives cost several times the
/// fit's own evaluation, and each number is computed on its own, so
/// they are the same whatever the thread count.
fn with_alternatives(
    filter: &FilterConfig,
    q_check: Option<&QFitCheck>,
    options: &JudgeOptions,
    profile: Option<&Arc<BuiltProfile>>,
    evaluate: impl FnOnce() -> Result<FnReport> + Send,
) -> Result<(FnReport, Vec<(Method, f64)>)> {
    let alternatives = q_check.map_or(&[][..], |c| c.alternatives.as_slice());
    let (report, values) = rayon::join(evaluate, || {
        alternative_values(filter, alternatives, options, profile)
    });
    Ok((report?, values?))
}

/// Every Q-based method asked for on every alternative workload the trace cannot tell
/// apart from the fit, in the alternatives' order: each alternative's model (Q and zeta
/// rank by rank, or as runs of ranks from `RUNS_FROM` ranks: `FnModel::range_end`, so
/// that D up to 64 times the distinct keys does not set the memory) is built once, then
/// every (alternative, method) pair is a task of its own, so that the costliest
/// alternative (the largest D) does not hold one core while the other idles.
fn alternative_values(
    filter: &FilterConfig,
    alternatives: &[Workload],
    options: &JudgeOptions,
    given: Option<&Arc<BuiltProfile>>,
) -> Result<Vec<(Method, f64)>> {
    let q_methods = q_methods(options);
    if q_methods.is_empty() {
        return Ok(Vec::new());
    }
    // The profile depends on the filter and eps only, the same for every alternative:
    // the one given (built for the fit's model), else built once here, not once per
    // alternative (about 0.03 s CPU each at sigma = 53 333), from the smallest
    // alternative's model (quickly built), while the models are built rather than
    // after them (the tasks below wait for both).
    let eps = options.renewal.eps;
    let Some(smallest) = alternatives.iter().min_by_key(|w| w.distinct()) else {
        return Ok(Vec::new());
    };
    let (models, profile) = rayon::join(
        || {
            alternatives
                .par_iter()
                .with_max_len(1)
                .map(|w| {
                    let m = FnModel::range_end(filter, w, eps)?;
                    Ok(m.sharing(options.estimates.clone()))
                })
                .collect::<Result<Vec<FnModel>>>()
        },
        || {
            let model = FnModel::new(filter, smallest, eps)?.with_profile(given);
            model.shared_or_built_profile(false)
        },
    );
    let (models, profile) = (models?, profile?);
    let profile = &profile.profile;
    let tasks: Vec<(&FnModel, Method)> = models
        .iter()
        .flat_map(|model| q_methods.iter().map(move |&m| (model, m)))
        .collect();
    // The cost grows with D, and at large D markov-disabling is the costliest method
    // (0.46 of the 0.8 CPU s at D = 7 x 10^6 on cell 11).
    let values = largest_first(
        &tasks,
        |&(model, m)| (model.distinct(), m == Method::MarkovDisabling),
        |&(model, m)| model.markov(m, profile).map(|r| (m, r.fn_rate)),
    );
    Ok(values.into_iter().flatten().collect())
}

/// `run` on every task on rayon's threads, the results in the tasks' order. Each of
/// rayon's threads takes the next task in decreasing `size` (ties in the tasks' order)
/// as soon as it is free, the costliest first, so that the short tasks fill in at the
/// end. Why: a parallel iterator splits the tasks into runs of neighbours, and on cell
/// 11 of `scripts/compare-grid.sh` the last run held the six methods of the largest
/// alternative (D = 7 x 10^6, 0.8 CPU s) on one core while the other idled; started
/// largest first but split in halves, the largest tasks still began late. Each task's
/// value is its own, so the results do not depend on the order or the threads.
fn largest_first<T: Sync, R: Send, K: Ord>(
    tasks: &[T],
    size: impl Fn(&T) -> K,
    run: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(size(&tasks[i])));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let worker = |_| -> Vec<(usize, R)> {
        let mut mine = Vec::new();
        loop {
            let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(&i) = order.get(k) else {
                return mine;
            };
            mine.push((i, run(&tasks[i])));
        }
    };
    let workers = rayon::current_num_threads().clamp(1, tasks.len().max(1));
    let mut done: Vec<(usize, R)> = (0..workers)
        .into_par_iter()
        .with_max_len(1)
        .flat_map_iter(worker)
        .collect();
    done.sort_by_key(|d| d.0);
    done.into_iter().map(|d| d.1).collect()
}

/// The Q-based methods' (least, greatest) value over the fit (`fitted`) and the
/// alternatives' `values` ([`alternative_values`]).
fn alternative_ranges(
    options: &JudgeOptions,
    fitted: &FnReport,
    values: &[(Method, f64)],
) -> Vec<(Method, Range)> {
    let q_methods = q_methods(options);
    let mut ranges: Vec<(Method, Range)> = fitted
        .results
        .iter()
        .filter(|r| q_methods.contains(&r.method))
        .map(|r| {
            let x = r.fn_rate;
            (r.method, Range { low: x, high: x })
        })
        .collect();
    for &(method, x) in values {
        if let Some((_, range)) = ranges.iter_mut().find(|(m, _)| *m == method) {
            range.low = range.low.min(x);
            range.high = range.high.max(x);
        }
    }
    ranges
}

/// The renewal bound for `filter` at the conservative end of a fit: the largest bound
/// over `workloads` (from [`Fit::conservative_workloads`]), each over its whole interval
/// of p_r ([`renewal_worst_case`]), with the guarantee of the workload that gave it;
/// None when there are none (a fit without a reuse profile).
pub fn conservative_renewal(
    filter: &FilterConfig,
    workloads: &[Workload],
    eps: f64,
) -> Result<Option<(ConservativeRenewal, Guarantee)>> {
    let t = std::time::Instant::now();
    let mut worst: Option<(ConservativeRenewal, Guarantee)> = None;
    for w in workloads {
        let model = FnModel::new(filter, w, eps)?;
        let r = renewal_worst_case(
            &model,
            RenewalOptions {
                eps,
                ..RenewalOptions::default()
            },
        )?;
        // Ties: the last, like `Iterator::max_by`.
        if worst.as_ref().is_none_or(|(c, _)| r.fn_upper >= c.fn_upper) {
            let c = ConservativeRenewal {
                fn_upper: r.fn_upper,
                p_repeat: r.p_repeat,
                p_repeat_interval: w.p_repeat_interval,
                proven: filter.phases == 1,
                seconds: 0.0,
            };
            worst = Some((c, model.renewal_guarantee_truncated(r.truncated_mass)));
        }
    }
    Ok(worst.map(|(c, g)| {
        (
            ConservativeRenewal {
                seconds: t.elapsed().as_secs_f64(),
                ..c
            },
            g,
        )
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::verdict::{BoundVerdict, Regime};
    use rbf_data::workload::Placement;
    use rbf_foundations::stats::Interval;

    fn filter() -> FilterConfig {
        FilterConfig::sigma_bounded(2000, 3, 400)
    }

    fn fitted(q_check: Option<QFitCheck>) -> Fitted {
        Fitted {
            point: Workload::zipf(300, 1.0, 0.9, Placement::Uniform),
            conservative: Vec::new(),
            q_check,
            distinct_label: "300".to_string(),
        }
    }

    fn observed(low: f64, high: f64) -> Observed {
        Observed {
            rate: (low + high) / 2.0,
            interval: Some(Interval {
                estimate: (low + high) / 2.0,
                low,
                high,
                level: 0.99,
                samples: 20,
            }),
            cycles: 50.0,
        }
    }

    fn options() -> JudgeOptions {
        JudgeOptions {
            methods: vec![Method::Renewal, Method::MarkovLower, Method::DropPins],
            renewal: RenewalOptions::default(),
            estimates: None,
        }
    }

    /// The contract of TEAM.md: a Q-based method on a fit that does not reproduce the
    /// trace keeps its value, gets no verdict, and says why in the one wording; the
    /// renewal rows (which read the reuse profile) are judged as usual.
    #[test]
    fn a_misfit_is_shown_but_not_judged() {
        let check = QFitCheck::tested(0.05, 0.01, Vec::new());
        let f = filter();
        let fit = fitted(Some(check.clone()));
        let j = judge(
            &Subject::fitted(&f, &fit),
            &options(),
            Some(&observed(0.1, 0.2)),
        )
        .unwrap();
        let label = misfit_note(&check);
        assert_eq!(
            label,
            "model does not fit this trace: reuse distance gap 5.000e-2 at tau 300 (noise 1.000e-2)"
        );
        for b in [Bound::of(Method::MarkovLower), Bound::of(Method::DropPins)] {
            let r = j.get(b).expect("computed");
            assert!(r.value > 0.0);
            assert_eq!(r.standing, Standing::NotJudged);
            assert_eq!(r.verdict, None);
            assert!(r.note.starts_with(&label), "{}", r.note);
        }
        let ren = j.get(Bound::of(Method::Renewal)).expect("renewal");
        assert_eq!(ren.standing, Standing::FittedModel);
        assert!(ren.verdict.is_some());
        // The same workload given as the truth: nothing to check, proven where the
        // variant is.
        let given = judge(&Subject::given(&f, &fit.point), &options(), None).unwrap();
        assert_eq!(
            given.get(Bound::of(Method::Renewal)).unwrap().standing,
            Standing::Proven
        );
        assert_eq!(
            given.get(Bound::of(Method::Renewal)).unwrap().value,
            ren.value
        );
    }

    /// The tasks started largest first come back in the tasks' order, each with its own
    /// value, on one thread and on three, sizes tied or not.
    #[test]
    fn largest_first_keeps_the_tasks_order() {
        for n in [0usize, 1, 2, 7, 48] {
            let tasks: Vec<(usize, u64)> = (0..n).map(|i| ((i * 7919) % 5, i as u64)).collect();
            let plain: Vec<u64> = tasks.iter().map(|t| t.1 * t.1 + t.0 as u64).collect();
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let got =
                    pool.install(|| largest_first(&tasks, |t| t.0, |t| t.1 * t.1 + t.0 as u64));
                assert_eq!(got, plain, "{n} tasks, {threads} threads");
            }
        }
    }

    /// The fit's methods and the alternatives' run on rayon's threads: the records are
    /// the same, bit for bit, on one thread and on several.
    #[test]
    fn alternatives_give_the_same_records_on_any_number_of_threads() {
        let alternatives: Vec<Workload> = [0.6, 0.8, 1.2, 1.4]
            .into_iter()
            .map(|a| Workload::zipf(300, a, 0.9, Placement::Top))
            .collect();
        let f = filter();
        let fit = fitted(Some(QFitCheck::tested(0.001, 0.01, alternatives)));
        let options = JudgeOptions::default();
        let on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let j = pool.install(|| judge(&Subject::fitted(&f, &fit), &options, None).unwrap());
            j.records
                .iter()
                .map(|r| (r.bound, r.value, r.range.map(|x| (x.low, x.high))))
                .collect::<Vec<_>>()
        };
        let one = on(1);
        assert!(one.iter().filter(|r| r.2.is_some()).count() >= 5, "{one:?}");
        assert_eq!(one, on(2));
        assert_eq!(one, on(3));
    }

    /// Alternatives the trace cannot tell apart: each Q-based method reports its range
    /// over the fit and every alternative, and is judged against the whole range.
    #[test]
    fn alternatives_give_a_range_judged_as_a_whole() {
        let alternatives = vec![
            Workload::zipf(300, 0.6, 0.9, Placement::Uniform),
            Workload::zipf(300, 1.4, 0.9, Placement::Uniform),
        ];
        let check = QFitCheck::tested(0.001, 0.01, alternatives.clone());
        let f = filter();
        let fit = fitted(Some(check));
        let j = judge(&Subject::fitted(&f, &fit), &options(), None).unwrap();
        let lower = j.get(Bound::of(Method::MarkovLower)).expect("markov lower");
        let range = lower.range.expect("a range");
        // The range is the spread of the method over the fit and the alternatives,
        // each computed on its own.
        let each = markov_lower_on(&f, &fit.point, &alternatives);
        let lo = each.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = each.iter().copied().fold(0.0, f64::max);
        assert_eq!((range.low, range.high), (lo, hi));
        assert!(lo < lower.value && lower.value < hi, "{each:?}");
        assert_eq!(
            lower.standing,
            Standing::FittedModel.and(Standing::NotProven)
        );
        assert!(
            j.get(Bound::of(Method::Renewal)).unwrap().range.is_none(),
            "renewal reads S"
        );
        // Judged against the whole range: an interval just above the fitted value holds
        // against the point but not against the range's top.
        let judged = |low: f64, high: f64| {
            let mut r = lower.clone();
            judge_record(&mut r, &observed(low, high));
            (r.verdict, r.regime)
        };
        let v = lower.value;
        assert_eq!(
            judged(v * 1.001, v * 1.002).0,
            Some(BoundVerdict::Undecided)
        );
        assert_eq!(judged(hi * 1.001, hi * 1.1).0, Some(BoundVerdict::Holds));
        assert_eq!(judged(lo * 0.5, lo * 0.9).0, Some(BoundVerdict::Violated));
        assert_eq!(judged(lo * 0.9, v).0, Some(BoundVerdict::Undecided));
        assert_eq!(judged(hi * 1.001, hi * 1.1).1, Some(Regime::Steady));
    }

    /// The Markov lower bound on the fit's point and on each alternative, each
    /// computed on its own: what a range over them must span.
    fn markov_lower_on(f: &FilterConfig, point: &Workload, alternatives: &[Workload]) -> Vec<f64> {
        std::iter::once(point)
            .chain(alternatives)
            .map(|w| {
                FnModel::new(f, w, rbf_predicted::model::false_negative::DEFAULT_EPS)
                    .unwrap()
                    .evaluate(&[Method::MarkovLower], RenewalOptions::default())
                    .unwrap()
                    .results[0]
                    .fn_rate
            })
            .collect()
    }

    /// A method the alternatives pin down to within 2.5 % is stated as a point (no
    /// range in any output), one they do not as a range; either way the verdict is
    /// against the whole spread.
    #[test]
    fn a_method_is_a_point_only_where_its_own_range_is_narrow() {
        let f = filter();
        let method = |alternatives: Vec<Workload>, obs: Option<(f64, f64)>| {
            let fit = fitted(Some(QFitCheck::tested(0.001, 0.01, alternatives.clone())));
            let o = obs.map(|(l, h)| observed(l, h));
            let j = judge(&Subject::fitted(&f, &fit), &options(), o.as_ref()).unwrap();
            let each = markov_lower_on(&f, &fit.point, &alternatives);
            let r = j.get(Bound::of(Method::MarkovLower)).unwrap().clone();
            (r, each)
        };
        let near = |a: f64| Workload::zipf(300, a, 0.9, Placement::Uniform);
        // Near the fit's exponent: every member within 2.5 % of the point.
        let (point, each) = method(vec![near(0.99), near(1.01)], None);
        let (lo, hi) = each
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(l, h), x| (l.min(*x), h.max(*x)));
        assert!(hi > lo, "the members differ: {each:?}");
        assert!(
            each.iter()
                .all(|x| (x - point.value).abs() <= 0.025 * point.value),
            "{each:?}"
        );
        assert_eq!(point.range, None, "a narrow range is a point");
        // ... judged against the spread all the same: an interval above the point but
        // not above every member's value is undecided for a lower bound.
        let v = point.value;
        assert!(hi > v, "{each:?}");
        let (r, _) = method(
            vec![near(0.99), near(1.01)],
            Some((v * (1.0 + 1e-6), (v + hi) / 2.0)),
        );
        assert_eq!(r.verdict, Some(BoundVerdict::Undecided));
        assert_eq!(r.range, None);
        let (r, _) = method(vec![near(0.99), near(1.01)], Some((hi * 1.001, hi * 1.1)));
        assert_eq!(r.verdict, Some(BoundVerdict::Holds));
        // Far from it: a range, printed and judged as a whole.
        let (wide, each) = method(vec![near(0.6), near(1.4)], None);
        let range = wide.range.expect("a wide range stays a range");
        assert!(each
            .iter()
            .any(|x| (x - wide.value).abs() > 0.025 * wide.value));
        assert!(range.low < wide.value && wide.value < range.high);
    }
}
