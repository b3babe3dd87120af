//! Packet captures: every capture in tests/data (copied from shared/data/pcap with
//! their licence files). Frame, IP packet and distinct-key counts are compared with
//! tshark's in `ingest_crosscheck`; here: resolutions, skip and malformed reasons,
//! damage, link types, timestamps, flows.
//!
//! First/last timestamps below are tshark's `frame.time_epoch`.

use std::collections::HashSet;

use crate::ingest_support::*;
use rbf_data::ingest::packet::flows::FlowTimeouts;
use rbf_data::ingest::packet::key::FlowKeyKind;
use rbf_data::ingest::{self, Format};

const KINDS: [FlowKeyKind; 6] = FlowKeyKind::ALL;

struct Expect {
    file: &'static str,
    /// Timestamp units per second.
    resolution: u64,
    skipped: &'static [(&'static str, u64)],
    malformed: u64,
}

const CAPTURES: &[Expect] = &[
    Expect {
        file: "tcpdump_802.1ad_QinQ.pcap",
        resolution: 1_000_000,
        skipped: &[("non-IP EtherType 0x0806 (ARP)", 2)],
        malformed: 0,
    },
    Expect {
        file: "tcpdump_aoe-oobr-1_caplen_gt_origlen.pcap",
        resolution: 1_000_000,
        skipped: &[("non-IP EtherType 0x88a2 (ATA over Ethernet)", 1)],
        malformed: 0,
    },
    Expect {
        file: "tcpdump_resp_1_benchmark_sll.pcap",
        resolution: 1_000_000,
        skipped: &[],
        malformed: 0,
    },
    Expect {
        file: "tcpdump_tcp-handshake-nano_sll.pcap",
        resolution: 1_000_000_000,
        skipped: &[],
        malformed: 0,
    },
    Expect {
        file: "zeek_gre-aruba_vlan_gre.pcap",
        resolution: 1_000_000,
        skipped: &[],
        malformed: 0,
    },
    Expect {
        file: "zeek_linux_dlt_sll2.pcap",
        resolution: 1_000_000,
        skipped: &[
            ("non-IP EtherType 0x0806 (ARP)", 1),
            ("non-IP EtherType 0x8035 (RARP)", 1),
        ],
        malformed: 0,
    },
    Expect {
        file: "zeek_trunc_ip4-trunc.pcap",
        resolution: 1_000_000,
        skipped: &[],
        malformed: 1,
    },
    Expect {
        file: "zeek_trunc_ip6-trunc.pcap",
        resolution: 1_000_000,
        skipped: &[],
        malformed: 1,
    },
    Expect {
        file: "zeek_trunc_trunc-hdr_snaplen1.pcap",
        resolution: 1_000_000,
        skipped: &[],
        malformed: 1,
    },
    Expect {
        file: "zeek_vlan-collisions.pcap",
        resolution: 1_000_000,
        skipped: &[],
        malformed: 0,
    },
    Expect {
        file: "pcapparser_err-buffertoosmall.pcapng",
        resolution: 1_000_000,
        skipped: &[],
        malformed: 0,
    },
    Expect {
        file: "pcapparser_test001-be.pcapng",
        resolution: 1_000_000,
        skipped: &[],
        malformed: 0,
    },
    Expect {
        file: "tcpdump_of13_ericsson.pcapng",
        resolution: 1_000_000,
        skipped: &[],
        malformed: 0,
    },
    Expect {
        file: "zeek_irc-dcc-send.pcapng",
        resolution: 1_000_000,
        skipped: &[],
        malformed: 0,
    },
    Expect {
        file: "zeek_echo-connections.pcap.zst",
        resolution: 1_000_000,
        skipped: &[],
        malformed: 0,
    },
];

#[test]
fn every_capture_has_its_resolution_and_reasons() {
    for e in CAPTURES {
        for kind in KINDS {
            let (_, s) = read(&data(e.file), &options(Format::Auto, kind));
            assert_eq!(s.format.name(), "pcap", "{}", e.file);
            assert_eq!(s.time_resolutions, vec![e.resolution], "{}", e.file);
            assert_eq!(
                s.malformed, e.malformed,
                "{} malformed: {:?}",
                e.file, s.examples
            );
            let skipped: Vec<(&str, u64)> =
                s.skipped.iter().map(|(k, v)| (k.as_str(), *v)).collect();
            assert_eq!(skipped, e.skipped, "{}", e.file);
            assert!(s.damage.is_none(), "{}: {:?}", e.file, s.damage);
            // Everything read is accounted for.
            assert_eq!(
                s.messages + s.malformed + s.skipped.values().sum::<u64>(),
                s.records,
                "{}",
                e.file
            );
        }
    }
}

