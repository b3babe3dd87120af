//! `rbf run CONFIG` as one library call: the config loaded and checked, with its output
//! directory, before any work ([`RunRequest::new`]), then the grid run, resumable, and
//! its tables, plots and report written ([`run`]). The command line parses its flags into
//! a [`RunRequest`], chooses the thread pool, and prints what comes back.

use std::path::{Path, PathBuf};

use super::{output, Journal, Results, RunOptions, Shard, Written};
use super::{run_resumable, source, ExperimentConfig};
use rbf_foundations::error::{Error, Problem, Result};
use rbf_foundations::progress::{install_interrupt_handler, note};

/// What `rbf run` is asked: the config, the shard of its grid, the output directory.
pub struct RunRequest {
    config: ExperimentConfig,
    shard: Shard,
    dir: PathBuf,
}

impl RunRequest {
    /// The run of the config file `path`: shard `shard` (`I/N`; the whole grid when
    /// None), written to `output` (the config's `output` when None). Errors, in this
    /// order: the config (its keys, its grid), the shard, an output that is stdout, an
    /// input of the run, or a directory that holds something other than an earlier
    /// run's outputs.
    pub fn new(path: &Path, output: Option<&Path>, shard: Option<&str>) -> Result<Self> {
        let config = ExperimentConfig::load(path)?;
        super::check(&config)?;
        let shard = shard.map(Shard::parse).transpose()?.unwrap_or(Shard::ALL);
        let dir = output.map_or_else(|| config.output.clone(), Path::to_path_buf);
        output_dir(&dir)?;
        let mut files: Vec<PathBuf> = Vec::new();
        for t in &config.traces {
            files.extend(source::trace_files(t)?);
        }
        let mut inputs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
        inputs.push(path);
        output::check_dir(&dir, &inputs)?;
        Ok(RunRequest { config, shard, dir })
    }
}

/// What [`run`] computed and where it wrote it.
pub struct ExperimentRun {
    pub results: Results,
    pub written: Written,
}

/// Runs the request's points in the current thread pool, taking those an interrupted
/// earlier run finished from its journal, and writes the outputs. A run that stops
/// keeps its finished points for the rerun and says where.
pub fn run(request: &RunRequest) -> Result<ExperimentRun> {
    install_interrupt_handler();
    let journal = Journal::open(&request.dir, &request.config, request.shard)?;
    if let Some(why) = journal.afresh_because() {
        rbf_foundations::console::err(&format!(
            "warning: not resuming the interrupted run (journal {}): {why}; starting afresh\n",
            journal.dir().display()
        ));
    }
    if journal.resumed() > 0 {
        note(&format!(
            "resuming: {} point(s) were finished by an interrupted run (journal {})",
            journal.resumed(),
            journal.dir().display()
        ));
    }
    let options = RunOptions {
        shard: request.shard,
        progress: true,
    };
    // A stop while the outputs are written (all points done) is a stop too: the
    // outputs are refused whole and the journal, complete, makes the rerun instant.
    let finished = run_resumable(&request.config, options, Some(&journal))
        .and_then(|results| Ok((output::write(&results, &request.dir)?, results)));
    let (written, results) = match finished {
        Ok(done) => done,
        Err(e) => return Err(stopped(journal, e)),
    };
    journal.finish()?;
    Ok(ExperimentRun { results, written })
}

/// The directory outputs go to: `-` (stdout) cannot hold tables and plots.
pub fn output_dir(dir: &Path) -> Result<()> {
    if rbf_foundations::output_file::is_stdio(dir) {
        return Err(Error::setting(
            "output",
            Problem::rule("writes a directory of tables, plots and a report; `-` (stdout) cannot hold them: give a directory"),
        ));
    }
    Ok(())
}

/// A run that stopped with `e`: says where its finished points are kept for the rerun,
/// and returns `e`.
fn stopped(journal: Journal, e: Error) -> Error {
    if matches!(e, Error::Interrupted) {
        rbf_foundations::errln!(
            "the finished points are kept in {}: run the same command again to resume",
            journal.dir().display()
        );
        return e;
    }
    // A refused run leaves nothing behind; one that failed after finishing
    // points (a full disk at the final write) keeps them for the rerun.
    let dir = journal.dir().to_path_buf();
    if journal.abandon() {
        rbf_foundations::errln!(
            "the finished points are kept in {}: run the same command again to resume",
            dir.display()
        );
    }
    e
}
