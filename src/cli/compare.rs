//! `rbf compare`: fit, replay and model a trace in one pass; bound next to observed.

use std::path::PathBuf;

use clap::Args;

use rbf::compare::{
    conservative_renewal, conservative_row, fn_rows, observe, sigma_for_target,
    ConservativeRenewal, ModelRow,
};
use rbf::fit::{FitOptions, DEFAULT_WINDOW};
use rbf::model::fneg::{FnReport, Method, RenewalMode, RenewalOptions};
use rbf::replay::{ReplayOptions, DEFAULT_HASH_SEEDS};
use rbf::report::verdict::{percent, Regime};
use rbf::report::{interval, sci, Table};
use rbf::stats::Interval;
use rbf::{Error, Result};

use super::filter_args::FilterArgs;
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
    /// FN methods to run on the fitted workload, comma-separated: all, renewal,
    /// markov-lower, markov-swr, markov-uniform, markov-biuniform, drop-pins,
    /// markov-disabling. Methods left out are listed as not run (`fn_methods_not_run`);
    /// leave out the slow ones when the fitted D or sigma is large.
    #[arg(long, default_value = "all")]
    pub method: String,
    /// FN models' truncation: states and arrivals with probability below EPS are dropped.
    #[arg(long, default_value_t = 1e-10)]
    pub eps: f64,
    /// Renewal bound in the certified tolerance mode (exact <= V <= exact (1 + T)),
    /// as in `rbf model fn --tolerance`.
    #[arg(long, value_name = "T")]
    pub tolerance: Option<f64>,
    /// Confidence level of the batch-means intervals.
    #[arg(long, default_value_t = 0.99)]
    pub confidence: f64,
    /// Filters (hash seeds) replayed: the observed intervals cover the hash positions'
    /// randomness as the models do (docs/coverage/README.md); each costs one replay.
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
    p_repeat: f64,
    distinct: u64,
    model_distinct: usize,
    /// FN per arrival of each FN method on the fitted workload (null: not run);
    /// the renewal bound at the point estimate of the fit.
    fn_renewal_upper: Option<f64>,
    /// The renewal bound at the conservative end of the fit's uncertainty.
    fn_renewal_conservative: Option<f64>,
    fn_renewal_conservative_detail: Option<&'a ConservativeRenewal>,
    /// Which engine produced the renewal bound (exact or certified) and its proven
    /// tolerance: exact <= fn_renewal_upper <= exact (1 + tolerance).
    fn_renewal_mode: Option<RenewalMode>,
    fn_renewal_tolerance: Option<f64>,
    fn_markov_lower: Option<f64>,
    fn_markov_swr: Option<f64>,
    fn_markov_uniform: Option<f64>,
    fn_markov_biuniform: Option<f64>,
    fn_drop_pins: Option<f64>,
    fn_markov_disabling: Option<f64>,
    /// FN methods not requested with --method, so not computed.
    fn_methods_not_run: Vec<&'static str>,
    /// Every model row: value, claim, whether the claim is proven for this filter and
    /// workload, ratio to observed, whether the observed interval is on the bound's side.
    models: &'a [ModelRow],
    /// The FN models' own report (per-method seconds, renewal details).
    fn_model: &'a FnReport,
    replay: &'a rbf::replay::ReplayReport,
    fit: &'a rbf::fit::FitSummary,
    ingest: &'a rbf::ingest::IngestSummary,
}

