//! Packet captures: pcap and pcapng files become one message per IP packet or per
//! exported flow record.
//!
//! * [`link`]: link layers (Ethernet + VLAN/QinQ, MPLS, PPPoE, PPP, Cisco HDLC, Linux
//!   SLL/SLL2, raw IP, BSD NULL).
//! * this file: the IP layer (etherparse's lax parser, so truncated packets still
//!   yield their addresses) and the transport ports.
//! * [`key`]: flow keys (`--key`), their canonical bytes and readable names.
//! * [`flows`]: the flow table with NetFlow/IPFIX-style active and inactive timeouts.
//! * [`capture`]: the [`crate::ingest::source::MessageSource`] over pcap-parser's streaming readers.

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
        0x8863 => " (PPPoE discovery)",
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
pub fn decode(linktype: u32, frame: &[u8]) -> Result<PacketFields, Skip> {
    let mut f = PacketFields::default();
    decode_into(linktype, frame, &mut f).map(|()| f)
}

/// [`decode`] into `f`, which must be all defaults (zeros) on entry: the packet loop
/// keeps the fields in place rather than moving a 44-byte result through each call.
#[inline(always)]
pub fn decode_into(linktype: u32, frame: &[u8], f: &mut PacketFields) -> Result<(), Skip> {
    let Link {
        ether_type,
        vlans,
        payload,
    } = link::strip(linktype, frame).map_err(Skip::Link)?;
    if ether_type != ETHERTYPE_IPV4 && ether_type != ETHERTYPE_IPV6 {
        return Err(Skip::NonIp(ether_type));
    }
    if plain_ip(payload, f) {
        f.vlans = vlans;
    } else {
        *f = lax_ip(vlans, payload)?;
    }
    Ok(())
}

/// The common case read by hand into `f` (all defaults on entry): an IPv4 packet
/// without an authentication header, or an IPv6 packet without extension headers,
/// whose length field fits the capture. Anything else is false (`f` then holds
/// nothing of use) and goes to [`lax_ip`] (etherparse), which gives the same fields
/// for every packet this accepts (tested packet for packet below); this one takes a
/// few nanoseconds where etherparse's general parser takes tens.
#[inline(always)]
fn plain_ip(ip: &[u8], f: &mut PacketFields) -> bool {
    plain_ip_parts(ip, f).is_some()
}

#[inline(always)]
fn plain_ip_parts(ip: &[u8], f: &mut PacketFields) -> Option<()> {
    // Like etherparse, the version nibble decides, whatever the EtherType said.
    let (payload, fragment_offset) = match ip.first()? >> 4 {
        4 => {
            let header_len = usize::from(ip[0] & 0x0F) * 4;
            let total_len = usize::from(u16::from_be_bytes([*ip.get(2)?, *ip.get(3)?]));
            // IHL below 5, a total length shorter than the header or longer than the
            // capture, and IPsec AH (an extension etherparse walks) are the general path's.
            if header_len < 20 || total_len < header_len || total_len > ip.len() || ip[9] == 51 {
                return None;
            }
            f.protocol = ip[9];
            f.src[..4].copy_from_slice(&ip[12..16]);
            f.dst[..4].copy_from_slice(&ip[16..20]);
            let offset = u16::from_be_bytes([ip[6], ip[7]]) & 0x1FFF;
            (&ip[header_len..total_len], offset)
        }
        6 => {
            let payload_len = usize::from(u16::from_be_bytes([*ip.get(4)?, *ip.get(5)?]));
            // Only upper-layer protocols: extension headers (and jumbograms, whose
            // payload length is 0) are the general path's.
            if ip.len() < 40 || payload_len == 0 || 40 + payload_len > ip.len() {
                return None;
            }
            if !matches!(ip[6], 1 | 6 | 17 | 58 | 132) {
                return None;
            }
            f.ipv6 = true;
            f.protocol = ip[6];
            f.src.copy_from_slice(&ip[8..24]);
            f.dst.copy_from_slice(&ip[24..40]);
            (&ip[40..40 + payload_len], 0)
        }
        _ => return None,
    };
    set_ports(f, payload, fragment_offset);
    Some(())
}

/// Transport ports from the IP payload, or what kept them from being read.
#[inline(always)]
fn set_ports(f: &mut PacketFields, payload: &[u8], fragment_offset: u16) {
    if has_ports(f.protocol) {
        if fragment_offset != 0 {
            f.partial = Some(Partial::Fragment);
        } else if payload.len() >= 4 {
            f.src_port = u16::from_be_bytes([payload[0], payload[1]]);
            f.dst_port = u16::from_be_bytes([payload[2], payload[3]]);
        } else {
            f.partial = Some(Partial::PortsTruncated);
        }
    }
}

