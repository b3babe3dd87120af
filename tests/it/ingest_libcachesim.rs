//! libCacheSim's traces: its oracleGeneral sample and an lcs file written by its own
//! converter (tests/data, GPL-3.0 notice there), and lcs files written here by a writer
//! that follows libCacheSim's lcs.h headers field by field (both layouts), plain,
//! zstd- and gzip-compressed, detected from their content.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use rbf_data::ingest::count::Basis;
use rbf_data::ingest::packet::key::FlowKeyKind;
use rbf_data::ingest::{self, Format};
use rbf_data::message::{KeyHasher, Message, Timestamp};

use crate::ingest_support::{data, options, read, scratch};

/// libCacheSim's reader on its sample: 113 872 requests, 48 974 objects
/// (libcachesim 0.3.5, `TraceReader(..., ORACLE_GENERAL_TRACE)`).
const SAMPLE_REQUESTS: usize = 113_872;
const SAMPLE_OBJECTS: usize = 48_974;

fn auto() -> ingest::IngestOptions {
    options(Format::Auto, FlowKeyKind::FiveTuple)
}

fn distinct(ms: &[Message]) -> usize {
    ms.iter().map(|m| m.key).collect::<HashSet<_>>().len()
}

fn unzstd(name: &str) -> Vec<u8> {
    zstd::decode_all(std::fs::File::open(data(name)).expect("open")).expect("decompress")
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("write");
    p
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).expect("write");
    e.finish().expect("finish")
}

/// The messages a JEDI log with these (time, id) requests gives: the reference every
/// binary layout must agree with.
fn jedi_messages(records: &[(u64, u64)]) -> Vec<Message> {
    let h = KeyHasher::default();
    records
        .iter()
        .map(|&(t, id)| Message::at(h.hash(id.to_string().as_bytes()), Timestamp::from_secs(t)))
        .collect()
}

#[test]
fn the_oracle_general_sample_is_detected_and_counted_like_libcachesim() {
    let dir = scratch("lcs-sample");
    let raw = unzstd("libcachesim_cloudPhysicsIO.oracleGeneral.bin.zst");
    let plain = write(&dir, "cloudPhysicsIO.oracleGeneral.bin", &raw);
    let gz = write(&dir, "sample.gz", &gzip(&raw));
    let mut all = Vec::new();
    for path in [
        plain.clone(),
        data("libcachesim_cloudPhysicsIO.oracleGeneral.bin.zst"),
        gz,
    ] {
        let (ms, s) = read(&path, &auto());
        assert_eq!(s.format.name(), "binary", "{}", path.display());
        assert_eq!((ms.len(), distinct(&ms)), (SAMPLE_REQUESTS, SAMPLE_OBJECTS));
        assert_eq!(s.damage, None);
        all.push(ms);
    }
    assert!(all.windows(2).all(|w| w[0] == w[1]));
    // --format binary gives the same.
    let (forced, _) = read(&plain, &options(Format::Binary, FlowKeyKind::FiveTuple));
    assert_eq!(forced, all[0]);
    // The first records, decoded by hand: u32 time 5633898, ids 42932745, ...
    let first = jedi_messages(&[(5_633_898, 42_932_745), (5_633_898, 42_932_746)]);
    assert_eq!(&all[0][..2], &first[..]);
}

#[test]
fn an_lcs_file_from_libcachesims_converter_reads_like_its_source() {
    let dir = scratch("lcs-converter");
    // Written by libcachesim 0.3.5: Util.convert_to_lcs(reader, path, lcs_ver=1).
    let raw = unzstd("libcachesim_cloudPhysicsIO.v1.lcs.zst");
    let plain = write(&dir, "cloudPhysicsIO.lcs", &raw);
    let (oracle, _) = read(
        &data("libcachesim_cloudPhysicsIO.oracleGeneral.bin.zst"),
        &auto(),
    );
    for path in [plain, data("libcachesim_cloudPhysicsIO.v1.lcs.zst")] {
        let (ms, s) = read(&path, &auto());
        assert_eq!(s.format.name(), "lcs");
        assert_eq!(ms, oracle, "{}", path.display());
        assert!(s.notes.is_empty() && s.damage.is_none(), "{s:?}");
    }
}

