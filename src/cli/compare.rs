//! `rbf compare`: fit, replay and model a trace in one pass; bound next to observed.

use std::path::PathBuf;

use clap::Args;

use rbf::compare::{observe, sigma_for_target, ModelRow};
use rbf::fit::{FitOptions, DEFAULT_WINDOW};
use rbf::ingest::{self, Format, IngestOptions};
use rbf::replay::ReplayOptions;
use rbf::report::Table;
use rbf::stats::Interval;
use rbf::{Error, Result};

use super::filter_args::FilterArgs;

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Trace file (zstd-compressed files are read transparently).
    pub trace: PathBuf,
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
    /// Trace format.
    #[arg(long, value_enum, default_value_t = Format::Auto)]
    pub format: Format,
    /// Confidence level of the batch-means intervals.
    #[arg(long, default_value_t = 0.99)]
    pub confidence: f64,
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
    models: &'a [ModelRow],
    /// Models not available in this build (and why).
    missing_models: &'a [String],
    replay: &'a rbf::replay::ReplayReport,
    fit: &'a rbf::fit::FitSummary,
    ingest: &'a rbf::ingest::IngestSummary,
}

fn interval(i: Option<&Interval>) -> String {
    i.map_or("-".into(), |i| format!("[{:.3e}, {:.3e}]", i.low, i.high))
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
    let mut source = ingest::open(
        &a.trace,
        &IngestOptions {
            format: a.format,
            ..Default::default()
        },
    )?;
    let obs = observe(
        &config,
        ReplayOptions {
            warmup: a.warmup,
            confidence: a.confidence,
        },
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
    let r = &obs.replay;
    let ci = r.confidence.as_ref();
    let observed_ci = ci.map(|c| c.fp_rate_count_instance);
    let models = vec![ModelRow {
        name: "fp-sigma (FP paper, count-instance)".into(),
        measure: "fp",
        value: fp_model,
        claim: "estimate".into(),
        guaranteed: false,
        ratio_to_observed: (r.fp_rate_count_instance > 0.0)
            .then(|| fp_model / r.fp_rate_count_instance),
        holds: None,
        note: match observed_ci {
            Some(i) if i.contains(fp_model) => "inside the observed interval".into(),
            Some(_) => "outside the observed interval".into(),
            None => "fewer than two batches of cycles: no interval".into(),
        },
    }];
    let missing = vec![
        "FN models (renewal upper bound, Markov bounds, drop-pins): rbf::model::fneg is not in this build yet".to_string(),
    ];
    let s = &obs.fit.summary;
    if a.json {
        return super::print_json(&Output {
            sigma,
            target_fp: a.target_fp,
            observed_fp: r.fp_rate,
            observed_fp_interval: ci.map(|c| c.fp_rate),
            observed_fn: r.fn_rate,
            observed_fn_interval: ci.map(|c| c.fn_rate),
            observed_fp_count_instance: r.fp_rate_count_instance,
            p_repeat: s.p_repeat,
            distinct: s.distinct_keys,
            model_distinct: s.model_distinct,
            models: &models,
            missing_models: &missing,
            replay: r,
            fit: s,
            ingest: source.summary(),
        });
    }
    println!("filter: {} (sigma = {sigma})", config.describe());
    println!(
        "trace: {} arrivals ({} measured), p_r = {:.4}, {} distinct keys, fitted D = {}, one-hit wonders {:.1}%",
        obs.seen,
        r.counts.arrivals,
        s.p_repeat,
        s.distinct_keys,
        s.model_distinct,
        100.0 * s.one_hit_share
    );
    let mut t = Table::new(["measure", "value", "interval / claim", "ratio to observed"]);
    t.row([
        "observed FP (FN paper: FP / arrivals)".to_string(),
        format!("{:.3e}", r.fp_rate),
        interval(ci.map(|c| &c.fp_rate)),
        String::new(),
    ]);
    t.row([
        "observed FP (count-instance)".to_string(),
        format!("{:.3e}", r.fp_rate_count_instance),
        interval(observed_ci.as_ref()),
        String::new(),
    ]);
    t.row([
        "observed FN".to_string(),
        format!("{:.3e}", r.fn_rate),
        interval(ci.map(|c| &c.fn_rate)),
        String::new(),
    ]);
    for m in &models {
        t.row([
            m.name.clone(),
            format!("{:.3e}", m.value),
            format!("{} ({})", m.claim, m.note),
            m.ratio_to_observed
                .map_or("-".into(), |x| format!("{x:.3}")),
        ]);
    }
    print!("{}", t.render());
    for m in &missing {
        println!("not computed: {m}");
    }
    Ok(())
}
