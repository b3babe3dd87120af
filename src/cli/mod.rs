//! The `rbf` command line: a thin layer that parses flags, calls the library and prints.

mod bench;
mod compare;
mod filter_args;
mod fit;
mod ingest;
pub mod io;
mod merge;
mod model;
mod model_args;
pub mod numbers;
mod replay;
mod run;
mod size;
mod synth;
mod trace_args;
mod workload_args;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use rbf::Result;

#[derive(Parser, Debug)]
#[command(
    name = "rbf",
    version,
    about = "Recycling Bloom filters: replay traces with exact ground truth, fit workloads, compare FP/FN models and bounds with what happened"
)]
pub struct Cli {
    /// No progress, estimates or notes on stderr (errors and warnings still show);
    /// `run` and `merge` also leave out the results table.
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Replay a trace through a recycling Bloom filter and count every true FP and FN.
    Replay(replay::ReplayArgs),
    /// Write a synthetic trace drawn from the FN paper's arrival model.
    Synth(synth::SynthArgs),
    /// Read a trace (capture, request log, ...) and write a compact .rbfs message stream.
    Ingest(ingest::IngestArgs),
    /// Analytical models: FP rate, capacity, FN bounds.
    Model(model::ModelArgs),
    /// Estimate the workload model (Q, p_r, placement) from a trace.
    Fit(fit::FitArgs),
    /// Fit, replay and model a trace in one pass; bound next to observed.
    Compare(compare::CompareArgs),
    /// Run an experiment config: a grid of filters over traces, observed next to models.
    Run(run::RunArgs),
    /// Combine the outputs of sharded runs (`rbf run --shard I/N`).
    Merge(merge::MergeArgs),
    /// Find the smallest filter meeting FP and FN targets (models), confirmed by replay.
    Size(size::SizeArgs),
    /// Run a built-in benchmark and print its measurements.
    Bench(bench::BenchArgs),
}

/// Parses the command line: clap's parser with [`numbers::plain_numbers`] on every
/// numeric flag. Usage errors print their message and exit with status 2.
pub fn parse() -> Cli {
    try_parse(std::env::args_os()).unwrap_or_else(|e| numbers::exit_with(e))
}

/// Parses `args` (the program name first) as [`parse`] does, returning the error.
pub fn try_parse<I, T>(args: I) -> std::result::Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let matches = numbers::plain_numbers(Cli::command()).try_get_matches_from(args)?;
    Cli::from_arg_matches(&matches)
}

pub fn run(cli: Cli, io: &mut io::Io) -> Result<()> {
    rbf::progress::set_quiet(cli.quiet);
    match cli.command {
        Command::Replay(a) => replay::run(a, io),
        Command::Synth(a) => synth::run(a),
        Command::Ingest(a) => ingest::run(a),
        Command::Model(a) => model::run(a, io),
        Command::Fit(a) => fit::run(a, io),
        Command::Compare(a) => compare::run(a, io),
        Command::Run(a) => run::run(a, io),
        Command::Merge(a) => merge::run(a),
        Command::Size(a) => size::run(a, io),
        Command::Bench(a) => bench::run(a),
    }
}

/// The values clap fills in for `T`'s flags when none is given: a flag whose value
/// differs from its default was given, which is how flags that do not apply to the
/// chosen mode are recognised (and refused rather than ignored).
pub fn defaults<T: clap::Args + FromArgMatches>() -> T {
    let matches = T::augment_args(clap::Command::new("rbf"))
        .try_get_matches_from(["rbf"])
        .expect("every flag of T has a default");
    T::from_arg_matches(&matches).expect("defaults parse")
}

/// What reading a trace met, on stderr: its warnings, then one line with everything
/// else by reason ([`rbf::ingest::IngestSummary::console`]), wrapped to the table width.
pub fn print_ingest_notes(summary: &rbf::ingest::IngestSummary) {
    for w in summary.console() {
        rbf::err!("{}", rbf::report::wrap(&w, rbf::report::WIDTH, "    "));
    }
}

/// Writes `value` as pretty JSON (and a line break) to `out`.
pub fn write_json<T: serde::Serialize>(out: &mut dyn std::io::Write, value: &T) -> Result<()> {
    let s = serde_json::to_string_pretty(value)
        .map_err(|e| rbf::Error::invalid(format!("cannot serialise output: {e}")))?;
    write_text(out, &format!("{s}\n"))
}

/// Writes report text to `out` (stdout, or stderr when stdout carries data).
pub fn write_text(out: &mut dyn std::io::Write, text: &str) -> Result<()> {
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| rbf::Error::io("<output>", e))
}

/// Runs `f` on a thread pool of `threads` workers (all cores when None); more than
/// the machine has are capped, with a note (see [`rbf::resources::cap_threads`]).
pub fn with_threads<T: Send>(
    threads: Option<usize>,
    f: impl FnOnce() -> Result<T> + Send,
) -> Result<T> {
    match threads {
        None => f(),
        Some(n) => {
            let n = rbf::resources::cap_threads(n)?;
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .map_err(|e| rbf::Error::Resource(format!("cannot start {n} threads: {e}")))?
                .install(f)
        }
    }
}

/// Tells the user where an experiment's outputs are.
pub fn print_written(
    out: &mut dyn std::io::Write,
    w: &rbf::experiment::Written,
    seconds: f64,
) -> Result<()> {
    let name = |p: &std::path::Path| {
        p.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    };
    let text = format!(
        "finished in {seconds:.1} s; outputs in {}: {}, {}, {} (every column), {} (with the \
         per-file detail), {} (the report as one page to open in a browser), {} SVG plots in \
         plots/",
        w.dir.display(),
        name(&w.csv),
        name(&w.parquet),
        name(&w.json),
        name(&w.report),
        name(&w.html),
        w.plots.len(),
    );
    write_text(
        out,
        &format!("\n{}", rbf::report::wrap(&text, rbf::report::WIDTH, "    ")),
    )
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every flag and argument of every command says what it is in `--help`.
    #[test]
    fn every_flag_has_help() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if id != "help" && id != "version" && arg.get_help().is_none() {
                    missing.push(format!("{path} --{id}"));
                }
            }
            for sub in cmd.get_subcommands() {
                if sub.get_about().is_none() {
                    missing.push(format!("{path} {} (no about)", sub.get_name()));
                }
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(&super::Cli::command(), "rbf", &mut missing);
        assert!(missing.is_empty(), "flags without help: {missing:?}");
    }
}
