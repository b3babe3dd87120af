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
//! version and set of input files (sizes and modification times, and the digest of each
//! file's whole content, taken while the run read it): any change starts afresh, and a
//! file replaced by another of the same size and time (`cp -p`) is named. It is removed
//! once the outputs are in place, under the lock that keeps a second run out.
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
use super::results::{InputIdentity, SourceInfo};
use super::resume_error::ResumeError;
use super::row::Row;
use rbf_foundations::error::{Error, Result};

const JOURNAL: &str = "cells.jsonl";
/// One line per prepared source: `{"index": i, "info": SourceInfo}`.
const SOURCES: &str = "sources.jsonl";
const FINGERPRINT: &str = "fingerprint.json";
/// One line per input file read to its end: `{"path", "bytes", "digest"}`.
const DIGESTS: &str = "digests.jsonl";
const LOCK: &str = "lock";

/// A journalled input file's content digest.
#[derive(Debug, Serialize, Deserialize)]
struct DigestLine {
    path: PathBuf,
    bytes: u64,
    digest: String,
}

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
    digest_log: Mutex<File>,
    /// Input files whose digests the journal holds.
    digested: Mutex<std::collections::BTreeSet<PathBuf>>,
    /// Why the journal of an interrupted run of the same config was not resumed.
    afresh: Option<String>,
    /// Holds an exclusive lock on the journal for the life of the run.
    _lock: File,
    /// Said if the process is stopped by a signal (`rbf_foundations::signals`).
    _kept: rbf_foundations::output_file::pending::Kept,
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
        let dir = journal_dir(&rbf_foundations::output_file::resolved_path(output));
        let lock = lock_journal(&dir, output)?;
        let fingerprint = Fingerprint::new(config, shard);
        let fp_path = dir.join(FINGERPRINT);
        let mut same = std::fs::read_to_string(&fp_path)
            .ok()
            .and_then(|t| serde_json::from_str::<Fingerprint>(&t).ok())
            .is_some_and(|f| f == fingerprint);
        let log_path = dir.join(JOURNAL);
        let sources_path = dir.join(SOURCES);
        let digests_path = dir.join(DIGESTS);
        let (mut done, mut sources) = (BTreeMap::new(), BTreeMap::new());
        let mut digested = std::collections::BTreeSet::new();
        let mut afresh = None;
        if same {
            for row in complete_lines::<Row>(&log_path) {
                done.insert(row.point, row);
            }
            for s in complete_lines::<SourceLine>(&sources_path) {
                sources.insert(s.index, s.info);
            }
            let digests: BTreeMap<PathBuf, DigestLine> =
                complete_lines::<DigestLine>(&digests_path)
                    .into_iter()
                    .map(|d| (d.path.clone(), d))
                    .collect();
            match same_contents(config, &done, &sources, &digests) {
                Ok(()) => digested.extend(digests.into_keys()),
                Err(why) => {
                    afresh = Some(why);
                    same = false;
                    done.clear();
                    sources.clear();
                }
            }
        }
        if !same {
            let _ = std::fs::remove_file(&log_path);
            let _ = std::fs::remove_file(&sources_path);
            let _ = std::fs::remove_file(&digests_path);
            let text = serde_json::to_string_pretty(&fingerprint)
                .map_err(|e| Error::encode("serialise the run's identity", e))?;
            std::fs::write(&fp_path, text).map_err(|e| Error::io(&fp_path, e))?;
        }
        let log = append(&log_path)?;
        let source_log = append(&sources_path)?;
        let digest_log = append(&digests_path)?;
        let kept = rbf_foundations::output_file::pending::keep(format!(
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
            digest_log: Mutex::new(digest_log),
            digested: Mutex::new(digested),
            afresh,
            _lock: lock,
            _kept: kept,
        })
    }

    /// Records the content digest of every input that has one and is not journalled yet:
    /// before any of the points computed from it, so that a resumed run can tell the
    /// files the journalled points came from.
    pub fn record_inputs(&self, inputs: &[InputIdentity]) {
        let Ok(mut digested) = self.digested.lock() else {
            return;
        };
        for i in inputs {
            let Some(digest) = &i.digest else { continue };
            if digested.contains(&i.path) {
                continue;
            }
            let line = DigestLine {
                path: i.path.clone(),
                bytes: i.bytes,
                digest: digest.clone(),
            };
            if let Ok(line) = serde_json::to_string(&line) {
                write_line(&self.digest_log, line);
                digested.insert(i.path.clone());
            }
        }
    }

    /// Why the journal an interrupted run of the same config left was discarded (an
    /// input file is not the one it read, naming it), when it was.
    pub fn afresh_because(&self) -> Option<&str> {
        self.afresh.as_deref()
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

    /// Removes the journal once the outputs are in place. The lock is held until the
    /// journal is gone: a run started meanwhile is refused as busy, or finds no journal
    /// and starts afresh; it never resumes the points of a run that has committed them.
    pub fn finish(self) -> Result<()> {
        self.finish_then(|| {})
    }

    /// [`Journal::finish`], calling `locked` once the journal is removed and before the
    /// lock is released.
    fn finish_then(self, locked: impl FnOnce()) -> Result<()> {
        let Journal {
            dir,
            log,
            source_log,
            digest_log,
            _lock,
            _kept,
            ..
        } = self;
        drop(_kept);
        drop(log);
        drop(source_log);
        drop(digest_log);
        let removed = std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e));
        locked();
        drop(_lock);
        removed
    }
}

