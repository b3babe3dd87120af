//! Evaluates grid points in parallel. Each point is computed by one thread from its
//! inputs alone and results are collected in point order, so the output is the same
//! for any thread count.

use rayon::prelude::*;

use super::config::{ExperimentConfig, Measure};
use super::grid::{Point, SigmaRule};
use super::pass::Replayed;
use super::resume::Journal;
use super::row::Row;
use super::source::{Prepared, Source};
use crate::compare::verdict::MIN_STEADY_CYCLES;
use crate::compare::{judge, FpModel, JudgeOptions, Observed, Rate, Regime, Seeds, Subject};
use rbf_data::filter::FilterConfig;
use rbf_data::workload::Workload;
use rbf_foundations::error::Result;
use rbf_foundations::progress::{check_interrupt, interrupted, Progress};
use rbf_observed::trace_renewal::TraceBound;
use rbf_predicted::model::false_negative::markov::profile::states_bound;
use rbf_predicted::model::false_negative::markov::runs;
use rbf_predicted::model::false_negative::markov::shared::{
    DisablingInputs, DisablingKey, SharedEstimates,
};
use rbf_predicted::model::false_negative::RenewalMode;
use rbf_predicted::model::false_negative::{Method, RUNS_FROM};
use rbf_predicted::model::false_positive::{capacity, sigma_for_target, CapacityQuery};
use rbf_predicted::model::tau::Transitions;
use std::sync::Arc;

/// Runs `points` (already sharded) and returns one row per point, in point order.
/// Points in `journal` (from an interrupted earlier run) are taken from it, and every
/// point computed is recorded there. After Ctrl-C no new point starts and the result
/// is [`rbf_foundations::error::Error::Interrupted`] (the points done so far stay in the journal).
pub fn run_points(
    config: &ExperimentConfig,
    sources: &[Prepared],
    points: &[Point],
    filters: Vec<Option<PointFilter>>,
    replayed: Vec<Option<PointReplays>>,
    progress: bool,
    journal: Option<&Journal>,
) -> Result<Vec<Row>> {
    let estimates = shared_estimates(config, sources, points, &filters, progress);
    // The warm-up stops between its tasks on a Ctrl-C: so does the run.
    check_interrupt()?;
    // Started after the estimates (they show their own progress): the points' pace
    // predicts how long the points take.
    let bar = if progress {
        Progress::new("rbf run", points.len() as f64, "points")
    } else {
        Progress::hidden()
    };
    let rows: Vec<Option<Row>> = points
        .par_iter()
        .zip(filters.into_par_iter())
        .zip(replayed.into_par_iter())
        .map(|((p, filter), replayed)| {
            if let Some(row) = journal.and_then(|j| j.done(p.index)) {
                bar.add(1.0);
                return Some(row.clone());
            }
            if interrupted() {
                return None;
            }
            let shared = estimates.get(p.source).cloned();
            let filter = filter.unwrap_or_else(|| point_filter(p).map_err(|e| e.to_string()));
            let row = evaluate(config, &sources[p.source], p, filter, replayed, shared);
            if interrupted() {
                // Work stopped by the interrupt (the renewal recursion polls it) became
                // a note on the row: such a row is not a result, and is neither kept
                // nor journalled for a resumed run to take as one.
                return None;
            }
            if let Some(j) = journal {
                j.record(&row);
            }
            bar.add(1.0);
            Some(row)
        })
        .collect();
    bar.finish();
    check_interrupt()?;
    Ok(rows.into_iter().flatten().collect())
}

/// One store of non-repeat estimates per source, for the states its filters' profiles
/// can reach, filled up front: the Markov methods' estimates that read Q alone are
/// computed once for all of a source's filters rather than once per filter (the same
/// values, [`rbf_predicted::model::false_negative::markov::shared`]).
///
/// The states a filter's profile reaches are bounded by [`states_bound`], at most its
/// sigma: about 0.4 sigma at k = 3 and sigma = 0.38 M (the store ran to sigma, and
/// computed two and a half times the states any filter read). A profile reaching
/// beyond the store would compute its own estimates, the same values.
fn shared_estimates(
    config: &ExperimentConfig,
    sources: &[Prepared],
    points: &[Point],
    filters: &[Option<PointFilter>],
    progress: bool,
) -> Vec<Arc<SharedEstimates>> {
    let mut horizon = vec![0u64; sources.len()];
    let mut firsts: Vec<Vec<usize>> = vec![Vec::new(); sources.len()];
    for (p, f) in points.iter().zip(filters) {
        let (Some(Ok(f)), Some(h), Some(fs)) =
            (f, horizon.get_mut(p.source), firsts.get_mut(p.source))
        else {
            continue;
        };
        if let Some(sigma) = f.sigma {
            *h = (*h).max(profile_reach(f, sigma, config.eps));
            // A profile's first state: 1 for a retaining filter (its retained message).
            let first = usize::from(f.retaining);
            if !fs.contains(&first) {
                fs.push(first);
            }
        }
    }
    let methods = config.fn_methods();
    let warm = methods.iter().copied().any(SharedEstimates::shares);
    let disabling = methods.contains(&Method::MarkovDisabling);
    horizon
        .into_iter()
        .zip(firsts)
        .zip(sources)
        .map(|((h, fs), source)| {
            let store = SharedEstimates::new(h);
            if (warm || disabling) && h > 0 {
                warm_store(&store, source, &fs, (warm, disabling), progress);
            }
            store
        })
        .collect()
}

