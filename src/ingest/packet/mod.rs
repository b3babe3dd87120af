//! Packet captures: pcap and pcapng files become one message per IP packet or per
//! exported flow record.
//!
//! * [`link`]: link layers (Ethernet + VLAN/QinQ, Linux SLL/SLL2, raw IP, BSD NULL).
//! * this file: the IP layer (etherparse's lax parser, so truncated packets still
//!   yield their addresses) and the transport ports.
//! * [`key`]: flow keys (`--key`), their canonical bytes and readable names.
//! * [`flows`]: the flow table with NetFlow/IPFIX-style active and inactive timeouts.
//! * [`capture`]: the [`crate::ingest::MessageSource`] over pcap-parser's streaming readers.

pub mod capture;
pub mod flows;
pub mod key;
pub mod link;

use etherparse::{Ipv6ExtensionSlice, LaxIpSlice, LenSource};

use link::{Link, LinkSkip, Vlans, ETHERTYPE_IPV4, ETHERTYPE_IPV6};

/// The header fields flow keys are built from. Addresses are stored in 16 bytes; IPv4
/// uses the first four.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketFields {
    pub ipv6: bool,
    pub src: [u8; 16],
    pub dst: [u8; 16],
    pub protocol: u8,
    /// Transport ports; zero when the protocol has none or they were not captured.
    pub src_port: u16,
    pub dst_port: u16,
    pub vlans: Vlans,
    /// What was missing although the packet was decoded (counted as notes).
    pub partial: Option<Partial>,
}

/// A packet decoded with something missing: counted, never silently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Partial {
    /// The capture ends inside the IP packet (snap length) or its length fields disagree.
    IpTruncated,
    /// A TCP/UDP/SCTP packet whose ports were cut off by the snap length.
    PortsTruncated,
    /// A non-first fragment: the ports are in another packet.
    Fragment,
}

impl Partial {
    pub fn note(self) -> &'static str {
        match self {
            Partial::IpTruncated => {
                "IP packet truncated or length fields inconsistent (decoded what was captured)"
            }
            Partial::PortsTruncated => "transport header truncated: ports unknown, key uses port 0",
            Partial::Fragment => "IP fragment without transport header: key uses port 0",
        }
    }
}

/// Why a captured frame yielded no IP packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Skip {
    Link(LinkSkip),
    NonIp(u16),
    /// The IP header itself is missing or malformed: a short category (the counting
    /// key) and the decoder's detail (quoted in examples).
    BadIp(&'static str, String),
}

impl Skip {
    pub fn reason(&self) -> String {
        match self {
            Skip::Link(l) => l.reason(),
            Skip::NonIp(t) => format!("non-IP EtherType {t:#06x}{}", ether_type_name(*t)),
            Skip::BadIp(what, _) => format!("undecodable IP header: {what}"),
        }
    }

    /// Undecodable packets are malformed; the others were deliberately not keyed.
    pub fn is_malformed(&self) -> bool {
        matches!(self, Skip::BadIp(..) | Skip::Link(LinkSkip::Truncated(_)))
    }

    /// The detail for a malformed packet's example line.
    pub fn detail(&self) -> String {
        match self {
            Skip::BadIp(_, e) => e.clone(),
            s => s.reason(),
        }
    }
}

fn ip_error(e: etherparse::err::ip::LaxHeaderSliceError) -> Skip {
    use etherparse::err::ip::LaxHeaderSliceError as E;
    let what = match &e {
        E::Len(_) => "truncated",
        E::Content(_) => "invalid header contents",
    };
    Skip::BadIp(what, e.to_string())
}

fn ether_type_name(t: u16) -> &'static str {
    match t {
        0x0806 => " (ARP)",
        0x8035 => " (RARP)",
        0x8847 | 0x8848 => " (MPLS)",
        0x8863 | 0x8864 => " (PPPoE)",
        0x88CC => " (LLDP)",
        0x888E => " (EAPOL)",
        0x88A2 => " (ATA over Ethernet)",
        0x9000 => " (loopback test)",
        _ => "",
    }
}

/// Transport protocols whose first four bytes are source and destination ports.
pub(crate) fn has_ports(protocol: u8) -> bool {
    matches!(protocol, 6 | 17 | 132 | 136)
}

/// Decodes the IP packet in a frame of link type `linktype`.
#[inline]
pub fn decode(linktype: u32, frame: &[u8]) -> Result<PacketFields, Skip> {
    let Link {
        ether_type,
        vlans,
        payload,
    } = link::strip(linktype, frame).map_err(Skip::Link)?;
    if ether_type != ETHERTYPE_IPV4 && ether_type != ETHERTYPE_IPV6 {
        return Err(Skip::NonIp(ether_type));
    }
    let (ip, _ext_err) = LaxIpSlice::from_slice(payload).map_err(ip_error)?;
    let mut f = PacketFields {
        vlans,
        ..Default::default()
    };
    let fragment_offset = match &ip {
        LaxIpSlice::Ipv4(v4) => {
            let h = v4.header();
            f.src[..4].copy_from_slice(&h.source());
            f.dst[..4].copy_from_slice(&h.destination());
            h.fragments_offset().value()
        }
        LaxIpSlice::Ipv6(v6) => {
            let h = v6.header();
            f.ipv6 = true;
            f.src = h.source();
            f.dst = h.destination();
            // The first fragment (offset 0) carries the transport header. The offset is
            // read from the raw header (RFC 8200 §4.5: the top 13 bits of bytes 2-3)
            // because etherparse 0.19's `fragment_offset()` mixes in the M flag.
            v6.extensions()
                .clone()
                .into_iter()
                .find_map(|e| match e {
                    Ipv6ExtensionSlice::Fragment(fr) => {
                        let b = fr.slice();
                        Some(u16::from_be_bytes([b[2], b[3]]) >> 3)
                    }
                    _ => None,
                })
                .unwrap_or(0)
        }
    };
    let p = ip.payload();
    f.protocol = p.ip_number.0;
    if p.incomplete || p.len_source == LenSource::Slice {
        f.partial = Some(Partial::IpTruncated);
    }
    if has_ports(f.protocol) {
        if fragment_offset != 0 {
            f.partial = Some(Partial::Fragment);
        } else if p.payload.len() >= 4 {
            f.src_port = u16::from_be_bytes([p.payload[0], p.payload[1]]);
            f.dst_port = u16::from_be_bytes([p.payload[2], p.payload[3]]);
        } else {
            f.partial = Some(Partial::PortsTruncated);
        }
    }
    Ok(f)
}