#[test]
fn truncated_packets_are_reported_with_offset_and_reason() {
    let (_, s) = read(
        &data("zeek_trunc_ip4-trunc.pcap"),
        &options(Format::Auto, FlowKeyKind::FiveTuple),
    );
    assert_eq!(
        s.malformed_reasons.keys().collect::<Vec<_>>(),
        ["undecodable IP header: truncated"]
    );
    assert!(s.examples[0].contains("byte offset 24"), "{:?}", s.examples);
    assert!(s.warnings().iter().any(|w| w.contains("malformed")));
    let (_, s) = read(
        &data("zeek_trunc_trunc-hdr_snaplen1.pcap"),
        &options(Format::Auto, FlowKeyKind::FiveTuple),
    );
    assert_eq!(
        s.malformed_reasons.keys().collect::<Vec<_>>(),
        ["truncated Ethernet header"]
    );
}

fn nanos(ms: &[rbf_data::message::Message], i: usize) -> u64 {
    ms[i].time.nanos().expect("captures have timestamps")
}

#[test]
fn timestamps_keep_their_resolution() {
    let o = options(Format::Auto, FlowKeyKind::FiveTuple);
    let (ms, _) = read(&data("tcpdump_tcp-handshake-nano_sll.pcap"), &o);
    assert_eq!(nanos(&ms, 0), 1_418_145_369_924_505_488);
    assert_eq!(nanos(&ms, ms.len() - 1), 1_418_145_370_052_115_157);
    let (ms, _) = read(&data("zeek_irc-dcc-send.pcapng"), &o);
    assert_eq!(nanos(&ms, 0), 1_753_735_709_964_970_000);
    assert_eq!(nanos(&ms, ms.len() - 1), 1_753_735_879_839_923_000);
    let (ms, _) = read(&data("tcpdump_of13_ericsson.pcapng"), &o);
    assert_eq!(nanos(&ms, 0), 1_382_197_969_322_823_000);
    assert_eq!(nanos(&ms, ms.len() - 1), 1_383_424_642_396_699_000);
    let (ms, _) = read(&data("zeek_linux_dlt_sll2.pcap"), &o);
    assert_eq!(nanos(&ms, 0), 1_660_534_249_872_259_000);
    assert_eq!(nanos(&ms, 3), 1_660_534_264_088_594_000);
}

fn write(dir: &std::path::Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("write");
    p
}

