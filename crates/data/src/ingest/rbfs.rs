//! `.rbfs`: rbf's compact message stream, so that a big capture is parsed once and
//! replayed many times.
//!
//! Layout (all integers little-endian):
//!
//! ```text
//! header, uncompressed, 32 bytes
//!   0  magic "RBFS"           4  version u16 (2; 1 is read)   6  flags u16 (bit 0: STREAMED)
//!   8  key-hasher seed u64   16  messages u64 (u64::MAX until the writer finished)
//!  24  reserved u64
//! body: chunks, each  n u32, len u32, then one zstd frame of len bytes (with checksum)
//!   n >= 1: a block of n messages (n <= MAX_BLOCK); the frame holds
//!           version 2: base time u64, width u8 (0/1/2/4/8), then groups of
//!                      SALVAGE_RECORDS messages (the last may be shorter): the
//!                      group's keys u64, then its zigzag time deltas of `width` bytes
//!           version 1: n keys u64, base time u64, width u8, n deltas of `width` bytes
//!           (each delta from the previous message's time, the first from the base)
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
//!
//! A cut stream (a copy interrupted, `head -c`) yields every whole record before the
//! cut: version 2 ends a zstd block (a flush, which keeps the frame's match window)
//! after a block's head and after each group's keys and each group's times, so the
//! part of a cut frame the decoder can decompress holds whole records, all but at
//! most the [`SALVAGE_RECORDS`] of the group the cut falls in. Keys (uniform hashes)
//! and times (small deltas) never share a zstd block: the keys are stored, the times
//! compressed, as when they were columns of the whole block. Version 1 put all of a
//! block's keys before its times: a cut block there yields nothing.
//!
//! A block whose frame is corrupt (its checksum fails, or its content does not hold
//! the messages its header declares) is skipped, reported with its byte offset and its
//! declared message count, and the blocks after it are read. Streams written one after
//! another (`cat a.rbfs b.rbfs`, `{ rbf ingest x -o -; rbf ingest y -o -; }`) are read
//! whole: a header after a trailer starts the next one (its keys must be hashed with the
//! same seed). Any other bytes after a trailer are damage, reported with their offset
//! and length.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

use zstd::stream::raw::{Encoder, InBuffer, Operation, OutBuffer};

use super::options::Format;
use super::readahead::BATCH;
use super::source::{IngestSummary, MessageSource, SourceFormat};
use crate::message::{KeyHasher, Message, Timestamp};
use rbf_foundations::error::{Error, Result};
use rbf_foundations::output_file::OutputFile;

pub const MAGIC: [u8; 4] = *b"RBFS";
pub const VERSION: u16 = 2;
/// The first version, still read (its blocks cannot be salvaged when cut).
const VERSION_1: u16 = 1;
pub const HEADER_LEN: usize = 32;
/// Messages per block.
pub const BLOCK: usize = 1 << 16;
/// Records between zstd flushes within a block: a cut block loses at most these.
pub const SALVAGE_RECORDS: usize = 1 << 12;
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

