//! Zeek's connection log, `conn.log`, in both of Zeek's log writers' layouts:
//!
//! * TSV (the default ASCII writer): header lines `#separator \x09`, `#set_separator`,
//!   `#empty_field`, `#unset_field`, `#path conn`, `#open`, `#fields ts uid id.orig_h
//!   id.orig_p id.resp_h id.resp_p proto service duration ...`, `#types ...`, then one
//!   connection per line, and `#close` at the end (Zeek documentation, "Zeek Logs" /
//!   "Log Formats", and the `Conn::Info` record of `base/protocols/conn/main.zeek`).
//!   Columns are found by name in `#fields`, so logs with extra or fewer optional
//!   columns read the same; concatenated or rotated logs may repeat the header.
//! * JSON lines (`LogAscii::use_json = T`): one object per line with the same field
//!   names, e.g. `{"ts":1591367999.430166,"uid":"C5bL...","id.orig_h":"192.168.4.76",
//!   "id.orig_p":46378,"id.resp_h":"31.3.245.133","id.resp_p":80,"proto":"tcp",
//!   "duration":0.254,...}` (Zeek documentation, "conn.log"). `ts` must be epoch
//!   seconds (the default `JSON::TS_EPOCH`).
//!
//! One record is one connection: Zeek's connections are bidirectional, and the key is
//! the originator's direction (`id.orig_h:id.orig_p -> id.resp_h:id.resp_p`), the key
//! of that direction's flow in the capture. `proto` is `tcp`, `udp`, `icmp` (ICMPv6 for
//! IPv6 addresses) or `unknown_transport`, which names no IP protocol number: such
//! records are skipped and counted. For ICMP Zeek logs type and code as the ports;
//! they are not part of the key (as for captures). `five-tuple-vlan` uses the `vlan`
//! and `inner_vlan` fields (policy script `vlan-logging`, or `id.ctx.vlan` and
//! `id.ctx.inner_vlan` of Zeek 8's VLAN-aware connection keys) when the log has them.

use std::borrow::Cow;

use serde::Deserialize;

use super::{port, split, Endpoints, Keyer};
use crate::ingest::options::Format;
use crate::ingest::packet::key::KeySpec;
use crate::ingest::text::{parse_seconds, LineParser};
use crate::message::Timestamp;

/// Column positions from `#fields`.
#[derive(Clone, Copy, Debug)]
struct Columns {
    ts: usize,
    orig_h: usize,
    orig_p: usize,
    resp_h: usize,
    resp_p: usize,
    proto: usize,
    duration: Option<usize>,
    vlan: Option<usize>,
    inner_vlan: Option<usize>,
}

impl Columns {
    fn from_fields(names: &[&[u8]]) -> Result<Columns, String> {
        let find = |want: &[&str]| {
            names
                .iter()
                .position(|n| want.iter().any(|w| n == &w.as_bytes()))
        };
        let need = |name: &str| {
            find(&[name]).ok_or_else(|| {
                format!("the #fields header has no `{name}` column: not a Zeek conn.log")
            })
        };
        Ok(Columns {
            ts: need("ts")?,
            orig_h: need("id.orig_h")?,
            orig_p: need("id.orig_p")?,
            resp_h: need("id.resp_h")?,
            resp_p: need("id.resp_p")?,
            proto: need("proto")?,
            duration: find(&["duration"]),
            vlan: find(&["vlan", "id.ctx.vlan"]),
            inner_vlan: find(&["inner_vlan", "id.ctx.inner_vlan"]),
        })
    }
}

/// A conn.log record in JSON.
#[derive(Deserialize)]
struct JsonRecord<'a> {
    ts: f64,
    #[serde(borrow, rename = "id.orig_h")]
    orig_h: Cow<'a, str>,
    #[serde(rename = "id.orig_p")]
    orig_p: u16,
    #[serde(borrow, rename = "id.resp_h")]
    resp_h: Cow<'a, str>,
    #[serde(rename = "id.resp_p")]
    resp_p: u16,
    #[serde(borrow)]
    proto: Cow<'a, str>,
    #[serde(default)]
    duration: Option<f64>,
    #[serde(default, alias = "id.ctx.vlan")]
    vlan: Option<u16>,
    #[serde(default, alias = "id.ctx.inner_vlan")]
    inner_vlan: Option<u16>,
}

