//! The `rbf` command line: a thin layer that parses flags, calls the library and prints.

mod bench;
mod compare;
mod filter_args;
mod fit;
mod ingest;
mod merge;
mod model;
mod replay;
mod run;
mod size;
mod synth;
mod trace_args;

use clap::{Parser, Subcommand};

use rbf::Result;

#[derive(Parser, Debug)]
#[command(
    name = "rbf",
    version,
    about = "Recycling Bloom filters: replay traces with exact ground truth, fit workloads, compare FP/FN models and bounds with what happened"
)]
pub struct Cli {
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

pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Replay(a) => replay::run(a),
        Command::Synth(a) => synth::run(a),
        Command::Ingest(a) => ingest::run(a),
        Command::Model(a) => model::run(a),
        Command::Fit(a) => fit::run(a),
        Command::Compare(a) => compare::run(a),
        Command::Run(a) => run::run(a),
        Command::Merge(a) => merge::run(a),
        Command::Size(a) => size::run(a),
        Command::Bench(a) => bench::run(a),
    }
}

/// Writes `value` as pretty JSON to stdout.
pub fn print_json<T: serde::Serialize>(value: &T) -> Result<()> {
    let s = serde_json::to_string_pretty(value)
        .map_err(|e| rbf::Error::invalid(format!("cannot serialise output: {e}")))?;
    println!("{s}");
    Ok(())
}

/// Runs `f` on a thread pool of `threads` workers (all cores when None).
pub fn with_threads<T: Send>(
    threads: Option<usize>,
    f: impl FnOnce() -> Result<T> + Send,
) -> Result<T> {
    match threads {
        None => f(),
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build()
            .map_err(|e| rbf::Error::invalid(format!("cannot start {n} threads: {e}")))?
            .install(f),
    }
}

/// Tells the user where an experiment's outputs are.
pub fn print_written(w: &rbf::experiment::Written, seconds: f64) {
    println!(
        "\nfinished in {seconds:.1} s; outputs in {}",
        w.dir.display()
    );
    println!(
        "  table:  {} (also {})",
        w.csv.display(),
        w.parquet.display()
    );
    println!("  report: {}", w.report.display());
    println!(
        "  plots:  {} SVG files in {}",
        w.plots.len(),
        w.dir.join("plots").display()
    );
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
