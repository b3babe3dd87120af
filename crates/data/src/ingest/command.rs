//! `rbf ingest` as one library call: a trace read once and written as a compact `.rbfs`
//! message stream, whole or not at all ([`run`]). The command line parses its flags into
//! an [`IngestRequest`] and prints what comes back (its text: `report::ingest`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::open::open_inputs;
use super::options::IngestOptions;
use super::source::IngestSummary;
use super::{rbfs, series};
use rbf_foundations::error::Result;
use rbf_foundations::output_file::check_outputs;

/// What `rbf ingest` is asked: the trace, how to read it, the `.rbfs` file to write.
/// Built by [`IngestRequest::new`], which checks the output before the trace is read.
#[derive(Clone, Debug)]
pub struct IngestRequest {
    options: IngestOptions,
    input: Vec<PathBuf>,
    output: PathBuf,
}

impl IngestRequest {
    /// Errors: an input pattern that names nothing, an output that cannot be written or
    /// is an input.
    pub fn new(options: IngestOptions, input: &[PathBuf], output: &Path) -> Result<Self> {
        let inputs = series::expand(input)?;
        let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
        check_outputs(&[output], &inputs)?;
        Ok(IngestRequest {
            options,
            input: input.to_vec(),
            output: output.to_path_buf(),
        })
    }
}

/// What [`run`] read and wrote.
pub struct IngestRun {
    /// What reading the trace met.
    pub summary: IngestSummary,
    /// Messages written.
    pub written: u64,
    /// Seconds spent reading and writing.
    pub seconds: f64,
}

/// Reads the request's trace and writes its messages. `on_read` sees the trace's
/// ingest summary once it is read (the command line prints its notes there); a trace
/// that gave no message is an error.
pub fn run(request: &IngestRequest, on_read: impl FnOnce(&IngestSummary)) -> Result<IngestRun> {
    let t = Instant::now();
    let mut source = open_inputs(&request.input, &request.options)?;
    let written = rbfs::write(&request.output, source.as_mut(), request.options.hasher)?;
    let seconds = t.elapsed().as_secs_f64();
    let summary = source.summary();
    on_read(summary);
    summary.require_data()?;
    Ok(IngestRun {
        summary: summary.clone(),
        written,
        seconds,
    })
}
