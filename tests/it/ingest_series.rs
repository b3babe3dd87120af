//! Capture series: several files, a directory or a glob read as one trace.

use std::path::{Path, PathBuf};

use crate::ingest_support::*;
use rbf_data::ingest::packet::flows::FlowTimeouts;
use rbf_data::ingest::packet::key::FlowKeyKind;
use rbf_data::ingest::{self, Format, IngestOptions};
use rbf_data::message::Message;

fn ndpi(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("traces/ndpi")
        .join(name)
}

fn read_all(
    paths: &[PathBuf],
    o: &IngestOptions,
) -> (Vec<Message>, rbf_data::ingest::IngestSummary) {
    let mut src = ingest::open_inputs(paths, o).expect("opens");
    let v: Vec<Message> = (&mut src).collect();
    (v, src.summary().clone())
}

#[test]
fn a_series_is_its_files_in_the_order_given() {
    let five = options(Format::Auto, FlowKeyKind::FiveTuple);
    let a = ndpi("ndpi_zoom.pcap.zst");
    let b = ndpi("ndpi_alexa-app.pcapng.zst");
    let (ma, sa) = read(&a, &five);
    let (mb, sb) = read(&b, &five);
    let (both, s) = read_all(&[a.clone(), b.clone()], &five);
    assert_eq!(both, [ma.clone(), mb.clone()].concat());
    assert_eq!(s.records, sa.records + sb.records);
    assert_eq!(s.files.len(), 2);
    assert_eq!(s.files[1].source, b.display().to_string());
    // Per-file warnings name their file.
    let w = s.warnings();
    assert!(
        !w.is_empty() && w.iter().all(|w| w.contains("ndpi_")),
        "{w:?}"
    );
    // --sort-by-time: zoom (2020) after alexa (2019).
    let sorted = IngestOptions {
        sort_by_time: true,
        ..five.clone()
    };
    let (by_time, s) = read_all(&[a, b.clone()], &sorted);
    assert_eq!(by_time, [mb, ma].concat());
    assert_eq!(s.files[0].source, b.display().to_string());
}

#[test]
fn directories_and_globs_expand_sorted_by_name() {
    let five = options(Format::Auto, FlowKeyKind::FiveTuple);
    let dir = ndpi("");
    let (d, s) = read(&dir, &five);
    let (g, _) = read(&ndpi("*.zst"), &five);
    assert_eq!(d, g);
    assert_eq!((d.len(), s.files.len()), (25200, 20));
    assert!(s.files.windows(2).all(|w| w[0].source < w[1].source));
    // One flow table over the series: a flow split by a file boundary is one record.
    let scratch = scratch("series-split");
    let bytes = rbf_data::ingest::input::read_all(&ndpi("ndpi_signal.pcap.zst")).expect("reads");
    let offsets = {
        let mut at = 24;
        let mut v = Vec::new();
        while at + 16 <= bytes.len() {
            v.push(at);
            at += 16 + u32::from_le_bytes(bytes[at + 8..at + 12].try_into().expect("4")) as usize;
        }
        v
    };
    let cut = offsets[offsets.len() / 2];
    let first = scratch.join("part0.pcap");
    let second = scratch.join("part1.pcap");
    std::fs::write(&first, &bytes[..cut]).expect("write");
    std::fs::write(&second, [&bytes[..24], &bytes[cut..]].concat()).expect("write");
    let flows = IngestOptions {
        flows: Some(FlowTimeouts::default()),
        ..five.clone()
    };
    let (whole, _) = read(&ndpi("ndpi_signal.pcap.zst"), &flows);
    let (parts, s) = read(&scratch.join("part*.pcap"), &flows);
    assert_eq!(parts, whole);
    assert_eq!(s.flows.expect("flow summary").records, whole.len() as u64);
}

#[test]
fn a_file_that_is_not_a_trace_is_an_error_naming_it() {
    let dir = scratch("series-bad");
    std::fs::copy(ndpi("ndpi_zoom.pcap.zst"), dir.join("a.pcap.zst")).expect("copy");
    std::fs::write(dir.join("b-notes.txt"), "these are my notes\n").expect("write");
    let five = options(Format::Auto, FlowKeyKind::FiveTuple);
    let e = ingest::open(&dir, &five).err().expect("error").to_string();
    assert!(
        e.contains("b-notes.txt") && e.contains("not a trace"),
        "{e}"
    );
    // Formats cannot be mixed in one series.
    std::fs::write(dir.join("b-notes.txt"), "1,2,3\n").expect("write");
    let e = ingest::open(&dir, &five).err().expect("error").to_string();
    assert!(e.contains("b-notes.txt") && e.contains("one format"), "{e}");
    // A pattern matching nothing, an empty directory.
    let e = ingest::open(&dir.join("*.nothing"), &five)
        .err()
        .expect("error");
    assert!(e.to_string().contains("no file matches"), "{e}");
    assert_eq!(e.exit_status(), 1);
    let empty = dir.join("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    assert!(ingest::open(&empty, &five).is_err());
}

#[test]
fn the_cli_takes_several_files_and_a_config_takes_a_list() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rbf"))
        .args([
            "replay", "--memory", "4096", "--hashes", "4", "--sigma", "1024", "--json",
        ])
        .arg(ndpi("ndpi_zoom.pcap.zst"))
        .arg(ndpi("ndpi_waze.pcap.zst"))
        .output()
        .expect("runs");
    let v = crate::cli::json_of(&out);
    assert_eq!(v["arrivals"], 778 + 597);
    assert_eq!(v["ingest"]["files"].as_array().map(Vec::len), Some(2));
    let c = rbf_judge::experiment::config::ExperimentConfig::parse(
        "name = \"x\"\n[[trace]]\npath = [\"a.pcap\", \"b/*.pcap\"]\nflows = true\ninactive_timeout = \"5s\"\n[grid]\nmemory = [64]\nhashes = [2]\nsigma = [8]\n",
        Path::new("/tmp/x.toml"),
    )
    .expect("parses");
    assert_eq!(c.traces[0].path.list().len(), 2);
    assert!(c.traces[0].flow_timeouts().expect("valid").is_some());
    let e = rbf_judge::experiment::config::ExperimentConfig::parse(
        "name = \"x\"\n[[trace]]\npath = \"a\"\nflows = true\ninactive_timeout = \"soon\"\n[grid]\nmemory = [64]\nhashes = [2]\nsigma = [8]\n",
        Path::new("/tmp/x.toml"),
    )
    .expect_err("bad timeout");
    assert!(e.to_string().contains("inactive_timeout"), "{e}");
}
