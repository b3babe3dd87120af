//! Resumable runs. While a run works, every finished grid point (cell) is appended as
//! one JSON line to a journal in a hidden directory beside the output directory,
//! `.<name>.rbf-run/`, and so is every source once it is prepared (its fitted-workload
//! line, notes and ingest summary: what the outputs say of it), so that a rerun whose
//! points of a source are all journalled need not read that source again yet writes
//! the same report. A run stopped at any moment (Ctrl-C, kill -9, a crash) and
//! started again with the same config skips the points in the journal, and its final
//! outputs are byte for byte those of an uninterrupted run: a journal line holds the
//! row exactly (rows that would not survive JSON exactly, e.g. with a NaN, are not
//! journalled and are recomputed). The journal belongs to one config, shard, rbf
//! version and set of input files (sizes and modification times): any change starts
//! afresh. It is removed once the outputs are in place.
//!
//! A journal line is written whole with one `write` call; a line cut by a crash (no
//! line break, or not JSON) is ignored, so the worst a crash costs is that one cell.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::config::ExperimentConfig;
use super::grid::Shard;
use super::results::SourceInfo;
use super::row::Row;
use crate::error::{Error, Result};

const JOURNAL: &str = "cells.jsonl";
/// One line per prepared source: `{"index": i, "info": SourceInfo}`.
const SOURCES: &str = "sources.jsonl";
const FINGERPRINT: &str = "fingerprint.json";
const LOCK: &str = "lock";

/// What a journal belongs to: a rerun resumes only when all of it is the same.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Fingerprint {
    rbf_version: String,
    /// The rows' format: a journal of an older format is not resumed.
    #[serde(default)]
    results_format: String,
    config: ExperimentConfig,
    shard: Shard,
    /// (path, size in bytes, modification time in ns) of every trace file.
    inputs: Vec<(PathBuf, u64, u128)>,
}

impl Fingerprint {
    fn new(config: &ExperimentConfig, shard: Shard) -> Fingerprint {
        let mut config = config.clone();
        // Where the outputs go does not change what is computed.
        config.output = PathBuf::new();
        // Every file a trace names (directories and globs expanded).
        let inputs = config
            .traces
            .iter()
            .flat_map(|t| super::source::trace_files(t).unwrap_or_else(|_| t.path.list().to_vec()))
            .map(|path| {
                let m = std::fs::metadata(&path).ok();
                let len = m.as_ref().map_or(0, std::fs::Metadata::len);
                let mtime = m
                    .and_then(|m| m.modified().ok())
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos());
                (path, len, mtime)
            })
            .collect();
        Fingerprint {
            rbf_version: env!("CARGO_PKG_VERSION").to_string(),
            results_format: super::results::RESULTS_FORMAT.to_string(),
            config,
            shard,
            inputs,
        }
    }
}

/// The journal of a run writing to one output directory.
pub struct Journal {
    dir: PathBuf,
    log: Mutex<File>,
    done: BTreeMap<usize, Row>,
    source_log: Mutex<File>,
    sources: BTreeMap<usize, SourceInfo>,
    /// Cells recorded by this run (with `done`: whether the journal holds anything).
    recorded: std::sync::atomic::AtomicUsize,
    /// Holds an exclusive lock on the journal for the life of the run.
    _lock: File,
    /// Said if the process is stopped by a signal (`crate::signals`).
    _kept: crate::output_file::pending::Kept,
}

/// The journal directory of `output`: hidden, beside it.
pub fn journal_dir(output: &Path) -> PathBuf {
    let name = output
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let parent = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    parent.join(format!(".{name}.rbf-run"))
}

/// Exact round trip: the value read back from its journal line prints the same
/// (Debug shows NaN and None apart, where JSON writes both as null).
fn encode<T>(value: &T) -> Option<String>
where
    T: Serialize + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let line = serde_json::to_string(value).ok()?;
    let back: T = serde_json::from_str(&line).ok()?;
    (format!("{back:?}") == format!("{value:?}")).then_some(line)
}

/// A journalled source: its index among the config's sources and what it said.
#[derive(Debug, Serialize, Deserialize)]
struct SourceLine {
    index: usize,
    info: SourceInfo,
}

/// The complete lines of a journal file that parse as `T` (the last one may have been
/// cut by a crash; a missing file has none).
fn complete_lines<T: serde::de::DeserializeOwned>(path: &Path) -> Vec<T> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let complete = text.rfind('\n').map_or("", |i| &text[..=i]);
    complete
        .lines()
        .filter_map(|line| serde_json::from_str::<T>(line).ok())
        .collect()
}

/// Opens a journal file for appending; a line cut by a crash must not run into the
/// next one, so a non-empty file gets a line break first.
fn append(path: &Path) -> Result<File> {
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    if f.metadata().map_or(0, |m| m.len()) > 0 {
        f.write_all(b"\n").map_err(|e| Error::io(path, e))?;
    }
    Ok(f)
}

/// Appends `line` and a line break with one `write` call; a failure only costs
/// resumability.
fn write_line(log: &Mutex<File>, mut line: String) {
    line.push('\n');
    if let Ok(mut log) = log.lock() {
        let _ = log.write_all(line.as_bytes());
    }
}