/// Any IP packet, with etherparse's lax parser (truncated packets still yield their
/// addresses; extension headers are walked).
fn lax_ip(vlans: Vlans, payload: &[u8]) -> Result<PacketFields, Skip> {
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
    set_ports(&mut f, p.payload, fragment_offset);
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::link::linktype;
    use super::*;
    use crate::synth::Rng;

    /// What the general parser alone makes of a frame (the reference for the fast path).
    fn general(linktype: u32, frame: &[u8]) -> Result<PacketFields, Skip> {
        let l = link::strip(linktype, frame).map_err(Skip::Link)?;
        if l.ether_type != ETHERTYPE_IPV4 && l.ether_type != ETHERTYPE_IPV6 {
            return Err(Skip::NonIp(l.ether_type));
        }
        lax_ip(l.vlans, l.payload)
    }

    fn ipv4(rng: &mut Rng, protocol: u8, body: &[u8]) -> Vec<u8> {
        let options = if rng.chance(0.2) { 4 * rng.below(3) } else { 0 } as usize;
        let header_len = 20 + options;
        let total = (header_len + body.len()) as u16;
        let flags: u16 = match rng.below(4) {
            0 => 0x4000,
            1 => 0x2000,                               // first fragment (MF, offset 0)
            2 => 0x2000 | (1 + rng.below(100) as u16), // a later fragment
            _ => 0,
        };
        let mut p = vec![0x40 | (header_len / 4) as u8, 0];
        p.extend_from_slice(&total.to_be_bytes());
        p.extend_from_slice(&[0, 1]);
        p.extend_from_slice(&flags.to_be_bytes());
        p.extend_from_slice(&[64, protocol, 0, 0]);
        p.extend((0..8).map(|_| rng.below(256) as u8));
        p.extend(std::iter::repeat_n(1u8, options));
        p.extend_from_slice(body);
        p
    }

    fn ipv6(rng: &mut Rng, next: u8, body: &[u8]) -> Vec<u8> {
        let mut p = vec![0x60, 0, 0, 0];
        p.extend_from_slice(&(body.len() as u16).to_be_bytes());
        p.extend_from_slice(&[next, 64]);
        p.extend((0..32).map(|_| rng.below(256) as u8));
        p.extend_from_slice(body);
        p
    }

    /// An IP packet of a random kind: TCP/UDP/SCTP/ICMP/GRE, IPv4 with options and
    /// fragments, IPv4 with AH, IPv6 with hop-by-hop, fragment and routing headers.
    fn ip_packet(rng: &mut Rng) -> Vec<u8> {
        let transport = [6u8, 17, 132, 1, 47, 58][rng.below(6) as usize];
        let mut body: Vec<u8> = (0..rng.below(40)).map(|_| rng.below(256) as u8).collect();
        match rng.below(6) {
            0..=2 => ipv4(rng, transport, &body),
            3 => {
                // IPv4 with an authentication header (12 bytes + 4 of ICV).
                let mut ah = vec![transport, 4, 0, 0];
                ah.extend((0..12).map(|_| rng.below(256) as u8));
                ah.append(&mut body);
                ipv4(rng, 51, &ah)
            }
            4 => ipv6(rng, transport, &body),
            _ => {
                // One IPv6 extension header in front of the transport.
                let (kind, ext): (u8, Vec<u8>) = match rng.below(3) {
                    0 => (0, vec![transport, 0, 1, 4, 0, 0, 0, 0]),
                    1 => {
                        let off = (rng.below(3) as u16) << 3 | rng.below(2) as u16;
                        let [a, b] = off.to_be_bytes();
                        (44, vec![transport, 0, a, b, 0, 0, 0, 7])
                    }
                    _ => (43, vec![transport, 0, 0, 0, 0, 0, 0, 0]),
                };
                let mut all = ext;
                all.append(&mut body);
                ipv6(rng, kind, &all)
            }
        }
    }

    /// A frame around `ip` of a random link type, with VLAN tags on Ethernet.
    fn frame(rng: &mut Rng, ip: &[u8]) -> (u32, Vec<u8>) {
        let v6 = ip.first().is_some_and(|b| b >> 4 == 6);
        let ether = if v6 { [0x86, 0xDD] } else { [0x08, 0x00] };
        let (lt, mut f) = match rng.below(5) {
            0 | 1 => {
                let mut f = vec![2u8; 12];
                for _ in 0..rng.below(3) {
                    f.extend_from_slice(&[0x81, 0x00, 0, rng.below(200) as u8]);
                }
                f.extend_from_slice(&ether);
                (linktype::ETHERNET, f)
            }
            2 => (linktype::RAW, Vec::new()),
            3 => {
                let mut f = vec![0u8; 14];
                f.extend_from_slice(&ether);
                (linktype::LINUX_SLL, f)
            }
            _ => (linktype::NULL, vec![if v6 { 30 } else { 2 }, 0, 0, 0]),
        };
        f.extend_from_slice(ip);
        (lt, f)
    }

    #[test]
    fn fast_path_agrees_with_the_general_parser_packet_for_packet() {
        let mut rng = Rng::seed(41);
        let (mut fast, mut packets) = (0u32, 0u32);
        for _ in 0..3000 {
            let ip = ip_packet(&mut rng);
            let (lt, mut f) = frame(&mut rng, &ip);
            // The packet as built, then damaged: cut short (snap length), padded
            // (Ethernet minimum), and with one random byte changed.
            let mut variants = vec![f.clone()];
            let cut = rng.below(f.len() as u64 + 1) as usize;
            variants.push(f[..cut].to_vec());
            let mut padded = f.clone();
            padded.extend_from_slice(&[0; 6]);
            variants.push(padded);
            let at = rng.below(f.len() as u64) as usize;
            f[at] = rng.below(256) as u8;
            variants.push(f);
            for v in variants {
                packets += 1;
                let l = link::strip(lt, &v);
                if l.as_ref()
                    .is_ok_and(|l| plain_ip(l.payload, &mut PacketFields::default()))
                {
                    fast += 1;
                }
                assert_eq!(decode(lt, &v), general(lt, &v), "link type {lt}: {v:02x?}");
            }
        }
        // Both paths were exercised.
        assert!(
            fast > packets / 4 && fast < packets * 3 / 4,
            "{fast} of {packets}"
        );
    }
}
