//! Ingest: traces in the formats users have become one message stream.
//!
//! Every reader is a [`MessageSource`]: an iterator of [`Message`]s plus an
//! [`IngestSummary`] that counts what was read, skipped (by reason) and malformed, and
//! records damage (a truncated or corrupt input yields everything before the damage and
//! a warning saying where). Nothing is skipped silently.

pub mod binary;
pub mod csv;
pub mod input;
pub mod packet;
pub mod progress;
pub mod rbfs;
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
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(default)]
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
    /// Malformed records by reason (they are also counted in `malformed`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub malformed_reasons: BTreeMap<String, u64>,
    /// Things worth knowing that did not stop a record from becoming a message
    /// (a packet truncated by the snap length still has its addresses), by kind.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub notes: BTreeMap<String, u64>,
    /// Timestamp resolutions of the input in units per second (captures: one per
    /// interface kind, e.g. 1000000 for microseconds, 1000000000 for nanoseconds).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub time_resolutions: Vec<u64>,
    /// The flow key used (captures only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Flow-record export (captures read with `--flows`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flows: Option<FlowSummary>,
    /// For a `.rbfs` stream: the summary of the source it was made from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<Box<IngestSummary>>,
}

/// What the flow table did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct FlowSummary {
    pub inactive_timeout_s: f64,
    pub active_timeout_s: f64,
    /// Flow records exported (= messages).
    pub records: u64,
    /// Most flows live at once: what the table's memory was bounded by.
    pub max_live_flows: u64,
}

/// Malformed records quoted in a summary (all are counted).
pub const MAX_EXAMPLES: usize = 10;

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

    fn bump(map: &mut BTreeMap<String, u64>, reason: &str) {
        if let Some(n) = map.get_mut(reason) {
            *n += 1;
        } else {
            map.insert(reason.to_string(), 1);
        }
    }

    pub fn note(&mut self, what: &str) {
        Self::bump(&mut self.notes, what);
    }

    /// Counts a malformed record by `reason`, quoting the first few as `example`
    /// (which says where, e.g. file and byte offset, and what was wrong).
    pub fn malformed_at(&mut self, reason: &str, example: &str) {
        self.malformed += 1;
        Self::bump(&mut self.malformed_reasons, reason);
        if self.examples.len() < MAX_EXAMPLES {
            self.examples.push(example.to_string());
        }
    }

    pub fn note_resolution(&mut self, units_per_second: u64) {
        if !self.time_resolutions.contains(&units_per_second) {
            self.time_resolutions.push(units_per_second);
            self.time_resolutions.sort_unstable();
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
        for (reason, n) in &self.malformed_reasons {
            w.push(format!("note: {}: {n} malformed: {reason}", self.source));
        }
        for (reason, n) in &self.skipped {
            w.push(format!(
                "note: {}: {n} record(s) skipped: {reason}",
                self.source
            ));
        }
        for (what, n) in &self.notes {
            w.push(format!("note: {}: {n} × {what}", self.source));
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
    /// pcap or pcapng packet capture (detected by magic number).
    Pcap,
    /// Generic delimited text with a column spec (`--csv-key-column`, ...).
    Csv,
    /// 24-byte binary request records `{u32 time, u64 id, u32 size, i64 next}`, little-endian.
    Binary,
    /// rbf's own compact message stream (written by `rbf ingest`).
    Rbfs,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Jedi => "jedi",
            Format::Lines => "lines",
            Format::Pcap => "pcap",
            Format::Csv => "csv",
            Format::Binary => "binary",
            Format::Rbfs => "rbfs",
        }
    }
}

/// How to open a trace.
#[derive(Clone, Debug, Default)]
pub struct IngestOptions {
    pub format: Format,
    pub hasher: KeyHasher,
    /// Keep the original key bytes of every distinct key (costs memory).
    pub keep_keys: bool,
    /// Captures: which header fields make the key.
    pub key: packet::key::KeySpec,
    /// Captures: `Some` for one message per exported flow record.
    pub flows: Option<packet::flows::FlowTimeouts>,
    /// Delimited text: which columns hold what.
    pub csv: csv::CsvSpec,
    /// Show reading progress on stderr for long inputs (see [`crate::progress`]).
    pub progress: bool,
}

/// Opens a trace as a message stream.
pub fn open(path: &Path, options: &IngestOptions) -> Result<Box<dyn MessageSource>> {
    let mut inp = input::open_with_progress(path, options.progress)?;
    let format = match options.format {
        Format::Auto => detect(path, &mut inp)?,
        f => f,
    };
    let reader = inp.reader;
    let p = path.to_path_buf();
    let (hasher, keep) = (options.hasher, options.keep_keys);
    Ok(match format {
        Format::Jedi => Box::new(text::TextSource::new(
            p,
            reader,
            text::JediParser,
            hasher,
            keep,
        )),
        Format::Lines => Box::new(text::TextSource::new(
            p,
            reader,
            text::LinesParser,
            hasher,
            keep,
        )),
        Format::Csv => Box::new(text::TextSource::new(
            p,
            reader,
            csv::CsvParser::new(options.csv.clone())?,
            hasher,
            keep,
        )),
        Format::Pcap => Box::new(packet::capture::PcapSource::new(
            p,
            Box::new(reader),
            packet::capture::CaptureOptions {
                key: options.key,
                flows: options.flows,
                hasher,
                keep_keys: keep,
            },
        )?),
        Format::Binary => Box::new(binary::BinarySource::new(p, reader, hasher, keep)),
        Format::Rbfs => Box::new(rbfs::RbfsSource::open(p, Box::new(reader), hasher)?),
        Format::Auto => unreachable!("detect() never returns Auto"),
    })
}

/// pcap magic numbers (micro/nanosecond, both byte orders) and the pcapng section header.
const PCAP_MAGICS: [[u8; 4]; 5] = [
    [0xD4, 0xC3, 0xB2, 0xA1],
    [0xA1, 0xB2, 0xC3, 0xD4],
    [0x4D, 0x3C, 0xB2, 0xA1],
    [0xA1, 0xB2, 0x3C, 0x4D],
    [0x0A, 0x0D, 0x0D, 0x0A],
];

fn detect(path: &Path, inp: &mut input::Input) -> Result<Format> {
    let head = input::peek(inp, 4096).map_err(|e| Error::io(path, e))?;
    if head.is_empty() {
        return Err(Error::Format {
            path: path.to_path_buf(),
            offset: 0,
            message: "empty input: nothing to detect a format from".into(),
        });
    }
    if head.starts_with(&rbfs::MAGIC) {
        return Ok(Format::Rbfs);
    }
    if PCAP_MAGICS.iter().any(|m| head.starts_with(m)) {
        return Ok(Format::Pcap);
    }
    let first_line = head.split(|&b| b == b'\n').next().unwrap_or(&[]);
    if text::looks_like_jedi(first_line) {
        return Ok(Format::Jedi);
    }
    Err(Error::Format {
        path: path.to_path_buf(),
        offset: 0,
        message: format!(
            "cannot detect the trace format (first bytes {:?}); expected a pcap/pcapng capture, an .rbfs stream or a JEDI request log (`timestamp,object_id,object_size`); pass --format to choose one of: pcap, jedi, csv, lines, binary, rbfs",
            String::from_utf8_lossy(&first_line[..first_line.len().min(60)])
        ),
    })
}
