//! Evaluates grid points in parallel. Each point is computed by one thread from its
//! inputs alone and results are collected in point order, so the output is the same
//! for any thread count.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use super::config::{ExperimentConfig, Measure};
use super::grid::{Point, SigmaRule};
use super::row::{BoundColumns, Row, JUDGED_BOUNDS};
use super::source::{Prepared, Source};
use crate::compare::sigma_for_target;
use crate::error::Result;
use crate::filter::FilterConfig;
use crate::model::fneg::{Claim, FnModel, Method, RenewalOptions};
use crate::model::fp::{capacity, predict, CapacityQuery};
use crate::replay::{Confidence, Replay, ReplayOptions, ReplayReport};
use crate::report::verdict::{Check, Regime, MIN_STEADY_CYCLES};
use crate::stats::{student_t_quantile, Interval};

/// Runs `points` (already sharded) and returns one row per point, in point order.
pub fn run_points(
    config: &ExperimentConfig,
    sources: &[Prepared],
    points: &[Point],
    progress: bool,
) -> Vec<Row> {
    let done = AtomicUsize::new(0);
    let start = Instant::now();
    let show = progress && std::io::stderr().is_terminal();
    let rows = points
        .par_iter()
        .map(|p| {
            let row = evaluate(config, &sources[p.source], p);
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            if show {
                let mut e = std::io::stderr().lock();
                let _ = write!(
                    e,
                    "\r  {n}/{} points, {:.1} s  ",
                    points.len(),
                    start.elapsed().as_secs_f64()
                );
                let _ = e.flush();
            }
            row
        })
        .collect();
    if show {
        eprintln!();
    }
    rows
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
    let mut r = Replay::new(
        filter,
        ReplayOptions {
            warmup: source.warmup,
            confidence: config.confidence,
        },
    )?;
    // `run` works in batches so that ground-truth lookups are prefetched.
    r.run(source.source.messages(seed)?);
    Ok(r.report())
}

/// A rate's mean over seeds and its interval at `level`, clamped to [0, 1]: a Student t
/// interval over seeds, or with one seed the replay's batch means over cycles.
fn rate_over_seeds(
    reports: &[ReplayReport],
    level: f64,
    value: impl Fn(&ReplayReport) -> f64,
    batch: impl Fn(&Confidence) -> Interval,
) -> (f64, Option<(f64, f64)>) {
    let n = reports.len() as f64;
    let mean = reports.iter().map(&value).sum::<f64>() / n;
    let interval = if reports.len() >= 2 {
        let var = reports
            .iter()
            .map(|r| (value(r) - mean).powi(2))
            .sum::<f64>()
            / (n - 1.0);
        let h = student_t_quantile(0.5 + level / 2.0, n - 1.0) * (var / n).sqrt();
        Some(((mean - h).clamp(0.0, 1.0), (mean + h).clamp(0.0, 1.0)))
    } else {
        reports
            .first()
            .and_then(|r| r.confidence.as_ref())
            .map(|c| {
                let i = batch(c).rate();
                (i.low, i.high)
            })
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
    row.arrivals = reports.first().map(|r| r.counts.arrivals);
    row.cycles = Some(reports.iter().map(|r| r.cycles as f64).sum::<f64>() / n);
    row.observed_fp = Some(reports.iter().map(|r| r.fp_rate).sum::<f64>() / n);
    let (fp, fp_interval) = rate_over_seeds(
        &reports,
        level,
        |r| r.fp_rate_count_instance,
        |c| c.fp_rate_count_instance,
    );
    row.observed_fp_count_instance = Some(fp);
    row.observed_fp_count_instance_low = fp_interval.map(|i| i.0);
    row.observed_fp_count_instance_high = fp_interval.map(|i| i.1);
    let (fn_rate, fn_interval) = rate_over_seeds(&reports, level, |r| r.fn_rate, |c| c.fn_rate);
    row.observed_fn = Some(fn_rate);
    let (low, high) = fn_interval.unwrap_or_else(|| {
        row.note("one seed and too few cycles for an FN interval");
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
    // Without new arrivals at most D * k bits are ever set: a filter whose threshold is
    // above that never recycles, FN is exactly 0, and the models' per-insertion
    // recursion (which runs until the filter has recycled) would not terminate.
    let d = workload.distinct() as u64;
    let never_recycles = workload.p_repeat >= 1.0
        && match (filter.sigma, filter.max_inserts) {
            (_, Some(n)) => d <= n,
            (Some(s), None) => d.saturating_mul(u64::from(filter.hashes)) <= s,
            (None, None) => false,
        };
    if never_recycles {
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
    Ok(())
}
