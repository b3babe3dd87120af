//! Flow keys: which header fields identify "the same message" (`--key`).
//!
//! A key is a canonical byte encoding of the selected fields, hashed with the
//! [`KeyHasher`](crate::message::KeyHasher), so the same flow always has the same
//! 64-bit key whatever the capture. The encoding starts with a tag byte naming the key
//! kind and IP version so that, e.g., an IPv4 `dst` key never equals an IPv6 one.

use std::fmt::Write as _;
use std::net::{Ipv4Addr, Ipv6Addr};

use serde::{Deserialize, Serialize};

use super::PacketFields;
use crate::message::KeyHasher;
use rbf_foundations::error::{Error, Problem, Result};

/// The header fields that make up a message key: each kind's name is
/// [`FlowKeyKind::name`], its fields [`FlowKeyKind::describe`] (also the command line's
/// help for `--key`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlowKeyKind {
    #[default]
    FiveTuple,
    FiveTupleVlan,
    SrcDst,
    Dst,
    DstPrefix,
    SrcPrefix,
}

impl FlowKeyKind {
    /// Every key kind.
    pub const ALL: [FlowKeyKind; 6] = [
        FlowKeyKind::FiveTuple,
        FlowKeyKind::FiveTupleVlan,
        FlowKeyKind::SrcDst,
        FlowKeyKind::Dst,
        FlowKeyKind::DstPrefix,
        FlowKeyKind::SrcPrefix,
    ];

    fn tag(self) -> u8 {
        match self {
            FlowKeyKind::FiveTuple => 1,
            FlowKeyKind::FiveTupleVlan => 2,
            FlowKeyKind::SrcDst => 3,
            FlowKeyKind::Dst => 4,
            FlowKeyKind::DstPrefix => 5,
            FlowKeyKind::SrcPrefix => 6,
        }
    }

    fn from_tag(tag: u8) -> Option<Self> {
        Some(match tag {
            1 => FlowKeyKind::FiveTuple,
            2 => FlowKeyKind::FiveTupleVlan,
            3 => FlowKeyKind::SrcDst,
            4 => FlowKeyKind::Dst,
            5 => FlowKeyKind::DstPrefix,
            6 => FlowKeyKind::SrcPrefix,
            _ => return None,
        })
    }

    /// The header fields, in a sentence without its full stop (the help line).
    pub const fn describe(self) -> &'static str {
        match self {
            FlowKeyKind::FiveTuple => "Protocol, source and destination address and port",
            FlowKeyKind::FiveTupleVlan => "The 5-tuple plus up to two VLAN ids (outer, inner)",
            FlowKeyKind::SrcDst => "Source and destination address",
            FlowKeyKind::Dst => "Destination address",
            FlowKeyKind::DstPrefix => {
                "Destination network (`--prefix-v4`/`--prefix-v6` bits): the campus use case"
            }
            FlowKeyKind::SrcPrefix => "Source network",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            FlowKeyKind::FiveTuple => "five-tuple",
            FlowKeyKind::FiveTupleVlan => "five-tuple-vlan",
            FlowKeyKind::SrcDst => "src-dst",
            FlowKeyKind::Dst => "dst",
            FlowKeyKind::DstPrefix => "dst-prefix",
            FlowKeyKind::SrcPrefix => "src-prefix",
        }
    }
}

/// A key kind with its prefix lengths.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeySpec {
    pub kind: FlowKeyKind,
    pub prefix_v4: u8,
    pub prefix_v6: u8,
}

impl Default for KeySpec {
    fn default() -> Self {
        KeySpec {
            kind: FlowKeyKind::FiveTuple,
            prefix_v4: 24,
            prefix_v6: 48,
        }
    }
}

/// Longest canonical key: tag, 2 × 16 address bytes, protocol, 2 ports, 2 VLAN ids, count.
pub const MAX_KEY_LEN: usize = 1 + 32 + 1 + 4 + 4 + 1;

/// Bytes of the IPv4 5-tuple key: tag, two addresses, protocol, two ports.
const FIVE_TUPLE_V4_LEN: usize = 1 + 4 + 4 + 1 + 2 + 2;

