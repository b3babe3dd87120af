//! How to open a trace: its [`Format`] (given or detected) and the [`IngestOptions`]
//! every opener and the series of files read.

use serde::Serialize;

use super::{csv, packet};
use crate::message::KeyHasher;

/// Trace formats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
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
    pub(crate) fn is_text(self) -> bool {
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
    /// Show reading progress on stderr for long inputs (see [`rbf_foundations::progress`]).
    pub progress: bool,
    /// A series of files is read in the order of their first timestamps, not as given.
    pub sort_by_time: bool,
    /// Decode on the calling thread instead of a thread of its own
    /// ([`readahead`]; the messages are the same either way).
    pub same_thread: bool,
}
