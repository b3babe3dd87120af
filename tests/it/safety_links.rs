//! Encapsulations real links carry: MPLS label stacks (EtherType 0x8847, and over PPP
//! and Cisco HDLC), PPPoE sessions (0x8864, under two VLAN tags) and PPP as link type 9
//! are decoded to the IP packet inside, on real captures (tcpdump's and nDPI's test
//! suites, tests/data/MANIFEST.tsv). The expected counts are tcpdump's (4.99, Debian
//! bookworm), recorded here so the test does not need tcpdump:
//!
//! ```sh
//! tcpdump -nn -r F | wc -l                                   # frames
//! tcpdump -nn -r F | grep -c -E '[0-9a-f:.]+ > [0-9a-f:.]+: '  # IP packets decoded
//! tcpdump -nn -r F | grep -c 'MPLS (label'                   # of which inside MPLS
//! ```

use std::collections::BTreeMap;

use crate::ingest_support::*;
use rbf_data::ingest::packet::key::FlowKeyKind;
use rbf_data::ingest::Format;

struct Case {
    file: &'static str,
    /// tcpdump's frames and IP packets.
    frames: u64,
    ip: u64,
    /// Distinct source-destination pairs in tcpdump's lines.
    pairs: usize,
    /// What rbf must say of the frames that carry no IP packet.
    skipped: &'static [(&'static str, u64)],
}

const CASES: [Case; 5] = [
    // PPP (link type 9): 9 UDP probes inside an MPLS label (PPP protocol 0x0281), 9 ICMP
    // replies as plain IP (0x0021).
    Case {
        file: "tcpdump_mpls-traceroute.pcap",
        frames: 18,
        ip: 18,
        pairs: 4,
        skipped: &[],
    },
    // Cisco HDLC: one BGP segment under an MPLS label (EtherType 0x8847), one plain.
    Case {
        file: "ndpi_BGP_redist.pcap",
        frames: 2,
        ip: 2,
        pairs: 2,
        skipped: &[],
    },
    // Ethernet, 802.1Q 757, 802.1Q 1, PPPoE session 0x3d6d, IPv4.
    Case {
        file: "ndpi_discord_mid_flow.pcap",
        frames: 40,
        ip: 40,
        pairs: 2,
        skipped: &[],
    },
    // PPP (link type 9) without address and control bytes.
    Case {
        file: "ndpi_dlt_ppp.pcap",
        frames: 1,
        ip: 1,
        pairs: 1,
        skipped: &[],
    },
    // PPPoE sessions carrying LCP echo requests: no IP, counted by PPP protocol.
    Case {
        file: "tcpdump_pppoes.pcap",
        frames: 2,
        ip: 0,
        pairs: 0,
        skipped: &[("non-IP PPP protocol 0xc021 (LCP)", 2)],
    },
];

#[test]
fn mpls_pppoe_and_ppp_captures_give_tcpdumps_ip_packets() {
    for c in &CASES {
        let path = data(c.file);
        if c.ip == 0 {
            // Nothing usable: the reader refuses the input, naming the reason and count.
            let o = options(Format::Auto, FlowKeyKind::SrcDst);
            let e = match rbf_data::ingest::open(&path, &o) {
                Ok(mut src) => {
                    let n = (&mut src).count();
                    let s = src.summary().clone();
                    assert_eq!(n, 0, "{}", c.file);
                    assert_eq!(s.records, c.frames, "{}", c.file);
                    let want: BTreeMap<String, u64> =
                        c.skipped.iter().map(|(k, v)| (k.to_string(), *v)).collect();
                    assert_eq!(s.skipped, want, "{}", c.file);
                    continue;
                }
                Err(e) => e.to_string(),
            };
            for (reason, n) in c.skipped {
                assert!(e.contains(&format!("{n} × {reason}")), "{}: {e}", c.file);
            }
            continue;
        }
        let (ms, s) = read(&path, &options(Format::Auto, FlowKeyKind::SrcDst));
        assert_eq!(s.records, c.frames, "{} frames", c.file);
        assert_eq!(s.messages, c.ip, "{} IP packets: {s:?}", c.file);
        assert_eq!(
            distinct(&ms),
            c.pairs,
            "{} source-destination pairs",
            c.file
        );
        assert_eq!(s.malformed, 0, "{}: {s:?}", c.file);
        let want: BTreeMap<String, u64> =
            c.skipped.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        assert_eq!(s.skipped, want, "{}", c.file);
    }
}