/// Each delta's low `W` bytes, little-endian, into `out` (`W` bytes a delta).
fn put_deltas<const W: usize>(out: &mut [u8], deltas: &[u64]) {
    out.chunks_exact_mut(W)
        .zip(deltas)
        .for_each(|(b, d)| b.copy_from_slice(&d.to_le_bytes()[..W]));
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

/// zstd level: higher levels buy little and cost ingest time; the faster (negative)
/// ones lose the matches of recurring keys, up to 44 % more file on a capture of few
/// flows (docs/history/PERFORMANCE-log.md, packet captures, 2026-11-27 23:30 UTC and
/// 2026-11-28 01:50 UTC).
const LEVEL: i32 = 1;

/// Bytes written between requests to the kernel to start writing the file back
/// ([`OutputFile::start_writeback`]): the final fsync then waits for at most about
/// this much, not for the whole file (40 MB for 10^7 packets), while the writeback of
/// the rest overlaps the run.
const WRITEBACK: usize = 4 << 20;

/// Writes messages to an `.rbfs` file.
///
/// The blocks are compressed on a thread of their own ([`Compressor`]) while the next
/// block is put together: zstd is most of the writer's time (docs/PERFORMANCE.md,
/// "Reading traces"), and with the decoding thread beside it `rbf ingest`
/// keeps two cores busy. The frames are written in block order, so the file's bytes do
/// not depend on the thread.
pub struct RbfsWriter {
    path: PathBuf,
    out: OutputFile,
    compressor: Compressor,
    /// The batch last taken from the source: exchanged with the source's own when it
    /// has one ready (the read-ahead thread's), not copied. A batch's size, so that
    /// what goes back to the decoder is a batch's size too: the block-sized vector
    /// filled here before went back in the exchange, and every vector the decoder
    /// reuses grew to a block (1 MiB; 38 MB peak for `rbf ingest big.pcap` with 16
    /// batches in flight, 22-23 MB now; main 25 MB).
    batch: Vec<Message>,
    /// The block's fields so far, taken from each batch as it comes.
    columns: Columns,
    /// The block being put together (its buffers come back from the compressor).
    job: Job,
    messages: u64,
    /// Bytes written since the kernel was last asked to write the file back.
    unsynced: usize,
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
        Ok(RbfsWriter {
            path: path.to_path_buf(),
            out: file,
            compressor: Compressor::start().map_err(io)?,
            batch: Vec::with_capacity(BATCH),
            columns: Columns::default(),
            job: Job::default(),
            messages: 0,
            unsynced: 0,
        })
    }

    /// Every message of `source`, taken a batch at a time ([`MessageSource::fill`]
    /// into an empty vector: a source with a batch ready hands it over whole).
    pub fn push_all(&mut self, source: &mut dyn MessageSource) -> Result<()> {
        loop {
            // At most a read-ahead batch: a whole one is exchanged, a larger request
            // would be copied together.
            let room = (BLOCK - self.columns.keys.len()).min(BATCH);
            self.batch.clear();
            source.fill(&mut self.batch, room);
            let more = self.batch.len() == room;
            self.columns.take(&self.batch);
            if self.columns.keys.len() == BLOCK {
                self.flush_block()?;
            }
            if !more {
                return Ok(());
            }
        }
    }

    #[inline]
    pub fn push(&mut self, m: Message) -> Result<()> {
        self.columns.take(std::slice::from_ref(&m));
        if self.columns.keys.len() == BLOCK {
            self.flush_block()?;
        }
        Ok(())
    }

    /// Lays the block's fields out in the job (the block's head, then for each group of
    /// [`SALVAGE_RECORDS`] its keys and its times) and hands it to the compressor.
    fn flush_block(&mut self) -> Result<()> {
        let c = &mut self.columns;
        let n = c.keys.len();
        if n == 0 {
            return Ok(());
        }
        let w = width_for(c.widest);
        let s = &mut self.job.data;
        // Sized and filled in place, each width its own loop: appending field by field
        // (a variable-length copy per delta) cost about 35 ms for 10^7 messages. Every
        // byte is written below, so only growth is zeroed (zeroing the whole block
        // every time was 14 ms).
        s.resize(9 + n * (8 + w as usize), 0);
        s[..8].copy_from_slice(&c.base.to_le_bytes());
        s[8] = w;
        let pieces = &mut self.job.pieces;
        pieces.clear();
        pieces.push(9);
        let mut at = 9;
        for (keys, deltas) in c
            .keys
            .chunks(SALVAGE_RECORDS)
            .zip(c.deltas.chunks(SALVAGE_RECORDS))
        {
            let (key_bytes, rest) = s[at..].split_at_mut(keys.len() * 8);
            put_deltas::<8>(key_bytes, keys);
            let time_bytes = &mut rest[..keys.len() * w as usize];
            match w {
                0 => {}
                1 => put_deltas::<1>(time_bytes, deltas),
                2 => put_deltas::<2>(time_bytes, deltas),
                4 => put_deltas::<4>(time_bytes, deltas),
                _ => put_deltas::<8>(time_bytes, deltas),
            }
            at += keys.len() * (8 + w as usize);
            pieces.push(keys.len() * 8);
            pieces.push(keys.len() * w as usize);
        }
        c.clear();
        self.chunk(n as u32)?;
        self.messages += n as u64;
        Ok(())
    }

    /// Hands the job (its data and `pieces`: a block's head, then each group's keys
    /// and each group's times, or the trailer's JSON) to the compressor and writes the
    /// frames that are ready, each with its chunk header.
    fn chunk(&mut self, n: u32) -> Result<()> {
        self.job.n = n;
        if n == 0 {
            self.job.pieces.clear();
            self.job.pieces.push(self.job.data.len());
        }
        let job = std::mem::take(&mut self.job);
        let done = self.compressor.submit(job);
        self.job = self.write_frame(done)?;
        Ok(())
    }

    /// Writes a compressed job's frame (if any) and gives its buffers back.
    fn write_frame(&mut self, done: std::io::Result<Option<Job>>) -> Result<Job> {
        let io = |e| Error::io(&self.path, e);
        let Some(job) = done.map_err(io)? else {
            return Ok(Job::default());
        };
        self.out.write_all(&job.n.to_le_bytes()).map_err(io)?;
        self.out
            .write_all(&(job.frame.len() as u32).to_le_bytes())
            .map_err(io)?;
        self.out.write_all(&job.frame).map_err(io)?;
        self.unsynced += job.frame.len() + 8;
        if self.unsynced >= WRITEBACK {
            self.unsynced = 0;
            self.out.start_writeback().map_err(io)?;
        }
        Ok(job)
    }

    /// Writes the trailer (the source's summary) and the final message count.
    pub fn finish(mut self, source: &IngestSummary) -> Result<u64> {
        self.flush_block()?;
        let path = self.path.clone();
        let io = |e| Error::io(&path, e);
        let json = serde_json::to_vec(source)
            .map_err(|e| Error::encode("serialise the ingest summary", e))?;
        self.job.data = json;
        self.chunk(0)?;
        // The frames still being compressed, in order; the trailer's is the last.
        loop {
            let done = self.compressor.next_done();
            if matches!(done, Ok(None)) {
                break;
            }
            self.write_frame(done)?;
        }
        if self.out.seekable() {
            self.out
                .patch(16, &self.messages.to_le_bytes())
                .map_err(io)?;
        }
        self.out.commit()?;
        Ok(self.messages)
    }
}

/// A block's keys and zigzag time deltas, taken from the messages as they arrive (one
/// pass over each batch while it is in cache; the block's layout waits for the widest
/// delta). The vectors are kept from block to block: fresh half-megabyte vectors were
/// mapped and faulted in for every block.
#[derive(Default)]
struct Columns {
    keys: Vec<u64>,
    deltas: Vec<u64>,
    /// The block's first time: the first delta is from it (so it is 0).
    base: u64,
    /// The last message's time, for the next delta.
    prev: u64,
    /// Every delta ORed together: its highest bit is the largest delta's, which is all
    /// [`width_for`] looks at.
    widest: u64,
}

