//! Helpers shared by the ingest tests: small capture writers (written from the pcap and
//! pcapng specifications, independently of the reader under test), packet builders,
//! and a counting pass over a message source.
#![allow(dead_code)]

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use rbf_data::ingest::packet::key::{FlowKeyKind, KeySpec};
use rbf_data::ingest::{self, Format, IngestOptions, IngestSummary};
use rbf_data::message::Message;

pub fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

pub use crate::scratch::Scratch;

/// A fresh scratch directory for one test, removed when it passes.
pub fn scratch(test: &str) -> Scratch {
    Scratch::new(&format!("ingest-{test}"))
}

pub fn options(format: Format, kind: FlowKeyKind) -> IngestOptions {
    IngestOptions {
        format,
        key: KeySpec::new(kind, 24, 48).expect("valid spec"),
        ..Default::default()
    }
}

/// All messages of `path` and the reader's summary.
pub fn read(path: &Path, o: &IngestOptions) -> (Vec<Message>, IngestSummary) {
    let mut src = ingest::open(path, o).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    let v: Vec<Message> = (&mut src).collect();
    (v, src.summary().clone())
}

pub fn distinct(ms: &[Message]) -> usize {
    ms.iter().map(|m| m.key).collect::<HashSet<_>>().len()
}

/// Legacy pcap file: `nanos` selects the 0xa1b23c4d magic, `big_endian` the byte order.
pub fn pcap(
    linktype: u32,
    nanos: bool,
    big_endian: bool,
    packets: &[(u32, u32, Vec<u8>)],
) -> Vec<u8> {
    let w32 = |v: &mut Vec<u8>, x: u32| {
        v.extend_from_slice(&if big_endian {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        })
    };
    let w16 = |v: &mut Vec<u8>, x: u16| {
        v.extend_from_slice(&if big_endian {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        })
    };
    let mut v = Vec::new();
    w32(&mut v, if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 });
    w16(&mut v, 2);
    w16(&mut v, 4);
    w32(&mut v, 0);
    w32(&mut v, 0);
    w32(&mut v, 65535);
    w32(&mut v, linktype);
    for (sec, frac, data) in packets {
        w32(&mut v, *sec);
        w32(&mut v, *frac);
        w32(&mut v, data.len() as u32);
        w32(&mut v, data.len() as u32);
        v.extend_from_slice(data);
    }
    v
}

/// Little-endian pcapng builder.
#[derive(Default)]
pub struct PcapNg {
    pub bytes: Vec<u8>,
}

impl PcapNg {
    fn block(&mut self, kind: u32, body: &[u8]) {
        let pad = (4 - body.len() % 4) % 4;
        let len = (12 + body.len() + pad) as u32;
        self.bytes.extend_from_slice(&kind.to_le_bytes());
        self.bytes.extend_from_slice(&len.to_le_bytes());
        self.bytes.extend_from_slice(body);
        self.bytes.extend(std::iter::repeat_n(0, pad));
        self.bytes.extend_from_slice(&len.to_le_bytes());
    }

    pub fn section(&mut self) -> &mut Self {
        let mut b = Vec::new();
        b.extend_from_slice(&0x1A2B_3C4Du32.to_le_bytes());
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&(-1i64).to_le_bytes());
        self.block(0x0A0D_0D0A, &b);
        self
    }

    /// Interface with optional if_tsresol (option 9) and if_tsoffset (option 14).
    pub fn interface(
        &mut self,
        linktype: u16,
        tsresol: Option<u8>,
        tsoffset: Option<i64>,
    ) -> &mut Self {
        let mut b = Vec::new();
        b.extend_from_slice(&linktype.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&65535u32.to_le_bytes());
        if let Some(r) = tsresol {
            b.extend_from_slice(&9u16.to_le_bytes());
            b.extend_from_slice(&1u16.to_le_bytes());
            b.extend_from_slice(&[r, 0, 0, 0]);
        }
        if let Some(o) = tsoffset {
            b.extend_from_slice(&14u16.to_le_bytes());
            b.extend_from_slice(&8u16.to_le_bytes());
            b.extend_from_slice(&o.to_le_bytes());
        }
        if tsresol.is_some() || tsoffset.is_some() {
            b.extend_from_slice(&[0, 0, 0, 0]);
        }
        self.block(1, &b);
        self
    }

    pub fn packet(&mut self, if_id: u32, ts: u64, data: &[u8]) -> &mut Self {
        let mut b = Vec::new();
        b.extend_from_slice(&if_id.to_le_bytes());
        b.extend_from_slice(&((ts >> 32) as u32).to_le_bytes());
        b.extend_from_slice(&(ts as u32).to_le_bytes());
        b.extend_from_slice(&(data.len() as u32).to_le_bytes());
        b.extend_from_slice(&(data.len() as u32).to_le_bytes());
        b.extend_from_slice(data);
        b.extend(std::iter::repeat_n(0, (4 - data.len() % 4) % 4));
        self.block(6, &b);
        self
    }
}

/// IPv4 header (no options) + 4 bytes of ports (TCP) + padding.
pub fn ipv4_tcp(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16) -> Vec<u8> {
    let total = 20u16 + 20;
    let mut v = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 6, 0, 0];
    v[2..4].copy_from_slice(&total.to_be_bytes());
    v.extend_from_slice(&src);
    v.extend_from_slice(&dst);
    v.extend_from_slice(&sport.to_be_bytes());
    v.extend_from_slice(&dport.to_be_bytes());
    v.extend_from_slice(&[0; 8]);
    v.extend_from_slice(&[0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0]);
    v
}

/// IPv6 header + UDP header.
pub fn ipv6_udp(src: [u8; 16], dst: [u8; 16], sport: u16, dport: u16) -> Vec<u8> {
    let mut v = vec![0x60, 0, 0, 0, 0, 8, 17, 64];
    v.extend_from_slice(&src);
    v.extend_from_slice(&dst);
    v.extend_from_slice(&sport.to_be_bytes());
    v.extend_from_slice(&dport.to_be_bytes());
    v.extend_from_slice(&[0, 8, 0, 0]);
    v
}

/// Ethernet II frame around `payload`, with optional VLAN tags (TPID, id), outer first.
pub fn ethernet(ether_type: u16, tags: &[(u16, u16)], payload: &[u8]) -> Vec<u8> {
    let mut v = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2];
    for (tpid, id) in tags {
        v.extend_from_slice(&tpid.to_be_bytes());
        v.extend_from_slice(&id.to_be_bytes());
    }
    v.extend_from_slice(&ether_type.to_be_bytes());
    v.extend_from_slice(payload);
    v
}

/// A tiny deterministic generator for the mutation tests.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}
