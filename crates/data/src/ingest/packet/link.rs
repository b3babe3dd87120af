//! Link layers: from a captured frame to the network-layer bytes it carries.
//!
//! Written by hand rather than with etherparse because etherparse has no parser for
//! Linux SLL2 or BSD NULL/LOOP and rejects SLL headers with some ARPHRD types; the
//! Ethernet path is here too so that every link type yields the same [`Link`] (VLAN
//! ids plus an EtherType and its payload) and the IP layer below is decoded once.

/// Link-layer types we decode (LINKTYPE_* values from the pcap/pcapng specifications).
pub mod linktype {
    pub const NULL: u32 = 0;
    pub const ETHERNET: u32 = 1;
    /// PPP (RFC 1661), with or without the RFC 1662 `ff 03` address and control bytes.
    pub const PPP: u32 = 9;
    /// PPP in HDLC-like framing (RFC 1662), or Cisco HDLC.
    pub const PPP_HDLC: u32 = 50;
    /// Cisco HDLC: address, control, then an EtherType.
    pub const C_HDLC: u32 = 104;
    /// DLT_RAW as written by some BSDs.
    pub const RAW_BSD_12: u32 = 12;
    pub const RAW_BSD_14: u32 = 14;
    pub const RAW: u32 = 101;
    pub const LOOP: u32 = 108;
    pub const LINUX_SLL: u32 = 113;
    pub const IPV4: u32 = 228;
    pub const IPV6: u32 = 229;
    pub const LINUX_SLL2: u32 = 276;
}

pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const ETHERTYPE_IPV6: u16 = 0x86DD;
const ETHERTYPE_VLAN: u16 = 0x8100;
const ETHERTYPE_QINQ: u16 = 0x88A8;
const ETHERTYPE_QINQ_OLD: u16 = 0x9100;
const ETHERTYPE_MPLS: u16 = 0x8847;
const ETHERTYPE_MPLS_MULTICAST: u16 = 0x8848;
const ETHERTYPE_PPPOE_SESSION: u16 = 0x8864;

/// PPP protocol numbers (RFC 1661 and the IANA PPP DLL protocol registry).
const PPP_IPV4: u16 = 0x0021;
const PPP_IPV6: u16 = 0x0057;
const PPP_MPLS: u16 = 0x0281;
const PPP_MPLS_MULTICAST: u16 = 0x0283;

/// The pcap link-type field carries FCS information in its upper bits (bits 26-28 in
/// the pcap header, "LinkType and additional information"); pcap-parser hands the
/// whole field over, so the link type proper is its low 16 bits.
#[inline]
pub fn mask_linktype(raw: i32) -> u32 {
    (raw as u32) & 0xFFFF
}

/// Up to two VLAN ids (outer first), as carried by 802.1Q / 802.1ad (QinQ) tags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Vlans {
    pub ids: [u16; 2],
    pub count: u8,
}

impl Vlans {
    #[inline(always)]
    fn push(&mut self, id: u16) {
        // Constant indices: the tags then stay in registers (a variable index kept
        // them in memory, and reading them back whole stalled every packet).
        match self.count {
            0 => self.ids[0] = id,
            1 => self.ids[1] = id,
            _ => {}
        }
        self.count = self.count.saturating_add(1);
    }
}

/// What a link layer carries: an EtherType (IPv4/IPv6 after normalisation) and its bytes.
pub struct Link<'a> {
    pub ether_type: u16,
    pub vlans: Vlans,
    pub payload: &'a [u8],
}

/// Why a frame carried no network-layer packet we decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkSkip {
    Truncated(&'static str),
    UnsupportedLinkType(u32),
    /// 802.3 length field instead of an EtherType (LLC/SNAP frames: STP, CDP, ...).
    Llc,
    /// A BSD NULL/LOOP address family that is neither IPv4 nor IPv6.
    Family(u32),
    /// Not an IP version nibble in a raw-IP link.
    RawNotIp(u8),
    /// A PPP frame (link type 9 or 50, or a PPPoE session) carrying another protocol
    /// than IP or MPLS: LCP, IPCP, CHAP, ...
    PppProtocol(u16),
    /// An MPLS label stack over something else than IP (a pseudowire's Ethernet frame
    /// or control word), by the first nibble after the bottom label.
    MplsNotIp(u8),
}