impl Columns {
    fn take(&mut self, messages: &[Message]) {
        let raw = |m: &Message| m.time.nanos().unwrap_or(u64::MAX);
        let Some(first) = messages.first() else {
            return;
        };
        if self.keys.is_empty() {
            self.base = raw(first);
            self.prev = self.base;
        }
        self.keys.extend(messages.iter().map(|m| m.key));
        let (mut prev, mut widest) = (self.prev, self.widest);
        self.deltas.extend(messages.iter().map(|m| {
            let t = raw(m);
            let d = zigzag(t.wrapping_sub(prev) as i64);
            prev = t;
            widest |= d;
            d
        }));
        (self.prev, self.widest) = (prev, widest);
    }

    fn clear(&mut self) {
        self.keys.clear();
        self.deltas.clear();
        self.widest = 0;
    }
}

/// A block (or the trailer) on its way through the compressor: `data` cut into
/// `pieces` goes in, `frame` (one zstd frame) comes out. The buffers are reused.
#[derive(Default)]
struct Job {
    /// Messages in the block; 0 for the trailer.
    n: u32,
    data: Vec<u8>,
    pieces: Vec<usize>,
    frame: Vec<u8>,
}

impl Job {
    /// Compresses `data` into `frame`, flushed after each piece, so that a cut frame
    /// decompresses up to the last flush before the cut, and keys (stored) and times
    /// (compressed) are never in one zstd block.
    fn compress(&mut self, encoder: &mut Encoder<'static>) -> std::io::Result<()> {
        self.frame.clear();
        // Room for the frame whole: every flush ends a zstd block (a 3-byte header).
        self.frame.reserve(
            zstd::zstd_safe::compress_bound(self.data.len()) + 16 * self.pieces.len() + 64,
        );
        compress_flushed(encoder, &self.data, &self.pieces, &mut self.frame)
    }
}

/// Jobs handed to the compressing thread and not yet taken back: one compressed while
/// the next waits, and the writer puts a third together.
const COMPRESSING: usize = 2;

/// The `.rbfs` writer's zstd encoder, on a thread of its own when one can be started
/// (else on the writer's: the same frames, only slower). Jobs come back in the order
/// they went in, so the file's bytes are the same either way.
enum Compressor {
    Here(Box<Encoder<'static>>),
    Thread {
        jobs: Option<SyncSender<Job>>,
        done: Receiver<std::io::Result<Job>>,
        worker: Option<JoinHandle<()>>,
        waiting: usize,
    },
}

/// The writer's zstd encoder: level [`LEVEL`], each frame checksummed.
fn encoder() -> std::io::Result<Encoder<'static>> {
    let mut encoder = Encoder::new(LEVEL)?;
    encoder.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(true))?;
    Ok(encoder)
}

impl Compressor {
    /// On a thread of its own if one starts, else here; an encoder that cannot be made
    /// is the only error.
    fn start() -> std::io::Result<Compressor> {
        let mut theirs = encoder()?;
        let (jobs_tx, jobs_rx) = mpsc::sync_channel::<Job>(COMPRESSING);
        let (done_tx, done_rx) = mpsc::sync_channel(COMPRESSING);
        let spawned = std::thread::Builder::new()
            .name("rbf-zstd".into())
            .spawn(move || compress_jobs(&mut theirs, &jobs_rx, &done_tx));
        Ok(match spawned {
            Ok(worker) => Compressor::Thread {
                jobs: Some(jobs_tx),
                done: done_rx,
                worker: Some(worker),
                waiting: 0,
            },
            // The encoder went with the closure the failed spawn dropped: a new one.
            Err(_) => Compressor::Here(Box::new(encoder()?)),
        })
    }

    /// Hands `job` over; returns a compressed job when one is ready to be written
    /// (with a thread, once [`COMPRESSING`] are under way: the oldest).
    fn submit(&mut self, mut job: Job) -> std::io::Result<Option<Job>> {
        match self {
            Compressor::Here(encoder) => job.compress(encoder).map(|()| Some(job)),
            Compressor::Thread {
                jobs,
                done,
                waiting,
                ..
            } => {
                let ready = if *waiting == COMPRESSING {
                    *waiting -= 1;
                    Some(receive(done)?)
                } else {
                    None
                };
                let sent = jobs.as_ref().map(|jobs| jobs.send(job));
                if !matches!(sent, Some(Ok(()))) {
                    return Err(stopped());
                }
                *waiting += 1;
                Ok(ready)
            }
        }
    }

    /// The oldest job still being compressed; None when all have come back.
    fn next_done(&mut self) -> std::io::Result<Option<Job>> {
        match self {
            Compressor::Here(_) => Ok(None),
            Compressor::Thread { done, waiting, .. } => {
                if *waiting == 0 {
                    return Ok(None);
                }
                *waiting -= 1;
                receive(done).map(Some)
            }
        }
    }
}

impl Drop for Compressor {
    fn drop(&mut self) {
        if let Compressor::Thread { jobs, worker, .. } = self {
            // Closing the channel ends the thread after the job it has (if any).
            *jobs = None;
            if let Some(worker) = worker.take() {
                let _ = worker.join();
            }
        }
    }
}

