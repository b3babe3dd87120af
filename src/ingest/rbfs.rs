//! `.rbfs`: rbf's compact message stream, so that a big capture is parsed once and
//! replayed many times.
//!
//! Layout (all integers little-endian):
//!
//! ```text
//! header, uncompressed, 32 bytes
//!   0  magic "RBFS"           4  version u16 (1)      6  flags u16 (0)
//!   8  key-hasher seed u64   16  messages u64 (u64::MAX until the writer finished)
//!  24  reserved u64
//! body: one zstd stream of blocks
//!   block:   n u32 (1..=MAX_BLOCK), n keys u64, base time u64, width u8 (0/1/2/4/8),
//!            n zigzag time deltas of `width` bytes (delta 0 is from the base)
//!   trailer: 0 u32, len u32, the source's ingest summary as JSON (len bytes)
//! ```
//!
//! Keys are stored raw (they are uniform hashes: nothing to compress), times as
//! fixed-width deltas per block, so decoding is a tight loop over a block rather than
//! per-message varints. The seed is stored because keys are only comparable between
//! streams hashed with the same seed.

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::{IngestSummary, MessageSource};
use crate::error::{Error, Result};
use crate::message::{KeyHasher, Message, Timestamp};

pub const MAGIC: [u8; 4] = *b"RBFS";
pub const VERSION: u16 = 1;
pub const HEADER_LEN: usize = 32;
/// Messages per block.
pub const BLOCK: usize = 1 << 16;
/// Largest block a reader accepts (a bigger count is corruption).
const MAX_BLOCK: usize = 1 << 20;
const UNFINISHED: u64 = u64::MAX;

#[inline]
fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[inline]
fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

fn width_for(max: u64) -> u8 {
    match max {
        0 => 0,
        1..=0xFF => 1,
        0x100..=0xFFFF => 2,
        0x1_0000..=0xFFFF_FFFF => 4,
        _ => 8,
    }
}

/// Writes messages to an `.rbfs` file.
pub struct RbfsWriter {
    path: PathBuf,
    encoder: zstd::stream::write::Encoder<'static, BufWriter<File>>,
    keys: Vec<Message>,
    scratch: Vec<u8>,
    messages: u64,
}

impl RbfsWriter {
    /// Creates `path` for messages whose keys were hashed with `hasher`.
    pub fn create(path: &Path, hasher: KeyHasher) -> Result<Self> {
        let io = |e| Error::io(path, e);
        let mut file = BufWriter::new(File::create(path).map_err(io)?);
        let mut h = [0u8; HEADER_LEN];
        h[..4].copy_from_slice(&MAGIC);
        h[4..6].copy_from_slice(&VERSION.to_le_bytes());
        h[8..16].copy_from_slice(&hasher.seed().to_le_bytes());
        h[16..24].copy_from_slice(&UNFINISHED.to_le_bytes());
        file.write_all(&h).map_err(io)?;
        let mut encoder = zstd::stream::write::Encoder::new(file, 3).map_err(io)?;
        encoder.include_checksum(true).map_err(io)?;
        Ok(RbfsWriter {
            path: path.to_path_buf(),
            encoder,
            keys: Vec::with_capacity(BLOCK),
            scratch: Vec::new(),
            messages: 0,
        })
    }

    #[inline]
    pub fn push(&mut self, m: Message) -> Result<()> {
        self.keys.push(m);
        if self.keys.len() == BLOCK {
            self.flush_block()?;
        }
        Ok(())
    }

    fn flush_block(&mut self) -> Result<()> {
        if self.keys.is_empty() {
            return Ok(());
        }
        let n = self.keys.len();
        let s = &mut self.scratch;
        s.clear();
        s.extend_from_slice(&(n as u32).to_le_bytes());
        for m in &self.keys {
            s.extend_from_slice(&m.key.to_le_bytes());
        }
        let raw = |m: &Message| m.time.nanos().unwrap_or(u64::MAX);
        let base = raw(&self.keys[0]);
        let mut prev = base;
        let mut max = 0u64;
        let deltas: Vec<u64> = self
            .keys
            .iter()
            .map(|m| {
                let t = raw(m);
                let d = zigzag(t.wrapping_sub(prev) as i64);
                prev = t;
                max = max.max(d);
                d
            })
            .collect();
        let w = width_for(max);
        s.extend_from_slice(&base.to_le_bytes());
        s.push(w);
        for d in deltas {
            s.extend_from_slice(&d.to_le_bytes()[..w as usize]);
        }
        self.encoder
            .write_all(s)
            .map_err(|e| Error::io(&self.path, e))?;
        self.messages += n as u64;
        self.keys.clear();
        Ok(())
    }

