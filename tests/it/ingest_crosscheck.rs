//! Counts of every shipped capture against tshark's, recorded by
//! `scripts/ingest-crosscheck.sh` in tests/data/tshark-counts.tsv (tshark 4.0,
//! Debian bookworm): frames, IP packets and distinct keys of each key kind, per file
//! and for the nDPI captures read as one series (`traces/ndpi/`).

use std::path::{Path, PathBuf};

use crate::ingest_support::*;
use rbf_data::ingest::packet::key::FlowKeyKind;
use rbf_data::ingest::Format;

const KINDS: [FlowKeyKind; 6] = FlowKeyKind::ALL;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

struct Row {
    file: String,
    frames: u64,
    ip: u64,
    keys: Vec<usize>,
}

fn recorded() -> Vec<Row> {
    let text = std::fs::read_to_string(data("tshark-counts.tsv")).expect("recorded counts");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("file\t"))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let n = |i: usize| f[i].parse::<u64>().expect("a count");
            Row {
                file: f[0].to_string(),
                frames: n(1),
                ip: n(2),
                keys: (3..9).map(|i| n(i) as usize).collect(),
            }
        })
        .collect()
}

#[test]
fn every_shipped_capture_matches_tshark() {
    let rows = recorded();
    for row in &rows {
        let path = root().join(&row.file);
        for (kind, &want) in KINDS.iter().zip(&row.keys) {
            let (ms, s) = read(&path, &options(Format::Auto, *kind));
            assert_eq!(s.format.name(), "pcap", "{}", row.file);
            assert_eq!(s.records, row.frames, "{} frames", row.file);
            assert_eq!(s.messages, row.ip, "{} IP packets", row.file);
            assert_eq!(distinct(&ms), want, "{} distinct {kind:?}", row.file);
            assert!(s.damage.is_none(), "{}: {:?}", row.file, s.damage);
        }
    }
    // Every capture that is shipped has recorded counts.
    let listed: Vec<&str> = rows.iter().map(|r| r.file.as_str()).collect();
    for dir in ["tests/data", "traces/pcap", "traces/ndpi"] {
        for e in std::fs::read_dir(root().join(dir)).expect("dir") {
            let p: PathBuf = e.expect("entry").path();
            let name = p.file_name().expect("name").to_string_lossy().into_owned();
            if name.contains(".pcap") {
                let rel = format!("{dir}/{name}");
                assert!(
                    listed.contains(&rel.as_str()),
                    "{rel} has no tshark counts: run scripts/ingest-crosscheck.sh"
                );
            }
        }
    }
    assert!(listed.contains(&"traces/ndpi/"), "the nDPI series row");
}
