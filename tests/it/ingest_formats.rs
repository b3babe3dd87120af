//! Request logs and other trace formats: delimited text with a column spec, one key
//! per line, 24-byte binary records, format detection, and the errors bad input gets.

use crate::ingest_support::*;
use rbf_data::ingest::csv::{CsvSpec, TimeUnit};
use rbf_data::ingest::packet::key::FlowKeyKind;
use rbf_data::ingest::{self, Format};
use rbf_data::message::KeyHasher;

fn write(dir: &std::path::Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("write");
    p
}

#[test]
fn csv_with_a_column_spec() {
    let dir = scratch("csv");
    let text =
        "time\tsize\turl\n1000\t5\t/a\n1500\t7\t/b\n\n2000\t5\t/a\nbroken line\n2500\tx\t/c\n";
    let p = write(&dir, "log.tsv", text.as_bytes());
    let mut o = options(Format::Csv, FlowKeyKind::FiveTuple);
    o.csv = CsvSpec {
        key_column: 3,
        time_column: Some(1),
        time_unit: TimeUnit::Ms,
        delimiter: b'\t',
        header: true,
    };
    let (ms, s) = read(&p, &o);
    assert_eq!(ms.len(), 4);
    let h = KeyHasher::default();
    let keys: Vec<u64> = ms.iter().map(|m| m.key).collect();
    assert_eq!(
        keys,
        [h.hash(b"/a"), h.hash(b"/b"), h.hash(b"/a"), h.hash(b"/c")]
    );
    assert_eq!(ms[1].time.nanos(), Some(1_500_000_000));
    assert_eq!(s.malformed, 1);
    assert!(
        s.examples[0].contains(":6:"),
        "line number in {:?}",
        s.examples
    );
    assert!(
        s.examples[0].contains("at least 3 columns"),
        "{:?}",
        s.examples
    );
    assert_eq!(
        s.skipped.values().sum::<u64>(),
        2,
        "header and blank line: {:?}",
        s.skipped
    );
    // A bad column spec names the setting.
    o.csv.key_column = 0;
    let e = ingest::open(&p, &o).err().expect("error").to_string();
    assert!(e.contains("csv-key-column"), "{e}");
}

#[test]
fn lines_and_jedi_keys_agree_with_binary_records() {
    let dir = scratch("binary");
    let ids = [7u64, 42, 7, u64::MAX, 0];
    let mut bin = Vec::new();
    let mut jedi = String::new();
    let mut lines = String::new();
    for (i, id) in ids.iter().enumerate() {
        bin.extend_from_slice(&(i as u32 * 10).to_le_bytes());
        bin.extend_from_slice(&id.to_le_bytes());
        bin.extend_from_slice(&100u32.to_le_bytes());
        bin.extend_from_slice(&(-1i64).to_le_bytes());
        jedi.push_str(&format!("{},{id},100\n", i * 10));
        lines.push_str(&format!("{id}\n"));
    }
    let (b, bs) = read(
        &write(&dir, "t.bin", &bin),
        &options(Format::Binary, FlowKeyKind::FiveTuple),
    );
    let (j, _) = read(
        &write(&dir, "t.jedi", jedi.as_bytes()),
        &options(Format::Auto, FlowKeyKind::FiveTuple),
    );
    let (l, _) = read(
        &write(&dir, "t.txt", lines.as_bytes()),
        &options(Format::Lines, FlowKeyKind::FiveTuple),
    );
    assert_eq!(b, j, "binary and JEDI: same keys and times");
    assert_eq!(
        b.iter().map(|m| m.key).collect::<Vec<_>>(),
        l.iter().map(|m| m.key).collect::<Vec<_>>()
    );
    assert_eq!(b[3].time.nanos(), Some(30_000_000_000));
    assert_eq!((bs.records, bs.messages, bs.damage.is_none()), (5, 5, true));
    // A trailing partial record is damage at its byte offset; the whole ones are read.
    let (t, ts) = read(
        &write(&dir, "cut.bin", &bin[..24 * 3 + 5]),
        &options(Format::Binary, FlowKeyKind::FiveTuple),
    );
    assert_eq!(t.len(), 3);
    let d = ts.damage.expect("damage");
    assert!(
        d.contains("byte offset 72") && d.contains("5 of 24 bytes"),
        "{d}"
    );
}