/// The compressing thread: each job compressed and sent back, in order, until the
/// writer closes the channel (or stops listening).
fn compress_jobs(
    encoder: &mut Encoder<'static>,
    jobs: &Receiver<Job>,
    done: &SyncSender<std::io::Result<Job>>,
) {
    for mut job in jobs {
        let compressed = job.compress(encoder).map(|()| job);
        if done.send(compressed).is_err() {
            return;
        }
    }
}

fn receive(done: &Receiver<std::io::Result<Job>>) -> std::io::Result<Job> {
    done.recv().map_err(|_| stopped())?
}

fn stopped() -> std::io::Error {
    std::io::Error::other("the .rbfs compressor's thread stopped")
}

/// Compresses `data` into one zstd frame in `out`, flushing after each of `pieces`
/// (lengths that add up to `data`'s). `out` must have room for the whole frame:
/// running out of it is an error, not a loop.
fn compress_flushed(
    encoder: &mut Encoder<'static>,
    data: &[u8],
    pieces: &[usize],
    out: &mut Vec<u8>,
) -> std::io::Result<()> {
    let full = || std::io::Error::other("zstd output buffer too small for an .rbfs block");
    let mut buffer = OutBuffer::around(out);
    let mut at = 0;
    for &len in pieces.iter().filter(|&&len| len > 0) {
        let part = &data[at..at + len];
        at += len;
        let mut input = InBuffer::around(part);
        while input.pos() < part.len() {
            let before = (input.pos(), buffer.pos());
            encoder.run(&mut input, &mut buffer)?;
            if (input.pos(), buffer.pos()) == before {
                return Err(full());
            }
        }
        while encoder.flush(&mut buffer)? > 0 {
            if buffer.pos() == buffer.capacity() {
                return Err(full());
            }
        }
    }
    while encoder.finish(&mut buffer, true)? > 0 {
        if buffer.pos() == buffer.capacity() {
            return Err(full());
        }
    }
    encoder.reinit()
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
    version: u16,
    block: Vec<Message>,
    raw: Vec<u8>,
    read: u64,
    /// Bytes of the stream consumed so far, and where the current chunk starts.
    offset: u64,
    chunk_start: u64,
    /// Damage found while a cut block's messages were salvaged: reported once they
    /// have been handed out.
    cut: Option<String>,
    trailer: Option<IngestSummary>,
    damage: Option<String>,
    done: bool,
    /// Messages read in the current stream, and declared in its skipped blocks (a
    /// stream's header count covers both).
    stream_read: u64,
    stream_lost: u64,
    /// Declared messages of every skipped corrupt block, and what each was.
    lost: u64,
    skipped: Vec<String>,
    skipped_blocks: u64,
    /// Streams read one after another (1 for a single stream).
    streams: u64,
}

/// Skipped blocks described one by one in the damage report; the rest are counted.
const SKIPPED_LISTED: usize = 8;

/// A chunk read from the body: whole, cut by the end of the input after `got` of its
/// frame's bytes, or whole but corrupt (a frame that does not decompress).
enum Chunk {
    Whole(usize),
    Cut { n: usize, got: usize },
    Corrupt { n: usize, what: String },
}

/// What an `.rbfs` header says.
struct Header {
    version: u16,
    seed: u64,
    declared: Option<u64>,
    streamed: bool,
}

/// Parses a 32-byte header: the byte offset within it and what is wrong, if anything.
fn parse_header(h: &[u8; HEADER_LEN]) -> std::result::Result<Header, (u64, String)> {
    if h[..4] != MAGIC {
        return Err((0, "not an .rbfs stream (magic is not \"RBFS\")".into()));
    }
    let version = u16::from_le_bytes([h[4], h[5]]);
    if version != VERSION && version != VERSION_1 {
        return Err((
            4,
            format!(".rbfs version {version}; this rbf reads versions {VERSION_1} and {VERSION}"),
        ));
    }
    let u64_at = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&h[i..i + 8]);
        u64::from_le_bytes(b)
    };
    Ok(Header {
        version,
        seed: u64_at(8),
        declared: Some(u64_at(16)).filter(|&n| n != UNFINISHED),
        streamed: u16::from_le_bytes([h[6], h[7]]) & STREAMED != 0,
    })
}

impl RbfsReader {
    pub fn new(path: PathBuf, mut input: Box<dyn Read + Send>) -> Result<Self> {
        let mut h = [0u8; HEADER_LEN];
        input.read_exact(&mut h).map_err(|_| Error::Format {
            path: path.clone(),
            offset: 0,
            message: format!("truncated .rbfs: the header has fewer than {HEADER_LEN} bytes"),
        })?;
        let header = parse_header(&h).map_err(|(offset, message)| Error::Format {
            path: path.clone(),
            offset,
            message,
        })?;
        let decompressor = zstd::bulk::Decompressor::new().map_err(|e| Error::io(&path, e))?;
        Ok(RbfsReader {
            path,
            body: input,
            decompressor,
            frame: Vec::new(),
            seed: header.seed,
            declared: header.declared,
            streamed: header.streamed,
            version: header.version,
            block: Vec::with_capacity(BLOCK),
            raw: Vec::new(),
            read: 0,
            offset: HEADER_LEN as u64,
            chunk_start: HEADER_LEN as u64,
            cut: None,
            trailer: None,
            damage: None,
            done: false,
            stream_read: 0,
            stream_lost: 0,
            lost: 0,
            skipped: Vec::new(),
            skipped_blocks: 0,
            streams: 1,
        })
    }

