//! `rbf compare`: fit, replay and model a trace in one pass; bound next to observed.

use std::path::PathBuf;

use clap::Args;

use rbf::compare::{
    judge_observation, observe, values_by_key, Comparison, JudgeOptions, Observed, Record,
};
use rbf::fit::{FitOptions, DEFAULT_WINDOW};
use rbf::model::fneg::{Method, RenewalMode};
use rbf::replay::sizing::distinct_up_front;
use rbf::replay::{ReplayOptions, DEFAULT_HASH_SEEDS, TOO_FEW_CYCLES_WHY};
use rbf::report::judged::{claim_cell, regime_name, value_cell, verdict_cell};
use rbf::report::{interval, sci, wrap, Table, WIDTH};
use rbf::stats::Interval;
use rbf::{Error, Result};

use super::filter_args::FilterArgs;
use super::model_args::{MethodArgs, ModelArgs};
use super::trace_args::TraceArgs;

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Trace: a file, several files, a directory or a glob pattern read as one trace
    /// (a capture series), or `-` for standard input; zstd is decompressed on the fly.
    #[arg(required = true, num_args = 1..)]
    pub trace: Vec<PathBuf>,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Choose sigma from the FP model: the largest whose average FP rate meets F.
    #[arg(long, value_name = "F", conflicts_with_all = ["sigma", "max_inserts"])]
    pub target_fp: Option<f64>,
    /// Arrivals that update state but are not counted (replay and fit alike).
    #[arg(long, default_value_t = 0)]
    pub warmup: u64,
    /// Fit window W in arrivals.
    #[arg(long, default_value_t = DEFAULT_WINDOW)]
    pub window: u64,
    #[command(flatten)]
    pub trace_args: TraceArgs,
    #[command(flatten)]
    pub methods: MethodArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Confidence level of the batch-means intervals.
    #[arg(long, default_value_t = 0.99)]
    pub confidence: f64,
    /// Filters (hash seeds) replayed: the observed intervals cover the hash positions'
    /// randomness as the models do (docs/coverage/README.md); up to four share one key
    /// table and one pass over the trace.
    #[arg(long, default_value_t = DEFAULT_HASH_SEEDS)]
    pub hash_seeds: u32,
    /// Print a JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(serde::Serialize)]
struct Output<'a> {
    sigma: u64,
    target_fp: Option<f64>,
    observed_fp: f64,
    observed_fp_interval: Option<Interval>,
    observed_fn: f64,
    observed_fn_interval: Option<Interval>,
    observed_fp_count_instance: f64,
    observed_fp_count_instance_interval: Option<Interval>,
    p_repeat: f64,
    distinct: u64,
    /// The fitted D where the fitted Q passed its test; null otherwise.
    model_distinct: Option<usize>,
    /// FN per arrival of every bound of the one list (`fn_renewal_upper`,
    /// `fn_renewal_conservative`, `fn_markov_lower`, ...; null: not computed).
    #[serde(flatten)]
    values: std::collections::BTreeMap<&'static str, Option<f64>>,
    fn_renewal_conservative_detail: Option<&'a rbf::compare::ConservativeRenewal>,
    /// Which engine produced the renewal bound (exact or certified) and its proven
    /// tolerance: exact <= fn_renewal_upper <= exact (1 + tolerance).
    fn_renewal_mode: Option<RenewalMode>,
    fn_renewal_tolerance: Option<f64>,
    /// FN methods not requested with --method, so not computed.
    fn_methods_not_run: Vec<&'static str>,
    /// The FP paper's average FP rate (an estimate) and its caveats.
    fp_model: &'a rbf::compare::FpModel,
    /// Every bound, judged: value, range, claim, standing, verdict and regime, excess,
    /// note.
    models: &'a [Record],
    /// The FN models' own report (per-method seconds, renewal details).
    fn_model: Option<&'a rbf::model::fneg::FnReport>,
    replay: &'a rbf::replay::ReplayReport,
    fit: &'a rbf::fit::FitSummary,
    ingest: &'a rbf::ingest::IngestSummary,
}

