//! How many distinct objects an oracleGeneral file holds, estimated from a sample of
//! its records before the replay starts, to size the ground truth once instead of
//! doubling it up to that size (fewer bytes for the kernel to zero, no copies;
//! docs/PERFORMANCE.md, "Replay").
//!
//! libCacheSim's oracleGeneral record carries the logical time of the object's next
//! request, -1 (some converters write `i64::MAX`) when there is none: every object has
//! exactly one such record, its last request, so counting them counts the objects.
//! Counting them all means reading the whole file a second time (longer than the
//! doublings it saves), so a file of more than [`SAMPLE_BLOCKS`] blocks of
//! [`BLOCK_RECORDS`] records has that many blocks read, evenly spaced (a systematic
//! sample: the share of last requests drifts along a trace, towards its end), and
//! the count scaled up, plus three standard errors (from successive differences) and
//! 2 %; a smaller file is counted exactly.
//!
//! It is a hint, never a result: a table holds any number of keys whatever it was
//! sized for, so a wrong estimate (a damaged file, a writer that fills the field
//! differently) changes memory and speed, not what is counted. Only plain regular
//! files are sampled (a compressed file cannot be read out of order), and only when
//! replay asks (the blocks are read in file order: on a cold spinning disk, about a
//! second of seeks).

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Records per sampled block (96 KiB of oracleGeneral records).
pub const BLOCK_RECORDS: u64 = 4096;
/// Blocks read at most (24 MiB of oracleGeneral records).
pub const SAMPLE_BLOCKS: u64 = 256;

/// An estimate of the distinct objects of an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DistinctEstimate {
    /// Objects: exact, or an upper estimate.
    pub distinct: u64,
    pub basis: Basis,
}

/// How a [`DistinctEstimate`] was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Basis {
    /// Every record's next-access field counted: exact.
    Counted,
    /// A sample of the records' next-access field, scaled up ([`estimate`]).
    Sampled,
    /// A sketch of every key ([`super::sketch`]: keys in memory).
    Sketched,
}

impl DistinctEstimate {
    /// How the count was made, for messages ("counted from its records' next-access
    /// field", "estimated from a sample of ...").
    pub fn describe(&self) -> &'static str {
        match self.basis {
            Basis::Counted => "counted from its records' next-access field",
            Basis::Sampled => "estimated from a sample of its records' next-access field",
            Basis::Sketched => "estimated from a sketch of its keys",
        }
    }
}

/// The distinct objects of `path` (a plain regular file) whose records, `record`
/// bytes each from byte `offset` on, give their next access through `next` (e.g.
/// [`NEXT_ACCESS`](super::binary::NEXT_ACCESS)'s reader); None when the file cannot
/// be read or its records do not carry it (no record without a next access, or one
/// before any request: < -1).
pub fn estimate(
    path: &Path,
    offset: u64,
    record: usize,
    next: impl Fn(&[u8]) -> i64,
) -> Option<DistinctEstimate> {
    let meta = std::fs::metadata(path).ok().filter(|m| m.is_file())?;
    let records = meta.len().saturating_sub(offset) / record as u64;
    let blocks = records.div_ceil(BLOCK_RECORDS);
    if blocks == 0 {
        return None;
    }
    let mut file = std::fs::File::open(path).ok()?;
    let mut buf = vec![0u8; record * BLOCK_RECORDS as usize];
    let mut block = |b: u64| -> Option<(u64, u64)> {
        let first = b * BLOCK_RECORDS;
        let n = BLOCK_RECORDS.min(records - first);
        let bytes = &mut buf[..n as usize * record];
        file.seek(SeekFrom::Start(offset + first * record as u64))
            .ok()?;
        file.read_exact(bytes).ok()?;
        let mut last = 0u64;
        for r in bytes.chunks_exact(record) {
            let at = next(r);
            if at < -1 {
                return None;
            }
            last += u64::from(at == -1 || at == i64::MAX);
        }
        Some((last, n))
    };
    let sampled = blocks.min(SAMPLE_BLOCKS);
    // Block i of the sample: the middle of the i-th of `sampled` equal stretches.
    let counts = (0..sampled)
        .map(|i| block((2 * i + 1) * blocks / (2 * sampled)))
        .collect::<Option<Vec<_>>>()?;
    let (last, read) = counts
        .iter()
        .fold((0u64, 0u64), |(a, b), &(l, n)| (a + l, b + n));
    // None read, or every record read a last request: the field is not filled in
    // (sizing for every request as an object would waste memory), or each object is
    // requested once, when growing costs little.
    if last == 0 || last == read {
        return None;
    }
    if sampled == blocks {
        return Some(DistinctEstimate {
            distinct: last,
            basis: Basis::Counted,
        });
    }
    Some(scaled(&counts, (last, read), blocks, records))
}