/// Why a line carried no record.
const HEADER: &str = "Zeek log header line";
const BLANK: &str = "blank line";
const UNKNOWN_TRANSPORT: &str =
    "connection with proto unknown_transport (Zeek logs no IP protocol number to key it by)";

/// The [`LineParser`] for Zeek conn.log, TSV or JSON lines.
pub struct ZeekParser {
    keyer: Keyer,
    separator: u8,
    unset: Vec<u8>,
    columns: Option<Columns>,
    /// `#path` names another log: its records are not connections.
    other_log: Option<String>,
    last_skip: &'static str,
}

impl ZeekParser {
    pub fn new(spec: KeySpec) -> Self {
        ZeekParser {
            keyer: Keyer::new(spec),
            separator: b'\t',
            unset: b"-".to_vec(),
            columns: None,
            other_log: None,
            last_skip: HEADER,
        }
    }

    /// Whether a first line looks like a Zeek log (TSV header or a conn.log JSON record).
    pub fn detect(first_line: &[u8]) -> bool {
        first_line.starts_with(b"#separator ")
            || (first_line.starts_with(b"{")
                && serde_json::from_slice::<JsonRecord<'_>>(first_line.trim_ascii()).is_ok())
    }

    fn header(&mut self, line: &[u8]) -> Result<(), String> {
        if let Some(v) = line.strip_prefix(b"#separator ") {
            self.separator = unescape(v)
                .ok_or_else(|| "#separator is not one character (e.g. \\x09)".to_string())?;
            return Ok(());
        }
        let mut parts = split(line, self.separator);
        let directive = parts.next().unwrap_or_default();
        let values: Vec<&[u8]> = parts.collect();
        match directive {
            b"#fields" => {
                self.columns = None;
                self.columns = Some(Columns::from_fields(&values)?);
            }
            b"#unset_field" => self.unset = values.first().unwrap_or(&&b"-"[..]).to_vec(),
            b"#path" => {
                let path = values.first().copied().unwrap_or_default();
                self.other_log =
                    (path != b"conn").then(|| String::from_utf8_lossy(path).into_owned());
            }
            _ => {}
        }
        Ok(())
    }

    fn tsv<'a>(&'a mut self, line: &'a [u8]) -> Result<Option<(&'a [u8], Timestamp)>, String> {
        let c = self
            .columns
            .ok_or("a record before the #fields header (not a Zeek TSV log?)")?;
        let mut at = [&b""[..]; 9];
        let want = [
            Some(c.ts),
            Some(c.orig_h),
            Some(c.orig_p),
            Some(c.resp_h),
            Some(c.resp_p),
            Some(c.proto),
            c.duration,
            c.vlan,
            c.inner_vlan,
        ];
        let mut found = 0;
        for (i, field) in split(line, self.separator).enumerate() {
            for (slot, w) in at.iter_mut().zip(&want) {
                if *w == Some(i) {
                    *slot = field;
                    found += 1;
                }
            }
        }
        if found < want.iter().flatten().count() {
            return Err("fewer fields than the #fields header names".into());
        }
        let unset = |f: &[u8]| f == self.unset.as_slice();
        let start = parse_seconds(at[0]).ok_or("ts is not epoch seconds")?;
        let duration = if c.duration.is_none() || unset(at[6]) {
            None
        } else {
            Some(parse_seconds(at[6]).ok_or("duration is not a number of seconds")?)
        };
        let vlan = |f: &[u8]| -> Result<Option<u16>, String> {
            if f.is_empty() || unset(f) {
                Ok(None)
            } else {
                port(f, "vlan").map(Some)
            }
        };
        let vlans = [vlan(at[7])?, vlan(at[8])?];
        let (src_port, dst_port) = (port(at[2], "id.orig_p")?, port(at[4], "id.resp_p")?);
        let (src, dst, proto) = (at[1], at[3], at[5]);
        self.record(
            src,
            dst,
            proto,
            src_port,
            dst_port,
            vlans,
            end_time(start, duration),
        )
    }

