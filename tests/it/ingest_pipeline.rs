//! The reading pipeline: gzip inputs read like zstd ones (detected from content, a
//! truncated file salvaged up to the cut with a warning giving both offsets), and
//! decoding on a thread of its own changing nothing: same messages, same summary,
//! same warnings with their files and offsets, for every format.

use std::io::Write;
use std::path::{Path, PathBuf};

use rbf_data::ingest::packet::key::FlowKeyKind;
use rbf_data::ingest::{self, Format, IngestOptions};
use rbf_data::message::Message;

use crate::ingest_support::{data, options, read, scratch};

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).expect("write");
    e.finish().expect("finish")
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("write");
    p
}

fn unzstd(path: &Path) -> Vec<u8> {
    zstd::decode_all(std::fs::File::open(path).expect("open")).expect("decompress")
}

#[test]
fn gzip_captures_read_like_zstd_ones_and_keep_every_packet_before_a_cut() {
    let dir = scratch("gzip");
    let five = options(Format::Auto, FlowKeyKind::FiveTuple);
    let zst = data("zeek_echo-connections.pcap.zst");
    let (all, s) = read(&zst, &five);
    let raw = unzstd(&zst);
    let whole = gzip(&raw);
    // Named like anything: detected by content.
    let gz = write(&dir, "capture.bin", &whole);
    let (ms, g) = read(&gz, &five);
    assert_eq!(ms, all);
    assert_eq!(
        (g.format.name(), g.records, g.damage.clone()),
        ("pcap", s.records, None)
    );
    // pcapng too.
    let ng = data("zeek_irc-dcc-send.pcapng");
    let (ng_all, _) = read(&ng, &five);
    let (ng_gz, _) = read(
        &write(
            &dir,
            "irc.pcapng.gz",
            &gzip(&std::fs::read(&ng).expect("read")),
        ),
        &five,
    );
    assert_eq!(ng_gz, ng_all);
    for frac in [0.001, 0.1, 0.5, 0.99] {
        let cut = (whole.len() as f64 * frac) as usize;
        let p = write(&dir, &format!("cut{cut}.pcap.gz"), &whole[..cut]);
        if frac < 0.01 {
            // Near the start: inflate hands out what it decoded of the first block,
            // so the capture header and its first packets are read.
            let (ms, s) = read(&p, &five);
            assert_eq!(ms[..], all[..ms.len()], "a prefix");
            let d = s.damage.expect("damage");
            assert!(
                d.contains("gzip") && d.contains(&format!("compressed byte offset {cut}")),
                "{d}"
            );
            continue;
        }
        let (ms, s) = read(&p, &five);
        assert_eq!(ms[..], all[..ms.len()], "a prefix");
        // Everything inflated before the cut is read: at most a packet is lost beyond
        // what the deflate stream holds back (its window).
        let inflated = {
            let mut d = flate2::read::GzDecoder::new(&whole[..cut]);
            let mut v = Vec::new();
            let _ = std::io::Read::read_to_end(&mut d, &mut v);
            v.len()
        };
        assert!(
            ms.len() as f64 > (inflated as f64 - 70_000.0) / 83.0,
            "cut {cut}: {} packets from {inflated} bytes",
            ms.len()
        );
        let d = s.damage.expect("damage");
        assert!(
            d.contains("gzip")
                && d.contains("truncated")
                && d.contains(&format!("compressed byte offset {cut}"))
                && d.contains("decompressed byte offset"),
            "{d}"
        );
    }
}

/// Messages and summary of `path`, decoded on a thread of its own or not.
fn both_ways(paths: &[PathBuf], o: &IngestOptions) {
    let read_with = |same_thread: bool| {
        let o = IngestOptions {
            same_thread,
            ..o.clone()
        };
        let mut src = ingest::open_inputs(paths, &o).expect("open");
        let mut v: Vec<Message> = Vec::new();
        // Both ways of taking messages: one by one and in batches.
        while let Some(m) = src.next() {
            v.push(m);
            let max = v.len() + 777;
            src.fill(&mut v, max);
        }
        let s = src.summary().clone();
        (v, s.warnings(), serde_json::to_string(&s).expect("json"))
    };
    let (a, wa, sa) = read_with(true);
    let (b, wb, sb) = read_with(false);
    assert!(!a.is_empty() || !wa.is_empty(), "{paths:?}");
    assert_eq!(a, b, "{paths:?}");
    assert_eq!(wa, wb, "{paths:?}");
    assert_eq!(sa, sb, "{paths:?}");
}

