//! Capture series: several files read as one trace, as capture tools and flow
//! collectors leave them (`tcpdump -G/-C` rotation, hourly flow logs).
//!
//! Inputs are files, directories (their files and their subdirectories', by path), glob patterns (`*`, `?`,
//! `[...]`, sorted by name) and `-` (standard input). Hidden files (names starting
//! with `.`: `.DS_Store`, an editor's swap file, rsync's temporaries) are not part of
//! a directory's series, and a pattern matches them only where it spells the dot, as
//! a shell's does. A FIFO, socket or character device in a series is refused by name:
//! every file of a series is read twice (its format checked, then its records), and
//! such a file gives its data once. Every file is opened and its
//! format checked before any record is read, so a file that is not a trace, or is of
//! another format than the first, is an error naming it, not a surprise halfway
//! through. The files are read in the order given, or sorted by the time of their
//! first record. The series' summary totals the files' and keeps each file's own
//! summary, so per-file counts and warnings name their file.

use std::path::{Path, PathBuf};

use super::input;
use super::options::IngestOptions;
use super::source::{is_stdin, label};
use super::source::{IngestSummary, MessageSource, SourceFormat};
use crate::message::{KeyDictionary, Message};
use rbf_foundations::error::{Error, Problem, Result};

mod error;
pub use error::{SeriesError, SeriesPlace};

/// The files `inputs` name, in order: directories and glob patterns expanded.
pub fn expand(inputs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for p in inputs {
        if is_stdin(p) {
            files.push(p.clone());
        } else if p.is_dir() {
            files.extend(directory_files(p)?);
        } else if !p.exists() && is_pattern(p) {
            files.extend(pattern_files(p)?);
        } else {
            files.push(p.clone());
        }
    }
    if files.iter().filter(|f| is_stdin(f)).count() > 1 {
        return Err(SeriesError::StdinTwice.into());
    }
    if files.len() > 1 && files.iter().any(|f| is_stdin(f)) {
        return Err(SeriesError::StdinInSeries.into());
    }
    if files.len() > 1 {
        refuse_read_once(&files, SeriesPlace::Named)?;
    }
    Ok(files)
}

/// How deep a directory series' subdirectories may nest.
const MAX_DIRECTORY_DEPTH: usize = 32;

/// A directory's files and its subdirectories', sorted by path (so `a.csv`, `b.csv`,
/// `sub/c.csv`), hidden ones left out.
fn directory_files(p: &Path) -> Result<Vec<PathBuf>> {
    let mut entries = Vec::new();
    let mut hidden = 0usize;
    let mut visited = std::collections::HashSet::new();
    walk_directory(p, 0, &mut entries, &mut hidden, &mut visited)?;
    entries.sort();
    if entries.is_empty() {
        let hidden = match hidden {
            0 => String::new(),
            n => format!(" but {n} hidden one(s), whose names start with `.`"),
        };
        return Err(Error::NoData(format!(
            "{}: the directory holds no files, in it or in its subdirectories{hidden}",
            p.display()
        )));
    }
    refuse_read_once(&entries, SeriesPlace::Directory(p.to_path_buf()))?;
    Ok(entries)
}

/// Collects the files under `dir` into `files`, counting hidden entries (files and
/// directories) into `hidden`. A directory reached twice (through a symbolic link) is
/// read once.
fn walk_directory(
    dir: &Path,
    depth: usize,
    files: &mut Vec<PathBuf>,
    hidden: &mut usize,
    visited: &mut std::collections::HashSet<PathBuf>,
) -> Result<()> {
    if depth > MAX_DIRECTORY_DEPTH {
        return Err(SeriesError::TooDeep {
            dir: dir.to_path_buf(),
            max: MAX_DIRECTORY_DEPTH,
        }
        .into());
    }
    if let Ok(canonical) = std::fs::canonicalize(dir) {
        if !visited.insert(canonical) {
            return Ok(());
        }
    }
    for e in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let path = e.map_err(|e| Error::io(dir, e))?.path();
        if is_hidden(&path) {
            *hidden += 1;
        } else if path.is_dir() {
            walk_directory(&path, depth + 1, files, hidden, visited)?;
        } else {
            files.push(path);
        }
    }
    Ok(())
}