pub fn run(a: CompareArgs, io: &mut super::io::Io) -> Result<()> {
    let mut config = a.filter.shape()?;
    if let Some(target) = a.target_fp {
        config.sigma = Some(rbf::model::fp::sigma_for_target(&config, target)?.sigma);
        config.max_inserts = None;
    }
    config.validate()?;
    let sigma = config.sigma.ok_or_else(|| {
        Error::config(
            "sigma",
            "compare needs a sigma-bounded filter: give --sigma S or --target-fp F",
        )
    })?;
    let methods = a.methods.methods()?;
    let mut source = io.open(&a.trace_args, &a.trace)?;
    let distinct = distinct_up_front(&config, source.as_ref(), u64::from(a.hash_seeds));
    let obs = observe(
        &config,
        ReplayOptions {
            warmup: a.warmup,
            confidence: a.confidence,
        },
        a.hash_seeds,
        FitOptions {
            window: a.window,
            confidence: a.confidence,
            popularity: methods.iter().any(|m| m.reads_popularity()),
            ..FitOptions::default()
        },
        distinct,
        &mut source,
    )?;
    super::print_ingest_notes(source.summary());
    source.summary().require_data()?;
    if methods.contains(&Method::Renewal) {
        // The renewal loop polls the flag: Ctrl-C stops it with a clean error.
        rbf::progress::install_interrupt_handler();
    }
    let options = JudgeOptions::new(methods, a.model.eps, a.model.tolerance, true);
    let label = source.summary().source.to_string();
    let (_, c) = judge_observation(&config, &obs, &options, &label)?;
    let j = &c.judgement;
    let r = &obs.replay;
    let s = &obs.fit.summary;
    let renewal = j.report.as_ref().and_then(|r| r.renewal);
    let not_run: Vec<&'static str> = j.not_run.iter().map(|m| m.name()).collect();
    if a.json {
        return io.json(&Output {
            sigma,
            target_fp: a.target_fp,
            observed_fp: c.observed_fp.rate,
            observed_fp_interval: c.observed_fp.interval,
            observed_fn: c.observed_fn.rate,
            observed_fn_interval: c.observed_fn.interval,
            observed_fp_count_instance: c.observed_fp_count_instance.rate,
            observed_fp_count_instance_interval: c.observed_fp_count_instance.interval,
            p_repeat: s.p_repeat,
            distinct: s.distinct_keys,
            model_distinct: obs.fit.distinct_estimate(),
            values: values_by_key(&j.records),
            fn_renewal_conservative_detail: j.conservative.as_ref(),
            fn_renewal_mode: renewal.map(|r| r.mode),
            fn_renewal_tolerance: renewal.map(|r| r.certified_tolerance),
            fn_methods_not_run: not_run,
            fp_model: &c.fp_model,
            models: &j.records,
            fn_model: j.report.as_ref(),
            replay: r,
            fit: s,
            ingest: source.summary(),
        });
    }
    // The filter as replayed (its positions resolved: per-cycle unless asked).
    rbf::outln!("filter: {}", r.filter.describe());
    rbf::outln!(
        "trace: {} arrivals ({} measured, {} recycles), p_r = {:.4}, {} distinct keys,",
        obs.seen,
        r.counts.arrivals,
        r.cycles,
        s.p_repeat,
        s.distinct_keys
    );
    rbf::outln!(
        "       fitted D = {}, one-hit wonders {:.1}% of distinct keys",
        obs.fit.distinct_label(),
        100.0 * s.one_hit_share
    );
    let per_cycle = r.filter.positions == Some(rbf::filter::Positions::PerCycle);
    rbf::out!("{}", tables(&c, a.confidence, (r.hash_seeds, per_cycle)));
    if let Some(r) = &renewal {
        rbf::out!(
            "{}",
            wrap(&super::model::fneg::renewal_mode_line(r), WIDTH, "    ")
        );
    }
    if !not_run.is_empty() {
        let line = format!(
            "FN methods not run (not in --method): {}",
            not_run.join(", ")
        );
        rbf::out!("{}", wrap(&line, WIDTH, "    "));
    }
    Ok(())
}

fn interval_cell(i: Option<&Interval>) -> String {
    rbf::report::interval_or_why(i, interval)
}

/// The observed rates with their intervals and the FP model beside them, then every
/// bound with its claim, standing and verdict against the observed FN; each bound's
/// note once below.
fn tables(c: &Comparison, confidence: f64, (hash_seeds, per_cycle): (u64, bool)) -> String {
    let level = format!("{:.0}% interval", 100.0 * confidence);
    let mut t = Table::new(["observed", "value", level.as_str()]).left_aligned(&[2]);
    let row = |t: &mut Table, name: &str, o: &Observed| {
        t.row([
            name.to_string(),
            sci(o.rate),
            interval_cell(o.interval.as_ref()),
        ]);
    };
    row(&mut t, "FP per arrival", &c.observed_fp);
    row(&mut t, "FP count-instance", &c.observed_fp_count_instance);
    if let Some(fp) = c.fp_model.value {
        let inside = match c.observed_fp_count_instance.interval {
            Some(i) if i.contains(fp) => "inside the count-instance interval",
            Some(_) => "outside the count-instance interval",
            None => "no count-instance interval (too few cycles)",
        };
        t.row([
            "FP model f_sigma (estimate)".to_string(),
            sci(fp),
            inside.to_string(),
        ]);
    }
    row(&mut t, "FN per arrival", &c.observed_fn);
    let mut out = t.render();
    let records = &c.judgement.records;
    if records.is_empty() {
        return out;
    }
    let regime = c.observed_fn.regime();
    let verdict_header = format!("verdict ({})", regime_name(regime));
    let mut m = Table::new([
        "bound",
        "FN per arrival",
        "claim",
        "standing",
        verdict_header.as_str(),
    ])
    .left_aligned(&[2, 3, 4]);
    for r in records {
        m.row([
            r.bound.name().to_string(),
            value_cell(r),
            claim_cell(r.claim).to_string(),
            r.standing.to_string(),
            verdict_cell(r),
        ]);
    }
    out.push('\n');
    out.push_str(&m.render());
    for r in records {
        out.push_str(&wrap(
            &format!("{}: {}", r.bound.name(), r.note),
            WIDTH,
            "    ",
        ));
    }
    out.push_str(&wrap(
        "verdict: holds = the whole observed FN interval is on the bound's side, VIOLATED = \
         the whole interval is on the other side, undecided = it straddles the bound (in \
         parentheses: how far the observed point lies beyond the bound, relative to it, + above \
         an upper bound, - below a lower one); bounds describe the steady state, so a replay with \
         fewer than 10 recycles is judged as transient",
        WIDTH,
        "    ",
    ));
    if c.observed_fn.interval.is_none() {
        out.push_str(&wrap(TOO_FEW_CYCLES_WHY, WIDTH, "    "));
    }
    out.push_str(&wrap(
        &format!(
            "observed: over the complete cycles of {hash_seeds} filters hashed with different \
             seeds{}, the intervals over those filters and time batches (the models average over \
             hash positions and arrivals alike)",
            if per_cycle {
                ", each drawing new positions at every recycle (--positions fixed: positions \
                 kept, as a deployed filter's)"
            } else {
                ", each keeping its positions (as a deployed filter)"
            }
        ),
        WIDTH,
        "    ",
    ));
    out
}
