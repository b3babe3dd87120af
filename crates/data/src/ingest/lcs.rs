//! libCacheSim's self-describing `lcs` traces, and recognising its headerless
//! oracleGeneral files by their content.
//!
//! An lcs file is a header followed by fixed-size little-endian request records
//! ([`super::binary`] reads those). Two headers exist, both starting with the magic
//! number 0x123456789abcdef0 and ending with it again:
//!
//! * the **described** header (`traceReader/generalReader/lcs.h`, 1024 bytes): a
//!   Python `struct` format string (`<` then one character per field, at most 240),
//!   the 1-based indices of the object-id, size and time fields among them, the
//!   trace's request and object counts, the number of fields and the record size;
//! * the **versioned** header of libCacheSim 0.3 and later
//!   (`traceReader/customizedReader/lcs.h`, 8192 bytes, written by its `traceConv`
//!   and the Python package's `convert_to_lcs`): a version 1-8 that fixes the record,
//!   `{u32 time, u64 id, u32 size, i64 next}` (v1, the oracleGeneral record) up to
//!   100-byte records with an `i64` size, operation, tenant, TTL and 16 features (v8),
//!   and the trace's statistics.
//!
//! Byte 8 tells them apart: the format string's `<` in the first, the low byte of a
//! version number (1-8) in the second.

use std::io::BufRead;
use std::path::Path;

use super::binary::{Field, FieldKind, RecordLayout, ORACLE_GENERAL};
use rbf_foundations::error::{Error, Result};

/// The start (and end) magic number, little-endian.
pub const MAGIC: [u8; 8] = 0x1234_5678_9abc_def0u64.to_le_bytes();
/// Length of the described header (generalReader/lcs.h).
pub const DESCRIBED_LEN: usize = 1024;
/// Length of the versioned header (customizedReader/lcs.h).
pub const VERSIONED_LEN: usize = 8192;
/// Record length of each version of the versioned header (index = version).
const VERSION_RECORD_LEN: [usize; 9] = [0, 24, 28, 36, 40, 44, 52, 68, 100];