    /// Writes the trailer (the source's summary) and the final message count.
    pub fn finish(mut self, source: &IngestSummary) -> Result<u64> {
        self.flush_block()?;
        let io = |e| Error::io(&self.path, e);
        let json = serde_json::to_vec(source)
            .map_err(|e| Error::invalid(format!("cannot serialise the ingest summary: {e}")))?;
        self.encoder.write_all(&0u32.to_le_bytes()).map_err(io)?;
        self.encoder
            .write_all(&(json.len() as u32).to_le_bytes())
            .map_err(io)?;
        self.encoder.write_all(&json).map_err(io)?;
        let mut file = self.encoder.finish().map_err(io)?;
        file.seek(SeekFrom::Start(16)).map_err(io)?;
        file.write_all(&self.messages.to_le_bytes()).map_err(io)?;
        file.flush().map_err(io)?;
        Ok(self.messages)
    }
}

/// Reads an `.rbfs` stream block by block.
pub struct RbfsReader {
    path: PathBuf,
    body: zstd::stream::read::Decoder<'static, std::io::BufReader<Box<dyn Read + Send>>>,
    pub seed: u64,
    /// The count in the header (`None` if the writer never finished).
    pub declared: Option<u64>,
    block: Vec<Message>,
    raw: Vec<u8>,
    read: u64,
    trailer: Option<IngestSummary>,
    damage: Option<String>,
    done: bool,
}

impl RbfsReader {
    pub fn new(path: PathBuf, mut input: Box<dyn Read + Send>) -> Result<Self> {
        let mut h = [0u8; HEADER_LEN];
        input.read_exact(&mut h).map_err(|_| Error::Format {
            path: path.clone(),
            offset: 0,
            message: format!("truncated .rbfs: the header has fewer than {HEADER_LEN} bytes"),
        })?;
        if h[..4] != MAGIC {
            return Err(Error::Format {
                path,
                offset: 0,
                message: "not an .rbfs stream (magic is not \"RBFS\")".into(),
            });
        }
        let version = u16::from_le_bytes([h[4], h[5]]);
        if version != VERSION {
            return Err(Error::Format {
                path,
                offset: 4,
                message: format!(".rbfs version {version}; this rbf reads version {VERSION}"),
            });
        }
        let u64_at = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&h[i..i + 8]);
            u64::from_le_bytes(b)
        };
        let declared = Some(u64_at(16)).filter(|&n| n != UNFINISHED);
        let body = zstd::stream::read::Decoder::new(input).map_err(|e| Error::io(&path, e))?;
        Ok(RbfsReader {
            path,
            body,
            seed: u64_at(8),
            declared,
            block: Vec::with_capacity(BLOCK),
            raw: Vec::new(),
            read: 0,
            trailer: None,
            damage: None,
            done: false,
        })
    }

    fn fail(&mut self, what: String) {
        self.damage = Some(format!(
            "{}: after message {}: {what}; the messages before it were read",
            self.path.display(),
            self.read
        ));
        self.done = true;
    }

    fn read_exact(&mut self, n: usize) -> Result<(), String> {
        self.raw.resize(n, 0);
        self.body.read_exact(&mut self.raw).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                "truncated .rbfs stream".to_string()
            } else {
                format!("corrupt .rbfs stream: {e}")
            }
        })
    }

    /// The next block of messages, or `None` at the end (or after damage, see
    /// [`RbfsReader::damage`]).
    pub fn next_block(&mut self) -> Option<&[Message]> {
        if self.done {
            return None;
        }
        match self.decode_block() {
            Ok(true) => Some(&self.block),
            Ok(false) => {
                self.done = true;
                None
            }
            Err(what) => {
                self.fail(what);
                None
            }
        }
    }

    fn decode_block(&mut self) -> Result<bool, String> {
        self.read_exact(4)?;
        let n = u32::from_le_bytes([self.raw[0], self.raw[1], self.raw[2], self.raw[3]]) as usize;
        if n == 0 {
            self.read_trailer()?;
            return Ok(false);
        }
        if n > MAX_BLOCK {
            return Err(format!(
                "corrupt .rbfs stream: block of {n} messages (at most {MAX_BLOCK})"
            ));
        }
        self.read_exact(n * 8 + 9)?;
        let base = u64::from_le_bytes(
            self.raw[n * 8..n * 8 + 8]
                .try_into()
                .map_err(|_| "internal")?,
        );
        let w = self.raw[n * 8 + 8] as usize;
        if !matches!(w, 0 | 1 | 2 | 4 | 8) {
            return Err(format!("corrupt .rbfs stream: time width {w}"));
        }
        self.block.clear();
        let keys = std::mem::take(&mut self.raw);
        self.read_exact(n * w)?;
        let deltas = &self.raw;
        let mut t = base;
        for (i, k) in keys[..n * 8].chunks_exact(8).enumerate() {
            let key = u64::from_le_bytes([k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7]]);
            let d = match w {
                0 => 0,
                1 => u64::from(deltas[i]),
                2 => u64::from(u16::from_le_bytes([deltas[2 * i], deltas[2 * i + 1]])),
                4 => u64::from(u32::from_le_bytes([
                    deltas[4 * i],
                    deltas[4 * i + 1],
                    deltas[4 * i + 2],
                    deltas[4 * i + 3],
                ])),
                _ => {
                    let mut b = [0u8; 8];
                    b.copy_from_slice(&deltas[8 * i..8 * i + 8]);
                    u64::from_le_bytes(b)
                }
            };
            t = t.wrapping_add(unzigzag(d) as u64);
            let time = if t == u64::MAX {
                Timestamp::NONE
            } else {
                Timestamp::from_nanos(t)
            };
            self.block.push(Message::at(key, time));
        }
        self.raw = keys;
        self.read += n as u64;
        Ok(true)
    }

    fn read_trailer(&mut self) -> Result<(), String> {
        self.read_exact(4)?;
        let len = u32::from_le_bytes([self.raw[0], self.raw[1], self.raw[2], self.raw[3]]) as usize;
        if len > 64 << 20 {
            return Err(format!("corrupt .rbfs trailer: length {len}"));
        }
        self.read_exact(len)?;
        let s: IngestSummary =
            serde_json::from_slice(&self.raw).map_err(|e| format!("corrupt .rbfs trailer: {e}"))?;
        self.trailer = Some(s);
        if let Some(d) = self.declared {
            if d != self.read {
                return Err(format!(
                    "the header declares {d} messages but the stream holds {}",
                    self.read
                ));
            }
        } else {
            return Err("the writer did not finish (no message count in the header)".into());
        }
        Ok(())
    }

    pub fn damage(&self) -> Option<&str> {
        self.damage.as_deref()
    }

    /// The source's summary, once the stream has been read to its end.
    pub fn origin(&self) -> Option<&IngestSummary> {
        self.trailer.as_ref()
    }
}

