use std::path::PathBuf;

use clap::Args;

use rbf::replay::sizing::distinct_up_front;
use rbf::replay::{ReplayOptions, Replays, DEFAULT_HASH_SEEDS};
use rbf::Result;

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

#[derive(serde::Serialize)]
struct Output<'a> {
    #[serde(flatten)]
    report: &'a rbf::replay::ReplayReport,
    ingest: &'a rbf::ingest::IngestSummary,
}

pub fn run(a: ReplayArgs, io: &mut super::io::Io) -> Result<()> {
    let config = a.filter.config()?;
    if !(a.confidence > 0.0 && a.confidence < 1.0) {
        return Err(rbf::Error::config(
            "confidence",
            format!("must lie in (0, 1), found {}", a.confidence),
        ));
    }
    let mut source = io.open(&a.trace_args, &a.trace)?;
    let mut replay = Replays::new(
        &config,
        ReplayOptions {
            warmup: a.warmup,
            confidence: a.confidence,
        },
        a.hash_seeds,
    )?;
    if let Some(d) = distinct_up_front(&config, source.as_ref(), u64::from(a.hash_seeds)) {
        replay.expect_distinct(d);
    }
    replay.run_source(source.as_mut())?;
    let report = replay.report();
    let summary = source.summary();
    super::print_ingest_notes(summary);
    summary.require_data()?;
    if a.warmup > 0 && replay.seen() <= a.warmup {
        rbf::errln!(
            "warning: the trace has {} arrivals, all within the warm-up of {}: nothing was measured",
            replay.seen(),
            a.warmup
        );
    }
    if a.json {
        io.json(&Output {
            report: &report,
            ingest: summary,
        })
    } else {
        io.text(&rbf::report::replay::replay_table(&report))
    }
}
