//! Flow logs against the captures they were written from (tests/data/flowlogs, made by
//! scripts/flow-logs.sh from traces/ndpi): nfdump's CSV, written by the real nfpcapd and
//! nfdump, and Zeek conn.logs in the layout of Zeek's documentation (Zeek is not
//! packaged for Debian). Keys must be those of the capture's flows.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::ingest_support::*;
use rbf_data::ingest::packet::key::FlowKeyKind;
use rbf_data::ingest::{self, Format, IngestOptions};

fn captures() -> Vec<(String, PathBuf)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/ndpi");
    let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .expect("traces/ndpi")
        .map(|e| e.expect("entry").path())
        .map(|p| {
            let n = p.file_name().expect("name").to_string_lossy().into_owned();
            let stem = n.trim_end_matches(".zst");
            let stem = stem.trim_end_matches(".pcapng").trim_end_matches(".pcap");
            (stem.to_string(), p)
        })
        .collect();
    v.sort();
    assert_eq!(v.len(), 20);
    v
}

fn named(path: &Path, o: &IngestOptions) -> (Vec<String>, rbf_data::ingest::IngestSummary) {
    let mut o = o.clone();
    o.keep_keys = true;
    let mut src = ingest::open(path, &o).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let keys: Vec<u64> = (&mut src).map(|m| m.key).collect();
    let d = src.dictionary().expect("kept");
    (
        keys.iter().map(|k| d.display(*k)).collect(),
        src.summary().clone(),
    )
}

/// A capture key that flow meters do not make: a non-first IP fragment (rbf keys it
/// with ports 0; meters reassemble or drop fragments).
fn fragment(name: &str) -> bool {
    (name.starts_with("udp ") || name.starts_with("tcp "))
        && name.contains(":0 -> ")
        && name.ends_with(":0")
}

fn reverse(name: &str) -> String {
    let (proto, rest) = name.split_once(' ').expect("proto");
    let (a, b) = rest.split_once(" -> ").expect("arrow");
    format!("{proto} {b} -> {a}")
}

#[test]
fn nfdump_flows_have_the_capture_keys() {
    let five = options(Format::Auto, FlowKeyKind::FiveTuple);
    let mut total = 0;
    let mut fragments = 0;
    for (stem, cap) in captures() {
        let log = data(&format!("flowlogs/{stem}.nfdump.csv.zst"));
        let (flows, s) = named(&log, &five);
        assert_eq!(s.format.name(), "nfdump-csv", "{stem}");
        assert_eq!(s.malformed, 0, "{stem}: {:?}", s.examples);
        assert_eq!(
            s.skipped.values().sum::<u64>(),
            4,
            "{stem}: header and summary block"
        );
        let (packets, _) = named(&cap, &five);
        let p: BTreeSet<&String> = packets.iter().collect();
        let f: BTreeSet<&String> = flows.iter().collect();
        // nfpcapd keys IPv6 packets with extension headers by the first Next Header
        // (0, hop-by-hop options), rbf by the upper-layer protocol after them: the one
        // difference allowed, and only for such keys.
        let only_log: BTreeSet<String> = f
            .difference(&p)
            .map(|k| k.replacen("proto-0 ", "? ", 1))
            .collect();
        let only_capture: BTreeSet<String> = p
            .difference(&f)
            .filter(|k| !fragment(k))
            .map(|k| k.replacen("icmpv6 ", "? ", 1))
            .collect();
        assert_eq!(
            only_log, only_capture,
            "{stem}: nfdump's flow keys are the capture's 5-tuples"
        );
        assert!(
            only_log.iter().all(|k| k.starts_with("? [")),
            "{stem}: {only_log:?}"
        );
        total += flows.len();
        fragments += p.iter().filter(|k| fragment(k)).count();
    }
    // The 20 logs as one series (a glob), one message per flow record.
    let glob = data("flowlogs/*.nfdump.csv.zst");
    let (all, s) = read(&glob, &five);
    assert_eq!((all.len(), s.files.len()), (total, 20));
    // The fragment keys are the dnscrypt capture's 120 non-first fragments' flows.
    assert!(fragments > 0 && fragments < 100, "{fragments}");
}

#[test]
fn zeek_connections_are_the_capture_flows_by_originator() {
    let five = options(Format::Auto, FlowKeyKind::FiveTuple);
    for (stem, cap) in captures() {
        let (tsv, s) = named(&data(&format!("flowlogs/{stem}.conn.log.zst")), &five);
        assert_eq!(
            (s.format.name(), s.malformed),
            ("zeek", 0),
            "{stem}: {:?}",
            s.examples
        );
        let (json, _) = named(&data(&format!("flowlogs/{stem}.conn.json.zst")), &five);
        assert_eq!(tsv, json, "{stem}: TSV and JSON give the same keys");
        let (packets, _) = named(&cap, &five);
        let p: BTreeSet<&String> = packets.iter().collect();
        let z: BTreeSet<&String> = tsv.iter().collect();
        assert_eq!(z.len(), tsv.len(), "{stem}: one record per connection");
        for k in &z {
            assert!(p.contains(k), "{stem}: {k} is not a flow of the capture");
        }
        // Zeek logs TCP, UDP and ICMP connections (other protocols as
        // unknown_transport, which names no protocol number) and reassembles fragments.
        let logged = |k: &str| ["tcp ", "udp ", "icmp"].iter().any(|p| k.starts_with(p));
        for k in p.iter().filter(|k| logged(k) && !fragment(k)) {
            assert!(
                z.contains(k) || z.contains(&reverse(k)),
                "{stem}: capture flow {k} is in no connection"
            );
        }
    }
}

#[test]
fn flow_logs_take_the_key_kinds_and_refuse_flows() {
    let log = data("flowlogs/ndpi_signal.nfdump.csv.zst");
    let cap = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/ndpi/ndpi_signal.pcap.zst");
    for kind in [
        FlowKeyKind::Dst,
        FlowKeyKind::DstPrefix,
        FlowKeyKind::SrcDst,
    ] {
        let (f, _) = read(&log, &options(Format::Auto, kind));
        let (p, _) = read(&cap, &options(Format::Auto, kind));
        let fk: BTreeSet<u64> = f.iter().map(|m| m.key).collect();
        let pk: BTreeSet<u64> = p.iter().map(|m| m.key).collect();
        assert_eq!(fk, pk, "{kind:?}");
    }
    let o = IngestOptions {
        flows: Some(Default::default()),
        ..options(Format::Auto, FlowKeyKind::FiveTuple)
    };
    let e = ingest::open(&log, &o).err().expect("error").to_string();
    assert!(e.contains("flows") && e.contains("flows already"), "{e}");
}