/// The files a glob pattern matches, sorted (`*` does not match a leading dot).
fn pattern_files(p: &Path) -> Result<Vec<PathBuf>> {
    let pattern = p.to_string_lossy();
    // As a shell's: `*` does not match a leading dot.
    let options = glob::MatchOptions {
        require_literal_leading_dot: true,
        ..Default::default()
    };
    let mut matched: Vec<PathBuf> = glob::glob_with(&pattern, options)
        .map_err(|e| {
            Error::setting(
                "trace path",
                Problem::Unreadable(format!("bad pattern {pattern:?}: {e}")),
            )
        })?
        .filter_map(std::result::Result::ok)
        .filter(|m| !m.is_dir())
        .collect();
    matched.sort();
    if matched.is_empty() {
        return Err(Error::NoData(format!("{pattern}: no file matches")));
    }
    refuse_read_once(&matched, SeriesPlace::Pattern(pattern.into_owned()))?;
    Ok(matched)
}

/// A name starting with `.`: not part of a directory's series.
fn is_hidden(p: &Path) -> bool {
    p.file_name()
        .is_some_and(|n| n.as_encoded_bytes().starts_with(b"."))
}

/// Refuses a file that gives its data only once ([`input::read_once_kind`]: a FIFO,
/// a socket, a character device) among `files`, naming it: a series opens each file
/// to check its format and then again to read it, and the second open of a FIFO would
/// wait forever for a writer.
fn refuse_read_once(files: &[PathBuf], place: SeriesPlace) -> Result<()> {
    for f in files.iter().filter(|f| !is_stdin(f)) {
        let Ok(meta) = std::fs::metadata(f) else {
            continue; // opening it says what is wrong
        };
        if let Some(kind) = input::read_once_kind(&meta) {
            return Err(SeriesError::ReadOnce {
                path: f.clone(),
                kind,
                place,
            }
            .into());
        }
    }
    Ok(())
}

fn is_pattern(p: &Path) -> bool {
    p.to_string_lossy().contains(['*', '?', '['])
}

/// Opens one file of a series as a reader of its own (the dispatch's, given by the
/// caller: the series is opened by the dispatch, so it does not import it back).
pub type OpenFile = fn(&Path, &IngestOptions, bool) -> Result<Box<dyn MessageSource>>;

/// Checks every file, orders them, and returns the series' source.
pub fn open(
    files: Vec<PathBuf>,
    options: &IngestOptions,
    open_file: OpenFile,
) -> Result<SeriesSource> {
    let mut format: Option<(SourceFormat, PathBuf)> = None;
    let mut firsts = Vec::with_capacity(files.len());
    for f in &files {
        let mut src = open_file(f, options, false)?;
        let this = src.summary().format;
        match &format {
            None => format = Some((this, f.clone())),
            Some((first, path)) if *first != this => {
                return Err(Error::Format {
                    path: f.clone(),
                    offset: 0,
                    message: format!(
                        "this file is a {this} trace but {} is a {first} trace: the files of a series must have one format",
                        path.display()
                    ),
                })
            }
            Some(_) => {}
        }
        if options.sort_by_time {
            let first = src.find_map(|m| m.time.nanos());
            let Some(t) = first else {
                return Err(Error::NoData(format!(
                    "{}: no timestamped record to sort the series by (--sort-by-time)",
                    label(f)
                )));
            };
            firsts.push(t);
        }
    }
    let mut order: Vec<usize> = (0..files.len()).collect();
    if options.sort_by_time {
        // Stable: files starting at the same time keep the order given.
        order.sort_by_key(|&i| firsts[i]);
    }
    let files: Vec<PathBuf> = order.into_iter().map(|i| files[i].clone()).collect();
    let mut summary = IngestSummary::new(
        Path::new(&format!("{} files", files.len())),
        format.map(|f| f.0).unwrap_or_default(),
    );
    summary.source = series_label(&files);
    Ok(SeriesSource {
        files,
        next_file: 0,
        current: None,
        options: options.clone(),
        open_file,
        last_time: None,
        first_of_file: true,
        starts_early: false,
        summary,
        dictionary: options.keep_keys.then(KeyDictionary::new),
    })
}

