//! How to open a trace: its [`Format`] (given or detected) and the [`IngestOptions`]
//! every opener and the series of files read.

use serde::Serialize;

use super::{csv, packet};
use crate::message::KeyHasher;

/// Trace formats: each one's name is [`Format::name`] (the serde name too) and what it
/// reads is [`Format::describe`] (also the command line's help for `--format`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    #[default]
    Auto,
    Jedi,
    Lines,
    Pcap,
    Csv,
    #[serde(alias = "oracle-general")]
    Binary,
    Lcs,
    Rbfs,
    Zeek,
    NfdumpCsv,
}

impl Format {
    /// Every format.
    pub const ALL: [Format; 10] = [
        Format::Auto,
        Format::Jedi,
        Format::Lines,
        Format::Pcap,
        Format::Csv,
        Format::Binary,
        Format::Lcs,
        Format::Rbfs,
        Format::Zeek,
        Format::NfdumpCsv,
    ];

    /// What the format is, in a sentence without its full stop (the help line).
    pub const fn describe(self) -> &'static str {
        match self {
            Format::Auto => "Detect from the content (magic numbers, then the first line)",
            Format::Jedi => {
                "JEDI / TRAGEN request log: `timestamp,object_id,object_size`, no header"
            }
            Format::Lines => "One key per line",
            Format::Pcap => "pcap or pcapng packet capture (detected by magic number)",
            Format::Csv => "Generic delimited text with a column spec (`--csv-key-column`, ...)",
            Format::Binary => {
                "libCacheSim's oracleGeneral: 24-byte binary request records `{u32 time, u64 id, \
                 u32 size, i64 next}`, little-endian (detected by their next-access links)"
            }
            Format::Lcs => {
                "libCacheSim's lcs trace: a header describing fixed-size binary records (the \
                 1024-byte header with a format string, or the versioned 8 KiB one)"
            }
            Format::Rbfs => "rbf's own compact message stream (written by `rbf ingest`)",
            Format::Zeek => {
                "Zeek conn.log, TSV (with its `#fields` header) or JSON lines: one message per \
                 connection, keyed like capture flows (`--key`)"
            }
            Format::NfdumpCsv => {
                "`nfdump -o csv` output: one message per flow record, keyed like capture flows"
            }
        }
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    /// `Format::ALL` holds every format once: each takes the place an exhaustive match
    /// gives it, so a format added to the enum and not to `ALL` fails here (or does not
    /// compile).
    #[test]
    fn all_holds_every_format_once() {
        let place = |f: Format| match f {
            Format::Auto => 0,
            Format::Jedi => 1,
            Format::Lines => 2,
            Format::Pcap => 3,
            Format::Csv => 4,
            Format::Binary => 5,
            Format::Lcs => 6,
            Format::Rbfs => 7,
            Format::Zeek => 8,
            Format::NfdumpCsv => 9,
        };
        let places: Vec<usize> = Format::ALL.iter().map(|&f| place(f)).collect();
        assert_eq!(places, (0..Format::ALL.len()).collect::<Vec<_>>());
    }
}
