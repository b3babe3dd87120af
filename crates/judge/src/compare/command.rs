//! `rbf compare` as one library call: a trace replayed and fitted in one pass, every
//! bound judged against what the replay observed ([`compare`]), and the JSON the
//! command prints ([`CompareRun::output`]). The command line and the Python package
//! parse their arguments into [`CompareOptions`] and print what comes back.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{
    judge_observation, observe, values_by_key, Comparison, ConservativeRenewal, FpModel,
    JudgeOptions, Observation, Record,
};
use rbf_data::filter::FilterConfig;
use rbf_data::ingest::{IngestSummary, MessageSource};
use rbf_foundations::error::{Error, Problem, Result};
use rbf_foundations::stats::Interval;
use rbf_observed::fit::{FitOptions, FitSummary, DEFAULT_WINDOW};
use rbf_observed::replay::sizing::distinct_up_front;
use rbf_observed::replay::{ReplayOptions, ReplayReport, DEFAULT_HASH_SEEDS};
use rbf_observed::trace_renewal::TraceBound;
use rbf_predicted::model::false_negative::{FnReport, Method, RenewalMode, DEFAULT_EPS};

/// What `rbf compare` is asked: the filter, how to replay and fit, which bounds.
/// Built by [`CompareOptions::new`], which settles sigma and checks the filter before
/// any trace is opened.
#[derive(Clone, Debug)]
pub struct CompareOptions {
    filter: FilterConfig,
    sigma: u64,
    target_fp: Option<f64>,
    /// Warm-up and interval level, for the replay and the fit alike.
    pub replay: ReplayOptions,
    /// Filters (hash seeds) replayed side by side.
    pub hash_seeds: u32,
    /// The fit's window W in arrivals.
    pub window: u64,
    /// The bounds to compute and their settings.
    pub judge: JudgeOptions,
}

impl CompareOptions {
    /// Options for `filter`, its sigma chosen from the FP model when `target_fp` is
    /// given (the largest whose average FP rate meets it), with every other setting at
    /// `rbf compare`'s default. Errors: an invalid filter, or one not sigma-bounded.
    pub fn new(filter: &FilterConfig, target_fp: Option<f64>) -> Result<Self> {
        let (filter, sigma) = resolved_filter(filter, target_fp)?;
        Ok(CompareOptions {
            filter,
            sigma,
            target_fp,
            replay: ReplayOptions::default(),
            hash_seeds: DEFAULT_HASH_SEEDS,
            window: DEFAULT_WINDOW,
            judge: JudgeOptions::new(Method::ALL.to_vec(), DEFAULT_EPS, None, false),
        })
    }

    /// The filter replayed, its sigma settled.
    pub fn filter(&self) -> &FilterConfig {
        &self.filter
    }
}

/// What [`compare`] found: the filter as replayed, the observation and every bound
/// judged against it.
pub struct CompareRun {
    /// The filter asked for, its sigma resolved.
    pub filter: FilterConfig,
    pub sigma: u64,
    pub target_fp: Option<f64>,
    pub observation: Observation,
    pub comparison: Comparison,
}

/// Replays and fits `source` in one pass with `options.hash_seeds` filters, then
/// judges every requested bound on the fitted workload against the observed FN.
/// `on_read` sees the trace's ingest summary once it is read, before the models run
/// (the command line prints its notes there).
pub fn compare(
    options: &CompareOptions,
    source: &mut dyn MessageSource,
    on_read: impl FnOnce(&IngestSummary),
) -> Result<CompareRun> {
    options.judge.check()?;
    let filter = options.filter.clone();
    let methods = &options.judge.methods;
    let distinct = distinct_up_front(&filter, source, u64::from(options.hash_seeds));
    let observation = observe(
        &filter,
        options.replay,
        options.hash_seeds,
        FitOptions {
            window: options.window,
            confidence: options.replay.confidence,
            popularity: methods.iter().any(|m| m.reads_popularity()),
            ..FitOptions::default()
        },
        distinct,
        super::trace::follow_the_trace(methods),
        &mut *source,
    )?;
    on_read(source.summary());
    source.summary().require_data()?;
    if methods.contains(&Method::Renewal) {
        // The renewal loop polls the flag: Ctrl-C stops it with a clean error.
        rbf_foundations::progress::install_interrupt_handler();
    }
    let label = source.summary().source.to_string();
    let (_, comparison) = judge_observation(&filter, &observation, &options.judge, &label)?;
    Ok(CompareRun {
        filter,
        sigma: options.sigma,
        target_fp: options.target_fp,
        observation,
        comparison,
    })
}