/// Fills `store` for `source`'s workloads: the estimates that read Q alone (`warm`)
/// and markov-disabling's on runs (`disabling`).
fn warm_store(
    store: &SharedEstimates,
    source: &Prepared,
    fs: &[usize],
    (warm, disabling): (bool, bool),
    progress: bool,
) {
    // Each workload's Q is made once: markov-disabling's list carries it.
    let chains = match disabling {
        true => disabling_workloads(source),
        false => Vec::new(),
    };
    let own_qs = match warm && !disabling {
        true => model_qs(source),
        false => Vec::new(),
    };
    let mut qs: Vec<&[f64]> = own_qs.iter().map(Vec::as_slice).collect();
    if warm {
        for (q, _) in &chains {
            if !qs.contains(&q.as_slice()) {
                qs.push(q);
            }
        }
    }
    let inputs: Vec<(&[f64], DisablingInputs)> = chains
        .iter()
        .map(|(q, k)| (q.as_slice(), k.inputs()))
        .collect();
    store.warm(&qs, fs, &inputs, progress);
}

/// The last state `f`'s profile can reach ([`states_bound`]), at most sigma; a filter
/// the models refuse keeps sigma (and never reads the store).
fn profile_reach(f: &FilterConfig, sigma: u64, eps: f64) -> u64 {
    match f.validate() {
        Ok(()) => {
            let t = Transitions::new(f.half_memory(), f.hashes, f.hashing);
            sigma.min(states_bound(t, sigma, eps))
        }
        Err(_) => sigma,
    }
}

/// markov-disabling's inputs for every workload the judge runs it on for `source` (the
/// workloads of [`model_qs`]), as the judge's models hold them: Q, zeta, p_r and the
/// runs' tolerance, [`runs::TOLERANCE`] for the model and the fit,
/// [`runs::RANGE_TOLERANCE`] for the fit's alternatives (range ends).
fn disabling_workloads(source: &Prepared) -> Vec<(Vec<f64>, DisablingKey)> {
    let points = source
        .workload
        .iter()
        .chain(source.fitted.iter().map(|f| &f.point))
        .map(|w| (w, runs::TOLERANCE));
    let ends = source
        .fitted
        .iter()
        .flat_map(|f| f.q_check.iter().flat_map(|c| &c.alternatives))
        .filter(|w| held_rank_by_rank(w))
        .map(|w| (w, runs::RANGE_TOLERANCE));
    let mut out: Vec<(Vec<f64>, DisablingKey)> = Vec::new();
    for (w, tolerance) in points.chain(ends) {
        let (Ok(q), Ok(zeta)) = (w.repeat_distribution(), w.placement_distribution()) else {
            continue;
        };
        let key = DisablingKey {
            zeta: zeta.into(),
            p_r: w.p_repeat,
            tolerance,
        };
        let one = (q.into(), key);
        if !out.contains(&one) {
            out.push(one);
        }
    }
    out
}

/// Whether the judge holds an alternative's Q rank by rank (and reads the shared store
/// for it): from [`RUNS_FROM`] ranks it holds runs and computes on its own
/// ([`rbf_predicted::model::false_negative::FnModel::range_end`]).
fn held_rank_by_rank(w: &Workload) -> bool {
    w.distinct() < RUNS_FROM
}

