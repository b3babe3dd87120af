//! `rbf run CONFIG`: run an experiment and write its tables, plots and report.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use rbf_foundations::error::Result;
use rbf_foundations::progress::is_quiet;
use rbf_judge::experiment::command::{self, RunRequest};

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Experiment file (TOML; see configs/ and the README's config reference).
    pub config: PathBuf,
    /// Output directory (default: the config's `output`, relative to the config file).
    /// It is replaced as a whole when the run completes, so it may hold only the
    /// outputs of an earlier run.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Run only shard I of N (0-based; round-robin over grid points), for job arrays.
    /// Combine the shards' outputs with `rbf merge`.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Worker threads (default: all cores; more than the cores are capped). Results do
    /// not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Print every column (intervals, Markov lower bound, drop-pins) in one wide table
    /// instead of the 100-column summary; results.csv always has them all.
    #[arg(long)]
    pub wide: bool,
}

pub fn run(a: RunArgs, io: &mut super::io::Io) -> Result<()> {
    let request = RunRequest::new(&a.config, a.output.as_deref(), a.shard.as_deref())?;
    super::with_threads(a.threads, || {
        let start = Instant::now();
        let run = command::run(&request)?;
        if !is_quiet() {
            io.text(&rbf_judge::experiment::tables::terminal(
                &run.results,
                a.wide,
            ))?;
        }
        io.written.push(run.written.dir.clone());
        super::print_written(io.out, &run.written, start.elapsed().as_secs_f64())
    })
}