impl LinkSkip {
    pub fn reason(self) -> String {
        match self {
            LinkSkip::Truncated(what) => format!("truncated {what} header"),
            LinkSkip::UnsupportedLinkType(t) => format!("unsupported link type {t}"),
            LinkSkip::Llc => "802.3/LLC frame (no EtherType)".to_string(),
            LinkSkip::Family(f) => format!("non-IP loopback address family {f}"),
            LinkSkip::RawNotIp(v) => format!("raw IP link with IP version {v}"),
            LinkSkip::PppProtocol(p) => format!("non-IP PPP protocol {p:#06x}{}", ppp_name(p)),
            LinkSkip::MplsNotIp(n) => {
                format!("MPLS payload that is not IP (first nibble {n}: a pseudowire)")
            }
        }
    }
}

fn ppp_name(p: u16) -> &'static str {
    match p {
        0xC021 => " (LCP)",
        0x8021 => " (IPCP)",
        0x8057 => " (IPv6CP)",
        0xC023 => " (PAP)",
        0xC223 => " (CHAP)",
        0x80FD => " (CCP)",
        0x8281 => " (MPLSCP)",
        _ => "",
    }
}

#[inline]
fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// Strips the link layer of `frame` (captured with link type `lt`).
#[inline(always)]
pub fn strip(lt: u32, frame: &[u8]) -> Result<Link<'_>, LinkSkip> {
    match lt {
        linktype::ETHERNET => ethernet(frame),
        linktype::RAW | linktype::RAW_BSD_12 | linktype::RAW_BSD_14 => raw_ip(frame),
        linktype::IPV4 => Ok(plain(ETHERTYPE_IPV4, frame)),
        linktype::IPV6 => Ok(plain(ETHERTYPE_IPV6, frame)),
        linktype::LINUX_SLL => sll(frame),
        linktype::LINUX_SLL2 => sll2(frame),
        linktype::NULL | linktype::LOOP => null_loop(frame),
        linktype::PPP => ppp(frame),
        linktype::PPP_HDLC => match frame.first() {
            Some(0x0F | 0x8F) => cisco_hdlc(frame),
            _ => ppp(frame),
        },
        linktype::C_HDLC => cisco_hdlc(frame),
        other => Err(LinkSkip::UnsupportedLinkType(other)),
    }
}

fn plain(ether_type: u16, payload: &[u8]) -> Link<'_> {
    Link {
        ether_type,
        vlans: Vlans::default(),
        payload,
    }
}

/// Follows 802.1Q/802.1ad tags starting from `ether_type`, whose payload is `rest`.
#[inline(always)]
fn after_ether_type(mut ether_type: u16, mut rest: &[u8]) -> Result<Link<'_>, LinkSkip> {
    let mut vlans = Vlans::default();
    while matches!(
        ether_type,
        ETHERTYPE_VLAN | ETHERTYPE_QINQ | ETHERTYPE_QINQ_OLD
    ) {
        if rest.len() < 4 {
            return Err(LinkSkip::Truncated("VLAN"));
        }
        vlans.push(be16(rest, 0) & 0x0FFF);
        ether_type = be16(rest, 2);
        rest = &rest[4..];
    }
    if ether_type < 0x0600 {
        // A length, not a type: 802.3 with LLC. (SLL uses small values for the same.)
        return Err(LinkSkip::Llc);
    }
    match ether_type {
        ETHERTYPE_MPLS | ETHERTYPE_MPLS_MULTICAST => {
            let (ether_type, payload) = mpls(rest)?;
            Ok(Link {
                ether_type,
                vlans,
                payload,
            })
        }
        ETHERTYPE_PPPOE_SESSION => {
            let (ether_type, payload) = pppoe_session(rest)?;
            Ok(Link {
                ether_type,
                vlans,
                payload,
            })
        }
        _ => Ok(Link {
            ether_type,
            vlans,
            payload: rest,
        }),
    }
}

/// An MPLS label stack (RFC 3032): 4-byte entries up to the one with the bottom-of-stack
/// bit, then the packet, whose kind the label does not say: IPv4 or IPv6 by its version
/// nibble, as tcpdump and Wireshark guess it.
#[cold]
fn mpls(mut rest: &[u8]) -> Result<(u16, &[u8]), LinkSkip> {
    loop {
        if rest.len() < 4 {
            return Err(LinkSkip::Truncated("MPLS label stack"));
        }
        let bottom = rest[2] & 1 == 1;
        rest = &rest[4..];
        if bottom {
            break;
        }
    }
    match rest.first().map(|b| b >> 4) {
        None => Err(LinkSkip::Truncated("MPLS payload")),
        Some(4) => Ok((ETHERTYPE_IPV4, rest)),
        Some(6) => Ok((ETHERTYPE_IPV6, rest)),
        Some(n) => Err(LinkSkip::MplsNotIp(n)),
    }
}