    /// Ends the stream: the damage report is every skipped block, then `what` (the
    /// damage that ended it, if any), then how many declared messages were not read.
    fn fail(&mut self, what: String) {
        self.finish(Some(what));
    }

    fn finish(&mut self, what: Option<String>) {
        self.done = true;
        let mut parts: Vec<String> = self.skipped.clone();
        if self.skipped_blocks > self.skipped.len() as u64 {
            parts.push(format!(
                "{} more corrupt block(s) skipped",
                self.skipped_blocks - self.skipped.len() as u64
            ));
        }
        if let Some(what) = what {
            parts.push(format!(
                "byte offset {}: {what}; the {} message(s) before the damage were read",
                self.chunk_start, self.read
            ));
        }
        if parts.is_empty() {
            return;
        }
        let mut report = format!("{}: {}", self.path.display(), parts.join("; "));
        if self.lost > 0 {
            report.push_str(&format!(
                "; {} declared message(s) in {} corrupt block(s) were not read, {} were",
                self.lost, self.skipped_blocks, self.read
            ));
        }
        self.damage = Some(report);
    }

    /// A corrupt block of `n` declared messages, whose frame was read whole: skipped,
    /// and recorded for the damage report.
    fn skip_block(&mut self, n: usize, what: String) {
        self.block.clear();
        self.lost += n as u64;
        self.stream_lost += n as u64;
        self.skipped_blocks += 1;
        if self.skipped.len() < SKIPPED_LISTED {
            self.skipped.push(format!(
                "byte offset {}: {what}: the block's {n} declared message(s) were not read, the blocks after it were",
                self.chunk_start
            ));
        }
    }

    /// After a trailer: the end of the input, or the header of another stream written
    /// after this one (true). Other bytes are damage, measured to the end.
    fn next_stream(&mut self) -> Result<bool, String> {
        self.chunk_start = self.offset;
        let got = self.read_up_to(HEADER_LEN)?;
        if got == 0 {
            return Ok(false);
        }
        let mut h = [0u8; HEADER_LEN];
        h[..got].copy_from_slice(&self.frame[..got]);
        let header = if got == HEADER_LEN {
            parse_header(&h).ok()
        } else {
            None
        };
        let Some(header) = header else {
            let mut rest = 0u64;
            loop {
                let k = self.read_up_to(1 << 16)?;
                if k == 0 {
                    break;
                }
                rest += k as u64;
            }
            return Err(format!(
                "{} byte(s) after the stream's trailer that are not another .rbfs stream were not read",
                got as u64 + rest
            ));
        };
        if header.seed != self.seed {
            return Err(format!(
                "another .rbfs stream starts here, its keys hashed with seed {:#x} where the first's were hashed with {:#x}: it was not read (ingest both with one --hash-seed)",
                header.seed, self.seed
            ));
        }
        self.version = header.version;
        self.declared = header.declared;
        self.streamed = header.streamed;
        self.stream_read = 0;
        self.stream_lost = 0;
        self.streams += 1;
        Ok(true)
    }

    /// How many streams written one after another were read (1: a single one).
    pub fn streams(&self) -> u64 {
        self.streams
    }

    /// Reads up to `len` bytes of the body into `frame`; fewer only at its end.
    fn read_up_to(&mut self, len: usize) -> Result<usize, String> {
        self.frame.resize(len, 0);
        let mut got = 0;
        while got < len {
            match self.body.read(&mut self.frame[got..]) {
                Ok(0) => break,
                Ok(k) => got += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(format!("read error: {e}")),
            }
        }
        self.offset += got as u64;
        Ok(got)
    }

    /// The largest legitimate content of a chunk of `n` messages: keys, base, width
    /// and 8-byte deltas, or a trailer.
    fn max_content(n: usize) -> usize {
        if n == 0 {
            64 << 20
        } else {
            n * 16 + 9
        }
    }

    /// Reads the next chunk header and its frame; a whole frame is decompressed into
    /// `raw`. A clean end of input before a trailer is truncation.
    fn read_chunk(&mut self) -> Result<Chunk, String> {
        self.chunk_start = self.offset;
        let got = self.read_up_to(8)?;
        if got < 8 {
            return Err(if got == 0 {
                "truncated .rbfs stream (no trailer)".to_string()
            } else {
                format!("truncated .rbfs stream: a block header cut after {got} of its 8 bytes")
            });
        }
        let h = &self.frame;
        let n = u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize;
        let len = u32::from_le_bytes([h[4], h[5], h[6], h[7]]) as usize;
        if n > MAX_BLOCK {
            return Err(format!(
                "corrupt .rbfs stream: block of {n} messages (at most {MAX_BLOCK})"
            ));
        }
        let max = Self::max_content(n);
        if len > zstd::zstd_safe::compress_bound(max) {
            return Err(format!(
                "corrupt .rbfs stream: frame of {len} bytes for {n} messages"
            ));
        }
        let got = self.read_up_to(len)?;
        if got < len {
            return Ok(Chunk::Cut { n, got });
        }
        self.raw.clear();
        self.raw.reserve(max);
        if let Err(e) = self
            .decompressor
            .decompress_to_buffer(&self.frame, &mut self.raw)
        {
            if n == 0 {
                return Err(format!("corrupt .rbfs trailer: {e}"));
            }
            return Ok(Chunk::Corrupt {
                n,
                what: format!("corrupt .rbfs block: {e}"),
            });
        }
        Ok(Chunk::Whole(n))
    }