/// An `.rbfs` stream as a [`MessageSource`].
pub struct RbfsSource {
    reader: RbfsReader,
    at: usize,
    len: usize,
    summary: IngestSummary,
}

impl RbfsSource {
    /// Opens a stream; its keys must have been hashed with `hasher`'s seed (otherwise
    /// they would not be comparable with other inputs of the same run).
    pub fn open(path: PathBuf, input: Box<dyn Read + Send>, hasher: KeyHasher) -> Result<Self> {
        let reader = RbfsReader::new(path.clone(), input)?;
        if reader.seed != hasher.seed() {
            return Err(Error::Format {
                path,
                offset: 8,
                message: format!(
                    "the stream's keys were hashed with seed {:#x}, this run uses {:#x}",
                    reader.seed,
                    hasher.seed()
                ),
            });
        }
        let summary = IngestSummary::new(&path, "rbfs");
        Ok(RbfsSource {
            reader,
            at: 0,
            len: 0,
            summary,
        })
    }

    fn refill(&mut self) -> bool {
        let n = self.reader.next_block().map_or(0, <[Message]>::len);
        self.at = 0;
        self.len = n;
        if n == 0 {
            self.summary.damage = self.reader.damage().map(str::to_string);
            self.summary.origin = self.reader.origin().cloned().map(Box::new);
            return false;
        }
        self.summary.records += n as u64;
        self.summary.messages += n as u64;
        true
    }
}

impl Iterator for RbfsSource {
    type Item = Message;

    #[inline]
    fn next(&mut self) -> Option<Message> {
        if self.at == self.len && !self.refill() {
            return None;
        }
        let m = self.reader.block[self.at];
        self.at += 1;
        Some(m)
    }
}

impl MessageSource for RbfsSource {
    fn summary(&self) -> &IngestSummary {
        &self.summary
    }
}

/// Drains `source` into an `.rbfs` file; returns the number of messages written.
pub fn write(path: &Path, source: &mut dyn MessageSource, hasher: KeyHasher) -> Result<u64> {
    let mut w = RbfsWriter::create(path, hasher)?;
    for m in &mut *source {
        w.push(m)?;
    }
    w.finish(source.summary())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zigzag_round_trips() {
        for v in [0i64, 1, -1, i64::MAX, i64::MIN, 12345, -98765] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
    }
}
