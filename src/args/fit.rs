//! `rbf fit`: estimate the workload model (Q, p_r, placement) from a trace.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use rbf_foundations::error::Result;
use rbf_observed::fit::command::{self, FitRequest};
use rbf_observed::fit::{FitOptions, DEFAULT_WINDOW};

use super::trace_args::TraceArgs;

#[derive(Args, Debug)]
pub struct FitArgs {
    /// Trace: a file, several files, a directory or a glob pattern read as one trace
    /// (a capture series), or `-` for standard input; zstd is decompressed on the fly.
    #[arg(required = true, num_args = 1..)]
    pub trace: Vec<PathBuf>,
    /// Arrivals that only make keys "seen" before fitting starts.
    #[arg(long, default_value_t = 0)]
    pub warmup: u64,
    /// W: window length in arrivals (Q is ranked within windows; the placement horizon).
    #[arg(long, default_value_t = DEFAULT_WINDOW)]
    pub window: u64,
    #[command(flatten)]
    pub trace_args: TraceArgs,
    /// Workload file to write (JSON, readable by `rbf model fn --workload` and `rbf synth
    /// --workload`; `-`: stdout, the fit summary then goes to stderr).
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
    /// Rank table (rank, q, zeta) to write; .csv or .parquet (`-`: CSV on
    /// stdout).
    #[arg(long, value_name = "FILE")]
    pub table: Option<PathBuf>,
    /// Bound on distinct (message, successor) pairs of the entropy diagnostic.
    #[arg(long, default_value_t = rbf_observed::fit::successor::DEFAULT_PAIR_CAP)]
    pub pair_cap: usize,
    /// Confidence level of the p_r interval.
    #[arg(long, default_value_t = 0.99)]
    pub confidence: f64,
    /// Print the fit summary as JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: FitArgs, io: &mut super::io::Io) -> Result<()> {
    let options = FitOptions {
        warmup: a.warmup,
        window: a.window,
        pair_cap: a.pair_cap,
        confidence: a.confidence,
        ..FitOptions::default()
    };
    let (workload, table) = (a.output.as_deref(), a.table.as_deref());
    let request = FitRequest::new(options, &a.trace, workload, table)?;
    let mut source = io.open(&a.trace_args, &a.trace)?;
    let notes = super::print_ingest_notes;
    let run = command::run(&request, source.as_mut(), notes, |what, p| {
        io.wrote(what, p)
    })?;
    // With data on stdout, the summary must not be mixed into it.
    let mut stderr = rbf_foundations::console::Notes;
    let out: &mut dyn Write = if request.writes_stdout() {
        &mut stderr
    } else {
        &mut *io.out
    };
    if a.json {
        super::write_json(out, &run.output(source.summary()))
    } else {
        super::write_text(out, &rbf_judge::report::fit::fit_table(&run.fit, 20))
    }
}