/// Canonical key bytes in a fixed buffer (no allocation per packet).
#[derive(Clone, Copy, Debug)]
pub struct KeyBytes {
    buf: [u8; MAX_KEY_LEN],
    len: u8,
}

impl KeyBytes {
    pub fn as_slice(&self) -> &[u8] {
        &self.buf[..self.len as usize]
    }
}

/// Writes key bytes at a running offset.
struct Writer {
    buf: [u8; MAX_KEY_LEN],
    len: usize,
}

impl Writer {
    #[inline(always)]
    fn put(&mut self, b: &[u8]) {
        self.buf[self.len..self.len + b.len()].copy_from_slice(b);
        self.len += b.len();
    }
}

fn masked(addr: &[u8; 16], bytes: usize, bits: u8) -> [u8; 16] {
    let mut out = [0u8; 16];
    let bits = usize::from(bits).min(bytes * 8);
    let full = bits / 8;
    out[..full].copy_from_slice(&addr[..full]);
    if bits % 8 != 0 {
        out[full] = addr[full] & (0xFFu8 << (8 - bits % 8));
    }
    out
}

impl KeySpec {
    pub fn new(kind: FlowKeyKind, prefix_v4: u8, prefix_v6: u8) -> Result<Self> {
        if prefix_v4 > 32 {
            return Err(Error::setting(
                "prefix-v4",
                Problem::range("must be 0..=32 bits", prefix_v4),
            ));
        }
        if prefix_v6 > 128 {
            return Err(Error::setting(
                "prefix-v6",
                Problem::range("must be 0..=128 bits", prefix_v6),
            ));
        }
        Ok(KeySpec {
            kind,
            prefix_v4,
            prefix_v6,
        })
    }

    pub fn describe(&self) -> String {
        match self.kind {
            FlowKeyKind::DstPrefix | FlowKeyKind::SrcPrefix => format!(
                "{} (/{} IPv4, /{} IPv6)",
                self.kind.name(),
                self.prefix_v4,
                self.prefix_v6
            ),
            k => k.name().to_string(),
        }
    }

    /// The canonical bytes of `f`'s key.
    #[inline(always)]
    pub fn encode(&self, f: &PacketFields) -> KeyBytes {
        // One copy of the writer per address length: every offset is then a
        // constant, which matters at tens of millions of packets a second.
        if f.ipv6 {
            self.encode_with::<16>(f)
        } else {
            self.encode_with::<4>(f)
        }
    }

    #[inline(always)]
    fn encode_with<const ALEN: usize>(&self, f: &PacketFields) -> KeyBytes {
        if ALEN == 4 && self.kind == FlowKeyKind::FiveTuple {
            return self.five_tuple_v4(f);
        }
        let mut w = Writer {
            buf: [0; MAX_KEY_LEN],
            len: 0,
        };
        w.put(&[self.kind.tag() << 1 | u8::from(f.ipv6)]);
        match self.kind {
            FlowKeyKind::FiveTuple | FlowKeyKind::FiveTupleVlan => {
                w.put(&f.src[..ALEN]);
                w.put(&f.dst[..ALEN]);
                w.put(&[f.protocol]);
                w.put(&f.src_port.to_be_bytes());
                w.put(&f.dst_port.to_be_bytes());
                if self.kind == FlowKeyKind::FiveTupleVlan {
                    let n = f.vlans.count.min(2);
                    w.put(&[n]);
                    for id in &f.vlans.ids[..n as usize] {
                        w.put(&id.to_be_bytes());
                    }
                }
            }
            FlowKeyKind::SrcDst => {
                w.put(&f.src[..ALEN]);
                w.put(&f.dst[..ALEN]);
            }
            FlowKeyKind::Dst => w.put(&f.dst[..ALEN]),
            FlowKeyKind::DstPrefix | FlowKeyKind::SrcPrefix => {
                let addr = if self.kind == FlowKeyKind::DstPrefix {
                    &f.dst
                } else {
                    &f.src
                };
                let bits = if f.ipv6 {
                    self.prefix_v6
                } else {
                    self.prefix_v4
                };
                w.put(&masked(addr, ALEN, bits)[..ALEN]);
                w.put(&[bits]);
            }
        }
        KeyBytes {
            buf: w.buf,
            len: w.len as u8,
        }
    }

