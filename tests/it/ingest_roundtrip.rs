//! Round trip: source -> `.rbfs` -> replay gives exactly the counts of replaying the
//! source directly (the stream is lossless: same keys, same times, same order).

use crate::ingest_support::*;
use rbf_data::filter::FilterConfig;
use rbf_data::ingest::packet::flows::FlowTimeouts;
use rbf_data::ingest::packet::key::FlowKeyKind;
use rbf_data::ingest::{self, rbfs, Format, IngestOptions};
use rbf_observed::replay::{Replay, ReplayOptions};

fn replay_json(
    path: &std::path::Path,
    o: &IngestOptions,
    config: &FilterConfig,
) -> serde_json::Value {
    let mut src = ingest::open(path, o).expect("opens");
    let mut r = Replay::new(
        config,
        ReplayOptions {
            warmup: 100,
            confidence: 0.99,
        },
    )
    .expect("valid");
    r.run(&mut src);
    serde_json::to_value(r.report()).expect("serialises")
}

#[test]
fn rbfs_replays_exactly_like_its_source() {
    let dir = scratch("roundtrip");
    // Small filters so that there are many recycles and real FP/FN counts to compare.
    let one_phase = FilterConfig::sigma_bounded(1024, 3, 512);
    let mut two_phase = FilterConfig::sigma_bounded(2048, 3, 512);
    two_phase.phases = 2;
    let flows = Some(FlowTimeouts {
        inactive_ns: 2_000_000_000,
        active_ns: 60_000_000_000,
    });
    let cases: Vec<(&str, IngestOptions)> = vec![
        (
            "tragen-100k.csv",
            options(Format::Auto, FlowKeyKind::FiveTuple),
        ),
        (
            "zeek_echo-connections.pcap.zst",
            options(Format::Auto, FlowKeyKind::FiveTuple),
        ),
        (
            "zeek_irc-dcc-send.pcapng",
            IngestOptions {
                flows,
                ..options(Format::Auto, FlowKeyKind::FiveTuple)
            },
        ),
        (
            "tcpdump_resp_1_benchmark_sll.pcap",
            options(Format::Auto, FlowKeyKind::SrcPrefix),
        ),
    ];
    for (file, o) in cases {
        let out = dir.join(format!("{file}.rbfs"));
        let mut src = ingest::open(&data(file), &o).expect("opens");
        let n = rbfs::write(&out, src.as_mut(), o.hasher).expect("writes");
        assert_eq!(n, src.summary().messages, "{file}");
        // Same messages, in the same order.
        let (direct, _) = read(&data(file), &o);
        let (back, s) = read(&out, &options(Format::Auto, FlowKeyKind::FiveTuple));
        assert_eq!(s.format.name(), "rbfs");
        assert!(s.damage.is_none(), "{file}: {:?}", s.damage);
        assert_eq!(back, direct, "{file}");
        assert_eq!(
            s.origin.as_ref().map(|x| x.messages),
            Some(n),
            "{file}: the source's summary travels along"
        );
        for config in [&one_phase, &two_phase] {
            let a = replay_json(&data(file), &o, config);
            let b = replay_json(&out, &options(Format::Auto, FlowKeyKind::FiveTuple), config);
            assert_eq!(a, b, "{file}");
            // The two large traces recycle the small filters many times.
            if file.starts_with("tragen") || file.starts_with("zeek_echo") {
                assert!(
                    a["cycles"].as_u64().unwrap_or(0) > 10,
                    "{file}: {}",
                    a["cycles"]
                );
            }
        }
    }
}

#[test]
fn damaged_rbfs_streams_are_reported() {
    let dir = scratch("rbfs-damage");
    let out = dir.join("t.rbfs");
    let mut src = ingest::open(
        &data("tragen-100k.csv"),
        &options(Format::Auto, FlowKeyKind::FiveTuple),
    )
    .expect("opens");
    rbfs::write(&out, src.as_mut(), Default::default()).expect("writes");
    let bytes = std::fs::read(&out).expect("read");
    // Cut in the middle: the records before the cut are read (all but those of the
    // last zstd flush, at most SALVAGE_RECORDS), then a warning.
    let (all, _) = read(&out, &options(Format::Auto, FlowKeyKind::FiveTuple));
    let cut = dir.join("cut.rbfs");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).expect("write");
    let (ms, s) = read(&cut, &options(Format::Auto, FlowKeyKind::FiveTuple));
    assert!(ms.len() > rbfs::SALVAGE_RECORDS, "{}", ms.len());
    assert_eq!(ms[..], all[..ms.len()]);
    assert!(
        s.damage.as_deref().is_some_and(|d| d.contains("truncated")),
        "{:?}",
        s.damage
    );
    // Flip a byte inside the first block's frame: the checksum catches it, the block
    // is skipped and counted, the second block is read.
    let mut bad = bytes.clone();
    bad[rbfs::HEADER_LEN + 8 + 100] ^= 0x55;
    let flipped = dir.join("flip.rbfs");
    std::fs::write(&flipped, &bad).expect("write");
    let (ms, s) = read(&flipped, &options(Format::Auto, FlowKeyKind::FiveTuple));
    assert_eq!(ms[..], all[rbfs::BLOCK..]);
    assert!(
        s.damage.as_deref().is_some_and(|d| d.contains("corrupt")
            && d.contains(&format!("{} declared message(s)", rbfs::BLOCK))),
        "{:?}",
        s.damage
    );
    // Keys hashed with another seed are refused rather than silently mixed.
    let mut o = options(Format::Auto, FlowKeyKind::FiveTuple);
    o.hasher = rbf_data::message::KeyHasher::with_seed(1);
    let e = ingest::open(&out, &o).err().expect("error").to_string();
    assert!(e.contains("seed"), "{e}");
}
