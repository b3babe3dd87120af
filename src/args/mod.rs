//! The command line's options as library types: the clap definitions of every `rbf`
//! command (each command's flags, and the flag groups several commands share,
//! declared once: [`filter_args`], [`trace_args`], [`workload_args`], [`model_args`],
//! with [`numbers`]' parsers on every numeric flag), their conversion into the library's
//! requests, and [`run`]: one parsed command run as `rbf` runs it, its results written to
//! an [`io::Io`]; [`usage`]: how a program built on them ends. The `rbf` binary (src/cli) parses its process arguments with these
//! types and the Python package (python/) its keyword arguments turned into flags, so
//! option names, defaults, checks and error messages are the same in both, and the
//! results too (the Python package reads the `--json` text).

pub mod compare;
pub mod filter_args;
pub mod fit;
pub mod ingest;
pub mod io;
pub mod merge;
pub mod model;
pub mod model_args;
pub mod numbers;
pub mod replay;
pub mod run;
pub mod size;
pub mod synth;
pub mod trace_args;
pub mod usage;
pub mod value_enums;
pub mod workload_args;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use rbf_foundations::error::Result;

/// The command line's root: its name, version, description and global flags, over the
/// commands `C` (the library's [`Command`] for `rbf`; the benchmarks for `rbf-bench`).
#[derive(Parser, Debug)]
#[command(
    name = "rbf",
    version,
    about = "Recycling Bloom filters: replay traces with exact ground truth, fit workloads, compare FP/FN models and bounds with what happened"
)]
pub struct Cli<C: Subcommand = Command> {
    /// No progress, estimates or notes on stderr (errors and warnings still show);
    /// `run` and `merge` also leave out the results table.
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: C,
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
}

/// Parses `args` (the program name first): clap's parser with
/// [`numbers::plain_numbers`] on every numeric flag.
pub fn try_parse<C, I, T>(args: I) -> std::result::Result<Cli<C>, clap::Error>
where
    C: Subcommand,
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    try_parse_command(Cli::<C>::command(), args)
}

/// [`try_parse`] with the root command `command` (`Cli::<C>::command()` renamed and
/// described as another program, `rbf-bench`): the same flags, parsers and messages.
pub fn try_parse_command<C, I, T>(
    command: clap::Command,
    args: I,
) -> std::result::Result<Cli<C>, clap::Error>
where
    C: Subcommand,
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let matches = numbers::plain_numbers(command).try_get_matches_from(args)?;
    Cli::<C>::from_arg_matches(&matches)
}

/// Runs a parsed command line: `--quiet`, then the command.
pub fn run(cli: Cli, io: &mut io::Io) -> Result<()> {
    rbf_foundations::progress::set_quiet(cli.quiet);
    cli.command.run(io)
}

impl Command {
    /// Runs the command: one library call, its results (the `--json` text, or the
    /// tables) written to `io`, notes on stderr.
    pub fn run(self, io: &mut io::Io) -> Result<()> {
        match self {
            Command::Replay(a) => replay::run(a, io),
            Command::Synth(a) => synth::run(a),
            Command::Ingest(a) => ingest::run(a),
            Command::Model(a) => model::run(a, io),
            Command::Fit(a) => fit::run(a, io),
            Command::Compare(a) => compare::run(a, io),
            Command::Run(a) => run::run(a, io),
            Command::Merge(a) => merge::run(a),
            Command::Size(a) => size::run(a, io),
        }
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
/// else by reason ([`rbf_data::ingest::IngestSummary::console`]), wrapped to the table width.
pub fn print_ingest_notes(summary: &rbf_data::ingest::IngestSummary) {
    for w in summary.console() {
        rbf_foundations::err!(
            "{}",
            rbf_judge::report::wrap(&w, rbf_judge::report::WIDTH, "    ")
        );
    }
}

/// Writes `value` as pretty JSON (and a line break) to `out`.
pub fn write_json<T: serde::Serialize>(out: &mut dyn std::io::Write, value: &T) -> Result<()> {
    let s = serde_json::to_string_pretty(value)
        .map_err(|e| rbf_foundations::error::Error::encode("serialise output", e))?;
    write_text(out, &format!("{s}\n"))
}

/// Writes report text to `out` (stdout, or stderr when stdout carries data).
pub fn write_text(out: &mut dyn std::io::Write, text: &str) -> Result<()> {
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| rbf_foundations::error::Error::io("<output>", e))
}

/// Runs `f` on a thread pool of `threads` workers (all cores when None); more than
/// the machine has are capped, with a note (see [`rbf_foundations::resources::cap_threads`]).
pub fn with_threads<T: Send>(
    threads: Option<usize>,
    f: impl FnOnce() -> Result<T> + Send,
) -> Result<T> {
    match threads {
        None => f(),
        Some(n) => {
            let n = rbf_foundations::resources::cap_threads(n)?;
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .map_err(|e| {
                    rbf_foundations::error::Error::Resource(format!(
                        "cannot start {n} threads: {e}"
                    ))
                })?
                .install(f)
        }
    }
}

/// Tells the user where an experiment's outputs are.
pub fn print_written(
    out: &mut dyn std::io::Write,
    w: &rbf_judge::experiment::Written,
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
        &format!(
            "\n{}",
            rbf_judge::report::wrap(&text, rbf_judge::report::WIDTH, "    ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The library's parser is the command line's: numbers in the spellings users write,
    /// and a bad value refused in the one line the command line prints.
    #[test]
    fn the_parser_reads_plain_numbers_and_names_a_bad_value() {
        let args = [
            "rbf", "-q", "model", "fp", "-m", "2^20", "-k", "3", "--sigma", "1e3",
        ];
        let cli: Cli = try_parse(args).expect("a valid command line");
        assert!(cli.quiet);
        let Command::Model(model::ModelArgs {
            model: model::Model::Fp(fp),
        }) = cli.command
        else {
            panic!("parsed as another command: {:?}", cli.command);
        };
        assert_eq!(fp.filter.memory, Some(1 << 20));
        assert_eq!(fp.filter.sigma, Some(1000));
        let bad = ["rbf", "replay", "t.txt", "--memory", "-1", "--hashes", "3"];
        let e = try_parse::<Command, _, _>(bad).expect_err("a negative memory");
        let line = numbers::bad_value(&e).expect("a bad value");
        assert!(
            line.starts_with("--memory") && line.contains("`-1`"),
            "{line}"
        );
    }
}
