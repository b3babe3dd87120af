//! Hostile inputs: byte order marks, standard input, inputs without a usable record,
//! truncated zstd streams, damaged pcapng blocks, and how much input an error quotes.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::ingest_support::*;
use rbf_data::ingest::packet::key::FlowKeyKind;
use rbf_data::ingest::{self, Format};

fn rbf() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rbf"))
}

#[test]
fn a_byte_order_mark_is_accepted_by_every_text_format() {
    let dir = scratch("bom");
    let bom = "\u{feff}";
    let cases: Vec<(&str, String, Format)> = vec![
        ("jedi", format!("{bom}1,2,3\n4,5,6\n"), Format::Auto),
        ("lines", format!("{bom}a\nb\n"), Format::Lines),
        ("csv", format!("{bom}k,1\nj,2\n"), Format::Csv),
        (
            "zeek",
            format!("{bom}#separator \\x09\n#fields\tts\tid.orig_h\tid.orig_p\tid.resp_h\tid.resp_p\tproto\n1\t1.1.1.1\t1\t2.2.2.2\t2\ttcp\n2\t1.1.1.1\t1\t2.2.2.2\t3\ttcp\n"),
            Format::Auto,
        ),
        (
            "nfdump",
            format!("{bom}ts,te,td,sa,da,sp,dp,pr\n2020-01-01 00:00:00,2020-01-01 00:00:01,1.0,1.1.1.1,2.2.2.2,1,2,TCP\n2020-01-01 00:00:00,2020-01-01 00:00:02,2.0,1.1.1.1,2.2.2.2,1,3,UDP\n"),
            Format::Auto,
        ),
    ];
    for (name, text, format) in cases {
        let p = dir.join(name);
        std::fs::write(&p, text).expect("write");
        let (ms, s) = read(&p, &options(format, FlowKeyKind::FiveTuple));
        assert_eq!((ms.len(), s.malformed), (2, 0), "{name}: {s:?}");
        let lines = rbf_data::ingest::input::read_text(&p).expect("reads");
        assert!(!lines.starts_with('\u{feff}'));
    }
    // Config files too.
    let c = dir.join("c.toml");
    std::fs::write(
        &c,
        format!("{bom}name = \"x\"\nmeasures = [\"fp-model\"]\n[grid]\nmemory = [64]\nhashes = [2]\nsigma = [8]\n"),
    )
    .expect("write");
    rbf_judge::experiment::config::ExperimentConfig::load(&c).expect("a config with a BOM loads");
}

#[test]
fn a_dash_reads_standard_input() {
    let log = std::fs::read(data("tragen-100k.csv")).expect("read");
    let mut child = rbf()
        .args([
            "replay", "-", "--memory", "65536", "--hashes", "4", "--sigma", "16384", "--json",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&log[..200_000])
        .expect("write");
    let out = child.wait_with_output().expect("waits");
    let v = crate::cli::json_of(&out);
    let lines = log[..200_000].iter().filter(|&&b| b == b'\n').count() as u64;
    assert_eq!(v["ingest"]["source"], "<stdin>");
    assert!(v["arrivals"].as_u64().is_some_and(|a| a >= lines));
}

#[test]
fn an_input_without_a_usable_record_is_an_error_saying_why() {
    let dir = scratch("nodata");
    let p = dir.join("bad.jedi");
    std::fs::write(&p, "1,2,3\n").expect("write");
    // Forced to JEDI, lines that are not records: every one rejected (`x,y,z` would
    // be a header line, skipped).
    std::fs::write(&p, "t,1,z\nno commas\n\n").expect("write");
    let out = rbf()
        .args([
            "replay", "--format", "jedi", "--memory", "64", "--hashes", "2", "--sigma", "8",
        ])
        .arg(&p)
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no usable record")
            && err.contains("3 record(s) read")
            && err.contains("2 malformed")
            && err.contains("1 skipped"),
        "{err}"
    );
    // A capture of ARP only.
    let out = rbf()
        .args(["ingest", "-o"])
        .arg(dir.join("x.rbfs"))
        .arg(data("tcpdump_802.1ad_QinQ.pcap"))
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("2 skipped") && err.contains("ARP"), "{err}");
}

