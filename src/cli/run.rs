//! `rbf run CONFIG`: run an experiment and write its tables, plots and report.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;

use rbf::experiment::{self, output, ExperimentConfig, Journal, RunOptions, Shard};
use rbf::progress::{install_interrupt_handler, is_quiet, note};
use rbf::{Error, Result};

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

/// The directory outputs go to: `-` (stdout) cannot hold tables and plots.
pub fn output_dir(dir: &Path) -> Result<()> {
    if rbf::output_file::is_stdio(dir) {
        return Err(Error::config(
            "output",
            "writes a directory of tables, plots and a report; `-` (stdout) cannot hold them: give a directory",
        ));
    }
    Ok(())
}

/// A run that stopped with `e`: says where its finished points are kept for the rerun,
/// and returns `e`.
fn stopped(journal: Journal, e: Error) -> Error {
    if matches!(e, Error::Interrupted) {
        rbf::errln!(
            "the finished points are kept in {}: run the same command again to resume",
            journal.dir().display()
        );
        return e;
    }
    // A refused run leaves nothing behind; one that failed after finishing
    // points (a full disk at the final write) keeps them for the rerun.
    let dir = journal.dir().to_path_buf();
    if journal.abandon() {
        rbf::errln!(
            "the finished points are kept in {}: run the same command again to resume",
            dir.display()
        );
    }
    e
}

pub fn run(a: RunArgs, io: &mut super::io::Io) -> Result<()> {
    let config = ExperimentConfig::load(&a.config)?;
    rbf::experiment::check(&config)?;
    let shard = a.shard.as_deref().map(Shard::parse).transpose()?;
    let shard = shard.unwrap_or(Shard::ALL);
    let dir = a.output.unwrap_or_else(|| config.output.clone());
    output_dir(&dir)?;
    let mut files: Vec<PathBuf> = Vec::new();
    for t in &config.traces {
        files.extend(experiment::source::trace_files(t)?);
    }
    let mut inputs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    inputs.push(&a.config);
    output::check_dir(&dir, &inputs)?;
    install_interrupt_handler();
    super::with_threads(a.threads, || {
        let start = Instant::now();
        let journal = Journal::open(&dir, &config, shard)?;
        if journal.resumed() > 0 {
            note(&format!(
                "resuming: {} point(s) were finished by an interrupted run (journal {})",
                journal.resumed(),
                journal.dir().display()
            ));
        }
        let options = RunOptions {
            shard,
            progress: true,
        };
        // A stop while the outputs are written (all points done) is a stop too: the
        // outputs are refused whole and the journal, complete, makes the rerun instant.
        let finished = experiment::run_resumable(&config, options, Some(&journal))
            .and_then(|results| Ok((output::write(&results, &dir)?, results)));
        let (written, results) = match finished {
            Ok(done) => done,
            Err(e) => return Err(stopped(journal, e)),
        };
        journal.finish()?;
        if !is_quiet() {
            io.text(&rbf::experiment::tables::terminal(&results, a.wide))?;
        }
        io.written.push(written.dir.clone());
        super::print_written(io.out, &written, start.elapsed().as_secs_f64())
    })
}