#[test]
fn link_types_without_an_etherparse_parser() {
    let dir = scratch("links");
    let ip = ipv4_tcp([10, 0, 0, 1], [10, 0, 1, 2], 1234, 80);
    let ip6 = ipv6_udp(
        [0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
        [0x20, 0x01, 0x0d, 0xb8, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
        53,
        5353,
    );
    let with = |prefix: &[u8], p: &[u8]| [prefix, p].concat();
    // SLL with an ARPHRD type etherparse rejects (0xFFFE, "none"), then SLL2.
    let mut sll = vec![0, 0, 0xFF, 0xFE, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0, 0x08, 0x00];
    sll.extend_from_slice(&ip);
    let mut sll2 = vec![
        0x86, 0xDD, 0, 0, 0, 0, 0, 2, 0xFF, 0xFE, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0,
    ];
    sll2.extend_from_slice(&ip6);
    let cases: Vec<(&str, u32, Vec<u8>)> = vec![
        ("null-le", 0, with(&[2, 0, 0, 0], &ip)),
        ("null-be-v6", 0, with(&[0, 0, 0, 30], &ip6)),
        ("loop", 108, with(&[0, 0, 0, 2], &ip)),
        ("raw", 101, ip.clone()),
        ("raw-v6", 101, ip6.clone()),
        ("ipv4", 228, ip.clone()),
        ("ipv6", 229, ip6.clone()),
        ("sll-arphrd-none", 113, sll),
        ("sll2", 276, sll2),
        // Ethernet with the FCS-present bits set in the link-type field.
        ("ethernet-fcs", 0x1400_0001, ethernet(0x0800, &[], &ip)),
    ];
    for (name, lt, frame) in cases {
        let p = write(
            &dir,
            &format!("{name}.pcap"),
            &pcap(lt, false, false, &[(1, 2, frame)]),
        );
        let mut o = options(Format::Auto, FlowKeyKind::FiveTuple);
        o.keep_keys = true;
        let mut src = ingest::open(&p, &o).expect("opens");
        let ms: Vec<_> = (&mut src).collect();
        assert_eq!(ms.len(), 1, "{name}: {:?}", src.summary());
        let shown = src.dictionary().expect("kept").display(ms[0].key);
        let want = if name.contains("v6") || name == "ipv6" || name == "sll2" {
            "udp [2001:db8:1::1]:53 -> [2001:db8:2::2]:5353"
        } else {
            "tcp 10.0.0.1:1234 -> 10.0.1.2:80"
        };
        assert_eq!(shown, want, "{name}");
        assert_eq!(ms[0].time.nanos(), Some(1_000_002_000), "{name}");
    }
    // An unsupported link type is counted by reason, not a panic or an error.
    let p = write(
        &dir,
        "tokenring.pcap",
        &pcap(6, false, false, &[(1, 0, ip.clone())]),
    );
    let (ms, s) = read(&p, &options(Format::Auto, FlowKeyKind::FiveTuple));
    assert!(ms.is_empty());
    assert_eq!(s.skipped.get("unsupported link type 6"), Some(&1));
}

#[test]
fn both_byte_orders_and_nanosecond_legacy_pcap() {
    let dir = scratch("orders");
    let frame = ethernet(0x0800, &[], &ipv4_tcp([1, 1, 1, 1], [2, 2, 2, 2], 1, 2));
    for (be, nanos) in [(false, false), (true, false), (false, true), (true, true)] {
        let p = write(
            &dir,
            &format!("o-{be}-{nanos}.pcap"),
            &pcap(1, nanos, be, &[(10, 7, frame.clone())]),
        );
        let (ms, s) = read(&p, &options(Format::Auto, FlowKeyKind::FiveTuple));
        assert_eq!(ms.len(), 1, "be {be} nanos {nanos}");
        let want = if nanos {
            10_000_000_007
        } else {
            10_000_007_000
        };
        assert_eq!(ms[0].time.nanos(), Some(want));
        assert_eq!(
            s.time_resolutions,
            vec![if nanos { 1_000_000_000 } else { 1_000_000 }]
        );
    }
}

#[test]
fn qinq_and_vlan_keys() {
    let dir = scratch("qinq");
    let ip = ipv4_tcp([10, 0, 0, 1], [10, 0, 0, 2], 5, 6);
    let frames = vec![
        (1, 0, ethernet(0x0800, &[(0x88A8, 100), (0x8100, 200)], &ip)),
        (1, 1, ethernet(0x0800, &[(0x88A8, 100), (0x8100, 201)], &ip)),
        (1, 2, ethernet(0x0800, &[(0x8100, 100)], &ip)),
        (1, 3, ethernet(0x0800, &[], &ip)),
    ];
    let p = write(&dir, "qinq.pcap", &pcap(1, false, false, &frames));
    let (ms, _) = read(&p, &options(Format::Auto, FlowKeyKind::FiveTuple));
    assert_eq!(distinct(&ms), 1);
    let mut o = options(Format::Auto, FlowKeyKind::FiveTupleVlan);
    o.keep_keys = true;
    let mut src = ingest::open(&p, &o).expect("opens");
    let ms: Vec<_> = (&mut src).collect();
    assert_eq!(distinct(&ms), 4);
    let d = src.dictionary().expect("kept");
    assert_eq!(
        d.display(ms[0].key),
        "tcp 10.0.0.1:5 -> 10.0.0.2:6 vlan 100 vlan 200"
    );
}

#[test]
fn pcapng_sections_interfaces_resolution_and_offset() {
    let dir = scratch("pcapng");
    let a = ethernet(0x0800, &[], &ipv4_tcp([1, 0, 0, 1], [2, 0, 0, 1], 1, 2));
    let b = ipv6_udp([1; 16], [2; 16], 3, 4);
    let mut ng = PcapNg::default();
    ng.section()
        .interface(1, None, None) // default: microseconds
        .interface(101, Some(9), Some(100)) // nanoseconds, +100 s
        .packet(0, 5_000_001, &a)
        .packet(1, 7_000_000_003, &b)
        .section() // interface ids restart per section
        .interface(101, Some(0x83), None) // 2^-3 s units
        .packet(0, 12, &b);
    let p = write(&dir, "multi.pcapng", &ng.bytes);
    let (ms, s) = read(&p, &options(Format::Auto, FlowKeyKind::Dst));
    assert_eq!(s.records, 3);
    let times: Vec<_> = ms.iter().map(|m| m.time.nanos()).collect();
    assert_eq!(
        times,
        [
            Some(5_000_001_000),
            Some(107_000_000_003),
            Some(1_500_000_000)
        ]
    );
    assert_eq!(s.time_resolutions, vec![8, 1_000_000, 1_000_000_000]);
    assert_eq!(distinct(&ms), 2);
    // A packet on an interface the section does not define is malformed, not a panic.
    let mut bad = PcapNg::default();
    bad.section().interface(1, None, None).packet(3, 1, &a);
    let p = write(&dir, "badif.pcapng", &bad.bytes);
    let (ms, s) = read(&p, &options(Format::Auto, FlowKeyKind::Dst));
    assert!(ms.is_empty());
    assert_eq!(s.malformed, 1);
    assert!(s.examples[0].contains("interface 3"), "{:?}", s.examples);
}

/// Offsets of the records of a little-endian legacy pcap, by walking the record headers.
fn record_offsets(bytes: &[u8]) -> Vec<usize> {
    let mut at = 24;
    let mut v = Vec::new();
    while at + 16 <= bytes.len() {
        v.push(at);
        let caplen =
            u32::from_le_bytes(bytes[at + 8..at + 12].try_into().expect("4 bytes")) as usize;
        at += 16 + caplen;
    }
    v
}

#[test]
fn a_truncated_file_yields_every_packet_before_the_damage() {
    let dir = scratch("trunc");
    let bytes = std::fs::read(data("tcpdump_resp_1_benchmark_sll.pcap")).expect("read");
    let offsets = record_offsets(&bytes);
    assert_eq!(offsets.len(), 150);
    for k in [0usize, 1, 77, 149] {
        // Cut inside record k's data.
        let cut = offsets[k] + 20;
        let p = write(&dir, &format!("cut{k}.pcap"), &bytes[..cut]);
        let (ms, s) = read(&p, &options(Format::Pcap, FlowKeyKind::FiveTuple));
        assert_eq!(ms.len(), k, "cut in record {k}");
        let d = s.damage.clone().expect("damage reported");
        assert!(d.contains(&format!("byte offset {}", offsets[k])), "{d}");
        assert!(d.contains("truncated"), "{d}");
        assert!(
            s.warnings()[0].starts_with("warning: "),
            "{:?}",
            s.warnings()
        );
    }
    // A file header that is cut short is an error naming the file.
    let p = write(&dir, "hdr.pcap", &bytes[..10]);
    let e = ingest::open(&p, &options(Format::Pcap, FlowKeyKind::FiveTuple))
        .err()
        .expect("error");
    assert!(e.to_string().contains("hdr.pcap"), "{e}");
}

#[test]
fn a_corrupt_block_ends_the_capture_with_a_warning() {
    let dir = scratch("corrupt");
    let mut bytes = std::fs::read(data("zeek_irc-dcc-send.pcapng")).expect("read");
    // Walk the blocks (little-endian section) to the 101st enhanced packet block.
    let mut at = 0usize;
    let mut packets = 0;
    while packets < 100 {
        let kind = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4"));
        let len = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().expect("4")) as usize;
        if kind == 6 {
            packets += 1;
        }
        at += len;
    }
    while u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4")) != 6 {
        at += u32::from_le_bytes(bytes[at + 4..at + 8].try_into().expect("4")) as usize;
    }
    // A block length that is not a multiple of 4 (and smaller than a block header).
    bytes[at + 4..at + 8].copy_from_slice(&7u32.to_le_bytes());
    let p = write(&dir, "corrupt.pcapng", &bytes);
    let (ms, s) = read(&p, &options(Format::Auto, FlowKeyKind::FiveTuple));
    assert_eq!(ms.len(), 100);
    let d = s.damage.expect("damage reported");
    assert!(d.contains(&format!("byte offset {at}")), "{d}");
    assert!(d.contains("corrupt") || d.contains("truncated"), "{d}");
}

