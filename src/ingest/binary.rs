//! The 24-byte binary request record of public cache-trace collections (the
//! "oracleGeneral" layout of libCacheSim): little-endian
//! `{u32 timestamp (s), u64 object id, u32 object size, i64 next access}`.
//!
//! The key is the object id written in decimal and then hashed, exactly as a JEDI log
//! line with the same id would be, so the same object has the same key in both formats.

use std::io::{BufRead, Read};
use std::path::PathBuf;

use super::{IngestSummary, MessageSource};
use crate::message::{KeyDictionary, KeyHasher, Message, Timestamp};

pub const RECORD_LEN: usize = 24;
/// Records decoded per read.
const BATCH: usize = 4096;

/// A message source over binary request records.
pub struct BinarySource {
    path: PathBuf,
    reader: Box<dyn BufRead + Send>,
    hasher: KeyHasher,
    dictionary: Option<KeyDictionary>,
    buf: Vec<u8>,
    filled: usize,
    pos: usize,
    offset: u64,
    done: bool,
    summary: IngestSummary,
}

/// Decimal digits of `v` in `buf`, returned as a slice (no allocation).
#[inline]
pub fn decimal(mut v: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    &buf[i..]
}

impl BinarySource {
    pub fn new(
        path: PathBuf,
        reader: Box<dyn BufRead + Send>,
        hasher: KeyHasher,
        keep_keys: bool,
    ) -> Self {
        let summary = IngestSummary::new(&path, "binary");
        BinarySource {
            path,
            reader,
            hasher,
            dictionary: keep_keys.then(KeyDictionary::new),
            buf: vec![0; RECORD_LEN * BATCH],
            filled: 0,
            pos: 0,
            offset: 0,
            done: false,
            summary,
        }
    }

    /// Reads the next batch of whole records; a trailing partial record is damage.
    fn refill(&mut self) -> bool {
        self.offset += self.pos as u64;
        let mut n = 0;
        while n < self.buf.len() {
            match self.reader.read(&mut self.buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.summary.damage = Some(format!(
                        "{}: byte offset {}: read error: {e}; the {} record(s) before it were read",
                        self.path.display(),
                        self.offset + n as u64,
                        self.summary.records
                    ));
                    break;
                }
            }
        }
        let whole = n - n % RECORD_LEN;
        if n % RECORD_LEN != 0 && self.summary.damage.is_none() {
            self.summary.damage = Some(format!(
                "{}: byte offset {}: truncated: the last record has {} of {RECORD_LEN} bytes; the {} whole record(s) before it were read",
                self.path.display(),
                self.offset + whole as u64,
                n % RECORD_LEN,
                self.summary.records + (whole / RECORD_LEN) as u64
            ));
        }
        self.filled = whole;
        self.pos = 0;
        whole > 0
    }
}

impl Iterator for BinarySource {
    type Item = Message;

    #[inline]
    fn next(&mut self) -> Option<Message> {
        if self.pos >= self.filled && (self.done || !self.refill()) {
            self.done = true;
            return None;
        }
        let r = &self.buf[self.pos..self.pos + RECORD_LEN];
        self.pos += RECORD_LEN;
        let time = u32::from_le_bytes([r[0], r[1], r[2], r[3]]);
        let id = u64::from_le_bytes([r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11]]);
        let mut digits = [0u8; 20];
        let text = decimal(id, &mut digits);
        let key = self.hasher.hash(text);
        if let Some(d) = self.dictionary.as_mut() {
            d.record(key, text);
        }
        self.summary.records += 1;
        self.summary.messages += 1;
        if self.summary.damage.is_some() && self.pos >= self.filled {
            // Nothing follows damage.
            self.done = true;
        }
        Some(Message::at(key, Timestamp::from_secs(u64::from(time))))
    }
}

impl MessageSource for BinarySource {
    fn summary(&self) -> &IngestSummary {
        &self.summary
    }

    fn dictionary(&self) -> Option<&KeyDictionary> {
        self.dictionary.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_digits() {
        let mut b = [0u8; 20];
        assert_eq!(decimal(0, &mut b), b"0");
        assert_eq!(decimal(u64::MAX, &mut b), b"18446744073709551615");
    }
}