    /// The hash of `f`'s key bytes ([`KeySpec::encode`]): the IPv4 5-tuple (the
    /// commonest key by far) is hashed in registers, never stored.
    #[inline(always)]
    pub fn hash(&self, f: &PacketFields, hasher: &KeyHasher) -> u64 {
        if !f.ipv6 && self.kind == FlowKeyKind::FiveTuple {
            return hasher.hash_short(self.five_tuple_v4_word(f), FIVE_TUPLE_V4_LEN);
        }
        hasher.hash(self.encode(f).as_slice())
    }

    /// The IPv4 5-tuple key (the commonest by far), the same bytes as the writer
    /// makes, put together in a register and stored at once: the hash reads them back
    /// as 8-byte words, which a store of a byte here and two there makes wait.
    #[inline(always)]
    fn five_tuple_v4(&self, f: &PacketFields) -> KeyBytes {
        let mut buf = [0u8; MAX_KEY_LEN];
        buf[..16].copy_from_slice(&self.five_tuple_v4_word(f).to_le_bytes());
        KeyBytes {
            buf,
            len: FIVE_TUPLE_V4_LEN as u8,
        }
    }

    /// The IPv4 5-tuple key's bytes, little-endian in a word (the last two are 0).
    #[inline(always)]
    fn five_tuple_v4_word(&self, f: &PacketFields) -> u128 {
        let le32 = |a: &[u8; 16]| u128::from(u32::from_le_bytes([a[0], a[1], a[2], a[3]]));
        u128::from(self.kind.tag() << 1)
            | le32(&f.src) << 8
            | le32(&f.dst) << 40
            | u128::from(f.protocol) << 72
            | u128::from(u16::from_le_bytes(f.src_port.to_be_bytes())) << 80
            | u128::from(u16::from_le_bytes(f.dst_port.to_be_bytes())) << 96
    }

    /// A readable name of `f`'s key, for the key dictionary and reports.
    pub fn render(&self, f: &PacketFields) -> String {
        let addr = |a: &[u8; 16]| -> String {
            if f.ipv6 {
                Ipv6Addr::from(*a).to_string()
            } else {
                Ipv4Addr::new(a[0], a[1], a[2], a[3]).to_string()
            }
        };
        let ep = |a: &[u8; 16], port: u16| {
            if f.ipv6 {
                format!("[{}]:{port}", addr(a))
            } else {
                format!("{}:{port}", addr(a))
            }
        };
        let mut s = String::new();
        match self.kind {
            FlowKeyKind::FiveTuple | FlowKeyKind::FiveTupleVlan => {
                let _ = write!(
                    s,
                    "{} {} -> {}",
                    protocol_name(f.protocol),
                    ep(&f.src, f.src_port),
                    ep(&f.dst, f.dst_port)
                );
                if self.kind == FlowKeyKind::FiveTupleVlan {
                    for id in &f.vlans.ids[..f.vlans.count.min(2) as usize] {
                        let _ = write!(s, " vlan {id}");
                    }
                }
            }
            FlowKeyKind::SrcDst => {
                let _ = write!(s, "{} -> {}", addr(&f.src), addr(&f.dst));
            }
            FlowKeyKind::Dst => s = addr(&f.dst),
            FlowKeyKind::DstPrefix | FlowKeyKind::SrcPrefix => {
                let (a, bits) = (
                    if self.kind == FlowKeyKind::DstPrefix {
                        &f.dst
                    } else {
                        &f.src
                    },
                    if f.ipv6 {
                        self.prefix_v6
                    } else {
                        self.prefix_v4
                    },
                );
                let m = masked(a, if f.ipv6 { 16 } else { 4 }, bits);
                let _ = write!(s, "{}/{bits}", addr(&m));
            }
        }
        s
    }
}

