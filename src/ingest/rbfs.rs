//! `.rbfs`: rbf's compact message stream, so that a big capture is parsed once and
//! replayed many times.
//!
//! Layout (all integers little-endian):
//!
//! ```text
//! header, uncompressed, 32 bytes
//!   0  magic "RBFS"           4  version u16 (1)      6  flags u16 (bit 0: STREAMED)
//!   8  key-hasher seed u64   16  messages u64 (u64::MAX until the writer finished)
//!  24  reserved u64
//! body: chunks, each  n u32, len u32, then one zstd frame of len bytes (with checksum)
//!   n >= 1: a block of n messages (n <= MAX_BLOCK); the frame holds
//!           n keys u64, base time u64, width u8 (0/1/2/4/8),
//!           n zigzag time deltas of `width` bytes (delta 0 is from the base)
//!   n == 0: the trailer; the frame holds the source's ingest summary as JSON
//! ```
//!
//! Each block is its own zstd frame so that it decompresses in one call straight into
//! the decoding buffer (no streaming window copies), and decoding is a tight loop over
//! fixed-width fields rather than per-message varints. Times are fixed-width deltas per
//! block; time `u64::MAX` is "no timestamp". The seed is stored because keys are only
//! comparable between streams hashed with the same seed. A stream written to a pipe
//! (`-o -`) cannot go back to fill in the count: it sets STREAMED, and its trailer
//! alone marks the end.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::{IngestSummary, MessageSource};
use crate::error::{Error, Result};
use crate::message::{KeyHasher, Message, Timestamp};
use crate::output_file::OutputFile;

pub const MAGIC: [u8; 4] = *b"RBFS";
pub const VERSION: u16 = 1;
pub const HEADER_LEN: usize = 32;
/// Messages per block.
pub const BLOCK: usize = 1 << 16;
/// Largest block a reader accepts (a bigger count is corruption).
const MAX_BLOCK: usize = 1 << 20;
const UNFINISHED: u64 = u64::MAX;
/// Header flag: written to a pipe, the message count is only in the trailer.
const STREAMED: u16 = 1;

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

/// zstd level: keys are hashes (incompressible), so higher levels buy little and cost
/// ingest time.
const LEVEL: i32 = 1;

/// Writes messages to an `.rbfs` file.
pub struct RbfsWriter {
    path: PathBuf,
    out: OutputFile,
    compressor: zstd::bulk::Compressor<'static>,
    keys: Vec<Message>,
    scratch: Vec<u8>,
    frame: Vec<u8>,
    messages: u64,
}

