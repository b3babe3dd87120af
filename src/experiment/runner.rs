//! Evaluates grid points in parallel. Each point is computed by one thread from its
//! inputs alone and results are collected in point order, so the output is the same
//! for any thread count.

use rayon::prelude::*;

use super::config::{ExperimentConfig, Measure};
use super::grid::{Point, SigmaRule};
use super::resume::Journal;
use super::row::{BoundColumns, Row, JUDGED_BOUNDS};
use super::source::{Fitted, Prepared, Source};
use crate::compare::{conservative_renewal, sigma_for_target};
use crate::error::Result;
use crate::filter::FilterConfig;
use crate::model::fneg::{Claim, FnModel, Method, RenewalMode, RenewalOptions};
use crate::model::fp::{capacity, predict, CapacityQuery};
use crate::progress::{check_interrupt, interrupted, Progress};
use crate::replay::{Observed, ReplayOptions, ReplayReport, Replays};
use crate::report::verdict::{Check, Regime, MIN_STEADY_CYCLES};
use crate::stats::student_t_quantile;

/// Runs `points` (already sharded) and returns one row per point, in point order.
/// Points in `journal` (from an interrupted earlier run) are taken from it, and every
/// point computed is recorded there. After Ctrl-C no new point starts and the result
/// is [`crate::Error::Interrupted`] (the points done so far stay in the journal).
pub fn run_points(
    config: &ExperimentConfig,
    sources: &[Prepared],
    points: &[Point],
    progress: bool,
    journal: Option<&Journal>,
) -> Result<Vec<Row>> {
    let bar = if progress {
        Progress::new("rbf run", points.len() as f64, "points")
    } else {
        Progress::hidden()
    };
    let rows: Vec<Option<Row>> = points
        .par_iter()
        .map(|p| {
            if let Some(row) = journal.and_then(|j| j.done(p.index)) {
                bar.add(1.0);
                return Some(row.clone());
            }
            if interrupted() {
                return None;
            }
            let row = evaluate(config, &sources[p.source], p);
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

/// Everything the config asks for at one point. Errors become notes on the row:
/// one infeasible point (a target FP no sigma meets, a variant a model does not
/// cover) must not sink the rest of a study.
pub fn evaluate(config: &ExperimentConfig, source: &Prepared, point: &Point) -> Row {
    let mut row = Row::new(point, &source.name, config.seeds.len());
    for n in &source.notes {
        row.note(n);
    }
    let filter = match resolve(point, &mut row) {
        Ok(f) => f,
        Err(e) => {
            row.note(format!("not run: {e}"));
            return row;
        }
    };
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
    if config.wants(Measure::Observed) {
        if let Err(e) = observe(config, source, point, &filter, &mut row) {
            row.note(format!("observed: {e}"));
        }
    }
    let methods = config.fn_methods();
    if !methods.is_empty() {
        row.fitted_workload = matches!(source.source, Source::Trace(_));
        if let Err(e) = fn_models(config, source, &filter, &methods, &mut row) {
            row.note(format!("FN models: {e}"));
        }
    }
    judge(&mut row);
    row
}

/// The point's filter with sigma settled (seed 0: the models do not hash).
fn resolve(point: &Point, row: &mut Row) -> Result<FilterConfig> {
    let sigma = match point.rule {
        SigmaRule::TargetFp(t) => {
            let probe = point.filter(Some(u64::from(point.hashes)), 0);
            let (s, _) = sigma_for_target(&probe, t)?;
            Some(s)
        }
        _ => None,
    };
    let f = point.filter(sigma, 0);
    f.validate()?;
    row.sigma = f.sigma;
    Ok(f)
}

fn fp_model(filter: &FilterConfig, row: &mut Row) -> Result<()> {
    let p = predict(filter)?;
    row.fp_model = p
        .sigma
        .map(|s| s.fp_sigma)
        .or(p.n_bounded.map(|n| n.fp_actual_lower_bound));
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

fn replay_once(
    config: &ExperimentConfig,
    source: &Prepared,
    filter: &FilterConfig,
    seed: u64,
) -> Result<ReplayReport> {
    // One filter per hash seed, so that the intervals cover the hash positions.
    let mut r = Replays::new(
        filter,
        ReplayOptions {
            warmup: source.warmup,
            confidence: config.confidence,
        },
        config.hash_seeds,
    )?;
    // `run` works in batches so that ground-truth lookups are prefetched.
    r.run(source.source.messages(seed)?);
    Ok(r.report())
}

/// A rate's estimate over seeds and its interval, clamped to [0, 1]. Each seed's
/// [`Observed`] is the rate over complete cycles with its interval (hash seeds x time
/// batches). One seed: that. Several seeds of a synthetic source are independent traces:
/// a Student t interval over the seeds' estimates. Several seeds of one trace file share
/// its arrivals, so their errors may be fully correlated and averaging cannot be
/// assumed to shrink them: the mean of their half-widths around the mean estimate.
fn rate_over_seeds(
    reports: &[ReplayReport],
    level: f64,
    independent: bool,
    value: impl Fn(&ReplayReport) -> Observed,
) -> (f64, Option<(f64, f64)>) {
    let obs: Vec<Observed> = reports.iter().map(value).collect();
    let n = obs.len() as f64;
    let mean = obs.iter().map(|o| o.estimate).sum::<f64>() / n;
    let clamp = |h: f64| ((mean - h).clamp(0.0, 1.0), (mean + h).clamp(0.0, 1.0));
    let interval = if obs.len() >= 2 && independent {
        let var = obs.iter().map(|o| (o.estimate - mean).powi(2)).sum::<f64>() / (n - 1.0);
        Some(clamp(
            student_t_quantile(0.5 + level / 2.0, n - 1.0) * (var / n).sqrt(),
        ))
    } else if obs.len() >= 2 {
        let h: Option<Vec<f64>> = obs
            .iter()
            .map(|o| o.interval.map(|i| i.half_width()))
            .collect();
        h.map(|h| clamp(h.iter().sum::<f64>() / n))
    } else {
        obs.first()
            .and_then(|o| o.interval)
            .map(|i| (i.low.clamp(0.0, 1.0), i.high.clamp(0.0, 1.0)))
    };
    (mean, interval)
}

/// Replays once per seed; rates are means over seeds with intervals from
/// [`rate_over_seeds`].
fn observe(
    config: &ExperimentConfig,
    source: &Prepared,
    point: &Point,
    filter: &FilterConfig,
    row: &mut Row,
) -> Result<()> {
    let mut reports = Vec::with_capacity(config.seeds.len());
    for &seed in &config.seeds {
        let mut f = filter.clone();
        f.seed = seed;
        reports.push(replay_once(config, source, &f, seed)?);
    }
    let n = reports.len() as f64;
    let level = config.confidence;
    let independent = matches!(source.source, Source::Synthetic(_));
    row.arrivals = reports.first().map(|r| r.counts.arrivals);
    row.cycles = Some(reports.iter().map(|r| r.cycles as f64).sum::<f64>() / n);
    row.observed_fp = Some(
        reports
            .iter()
            .map(|r| r.observed_fp().estimate)
            .sum::<f64>()
            / n,
    );
    let (fp, fp_interval) = rate_over_seeds(&reports, level, independent, |r| {
        r.observed_fp_count_instance()
    });
    row.observed_fp_count_instance = Some(fp);
    row.observed_fp_count_instance_low = fp_interval.map(|i| i.0);
    row.observed_fp_count_instance_high = fp_interval.map(|i| i.1);
    let (fn_rate, fn_interval) =
        rate_over_seeds(&reports, level, independent, ReplayReport::observed_fn);
    row.observed_fn = Some(fn_rate);
    let (low, high) = fn_interval.unwrap_or_else(|| {
        row.note("too few cycles for an FN interval");
        (fn_rate, fn_rate)
    });
    if row.regime() == Some(Regime::Transient) {
        row.note(format!(
            "fewer than {MIN_STEADY_CYCLES} recycles per replay: observed rates describe the transient after the warm-up, not the steady state the models describe (verdicts in the transient column)"
        ));
    }
    row.observed_fn_low = Some(low);
    row.observed_fn_high = Some(high);
    if point.phases == 2 && !point.copy_over {
        row.note("observed without copy-over");
    }
    Ok(())
}

/// Sets the bound verdicts from the observed FN interval and the models' numbers, in
/// the column of the replay's regime; a point estimate beyond a bound gets a note that
/// says by how much.
fn judge(row: &mut Row) {
    let (Some(observed), Some(low), Some(high), Some(regime)) = (
        row.observed_fn,
        row.observed_fn_low,
        row.observed_fn_high,
        row.regime(),
    ) else {
        return;
    };
    let interval = Some((low, high));
    for b in &JUDGED_BOUNDS {
        let Some(limit) = (b.value)(row) else {
            continue;
        };
        let check = Check {
            limit,
            side: b.side,
            estimate: observed,
            interval,
        };
        *(b.verdict_mut)(row) = BoundColumns::judge(&check, regime);
        if let Some(text) = check.excess_text("the bound") {
            let regime = match regime {
                Regime::Steady => "steady state",
                Regime::Transient => "transient",
            };
            row.note(format!("{} {} ({regime}): {text}", b.name, check.bound()));
        }
    }
}

/// The FN paper's models on the source's workload, next to the observed FN.
fn fn_models(
    config: &ExperimentConfig,
    source: &Prepared,
    filter: &FilterConfig,
    methods: &[Method],
    row: &mut Row,
) -> Result<()> {
    let Some(workload) = &source.workload else {
        return Ok(());
    };
    let d = workload.distinct();
    if workload.never_recycles(filter) {
        row.note(format!(
            "FN models not run: the workload has D = {d} messages and no new arrivals, so the filter never recycles and FN is 0"
        ));
        return Ok(());
    }
    let model = FnModel::new(filter, workload, config.eps)?;
    let report = model.evaluate(
        methods,
        RenewalOptions {
            eps: config.eps,
            tolerance: config.renewal_tolerance,
            ..RenewalOptions::default()
        },
    )?;
    for r in &report.results {
        let slot = match r.method {
            Method::Renewal => &mut row.fn_renewal_upper,
            Method::MarkovLower => &mut row.fn_markov_lower,
            Method::MarkovSwr => &mut row.fn_markov_swr,
            Method::MarkovUniform => &mut row.fn_markov_uniform,
            Method::MarkovBiuniform => &mut row.fn_markov_biuniform,
            Method::DropPins => &mut row.fn_drop_pins,
            Method::MarkovDisabling => &mut row.fn_markov_disabling,
        };
        *slot = Some(r.fn_rate);
        let g = &r.guarantee;
        if g.claim != Claim::Approximation && !g.guaranteed {
            row.note(format!("{}: {}", r.method.name(), g.note));
        }
        match r.method {
            Method::Renewal => row.renewal_guaranteed = Some(g.guaranteed),
            Method::MarkovLower
            | Method::MarkovSwr
            | Method::MarkovUniform
            | Method::MarkovBiuniform => row.markov_guaranteed = Some(g.guaranteed),
            Method::DropPins | Method::MarkovDisabling => {}
        }
    }
    if let (Some(r), Some(_)) = (&report.renewal, config.renewal_tolerance) {
        row.note(match r.mode {
            RenewalMode::Certified => format!(
                "renewal bound from the certified mode: at most {:.1e} above the exact engine's value",
                r.certified_tolerance
            ),
            RenewalMode::Exact => format!("renewal bound from the exact engine: {}", r.mode_note),
        });
    }
    if methods.contains(&Method::Renewal) {
        if let Some(fitted) = &source.fitted {
            fitted_renewal(config, source, fitted, filter, row)?;
        }
    }
    Ok(())
}

/// The renewal bound on the fitted workload, at its point estimate and at the
/// conservative end of the fit's uncertainty.
fn fitted_renewal(
    config: &ExperimentConfig,
    source: &Prepared,
    fitted: &Fitted,
    filter: &FilterConfig,
    row: &mut Row,
) -> Result<()> {
    row.fn_renewal_fitted = if matches!(source.source, Source::Trace(_)) {
        row.fn_renewal_upper
    } else {
        let r = FnModel::new(filter, &fitted.point, config.eps)?.renewal(RenewalOptions {
            eps: config.eps,
            ..RenewalOptions::default()
        })?;
        Some(r.fn_upper)
    };
    // Judged against the observed FN with the other bounds (`JUDGED_BOUNDS`).
    row.fn_renewal_conservative =
        conservative_renewal(filter, &fitted.conservative, config.eps)?.map(|c| c.fn_upper);
    Ok(())
}