/// Whether the input files the journalled points (and source reports) of `config` came
/// from are the files there now: each trace source with something journalled must have
/// every file's digest in the journal, equal to the file's content now (read here, the
/// one pass a resumed run makes over a source it does not replay). Else why not,
/// naming the file.
fn same_contents(
    config: &ExperimentConfig,
    done: &BTreeMap<usize, Row>,
    sources: &BTreeMap<usize, SourceInfo>,
    digests: &BTreeMap<PathBuf, DigestLine>,
) -> std::result::Result<(), String> {
    let points = super::grid::expand(config);
    let mut used: std::collections::BTreeSet<usize> = sources.keys().copied().collect();
    used.extend(
        done.keys()
            .filter_map(|&i| points.iter().find(|p| p.index == i).map(|p| p.source)),
    );
    for s in used {
        let Some(t) = config.traces.get(s) else {
            continue; // a synthetic source: no file
        };
        let files = super::source::trace_files(t).map_err(|e| e.to_string())?;
        for f in files {
            let Some(d) = digests.get(&f) else {
                return Err(format!(
                    "the journal holds no content digest of {}",
                    f.display()
                ));
            };
            let now = rbf_data::ingest::digest::of_file(&f).map_err(|e| e.to_string())?;
            if now.hex() != d.digest || now.bytes != d.bytes {
                return Err(format!(
                    "{} is not the file the interrupted run read (its content differs, though its size and modification time may not)",
                    f.display()
                ));
            }
        }
    }
    Ok(())
}

/// Creates the journal directory and locks it. A run that finished removes the
/// directory, lock file included, before it releases its lock: a lock taken on a file
/// no longer at its path is such a run's, and the directory is made again.
fn lock_journal(dir: &Path, output: &Path) -> Result<File> {
    for _ in 0..16 {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let path = dir.join(LOCK);
        let f = lock(&path, output)?;
        if still_linked(&f, &path) {
            return Ok(f);
        }
    }
    Err(ResumeError::JournalRemoved {
        journal: dir.to_path_buf(),
        output: output.to_path_buf(),
    }
    .into())
}

/// Whether the open file `f` is the one at `path`.
fn still_linked(f: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (f.metadata(), std::fs::metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (f, path);
        true
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
            return Err(ResumeError::Locked {
                output: output.to_path_buf(),
                lock: path.to_path_buf(),
            }
            .into());
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

    /// A config of one trace file `t.csv` in `dir`, output `out`.
    fn config_in(dir: &Path) -> ExperimentConfig {
        std::fs::write(dir.join("t.csv"), "0,1,1\n1,2,1\n2,1,1\n").unwrap();
        let text = "name = \"r\"\noutput = \"out\"\n[[trace]]\npath = \"t.csv\"\n[grid]\nmemory = [1000]\nhashes = [2]\nsigma_fraction = [0.5]\n";
        ExperimentConfig::parse(text, &dir.join("c.toml")).unwrap()
    }

    #[test]
    fn the_lock_is_held_until_the_journal_is_gone() {
        let dir = std::env::temp_dir().join(format!("rbf-journal-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let config = config_in(&dir);
        let out = dir.join("out");
        let shard = Shard { index: 0, count: 1 };
        let first = Journal::open(&out, &config, shard).unwrap();
        first.record(&Row::default());
        let journal = first.dir().to_path_buf();
        let mut second_said = None;
        first
            .finish_then(|| {
                // Between the journal's removal and the lock's release.
                assert!(!journal.exists(), "the journal is removed under the lock");
                second_said = Some(match Journal::open(&out, &config, shard) {
                    Ok(j) => format!("opened, {} resumed", j.resumed()),
                    Err(e) => e.to_string(),
                });
            })
            .unwrap();
        // A run started then does not resume the committed run's points: it starts
        // afresh (or, had it opened the old lock file first, it would be refused).
        assert_eq!(second_said.as_deref(), Some("opened, 0 resumed"));
        // Once released, a new run finds no journal and takes the lock.
        let third = Journal::open(&out, &config, shard).unwrap();
        assert_eq!(third.resumed(), 0);
        third.finish().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
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
