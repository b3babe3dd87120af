//! The trace-reading flags every command that takes a trace flattens in (`replay`,
//! `ingest`, `fit`, ...): format, flow key, flow export timeouts, CSV column spec.

use clap::Args;

use rbf::ingest::csv::{parse_delimiter, CsvSpec, TimeUnit};
use rbf::ingest::packet::flows::{parse_duration_ns, FlowTimeouts};
use rbf::ingest::packet::key::{FlowKeyKind, KeySpec};
use rbf::ingest::{self, Format, IngestOptions, MessageSource};
use rbf::message::KeyHasher;
use rbf::{Error, Result};

#[derive(Args, Debug, Clone)]
pub struct TraceArgs {
    /// Trace format (auto: detected from the content, not the file name).
    #[arg(long, value_enum, default_value_t = Format::Auto)]
    pub format: Format,
    /// Captures: the header fields that identify a message.
    #[arg(long, value_enum, default_value_t = FlowKeyKind::FiveTuple)]
    pub key: FlowKeyKind,
    /// Captures: IPv4 prefix length for the prefix keys.
    #[arg(long, default_value_t = 24)]
    pub prefix_v4: u8,
    /// Captures: IPv6 prefix length for the prefix keys.
    #[arg(long, default_value_t = 48)]
    pub prefix_v6: u8,
    /// Captures: one message per exported flow record instead of one per packet (flow
    /// logs, Zeek conn.log and nfdump CSV, are flow records already).
    #[arg(long)]
    pub flows: bool,
    /// Flow export: a flow idle this long is exported (e.g. 15s, 500ms, 2m).
    #[arg(long, default_value = "15s", value_parser = parse_duration_ns)]
    pub inactive_timeout: u64,
    /// Flow export: a flow lasting this long is exported and restarted (e.g. 30m, 1h).
    #[arg(long, default_value = "30m", value_parser = parse_duration_ns)]
    pub active_timeout: u64,
    /// CSV: 1-based column of the key.
    #[arg(long, default_value_t = 1)]
    pub csv_key_column: usize,
    /// CSV: 1-based column of the timestamp (none by default).
    #[arg(long)]
    pub csv_time_column: Option<usize>,
    /// CSV: unit of the time column.
    #[arg(long, value_enum, default_value_t = TimeUnit::S)]
    pub csv_time_unit: TimeUnit,
    /// CSV: field delimiter (one character, or tab, space, comma, semicolon, pipe).
    #[arg(long, default_value = ",")]
    pub csv_delimiter: String,
    /// CSV: the first line is a header.
    #[arg(long)]
    pub csv_header: bool,
    /// A series of files (several paths, a directory, a glob) is read in the order of
    /// each file's first timestamp instead of the order given (names sorted).
    #[arg(long)]
    pub sort_by_time: bool,
}

impl TraceArgs {
    pub fn options(&self) -> Result<IngestOptions> {
        if self.active_timeout < self.inactive_timeout {
            return Err(Error::config(
                "active-timeout",
                "must be at least the inactive timeout",
            ));
        }
        Ok(IngestOptions {
            format: self.format,
            hasher: KeyHasher::default(),
            keep_keys: false,
            key: KeySpec::new(self.key, self.prefix_v4, self.prefix_v6)?,
            flows: self.flows.then_some(FlowTimeouts {
                inactive_ns: self.inactive_timeout,
                active_ns: self.active_timeout,
            }),
            csv: CsvSpec {
                key_column: self.csv_key_column,
                time_column: self.csv_time_column,
                time_unit: self.csv_time_unit,
                delimiter: parse_delimiter(&self.csv_delimiter)?,
                header: self.csv_header,
            },
            progress: true,
            sort_by_time: self.sort_by_time,
        })
    }

    /// Opens the trace the positional arguments name, with these options.
    pub fn open(&self, inputs: &[std::path::PathBuf]) -> Result<Box<dyn MessageSource>> {
        ingest::open_inputs(inputs, &self.options()?)
    }
}