/// A PPPoE session frame (RFC 2516): version/type, code, session id and length (6
/// bytes), then a PPP protocol field and the packet.
#[cold]
fn pppoe_session(rest: &[u8]) -> Result<(u16, &[u8]), LinkSkip> {
    if rest.len() < 8 {
        return Err(LinkSkip::Truncated("PPPoE session"));
    }
    ppp_payload(be16(rest, 6), &rest[8..])
}

/// What a PPP protocol field `protocol` says of `payload`.
fn ppp_payload(protocol: u16, payload: &[u8]) -> Result<(u16, &[u8]), LinkSkip> {
    match protocol {
        PPP_IPV4 => Ok((ETHERTYPE_IPV4, payload)),
        PPP_IPV6 => Ok((ETHERTYPE_IPV6, payload)),
        PPP_MPLS | PPP_MPLS_MULTICAST => mpls(payload),
        other => Err(LinkSkip::PppProtocol(other)),
    }
}

/// PPP as link type 9 (and 50): the `ff 03` address and control bytes when the framing
/// kept them, then a protocol field of two bytes, or one when compressed (RFC 1661
/// section 6.5: a protocol whose first byte is odd).
fn ppp(frame: &[u8]) -> Result<Link<'_>, LinkSkip> {
    let rest = match frame {
        [0xFF, 0x03, rest @ ..] => rest,
        _ => frame,
    };
    let (protocol, payload) = match rest {
        [] => return Err(LinkSkip::Truncated("PPP")),
        [p, payload @ ..] if p & 1 == 1 => (u16::from(*p), payload),
        [_] => return Err(LinkSkip::Truncated("PPP")),
        [hi, lo, payload @ ..] => (u16::from_be_bytes([*hi, *lo]), payload),
    };
    let (ether_type, payload) = ppp_payload(protocol, payload)?;
    Ok(plain(ether_type, payload))
}

/// Cisco HDLC: an address byte (0x0F unicast, 0x8F broadcast), a control byte, then an
/// EtherType (MPLS included).
fn cisco_hdlc(frame: &[u8]) -> Result<Link<'_>, LinkSkip> {
    if frame.len() < 4 {
        return Err(LinkSkip::Truncated("Cisco HDLC"));
    }
    after_ether_type(be16(frame, 2), &frame[4..])
}

#[inline(always)]
fn ethernet(frame: &[u8]) -> Result<Link<'_>, LinkSkip> {
    if frame.len() < 14 {
        return Err(LinkSkip::Truncated("Ethernet"));
    }
    after_ether_type(be16(frame, 12), &frame[14..])
}

fn raw_ip(frame: &[u8]) -> Result<Link<'_>, LinkSkip> {
    match frame.first().map(|b| b >> 4) {
        None => Err(LinkSkip::Truncated("raw IP")),
        Some(4) => Ok(plain(ETHERTYPE_IPV4, frame)),
        Some(6) => Ok(plain(ETHERTYPE_IPV6, frame)),
        Some(v) => Err(LinkSkip::RawNotIp(v)),
    }
}

/// Linux cooked capture v1: 16 bytes, protocol (an EtherType for IP) in the last two.
/// Any ARPHRD type is accepted: the protocol field alone says what follows.
fn sll(frame: &[u8]) -> Result<Link<'_>, LinkSkip> {
    if frame.len() < 16 {
        return Err(LinkSkip::Truncated("Linux SLL"));
    }
    after_ether_type(be16(frame, 14), &frame[16..])
}

/// Linux cooked capture v2: 20 bytes, protocol in the first two.
fn sll2(frame: &[u8]) -> Result<Link<'_>, LinkSkip> {
    if frame.len() < 20 {
        return Err(LinkSkip::Truncated("Linux SLL2"));
    }
    after_ether_type(be16(frame, 0), &frame[20..])
}