#[test]
fn decoding_on_its_own_thread_changes_nothing() {
    let dir = scratch("threads");
    let five = options(Format::Auto, FlowKeyKind::FiveTuple);
    let jedi = data("tragen-100k.csv");
    let text = std::fs::read(&jedi).expect("read");
    // A malformed line and a truncated binary record: warnings with their offsets.
    let mut bad_text = text[..50_000].to_vec();
    bad_text.extend(b"not,a,record,at,all\n");
    bad_text.extend(&text[50_000..60_000]);
    let oracle = unzstd(&data("libcachesim_cloudPhysicsIO.oracleGeneral.bin.zst"));
    let inputs: Vec<(Vec<PathBuf>, IngestOptions)> = vec![
        (vec![jedi.clone()], five.clone()),
        (vec![write(&dir, "bad.csv", &bad_text)], five.clone()),
        (vec![data("zeek_echo-connections.pcap.zst")], five.clone()),
        (vec![data("zeek_irc-dcc-send.pcapng")], five.clone()),
        (
            vec![data("zeek_irc-dcc-send.pcapng")],
            IngestOptions {
                flows: Some(rbf_data::ingest::packet::flows::FlowTimeouts {
                    inactive_ns: 15_000_000_000,
                    active_ns: 1_800_000_000_000,
                }),
                ..five.clone()
            },
        ),
        (vec![data("zeek_trunc_ip4-trunc.pcap")], five.clone()),
        (vec![write(&dir, "o.bin", &oracle)], five.clone()),
        (
            vec![write(&dir, "cut.bin", &oracle[..24 * 50_000 + 5])],
            five.clone(),
        ),
        (vec![write(&dir, "o.bin.gz", &gzip(&oracle))], five.clone()),
        (
            vec![data("libcachesim_cloudPhysicsIO.v1.lcs.zst")],
            five.clone(),
        ),
        (
            vec![
                data("zeek_irc-dcc-send.pcapng"),
                data("zeek_vlan-collisions.pcap"),
            ],
            five.clone(),
        ),
    ];
    for (paths, o) in &inputs {
        both_ways(paths, o);
    }
    // The warnings still name the file and the offset.
    let (_, s) = read(&dir.join("cut.bin"), &five);
    let d = s.damage.expect("damage");
    assert!(
        d.contains("cut.bin") && d.contains("byte offset 1200000"),
        "{d}"
    );
}

#[test]
fn replay_through_the_decode_thread_is_bit_identical() {
    // The CLI (decoder on its own thread) against the library on the caller's thread.
    let path = data("libcachesim_cloudPhysicsIO.oracleGeneral.bin.zst");
    let config = rbf_data::filter::FilterConfig::sigma_bounded(1 << 16, 3, 20_000);
    // As many filters (hash seeds) as `rbf replay` uses by default.
    let mut same = rbf_observed::replay::Replays::new(
        &config,
        rbf_observed::replay::ReplayOptions::default(),
        rbf_observed::replay::DEFAULT_HASH_SEEDS,
    )
    .expect("replay");
    let o = IngestOptions {
        same_thread: true,
        ..options(Format::Auto, FlowKeyKind::FiveTuple)
    };
    let mut src = ingest::open(&path, &o).expect("open");
    same.run(&mut src);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rbf"))
        .args([
            "replay", "--json", "-m", "65536", "-k", "3", "--sigma", "20000",
        ])
        .arg(&path)
        .output()
        .expect("runs");
    let cli = crate::cli::json_of(&out);
    let mut lib = serde_json::to_value(same.report()).expect("json");
    lib["ingest"] = serde_json::to_value(src.summary()).expect("json");
    assert_eq!(cli, lib);
}