/// `filter` with sigma chosen for `target_fp` when given, validated, and its sigma:
/// compare judges sigma-bounded filters only.
fn resolved_filter(filter: &FilterConfig, target_fp: Option<f64>) -> Result<(FilterConfig, u64)> {
    let mut config = filter.clone();
    if let Some(target) = target_fp {
        config.sigma =
            Some(rbf_predicted::model::false_positive::sigma_for_target(&config, target)?.sigma);
        config.max_inserts = None;
    }
    config.validate()?;
    let sigma = config.sigma.ok_or_else(|| {
        Error::setting(
            "sigma",
            Problem::Missing(
                "compare needs a sigma-bounded filter: give --sigma S or --target-fp F",
            ),
        )
    })?;
    Ok((config, sigma))
}

/// The JSON `rbf compare --json` prints.
#[derive(Serialize)]
pub struct CompareOutput<'a> {
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
    values: BTreeMap<&'static str, Option<f64>>,
    fn_renewal_conservative_detail: Option<&'a ConservativeRenewal>,
    /// The renewal argument on this trace's own recycles: `upper` is the bound
    /// (`fn_renewal_trace`), with the paths' mean and spread (null: not covered, two
    /// phases without copy-over).
    fn_renewal_trace_detail: Option<&'a TraceBound>,
    /// Which engine produced the renewal bound (exact or certified) and its proven
    /// tolerance: exact <= fn_renewal_upper <= exact (1 + tolerance).
    fn_renewal_mode: Option<RenewalMode>,
    fn_renewal_tolerance: Option<f64>,
    /// FN methods not requested with --method, so not computed.
    fn_methods_not_run: Vec<&'static str>,
    /// The FP paper's average FP rate (an estimate) and its caveats.
    fp_model: &'a FpModel,
    /// Every bound, judged: value, range, claim, standing, verdict and regime, excess,
    /// note.
    models: &'a [Record],
    /// The FN models' own report (per-method seconds, renewal details).
    fn_model: Option<&'a FnReport>,
    replay: &'a ReplayReport,
    fit: &'a FitSummary,
    ingest: &'a IngestSummary,
}

impl CompareRun {
    /// The FN methods not requested, so not computed.
    pub fn not_run(&self) -> Vec<&'static str> {
        let j = &self.comparison.judgement;
        j.not_run.iter().map(|m| m.name()).collect()
    }

    /// The JSON record of this run; `ingest` is the trace's summary.
    pub fn output<'a>(&'a self, ingest: &'a IngestSummary) -> CompareOutput<'a> {
        let c = &self.comparison;
        let j = &c.judgement;
        let renewal = j.report.as_ref().and_then(|r| r.renewal);
        let s = &self.observation.fit.summary;
        CompareOutput {
            sigma: self.sigma,
            target_fp: self.target_fp,
            observed_fp: c.observed_fp.rate,
            observed_fp_interval: c.observed_fp.interval,
            observed_fn: c.observed_fn.rate,
            observed_fn_interval: c.observed_fn.interval,
            observed_fp_count_instance: c.observed_fp_count_instance.rate,
            observed_fp_count_instance_interval: c.observed_fp_count_instance.interval,
            p_repeat: s.p_repeat,
            distinct: s.distinct_keys,
            model_distinct: self.observation.fit.distinct_estimate(),
            values: values_by_key(&j.records),
            fn_renewal_conservative_detail: j.conservative.as_ref(),
            fn_renewal_trace_detail: self.observation.trace.as_ref(),
            fn_renewal_mode: renewal.map(|r| r.mode),
            fn_renewal_tolerance: renewal.map(|r| r.certified_tolerance),
            fn_methods_not_run: self.not_run(),
            fp_model: &c.fp_model,
            models: &j.records,
            fn_model: j.report.as_ref(),
            replay: &self.observation.replay,
            fit: s,
            ingest,
        }
    }
}