/// An lcs header of libCacheSim's generalReader/lcs.h (1024 bytes): start magic,
/// `char format[240]`, nine `unsigned char` field indices, 231 reserved bytes, the
/// stat block (n_req, n_obj, n_req_byte, n_obj_byte, 60 unused int64), `uint32
/// n_fields`, `uint32 item_size`, `uint64 version`, end magic.
fn described_header(format: &str, id: u8, size: u8, time: u8, n_req: i64, n_obj: i64) -> Vec<u8> {
    let magic = 0x1234_5678_9abc_def0u64.to_le_bytes();
    let mut h = Vec::with_capacity(1024);
    h.extend(magic);
    let mut f = [0u8; 240];
    f[..format.len()].copy_from_slice(format.as_bytes());
    h.extend(f);
    // obj_id, obj_size, time, last_access_vtime, next_access_vtime, op, ttl, tenant,
    // content_type
    h.extend([id, size, time, 0, 0, 0, 0, 0, 0]);
    h.extend([0u8; 231]);
    for v in [n_req, n_obj, 0, 0] {
        h.extend(v.to_le_bytes());
    }
    h.extend([0u8; 60 * 8]);
    let sizes = |c: char| match c {
        'c' | 'b' | 'B' => 1,
        'h' | 'H' => 2,
        'i' | 'I' | 'l' | 'L' | 'f' => 4,
        _ => 8,
    };
    let n_fields = format.len() as u32 - 1;
    let item: u32 = format.chars().skip(1).map(sizes).sum();
    h.extend(n_fields.to_le_bytes());
    h.extend(item.to_le_bytes());
    h.extend(1u64.to_le_bytes());
    h.extend(magic);
    assert_eq!(h.len(), 1024);
    h
}

/// An lcs header of libCacheSim 0.3's customizedReader/lcs.h (8192 bytes): start magic,
/// `uint64 version`, the 8000-byte stat block (version, n_req, n_obj, ...), 21 unused
/// `uint64`, end magic.
fn versioned_header(version: u64, n_req: i64, n_obj: i64) -> Vec<u8> {
    let magic = 0x1234_5678_9abc_def0u64.to_le_bytes();
    let mut h = Vec::with_capacity(8192);
    h.extend(magic);
    h.extend(version.to_le_bytes());
    let mut stat = vec![0u8; 8000];
    stat[..8].copy_from_slice(&1i64.to_le_bytes());
    stat[8..16].copy_from_slice(&n_req.to_le_bytes());
    stat[16..24].copy_from_slice(&n_obj.to_le_bytes());
    h.extend(stat);
    h.extend([0u8; 21 * 8]);
    h.extend(magic);
    assert_eq!(h.len(), 8192);
    h
}

/// Requests (time, id) with repeats: 7 distinct ids over 20 requests.
fn requests() -> Vec<(u64, u64)> {
    (0..20u64)
        .map(|i| {
            (
                1_000 + i / 3,
                [5, 6, 7, 5, 1 << 40, 9, 10, 11][(i % 8) as usize] + i % 2 * 100,
            )
        })
        .collect()
}