    fn json<'a>(&'a mut self, line: &[u8]) -> Result<Option<(&'a [u8], Timestamp)>, String> {
        let r: JsonRecord<'_> = serde_json::from_slice(line)
            .map_err(|e| format!("not a conn.log JSON record ({e}); `ts` must be epoch seconds"))?;
        let start = Timestamp::from_nanos(finite_nanos(r.ts).ok_or("ts is not epoch seconds")?);
        let duration = match r.duration {
            None => None,
            Some(d) => Some(Timestamp::from_nanos(
                finite_nanos(d).ok_or("duration is not a number of seconds")?,
            )),
        };
        let time = end_time(start, duration);
        self.record(
            r.orig_h.as_bytes(),
            r.resp_h.as_bytes(),
            r.proto.as_bytes(),
            r.orig_p,
            r.resp_p,
            [r.vlan, r.inner_vlan],
            time,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        src: &[u8],
        dst: &[u8],
        proto: &[u8],
        src_port: u16,
        dst_port: u16,
        vlans: [Option<u16>; 2],
        time: Timestamp,
    ) -> Result<Option<(&[u8], Timestamp)>, String> {
        let v6 = src.contains(&b':');
        let protocol = match proto {
            b"tcp" => 6,
            b"udp" => 17,
            b"icmp" if v6 => 58,
            b"icmp" => 1,
            b"unknown_transport" => {
                self.last_skip = UNKNOWN_TRANSPORT;
                return Ok(None);
            }
            p => {
                return Err(format!(
                    "proto {:?} is not one of tcp, udp, icmp, unknown_transport",
                    String::from_utf8_lossy(&p[..p.len().min(24)])
                ))
            }
        };
        let e = Endpoints {
            src,
            dst,
            protocol,
            src_port,
            dst_port,
            vlans,
        };
        Ok(Some((self.keyer.key(&e)?, time)))
    }
}

/// A flow's export time: start plus duration (an unset duration: the start).
fn end_time(start: Timestamp, duration: Option<Timestamp>) -> Timestamp {
    match (start.nanos(), duration.and_then(Timestamp::nanos)) {
        (Some(s), Some(d)) => Timestamp::from_nanos(s.saturating_add(d)),
        _ => start,
    }
}

fn finite_nanos(seconds: f64) -> Option<u64> {
    (0.0..1.8e10)
        .contains(&seconds)
        .then(|| (seconds * 1e9).round() as u64)
}

/// `\x09` (Zeek writes the separator escaped) or a literal single byte.
fn unescape(v: &[u8]) -> Option<u8> {
    match v {
        [b'\\', b'x', h, l] => u8::from_str_radix(std::str::from_utf8(&[*h, *l]).ok()?, 16).ok(),
        [b] => Some(*b),
        _ => None,
    }
}

impl LineParser for ZeekParser {
    const ENCODED_KEYS: bool = true;