#[test]
fn flow_records_follow_the_timeouts() {
    let path = data("zeek_irc-dcc-send.pcapng");
    let mut o = options(Format::Auto, FlowKeyKind::FiveTuple);
    let (packets, _) = read(&path, &o);
    // Timeouts longer than the capture: one record per distinct 5-tuple.
    o.flows = Some(FlowTimeouts {
        inactive_ns: u64::MAX / 4,
        active_ns: u64::MAX / 4,
    });
    let (recs, s) = read(&path, &o);
    assert_eq!(recs.len(), distinct(&packets));
    assert_eq!(
        recs.iter().map(|m| m.key).collect::<HashSet<_>>(),
        packets.iter().map(|m| m.key).collect()
    );
    let f = s.flows.expect("flow summary");
    assert_eq!(f.records, recs.len() as u64);
    // Default exporter timeouts (15 s / 30 min) split idle flows: more records, and
    // the export times never decrease (records leave in export order).
    o.flows = Some(FlowTimeouts::default());
    let (recs, _) = read(&path, &o);
    assert!(recs.len() > distinct(&packets), "{}", recs.len());
    assert!(recs.windows(2).all(|w| w[0].time <= w[1].time));
    // A 1 ms inactive timeout: nearly every packet is its own record.
    o.flows = Some(FlowTimeouts {
        inactive_ns: 1_000_000,
        active_ns: 1_000_000,
    });
    let (tiny, _) = read(&path, &o);
    assert!(tiny.len() > recs.len());
    assert!(tiny.len() <= packets.len());
    // Deterministic.
    let (again, _) = read(&path, &o);
    assert_eq!(tiny, again);
}