/// What an lcs header says.
#[derive(Clone, Debug, PartialEq)]
pub struct LcsHeader {
    /// Header bytes before the first record.
    pub len: usize,
    pub layout: RecordLayout,
    /// Requests and distinct objects of the trace, as the header states them (0 when
    /// the writer did not fill them in).
    pub requests: u64,
    pub objects: u64,
    /// `format "<IQIq", id field 2` or `version 1`.
    pub description: String,
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// Reads and checks an lcs header at the start of `reader`, leaving it at the first
/// record.
pub fn read_header(path: &Path, reader: &mut dyn BufRead) -> Result<LcsHeader> {
    let bad = |offset: u64, message: String| Error::Format {
        path: path.to_path_buf(),
        offset,
        message: format!("lcs header: {message}"),
    };
    let mut h = vec![0u8; DESCRIBED_LEN];
    read_exact(reader, &mut h).map_err(|got| {
        bad(
            got as u64,
            format!("the file ends after {got} of the header's {DESCRIBED_LEN} bytes"),
        )
    })?;
    if h[..8] != MAGIC {
        return Err(bad(0, "the start magic number is missing".into()));
    }
    if h[8] == b'<' {
        return described(&h).map_err(|(at, m)| bad(at, m));
    }
    let version = u64_at(&h, 8);
    if !(1..=8).contains(&version) {
        return Err(bad(8, unknown_version(h[8], version)));
    }
    h.resize(VERSIONED_LEN, 0);
    read_exact(reader, &mut h[DESCRIBED_LEN..]).map_err(|got| {
        bad(
            (DESCRIBED_LEN + got) as u64,
            format!(
                "the file ends after {} of the version-{version} header's {VERSIONED_LEN} bytes",
                DESCRIBED_LEN + got
            ),
        )
    })?;
    if h[VERSIONED_LEN - 8..] != MAGIC {
        return Err(bad(
            (VERSIONED_LEN - 8) as u64,
            "the end magic number is missing (a damaged header?)".into(),
        ));
    }
    Ok(versioned(&h, version))
}

/// Why a header is neither described nor of a known version (`first` its byte 8).
fn unknown_version(first: u8, version: u64) -> String {
    format!(
        "neither a format string (starting with '<') nor a version 1-8 (found {version}): an lcs layout this reader does not know{}",
        if first == b'>' || first == b'!' {
            "; big-endian lcs traces are not supported (libCacheSim reads only little-endian ones)"
        } else {
            ""
        }
    )
}

/// The layout of a checked versioned header `h` (oracleGeneral's fields, the size
/// field's width by version).
fn versioned(h: &[u8], version: u64) -> LcsHeader {
    let len = VERSION_RECORD_LEN[version as usize];
    let size_kind = if version <= 2 {
        FieldKind::U32
    } else {
        FieldKind::I64
    };
    // stat = { version, n_req, n_obj, ... } at byte 16.
    let count = |at: usize| (u64_at(h, at) as i64).max(0) as u64;
    LcsHeader {
        len: VERSIONED_LEN,
        layout: RecordLayout {
            len,
            size: Some(Field {
                offset: 12,
                kind: size_kind,
            }),
            ..ORACLE_GENERAL
        },
        requests: count(24),
        objects: count(32),
        description: format!("version {version}, {len}-byte records"),
    }
}

/// Byte offsets in the described header (generalReader/lcs.h).
mod header_at {
    pub const FORMAT: usize = 8;
    pub const FORMAT_LEN: usize = 240;
    pub const FIELDS: usize = 248; // obj_id, obj_size, time, ... (u8 each, 1-based)
    pub const STATS: usize = 488; // n_req, n_obj, ... (i64 each)
    pub const N_FIELDS: usize = 1000;
    pub const ITEM_SIZE: usize = 1004;
}

/// The described header (generalReader/lcs.h): layout from its format string.
fn described(h: &[u8]) -> std::result::Result<LcsHeader, (u64, String)> {
    use header_at::{FIELDS, FORMAT, FORMAT_LEN, ITEM_SIZE, N_FIELDS, STATS};
    if h[DESCRIBED_LEN - 8..] != MAGIC {
        return Err((
            (DESCRIBED_LEN - 8) as u64,
            "the end magic number is missing (a damaged header?)".into(),
        ));
    }
    let text = &h[FORMAT..FORMAT + FORMAT_LEN];
    let Some(end) = text.iter().position(|&b| b == 0) else {
        return Err((FORMAT as u64, "the format string is not terminated".into()));
    };
    let format = &text[1..end];
    let shown = String::from_utf8_lossy(&text[..end]).into_owned();
    let (offsets, at) = format_fields(format, &shown)?;
    let n_fields = u32_at(h, N_FIELDS) as usize;
    if n_fields != format.len() {
        return Err((
            N_FIELDS as u64,
            format!(
                "it says {n_fields} field(s) but its format {shown:?} has {}",
                format.len()
            ),
        ));
    }
    let item_size = u32_at(h, ITEM_SIZE) as usize;
    if item_size != at || at == 0 {
        return Err((
            ITEM_SIZE as u64,
            format!("it says {item_size}-byte records but its format {shown:?} makes {at}"),
        ));
    }
    let field = |index: u8, name: &str, required: bool| match index {
        0 if !required => Ok(None),
        i if usize::from(i) <= offsets.len() && i > 0 => Ok(Some(offsets[usize::from(i) - 1])),
        i => Err((
            FIELDS as u64,
            format!(
                "the {name} field is {i}, but the format {shown:?} has fields 1 to {}",
                offsets.len()
            ),
        )),
    };
    let id = field(h[FIELDS], "object id", true)?.expect("required");
    let size = field(h[FIELDS + 1], "object size", false)?;
    let time = field(h[FIELDS + 2], "time", false)?;
    let count = |at: usize| (u64_at(h, at) as i64).max(0) as u64;
    Ok(LcsHeader {
        len: DESCRIBED_LEN,
        layout: RecordLayout {
            len: at,
            id,
            time,
            size,
        },
        requests: count(STATS),
        objects: count(STATS + 8),
        description: format!("format {shown:?}, object id field {}", h[FIELDS]),
    })
}

/// The fields of a described header's format string (after its '<'), each at its
/// offset in a record, and the record's length.
fn format_fields(
    format: &[u8],
    shown: &str,
) -> std::result::Result<(Vec<Field>, usize), (u64, String)> {
    let mut offsets = Vec::with_capacity(format.len());
    let mut at = 0;
    for (i, &c) in format.iter().enumerate() {
        let Some(kind) = FieldKind::from_format(c) else {
            return Err((
                (header_at::FORMAT + 1 + i) as u64,
                format!(
                    "format {shown:?}: field {} is {:?}, not one of the integer or floating-point types c b B h H i I l L q Q f d",
                    i + 1,
                    c as char
                ),
            ));
        };
        offsets.push(Field { offset: at, kind });
        at += kind.size();
    }
    Ok((offsets, at))
}

/// Fills `buf` from `reader`; `Err(bytes read)` when the input ends first.
fn read_exact(reader: &mut dyn BufRead, buf: &mut [u8]) -> std::result::Result<(), usize> {
    let mut n = 0;
    while n < buf.len() {
        match reader.read(&mut buf[n..]) {
            Ok(0) => return Err(n),
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Err(n),
        }
    }
    Ok(())
}

/// Whether the first bytes of an input are oracleGeneral records (libCacheSim's
/// headerless 24-byte `{u32 time, u64 id, u32 size, i64 next}` layout).
///
/// The test is the next-access field, which libCacheSim's converters fill in: each
/// record's is -1 (or `i64::MAX`: never again) or the position of the object's next
/// request, later in the trace, where the same id must then be found (positions are
/// counted from 1 in libCacheSim's files; from 0 is accepted too). Records whose next
/// request lies beyond the bytes at hand are only checked for lying later. Without any
/// next request at hand, at least 8 records with non-decreasing times are required.
/// Random or text data passes none of this: the chance that a random 64-bit field is
/// -1 or a small position ahead is below 2^-16 per record.
pub fn looks_like_oracle_general(head: &[u8]) -> bool {
    const LEN: usize = super::binary::RECORD_LEN;
    let n = head.len() / LEN;
    if n < 2 {
        return false;
    }
    let rec = |i: usize| {
        let r = &head[i * LEN..(i + 1) * LEN];
        (u32_at(r, 0), u64_at(r, 4), u64_at(r, 16) as i64)
    };
    let (mut within, mut from_one, mut from_zero) = (0, 0, 0);
    let mut ordered = true;
    for i in 0..n {
        let (time, id, next) = rec(i);
        if i > 0 && rec(i - 1).0 > time {
            ordered = false;
        }
        if next == -1 || next == i64::MAX {
            continue;
        }
        // Positions ahead, at most 2^48 (no trace has 2.8e14 requests).
        if next <= i as i64 || next > 1 << 48 {
            return false;
        }
        let next = next as usize;
        if next < n {
            within += 1;
            from_one += usize::from(rec(next - 1).1 == id);
            from_zero += usize::from(rec(next).1 == id);
        }
    }
    if within > 0 {
        from_one == within || from_zero == within
    } else {
        ordered && n >= 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oracle(records: &[(u32, u64, u32, i64)]) -> Vec<u8> {
        records
            .iter()
            .flat_map(|&(t, id, size, next)| {
                [
                    &t.to_le_bytes()[..],
                    &id.to_le_bytes(),
                    &size.to_le_bytes(),
                    &next.to_le_bytes(),
                ]
                .concat()
            })
            .collect()
    }

    #[test]
    fn oracle_general_is_told_from_other_data() {
        // 1-based next positions, as libCacheSim writes them.
        let ok = oracle(&[
            (5, 10, 512, 3),
            (5, 11, 512, -1),
            (6, 10, 512, 4),
            (6, 10, 512, -1),
        ]);
        assert!(looks_like_oracle_general(&ok));
        // 0-based.
        let zero = oracle(&[(5, 10, 512, 2), (5, 11, 512, -1), (6, 10, 512, -1)]);
        assert!(looks_like_oracle_general(&zero));
        // The next position names another object.
        let wrong = oracle(&[(5, 10, 512, 2), (5, 11, 512, -1), (6, 12, 512, -1)]);
        assert!(!looks_like_oracle_general(&wrong));
        // A next position behind the record.
        let back = oracle(&[(5, 10, 512, -1), (5, 11, 512, 1)]);
        assert!(!looks_like_oracle_general(&back));
        // No links at hand: needs 8 ordered records.
        let far: Vec<_> = (0..8).map(|i| (i, 100 + u64::from(i), 1, 1000)).collect();
        assert!(looks_like_oracle_general(&oracle(&far)));
        assert!(!looks_like_oracle_general(&oracle(&far[..7])));
        let mut shuffled = far.clone();
        shuffled.swap(0, 5);
        assert!(!looks_like_oracle_general(&oracle(&shuffled)));
        assert!(!looks_like_oracle_general(
            b"0,700,995\n1,278,742\n2,837,476\n3,978,661\n4,986,498\n5,1,1\n6,2,2\n"
        ));
        let noise: Vec<u8> = (0..4096u32)
            .map(|i| (crate::filter::mix64(u64::from(i)) >> 7) as u8)
            .collect();
        assert!(!looks_like_oracle_general(&noise));
    }
}