fn series_label(files: &[PathBuf]) -> String {
    match files {
        [] => "no files".into(),
        [one] => label(one),
        [first, .., last] => format!(
            "{} files ({} ... {})",
            files.len(),
            first.display(),
            last.display()
        ),
    }
}

/// The files of a series, read one after the other as one message stream.
pub struct SeriesSource {
    files: Vec<PathBuf>,
    next_file: usize,
    current: Option<Box<dyn MessageSource>>,
    options: IngestOptions,
    open_file: OpenFile,
    /// Time of the last record, to notice a file that starts before the previous ended.
    last_time: Option<u64>,
    first_of_file: bool,
    starts_early: bool,
    summary: IngestSummary,
    dictionary: Option<KeyDictionary>,
}

impl SeriesSource {
    /// Adds a finished file's counts to the series' and keeps its summary.
    fn close_current(&mut self) {
        let Some(src) = self.current.take() else {
            return;
        };
        if let (Some(all), Some(d)) = (self.dictionary.as_mut(), src.dictionary()) {
            all.merge(d);
        }
        let mut f = src.summary().clone();
        if self.starts_early {
            f.note("the file's first record is earlier than the previous file's last (files out of time order?)");
        }
        let s = &mut self.summary;
        s.records += f.records;
        s.messages += f.messages;
        s.malformed += f.malformed;
        for (k, v) in &f.skipped {
            *s.skipped.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &f.malformed_reasons {
            *s.malformed_reasons.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &f.notes {
            *s.notes.entry(k.clone()).or_default() += v;
        }
        for e in &f.examples {
            if s.examples.len() < super::source::MAX_EXAMPLES {
                s.examples.push(e.clone());
            }
        }
        for r in &f.time_resolutions {
            s.note_resolution(*r);
        }
        if s.key.is_none() {
            s.key.clone_from(&f.key);
        }
        if let Some(d) = &f.damage {
            s.damage = Some(match s.damage.take() {
                None => d.clone(),
                Some(before) => format!("{before}; {d}"),
            });
        }
        s.files.push(f);
    }

    fn open_next(&mut self) -> bool {
        let Some(path) = self.files.get(self.next_file).cloned() else {
            return false;
        };
        self.next_file += 1;
        self.first_of_file = true;
        self.starts_early = false;
        match (self.open_file)(&path, &self.options, false) {
            Ok(src) => self.current = Some(src),
            Err(e) => {
                // Checked when the series was opened: it changed since. What was read
                // stands; the file is reported, the series goes on.
                let mut f = IngestSummary::new(&path, self.summary.format);
                f.damage = Some(format!("{e} (the file could not be read again)"));
                self.summary.damage = f.damage.clone();
                self.summary.files.push(f);
            }
        }
        true
    }
}

impl Iterator for SeriesSource {
    type Item = Message;

    fn next(&mut self) -> Option<Message> {
        loop {
            if let Some(src) = self.current.as_mut() {
                if let Some(m) = src.next() {
                    if let Some(t) = m.time.nanos() {
                        if self.first_of_file {
                            self.starts_early = self.last_time.is_some_and(|last| t < last);
                            self.first_of_file = false;
                        }
                        self.last_time = Some(t);
                    }
                    return Some(m);
                }
                self.close_current();
            }
            if !self.open_next() {
                return None;
            }
        }
    }
}

impl MessageSource for SeriesSource {
    fn summary(&self) -> &IngestSummary {
        &self.summary
    }

    fn dictionary(&self) -> Option<&KeyDictionary> {
        self.dictionary.as_ref()
    }
}