impl Journal {
    /// Opens the journal of a run of `config` (shard `shard`) writing to `output`,
    /// keeping the cells of an interrupted earlier run of the same thing.
    pub fn open(output: &Path, config: &ExperimentConfig, shard: Shard) -> Result<Journal> {
        // By the resolved path: a run into `out/x` and one into a symlink to it (or any
        // other spelling of it) share one journal and its lock, so the second is refused.
        let dir = journal_dir(&crate::output_file::resolved_path(output));
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        let lock = lock(&dir.join(LOCK), output)?;
        let fingerprint = Fingerprint::new(config, shard);
        let fp_path = dir.join(FINGERPRINT);
        let same = std::fs::read_to_string(&fp_path)
            .ok()
            .and_then(|t| serde_json::from_str::<Fingerprint>(&t).ok())
            .is_some_and(|f| f == fingerprint);
        let log_path = dir.join(JOURNAL);
        let sources_path = dir.join(SOURCES);
        let (mut done, mut sources) = (BTreeMap::new(), BTreeMap::new());
        if same {
            for row in complete_lines::<Row>(&log_path) {
                done.insert(row.point, row);
            }
            for s in complete_lines::<SourceLine>(&sources_path) {
                sources.insert(s.index, s.info);
            }
        } else {
            let _ = std::fs::remove_file(&log_path);
            let _ = std::fs::remove_file(&sources_path);
            let text = serde_json::to_string_pretty(&fingerprint)
                .map_err(|e| Error::invalid(format!("cannot serialise the run's identity: {e}")))?;
            std::fs::write(&fp_path, text).map_err(|e| Error::io(&fp_path, e))?;
        }
        let log = append(&log_path)?;
        let source_log = append(&sources_path)?;
        let kept = crate::output_file::pending::keep(format!(
            "the finished grid points are kept in {}: run the same command again to resume",
            dir.display()
        ));
        Ok(Journal {
            dir,
            log: Mutex::new(log),
            done,
            source_log: Mutex::new(source_log),
            sources,
            recorded: Default::default(),
            _lock: lock,
            _kept: kept,
        })
    }

    /// The row of `point` from an earlier, interrupted run.
    pub fn done(&self, point: usize) -> Option<&Row> {
        self.done.get(&point)
    }

    /// Cells found in the journal when it was opened.
    pub fn resumed(&self) -> usize {
        self.done.len()
    }

    /// Where the journal is (for messages).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Records a finished cell. A failure only costs resumability: the run goes on.
    pub fn record(&self, row: &Row) {
        if let Some(line) = encode(row) {
            write_line(&self.log, line);
            self.recorded
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// What an interrupted earlier run recorded of source `index` (the config's order).
    pub fn source(&self, index: usize) -> Option<&SourceInfo> {
        self.sources.get(&index)
    }

    /// Records what the outputs say of source `index`, once it is prepared. A source
    /// that would not survive JSON exactly is not journalled (a rerun reads it again).
    pub fn record_source(&self, index: usize, info: &SourceInfo) {
        let line = SourceLine {
            index,
            info: info.clone(),
        };
        if let Some(line) = encode(&line) {
            write_line(&self.source_log, line);
        }
    }

    /// Ends a run that failed (not stopped) with the journal: removed when it holds no
    /// finished point (a refused run leaves nothing behind), kept otherwise, for a
    /// rerun to resume (e.g. after a full disk at the final write). Returns whether it
    /// was kept.
    pub fn abandon(self) -> bool {
        let worth =
            !self.done.is_empty() || self.recorded.load(std::sync::atomic::Ordering::Relaxed) > 0;
        if worth {
            return true;
        }
        let _ = self.finish();
        false
    }

    /// Removes the journal once the outputs are in place.
    pub fn finish(self) -> Result<()> {
        let Journal {
            dir,
            log,
            source_log,
            _lock,
            _kept,
            ..
        } = self;
        drop(_kept);
        drop(log);
        drop(source_log);
        drop(_lock);
        std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))
    }
}

/// An exclusive lock on `path`: two runs writing to the same output would mix their
/// journals and race to replace the directory.
fn lock(path: &Path, output: &Path) -> Result<File> {
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::io::AsRawFd;
        // SAFETY: flock on a descriptor we own; released when the file is closed.
        let r = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if r != 0 {
            return Err(Error::invalid(format!(
                "another rbf run is writing to {} (its journal {} is locked); wait for it or choose another output directory",
                output.display(),
                path.display()
            )));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = output;
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_that_do_not_survive_json_are_not_journalled() {
        let mut row = Row {
            observed_fn: Some(0.125),
            ..Row::default()
        };
        assert!(encode(&row).is_some());
        row.fp_model = Some(f64::NAN);
        assert!(encode(&row).is_none());
    }

    #[test]
    fn journal_dir_is_hidden_beside_the_output() {
        assert_eq!(
            journal_dir(Path::new("out/quick")),
            PathBuf::from("out/.quick.rbf-run")
        );
        assert_eq!(journal_dir(Path::new("q")), PathBuf::from("./.q.rbf-run"));
    }
}