/// The Q of every workload the judge runs Q-based methods on for `source`: its model,
/// and its fit with the alternatives the fit cannot tell apart.
fn model_qs(source: &Prepared) -> Vec<Vec<f64>> {
    let fitted = source.fitted.iter().flat_map(|f| {
        let ends = f.q_check.iter().flat_map(|c| &c.alternatives);
        std::iter::once(&f.point).chain(ends.filter(|w| held_rank_by_rank(w)))
    });
    let mut qs: Vec<Vec<f64>> = Vec::new();
    for w in source.workload.iter().chain(fitted) {
        if let Ok(q) = w.repeat_distribution() {
            let q: Vec<f64> = q.into();
            if !qs.contains(&q) {
                qs.push(q);
            }
        }
    }
    qs
}

/// A point's filter with sigma settled ([`point_filter`]), or why it has none.
pub type PointFilter = std::result::Result<FilterConfig, String>;

/// The filters of the points a run computes (None for the points `journal` holds),
/// each settled once, in parallel: a target FP's sigma walks the bit-count chain.
pub fn point_filters(points: &[Point], journal: Option<&Journal>) -> Vec<Option<PointFilter>> {
    points
        .par_iter()
        .map(|p| {
            journal
                .is_none_or(|j| j.done(p.index).is_none())
                .then(|| point_filter(p).map_err(|e| e.to_string()))
        })
        .collect()
}

/// A point's replays from the passes over its source ([`super::pass`]), or why they
/// gave no report.
pub type PointReplays = std::result::Result<Replayed, String>;

/// Everything the config asks for at one point, its replays done by the passes over
/// its source (`replayed`; None where the config observes nothing). Errors become
/// notes on the row: one infeasible point (a target FP no sigma meets, a variant a
/// model does not cover) must not sink the rest of a study.
pub fn evaluate(
    config: &ExperimentConfig,
    source: &Prepared,
    point: &Point,
    filter: PointFilter,
    replayed: Option<PointReplays>,
    estimates: Option<Arc<SharedEstimates>>,
) -> Row {
    let mut row = Row::new(point, &source.name, config.seeds.len());
    for n in &source.notes {
        row.note(n);
    }
    let filter = match filter {
        Ok(f) => f,
        Err(e) => {
            row.note(format!("not run: {e}"));
            return row;
        }
    };
    row.sigma = filter.sigma;
    if config.wants(Measure::FpModel) {
        if let Err(e) = fp_model(&filter, &mut row) {
            row.note(format!("fp-model: {e}"));
        }
    }
    if config.wants(Measure::Capacity) {
        if let Err(e) = capacity_columns(point, &filter, &mut row) {
            row.note(format!("capacity: {e}"));
        }
    }
    let (mut observed, mut trace) = (None, None);
    if config.wants(Measure::Observed) {
        match observed_of(config, source, point, replayed, &mut row) {
            Ok((o, t)) => (observed, trace) = (Some(o), t),
            Err(e) => row.note(format!("observed: {e}")),
        }
    }
    let methods = config.fn_methods();
    if !methods.is_empty() {
        row.fitted_workload = matches!(source.source, Source::Trace(_));
        let options = JudgeOptions {
            estimates,
            ..JudgeOptions::new(methods, config.eps, config.renewal_tolerance, false)
        };
        if let Err(e) = fn_models(
            config,
            source,
            &filter,
            &options,
            observed.as_ref(),
            trace.as_ref(),
            &mut row,
        ) {
            row.note(format!("FN models: {e}"));
        }
    }
    row
}

/// [`observe_point`] on the point's replays, or why there are none.
fn observed_of(
    config: &ExperimentConfig,
    source: &Prepared,
    point: &Point,
    replayed: Option<PointReplays>,
    row: &mut Row,
) -> std::result::Result<(Observed, Option<TraceBound>), String> {
    match replayed {
        Some(Ok(r)) => observe_point(config, source, point, r, row).map_err(|e| e.to_string()),
        Some(Err(e)) => Err(e),
        None => Err("not replayed".to_string()),
    }
}

/// The point's filter with sigma settled (seed 0: the models do not hash).
pub fn point_filter(point: &Point) -> Result<FilterConfig> {
    let sigma = match point.rule {
        // The filter's shape (M, k, phases, hashing...) is all the FP model needs.
        SigmaRule::TargetFp(t) => Some(sigma_for_target(&point.filter(None, 0), t)?.sigma),
        _ => None,
    };
    let f = point.filter(sigma, 0);
    f.validate()?;
    Ok(f)
}

fn fp_model(filter: &FilterConfig, row: &mut Row) -> Result<()> {
    let p = FpModel::of(filter)?;
    row.fp_model = p.value;
    for n in p.notes {
        row.note(format!("fp-model: {n}"));
    }
    Ok(())
}

