//! `rbf ingest`: read a trace once and write it as a compact `.rbfs` message stream.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use rbf_data::ingest::command::{self, IngestRequest};
use rbf_foundations::error::Result;
use rbf_foundations::output_file::is_stdio;
use rbf_judge::report::ingest::ingest_text;

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
    let request = IngestRequest::new(a.trace.options()?, &a.input, &a.output)?;
    let run = command::run(&request, super::print_ingest_notes)?;
    // With the stream on stdout, the summary must not be mixed into it.
    let mut out: Box<dyn Write> = if is_stdio(&a.output) {
        Box::new(rbf_foundations::console::Notes)
    } else {
        Box::new(std::io::stdout())
    };
    if a.json {
        return super::write_json(&mut out, &run.summary);
    }
    super::write_text(&mut out, &ingest_text(&run, &a.output))
}
