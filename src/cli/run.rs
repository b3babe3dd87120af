//! `rbf run CONFIG`: run an experiment and write its tables, plots and report.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use rbf::experiment::{self, output, ExperimentConfig, RunOptions, Shard};
use rbf::Result;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Experiment file (TOML; see configs/ and the README's config reference).
    pub config: PathBuf,
    /// Output directory (default: the config's `output`, relative to the config file).
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Run only shard I of N (0-based; round-robin over grid points), for job arrays.
    /// Combine the shards' outputs with `rbf merge`.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Do not print the results table.
    #[arg(long)]
    pub quiet: bool,
    /// Print every column (intervals, Markov lower bound, drop-pins) in one wide table
    /// instead of the 100-column summary; results.csv always has them all.
    #[arg(long)]
    pub wide: bool,
}

pub fn run(a: RunArgs) -> Result<()> {
    let config = ExperimentConfig::load(&a.config)?;
    let shard = a.shard.as_deref().map(Shard::parse).transpose()?;
    let dir = a.output.unwrap_or_else(|| config.output.clone());
    super::with_threads(a.threads, || {
        let start = Instant::now();
        let results = experiment::run(
            &config,
            RunOptions {
                shard: shard.unwrap_or(Shard::ALL),
                progress: true,
            },
        )?;
        let written = output::write(&results, &dir)?;
        if !a.quiet {
            print!("{}", output::terminal(&results, a.wide));
        }
        super::print_written(&written, start.elapsed().as_secs_f64());
        Ok(())
    })
}
