//! What every reader of [`super`] shares: the [`MessageSource`] a reader is, and the
//! [`IngestSummary`] it keeps (what was read, skipped by reason, malformed, damaged).
//! Readers import these from here, never from their parent, which only opens and
//! dispatches ([`super::open`]).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::count;
use super::Format;
use crate::message::{KeyDictionary, Message};
use rbf_foundations::error::{Error, Result};

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

/// Which reader made a summary: one of a trace format's, keys handed over in memory
/// (the Python package's arrays), or none (a summary made for an input that could not be
/// opened). Written as its name (`pcap`, `memory`, an empty string for none), so that
/// outputs and journals read the same as they did when it was a string.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SourceFormat {
    #[default]
    Unknown,
    Trace(Format),
    Memory,
}

impl SourceFormat {
    /// Every named kind: the trace formats, then keys in memory.
    fn named() -> impl Iterator<Item = SourceFormat> {
        Format::ALL
            .into_iter()
            .map(SourceFormat::Trace)
            .chain([SourceFormat::Memory])
    }

    pub fn name(self) -> &'static str {
        match self {
            SourceFormat::Unknown => "",
            SourceFormat::Trace(f) => f.name(),
            SourceFormat::Memory => "memory",
        }
    }

    /// The kind of that name (the empty name: none); None for a name no reader uses.
    pub fn from_name(name: &str) -> Option<SourceFormat> {
        if name.is_empty() {
            return Some(SourceFormat::Unknown);
        }
        SourceFormat::named().find(|k| k.name() == name)
    }
}

impl std::fmt::Display for SourceFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for SourceFormat {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for SourceFormat {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        SourceFormat::from_name(&name).ok_or_else(|| {
            let known: Vec<&str> = SourceFormat::named().map(SourceFormat::name).collect();
            serde::de::Error::custom(format!(
                "unknown input format `{name}` (one of {}, or empty)",
                known.join(", ")
            ))
        })
    }
}

/// What a reader did with its input.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(default)]
pub struct IngestSummary {
    pub source: String,
    pub format: SourceFormat,
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
    pub fn new(path: &Path, format: SourceFormat) -> Self {
        IngestSummary {
            source: label(path),
            format,
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

/// The path that means standard input.
pub const STDIN: &str = "-";

/// Whether `path` means standard input.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == STDIN
}

/// How an input is named in summaries and messages.
pub fn label(path: &Path) -> String {
    if is_stdin(path) {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind is written as its name and read back from it, the names are the
    /// formats' own (as `--format` spells them), and a name no reader uses is an error
    /// that lists the names.
    #[test]
    fn a_source_format_is_written_as_its_name() {
        let mut names = Vec::new();
        for k in SourceFormat::named().chain([SourceFormat::Unknown]) {
            let json = serde_json::to_string(&k).expect("written");
            assert_eq!(json, format!("\"{}\"", k.name()));
            let back: SourceFormat = serde_json::from_str(&json).expect("read");
            assert_eq!(back, k);
            assert_eq!(k.to_string(), k.name());
            names.push(k.name());
        }
        assert_eq!(SourceFormat::Trace(Format::Pcap).name(), "pcap");
        assert_eq!(SourceFormat::Trace(Format::NfdumpCsv).name(), "nfdump-csv");
        assert_eq!(SourceFormat::Memory.name(), "memory");
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Format::ALL.len() + 2, "{names:?}");
        let e = serde_json::from_str::<SourceFormat>("\"pcapng\"").expect_err("unknown");
        assert!(
            e.to_string().contains("unknown input format `pcapng`"),
            "{e}"
        );
        assert!(e.to_string().contains("nfdump-csv, memory"), "{e}");
        let s: IngestSummary =
            serde_json::from_str(r#"{"source":"a.pcap","format":"pcap"}"#).expect("a summary");
        assert_eq!(s.format, SourceFormat::Trace(Format::Pcap));
    }
}
