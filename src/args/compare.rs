//! `rbf compare`: fit, replay and model a trace in one pass; bound next to observed.

use std::path::PathBuf;

use clap::Args;

use rbf_foundations::error::Result;
use rbf_judge::compare::{compare, CompareOptions, JudgeOptions};
use rbf_judge::report::compare::compare_text;
use rbf_observed::fit::DEFAULT_WINDOW;
use rbf_observed::replay::{ReplayOptions, DEFAULT_HASH_SEEDS};

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

pub fn run(a: CompareArgs, io: &mut super::io::Io) -> Result<()> {
    let mut options = CompareOptions::new(&a.filter.shape()?, a.target_fp)?;
    options.judge = JudgeOptions::new(a.methods.methods()?, a.model.eps, a.model.tolerance, true);
    options.replay = ReplayOptions {
        warmup: a.warmup,
        confidence: a.confidence,
    };
    options.hash_seeds = a.hash_seeds;
    options.window = a.window;
    let mut source = io.open(&a.trace_args, &a.trace)?;
    let run = compare(&options, source.as_mut(), super::print_ingest_notes)?;
    if a.json {
        return io.json(&run.output(source.summary()));
    }
    rbf_foundations::out!("{}", compare_text(&run, a.confidence));
    Ok(())
}
