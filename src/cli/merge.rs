//! `rbf merge`: combine the outputs of `rbf run --shard I/N` into the whole grid's.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use rbf::experiment::{self, output};
use rbf::Result;

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Shard output directories (or their results.json files).
    #[arg(required = true)]
    pub shards: Vec<PathBuf>,
    /// Where to write the merged tables, plots and report.
    #[arg(long, short, required = true)]
    pub output: PathBuf,
    /// Do not print the results table.
    #[arg(long)]
    pub quiet: bool,
    /// Print every column (intervals, Markov lower bound, drop-pins) in one wide table
    /// instead of the 100-column summary; results.csv always has them all.
    #[arg(long)]
    pub wide: bool,
}

pub fn run(a: MergeArgs) -> Result<()> {
    let start = Instant::now();
    let parts = a
        .shards
        .iter()
        .map(|p| {
            let file = if p.is_dir() {
                p.join("results.json")
            } else {
                p.clone()
            };
            output::read(&file)
        })
        .collect::<Result<Vec<_>>>()?;
    let merged = experiment::merge(parts)?;
    let written = output::write(&merged, &a.output)?;
    if !a.quiet {
        print!("{}", output::terminal(&merged, a.wide));
    }
    super::print_written(&written, start.elapsed().as_secs_f64());
    Ok(())
}
