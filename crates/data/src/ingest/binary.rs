//! Fixed-size binary request records, as public cache-trace collections and
//! libCacheSim write them: by default the 24-byte "oracleGeneral" record,
//! little-endian `{u32 timestamp (s), u64 object id, u32 object size, i64 next
//! access}`, and any layout an lcs header describes ([`super::lcs`]).
//!
//! The key is the object id written in decimal and then hashed, exactly as a JEDI log
//! line with the same id would be, so the same object has the same key in every format.

use std::io::{BufRead, Read};
use std::path::PathBuf;

use super::options::Format;
use super::source::{IngestSummary, MessageSource, SourceFormat};
use crate::message::{KeyDictionary, KeyHasher, Message, Timestamp};

/// Length of an oracleGeneral record.
pub const RECORD_LEN: usize = 24;
/// Records decoded per read.
const BATCH: usize = 4096;

/// How a record field is stored (little-endian), named by Python's `struct` format
/// characters as lcs headers name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
}

impl FieldKind {
    /// The kind of a `struct` format character (`c`, `b`, `B`, `h`, `H`, `i`, `I`,
    /// `l`, `L`, `q`, `Q`, `f`, `d`; `l`/`L` are 4 bytes, as in libCacheSim).
    pub fn from_format(c: u8) -> Option<FieldKind> {
        Some(match c {
            b'c' | b'b' => FieldKind::I8,
            b'B' => FieldKind::U8,
            b'h' => FieldKind::I16,
            b'H' => FieldKind::U16,
            b'i' | b'l' => FieldKind::I32,
            b'I' | b'L' => FieldKind::U32,
            b'q' => FieldKind::I64,
            b'Q' => FieldKind::U64,
            b'f' => FieldKind::F32,
            b'd' => FieldKind::F64,
            _ => return None,
        })
    }

    pub fn size(self) -> usize {
        match self {
            FieldKind::I8 | FieldKind::U8 => 1,
            FieldKind::I16 | FieldKind::U16 => 2,
            FieldKind::I32 | FieldKind::U32 | FieldKind::F32 => 4,
            FieldKind::I64 | FieldKind::U64 | FieldKind::F64 => 8,
        }
    }
}

/// A field's place in a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub offset: usize,
    pub kind: FieldKind,
}

impl Field {
    /// The field of record `r` as a signed integer (unsigned 64-bit values keep
    /// their bits; floating-point values are truncated, as libCacheSim does).
    #[inline(always)]
    pub fn read(self, r: &[u8]) -> i64 {
        let b = &r[self.offset..self.offset + self.kind.size()];
        let le8 = |b: &[u8]| {
            let mut a = [0u8; 8];
            a[..b.len()].copy_from_slice(b);
            u64::from_le_bytes(a)
        };
        match self.kind {
            FieldKind::I8 => i64::from(b[0] as i8),
            FieldKind::U8 => i64::from(b[0]),
            FieldKind::I16 => i64::from(le8(b) as u16 as i16),
            FieldKind::U16 => le8(b) as i64,
            FieldKind::I32 => i64::from(le8(b) as u32 as i32),
            FieldKind::U32 => le8(b) as i64,
            FieldKind::I64 | FieldKind::U64 => le8(b) as i64,
            FieldKind::F32 => f32::from_bits(le8(b) as u32) as i64,
            FieldKind::F64 => f64::from_bits(le8(b)) as i64,
        }
    }
}

/// Where a fixed-size record keeps the fields a message needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordLayout {
    /// Bytes per record.
    pub len: usize,
    /// The object id: the message key (its decimal digits, hashed).
    pub id: Field,
    /// The request time in seconds.
    pub time: Option<Field>,
    /// The object size: only counted when 0 (libCacheSim's readers skip such
    /// requests by default, see [`BinarySource`]).
    pub size: Option<Field>,
}

/// libCacheSim's oracleGeneral record.
pub const ORACLE_GENERAL: RecordLayout = RecordLayout {
    len: RECORD_LEN,
    id: Field {
        offset: 4,
        kind: FieldKind::U64,
    },
    time: Some(Field {
        offset: 0,
        kind: FieldKind::U32,
    }),
    size: Some(Field {
        offset: 12,
        kind: FieldKind::U32,
    }),
};