/// The readable name of a canonical key encoding: [`KeySpec::render`] of the fields
/// [`KeySpec::encode`] wrote (for readers that hand out encoded keys, e.g. flow logs).
pub fn render_encoded(bytes: &[u8]) -> String {
    decode(bytes).map_or_else(
        || bytes.iter().map(|b| format!("{b:02x}")).collect(),
        |(spec, f)| spec.render(&f),
    )
}

fn decode(bytes: &[u8]) -> Option<(KeySpec, PacketFields)> {
    let (&tag, mut rest) = bytes.split_first()?;
    let kind = FlowKeyKind::from_tag(tag >> 1)?;
    let mut f = PacketFields {
        ipv6: tag & 1 == 1,
        ..Default::default()
    };
    let alen = if f.ipv6 { 16 } else { 4 };
    let mut take = |n: usize| -> Option<&[u8]> {
        let (a, b) = rest.split_at_checked(n)?;
        rest = b;
        Some(a)
    };
    let mut spec = KeySpec {
        kind,
        ..KeySpec::default()
    };
    match kind {
        FlowKeyKind::FiveTuple | FlowKeyKind::FiveTupleVlan => {
            f.src[..alen].copy_from_slice(take(alen)?);
            f.dst[..alen].copy_from_slice(take(alen)?);
            f.protocol = take(1)?[0];
            f.src_port = u16::from_be_bytes(take(2)?.try_into().ok()?);
            f.dst_port = u16::from_be_bytes(take(2)?.try_into().ok()?);
            if kind == FlowKeyKind::FiveTupleVlan {
                f.vlans.count = take(1)?[0].min(2);
                for i in 0..f.vlans.count as usize {
                    f.vlans.ids[i] = u16::from_be_bytes(take(2)?.try_into().ok()?);
                }
            }
        }
        FlowKeyKind::SrcDst => {
            f.src[..alen].copy_from_slice(take(alen)?);
            f.dst[..alen].copy_from_slice(take(alen)?);
        }
        FlowKeyKind::Dst => f.dst[..alen].copy_from_slice(take(alen)?),
        FlowKeyKind::DstPrefix | FlowKeyKind::SrcPrefix => {
            let addr = take(alen)?.to_vec();
            let bits = take(1)?[0];
            if kind == FlowKeyKind::DstPrefix {
                f.dst[..alen].copy_from_slice(&addr);
            } else {
                f.src[..alen].copy_from_slice(&addr);
            }
            if f.ipv6 {
                spec.prefix_v6 = bits;
            } else {
                spec.prefix_v4 = bits;
            }
        }
    }
    Some((spec, f))
}

