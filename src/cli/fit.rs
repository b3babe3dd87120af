//! `rbf fit`: estimate the workload model (Q, p_r, placement) from a trace.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use rbf::fit::{table, FitOptions, Fitter, DEFAULT_WINDOW};
use rbf::ingest::series;
use rbf::output_file::{check_outputs, is_stdio};
use rbf::Result;

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
    #[arg(long, default_value_t = rbf::fit::successor::DEFAULT_PAIR_CAP)]
    pub pair_cap: usize,
    /// Confidence level of the p_r interval.
    #[arg(long, default_value_t = 0.99)]
    pub confidence: f64,
    /// Print the fit summary as JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}

#[derive(serde::Serialize)]
struct Output<'a> {
    #[serde(flatten)]
    fit: &'a rbf::fit::FitSummary,
    ingest: &'a rbf::ingest::IngestSummary,
}

pub fn run(a: FitArgs, io: &mut super::io::Io) -> Result<()> {
    let options = FitOptions {
        warmup: a.warmup,
        window: a.window,
        pair_cap: a.pair_cap,
        confidence: a.confidence,
        ..FitOptions::default()
    };
    if let Some(t) = a.table.as_deref().filter(|t| !is_stdio(t)) {
        table::TableFormat::from_path(t)?;
    }
    let outputs: Vec<&Path> = a
        .output
        .iter()
        .chain(&a.table)
        .map(PathBuf::as_path)
        .collect();
    let inputs = series::expand(&a.trace)?;
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    check_outputs(&outputs, &inputs)?;
    let mut fitter = Fitter::new(options)?;
    let mut source = io.open(&a.trace_args, &a.trace)?;
    fitter.run(&mut source);
    super::print_ingest_notes(source.summary());
    source.summary().require_data()?;
    let fit = fitter.finish()?;
    if let Some(path) = &a.output {
        fit.workload()?.save(path)?;
        io.wrote("workload", path);
    }
    if let Some(path) = &a.table {
        table::write_rank_table(&fit, path)?;
        io.wrote("rank table", path);
    }
    // With data on stdout, the summary must not be mixed into it.
    let mut stderr = rbf::console::Notes;
    let out: &mut dyn Write = if outputs.iter().any(|p| is_stdio(p)) {
        &mut stderr
    } else {
        &mut *io.out
    };
    if a.json {
        super::write_json(
            out,
            &Output {
                fit: &fit.summary,
                ingest: source.summary(),
            },
        )
    } else {
        super::write_text(out, &rbf::report::fit::fit_table(&fit, 20))
    }
}
