//! Readers that must not lose records: concatenated nfdump
//! outputs, cut `.rbfs` streams, FIFOs alone and in a series, a JEDI log with a header,
//! compressions rbf does not read (xz, bzip2) or that are nested, a far-future pcapng
//! timestamp, and hidden files in a directory series. Each test builds its inputs and
//! runs on them the commands that once lost records.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::cli::{rbf, stderr};
use crate::ingest_support::*;
use crate::safety_inputs::{chunks, read_until};
use rbf_data::ingest::packet::flows::FlowTimeouts;
use rbf_data::ingest::packet::key::FlowKeyKind;
use rbf_data::ingest::{rbfs, Format, IngestOptions};

/// `nfdump -o csv` output of `flows` flows (distinct ports), with its summary block.
fn nfdump_csv(flows: u32) -> String {
    let mut s = String::from("ts,te,td,sa,da,sp,dp,pr,flg,ipkt,ibyt\n");
    for i in 0..flows {
        s.push_str(&format!(
            "2020-01-01 00:{:02}:{:02},2020-01-01 00:{:02}:{:02},0.5,10.0.0.1,10.0.0.2,{},{},TCP,....,1,60\n",
            i / 60 % 60,
            i % 60,
            i / 60 % 60,
            i % 60,
            1024 + i % 50_000,
            80 + i / 50_000
        ));
    }
    s.push_str(&format!(
        "Summary\nflows,bytes,packets,avg_bps,avg_pps,avg_bpp\n{flows},{},{flows},0,0,0\n",
        60 * flows
    ));
    s
}

