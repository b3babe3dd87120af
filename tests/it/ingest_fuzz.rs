//! Fuzz-style robustness: seeded random mutations of valid captures, logs, binary
//! records and `.rbfs` streams never panic, and every reader still accounts for what
//! it read. A panic anywhere fails the test; the seeds are fixed, so a failure
//! reproduces (the message names the input, seed and mutations).

use crate::ingest_support::*;
use rbf_data::ingest::packet::flows::FlowTimeouts;
use rbf_data::ingest::packet::key::FlowKeyKind;
use rbf_data::ingest::{self, rbfs, Format, IngestOptions};

/// Applies 1..=8 random edits: byte flips, boundary values, truncation, duplicated or
/// deleted ranges, inserted random bytes.
fn mutate(rng: &mut Rng, input: &[u8]) -> (Vec<u8>, Vec<String>) {
    let mut v = input.to_vec();
    let mut log = Vec::new();
    for _ in 0..1 + rng.below(8) {
        if v.is_empty() {
            v.push(rng.next() as u8);
            continue;
        }
        let at = rng.below(v.len());
        match rng.below(7) {
            0 => {
                v[at] ^= 1 << rng.below(8);
                log.push(format!("flip@{at}"));
            }
            1 => {
                v[at] = [0x00, 0xFF, 0x7F, 0x80][rng.below(4)];
                log.push(format!("set@{at}"));
            }
            2 => {
                v.truncate(at);
                log.push(format!("truncate@{at}"));
            }
            3 => {
                let len = rng.below(64).min(v.len() - at);
                let chunk = v[at..at + len].to_vec();
                let to = rng.below(v.len());
                v.splice(to..to, chunk);
                log.push(format!("dup@{at}+{len}->{to}"));
            }
            4 => {
                let len = rng.below(64).min(v.len() - at);
                v.drain(at..at + len);
                log.push(format!("delete@{at}+{len}"));
            }
            5 => {
                let len = 1 + rng.below(16);
                let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
                v.splice(at..at, bytes);
                log.push(format!("insert@{at}+{len}"));
            }
            _ => {
                // A 32-bit field set to a large value: the classic length-field attack.
                if at + 4 <= v.len() {
                    v[at..at + 4].copy_from_slice(&(rng.next() as u32 | 0x0100_0000).to_le_bytes());
                }
                log.push(format!("len@{at}"));
            }
        }
    }
    (v, log)
}

fn drain(path: &std::path::Path, o: &IngestOptions, what: &str) {
    // Errors at open are fine (bad header); panics are not.
    if let Ok(mut src) = ingest::open(path, o) {
        let n = (&mut src).count() as u64;
        let s = src.summary();
        assert_eq!(n, s.messages, "{what}");
        if s.format.name() == "pcap" && o.flows.is_none() {
            let skipped: u64 = s.skipped.values().sum();
            assert_eq!(
                s.messages + s.malformed + skipped,
                s.records,
                "{what}: {s:?}"
            );
        }
        let _ = s.warnings();
    }
}