/// IPv6 packet with a fragment header (offset in 8-byte units, more-fragments flag).
fn ipv6_fragment(offset: u16, more: bool, sport: u16, dport: u16) -> Vec<u8> {
    let mut v = vec![0x60, 0, 0, 0, 0, 16, 44, 64];
    v.extend_from_slice(&[1; 16]);
    v.extend_from_slice(&[2; 16]);
    v.extend_from_slice(&[17, 0]);
    v.extend_from_slice(&((offset << 3) | u16::from(more)).to_be_bytes());
    v.extend_from_slice(&7u32.to_be_bytes());
    v.extend_from_slice(&sport.to_be_bytes());
    v.extend_from_slice(&dport.to_be_bytes());
    v.extend_from_slice(&[0, 8, 0, 0]);
    v
}

#[test]
fn ipv6_fragments_keep_ports_only_in_the_first() {
    let dir = scratch("frag6");
    let frames = vec![
        (1, 0, ipv6_fragment(0, true, 53, 5353)),
        (1, 1, ipv6_fragment(185, false, 53, 5353)),
    ];
    let p = write(&dir, "frag.pcap", &pcap(229, false, false, &frames));
    let mut o = options(Format::Auto, FlowKeyKind::FiveTuple);
    o.keep_keys = true;
    let mut src = ingest::open(&p, &o).expect("opens");
    let ms: Vec<_> = (&mut src).collect();
    let d = src.dictionary().expect("kept");
    assert_eq!(
        d.display(ms[0].key),
        "udp [101:101:101:101:101:101:101:101]:53 -> [202:202:202:202:202:202:202:202]:5353"
    );
    assert_eq!(
        d.display(ms[1].key),
        "udp [101:101:101:101:101:101:101:101]:0 -> [202:202:202:202:202:202:202:202]:0"
    );
    assert_eq!(
        src.summary().notes.values().sum::<u64>(),
        1,
        "{:?}",
        src.summary().notes
    );
}