/// The next-access field of an oracleGeneral record: the logical time of the object's
/// next request, -1 (or `i64::MAX`) for none. Not part of a message; [`super::count`]
/// counts objects with it.
pub const NEXT_ACCESS: Field = Field {
    offset: 16,
    kind: FieldKind::I64,
};

/// Note for records with object size 0.
const ZERO_SIZE_NOTE: &str =
    "record(s) with object size 0 (replayed here; libCacheSim's readers skip them by default)";

/// A message source over fixed-size binary request records.
///
/// Every record is a message. libCacheSim's readers skip requests of size 0 unless
/// told otherwise (`ignore_size_zero_req`); such records are replayed here, and
/// counted in a note so that a difference in request counts is explained.
pub struct BinarySource {
    path: PathBuf,
    reader: Box<dyn BufRead + Send>,
    layout: RecordLayout,
    hasher: KeyHasher,
    dictionary: Option<KeyDictionary>,
    buf: Vec<u8>,
    filled: usize,
    pos: usize,
    /// Byte offset in the file of `buf[0]`.
    offset: u64,
    zero_sizes: u64,
    /// Requests a header announced, checked at the end.
    announced: Option<u64>,
    /// Distinct objects a header announced.
    objects: Option<u64>,
    /// The file's distinct objects, estimated from its records ([`super::count`])
    /// when first asked (only replay asks: other commands do not read the sample).
    estimate: Option<std::sync::OnceLock<Option<super::count::DistinctEstimate>>>,
    done: bool,
    summary: IngestSummary,
}

/// "00", "01", ..., "99".
const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Decimal digits of `v` in `buf`, returned as a slice (no allocation). Two digits
/// per division: the divisions form a dependency chain, and with one digit each they
/// were most of the cost of decoding a binary record.
#[inline]
pub fn decimal(mut v: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    while v >= 100 {
        let r = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGIT_PAIRS[r..r + 2]);
    }
    if v >= 10 {
        let r = v as usize * 2;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGIT_PAIRS[r..r + 2]);
    } else {
        i -= 1;
        buf[i] = b'0' + v as u8;
    }
    &buf[i..]
}

impl BinarySource {
    /// oracleGeneral records from the start of `reader`.
    pub fn new(
        path: PathBuf,
        reader: Box<dyn BufRead + Send>,
        hasher: KeyHasher,
        keep_keys: bool,
    ) -> Self {
        Self::with_layout(
            path,
            reader,
            hasher,
            keep_keys,
            ORACLE_GENERAL,
            Format::Binary,
            0,
        )
    }

    /// Records of `layout` from `reader`, which is positioned `offset` bytes into the
    /// file (after a header), in a summary naming the format `format`.
    pub fn with_layout(
        path: PathBuf,
        reader: Box<dyn BufRead + Send>,
        hasher: KeyHasher,
        keep_keys: bool,
        layout: RecordLayout,
        format: Format,
        offset: u64,
    ) -> Self {
        let summary = IngestSummary::new(&path, SourceFormat::Trace(format));
        BinarySource {
            path,
            reader,
            layout,
            hasher,
            dictionary: keep_keys.then(KeyDictionary::new),
            buf: vec![0; layout.len * BATCH],
            filled: 0,
            pos: 0,
            offset,
            zero_sizes: 0,
            announced: None,
            objects: None,
            estimate: None,
            done: false,
            summary,
        }
    }

    /// The numbers of requests and distinct objects a header announced (0: not
    /// filled in): a different request count read is noted, the object count sizes
    /// memory up front ([`MessageSource::declared_distinct`]).
    pub fn announce(mut self, requests: u64, objects: u64) -> Self {
        self.announced = (requests > 0).then_some(requests);
        // More objects than requests is a damaged header: not a size to plan with.
        self.objects = (objects > 0 && (requests == 0 || objects <= requests)).then_some(objects);
        self
    }

    /// Estimates the file's distinct objects from the next-access field of its
    /// oracleGeneral records ([`super::count`]); only for a plain file read from its
    /// start (not compressed, not standard input).
    pub fn estimating(mut self) -> Self {
        if self.layout == ORACLE_GENERAL {
            self.estimate = Some(std::sync::OnceLock::new());
        }
        self
    }