/// FP paper §V-B: how many messages per cycle each sizing lets the memory hold.
fn capacity_columns(point: &Point, filter: &FilterConfig, row: &mut Row) -> Result<()> {
    let SigmaRule::TargetFp(target) = point.rule else {
        return Ok(());
    };
    let c = capacity(&CapacityQuery {
        memory: point.memory,
        target,
        k_max: point.hashes,
        hashing: filter.hashing,
        retaining: filter.retaining,
        copy_over: filter.copy_over,
    })?;
    let model = if point.phases == 2 {
        c.capacity_two_phase
    } else {
        c.capacity_sigma
    };
    row.capacity_sigma = Some(model);
    row.capacity_worst_case = Some(c.capacity_fw);
    row.capacity_ratio = (model > 0.0).then(|| c.capacity_fw / model);
    Ok(())
}

/// The observed rates of the point's replays (one per seed): means over seeds with
/// their intervals ([`Observed::of`]). Returns the observed FN the bounds are judged
/// against and the trace's own bound (the mean of the seeds' where each seed is a
/// trace of its own, as the observed rate is).
fn observe_point(
    config: &ExperimentConfig,
    source: &Prepared,
    point: &Point,
    replayed: Replayed,
    row: &mut Row,
) -> Result<(Observed, Option<TraceBound>)> {
    let Replayed { reports, traces } = replayed;
    let level = config.confidence;
    // Seeds of a synthetic source are new traces; seeds of a trace file, new hash
    // positions of the same arrivals.
    let seeds = match source.source {
        Source::Synthetic(_) => Seeds::Independent,
        _ => Seeds::SameTrace,
    };
    let observed = |rate| {
        Observed::of(&reports, level, rate, seeds)
            .ok_or(rbf_foundations::error::Error::Internal("no seed to replay"))
    };
    let fn_ = observed(Rate::Fn)?;
    let fp = observed(Rate::FpCountInstance)?;
    row.arrivals = reports.first().map(|r| r.counts.arrivals);
    row.cycles = Some(fn_.cycles);
    row.observed_fp = Some(observed(Rate::Fp)?.rate);
    row.observed_fp_count_instance = Some(fp.rate);
    row.observed_fp_count_instance_low = fp.bounds().map(|i| i.0);
    row.observed_fp_count_instance_high = fp.bounds().map(|i| i.1);
    row.observed_fn = Some(fn_.rate);
    row.observed_fn_low = fn_.bounds().map(|i| i.0);
    row.observed_fn_high = fn_.bounds().map(|i| i.1);
    if fn_.interval.is_none() {
        row.note("too few cycles for an FN interval: bounds are not judged here");
    }
    if fn_.regime() == Regime::Transient {
        row.note(format!(
            "fewer than {MIN_STEADY_CYCLES} recycles per replay: the transient after the warm-up, not the steady state the models describe (verdicts counted apart)"
        ));
    }
    if point.phases == 2 && !point.copy_over {
        row.note("observed without copy-over");
    }
    Ok((fn_, TraceBound::mean_of(&traces)))
}

/// The FN paper's models on the source's workload, judged against the observed FN
/// ([`crate::compare::judge()`]).
fn fn_models(
    config: &ExperimentConfig,
    source: &Prepared,
    filter: &FilterConfig,
    options: &JudgeOptions,
    observed: Option<&Observed>,
    trace: Option<&TraceBound>,
    row: &mut Row,
) -> Result<()> {
    let Some(workload) = &source.workload else {
        return Ok(());
    };
    let mut subject = match (&source.source, &source.fitted) {
        (Source::Trace(_), Some(fitted)) => Subject::fitted(filter, fitted),
        (_, fitted) => Subject {
            fit: fitted.as_ref(),
            ..Subject::given(filter, workload)
        },
    };
    subject.trace = trace;
    let j = judge(&subject, options, observed)?;
    for n in j.notes {
        row.note(n);
    }
    // A certified value says so whether it was asked for or is the default (from
    // 2^19 bits); the exact engine is named where a tolerance was asked and not met.
    if let Some(r) = j.report.as_ref().and_then(|r| r.renewal) {
        match (r.mode, config.renewal_tolerance) {
            (RenewalMode::Certified, _) => row.note(format!(
                "renewal bound from the certified mode: at most {:.1e} above the exact engine's value",
                r.certified_tolerance
            )),
            (RenewalMode::Exact, Some(_)) => {
                row.note(format!("renewal bound from the exact engine: {}", r.mode_note))
            }
            (RenewalMode::Exact, None) => {}
        }
    }
    row.models = j.records;
    Ok(())
}