    /// The next block of messages, or `None` at the end (or after damage, see
    /// [`RbfsReader::damage`]).
    pub fn next_block(&mut self) -> Option<&[Message]> {
        if self.done {
            return None;
        }
        if let Some(what) = self.cut.take() {
            self.fail(what);
            return None;
        }
        match self.decode_block() {
            Ok(true) => Some(&self.block),
            Ok(false) => {
                self.finish(None);
                None
            }
            Err(what) => {
                self.fail(what);
                None
            }
        }
    }

    fn decode_block(&mut self) -> Result<bool, String> {
        loop {
            let n = match self.read_chunk()? {
                Chunk::Whole(0) => {
                    self.read_trailer()?;
                    if self.next_stream()? {
                        continue;
                    }
                    return Ok(false);
                }
                Chunk::Whole(n) => n,
                Chunk::Cut { n, got } => return self.salvage(n, got),
                Chunk::Corrupt { n, what } => {
                    self.skip_block(n, what);
                    continue;
                }
            };
            let decoded = if self.version == VERSION_1 {
                decode_v1(&self.raw, n, &mut self.block)
            } else {
                decode_v2(&self.raw, n, &mut self.block, false)
            };
            match decoded {
                Ok(records) => {
                    self.read += records as u64;
                    self.stream_read += records as u64;
                    return Ok(true);
                }
                Err(what) => self.skip_block(n, what),
            }
        }
    }

    /// A block cut after `got` of its frame's bytes: the messages whose bytes the
    /// zstd decoder could recover (every whole record up to its last complete zstd
    /// block) are handed out, then the cut is reported. Only a cut is salvaged: in a
    /// corrupt frame, the bytes before the damage are not covered by its checksum.
    fn salvage(&mut self, n: usize, got: usize) -> Result<bool, String> {
        let len = self.frame.len();
        let at = self.offset;
        let what = |kept: usize| {
            let whose = if n == 0 {
                "the trailer".to_string()
            } else {
                format!("a block of {n} messages")
            };
            format!(
                "truncated .rbfs stream: {whose} starting here is cut at byte offset {at} (after {got} of its {len} compressed bytes), {kept} of its messages recovered"
            )
        };
        if n == 0 || self.version == VERSION_1 {
            return Err(what(0));
        }
        let slot = super::compressed::DamageSlot::default();
        let decoder = super::compressed::ZstdReader::new(&self.frame[..got], slot)
            .map_err(|e| format!("zstd: {e}"))?;
        self.raw.clear();
        // The decoder stops at the cut (recording it in `slot`, reported here instead).
        let _ = decoder
            .take(Self::max_content(n) as u64)
            .read_to_end(&mut self.raw);
        let kept = if self.raw.len() > 9 {
            decode_v2(&self.raw, n, &mut self.block, true)?
        } else {
            0
        };
        self.read += kept as u64;
        self.stream_read += kept as u64;
        if kept == 0 {
            return Err(what(0));
        }
        self.cut = Some(what(kept));
        Ok(true)
    }