#[test]
fn lcs_files_following_lcs_h_read_in_every_layout() {
    let dir = scratch("lcs-layouts");
    let reqs = requests();
    let want = jedi_messages(&reqs);
    let n_obj = reqs.iter().map(|r| r.1).collect::<HashSet<_>>().len() as i64;
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    // Described: oracleGeneral's record; the id first as `Q` with a 64-bit time and a
    // signed 16-bit field between; a 32-bit id.
    let mut og = described_header("<IQIq", 2, 3, 1, 20, n_obj);
    let mut reordered = described_header("<QhqB", 1, 0, 3, 20, n_obj);
    for &(t, id) in &reqs {
        og.extend((t as u32).to_le_bytes());
        og.extend(id.to_le_bytes());
        og.extend(4096u32.to_le_bytes());
        og.extend((-1i64).to_le_bytes());
        reordered.extend(id.to_le_bytes());
        reordered.extend((-7i16).to_le_bytes());
        reordered.extend((t as i64).to_le_bytes());
        reordered.push(3);
    }
    files.push(("described-oracle".into(), og));
    files.push(("described-reordered".into(), reordered));
    // Versioned: every version, with its record length; fields past the id, size and
    // time filled with noise.
    for (version, len) in [
        (1, 24),
        (2, 28),
        (3, 36),
        (4, 40),
        (5, 44),
        (6, 52),
        (7, 68),
        (8, 100),
    ] {
        let mut f = versioned_header(version, 20, n_obj);
        for &(t, id) in &reqs {
            let mut r = vec![0xA5u8; len];
            r[..4].copy_from_slice(&(t as u32).to_le_bytes());
            r[4..12].copy_from_slice(&id.to_le_bytes());
            if version <= 2 {
                r[12..16].copy_from_slice(&512u32.to_le_bytes());
            } else {
                r[12..20].copy_from_slice(&512i64.to_le_bytes());
            }
            f.extend(r);
        }
        files.push((format!("v{version}"), f));
    }
    for (name, bytes) in &files {
        let zst = zstd::encode_all(&bytes[..], 3).expect("zstd");
        for (suffix, content) in [("", bytes.clone()), (".zst", zst), (".gz", gzip(bytes))] {
            let path = write(&dir, &format!("{name}.lcs{suffix}"), &content);
            let (ms, s) = read(&path, &auto());
            assert_eq!(s.format.name(), "lcs", "{name}{suffix}");
            assert_eq!(ms, want, "{name}{suffix}");
            assert!(s.notes.is_empty() && s.damage.is_none(), "{name}: {s:?}");
            let (forced, _) = read(&path, &options(Format::Lcs, FlowKeyKind::FiveTuple));
            assert_eq!(forced, want);
        }
    }
    // A 32-bit id is the same object as the same number in 64 bits.
    let mut narrow = described_header("<II", 1, 0, 2, 2, 1);
    for _ in 0..2 {
        narrow.extend(5u32.to_le_bytes());
        narrow.extend(1000u32.to_le_bytes());
    }
    let (ms, _) = read(&write(&dir, "narrow.lcs", &narrow), &auto());
    assert_eq!(ms, jedi_messages(&[(1000, 5), (1000, 5)]));
}

#[test]
fn damaged_lcs_files_are_reported_with_their_offsets() {
    let dir = scratch("lcs-damage");
    let reqs = requests();
    let mut f = versioned_header(1, 20, 7);
    for &(t, id) in &reqs {
        f.extend((t as u32).to_le_bytes());
        f.extend(id.to_le_bytes());
        f.extend(0u32.to_le_bytes()); // size 0: libCacheSim would skip these
        f.extend((-1i64).to_le_bytes());
    }
    // Cut in the 11th record: ten records, and damage at byte 8192 + 240.
    let cut = write(&dir, "cut.lcs", &f[..8192 + 24 * 10 + 7]);
    let (ms, s) = read(&cut, &auto());
    assert_eq!(ms, jedi_messages(&reqs[..10]));
    let d = s.damage.expect("damage");
    assert!(
        d.contains("byte offset 8432") && d.contains("7 of 24 bytes"),
        "{d}"
    );
    // Whole file: the size-0 records are replayed and noted.
    let (ms, s) = read(&write(&dir, "zero.lcs", &f), &auto());
    assert_eq!(ms.len(), 20);
    assert!(
        s.notes
            .iter()
            .any(|(k, &n)| k.contains("object size 0") && n == 20),
        "{:?}",
        s.notes
    );
    // The header announces more requests than there are.
    let mut short = versioned_header(1, 25, 7);
    short.extend(&f[8192..]);
    let (_, s) = read(&write(&dir, "short.lcs", &short), &auto());
    assert!(
        s.notes
            .keys()
            .any(|k| k.contains("announces 25 request(s), the file holds 20")),
        "{:?}",
        s.notes
    );
    // Header errors name the offset and what is wrong.
    let error = |bytes: &[u8]| {
        ingest::open(&write(&dir, "bad.lcs", bytes), &auto())
            .err()
            .expect("an error")
            .to_string()
    };
    let e = error(&f[..5000]);
    assert!(e.contains("byte offset 5000") && e.contains("8192"), "{e}");
    let mut bad = described_header("<IQIq", 2, 3, 1, 1, 1);
    bad[1000] = 5; // n_fields
    let e = error(&bad);
    assert!(
        e.contains("byte offset 1000") && e.contains("5 field(s)"),
        "{e}"
    );
    let bad = described_header("<IQIq", 7, 3, 1, 1, 1);
    let e = error(&bad);
    assert!(e.contains("object id field is 7"), "{e}");
    let bad = described_header("<IQsq", 2, 3, 1, 1, 1);
    let e = error(&bad);
    assert!(e.contains("field 3 is 's'"), "{e}");
    let mut bad = versioned_header(9, 1, 1);
    bad.extend([0u8; 24]);
    let e = error(&bad);
    assert!(e.contains("version 1-8 (found 9)"), "{e}");
    let mut bad = versioned_header(1, 1, 1);
    bad[8190] ^= 1;
    let e = error(&bad);
    assert!(
        e.contains("byte offset 8184") && e.contains("end magic"),
        "{e}"
    );
}

