//! `rbf replay`: a trace through a recycling Bloom filter, every true FP and FN counted.

use std::path::PathBuf;

use clap::Args;

use rbf_foundations::error::Result;
use rbf_observed::replay::command::{self, ReplayRequest};
use rbf_observed::replay::{ReplayOptions, DEFAULT_HASH_SEEDS};

use super::filter_args::FilterArgs;
use super::trace_args::TraceArgs;

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// Trace: a file, several files, a directory or a glob pattern read as one trace
    /// (a capture series), or `-` for standard input; zstd is decompressed on the fly.
    #[arg(required = true, num_args = 1..)]
    pub trace: Vec<PathBuf>,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Arrivals that update state but are not counted.
    #[arg(long, default_value_t = 0)]
    pub warmup: u64,
    #[command(flatten)]
    pub trace_args: TraceArgs,
    /// Confidence level of the batch-means intervals.
    #[arg(long, default_value_t = 0.99)]
    pub confidence: f64,
    /// Filters (hash seeds) replayed: the counts are the first filter's (--seed), the
    /// rates with intervals are over all of them, so the intervals cover the hash
    /// positions' randomness as the models do; up to four share one key table and one
    /// pass over the trace.
    #[arg(long, default_value_t = DEFAULT_HASH_SEEDS)]
    pub hash_seeds: u32,
    /// Print a JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: ReplayArgs, io: &mut super::io::Io) -> Result<()> {
    let options = ReplayOptions {
        warmup: a.warmup,
        confidence: a.confidence,
    };
    let request = ReplayRequest::new(&a.filter.config()?, options, a.hash_seeds)?;
    let mut source = io.open(&a.trace_args, &a.trace)?;
    let run = command::run(&request, source.as_mut(), super::print_ingest_notes)?;
    if a.json {
        return io.json(&run.output(source.summary()));
    }
    io.text(&rbf_judge::report::replay::replay_table(&run.report))
}