    /// Reads the next batch of whole records; a trailing partial record is damage.
    fn refill(&mut self) -> bool {
        let len = self.layout.len;
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
        let whole = n - n % len;
        if n % len != 0 && self.summary.damage.is_none() {
            self.summary.damage = Some(format!(
                "{}: byte offset {}: truncated: the last record has {} of {len} bytes; the {} whole record(s) before it were read",
                self.path.display(),
                self.offset + whole as u64,
                n % len,
                self.summary.records + (whole / len) as u64
            ));
        }
        self.filled = whole;
        self.pos = 0;
        whole > 0
    }

    /// The message of the record at `pos` in the buffer, read with `layout` (a
    /// constant for oracleGeneral records, so that the reads compile to fixed loads).
    #[inline(always)]
    fn decode(&mut self, pos: usize, layout: &RecordLayout) -> Message {
        let r = &self.buf[pos..pos + layout.len];
        let id = layout.id.read(r) as u64;
        let time = layout.time.map_or(Timestamp::NONE, |f| match f.read(r) {
            t if t < 0 => Timestamp::NONE,
            t => Timestamp::from_secs(t as u64),
        });
        if let Some(size) = layout.size {
            self.zero_sizes += u64::from(size.read(r) == 0);
        }
        let mut digits = [0u8; 20];
        let text = decimal(id, &mut digits);
        let key = self.hasher.hash(text);
        if let Some(d) = self.dictionary.as_mut() {
            d.record(key, text);
        }
        Message::at(key, time)
    }

    /// Decodes up to `max - out.len()` buffered records into `out`.
    #[inline(always)]
    fn decode_into(&mut self, out: &mut Vec<Message>, n: usize, layout: &RecordLayout) {
        for _ in 0..n {
            let m = self.decode(self.pos, layout);
            self.pos += layout.len;
            out.push(m);
        }
    }

    /// Whether a record is available (refilling the buffer when needed).
    #[inline]
    fn available(&mut self) -> bool {
        if self.pos >= self.filled && (self.done || !self.refill()) {
            if !self.done {
                self.finish();
            }
            self.done = true;
            return false;
        }
        true
    }

    /// Counts `n` records just decoded; nothing follows damage.
    #[inline]
    fn count(&mut self, n: u64) {
        self.summary.records += n;
        self.summary.messages += n;
        if self.summary.damage.is_some() && self.pos >= self.filled {
            self.finish();
            self.done = true;
        }
    }

    /// Notes what the end of the records says.
    #[cold]
    fn finish(&mut self) {
        if self.zero_sizes > 0 {
            *self
                .summary
                .notes
                .entry(ZERO_SIZE_NOTE.to_string())
                .or_default() += self.zero_sizes;
            self.zero_sizes = 0;
        }
        if let Some(n) = self.announced.take() {
            if n != self.summary.records && self.summary.damage.is_none() {
                self.summary.note(&format!(
                    "the header announces {n} request(s), the file holds {}",
                    self.summary.records
                ));
            }
        }
    }
}

impl Iterator for BinarySource {
    type Item = Message;

    #[inline]
    fn next(&mut self) -> Option<Message> {
        if !self.available() {
            return None;
        }
        let layout = self.layout;
        let m = self.decode(self.pos, &layout);
        self.pos += layout.len;
        self.count(1);
        Some(m)
    }
}

impl MessageSource for BinarySource {
    fn summary(&self) -> &IngestSummary {
        &self.summary
    }

    fn dictionary(&self) -> Option<&KeyDictionary> {
        self.dictionary.as_ref()
    }

    fn declared_distinct(&self) -> Option<u64> {
        self.objects
    }

    fn estimated_distinct(&self) -> Option<super::count::DistinctEstimate> {
        *self.estimate.as_ref()?.get_or_init(|| {
            super::count::estimate(&self.path, self.offset, RECORD_LEN, |r| NEXT_ACCESS.read(r))
        })
    }

    fn fill(&mut self, out: &mut Vec<Message>, max: usize) {
        while out.len() < max && self.available() {
            let n = ((self.filled - self.pos) / self.layout.len).min(max - out.len());
            out.reserve(n);
            if self.layout == ORACLE_GENERAL {
                self.decode_into(out, n, &ORACLE_GENERAL);
            } else {
                let layout = self.layout;
                self.decode_into(out, n, &layout);
            }
            self.count(n as u64);
        }
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
        for v in (0..100_000u64).chain([99, 100, 999, 1000, 10u64.pow(19) - 1, 10u64.pow(19)]) {
            assert_eq!(decimal(v, &mut b), v.to_string().as_bytes());
        }
    }
}
