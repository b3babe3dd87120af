//! Ingest: traces in the formats users have become one message stream.
//!
//! Every reader is a [`MessageSource`]: an iterator of [`Message`]s plus an
//! [`IngestSummary`] that counts what was read, skipped (by reason) and malformed, and
//! records damage (a truncated or corrupt input yields everything before the damage and
//! a warning saying where). Nothing is skipped silently.

pub mod input;
pub mod text;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::message::{KeyDictionary, KeyHasher, Message};

/// A stream of messages from one input.
pub trait MessageSource: Iterator<Item = Message> + Send {
    fn summary(&self) -> &IngestSummary;

    /// Original key bytes per key, when the source was opened with `keep_keys`.
    fn dictionary(&self) -> Option<&KeyDictionary> {
        None
    }
}

/// What a reader did with its input.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct IngestSummary {
    pub source: String,
    pub format: String,
    /// Records read (lines, packets, binary records).
    pub records: u64,
    /// Messages produced.
    pub messages: u64,
    /// Records that could not be parsed.
    pub malformed: u64,
    /// Records deliberately not turned into messages, by reason.
    pub skipped: BTreeMap<String, u64>,
    /// The first few malformed records, with their location.
    pub examples: Vec<String>,
    /// Damage that ended the input early (truncation, corruption, read error).
    pub damage: Option<String>,
}

impl IngestSummary {
    pub fn new(path: &Path, format: &str) -> Self {
        IngestSummary {
            source: path.display().to_string(),
            format: format.to_string(),
            ..Default::default()
        }
    }

    pub fn skip(&mut self, reason: &str) {
        if let Some(n) = self.skipped.get_mut(reason) {
            *n += 1;
        } else {
            self.skipped.insert(reason.to_string(), 1);
        }
    }

    /// Human-readable warnings: damage, malformed records, skips.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if let Some(d) = &self.damage {
            w.push(format!("warning: {d}"));
        }
        if self.malformed > 0 {
            w.push(format!(
                "warning: {}: {} malformed record(s) ignored (of {}); first: {}",
                self.source,
                self.malformed,
                self.records,
                self.examples.first().map_or("", String::as_str)
            ));
        }
        for (reason, n) in &self.skipped {
            w.push(format!(
                "note: {}: {n} record(s) skipped: {reason}",
                self.source
            ));
        }
        w
    }
}

/// Trace formats.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Detect from the content (magic numbers, then the first line).
    #[default]
    Auto,
    /// JEDI / TRAGEN request log: `timestamp,object_id,object_size`, no header.
    Jedi,
    /// One key per line.
    Lines,
}

/// How to open a trace.
#[derive(Clone, Debug, Default)]
pub struct IngestOptions {
    pub format: Format,
    pub hasher: KeyHasher,
    /// Keep the original key bytes of every distinct key (costs memory).
    pub keep_keys: bool,
}

/// Opens a trace as a message stream.
pub fn open(path: &Path, options: &IngestOptions) -> Result<Box<dyn MessageSource>> {
    let mut inp = input::open(path)?;
    let format = match options.format {
        Format::Auto => detect(path, &mut inp)?,
        f => f,
    };
    let reader = inp.reader;
    let p = path.to_path_buf();
    Ok(match format {
        Format::Jedi => Box::new(text::TextSource::new(
            p,
            reader,
            text::JediParser,
            options.hasher,
            options.keep_keys,
        )),
        Format::Lines => Box::new(text::TextSource::new(
            p,
            reader,
            text::LinesParser,
            options.hasher,
            options.keep_keys,
        )),
        Format::Auto => unreachable!("detect() never returns Auto"),
    })
}

fn detect(path: &Path, inp: &mut input::Input) -> Result<Format> {
    let head = input::peek(inp, 4096).map_err(|e| Error::io(path, e))?;
    if head.is_empty() {
        return Err(Error::Format {
            path: path.to_path_buf(),
            offset: 0,
            message: "empty input: nothing to detect a format from".into(),
        });
    }
    let first_line = head.split(|&b| b == b'\n').next().unwrap_or(&[]);
    if text::looks_like_jedi(first_line) {
        return Ok(Format::Jedi);
    }
    Err(Error::Format {
        path: path.to_path_buf(),
        offset: 0,
        message: format!(
            "cannot detect the trace format (first line {:?}); expected a JEDI request log (`timestamp,object_id,object_size`); pass --format to choose one of: jedi, lines",
            String::from_utf8_lossy(&first_line[..first_line.len().min(60)])
        ),
    })
}