pub fn run(a: CompareArgs) -> Result<()> {
    let mut config = if a.target_fp.is_some() && a.filter.filter_config.is_none() {
        // sigma is chosen below; validation needs one now.
        let mut f = a.filter.clone();
        f.sigma = Some(u64::from(f.hashes.unwrap_or(1)));
        f.config()?
    } else {
        a.filter.config()?
    };
    let mut fp_row = None;
    if let Some(target) = a.target_fp {
        let (sigma, fp) = sigma_for_target(&config, target)?;
        config.sigma = Some(sigma);
        config.max_inserts = None;
        config.validate()?;
        fp_row = Some(fp);
    }
    let sigma = config.sigma.ok_or_else(|| {
        Error::config(
            "sigma",
            "compare needs a sigma-bounded filter: give --sigma S or --target-fp F",
        )
    })?;
    let fp_model = match fp_row {
        Some(fp) => fp,
        None => rbf::model::fp::predict(&config)?
            .sigma
            .map(|s| s.fp_sigma)
            .ok_or_else(|| Error::invalid("the FP model gave no sigma-bounded prediction"))?,
    };
    let methods = Method::parse_list(&a.method)?;
    let mut source = a.trace_args.open(&a.trace)?;
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
            ..FitOptions::default()
        },
        &mut source,
    )?;
    for w in source.summary().warnings() {
        eprintln!("{w}");
    }
    source.summary().require_data()?;
    let r = &obs.replay;
    // The judged points: over the complete cycles of every hash seed, like their
    // intervals (`ReplayReport::observed_fn`).
    let (obs_fn, obs_fp, obs_fpci) = (
        r.observed_fn(),
        r.observed_fp(),
        r.observed_fp_count_instance(),
    );
    let observed_ci = obs_fpci.interval;
    let mut models = vec![ModelRow {
        name: "FP model f_sigma".into(),
        measure: "fp",
        value: fp_model,
        claim: "estimate".into(),
        guaranteed: false,
        ratio_to_observed: (obs_fpci.estimate > 0.0).then(|| fp_model / obs_fpci.estimate),
        verdict: None,
        excess: None,
        note: match observed_ci {
            Some(i) if i.contains(fp_model) => {
                "FP paper's average (count-instance); inside the observed interval".into()
            }
            Some(_) => "FP paper's average (count-instance); outside the observed interval".into(),
            None => "FP paper's average (count-instance); no observed interval (fewer than two batches of cycles)".into(),
        },
    }];
    let workload = obs.fit.workload().map_err(|e| {
        Error::invalid(format!(
            "{}: the fitted workload is not usable by the FN models: {e}",
            source.summary().source
        ))
    })?;
    if methods.contains(&Method::Renewal) {
        // The renewal loop polls the flag: Ctrl-C stops it with a clean error.
        rbf::progress::install_interrupt_handler();
    }
    let fn_cmp = fn_rows(
        &config,
        &workload,
        &methods,
        RenewalOptions {
            eps: a.eps,
            tolerance: a.tolerance,
            progress: true,
            ..RenewalOptions::default()
        },
        obs_fn.estimate,
        obs_fn.interval.as_ref(),
    )?;
    models.extend(fn_cmp.rows.iter().cloned());
    let conservative = if methods.contains(&Method::Renewal) {
        conservative_renewal(&config, &obs.fit.conservative_workloads()?, a.eps)?
    } else {
        None
    };
    if let Some(c) = &conservative {
        let point = models.iter().position(|m| m.name == "fn renewal");
        let guaranteed = point.is_some_and(|i| models[i].guaranteed);
        let row = conservative_row(c, guaranteed, obs_fn.estimate, obs_fn.interval.as_ref());
        models.insert(point.map_or(models.len(), |i| i + 1), row);
    }
    let value = |m: Method| fn_cmp.report.get(m).map(|x| x.fn_rate);
    let not_run: Vec<&'static str> = fn_cmp.not_run.iter().map(|m| m.name()).collect();
    let s = &obs.fit.summary;
    if a.json {
        return super::print_json(&Output {
            sigma,
            target_fp: a.target_fp,
            observed_fp: obs_fp.estimate,
            observed_fp_interval: obs_fp.interval,
            observed_fn: obs_fn.estimate,
            observed_fn_interval: obs_fn.interval,
            observed_fp_count_instance: obs_fpci.estimate,
            p_repeat: s.p_repeat,
            distinct: s.distinct_keys,
            model_distinct: s.model_distinct,
            fn_renewal_upper: value(Method::Renewal),
            fn_renewal_conservative: conservative.as_ref().map(|c| c.fn_upper),
            fn_renewal_conservative_detail: conservative.as_ref(),
            fn_renewal_mode: fn_cmp.report.renewal.map(|r| r.mode),
            fn_renewal_tolerance: fn_cmp.report.renewal.map(|r| r.certified_tolerance),
            fn_markov_lower: value(Method::MarkovLower),
            fn_markov_swr: value(Method::MarkovSwr),
            fn_markov_uniform: value(Method::MarkovUniform),
            fn_markov_biuniform: value(Method::MarkovBiuniform),
            fn_drop_pins: value(Method::DropPins),
            fn_markov_disabling: value(Method::MarkovDisabling),
            fn_methods_not_run: not_run,
            models: &models,
            fn_model: &fn_cmp.report,
            replay: r,
            fit: s,
            ingest: source.summary(),
        });
    }
    println!("filter: {}", config.describe());
    println!(
        "trace: {} arrivals ({} measured, {} recycles), p_r = {:.4}, {} distinct keys,",
        obs.seen, r.counts.arrivals, r.cycles, s.p_repeat, s.distinct_keys
    );
    println!(
        "       fitted D = {}, one-hit wonders {:.1}% of distinct keys",
        s.model_distinct,
        100.0 * s.one_hit_share
    );
    print!("{}", table(r, &models, a.confidence).render());
    if let Some(r) = &fn_cmp.report.renewal {
        println!("{}", super::model::fneg::renewal_mode_line(r));
    }
    if !not_run.is_empty() {
        println!(
            "FN methods not run (not in --method): {}",
            not_run.join(", ")
        );
    }
    Ok(())
}