/// `cat a.csv a.csv`: header, 3 000 flows, summary block, twice. Every
/// flow is read; the summary blocks (3 lines each) and the second header are skipped.
#[test]
fn concatenated_nfdump_outputs_lose_no_flow() {
    let dir = scratch("nfdump-cat");
    let one = nfdump_csv(3000);
    std::fs::write(dir.join("a.csv"), &one).unwrap();
    std::fs::write(dir.join("cat.csv"), one.repeat(2)).unwrap();
    let o = options(Format::Auto, FlowKeyKind::FiveTuple);
    let (single, _) = read(&dir.join("a.csv"), &o);
    let (ms, s) = read(&dir.join("cat.csv"), &o);
    assert_eq!(single.len(), 3000);
    assert_eq!(ms.len(), 6000, "{s:?}");
    assert_eq!(ms[3000..], single[..]);
    assert_eq!(s.malformed, 0, "{s:?}");
    let skipped = |what: &str| {
        s.skipped
            .iter()
            .filter(|(k, _)| k.contains(what))
            .map(|(_, n)| n)
            .sum::<u64>()
    };
    assert_eq!(skipped("summary"), 6, "{:?}", s.skipped);
    assert_eq!(skipped("header"), 2, "{:?}", s.skipped);
    // The command line says the same.
    let out = rbf(&dir, &["ingest", "cat.csv", "-o", "cat.rbfs"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("6000 message(s)"), "{said}");
}

/// `head -c` of an ingested TRAGEN log at 50, 90 and 99 %: every record
/// before the cut is read but those of the last zstd flush (at most
/// `rbfs::SALVAGE_RECORDS`), with a warning naming the byte offset. A sweep of cuts
/// checks the bound everywhere: as the cut moves forward the records read never go
/// down and never jump by more than one flush.
#[test]
fn a_truncated_rbfs_keeps_every_record_before_the_cut() {
    let dir = scratch("rbfs-cut");
    let out = rbf(
        &dir,
        &[
            "ingest",
            data("tragen-100k.csv").to_str().unwrap(),
            "-o",
            "t.rbfs",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let bytes = std::fs::read(dir.join("t.rbfs")).unwrap();
    let o = options(Format::Auto, FlowKeyKind::FiveTuple);
    let (all, _) = read(&dir.join("t.rbfs"), &o);
    assert_eq!(all.len(), 100_001);
    for percent in [50, 90, 99] {
        let name = format!("cut{percent}.rbfs");
        std::fs::write(dir.join(&name), &bytes[..bytes.len() * percent / 100]).unwrap();
        let out = rbf(&dir, &["ingest", &name, "-o", "back.rbfs"]);
        assert!(out.status.success(), "{percent} %: {}", stderr(&out));
        let said = stderr(&out);
        assert!(
            said.contains("truncated .rbfs stream") && said.contains("byte offset"),
            "{said}"
        );
        let (ms, _) = read(&dir.join(&name), &o);
        // Compressed bytes are not spread evenly over the records; a generous floor.
        assert!(
            ms.len() * 100 >= all.len() * (percent - 10),
            "{percent} %: {} messages",
            ms.len()
        );
        assert_eq!(ms[..], all[..ms.len()], "{percent} %");
    }
    let cut = dir.join("cut.rbfs");
    let mut last = 0usize;
    for end in (rbfs::HEADER_LEN..bytes.len()).step_by(499) {
        std::fs::write(&cut, &bytes[..end]).unwrap();
        let n = match rbf_data::ingest::open(&cut, &o) {
            Ok(mut src) => {
                let ms: Vec<_> = (&mut src).collect();
                assert_eq!(ms[..], all[..ms.len()], "cut at {end}");
                let damage = src.summary().damage.clone().unwrap_or_default();
                assert!(damage.contains("truncated"), "cut at {end}: {damage}");
                ms.len()
            }
            Err(e) => {
                assert!(e.to_string().contains("truncated"), "cut at {end}: {e}");
                0
            }
        };
        assert!(
            n >= last && n - last <= rbfs::SALVAGE_RECORDS,
            "cut at {end}: {last} then {n} messages"
        );
        last = n;
    }
    assert!(all.len() - last <= rbfs::SALVAGE_RECORDS);
}

/// Makes a FIFO at `path`.
fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Runs `rbf args` in `dir`, killed after `limit`: (exit status, stderr).
fn run_within(dir: &Path, args: &[&str], limit: Duration) -> (Option<i32>, String) {
    let mut child = crate::cli::spawn(dir, args, Stdio::null());
    let err = chunks(child.stderr.take().unwrap());
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s.code();
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (
        status,
        read_until(&err, "\u{0}", Duration::from_millis(500)),
    )
}

/// A FIFO named alone is waited for aloud (the display standard input gets), then
/// read; a FIFO in a directory, a pattern or a list of files is refused at once,
/// naming it (a series reads each file twice).
#[test]
fn a_fifo_is_waited_for_aloud_and_refused_in_a_series() {
    let dir = scratch("fifo");
    mkfifo(&dir.join("pipe.csv"));
    let mut child = crate::cli::spawn(&dir, ["ingest", "pipe.csv", "-o", "p.rbfs"], Stdio::null());
    let err = chunks(child.stderr.take().unwrap());
    // The display speaks after 2 s; 8 s leaves room for a loaded machine.
    let said = read_until(&err, "waiting for data", Duration::from_secs(8));
    assert!(
        said.contains("reading pipe.csv: waiting for data"),
        "{said:?}"
    );
    let mut w = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join("pipe.csv"))
        .unwrap();
    w.write_all(b"0,1,1\n1,2,1\n2,1,1\n").unwrap();
    drop(w);
    assert!(child.wait().unwrap().success());
    let (ms, _) = read(
        &dir.join("p.rbfs"),
        &options(Format::Auto, FlowKeyKind::FiveTuple),
    );
    assert_eq!(ms.len(), 3);

    std::fs::create_dir(dir.join("d")).unwrap();
    std::fs::write(dir.join("d/a.csv"), "0,1,1\n1,2,1\n").unwrap();
    mkfifo(&dir.join("d/b.csv"));
    for args in [
        vec!["ingest", "d", "-o", "x.rbfs"],
        vec!["ingest", "d/*.csv", "-o", "x.rbfs"],
        vec![
            "replay", "d/a.csv", "d/b.csv", "-m", "3000", "-k", "3", "--sigma", "900",
        ],
    ] {
        let (status, said) = run_within(&dir, &args, Duration::from_secs(20));
        assert_eq!(status, Some(2), "{args:?}: {said}");
        assert!(
            said.contains("d/b.csv") && said.contains("FIFO"),
            "{args:?}: {said}"
        );
    }
}

/// A JEDI/TRAGEN log whose first line names its columns is detected as JEDI (and read
/// with `--format jedi`), the header skipped and counted, every record kept.
#[test]
fn a_jedi_log_with_a_header_line_is_read() {
    let dir = scratch("jedi-header");
    let body: String = (0..500)
        .map(|i| format!("{i},{},{}\n", i % 37, 100 + i))
        .collect();
    std::fs::write(dir.join("plain.csv"), &body).unwrap();
    let (plain, _) = read(
        &dir.join("plain.csv"),
        &options(Format::Auto, FlowKeyKind::FiveTuple),
    );
    for header in [
        "timestamp,object_id,object_size",
        "time,id,size\r",
        "\"ts\",\"obj_id\",\"size\"",
    ] {
        std::fs::write(dir.join("h.csv"), format!("{header}\n{body}")).unwrap();
        for format in [Format::Auto, Format::Jedi] {
            let (ms, s) = read(&dir.join("h.csv"), &options(format, FlowKeyKind::FiveTuple));
            assert_eq!(s.format.name(), "jedi");
            assert_eq!(ms, plain, "{header:?} {format:?}");
            assert_eq!((s.records, s.malformed), (501, 0), "{s:?}");
            assert_eq!(
                s.skipped.get("header line (column names)"),
                Some(&1),
                "{s:?}"
            );
        }
    }
    // A first line that is not three names is still no header: detection fails.
    std::fs::write(dir.join("odd.csv"), format!("a,b\n{body}")).unwrap();
    let out = rbf(&dir, &["ingest", "odd.csv", "-o", "o.rbfs"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

/// xz and bzip2 files are named, with the command that decompresses them; a gzip file
/// inside zstd (or any compression inside gzip or zstd) is named as nested
/// compression; with `--format jedi` too, whose message no longer says gzip is not
/// read (it is).
#[test]
fn compressions_rbf_does_not_read_are_named() {
    let dir = scratch("compression-names");
    let log: Vec<u8> = (0..2000)
        .flat_map(|i| format!("{i},{},1\n", i % 97).into_bytes())
        .collect();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let noise: Vec<u8> = (0..4000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let with_magic = |magic: &[u8]| [magic, &noise[..]].concat();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&log).unwrap();
    let gz = gz.finish().unwrap();
    let gz_in_zstd = zstd::bulk::compress(&gz, 3).unwrap();
    let zstd_in_gz = {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(&zstd::bulk::compress(&log, 3).unwrap())
            .unwrap();
        e.finish().unwrap()
    };
    let xz_in_zstd =
        zstd::bulk::compress(&with_magic(&[0xFD, b'7', b'z', b'X', b'Z', 0]), 3).unwrap();
    let cases: [(&str, Vec<u8>, &[&str]); 5] = [
        (
            "t.xz",
            with_magic(&[0xFD, b'7', b'z', b'X', b'Z', 0]),
            &["xz-compressed", "xz -dc"],
        ),
        (
            "t.bz2",
            with_magic(b"BZh9"),
            &["bzip2-compressed", "bzip2 -dc"],
        ),
        (
            "t.gz.zst",
            gz_in_zstd,
            &["gzip-compressed data inside zstd", "nested"],
        ),
        (
            "t.zst.gz",
            zstd_in_gz,
            &["zstd-compressed data inside gzip", "nested"],
        ),
        (
            "t.xz.zst",
            xz_in_zstd,
            &["xz-compressed data inside zstd", "xz -dc"],
        ),
    ];
    for (name, bytes, says) in cases {
        std::fs::write(dir.join(name), bytes).unwrap();
        for extra in [&[][..], &["--format", "jedi"][..]] {
            let mut args = vec!["ingest", name, "-o", "x.rbfs"];
            args.extend(extra);
            let out = rbf(&dir, &args);
            let said = stderr(&out);
            assert_eq!(out.status.code(), Some(1), "{name} {extra:?}: {said}");
            for s in says {
                assert!(said.contains(s), "{name} {extra:?}: {said}");
            }
            assert!(
                !said.contains("which this reader does not decompress"),
                "{said}"
            );
            assert!(!said.contains("first bytes"), "{name}: a byte dump: {said}");
        }
    }
    // gzip itself is read, with --format jedi too.
    std::fs::write(dir.join("t.gz"), &gz).unwrap();
    let (ms, _) = read(
        &dir.join("t.gz"),
        &options(Format::Jedi, FlowKeyKind::FiveTuple),
    );
    assert_eq!(ms.len(), 2000);
}

/// One pcapng packet stamped in the far future (year 2500, and a timestamp beyond
/// 64-bit nanoseconds) is counted in a note and given the previous packet's time: the
/// flow records are those of the capture with that packet stamped at the previous
/// packet's time, not a mass expiry of every live flow.
#[test]
fn a_far_future_pcapng_timestamp_is_reported_and_changes_no_flow() {
    let dir = scratch("pcapng-future");
    let s = 1_000_000u64; // microseconds (the default if_tsresol)
    let packet = |i: u64| ipv4_tcp([10, 0, 0, 1], [10, 0, 0, 2], 1000 + (i % 7) as u16, 80);
    let build = |odd: u64| {
        let mut ng = PcapNg::default();
        ng.section().interface(101, None, None);
        for i in 0..200u64 {
            let t = if i == 100 {
                odd
            } else {
                1_600_000_000 * s + i * s / 10
            };
            ng.packet(0, t, &packet(i));
        }
        ng.bytes
    };
    let previous = 1_600_000_000 * s + 99 * s / 10;
    std::fs::write(dir.join("fine.pcapng"), build(previous)).unwrap();
    let year_2500 = 16_725_225_600 * s;
    for (name, odd) in [("2500.pcapng", year_2500), ("max.pcapng", u64::MAX)] {
        std::fs::write(dir.join(name), build(odd)).unwrap();
        for flows in [None, Some(FlowTimeouts::default())] {
            let o = IngestOptions {
                flows,
                ..options(Format::Auto, FlowKeyKind::FiveTuple)
            };
            let (fine, _) = read(&dir.join("fine.pcapng"), &o);
            let (ms, sum) = read(&dir.join(name), &o);
            assert_eq!(ms, fine, "{name} {flows:?}");
            let note = sum.notes.iter().find(|(k, _)| k.contains("after 2200"));
            assert_eq!(note.map(|(_, n)| *n), Some(1), "{name}: {:?}", sum.notes);
        }
    }
}

/// Hidden files (`.DS_Store`, an editor's swap file) in a directory are not part of
/// its series, nor matched by `*`; a directory of hidden files only says so.
#[test]
fn hidden_files_are_not_part_of_a_directory_series() {
    let dir = scratch("dotfiles");
    std::fs::create_dir(dir.join("d")).unwrap();
    std::fs::write(dir.join("d/a.csv"), "0,1,1\n1,2,1\n").unwrap();
    std::fs::write(dir.join("d/b.csv"), "2,3,1\n3,1,1\n").unwrap();
    std::fs::write(
        dir.join("d/.DS_Store"),
        [0u8, 0, 0, 1, b'B', b'u', b'd', b'1'],
    )
    .unwrap();
    std::fs::write(dir.join("d/.b.csv.swp"), b"b0VIM 8.2\0\0\0").unwrap();
    let o = options(Format::Auto, FlowKeyKind::FiveTuple);
    for input in ["d", "d/*"] {
        let (ms, s) = read(&dir.join(input), &o);
        assert_eq!(ms.len(), 4, "{input}: {s:?}");
        assert_eq!(s.files.len(), 2, "{input}");
    }
    std::fs::create_dir(dir.join("h")).unwrap();
    std::fs::write(dir.join("h/.x"), "0,1,1\n").unwrap();
    let out = rbf(&dir, &["ingest", "h", "-o", "x.rbfs"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("1 hidden"), "{}", stderr(&out));
}

/// CSV fields follow RFC 4180 quoting: a delimiter inside quotes is part of the key, the
/// quotes are not (so `"k231"` and `k231` are one key), `""` is a quote, and a quoted
/// field that does not close on its line is refused by line number.
#[test]
fn quoted_csv_fields_are_keys_whole() {
    let dir = scratch("csv-quotes");
    let csv_options = || IngestOptions {
        format: Format::Csv,
        csv: rbf_data::ingest::csv::CsvSpec {
            key_column: 2,
            ..Default::default()
        },
        ..Default::default()
    };
    let mut text = String::new();
    for i in 0..3000 {
        text.push_str(&format!("{i},\"cdn.example,/obj{i}\",100\n"));
    }
    std::fs::write(dir.join("q.csv"), &text).unwrap();
    let (ms, s) = read(&dir.join("q.csv"), &csv_options());
    assert_eq!(
        (ms.len(), distinct(&ms), s.malformed),
        (3000, 3000, 0),
        "{s:?}"
    );

    // Mixed quoting: the same 100 keys, every other one quoted.
    let mut text = String::new();
    for i in 0..200 {
        let k = i % 100;
        if i % 2 == 0 {
            text.push_str(&format!("{i},\"k{k}\",1\n"));
        } else {
            text.push_str(&format!("{i},k{k},1\n"));
        }
    }
    std::fs::write(dir.join("mixed.csv"), &text).unwrap();
    let (ms, s) = read(&dir.join("mixed.csv"), &csv_options());
    assert_eq!(
        (ms.len(), distinct(&ms), s.malformed),
        (200, 100, 0),
        "{s:?}"
    );

    // A quoted field spanning lines: both of its lines are counted as malformed (the
    // first with the line number and why, the second has one column), and the records
    // around them are read.
    std::fs::write(
        dir.join("open.csv"),
        "1,a,1\n2,\"b\nc\"\n3,d,1\n4,\"say \"\"hi\"\"\",1\n",
    )
    .unwrap();
    let (ms, s) = read(&dir.join("open.csv"), &csv_options());
    assert_eq!((ms.len(), distinct(&ms), s.malformed), (3, 3, 2), "{s:?}");
    let examples = s.examples.join("\n");
    assert!(examples.contains("open.csv:2:"), "{examples}");
    assert!(
        examples.contains("does not close on its line"),
        "{examples}"
    );
}

/// A directory series reads its subdirectories (`ser/a.csv`, `ser/b.csv`,
/// `ser/sub/c.csv`: every record, in path order), a directory holding only
/// subdirectories is a series of their files, a symbolic link back up the tree reads
/// nothing twice, and hidden subdirectories (`.git`) are left out and counted.
#[test]
fn a_directory_series_reads_its_subdirectories() {
    let dir = scratch("subdirs");
    let jedi = |from: u64| -> String {
        (from..from + 5000)
            .map(|i| format!("{i},{},1\n", i % 700))
            .collect()
    };
    std::fs::create_dir_all(dir.join("ser/sub")).unwrap();
    std::fs::write(dir.join("ser/a.csv"), jedi(0)).unwrap();
    std::fs::write(dir.join("ser/b.csv"), jedi(5000)).unwrap();
    std::fs::write(dir.join("ser/sub/c.csv"), jedi(10_000)).unwrap();
    std::os::unix::fs::symlink("..", dir.join("ser/sub/up")).unwrap();
    let o = options(Format::Auto, FlowKeyKind::FiveTuple);
    let (ms, s) = read(&dir.join("ser"), &o);
    assert_eq!(ms.len(), 15_000, "{s:?}");
    let files: Vec<&str> = s.files.iter().map(|f| f.source.as_str()).collect();
    assert_eq!(files.len(), 3, "{files:?}");
    assert!(files[2].ends_with("sub/c.csv"), "{files:?}");

    std::fs::create_dir_all(dir.join("only/2026/01")).unwrap();
    std::fs::create_dir_all(dir.join("only/.git")).unwrap();
    std::fs::write(dir.join("only/.git/HEAD"), "ref: x\n").unwrap();
    std::fs::write(dir.join("only/2026/01/x.csv"), jedi(0)).unwrap();
    let (ms, _) = read(&dir.join("only"), &o);
    assert_eq!(ms.len(), 5000);

    std::fs::create_dir_all(dir.join("none/sub/.cache")).unwrap();
    std::fs::write(dir.join("none/sub/.cache/x.csv"), jedi(0)).unwrap();
    let out = rbf(&dir, &["ingest", "none", "-o", "x.rbfs"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("holds no files, in it or in its subdirectories but 1 hidden"),
        "{}",
        stderr(&out)
    );
}

/// A JEDI log of `n` records (keys cycling over 5 000) written as `.rbfs` at `path`.
fn rbfs_of(dir: &Path, name: &str, n: usize, key_offset: usize) -> Vec<u8> {
    let csv: String = (0..n)
        .map(|i| format!("{i},{},1\n", key_offset + i % 5000))
        .collect();
    let src = dir.join(format!("{name}.csv"));
    std::fs::write(&src, csv).unwrap();
    let out = rbf(
        dir,
        &[
            "ingest",
            &format!("{name}.csv"),
            "-o",
            &format!("{name}.rbfs"),
            "-q",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::read(dir.join(format!("{name}.rbfs"))).unwrap()
}

/// Streams written one after another are read whole (`cat a.rbfs b.rbfs`, and two
/// `rbf ingest -o -` into one pipe), and any other bytes after a trailer are reported
/// with their offset and length, not passed as intact.
#[test]
fn concatenated_rbfs_streams_are_read_whole_and_trailing_bytes_reported() {
    let dir = scratch("rbfs-cat");
    let o = options(Format::Auto, FlowKeyKind::FiveTuple);
    let a = rbfs_of(&dir, "a", 20_000, 0);
    let b = rbfs_of(&dir, "b", 70_000, 100_000);
    let (ma, _) = read(&dir.join("a.rbfs"), &o);
    let (mb, _) = read(&dir.join("b.rbfs"), &o);
    let both = [a.clone(), b.clone()].concat();
    std::fs::write(dir.join("ab.rbfs"), &both).unwrap();
    let (ms, s) = read(&dir.join("ab.rbfs"), &o);
    assert_eq!(ms.len(), 90_000, "{s:?}");
    assert_eq!(ms[..20_000], ma[..]);
    assert_eq!(ms[20_000..], mb[..]);
    assert!(s.damage.is_none(), "{:?}", s.damage);
    assert_eq!(s.notes.values().sum::<u64>(), 1, "{:?}", s.notes);

    // Two streamed ingests into one pipe, replayed from stdin.
    let streamed: Vec<u8> = ["a.csv", "b.csv"]
        .iter()
        .flat_map(|f| {
            let out = rbf(&dir, &["ingest", f, "-o", "-", "-q"]);
            assert!(out.status.success(), "{}", stderr(&out));
            out.stdout
        })
        .collect();
    std::fs::write(dir.join("piped.rbfs"), &streamed).unwrap();
    let (ms, s) = read(&dir.join("piped.rbfs"), &o);
    assert_eq!(ms.len(), 90_000, "{s:?}");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_rbf"))
        .current_dir(&*dir)
        .args(["ingest", "-", "-o", "x.rbfs"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&streamed).unwrap();
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("90000 records") && said.contains("1 .rbfs stream(s) written after"),
        "{said}"
    );

    // Bytes after the trailer that are not a stream: read all of `a`, then a warning
    // with the offset and length.
    let tail = [a.clone(), b"appended by mistake\n".to_vec()].concat();
    std::fs::write(dir.join("tail.rbfs"), &tail).unwrap();
    let (ms, s) = read(&dir.join("tail.rbfs"), &o);
    assert_eq!(ms.len(), 20_000);
    let d = s.damage.expect("trailing bytes reported");
    assert!(
        d.contains(&format!("byte offset {}", a.len()))
            && d.contains("20 byte(s) after the stream's trailer"),
        "{d}"
    );
}

/// One flipped byte in block 1 of 4: blocks 0, 2 and 3 are read, and the warning gives
/// the corrupt block's byte offset and the 65 536 declared records not read.
#[test]
fn a_corrupt_rbfs_block_loses_only_itself() {
    let dir = scratch("rbfs-corrupt");
    let o = options(Format::Auto, FlowKeyKind::FiveTuple);
    let bytes = rbfs_of(&dir, "t", 252_000, 0);
    let (all, _) = read(&dir.join("t.rbfs"), &o);
    // Walk the chunk headers (n u32, len u32) to block 1.
    let chunk = |at: usize| {
        let n = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let len = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
        (n, len)
    };
    let first = rbfs::HEADER_LEN;
    let (n0, len0) = chunk(first);
    assert_eq!(n0, rbfs::BLOCK);
    let second = first + 8 + len0;
    let (n1, len1) = chunk(second);
    assert_eq!(n1, rbfs::BLOCK);
    let mut bad = bytes.clone();
    bad[second + 8 + len1 / 2] ^= 0x01;
    std::fs::write(dir.join("bad.rbfs"), &bad).unwrap();
    let (ms, s) = read(&dir.join("bad.rbfs"), &o);
    assert_eq!(ms.len(), 252_000 - rbfs::BLOCK, "{s:?}");
    assert_eq!(ms[..rbfs::BLOCK], all[..rbfs::BLOCK]);
    assert_eq!(ms[rbfs::BLOCK..], all[2 * rbfs::BLOCK..]);
    let d = s.damage.expect("damage");
    assert!(
        d.contains(&format!("byte offset {second}"))
            && d.contains("65536 declared message(s) in 1 corrupt block(s) were not read"),
        "{d}"
    );
    // On the command line: a warning, every other record replayed.
    let out = rbf(&dir, &["ingest", "bad.rbfs", "-o", "again.rbfs"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("65536 declared"), "{}", stderr(&out));
}

/// A FIFO named where a config, a filter config or a workload file is read says it is
/// waiting, as a trace FIFO does, and reads what a writer then gives it.
#[test]
fn a_fifo_config_or_workload_says_it_is_waiting() {
    let dir = scratch("fifo-configs");
    std::fs::write(dir.join("t.csv"), "0,1,1\n1,2,1\n2,1,1\n").unwrap();
    let cases: [(&str, Vec<&str>); 3] = [
        (
            "f.toml",
            vec!["replay", "t.csv", "--filter-config", "f.toml"],
        ),
        (
            "w.json",
            vec![
                "model",
                "fn",
                "--workload",
                "w.json",
                "-m",
                "4096",
                "-k",
                "3",
                "--sigma",
                "1000",
            ],
        ),
        ("run.toml", vec!["run", "run.toml", "-o", "out"]),
    ];
    for (name, args) in &cases {
        mkfifo(&dir.join(name));
        let mut child = crate::cli::spawn(&dir, args, Stdio::null());
        let err = chunks(child.stderr.take().unwrap());
        let said = read_until(&err, "waiting for data", Duration::from_secs(8));
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            said.contains(&format!(
                "reading {name}: a FIFO (named pipe), waiting for data"
            )),
            "{args:?}: {said:?}"
        );
    }
}