/// BSD loopback: a 4-byte address family, in host byte order of the capturing machine
/// for NULL and network order for LOOP; both orders are tried since the capture may
/// come from either kind of host. IPv6 has several values (24, 28, 30) across BSDs.
fn null_loop(frame: &[u8]) -> Result<Link<'_>, LinkSkip> {
    if frame.len() < 4 {
        return Err(LinkSkip::Truncated("loopback"));
    }
    let b = [frame[0], frame[1], frame[2], frame[3]];
    let (le, be) = (u32::from_le_bytes(b), u32::from_be_bytes(b));
    let family = if le < 0x10000 { le } else { be };
    match family {
        2 => Ok(plain(ETHERTYPE_IPV4, &frame[4..])),
        24 | 28 | 30 => Ok(plain(ETHERTYPE_IPV6, &frame[4..])),
        f => Err(LinkSkip::Family(f)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qinq_tags_are_collected_outer_first() {
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&[
            0x88, 0xA8, 0x00, 0x64, 0x81, 0x00, 0x00, 0xC8, 0x08, 0x00, 0x45,
        ]);
        let l = strip(linktype::ETHERNET, &f).expect("decodes");
        assert_eq!(l.ether_type, ETHERTYPE_IPV4);
        assert_eq!((l.vlans.count, l.vlans.ids), (2, [100, 200]));
        assert_eq!(l.payload, &[0x45]);
    }

    #[test]
    fn null_family_in_either_byte_order() {
        assert_eq!(
            strip(linktype::NULL, &[2, 0, 0, 0, 0x45]).map(|l| l.ether_type),
            Ok(ETHERTYPE_IPV4)
        );
        assert_eq!(
            strip(linktype::LOOP, &[0, 0, 0, 30, 0x60]).map(|l| l.ether_type),
            Ok(ETHERTYPE_IPV6)
        );
        assert_eq!(
            strip(linktype::NULL, &[7, 0, 0, 0]).err(),
            Some(LinkSkip::Family(7))
        );
    }

    #[test]
    fn mpls_stacks_pppoe_sessions_and_ppp_reach_the_ip_packet() {
        // Ethernet, VLAN 7, two MPLS labels (the second at the bottom), IPv6.
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&[0x81, 0x00, 0x00, 0x07, 0x88, 0x47]);
        f.extend_from_slice(&[0x00, 0x01, 0x00, 0x40, 0x00, 0x02, 0x01, 0x40, 0x60]);
        let l = strip(linktype::ETHERNET, &f).expect("decodes");
        assert_eq!(
            (l.ether_type, l.vlans.count, l.payload),
            (ETHERTYPE_IPV6, 1, &[0x60][..])
        );
        // The same stack without a bottom label is a truncation, not a read past the end.
        let cut = &f[..f.len() - 5];
        assert_eq!(
            strip(linktype::ETHERNET, cut).err(),
            Some(LinkSkip::Truncated("MPLS label stack"))
        );
        // A pseudowire (control word 0) under the label.
        let mut pw = f[..f.len() - 1].to_vec();
        pw.push(0x00);
        assert_eq!(
            strip(linktype::ETHERNET, &pw).err(),
            Some(LinkSkip::MplsNotIp(0))
        );
        // PPPoE session: IPv4, then LCP.
        let mut s = vec![0u8; 12];
        s.extend_from_slice(&[
            0x88, 0x64, 0x11, 0x00, 0x12, 0x34, 0x00, 0x03, 0x00, 0x21, 0x45,
        ]);
        let l = strip(linktype::ETHERNET, &s).expect("decodes");
        assert_eq!((l.ether_type, l.payload), (ETHERTYPE_IPV4, &[0x45][..]));
        let n = s.len();
        s[n - 3..n - 1].copy_from_slice(&[0xC0, 0x21]);
        assert_eq!(
            strip(linktype::ETHERNET, &s).err(),
            Some(LinkSkip::PppProtocol(0xC021))
        );
        // PPP with and without ff 03, a compressed protocol field, MPLS over PPP.
        for frame in [
            &[0xFF, 0x03, 0x00, 0x21, 0x45][..],
            &[0x00, 0x21, 0x45],
            &[0x21, 0x45],
            &[0x02, 0x81, 0x00, 0x00, 0x01, 0xFF, 0x45],
        ] {
            let l = strip(linktype::PPP, frame).expect("decodes");
            assert_eq!((l.ether_type, l.payload), (ETHERTYPE_IPV4, &[0x45][..]));
        }
        // Cisco HDLC carrying MPLS.
        let l = strip(
            linktype::C_HDLC,
            &[0x0F, 0x00, 0x88, 0x47, 0, 0, 1, 9, 0x45],
        )
        .expect("decodes");
        assert_eq!((l.ether_type, l.payload), (ETHERTYPE_IPV4, &[0x45][..]));
    }

    #[test]
    fn fcs_bits_are_masked() {
        assert_eq!(mask_linktype(0x1400_0001), linktype::ETHERNET);
    }

    #[test]
    fn short_frames_are_truncations_not_panics() {
        for lt in [0, 1, 9, 50, 101, 104, 108, 113, 228, 229, 276] {
            for n in 0..3 {
                let _ = strip(lt, &vec![0x81; n]);
            }
        }
        assert_eq!(
            strip(linktype::LINUX_SLL2, &[0; 19]).err(),
            Some(LinkSkip::Truncated("Linux SLL2"))
        );
    }
}