#[test]
fn detection_is_by_content_not_by_name() {
    let dir = scratch("detect");
    // A capture named like a log, a log named like a capture.
    let cap = std::fs::read(data("tcpdump_tcp-handshake-nano_sll.pcap")).expect("read");
    let (ms, s) = read(
        &write(&dir, "looks.csv", &cap),
        &options(Format::Auto, FlowKeyKind::FiveTuple),
    );
    assert_eq!((s.format.name(), ms.len()), ("pcap", 3));
    let (ms, s) = read(
        &write(&dir, "looks.pcap", b"1,2,3\n4,5,6\n"),
        &options(Format::Auto, FlowKeyKind::FiveTuple),
    );
    assert_eq!((s.format.name(), ms.len()), ("jedi", 2));
    // zstd-compressed capture, detected through the compression.
    let (ms, _) = read(
        &data("zeek_echo-connections.pcap.zst"),
        &options(Format::Auto, FlowKeyKind::Dst),
    );
    assert_eq!(ms.len(), 82582);
    // Unknown content: the error lists the formats to choose from.
    let e = ingest::open(
        &write(&dir, "x", b"hello world\n"),
        &options(Format::Auto, FlowKeyKind::FiveTuple),
    )
    .err()
    .expect("error")
    .to_string();
    assert!(
        e.contains("--format") && e.contains("binary") && e.contains("byte offset 0"),
        "{e}"
    );
    // Empty input.
    assert!(ingest::open(
        &write(&dir, "empty", b""),
        &options(Format::Auto, FlowKeyKind::FiveTuple)
    )
    .is_err());
    // A text file forced to pcap: a clear error, not a panic.
    let e = ingest::open(
        &write(&dir, "t2", b"1,2,3\n"),
        &options(Format::Pcap, FlowKeyKind::FiveTuple),
    )
    .err()
    .expect("error")
    .to_string();
    assert!(e.contains("not a pcap or pcapng capture"), "{e}");
}

/// `rbf replay --json` of the IRC capture through a filter that never recycles.
fn replay_irc(key: &[&str]) -> serde_json::Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rbf"))
        .args([
            "replay", "--memory", "65536", "--hashes", "3", "--sigma", "32768", "--json",
        ])
        .args(key)
        .arg(data("zeek_irc-dcc-send.pcapng"))
        .output()
        .expect("runs");
    crate::cli::json_of(&out)
}

#[test]
fn cli_replay_reports_distinct_five_tuples_as_new() {
    let v = replay_irc(&["--key", "five-tuple"]);
    // tshark: 1184 IP packets, 6 distinct 5-tuples; no recycle at this size, so every
    // distinct 5-tuple is new exactly once.
    assert_eq!(v["arrivals"], 1184);
    assert_eq!(v["new"], 6);
    assert_eq!(v["ingest"]["key"], "five-tuple");
    let v = replay_irc(&["--key", "dst-prefix", "--prefix-v4", "8"]);
    assert_eq!(v["new"], 1);
    // A bad flag value names the setting and the allowed values.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rbf"))
        .args([
            "replay",
            "--memory",
            "64",
            "--hashes",
            "3",
            "--key",
            "six-tuple",
        ])
        .arg(data("zeek_irc-dcc-send.pcapng"))
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("five-tuple") && err.contains("dst-prefix"),
        "{err}"
    );
}

#[test]
fn an_endless_line_is_malformed_not_buffered_whole() {
    let dir = scratch("longline");
    let mut text = b"1,2,3\n".to_vec();
    text.extend(std::iter::repeat_n(b'7', 3 << 20));
    text.extend_from_slice(b",1,1\n4,5,6\n");
    let p = write(&dir, "long.jedi", &text);
    let (ms, s) = read(&p, &options(Format::Jedi, FlowKeyKind::FiveTuple));
    assert_eq!(ms.len(), 2);
    assert_eq!((s.records, s.malformed), (3, 1));
    assert!(
        s.examples[0].contains(":2: line longer than"),
        "{:?}",
        s.examples
    );
}