impl RbfsWriter {
    /// Starts `path` (`-`: stdout) for messages whose keys were hashed with `hasher`;
    /// the file appears under its name only when [`RbfsWriter::finish`] completes it.
    pub fn create(path: &Path, hasher: KeyHasher) -> Result<Self> {
        let io = |e| Error::io(path, e);
        let mut file = OutputFile::create(path)?;
        let mut h = [0u8; HEADER_LEN];
        h[..4].copy_from_slice(&MAGIC);
        h[4..6].copy_from_slice(&VERSION.to_le_bytes());
        let flags = if file.seekable() { 0 } else { STREAMED };
        h[6..8].copy_from_slice(&flags.to_le_bytes());
        h[8..16].copy_from_slice(&hasher.seed().to_le_bytes());
        h[16..24].copy_from_slice(&UNFINISHED.to_le_bytes());
        file.write_all(&h).map_err(io)?;
        let mut compressor = zstd::bulk::Compressor::new(LEVEL).map_err(io)?;
        compressor
            .set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(true))
            .map_err(io)?;
        Ok(RbfsWriter {
            path: path.to_path_buf(),
            out: file,
            compressor,
            keys: Vec::with_capacity(BLOCK),
            scratch: Vec::new(),
            frame: Vec::new(),
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
        self.chunk(n as u32)?;
        self.messages += n as u64;
        self.keys.clear();
        Ok(())
    }

    /// Compresses `scratch` into one frame and writes it with its chunk header.
    fn chunk(&mut self, n: u32) -> Result<()> {
        let io = |e| Error::io(&self.path, e);
        self.frame.clear();
        self.frame
            .reserve(zstd::zstd_safe::compress_bound(self.scratch.len()));
        self.compressor
            .compress_to_buffer(&self.scratch, &mut self.frame)
            .map_err(io)?;
        self.out.write_all(&n.to_le_bytes()).map_err(io)?;
        self.out
            .write_all(&(self.frame.len() as u32).to_le_bytes())
            .map_err(io)?;
        self.out.write_all(&self.frame).map_err(io)
    }

    /// Writes the trailer (the source's summary) and the final message count.
    pub fn finish(mut self, source: &IngestSummary) -> Result<u64> {
        self.flush_block()?;
        let path = self.path.clone();
        let io = |e| Error::io(&path, e);
        let json = serde_json::to_vec(source)
            .map_err(|e| Error::invalid(format!("cannot serialise the ingest summary: {e}")))?;
        self.scratch = json;
        self.chunk(0)?;
        if self.out.seekable() {
            self.out
                .patch(16, &self.messages.to_le_bytes())
                .map_err(io)?;
        }
        self.out.commit()?;
        Ok(self.messages)
    }
}

/// Reads an `.rbfs` stream block by block.
pub struct RbfsReader {
    path: PathBuf,
    body: Box<dyn Read + Send>,
    decompressor: zstd::bulk::Decompressor<'static>,
    frame: Vec<u8>,
    pub seed: u64,
    /// The count in the header (`None` if the writer never finished).
    pub declared: Option<u64>,
    /// Written to a pipe: no count in the header, the trailer marks the end.
    streamed: bool,
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
        let streamed = u16::from_le_bytes([h[6], h[7]]) & STREAMED != 0;
        let decompressor = zstd::bulk::Decompressor::new().map_err(|e| Error::io(&path, e))?;
        Ok(RbfsReader {
            path,
            body: input,
            decompressor,
            frame: Vec::new(),
            seed: u64_at(8),
            declared,
            streamed,
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

    /// Reads the next chunk header and decompresses its frame into `raw` (at most
    /// `max` bytes); returns n. A clean end of input before a trailer is truncation.
    fn read_chunk(&mut self) -> Result<u32, String> {
        let mut h = [0u8; 8];
        self.body.read_exact(&mut h).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                "truncated .rbfs stream (no trailer)".to_string()
            } else {
                format!("read error: {e}")
            }
        })?;
        let n = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
        let len = u32::from_le_bytes([h[4], h[5], h[6], h[7]]) as usize;
        if n as usize > MAX_BLOCK {
            return Err(format!(
                "corrupt .rbfs stream: block of {n} messages (at most {MAX_BLOCK})"
            ));
        }
        // Largest legitimate content: keys + base + width + 8-byte deltas, or a trailer.
        let max = if n == 0 {
            64 << 20
        } else {
            n as usize * 16 + 9
        };
        if len > zstd::zstd_safe::compress_bound(max) {
            return Err(format!(
                "corrupt .rbfs stream: frame of {len} bytes for {n} messages"
            ));
        }
        self.frame.resize(len, 0);
        self.body.read_exact(&mut self.frame).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                "truncated .rbfs stream".to_string()
            } else {
                format!("read error: {e}")
            }
        })?;
        self.raw.clear();
        self.raw.reserve(max);
        self.decompressor
            .decompress_to_buffer(&self.frame, &mut self.raw)
            .map_err(|e| format!("corrupt .rbfs block: {e}"))?;
        Ok(n)
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
        let n = self.read_chunk()? as usize;
        if n == 0 {
            self.read_trailer()?;
            return Ok(false);
        }
        let raw = &self.raw;
        if raw.len() < n * 8 + 9 {
            return Err(format!(
                "corrupt .rbfs block: {} bytes for {n} messages",
                raw.len()
            ));
        }
        let (keys, rest) = raw.split_at(n * 8);
        let base = u64::from_le_bytes([
            rest[0], rest[1], rest[2], rest[3], rest[4], rest[5], rest[6], rest[7],
        ]);
        let w = rest[8] as usize;
        let deltas = &rest[9..];
        if !matches!(w, 0 | 1 | 2 | 4 | 8) || deltas.len() != n * w {
            return Err(format!(
                "corrupt .rbfs block: time width {w} with {} bytes of deltas",
                deltas.len()
            ));
        }
        self.block.clear();
        let mut t = base;
        let push = |block: &mut Vec<Message>, key: u64, t: u64| {
            let time = if t == u64::MAX {
                Timestamp::NONE
            } else {
                Timestamp::from_nanos(t)
            };
            block.push(Message::at(key, time));
        };
        let keys = keys
            .chunks_exact(8)
            .map(|k| u64::from_le_bytes([k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7]]));
        // One loop per width so that each is a tight, branch-free decode.
        match w {
            0 => keys.for_each(|k| push(&mut self.block, k, t)),
            1 => keys.zip(deltas).for_each(|(k, &d)| {
                t = t.wrapping_add(unzigzag(u64::from(d)) as u64);
                push(&mut self.block, k, t)
            }),
            2 => keys.zip(deltas.chunks_exact(2)).for_each(|(k, d)| {
                t = t.wrapping_add(unzigzag(u64::from(u16::from_le_bytes([d[0], d[1]]))) as u64);
                push(&mut self.block, k, t)
            }),
            4 => keys.zip(deltas.chunks_exact(4)).for_each(|(k, d)| {
                t = t.wrapping_add(
                    unzigzag(u64::from(u32::from_le_bytes([d[0], d[1], d[2], d[3]]))) as u64,
                );
                push(&mut self.block, k, t)
            }),
            _ => keys.zip(deltas.chunks_exact(8)).for_each(|(k, d)| {
                t = t.wrapping_add(unzigzag(u64::from_le_bytes([
                    d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7],
                ])) as u64);
                push(&mut self.block, k, t)
            }),
        }
        self.read += n as u64;
        Ok(true)
    }

    fn read_trailer(&mut self) -> Result<(), String> {
        let s: IngestSummary =
            serde_json::from_slice(&self.raw).map_err(|e| format!("corrupt .rbfs trailer: {e}"))?;
        self.trailer = Some(s);
        match self.declared {
            Some(d) if d != self.read => Err(format!(
                "the header declares {d} messages but the stream holds {}",
                self.read
            )),
            Some(_) => Ok(()),
            None if self.streamed => Ok(()),
            None => Err("the writer did not finish (no message count in the header)".into()),
        }
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
///
/// A source that yields no message is an error ([`super::IngestSummary::require_data`])
/// before anything is put in place: no empty stream is left under `path`.
pub fn write(path: &Path, source: &mut dyn MessageSource, hasher: KeyHasher) -> Result<u64> {
    let mut w = RbfsWriter::create(path, hasher)?;
    for m in &mut *source {
        w.push(m)?;
    }
    source.summary().require_data()?;
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
