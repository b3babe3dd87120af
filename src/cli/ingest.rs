//! `rbf ingest`: read a trace once and write it as a compact `.rbfs` message stream.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;

use rbf::ingest::{self, rbfs};
use rbf::output_file::{check_outputs, is_stdio};
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
    /// Output `.rbfs` file (`-`: stdout; the summary then goes to stderr). It appears
    /// only once complete, and never replaces the input.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Print the ingest summary as JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: IngestArgs) -> Result<()> {
    let options = a.trace.options()?;
    let inputs = rbf::ingest::series::expand(&a.input)?;
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    check_outputs(&[&a.output], &inputs)?;
    let t = Instant::now();
    let mut source = ingest::open_inputs(&a.input, &options)?;
    let written = rbfs::write(&a.output, source.as_mut(), options.hasher)?;
    let secs = t.elapsed().as_secs_f64();
    let summary = source.summary();
    super::print_ingest_notes(summary);
    summary.require_data()?;
    // With the stream on stdout, the summary must not be mixed into it.
    let mut out: Box<dyn Write> = if is_stdio(&a.output) {
        Box::new(rbf::console::Notes)
    } else {
        Box::new(std::io::stdout())
    };
    if a.json {
        return super::write_json(&mut out, summary);
    }
    let mut text = format!(
        "{}: {} {} record(s) -> {} message(s) in {} ({:.2} s)\n",
        summary.source,
        summary.records,
        summary.format,
        written,
        a.output.display(),
        secs
    );
    if let Some(k) = &summary.key {
        text.push_str(&format!("key: {k}\n"));
    }
    if let Some(f) = &summary.flows {
        text.push_str(&format!(
            "flows: {} record(s) exported (inactive {} s, active {} s), at most {} live\n",
            f.records, f.inactive_timeout_s, f.active_timeout_s, f.max_live_flows
        ));
    }
    super::write_text(&mut out, &text)
}