    fn parse<'a>(
        &'a mut self,
        line: &'a [u8],
        _line_no: u64,
    ) -> Result<Option<(&'a [u8], Timestamp)>, String> {
        if line.trim_ascii().is_empty() {
            self.last_skip = BLANK;
            return Ok(None);
        }
        if line[0] == b'#' {
            self.last_skip = HEADER;
            self.header(line)?;
            return Ok(None);
        }
        if let Some(other) = &self.other_log {
            return Err(format!("this is Zeek's {other}.log, not conn.log"));
        }
        if line[0] == b'{' {
            self.json(line)
        } else {
            self.tsv(line)
        }
    }

    fn format(&self) -> Format {
        Format::Zeek
    }

    fn skip_reason(&self, _line_no: u64) -> &'static str {
        self.last_skip
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::KeyHasher;

    fn keyed(p: &mut ZeekParser, line: &str) -> Option<(String, u64)> {
        p.parse(line.as_bytes(), 1).expect("parses").map(|(k, t)| {
            (
                crate::ingest::packet::key::render_encoded(k),
                t.nanos().expect("time"),
            )
        })
    }

    #[test]
    fn tsv_columns_are_found_by_name() {
        let mut p = ZeekParser::new(KeySpec::default());
        for h in [
            "#separator \\x09",
            "#set_separator\t,",
            "#empty_field\t(empty)",
            "#unset_field\t-",
            "#path\tconn",
            "#fields\tts\tuid\tid.orig_h\tid.orig_p\tid.resp_h\tid.resp_p\tproto\tservice\tduration",
            "#types\ttime\tstring\taddr\tport\taddr\tport\tenum\tstring\tinterval",
        ] {
            assert_eq!(p.parse(h.as_bytes(), 1), Ok(None), "{h}");
        }
        assert_eq!(
            keyed(
                &mut p,
                "10.5\tCx\t10.0.0.1\t5000\t10.0.0.2\t80\ttcp\thttp\t0.25"
            ),
            Some(("tcp 10.0.0.1:5000 -> 10.0.0.2:80".into(), 10_750_000_000))
        );
        // ICMP: type and code are not ports; an unset duration means "ends at ts".
        assert_eq!(
            keyed(&mut p, "11\tCy\t10.0.0.1\t8\t10.0.0.2\t0\ticmp\t-\t-"),
            Some(("icmp 10.0.0.1:0 -> 10.0.0.2:0".into(), 11_000_000_000))
        );
        assert_eq!(
            keyed(&mut p, "12\tCz\t::1\t8\t::2\t0\ticmp\t-\t-"),
            Some(("icmpv6 [::1]:0 -> [::2]:0".into(), 12_000_000_000))
        );
        assert_eq!(
            p.parse(b"1\tC\t1.1.1.1\t0\t2.2.2.2\t0\tunknown_transport\t-\t-", 1),
            Ok(None)
        );
        assert_eq!(p.skip_reason(1), UNKNOWN_TRANSPORT);
        assert!(p.parse(b"1\tC\t1.1.1.1", 1).is_err());
        assert!(p
            .parse(b"x\tC\t1.1.1.1\t0\t2.2.2.2\t0\ttcp\t-\t-", 1)
            .is_err());
    }

    #[test]
    fn json_records_and_other_logs() {
        let mut p = ZeekParser::new(KeySpec::default());
        let rec = r#"{"ts":1591367999.5,"uid":"C5","id.orig_h":"192.168.4.76","id.orig_p":46378,"id.resp_h":"31.3.245.133","id.resp_p":80,"proto":"tcp","duration":0.25}"#;
        assert!(ZeekParser::detect(rec.as_bytes()));
        assert_eq!(
            keyed(&mut p, rec),
            Some((
                "tcp 192.168.4.76:46378 -> 31.3.245.133:80".into(),
                1_591_367_999_750_000_000
            ))
        );
        // The same connection from TSV and JSON has the same key.
        let h = KeyHasher::default();
        let mut tsv = ZeekParser::new(KeySpec::default());
        tsv.parse(
            b"#fields\tts\tid.orig_h\tid.orig_p\tid.resp_h\tid.resp_p\tproto",
            1,
        )
        .expect("header");
        let a = h.hash(
            tsv.parse(b"1\t192.168.4.76\t46378\t31.3.245.133\t80\ttcp", 2)
                .expect("ok")
                .expect("record")
                .0,
        );
        let b = h.hash(p.parse(rec.as_bytes(), 1).expect("ok").expect("record").0);
        assert_eq!(a, b);
        assert!(p.parse(br#"{"ts":"2020-06-05T14:39:59Z"}"#, 1).is_err());
        let mut dns = ZeekParser::new(KeySpec::default());
        dns.parse(b"#path\tdns", 1).expect("header");
        assert!(dns.parse(b"1\t2", 2).unwrap_err().contains("dns.log"));
        assert!(ZeekParser::new(KeySpec::default())
            .parse(b"#fields\tts\tuid\tquery", 1)
            .unwrap_err()
            .contains("id.orig_h"));
    }
}