#[test]
fn a_truncated_zstd_capture_keeps_every_packet_before_the_cut() {
    let dir = scratch("zstd-cut");
    let path = data("zeek_echo-connections.pcap.zst");
    let whole = std::fs::read(&path).expect("read");
    let five = options(Format::Auto, FlowKeyKind::FiveTuple);
    let (all, _) = read(&path, &five);
    for frac in [0.001, 0.1, 0.5, 0.99] {
        let cut = (whole.len() as f64 * frac) as usize;
        let p = dir.join(format!("cut{cut}.pcap.zst"));
        std::fs::write(&p, &whole[..cut]).expect("write");
        if frac < 0.01 {
            // Inside the first zstd block: nothing decompresses, and the error says why.
            let e = ingest::open(&p, &five).err().expect("error").to_string();
            assert!(
                e.contains("zstd") && e.contains(&format!("compressed byte offset {cut}")),
                "{e}"
            );
            continue;
        }
        let (ms, s) = read(&p, &five);
        assert_eq!(ms[..], all[..ms.len()], "a prefix");
        // zstd blocks are at most 128 KiB of output: a cut loses less than that.
        let decoded = cut as f64 / whole.len() as f64 * 6_833_698.0;
        assert!(
            ms.len() as f64 > (decoded - 300_000.0) / 83.0,
            "cut {cut}: {}",
            ms.len()
        );
        let d = s.damage.expect("damage");
        assert!(
            d.contains("zstd")
                && d.contains(&format!("compressed byte offset {cut}"))
                && d.contains("decompressed byte offset"),
            "{d}"
        );
    }
}

/// Offsets of the enhanced packet blocks of a little-endian pcapng file.
fn epb_offsets(bytes: &[u8]) -> Vec<usize> {
    let mut at = 0usize;
    let mut v = Vec::new();
    while at + 8 <= bytes.len() {
        let kind = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4"));
        let len = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().expect("4")) as usize;
        if kind == 6 {
            v.push(at);
        }
        at += len;
    }
    v
}

#[test]
fn a_pcapng_block_with_a_bad_inner_length_is_skipped_by_its_block_length() {
    let dir = scratch("pcapng-resync");
    let mut bytes = std::fs::read(data("zeek_irc-dcc-send.pcapng")).expect("read");
    let epbs = epb_offsets(&bytes);
    // Captured length far beyond the block: the block is unparseable, its framing fine.
    for &at in &[epbs[10], epbs[500]] {
        bytes[at + 20..at + 24].copy_from_slice(&0x00FF_FFF0u32.to_le_bytes());
    }
    let p = dir.join("bad-caplen.pcapng");
    std::fs::write(&p, &bytes).expect("write");
    let (ms, s) = read(&p, &options(Format::Auto, FlowKeyKind::FiveTuple));
    assert_eq!(ms.len(), 1184 - 2);
    assert_eq!(s.malformed, 2, "{s:?}");
    assert!(s.damage.is_none());
    let reason = s.malformed_reasons.keys().next().expect("a reason");
    assert!(reason.contains("skipped by its block length"), "{reason}");
    assert!(
        s.examples[0].contains(&format!("byte offset {}", epbs[10])),
        "{:?}",
        s.examples
    );
}

#[test]
fn errors_quote_a_few_dozen_bytes_at_most() {
    let dir = scratch("quotes");
    // A long first line that is no trace; a broken capture; a long malformed line.
    let junk = "z".repeat(100_000);
    let p = dir.join("junk");
    std::fs::write(&p, &junk).expect("write");
    let e = ingest::open(&p, &options(Format::Auto, FlowKeyKind::FiveTuple))
        .err()
        .expect("error")
        .to_string();
    assert!(e.len() < 600, "{} bytes: {e}", e.len());
    let mut cap = std::fs::read(data("zeek_irc-dcc-send.pcapng")).expect("read");
    let at = epb_offsets(&cap)[3];
    cap[at + 4..at + 8].copy_from_slice(&7u32.to_le_bytes());
    let p = dir.join("broken.pcapng");
    std::fs::write(&p, &cap).expect("write");
    let (_, s) = read(&p, &options(Format::Auto, FlowKeyKind::FiveTuple));
    let text = serde_json::to_string(&s).expect("json");
    assert!(text.len() < 2_000, "{} bytes: {text}", text.len());
    let p = dir.join("long.jedi");
    std::fs::write(&p, format!("1,2,3\n{junk},1\n")).expect("write");
    let (_, s) = read(&p, &options(Format::Jedi, FlowKeyKind::FiveTuple));
    assert!(s.examples.iter().all(|e| e.len() < 300), "{:?}", s.examples);
}