#[test]
fn a_table_sized_from_the_lcs_header_replays_like_a_grown_one() {
    // The lcs file's header declares 48 974 objects (the ground truth is sized up
    // front); the oracleGeneral file has no header (the table grows).
    let replay = |path: PathBuf| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rbf"))
            .args([
                "replay", "--json", "-m", "2^17", "-k", "4", "--sigma", "40000",
            ])
            .arg(path)
            .output()
            .expect("runs");
        let mut v = crate::cli::json_of(&out);
        v.as_object_mut().expect("object").remove("ingest");
        v
    };
    let sized = replay(data("libcachesim_cloudPhysicsIO.v1.lcs.zst"));
    let grown = replay(data("libcachesim_cloudPhysicsIO.oracleGeneral.bin.zst"));
    assert_eq!(sized, grown);
    assert_eq!(sized["distinct_keys"], SAMPLE_OBJECTS);
    // The plain oracleGeneral file has its objects counted from the next-access field
    // (the table sized up front, with no header): the same results.
    let dir = scratch("lcs-counted");
    let raw = unzstd("libcachesim_cloudPhysicsIO.oracleGeneral.bin.zst");
    let plain = write(&dir, "cloudPhysicsIO.oracleGeneral.bin", &raw);
    assert_eq!(replay(plain), grown);
}

#[test]
fn the_next_access_field_counts_libcachesims_objects() {
    // Exactly, for a file of up to 256 blocks of 4096 records (the sample: 28 blocks).
    let dir = scratch("lcs-count");
    let raw = unzstd("libcachesim_cloudPhysicsIO.oracleGeneral.bin.zst");
    let plain = write(&dir, "cloudPhysicsIO.oracleGeneral.bin", &raw);
    let next = |r: &[u8]| rbf_data::ingest::binary::NEXT_ACCESS.read(r);
    let e = rbf_data::ingest::count::estimate(&plain, 0, 24, next).expect("a count");
    assert_eq!(
        (e.distinct, e.basis),
        (SAMPLE_OBJECTS as u64, Basis::Counted)
    );
    // Only plain files are counted (a compressed one is not read twice), through
    // the decode thread too.
    let opened = |path: &Path| {
        ingest::open(path, &auto())
            .expect("opens")
            .estimated_distinct()
    };
    assert_eq!(opened(&plain), Some(e));
    assert_eq!(
        opened(&data("libcachesim_cloudPhysicsIO.oracleGeneral.bin.zst")),
        None
    );
    // A larger file (the sample 12 times over, its next accesses shifted to match:
    // 1.37 M records, 334 blocks, 256 sampled) is estimated from above, within 6 %.
    let copies = 12u64;
    let mut big = Vec::with_capacity(raw.len() * copies as usize);
    let n = (raw.len() / 24) as i64;
    for c in 0..copies as i64 {
        for r in raw.chunks_exact(24) {
            let mut r = r.to_vec();
            let next = i64::from_le_bytes(r[16..24].try_into().unwrap());
            // Each copy has objects of its own (ids offset by c << 40), so each keeps
            // its own last requests.
            let id = u64::from_le_bytes(r[4..12].try_into().unwrap()) + ((c as u64) << 40);
            r[4..12].copy_from_slice(&id.to_le_bytes());
            let shifted = if next == -1 { -1 } else { next + c * n };
            r[16..24].copy_from_slice(&shifted.to_le_bytes());
            big.extend(r);
        }
    }
    let path = write(&dir, "big.oracleGeneral.bin", &big);
    let e = rbf_data::ingest::count::estimate(&path, 0, 24, next).expect("an estimate");
    let truth = SAMPLE_OBJECTS as u64 * copies;
    assert_eq!(e.basis, Basis::Sampled);
    assert!(
        (truth..=truth * 106 / 100).contains(&e.distinct),
        "{e:?} for {truth}"
    );
}
