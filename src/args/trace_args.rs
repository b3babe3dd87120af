//! The trace-reading flags every command that takes a trace flattens in (`replay`,
//! `ingest`, `fit`, ...): format, flow key, flow export timeouts, CSV column spec.

use clap::Args;

use rbf_data::ingest::csv::{parse_delimiter, CsvSpec, TimeUnit};
use rbf_data::ingest::packet::flows::{parse_duration_ns, FlowTimeouts};
use rbf_data::ingest::packet::key::{FlowKeyKind, KeySpec};
use rbf_data::ingest::{self, Format, IngestOptions, MessageSource};
use rbf_data::message::KeyHasher;
use rbf_foundations::error::{Error, Problem, Result};

use super::value_enums::{parser, FlowKeyArg, FormatArg, TimeUnitArg};

#[derive(Args, Debug, Clone)]
pub struct TraceArgs {
    /// Trace format (auto: detected from the content, not the file name).
    #[arg(long, value_parser = parser::<FormatArg, Format>(), default_value = "auto")]
    pub format: Format,
    /// Captures: the header fields that identify a message.
    #[arg(long, value_parser = parser::<FlowKeyArg, FlowKeyKind>(), default_value = "five-tuple")]
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
    #[arg(long, default_value = "15s", value_parser = duration_arg, requires = "flows")]
    pub inactive_timeout: Nanos,
    /// Flow export: a flow lasting this long is exported and restarted (e.g. 30m, 1h).
    #[arg(long, default_value = "30m", value_parser = duration_arg, requires = "flows")]
    pub active_timeout: Nanos,
    /// CSV: 1-based column of the key.
    #[arg(long, default_value_t = 1)]
    pub csv_key_column: usize,
    /// CSV: 1-based column of the timestamp (none by default).
    #[arg(long)]
    pub csv_time_column: Option<usize>,
    /// CSV: unit of the time column.
    #[arg(long, value_parser = parser::<TimeUnitArg, TimeUnit>(), default_value = "s")]
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

/// A duration in nanoseconds (its own type, so that it keeps its parser; see
/// [`super::numbers`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Nanos(pub u64);

fn duration_arg(s: &str) -> std::result::Result<Nanos, String> {
    parse_duration_ns(s).map(Nanos)
}

impl TraceArgs {
    /// Flags that cannot apply to the format or key asked for are errors, not
    /// silently ignored. Only values other than the defaults can be recognised as
    /// given; with `--format auto` the format is known only once the trace is read.
    fn check_applicable(&self) -> Result<()> {
        let d: TraceArgs = super::defaults();
        let (capture_flags, csv_flags) = self.format_flags(&d);
        let format = self.format;
        if capture_flags && !matches!(format, Format::Auto | Format::Pcap) {
            return Err(Error::setting(
                "format",
                Problem::Conflict(
                    format!(
                        "--key, --flows and --prefix-v4/v6 apply to packet captures, not to --format {}",
                        format.name()
                    )
                    .into(),
                ),
            ));
        }
        if csv_flags && !matches!(format, Format::Auto | Format::Csv) {
            return Err(Error::setting(
                "format",
                Problem::Conflict(
                    format!(
                        "the --csv-* flags apply to --format csv, not to --format {}",
                        format.name()
                    )
                    .into(),
                ),
            ));
        }
        let prefix_key = matches!(self.key, FlowKeyKind::DstPrefix | FlowKeyKind::SrcPrefix);
        if !prefix_key && (self.prefix_v4 != d.prefix_v4 || self.prefix_v6 != d.prefix_v6) {
            return Err(Error::setting(
                "prefix-v4",
                Problem::Conflict(
                    "--prefix-v4/--prefix-v6 apply only with --key dst-prefix or src-prefix".into(),
                ),
            ));
        }
        if self.csv_time_column.is_none() && self.csv_time_unit != d.csv_time_unit {
            return Err(Error::setting(
                "csv-time-unit",
                Problem::Conflict("applies only with --csv-time-column".into()),
            ));
        }
        Ok(())
    }

    /// Whether capture flags and CSV flags were given (differ from the defaults `d`).
    fn format_flags(&self, d: &TraceArgs) -> (bool, bool) {
        let capture_flags = self.key != d.key
            || self.flows
            || self.prefix_v4 != d.prefix_v4
            || self.prefix_v6 != d.prefix_v6;
        let csv_flags = self.csv_key_column != d.csv_key_column
            || self.csv_time_column.is_some()
            || self.csv_time_unit != d.csv_time_unit
            || self.csv_delimiter != d.csv_delimiter
            || self.csv_header;
        (capture_flags, csv_flags)
    }

    /// For keys already in memory (the Python package): the flags that say how to read
    /// a file cannot apply, and are refused rather than ignored.
    pub fn check_memory(&self) -> Result<()> {
        let d: TraceArgs = super::defaults();
        let (capture_flags, csv_flags) = self.format_flags(&d);
        let timeouts =
            self.inactive_timeout != d.inactive_timeout || self.active_timeout != d.active_timeout;
        if capture_flags || csv_flags || timeouts || self.sort_by_time || self.format != d.format {
            return Err(Error::setting(
                "format",
                Problem::Conflict(
                    "the flags that say how to read a trace file (format, key, flows, csv_*, \
                     sort_by_time, ...) do not apply to keys in memory"
                        .into(),
                ),
            ));
        }
        Ok(())
    }

    pub fn options(&self) -> Result<IngestOptions> {
        self.check_applicable()?;
        if self.active_timeout < self.inactive_timeout {
            return Err(Error::setting(
                "active-timeout",
                Problem::rule("must be at least the inactive timeout"),
            ));
        }
        Ok(IngestOptions {
            format: self.format,
            hasher: KeyHasher::default(),
            keep_keys: false,
            key: KeySpec::new(self.key, self.prefix_v4, self.prefix_v6)?,
            flows: self.flows.then_some(FlowTimeouts {
                inactive_ns: self.inactive_timeout.0,
                active_ns: self.active_timeout.0,
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
            same_thread: false,
        })
    }

    /// Opens the trace the positional arguments name, with these options.
    pub fn open(&self, inputs: &[std::path::PathBuf]) -> Result<Box<dyn MessageSource>> {
        ingest::open_inputs(inputs, &self.options()?)
    }
}
