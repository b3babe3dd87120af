//! Flow logs: connection and flow records written by flow meters, read as one message
//! per record and keyed exactly like the flows of a packet capture (`--key`), so that
//! a capture and the log a tool wrote from it give the same keys.
//!
//! * [`zeek`]: Zeek's `conn.log`, in its TSV layout (`#fields` header) or as JSON lines.
//! * [`nfdump`]: `nfdump -o csv` output (the CSV header, then one flow per line, then
//!   nfdump's summary block).
//!
//! A record's message time is when the flow ended (its start plus its duration), which
//! is when a meter exports it; records keep the order of the log.

pub mod nfdump;
pub mod zeek;

use std::net::IpAddr;

use super::packet::key::{KeyBytes, KeySpec};
use super::packet::{has_ports, PacketFields};

/// Turns the identity a flow log states into a canonical flow key.
pub struct Keyer {
    spec: KeySpec,
    key: Option<KeyBytes>,
}

/// The fields a flow log gives a record's identity.
pub struct Endpoints<'a> {
    pub src: &'a [u8],
    pub dst: &'a [u8],
    pub protocol: u8,
    pub src_port: u16,
    pub dst_port: u16,
    /// Outer and inner VLAN id, when the log has them.
    pub vlans: [Option<u16>; 2],
}

impl Keyer {
    pub fn new(spec: KeySpec) -> Self {
        Keyer { spec, key: None }
    }

    /// The key bytes of a record, or why it has none. Ports are kept only for the
    /// protocols whose packets carry them (TCP, UDP, SCTP, UDP-Lite), as for captures:
    /// Zeek and nfdump put the ICMP type and code where the ports go.
    pub fn key(&mut self, e: &Endpoints<'_>) -> Result<&[u8], String> {
        let src = address(e.src)?;
        let dst = address(e.dst)?;
        let mut f = PacketFields {
            protocol: e.protocol,
            ..Default::default()
        };
        match (src, dst) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                f.src[..4].copy_from_slice(&s.octets());
                f.dst[..4].copy_from_slice(&d.octets());
            }
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                f.ipv6 = true;
                f.src = s.octets();
                f.dst = d.octets();
            }
            _ => return Err("source and destination addresses of different IP versions".into()),
        }
        if has_ports(e.protocol) {
            f.src_port = e.src_port;
            f.dst_port = e.dst_port;
        }
        for id in e.vlans.iter().flatten() {
            f.vlans.ids[f.vlans.count as usize] = *id;
            f.vlans.count += 1;
        }
        Ok(self.key.insert(self.spec.encode(&f)).as_slice())
    }
}

fn address(s: &[u8]) -> Result<IpAddr, String> {
    std::str::from_utf8(s.trim_ascii())
        .ok()
        .and_then(|t| t.parse().ok())
        .ok_or_else(|| {
            format!(
                "not an IP address: {:?}",
                String::from_utf8_lossy(&s[..s.len().min(48)])
            )
        })
}

/// Parses a port (or ICMP type/code) field.
fn port(s: &[u8], what: &str) -> Result<u16, String> {
    super::text::parse_u64(s.trim_ascii())
        .and_then(|v| u16::try_from(v).ok())
        .ok_or_else(|| format!("{what} is not a port number (0-65535)"))
}

/// The fields of a delimited line, split lazily.
fn split(line: &[u8], sep: u8) -> impl Iterator<Item = &[u8]> {
    line.split(move |&b| b == sep)
}
