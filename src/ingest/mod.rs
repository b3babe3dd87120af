//! Ingest: traces in the formats users have become one message stream.
//!
//! Every reader is a [`MessageSource`]: an iterator of [`Message`]s plus an
//! [`IngestSummary`] that counts what was read, skipped (by reason) and malformed, and
//! records damage (a truncated or corrupt input yields everything before the damage and
//! a warning saying where). Nothing is skipped silently.
//!
//! A trace is one file, standard input (`-`), or a series of files read as one
//! ([`series`]: several paths, a directory, a glob pattern); captures can be turned
//! into flow records ([`packet::flows::FlowExport`]); zstd- and gzip-compressed inputs
//! are decompressed on the way in ([`compressed`], [`gzip`]); decoding runs on a thread
//! of its own beside the consumer ([`readahead`]).

pub mod binary;
pub mod command;
pub mod compressed;
pub mod count;
pub mod csv;
pub mod flowlog;
pub mod gzip;
pub mod input;
pub mod lcs;
pub mod packet;
pub mod progress;
pub mod rbfs;
pub mod readahead;
pub mod series;
pub mod text;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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

    /// The number of distinct keys the input declares (an lcs header's object
    /// count), for sizing and checking memory before the work; None when unknown.
    fn declared_distinct(&self) -> Option<u64> {
        None
    }

    /// The number of distinct keys estimated from the input's records before they are
    /// read ([`count`]: oracleGeneral's next-access field), for sizing memory up front
    /// like [`MessageSource::declared_distinct`]; None when the input carries none.
    fn estimated_distinct(&self) -> Option<count::DistinctEstimate> {
        None
    }

    /// Appends messages to `out` until it holds `max` or the stream ends (then it
    /// holds fewer). One call per batch: through a `dyn MessageSource` this is one
    /// dynamic call where `next` would be one per message, and readers may
    /// override it with a tighter loop.
    fn fill(&mut self, out: &mut Vec<Message>, max: usize) {
        while out.len() < max {
            match self.next() {
                Some(m) => out.push(m),
                None => return,
            }
        }
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
    /// For a series of files: each file's own summary, in the order read (the
    /// counts above are their totals).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<IngestSummary>,
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

/// Distinct malformed reasons kept; further ones are counted under one entry (a reason
/// may quote a field, and memory must not grow with the trace).
const MAX_REASONS: usize = 32;
const OTHER_REASONS: &str = "other reasons";

impl IngestSummary {
    pub fn new(path: &Path, format: &str) -> Self {
        IngestSummary {
            source: input::label(path),
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
        let reason = if self.malformed_reasons.len() >= MAX_REASONS
            && !self.malformed_reasons.contains_key(reason)
        {
            OTHER_REASONS
        } else {
            reason
        };
        Self::bump(&mut self.malformed_reasons, reason);
        if self.examples.len() < MAX_EXAMPLES && !example.is_empty() {
            self.examples.push(example.to_string());
        }
    }

    pub fn note_resolution(&mut self, units_per_second: u64) {
        if !self.time_resolutions.contains(&units_per_second) {
            self.time_resolutions.push(units_per_second);
            self.time_resolutions.sort_unstable();
        }
    }

    /// The error for an input that yielded no message: how many records were read and
    /// why each was rejected or skipped.
    pub fn require_data(&self) -> Result<()> {
        if self.messages > 0 {
            return Ok(());
        }
        let counted = |m: &BTreeMap<String, u64>| -> String {
            m.iter()
                .take(4)
                .map(|(r, n)| format!("{n} × {r}"))
                .collect::<Vec<_>>()
                .join("; ")
        };
        let mut why: Vec<String> = Vec::new();
        if self.malformed > 0 {
            why.push(format!(
                "{} malformed ({}){}",
                self.malformed,
                counted(&self.malformed_reasons),
                self.examples
                    .first()
                    .map_or(String::new(), |e| format!("; first: {e}"))
            ));
        }
        let skipped: u64 = self.skipped.values().sum();
        if skipped > 0 {
            why.push(format!("{skipped} skipped ({})", counted(&self.skipped)));
        }
        if let Some(d) = &self.damage {
            why.push(format!("damage: {d}"));
        }
        Err(Error::NoData(format!(
            "{}: no usable record in this {} input: {} record(s) read{}{}",
            self.source,
            self.format,
            self.records,
            if why.is_empty() { "" } else { "; " },
            why.join("; ")
        )))
    }

    /// What a command tells the user on stderr: each warning (damage, malformed
    /// records: per file, since they say where), then one line with everything else
    /// added up by reason ([`IngestSummary::digest`]); the per-file detail stays in the
    /// summary itself (`--json`, report.md).
    pub fn console(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .warnings()
            .into_iter()
            .filter(|w| w.starts_with("warning:"))
            .collect();
        out.extend(
            self.digest()
                .map(|d| format!("note: read {}: {d}", self.source)),
        );
        out
    }

    /// One line for the whole input (a series' files added up): how many records were
    /// read and, by reason, what was skipped, malformed or worth a note, with damage
    /// named; None when there is nothing to say. The per-file lines are
    /// [`IngestSummary::warnings`].
    pub fn digest(&self) -> Option<String> {
        let mut skipped: BTreeMap<&str, u64> = BTreeMap::new();
        let mut malformed: BTreeMap<&str, u64> = BTreeMap::new();
        let mut notes: BTreeMap<&str, u64> = BTreeMap::new();
        let mut damaged = Vec::new();
        let parts: Vec<&IngestSummary> = if self.files.is_empty() {
            vec![self]
        } else {
            self.files.iter().collect()
        };
        for f in &parts {
            for (m, from) in [
                (&mut skipped, &f.skipped),
                (&mut malformed, &f.malformed_reasons),
                (&mut notes, &f.notes),
            ] {
                for (reason, n) in from {
                    *m.entry(reason.as_str()).or_default() += n;
                }
            }
            if f.damage.is_some() {
                damaged.push(f.source.as_str());
            }
        }
        if skipped.is_empty() && malformed.is_empty() && notes.is_empty() && damaged.is_empty() {
            return None;
        }
        let list = reasons_by_count;
        let total = |m: &BTreeMap<&str, u64>| m.values().sum::<u64>();
        let files = if self.files.is_empty() {
            String::new()
        } else {
            format!("{} files, ", self.files.len())
        };
        let mut line = format!("{files}{} records", self.records);
        if !skipped.is_empty() {
            line.push_str(&format!(
                "; {} skipped ({})",
                total(&skipped),
                list(&skipped)
            ));
        }
        if !malformed.is_empty() {
            line.push_str(&format!(
                "; {} malformed ({})",
                total(&malformed),
                list(&malformed)
            ));
        }
        if !notes.is_empty() {
            line.push_str(&format!("; notes: {}", list(&notes)));
        }
        if !damaged.is_empty() {
            line.push_str(&format!("; damaged: {}", damaged.join(", ")));
        }
        Some(line)
    }

    /// Human-readable warnings: damage, malformed records, skips. A series gives its
    /// files' warnings, each naming its file.
    pub fn warnings(&self) -> Vec<String> {
        if !self.files.is_empty() {
            return self
                .files
                .iter()
                .flat_map(IngestSummary::warnings)
                .collect();
        }
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

/// Reasons with their counts, the most frequent first (ties by name): "3 bad, 1 odd".
fn reasons_by_count(m: &BTreeMap<&str, u64>) -> String {
    let mut v: Vec<(&&str, &u64)> = m.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    v.iter()
        .map(|(r, n)| format!("{n} {r}"))
        .collect::<Vec<_>>()
        .join(", ")
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
    /// libCacheSim's oracleGeneral: 24-byte binary request records `{u32 time, u64 id,
    /// u32 size, i64 next}`, little-endian (detected by their next-access links).
    #[value(alias = "oracle-general")]
    #[serde(alias = "oracle-general")]
    Binary,
    /// libCacheSim's lcs trace: a header describing fixed-size binary records (the
    /// 1024-byte header with a format string, or the versioned 8 KiB one).
    Lcs,
    /// rbf's own compact message stream (written by `rbf ingest`).
    Rbfs,
    /// Zeek conn.log, TSV (with its `#fields` header) or JSON lines: one message per
    /// connection, keyed like capture flows (`--key`).
    Zeek,
    /// `nfdump -o csv` output: one message per flow record, keyed like capture flows.
    NfdumpCsv,
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
            Format::Lcs => "lcs",
            Format::Rbfs => "rbfs",
            Format::Zeek => "zeek",
            Format::NfdumpCsv => "nfdump-csv",
        }
    }

    /// Text formats (a UTF-8 byte order mark at their start is skipped).
    fn is_text(self) -> bool {
        matches!(
            self,
            Format::Jedi | Format::Lines | Format::Csv | Format::Zeek | Format::NfdumpCsv
        )
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
    /// A series of files is read in the order of their first timestamps, not as given.
    pub sort_by_time: bool,
    /// Decode on the calling thread instead of a thread of its own
    /// ([`readahead`]; the messages are the same either way).
    pub same_thread: bool,
}

/// Opens a trace as a message stream: one file, `-` (standard input), a directory or
/// a glob pattern (a series of files read as one).
pub fn open(path: &Path, options: &IngestOptions) -> Result<Box<dyn MessageSource>> {
    open_inputs(std::slice::from_ref(&path.to_path_buf()), options)
}

/// Opens the files `inputs` name (see [`series::expand`]) as one message stream, as
/// flow records when `options.flows` is set. Unless `options.same_thread`, the
/// stream is decoded on a thread of its own ([`readahead`]); flow records are made
/// on the consumer's side of it, so that decoding the packets and accounting them in
/// the flow table, the two costs of `--flows`, run side by side.
pub fn open_inputs(inputs: &[PathBuf], options: &IngestOptions) -> Result<Box<dyn MessageSource>> {
    let source = open_decoder(inputs, options)?;
    if let Some(timeouts) = options.flows {
        flows_apply(source.as_ref())?;
        let packets = read_ahead(source, options);
        return Ok(Box::new(packet::flows::FlowExport::new(packets, timeouts)));
    }
    Ok(read_ahead(source, options))
}

/// `source` on a decoding thread of its own unless `options.same_thread`.
fn read_ahead(source: Box<dyn MessageSource>, options: &IngestOptions) -> Box<dyn MessageSource> {
    if options.same_thread {
        source
    } else {
        readahead::ReadAhead::spawn(source)
    }
}

/// [`open_inputs`]'s messages (packets, not flows) on the calling thread.
fn open_decoder(inputs: &[PathBuf], options: &IngestOptions) -> Result<Box<dyn MessageSource>> {
    let files = series::expand(inputs)?;
    Ok(match files.as_slice() {
        [] => return Err(Error::invalid("no trace file given")),
        [one] => open_file(one, options, true)?,
        _ => Box::new(series::open(files, options)?),
    })
}

/// `--flows` applies to packet captures only: the error says why not otherwise.
fn flows_apply(source: &dyn MessageSource) -> Result<()> {
    let format = source.summary().format.clone();
    if format != Format::Pcap.name() {
        let flows_already = format == Format::Zeek.name() || format == Format::NfdumpCsv.name();
        return Err(Error::config(
            "flows",
            format!(
                "applies to packet captures (pcap, pcapng), whose packets it aggregates into flow records; {} is a {format} trace{}",
                source.summary().source,
                if flows_already {
                    " whose records are flows already: read it without --flows"
                } else {
                    ""
                }
            ),
        ));
    }
    Ok(())
}

/// Opens one file (or standard input) as a message stream of its records; with
/// `count`, a plain oracleGeneral file has its distinct objects estimated
/// ([`MessageSource::estimated_distinct`]).
pub(crate) fn open_file(
    path: &Path,
    options: &IngestOptions,
    count: bool,
) -> Result<Box<dyn MessageSource>> {
    let mut inp = input::open_with_progress(path, options.progress)?;
    let damage = inp.damage.take();
    let count = count && damage.is_none() && !input::is_stdin(path);
    let opened = (|| {
        let format = match options.format {
            Format::Auto => detect(path, &mut inp)?,
            f => f,
        };
        if format.is_text() {
            let head = input::peek(&mut inp, 4096).map_err(|e| Error::io(path, e))?;
            refuse_binary(path, &head, format, inp.compression)?;
            input::skip_bom(&mut inp).map_err(|e| Error::io(path, e))?;
        }
        open_format(path, inp.reader, format, options, count)
    })();
    match (opened, damage) {
        (Ok(source), None) => Ok(source),
        (Ok(source), Some(slot)) => Ok(Box::new(compressed::Decompressed::new(source, slot))),
        // Nothing could be decompressed before the damage: say so, not just that the
        // (empty or cut) decompressed start is no trace.
        (Err(e), Some(slot)) => match compressed::take_damage(&slot) {
            Some(d) => Err(Error::Format {
                path: path.to_path_buf(),
                offset: 0,
                message: format!("{d}: too little could be decompressed to read ({e})"),
            }),
            None => Err(e),
        },
        (Err(e), None) => Err(e),
    }
}

fn open_format(
    path: &Path,
    reader: Box<dyn std::io::BufRead + Send>,
    format: Format,
    options: &IngestOptions,
    count: bool,
) -> Result<Box<dyn MessageSource>> {
    let p = path.to_path_buf();
    let (hasher, keep) = (options.hasher, options.keep_keys);
    Ok(match format {
        Format::Jedi | Format::Lines | Format::Csv => text_source(p, reader, format, options)?,
        Format::Pcap => Box::new(packet::capture::PcapSource::new(
            p,
            Box::new(reader),
            packet::capture::CaptureOptions {
                key: options.key,
                hasher,
                keep_keys: keep,
            },
        )?),
        Format::Zeek => flow_log(
            p,
            reader,
            flowlog::zeek::ZeekParser::new(options.key),
            options,
        ),
        Format::NfdumpCsv => flow_log(
            p,
            reader,
            flowlog::nfdump::NfdumpParser::new(options.key),
            options,
        ),
        Format::Binary => {
            let source = binary::BinarySource::new(p, reader, hasher, keep);
            Box::new(if count { source.estimating() } else { source })
        }
        Format::Lcs => lcs_source(p, reader, options)?,
        Format::Rbfs => Box::new(rbfs::RbfsSource::open(p, Box::new(reader), hasher)?),
        Format::Auto => unreachable!("detect() never returns Auto"),
    })
}

/// A line-oriented text source: JEDI, one key a line, or CSV.
fn text_source(
    p: PathBuf,
    reader: Box<dyn std::io::BufRead + Send>,
    format: Format,
    options: &IngestOptions,
) -> Result<Box<dyn MessageSource>> {
    let (hasher, keep) = (options.hasher, options.keep_keys);
    Ok(match format {
        Format::Jedi => Box::new(text::TextSource::new(
            p,
            reader,
            text::JediParser::default(),
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
        // Format::Csv, the only other format `open_format` passes here.
        _ => Box::new(text::TextSource::new(
            p,
            reader,
            csv::CsvParser::new(options.csv.clone())?,
            hasher,
            keep,
        )),
    })
}

/// An lcs trace: its header read and checked, then fixed-size records of its layout,
/// announcing the header's request and object counts.
fn lcs_source(
    p: PathBuf,
    mut reader: Box<dyn std::io::BufRead + Send>,
    options: &IngestOptions,
) -> Result<Box<dyn MessageSource>> {
    let header = lcs::read_header(&p, &mut reader)?;
    Ok(Box::new(
        binary::BinarySource::with_layout(
            p,
            reader,
            options.hasher,
            options.keep_keys,
            header.layout,
            Format::Lcs.name(),
            header.len as u64,
        )
        .announce(header.requests, header.objects),
    ))
}

/// A flow log's text source, its summary naming the flow key.
fn flow_log<P: text::LineParser + 'static>(
    path: PathBuf,
    reader: Box<dyn std::io::BufRead + Send>,
    parser: P,
    options: &IngestOptions,
) -> Box<dyn MessageSource> {
    Box::new(
        text::TextSource::new(path, reader, parser, options.hasher, options.keep_keys)
            .with_key(Some(options.key.describe())),
    )
}

/// Magic numbers of compression formats, to name them where the data is not a trace.
/// zstd and gzip are decompressed when the input is opened ([`input::open`]): their
/// magic seen after that is a compression inside another (e.g. `.gz.zst`).
const COMPRESSIONS: [(&[u8], &str, &str); 5] = [
    (&[0x1F, 0x8B], "gzip", "gzip -dc"),
    (&[0xFD, b'7', b'z', b'X', b'Z', 0x00], "xz", "xz -dc"),
    (b"BZh", "bzip2", "bzip2 -dc"),
    (&[0x04, 0x22, 0x4D, 0x18], "lz4", "lz4 -dc"),
    (&[0x28, 0xB5, 0x2F, 0xFD], "zstd", "zstd -dc"),
];

/// What to tell the user when `head` (the input's first bytes, after the compression
/// `outer` rbf removed) starts with a compression's magic number: which one, and what
/// to do about it. None when it does not.
fn compression_hint(head: &[u8], outer: Option<&str>) -> Option<String> {
    let (_, name, tool) = COMPRESSIONS.iter().find(|(m, _, _)| head.starts_with(m))?;
    Some(match outer {
        Some(outer) => format!(
            "{name}-compressed data inside {outer} compression (nested compression): rbf removes one layer of zstd or gzip; decompress both (`{outer} -dc FILE | {tool} | rbf ... -`)"
        ),
        None => format!(
            "{name}-compressed, which rbf does not decompress (it reads zstd and gzip): decompress it first (`{tool} FILE | rbf ... -`, or `{tool} FILE > FILE2`)"
        ),
    })
}

/// Refuses to read binary data as a text format (`--format jedi` on a compressed file
/// would otherwise turn its bytes into thousands of malformed "lines"): a head whose
/// bytes are more than a quarter control characters or invalid UTF-8 is binary, where
/// a text trace with a few damaged bytes is still read (and its bad lines counted).
fn refuse_binary(path: &Path, head: &[u8], format: Format, outer: Option<&str>) -> Result<()> {
    if head.len() < 16 {
        return Ok(());
    }
    let mut odd = 0usize;
    for chunk in head.utf8_chunks() {
        odd += chunk.invalid().len();
        odd += chunk
            .valid()
            .bytes()
            .filter(|&b| (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r')) || b == 0x7F)
            .count();
    }
    if odd * 4 <= head.len() {
        return Ok(());
    }
    let hint = compression_hint(head, outer).unwrap_or_else(|| {
        "compressed or binary data; rbf decompresses zstd and gzip by itself, other compressed files must be decompressed first".to_string()
    });
    Err(Error::Format {
        path: path.to_path_buf(),
        offset: 0,
        message: format!(
            "binary data, not a {} text trace: {hint}; or pass the --format of a binary trace (pcap, binary, rbfs)",
            format.name()
        ),
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
    if head.starts_with(&lcs::MAGIC) {
        return Ok(Format::Lcs);
    }
    let text = head.strip_prefix(&input::UTF8_BOM[..]).unwrap_or(&head);
    let first_line = text.split(|&b| b == b'\n').next().unwrap_or(&[]);
    let first_line = first_line.strip_suffix(b"\r").unwrap_or(first_line);
    if flowlog::zeek::ZeekParser::detect(first_line) {
        return Ok(Format::Zeek);
    }
    if flowlog::nfdump::NfdumpParser::detect(first_line) {
        return Ok(Format::NfdumpCsv);
    }
    if text::looks_like_jedi(first_line) {
        return Ok(Format::Jedi);
    }
    // A JEDI log with a header line: the header is skipped by the reader.
    let mut lines = text.split(|&b| b == b'\n');
    if let (Some(first), Some(second)) = (lines.next(), lines.next()) {
        if text::is_jedi_header(first) && text::looks_like_jedi(second) {
            return Ok(Format::Jedi);
        }
    }
    if lcs::looks_like_oracle_general(&head) {
        return Ok(Format::Binary);
    }
    if let Some(hint) = compression_hint(&head, inp.compression) {
        return Err(Error::Format {
            path: path.to_path_buf(),
            offset: 0,
            message: format!("not a trace: {hint}"),
        });
    }
    Err(Error::Format {
        path: path.to_path_buf(),
        offset: 0,
        message: format!(
            "not a trace this reader recognises (first bytes {:?}); expected a pcap/pcapng capture, an .rbfs stream, a libCacheSim lcs or oracleGeneral trace, a Zeek conn.log (TSV or JSON), `nfdump -o csv` output or a JEDI request log (`timestamp,object_id,object_size`); pass --format to choose one of: pcap, jedi, csv, lines, binary, lcs, rbfs, zeek, nfdump-csv",
            String::from_utf8_lossy(&first_line[..first_line.len().min(48)])
        ),
    })
}