fn protocol_name(p: u8) -> String {
    match p {
        1 => "icmp".into(),
        6 => "tcp".into(),
        17 => "udp".into(),
        47 => "gre".into(),
        58 => "icmpv6".into(),
        132 => "sctp".into(),
        p => format!("proto-{p}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(src: [u8; 4], dst: [u8; 4], sp: u16, dp: u16) -> PacketFields {
        let mut f = PacketFields {
            protocol: 6,
            src_port: sp,
            dst_port: dp,
            ..Default::default()
        };
        f.src[..4].copy_from_slice(&src);
        f.dst[..4].copy_from_slice(&dst);
        f
    }

    #[test]
    fn prefix_keys_group_a_subnet() {
        let spec = KeySpec::new(FlowKeyKind::DstPrefix, 24, 48).expect("valid");
        let a = v4([1, 1, 1, 1], [10, 0, 7, 1], 1, 2);
        let b = v4([2, 2, 2, 2], [10, 0, 7, 200], 3, 4);
        let c = v4([2, 2, 2, 2], [10, 0, 8, 200], 3, 4);
        assert_eq!(spec.encode(&a).as_slice(), spec.encode(&b).as_slice());
        assert_ne!(spec.encode(&a).as_slice(), spec.encode(&c).as_slice());
        assert_eq!(spec.render(&b), "10.0.7.0/24");
        let odd = KeySpec::new(FlowKeyKind::DstPrefix, 20, 48).expect("valid");
        assert_eq!(odd.render(&c), "10.0.0.0/20");
    }

    #[test]
    fn five_tuple_distinguishes_ports_and_direction() {
        let spec = KeySpec::default();
        let a = v4([1, 2, 3, 4], [5, 6, 7, 8], 1000, 80);
        let back = v4([5, 6, 7, 8], [1, 2, 3, 4], 80, 1000);
        assert_ne!(spec.encode(&a).as_slice(), spec.encode(&back).as_slice());
        assert_eq!(spec.render(&a), "tcp 1.2.3.4:1000 -> 5.6.7.8:80");
        let dst = KeySpec::new(FlowKeyKind::Dst, 24, 48).expect("valid");
        let mut other_port = a;
        other_port.dst_port = 443;
        assert_eq!(
            dst.encode(&a).as_slice(),
            dst.encode(&other_port).as_slice()
        );
    }

    #[test]
    fn encoded_keys_render_like_the_fields() {
        let mut f = v4([1, 2, 3, 4], [5, 6, 7, 8], 1000, 80);
        f.vlans.count = 1;
        f.vlans.ids[0] = 42;
        for kind in FlowKeyKind::ALL {
            let spec = KeySpec::new(kind, 20, 40).expect("valid");
            assert_eq!(
                render_encoded(spec.encode(&f).as_slice()),
                spec.render(&f),
                "{kind:?}"
            );
        }
        assert_eq!(render_encoded(&[0xFF, 1]), "ff01");
    }

    #[test]
    fn the_ipv4_five_tuple_shortcut_writes_the_general_bytes() {
        let spec = KeySpec::default();
        let f = v4([1, 2, 3, 4], [250, 6, 7, 8], 0xABCD, 0x0150);
        let vlan = KeySpec {
            kind: FlowKeyKind::FiveTupleVlan,
            ..KeySpec::default()
        };
        // The 5-tuple with VLANs is written by the general writer: the same bytes
        // up to the VLAN count it appends.
        let general = vlan.encode(&f);
        let mut expected = general.as_slice()[..14].to_vec();
        expected[0] = spec.kind.tag() << 1;
        assert_eq!(spec.encode(&f).as_slice(), expected.as_slice());
        assert_eq!(
            spec.encode(&f).as_slice(),
            [2, 1, 2, 3, 4, 250, 6, 7, 8, 6, 0xAB, 0xCD, 0x01, 0x50]
        );
    }

    #[test]
    fn keys_hash_as_their_bytes_hash() {
        let mut rng = crate::synth::Rng::seed(7);
        let kinds = [
            FlowKeyKind::FiveTuple,
            FlowKeyKind::FiveTupleVlan,
            FlowKeyKind::SrcDst,
            FlowKeyKind::Dst,
        ];
        for i in 0..20_000u64 {
            let b = rng.next_u64().to_le_bytes();
            let mut f = v4([b[0], b[1], b[2], b[3]], [b[4], b[5], b[6], b[7]], 0, 0);
            f.src_port = rng.next_u64() as u16;
            f.dst_port = rng.next_u64() as u16;
            f.protocol = rng.next_u64() as u8;
            f.ipv6 = i % 5 == 0;
            if f.ipv6 {
                f.src[4..].copy_from_slice(&rng.next_u64().to_le_bytes().repeat(2)[..12]);
            }
            let spec = KeySpec {
                kind: kinds[(i % 4) as usize],
                ..KeySpec::default()
            };
            let hasher = KeyHasher::with_seed(rng.next_u64());
            let want = hasher.hash(spec.encode(&f).as_slice());
            assert_eq!(spec.hash(&f, &hasher), want, "{spec:?} {f:?}");
        }
    }

    #[test]
    fn bad_prefixes_name_the_setting() {
        let e = KeySpec::new(FlowKeyKind::DstPrefix, 33, 48).expect_err("invalid");
        assert!(e.to_string().contains("prefix-v4"));
    }
}