/// Mutants per input in CI; `RBF_FUZZ_MUTANTS` raises it (the ignored long run).
fn mutants(default: usize) -> usize {
    std::env::var("RBF_FUZZ_MUTANTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn mutated_inputs_never_panic() {
    fuzz(mutants(150), "fuzz");
}

/// The long run: `cargo test --release mutated_inputs_long -- --ignored` (5 000
/// mutants per input, ~5 minutes; `RBF_FUZZ_MUTANTS` sets the number; the counts of a
/// run are in docs/RELIABILITY.md).
#[test]
#[ignore]
fn mutated_inputs_long() {
    fuzz(mutants(5_000), "fuzz-long");
}

fn fuzz(per_input: usize, name: &str) {
    let dir = scratch(name);
    let mut inputs: Vec<(String, Vec<u8>, Vec<IngestOptions>)> = Vec::new();
    let five = options(Format::Auto, FlowKeyKind::FiveTuple);
    let vlan = options(Format::Pcap, FlowKeyKind::FiveTupleVlan);
    let flows = IngestOptions {
        flows: Some(FlowTimeouts::default()),
        ..options(Format::Pcap, FlowKeyKind::DstPrefix)
    };
    for f in [
        "pcapparser_test001-be.pcapng",
        "pcapparser_err-buffertoosmall.pcapng",
        "tcpdump_802.1ad_QinQ.pcap",
        "tcpdump_tcp-handshake-nano_sll.pcap",
        "tcpdump_resp_1_benchmark_sll.pcap",
        "zeek_linux_dlt_sll2.pcap",
        "zeek_vlan-collisions.pcap",
        "zeek_trunc_ip6-trunc.pcap",
    ] {
        let bytes = std::fs::read(data(f)).expect("read");
        inputs.push((
            f.to_string(),
            bytes,
            vec![five.clone(), vlan.clone(), flows.clone()],
        ));
    }
    // Synthetic captures for the link types no shipped capture has.
    let ip = ipv4_tcp([10, 0, 0, 1], [10, 0, 1, 2], 1234, 80);
    let ip6 = ipv6_udp([1; 16], [2; 16], 53, 5353);
    for (lt, frame) in [
        (0u32, [&[2u8, 0, 0, 0][..], &ip].concat()),
        (101, ip6.clone()),
        (229, ip6.clone()),
    ] {
        let p = pcap(lt, true, true, &[(1, 1, frame.clone()), (2, 2, frame)]);
        inputs.push((format!("synthetic-lt{lt}.pcap"), p, vec![five.clone()]));
    }
    let mut ng = PcapNg::default();
    ng.section()
        .interface(1, Some(9), Some(-5))
        .interface(276, Some(0x86), None);
    ng.packet(0, 1_000, &ethernet(0x0800, &[(0x8100, 5)], &ip));
    let mut sll2 = vec![
        0x86, 0xDD, 0, 0, 0, 0, 0, 2, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0,
    ];
    sll2.extend_from_slice(&ip6);
    ng.packet(1, 2_000, &sll2);
    inputs.push((
        "synthetic.pcapng".into(),
        ng.bytes.clone(),
        vec![five.clone(), flows.clone()],
    ));
    // Request logs.
    let tragen = std::fs::read(data("tragen-100k.csv")).expect("read");
    inputs.push((
        "tragen-head.csv".into(),
        tragen[..4000].to_vec(),
        vec![options(Format::Jedi, FlowKeyKind::FiveTuple)],
    ));
    // The same log zstd-compressed: damage in the compressed stream must be reported too.
    let z = zstd::encode_all(&tragen[..4000], 3).expect("compresses");
    inputs.push((
        "tragen-head.csv.zst".into(),
        z,
        vec![options(Format::Auto, FlowKeyKind::FiveTuple)],
    ));
    let mut csv = options(Format::Csv, FlowKeyKind::FiveTuple);
    csv.csv.key_column = 2;
    csv.csv.time_column = Some(1);
    csv.csv.header = true;
    inputs.push((
        "log.csv".into(),
        b"t,key,size\n1.5,a,3\n2,b,4\n2.25,a,1\n".to_vec(),
        vec![csv],
    ));
    let mut bin = Vec::new();
    for i in 0..50u64 {
        bin.extend_from_slice(&(i as u32).to_le_bytes());
        bin.extend_from_slice(&(i % 7).to_le_bytes());
        bin.extend_from_slice(&[0; 12]);
    }
    inputs.push((
        "records.bin".into(),
        bin,
        vec![options(Format::Binary, FlowKeyKind::FiveTuple)],
    ));
    // An .rbfs stream.
    let rb = dir.join("src.rbfs");
    let mut src = ingest::open(&data("tcpdump_resp_1_benchmark_sll.pcap"), &five).expect("opens");
    rbfs::write(&rb, src.as_mut(), five.hasher).expect("writes");
    inputs.push((
        "src.rbfs".into(),
        std::fs::read(&rb).expect("read"),
        vec![five.clone()],
    ));

    // Flow logs and a zstd-compressed pcapng capture from the shipped traces.
    let zeek = rbf_data::ingest::input::read_all(&data("flowlogs/ndpi_signal.conn.log.zst"))
        .expect("read");
    let zeek_json =
        rbf_data::ingest::input::read_all(&data("flowlogs/ndpi_zoom.conn.json.zst")).expect("read");
    let nfdump = rbf_data::ingest::input::read_all(&data("flowlogs/ndpi_signal.nfdump.csv.zst"))
        .expect("read");
    for (name, bytes) in [
        ("conn.log", zeek),
        ("conn.json", zeek_json),
        ("nfdump.csv", nfdump),
    ] {
        inputs.push((name.into(), bytes, vec![five.clone()]));
    }
    let ng = std::fs::read(data("pcapparser_test001-be.pcapng")).expect("read");
    inputs.push((
        "test001-be.pcapng.zst".into(),
        zstd::encode_all(&ng[..], 3).expect("compresses"),
        vec![five.clone(), flows.clone()],
    ));

    let mut rng = Rng(0x5eed);
    let mut runs = 0;
    for (name, bytes, opts) in &inputs {
        for seed in 0..per_input {
            let (m, log) = mutate(&mut rng, bytes);
            let p = dir.join("mutant");
            std::fs::write(&p, &m).expect("write");
            for o in opts {
                drain(&p, o, &format!("{name} seed {seed} {log:?} {:?}", o.format));
                runs += 1;
            }
        }
    }
    assert!(runs >= 20 * per_input, "{runs}");
    eprintln!("fuzz: {runs} mutated inputs read, no panic");
}

/// Where whole records end: after each newline (text), after each record (legacy
/// pcap, little-endian), after each block (pcapng, little-endian).
fn boundaries(bytes: &[u8], kind: &str) -> Vec<usize> {
    let mut v = Vec::new();
    match kind {
        "text" => v.extend(
            bytes
                .iter()
                .enumerate()
                .filter(|(_, &b)| b == b'\n')
                .map(|(i, _)| i + 1),
        ),
        "pcap" => {
            let mut at = 24;
            while at + 16 <= bytes.len() {
                at +=
                    16 + u32::from_le_bytes(bytes[at + 8..at + 12].try_into().expect("4")) as usize;
                v.push(at);
            }
        }
        _ => {
            let mut at = 0;
            while at + 8 <= bytes.len() {
                at += u32::from_le_bytes(bytes[at + 4..at + 8].try_into().expect("4")) as usize;
                v.push(at);
            }
        }
    }
    v
}

/// Truncation anywhere loses no record that ended before the cut: what is read is a
/// prefix of the intact input's messages and holds every record before the cut.
#[test]
fn truncation_loses_nothing_before_the_cut() {
    let dir = scratch("fuzz-cut");
    let five = options(Format::Auto, FlowKeyKind::FiveTuple);
    let inputs: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "conn.log",
            rbf_data::ingest::input::read_all(&data("flowlogs/ndpi_teams.conn.log.zst"))
                .expect("read"),
            "text",
        ),
        (
            "conn.json",
            rbf_data::ingest::input::read_all(&data("flowlogs/ndpi_teams.conn.json.zst"))
                .expect("read"),
            "text",
        ),
        (
            "nfdump.csv",
            rbf_data::ingest::input::read_all(&data("flowlogs/ndpi_teams.nfdump.csv.zst"))
                .expect("read"),
            "text",
        ),
        (
            "tragen.csv",
            std::fs::read(data("tragen-100k.csv")).expect("read")[..50_000].to_vec(),
            "text",
        ),
        (
            "resp.pcap",
            std::fs::read(data("tcpdump_resp_1_benchmark_sll.pcap")).expect("read"),
            "pcap",
        ),
        (
            "irc.pcapng",
            std::fs::read(data("zeek_irc-dcc-send.pcapng")).expect("read"),
            "pcapng",
        ),
    ];
    let mut rng = Rng(0xc07);
    let (mut cuts, mut lost) = (0, 0);
    for (name, bytes, kind) in &inputs {
        let p = dir.join(name);
        std::fs::write(&p, bytes).expect("write");
        let (full, _) = read(&p, &five);
        let ends = boundaries(bytes, kind);
        for _ in 0..mutants(40) {
            let cut = 1 + rng.below(bytes.len() - 1);
            let whole = ends
                .iter()
                .filter(|&&e| e <= cut)
                .max()
                .copied()
                .unwrap_or(0);
            std::fs::write(&p, &bytes[..whole]).expect("write");
            let want = ingest::open(&p, &five).map_or(0, |mut s| (&mut s).count());
            std::fs::write(&p, &bytes[..cut]).expect("write");
            let Ok(mut src) = ingest::open(&p, &five) else {
                assert_eq!(
                    want, 0,
                    "{name} cut at {cut}: no open, but records before it"
                );
                continue;
            };
            let got: Vec<_> = (&mut src).collect();
            // A cut inside a text line can leave a shorter line that still parses
            // (a number cut short): at most that one record differs.
            let same = got.iter().zip(&full).take_while(|(a, b)| a == b).count();
            assert!(same + 1 >= got.len(), "{name} cut at {cut}: not a prefix");
            cuts += 1;
            lost += want.saturating_sub(same);
        }
    }
    assert_eq!(lost, 0, "records lost before {cuts} cuts");
    eprintln!("truncation: {cuts} cuts, {lost} records lost");
}
