//! `rbf ingest`: read a trace once and write it as a compact `.rbfs` message stream.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use rbf::ingest::{self, rbfs};
use rbf::Result;

use super::trace_args::TraceArgs;

#[derive(Args, Debug)]
pub struct IngestArgs {
    /// Trace (capture, flow log, request log, ...): a file, several files, a directory
    /// or a glob pattern read as one trace, or `-` for standard input; zstd is
    /// decompressed on the fly.
    #[arg(required = true, num_args = 1..)]
    pub input: Vec<PathBuf>,
    #[command(flatten)]
    pub trace: TraceArgs,
    /// Output `.rbfs` file.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Print the ingest summary as JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: IngestArgs) -> Result<()> {
    let options = a.trace.options()?;
    let t = Instant::now();
    let mut source = ingest::open_inputs(&a.input, &options)?;
    let written = rbfs::write(&a.output, source.as_mut(), options.hasher)?;
    let secs = t.elapsed().as_secs_f64();
    let summary = source.summary();
    for w in summary.warnings() {
        eprintln!("{w}");
    }
    summary.require_data()?;
    if a.json {
        super::print_json(summary)
    } else {
        println!(
            "{}: {} {} record(s) -> {} message(s) in {} ({:.2} s)",
            summary.source,
            summary.records,
            summary.format,
            written,
            a.output.display(),
            secs
        );
        if let Some(k) = &summary.key {
            println!("key: {k}");
        }
        if let Some(f) = &summary.flows {
            println!(
                "flows: {} record(s) exported (inactive {} s, active {} s), at most {} live",
                f.records, f.inactive_timeout_s, f.active_timeout_s, f.max_live_flows
            );
        }
        Ok(())
    }
}