    fn read_trailer(&mut self) -> Result<(), String> {
        let s: IngestSummary =
            serde_json::from_slice(&self.raw).map_err(|e| format!("corrupt .rbfs trailer: {e}"))?;
        // Streams one after another: the first one's summary is the origin.
        self.trailer.get_or_insert(s);
        match self.declared {
            Some(d) if d != self.stream_read + self.stream_lost => Err(format!(
                "the header declares {d} messages but the stream holds {}",
                self.stream_read + self.stream_lost
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

/// The base time and the time width at the start of `head`.
fn base_and_width(head: &[u8]) -> Result<(u64, usize), String> {
    let mut b = [0u8; 8];
    b.copy_from_slice(&head[..8]);
    let w = head[8] as usize;
    if !matches!(w, 0 | 1 | 2 | 4 | 8) {
        return Err(format!("corrupt .rbfs block: time width {w}"));
    }
    Ok((u64::from_le_bytes(b), w))
}

/// A version-1 block of `n` messages (keys, then base, width and deltas) into `out`.
fn decode_v1(raw: &[u8], n: usize, out: &mut Vec<Message>) -> Result<usize, String> {
    if raw.len() < n * 8 + 9 {
        return Err(format!(
            "corrupt .rbfs block: {} bytes for {n} messages",
            raw.len()
        ));
    }
    let (keys, rest) = raw.split_at(n * 8);
    let (base, w) = base_and_width(rest)?;
    let deltas = &rest[9..];
    if deltas.len() != n * w {
        return Err(format!(
            "corrupt .rbfs block: time width {w} with {} bytes of deltas",
            deltas.len()
        ));
    }
    out.clear();
    decode_records(keys, deltas, w, n, base, out);
    Ok(n)
}

/// A version-2 block of `n` messages (base and width, then groups of
/// [`SALVAGE_RECORDS`]: their keys, then their deltas) into `out`; with `prefix`,
/// `raw` may hold only the block's start (a cut block), and the whole records in it
/// (key and delta both there) are decoded. Returns how many.
fn decode_v2(raw: &[u8], n: usize, out: &mut Vec<Message>, prefix: bool) -> Result<usize, String> {
    let short = || format!("corrupt .rbfs block: {} bytes for {n} messages", raw.len());
    if raw.len() < 9 {
        return Err(short());
    }
    let (base, w) = base_and_width(raw)?;
    if !prefix && raw.len() != 9 + n * (8 + w) {
        return Err(short());
    }
    out.clear();
    let (mut at, mut t) = (9, base);
    while out.len() < n {
        let g = SALVAGE_RECORDS.min(n - out.len());
        let keys = &raw[at.min(raw.len())..(at + 8 * g).min(raw.len())];
        let deltas = &raw[(at + 8 * g).min(raw.len())..];
        // Whole records: a key, and its delta unless times take no bytes.
        let whole = deltas
            .len()
            .checked_div(w)
            .map_or(keys.len() / 8, |d| d.min(keys.len() / 8))
            .min(g);
        t = decode_records(keys, deltas, w, whole, t, out);
        if whole < g {
            break;
        }
        at += g * (8 + w);
    }
    Ok(out.len())
}

/// Appends `n` messages to `out`: message i's key at `keys[8 * i..]`, its time delta
/// (`w` bytes, zigzag, from the previous message's time; the first from `base`) at
/// `deltas[w * i..]`. Returns the last message's time.
fn decode_records(
    keys: &[u8],
    deltas: &[u8],
    w: usize,
    n: usize,
    base: u64,
    out: &mut Vec<Message>,
) -> u64 {
    let (keys, deltas) = (&keys[..8 * n], &deltas[..w * n]);
    // One loop per width so that each is a tight decode with fixed-size reads.
    match w {
        0 => decode_width::<0>(keys, deltas, base, out),
        1 => decode_width::<1>(keys, deltas, base, out),
        2 => decode_width::<2>(keys, deltas, base, out),
        4 => decode_width::<4>(keys, deltas, base, out),
        _ => decode_width::<8>(keys, deltas, base, out),
    }
}

#[inline(always)]
fn le<const W: usize>(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a[..W].copy_from_slice(&b[..W]);
    u64::from_le_bytes(a)
}

fn decode_width<const W: usize>(
    keys: &[u8],
    deltas: &[u8],
    base: u64,
    out: &mut Vec<Message>,
) -> u64 {
    let mut t = base;
    let mut push = |key: &[u8], delta: &[u8]| {
        if W > 0 {
            t = t.wrapping_add(unzigzag(le::<W>(delta)) as u64);
        }
        let time = if t == u64::MAX {
            Timestamp::NONE
        } else {
            Timestamp::from_nanos(t)
        };
        out.push(Message::at(le::<8>(key), time));
    };
    if W == 0 {
        keys.chunks_exact(8).for_each(|k| push(k, &[]));
    } else {
        keys.chunks_exact(8)
            .zip(deltas.chunks_exact(W.max(1)))
            .for_each(|(k, d)| push(k, d));
    }
    t
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
        let summary = IngestSummary::new(&path, SourceFormat::Trace(Format::Rbfs));
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
            if self.reader.streams() > 1 {
                self.summary.notes.insert(
                    ".rbfs stream(s) written after the first one's trailer, read on".into(),
                    self.reader.streams() - 1,
                );
            }
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
/// A source that yields no message is an error ([`super::source::IngestSummary::require_data`])
/// before anything is put in place: no empty stream is left under `path`.
pub fn write(path: &Path, source: &mut dyn MessageSource, hasher: KeyHasher) -> Result<u64> {
    let mut w = RbfsWriter::create(path, hasher)?;
    w.push_all(source)?;
    source.summary().require_data()?;
    w.finish(source.summary())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A version-1 stream (keys, then times), written here as that version laid it
    /// out, is still read.
    #[test]
    fn version_1_streams_are_read() {
        let times = [5u64, 7, 6, u64::MAX];
        let keys = [11u64, 12, 13, 14];
        let mut raw = Vec::new();
        keys.iter()
            .for_each(|k| raw.extend_from_slice(&k.to_le_bytes()));
        raw.extend_from_slice(&times[0].to_le_bytes());
        raw.push(8);
        let mut prev = times[0];
        for &t in &times {
            raw.extend_from_slice(&zigzag(t.wrapping_sub(prev) as i64).to_le_bytes());
            prev = t;
        }
        let frame = zstd::bulk::compress(&raw, 1).expect("compresses");
        let trailer = zstd::bulk::compress(b"{}", 1).expect("compresses");
        let mut s = Vec::new();
        s.extend_from_slice(&MAGIC);
        s.extend_from_slice(&VERSION_1.to_le_bytes());
        s.extend_from_slice(&0u16.to_le_bytes());
        s.extend_from_slice(&0u64.to_le_bytes());
        s.extend_from_slice(&4u64.to_le_bytes());
        s.extend_from_slice(&0u64.to_le_bytes());
        for (n, f) in [(4u32, &frame), (0, &trailer)] {
            s.extend_from_slice(&n.to_le_bytes());
            s.extend_from_slice(&(f.len() as u32).to_le_bytes());
            s.extend_from_slice(f);
        }
        let mut r = RbfsReader::new(PathBuf::from("v1.rbfs"), Box::new(std::io::Cursor::new(s)))
            .expect("opens");
        let block = r.next_block().expect("a block").to_vec();
        assert_eq!(block.iter().map(|m| m.key).collect::<Vec<_>>(), keys);
        let got: Vec<Option<u64>> = block.iter().map(|m| m.time.nanos()).collect();
        assert_eq!(got, [Some(5), Some(7), Some(6), None]);
        assert!(r.next_block().is_none());
        assert_eq!(r.damage(), None);
    }

    /// A stream of `blocks` blocks of keys and times like a capture's (keys recurring,
    /// times a microsecond apart), as jobs for the compressor.
    fn jobs(blocks: usize) -> Vec<Job> {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        (0..blocks)
            .map(|b| {
                let mut data = Vec::new();
                let mut pieces = Vec::new();
                for _ in 0..SALVAGE_RECORDS / 64 {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (0..64u64).for_each(|i| {
                        data.extend_from_slice(&((state >> 40) % 97 + i % 3).to_le_bytes())
                    });
                    pieces.push(64 * 8);
                }
                Job {
                    n: (b + 1) as u32,
                    data,
                    pieces,
                    frame: Vec::new(),
                }
            })
            .collect()
    }

    /// The frames, in order, that `compressor` makes of `jobs`.
    fn frames(mut compressor: Compressor, jobs: Vec<Job>) -> Vec<(u32, Vec<u8>)> {
        let mut out = Vec::new();
        for job in jobs {
            let done = compressor.submit(job).expect("compresses");
            out.extend(done.map(|j| (j.n, j.frame)));
        }
        while let Some(j) = compressor.next_done().expect("compresses") {
            out.push((j.n, j.frame));
        }
        out
    }

    /// The compressing thread returns the frames in block order, the same bytes as
    /// compressing on the writer's own thread (the file does not depend on threads).
    #[test]
    fn frames_are_the_same_on_the_compressing_thread() {
        for blocks in [0, 1, COMPRESSING, COMPRESSING + 1, 9] {
            let here = frames(
                Compressor::Here(Box::new(encoder().expect("an encoder"))),
                jobs(blocks),
            );
            let there = frames(Compressor::start().expect("an encoder"), jobs(blocks));
            assert!(matches!(
                Compressor::start().expect("an encoder"),
                Compressor::Thread { .. }
            ));
            assert_eq!(here.len(), blocks);
            assert_eq!(
                here.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
                (1..=blocks as u32).collect::<Vec<_>>()
            );
            assert!(here == there, "{blocks} blocks: the frames differ");
        }
    }

    /// Messages from a vector, in the order given.
    struct Listed(Vec<Message>, usize, IngestSummary);

    impl Iterator for Listed {
        type Item = Message;
        fn next(&mut self) -> Option<Message> {
            let m = self.0.get(self.1).copied();
            self.1 += 1;
            m
        }
    }

    impl MessageSource for Listed {
        fn summary(&self) -> &IngestSummary {
            &self.2
        }
    }

    /// The file `write` makes of `messages`, through `push_all` (from the read-ahead
    /// thread or from the source itself) or one `push` at a time.
    fn written(messages: &[Message], how: &str) -> Vec<u8> {
        let path = std::env::temp_dir().join(format!(
            "rbf-rbfs-{how}-{}-{}.rbfs",
            messages.len(),
            std::process::id()
        ));
        let summary = IngestSummary::new(Path::new("listed"), SourceFormat::Trace(Format::Csv));
        let listed = Listed(messages.to_vec(), 0, summary.clone());
        let mut w = RbfsWriter::create(&path, KeyHasher::default()).expect("creates");
        match how {
            "push" => messages.iter().for_each(|&m| w.push(m).expect("writes")),
            "read-ahead" => w
                .push_all(super::super::readahead::ReadAhead::spawn(Box::new(listed)).as_mut())
                .expect("writes"),
            _ => w.push_all(&mut { listed }).expect("writes"),
        }
        w.finish(&summary).expect("finishes");
        let bytes = std::fs::read(&path).expect("reads");
        std::fs::remove_file(&path).expect("removes");
        bytes
    }

    /// Batches taken whole from the read-ahead thread, filled by the source, or
    /// messages pushed one by one make the same file, and it reads back to the same
    /// messages: block and group boundaries, every delta width, times going back,
    /// messages without a time.
    #[test]
    fn batches_and_single_messages_write_the_same_stream() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut t = 1_000_000u64;
        let all: Vec<Message> = (0..2 * BLOCK + BATCH + 3)
            .map(|i| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                // Widths by stretch: 1, 2, 4 and 8 bytes (backwards too), and no time.
                let step = match (i / 5000) % 5 {
                    0 => state % 100,
                    1 => state % 60_000,
                    2 => (state % 1_000_000).wrapping_neg(),
                    3 => state >> 8,
                    _ => 0,
                };
                t = t.wrapping_add(step) % (1 << 62);
                let time = if (i / 5000) % 5 == 4 {
                    Timestamp::NONE
                } else {
                    Timestamp::from_nanos(t)
                };
                Message::at(state % 50_000, time)
            })
            .collect();
        for n in [
            1,
            BATCH - 1,
            BATCH,
            SALVAGE_RECORDS + 1,
            BLOCK,
            BLOCK + 1,
            all.len(),
        ] {
            let messages = &all[..n];
            let one_by_one = written(messages, "push");
            assert!(
                written(messages, "read-ahead") == one_by_one,
                "{n}: read-ahead"
            );
            assert!(written(messages, "fill") == one_by_one, "{n}: fill");
            let mut r = RbfsReader::new(
                PathBuf::from("t.rbfs"),
                Box::new(std::io::Cursor::new(one_by_one)),
            )
            .expect("opens");
            let mut back = Vec::new();
            while let Some(b) = r.next_block() {
                back.extend_from_slice(b);
            }
            assert!(back == messages, "{n}: read back differently");
            assert_eq!(r.damage(), None);
        }
    }

    #[test]
    fn zigzag_round_trips() {
        for v in [0i64, 1, -1, i64::MAX, i64::MIN, 12345, -98765] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
    }
}