/// Observed rates with their intervals, then every model with its claim, whether the
/// claim is proven, its ratio to the observed rate and its verdict; notes once below.
fn table(r: &rbf::replay::ReplayReport, models: &[ModelRow], confidence: f64) -> Table {
    let regime = Regime::of(r.cycles as f64);
    let verdict_header = match regime {
        Regime::Steady => "verdict (steady)",
        Regime::Transient => "verdict (transient)",
    };
    let level = format!("{:.0}% interval / claim", 100.0 * confidence);
    let mut t = Table::new([
        "measure",
        "value",
        level.as_str(),
        "proven",
        "ratio",
        verdict_header,
    ])
    .left_aligned(&[3, 5]);
    let observed = [
        ("observed FP (per arrival)", r.observed_fp()),
        (
            "observed FP (count-instance)",
            r.observed_fp_count_instance(),
        ),
        ("observed FN (per arrival)", r.observed_fn()),
    ];
    for (name, o) in observed {
        t.row([
            name.to_string(),
            sci(o.estimate),
            o.interval.as_ref().map_or("no interval".into(), interval),
        ]);
    }
    for m in models {
        let n = t.note(format!("{}: {}", m.name, m.note));
        let proven = match (m.claim.as_str(), m.guaranteed) {
            ("upper-bound" | "lower-bound", true) => "yes",
            ("upper-bound" | "lower-bound", false) => "NO",
            _ => "-",
        };
        let mut verdict = m.verdict.map_or("-".into(), |v| v.to_string());
        if let Some(e) = m.excess {
            // Signed: + above an upper bound, - below a lower bound.
            let sign = if m.claim == "lower-bound" { '-' } else { '+' };
            verdict.push_str(&format!(" ({sign}{})", percent(e)));
        }
        let claim = match m.claim.as_str() {
            "approximation" => "approx.".to_string(),
            c => c.replace('-', " "),
        };
        t.row([
            format!("{} [{n}]", m.name),
            sci(m.value),
            claim,
            proven.to_string(),
            m.ratio_to_observed
                .map_or("-".into(), |x| format!("{x:.3}")),
            verdict,
        ]);
    }
    t.note(
        "ratio: model / observed rate of the same measure. verdict: holds = the whole observed \
         interval is on the bound's side, VIOLATED = the whole interval is on the other side, \
         undecided = it straddles the bound (in parentheses: how far the observed point lies \
         beyond the bound, relative to it, + above an upper bound, - below a lower one); bounds describe the steady state, so a replay with fewer than 10 \
         recycles is judged in a transient column",
    );
    t.note(format!(
        "observed rates: over the complete cycles of {} filters hashed with different seeds, \
         and their intervals over those filters and time batches (the models average over \
         hash positions and arrivals alike)",
        r.hash_seeds
    ));
    t
}