/// The sampled blocks' (last requests, records) `counts`, with their totals
/// `(last, read)`, scaled to the `blocks` blocks of `records` records: an upper
/// estimate of the distinct objects.
fn scaled(
    counts: &[(u64, u64)],
    (last, read): (u64, u64),
    blocks: u64,
    records: u64,
) -> DistinctEstimate {
    let sampled = counts.len() as u64;
    // Per-block counts scaled to the whole file. Their variance from successive
    // differences (the usual estimator for a systematic sample: a smooth drift along
    // the file is not mistaken for noise), with the finite-population factor.
    let s = sampled as f64;
    let per_record = last as f64 / read as f64;
    let var = counts
        .windows(2)
        .map(|w| (w[1].0 as f64 - w[0].0 as f64).powi(2))
        .sum::<f64>()
        / (2.0 * (s - 1.0));
    let se = blocks as f64 * (var / s * (1.0 - s / blocks as f64)).sqrt();
    let point = per_record * records as f64;
    let upper = (point * 1.02 + 3.0 * se).ceil() as u64;
    DistinctEstimate {
        distinct: upper.min(records),
        basis: Basis::Sampled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: u64, next: i64) -> Vec<u8> {
        let mut r = vec![0u8; 24];
        r[4..12].copy_from_slice(&id.to_le_bytes());
        r[12..16].copy_from_slice(&1u32.to_le_bytes());
        r[16..24].copy_from_slice(&next.to_le_bytes());
        r
    }

    fn estimated(bytes: &[u8], offset: u64) -> Option<DistinctEstimate> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "rbf-count-{}-{}.oracleGeneral.bin",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&path, bytes).unwrap();
        let next = |r: &[u8]| i64::from_le_bytes(r[16..24].try_into().unwrap());
        let e = estimate(&path, offset, 24, next);
        std::fs::remove_file(&path).unwrap();
        e
    }

    /// `objects` objects requested in `rounds` rounds, each round in order.
    fn rounds(objects: u64, rounds: i64) -> Vec<u8> {
        let mut bytes = Vec::new();
        for round in 0..rounds {
            for id in 0..objects {
                let next = if round == rounds - 1 {
                    -1
                } else {
                    (round + 1) * objects as i64 + id as i64
                };
                bytes.extend(record(id, next));
            }
        }
        bytes
    }

    #[test]
    fn a_small_file_is_counted_exactly() {
        let mut bytes = vec![7u8; 10]; // a header, skipped by the offset
        bytes.extend(rounds(40_000, 3));
        bytes.extend([1, 2, 3]); // a cut record at the end is ignored
        assert_eq!(
            estimated(&bytes, 10),
            Some(DistinctEstimate {
                distinct: 40_000,
                basis: Basis::Counted
            })
        );
        // i64::MAX also means "no next request".
        let b = [record(1, 2), record(2, -1), record(1, i64::MAX)].concat();
        assert_eq!(estimated(&b, 0).map(|e| e.distinct), Some(2));
    }

    #[test]
    fn a_large_file_is_estimated_from_above_within_a_few_percent() {
        // 400 000 objects, 5 rounds: 2 M records, 489 blocks, 256 sampled. The last
        // requests all lie in the last fifth of the file: the drift a sample must
        // follow.
        let bytes = rounds(400_000, 5);
        let e = estimated(&bytes, 0).unwrap();
        assert_eq!(e.basis, Basis::Sampled);
        assert!(
            (400_000..=400_000 * 106 / 100).contains(&e.distinct),
            "{e:?}"
        );
    }

    #[test]
    fn no_estimate_from_records_that_do_not_carry_it() {
        // A next access before any request: not oracleGeneral's field.
        let b = [record(1, -1), record(2, -5)].concat();
        assert_eq!(estimated(&b, 0), None);
        // No record without a next access (the field left at 0).
        assert_eq!(estimated(&[record(1, 0), record(2, 0)].concat(), 0), None);
        // Every record a last request: the field is not filled in (or growing is cheap).
        assert_eq!(estimated(&[record(1, -1), record(1, -1)].concat(), 0), None);
        // Shorter than one record.
        assert_eq!(estimated(&[0u8; 10], 0), None);
    }
}
