//! The trace-reading flags every command that takes a trace flattens in (`replay`,
//! `ingest`, `fit`, ...): format, flow key, flow export timeouts, CSV column spec.

use clap::Args;

use rbf::ingest::csv::{parse_delimiter, CsvSpec, TimeUnit};
use rbf::ingest::packet::flows::FlowTimeouts;
use rbf::ingest::packet::key::{FlowKeyKind, KeySpec};
use rbf::ingest::{Format, IngestOptions};
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
    /// Captures: one message per exported flow record instead of one per packet.
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
    #[arg(long, value_enum, default_value_t = TimeUnit::S)]
    pub csv_time_unit: TimeUnit,
    /// CSV: field delimiter (one character, or tab, space, comma, semicolon, pipe).
    #[arg(long, default_value = ",")]
    pub csv_delimiter: String,
    /// CSV: the first line is a header.
    #[arg(long)]
    pub csv_header: bool,
}

/// A duration in nanoseconds (its own type, so that it keeps its parser; see
/// [`super::numbers`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Nanos(pub u64);

fn duration_arg(s: &str) -> std::result::Result<Nanos, String> {
    parse_duration_ns(s).map(Nanos)
}

/// Parses `15`, `15s`, `500ms`, `2m`, `1h` into nanoseconds (a bare number is seconds).
pub fn parse_duration_ns(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("expected a duration such as 15s, 500ms, 30m or 1h; found {s:?}"))?;
    let scale = match unit.trim() {
        "" | "s" => 1e9,
        "ms" => 1e6,
        "us" => 1e3,
        "ns" => 1.0,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        u => {
            return Err(format!(
                "unknown time unit {u:?} in {s:?}; allowed: ns, us, ms, s, m, h"
            ))
        }
    };
    let ns = v * scale;
    if !ns.is_finite() || ns <= 0.0 || ns >= u64::MAX as f64 {
        return Err(format!("duration {s:?} must be positive"));
    }
    Ok(ns as u64)
}

impl TraceArgs {
    /// Flags that cannot apply to the format or key asked for are errors, not
    /// silently ignored. Only values other than the defaults can be recognised as
    /// given; with `--format auto` the format is known only once the trace is read.
    fn check_applicable(&self) -> Result<()> {
        let d: TraceArgs = super::defaults();
        let capture_flags = self.key != d.key
            || self.flows
            || self.prefix_v4 != d.prefix_v4
            || self.prefix_v6 != d.prefix_v6;
        let csv_flags = self.csv_key_column != d.csv_key_column
            || self.csv_time_column.is_some()
            || self.csv_time_unit != d.csv_time_unit
            || self.csv_delimiter != d.csv_delimiter
            || self.csv_header;
        let format = self.format;
        if capture_flags && !matches!(format, Format::Auto | Format::Pcap) {
            return Err(Error::config(
                "format",
                format!(
                    "--key, --flows and --prefix-v4/v6 apply to packet captures, not to --format {}",
                    format.name()
                ),
            ));
        }
        if csv_flags && !matches!(format, Format::Auto | Format::Csv) {
            return Err(Error::config(
                "format",
                format!(
                    "the --csv-* flags apply to --format csv, not to --format {}",
                    format.name()
                ),
            ));
        }
        let prefix_key = matches!(self.key, FlowKeyKind::DstPrefix | FlowKeyKind::SrcPrefix);
        if !prefix_key && (self.prefix_v4 != d.prefix_v4 || self.prefix_v6 != d.prefix_v6) {
            return Err(Error::config(
                "prefix-v4",
                "--prefix-v4/--prefix-v6 apply only with --key dst-prefix or src-prefix",
            ));
        }
        if self.csv_time_column.is_none() && self.csv_time_unit != d.csv_time_unit {
            return Err(Error::config(
                "csv-time-unit",
                "applies only with --csv-time-column",
            ));
        }
        Ok(())
    }

    pub fn options(&self) -> Result<IngestOptions> {
        self.check_applicable()?;
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
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ns("15s"), Ok(15_000_000_000));
        assert_eq!(parse_duration_ns("15"), Ok(15_000_000_000));
        assert_eq!(parse_duration_ns("500ms"), Ok(500_000_000));
        assert_eq!(parse_duration_ns("30m"), Ok(1_800_000_000_000));
        assert!(parse_duration_ns("5 parsecs").is_err());
        assert!(parse_duration_ns("0").is_err());
    }
}
