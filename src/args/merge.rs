//! `rbf merge`: combine the outputs of `rbf run --shard I/N` into the whole grid's.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;

use rbf_foundations::error::Result;
use rbf_foundations::progress::is_quiet;
use rbf_judge::experiment::{self, output};

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Shard output directories (or their results.json files).
    #[arg(required = true)]
    pub shards: Vec<PathBuf>,
    /// Where to write the merged tables, plots and report (a directory, replaced as a
    /// whole; it may not be one of the shards').
    #[arg(long, short, required = true)]
    pub output: PathBuf,
    /// Print every column (intervals, Markov lower bound, drop-pins) in one wide table
    /// instead of the 100-column summary; results.csv always has them all.
    #[arg(long)]
    pub wide: bool,
}

pub fn run(a: MergeArgs) -> Result<()> {
    let start = Instant::now();
    experiment::command::output_dir(&a.output)?;
    let inputs: Vec<&Path> = a.shards.iter().map(PathBuf::as_path).collect();
    output::check_dir(&a.output, &inputs)?;
    let parts = a
        .shards
        .iter()
        .map(|p| {
            let file = if p.is_dir() {
                p.join("results.json")
            } else {
                p.clone()
            };
            Ok((format!("`{}`", file.display()), output::read(&file)?))
        })
        .collect::<Result<Vec<_>>>()?;
    let merged = experiment::merge_labelled(parts)?;
    let written = output::write(&merged, &a.output)?;
    if !is_quiet() {
        rbf_foundations::out!(
            "{}",
            rbf_judge::experiment::tables::terminal(&merged, a.wide)
        );
    }
    super::print_written(
        &mut std::io::stdout(),
        &written,
        start.elapsed().as_secs_f64(),
    )?;
    Ok(())
}
