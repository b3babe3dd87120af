//! zstd-compressed inputs: a decompressing reader that hands out every byte it could
//! decompress before damage (a truncated or corrupt stream) and records where the
//! damage is, in compressed and decompressed bytes; and a source wrapper that puts that
//! record into the reader's summary, so the warning names zstd and both offsets.
//!
//! The `zstd` crate's own stream reader fails the whole `read` call that meets the end
//! of a truncated frame, dropping the bytes it decompressed in that call: with a 1 MiB
//! buffer, a capture cut anywhere in its first MiB yielded nothing at all.

use std::io::{BufRead, Read};
use std::sync::{Arc, Mutex};

use zstd::stream::raw::{Decoder, InBuffer, Operation, OutBuffer};

use super::{IngestSummary, MessageSource};
use crate::message::{KeyDictionary, Message};

/// Where a decompressing reader records damage for the source above it to report.
pub type DamageSlot = Arc<Mutex<Option<String>>>;

pub(super) fn put(slot: &DamageSlot, what: String) {
    if let Ok(mut s) = slot.lock() {
        s.get_or_insert(what);
    }
}

/// Takes the damage a decompressor recorded, if any.
pub fn take_damage(slot: &DamageSlot) -> Option<String> {
    slot.lock().ok().and_then(|mut s| s.take())
}

/// Decompresses a zstd stream (any number of frames); damage ends the stream cleanly
/// (end of input to the reader above) after every byte decompressed before it.
pub struct ZstdReader<R> {
    inner: R,
    decoder: Decoder<'static>,
    /// Compressed bytes consumed so far.
    compressed: u64,
    /// Decompressed bytes handed out so far.
    decompressed: u64,
    /// The last frame is unfinished (the decoder expects more input).
    in_frame: bool,
    done: bool,
    damage: DamageSlot,
}

impl<R: BufRead> ZstdReader<R> {
    pub fn new(inner: R, damage: DamageSlot) -> std::io::Result<Self> {
        Ok(ZstdReader {
            inner,
            decoder: Decoder::new()?,
            compressed: 0,
            decompressed: 0,
            in_frame: false,
            done: false,
            damage,
        })
    }

    fn fail(&mut self, what: &str) {
        put(
            &self.damage,
            format!(
                "zstd: {what} at compressed byte offset {} (decompressed byte offset {})",
                self.compressed, self.decompressed
            ),
        );
        self.done = true;
    }
}

impl<R: BufRead> Read for ZstdReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while !self.done && !buf.is_empty() {
            let input = match self.inner.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let what = format!("read error ({e})");
                    self.fail(&what);
                    break;
                }
            };
            let at_end = input.is_empty();
            let mut src = InBuffer::around(input);
            let mut dst = OutBuffer::around(&mut *buf);
            let result = self.decoder.run(&mut src, &mut dst);
            let (used, made) = (src.pos(), dst.pos());
            self.inner.consume(used);
            self.compressed += used as u64;
            match result {
                // With no input and no output the hint is the size of the next frame's
                // header, whether or not the last frame was complete: keep the state of
                // the last call that did something.
                Ok(_) if at_end && made == 0 => {}
                Ok(hint) => self.in_frame = hint != 0,
                Err(e) => {
                    let what = format!("corrupt compressed data ({e})");
                    self.decompressed += made as u64;
                    self.fail(&what);
                    return Ok(made);
                }
            }
            self.decompressed += made as u64;
            if made > 0 {
                return Ok(made);
            }
            if at_end {
                if self.in_frame {
                    self.fail("the compressed stream ends inside a frame (truncated)");
                }
                self.done = true;
            }
        }
        Ok(0)
    }
}

/// A source over a compressed input: the summary gets the decompressor's damage.
pub struct Decompressed {
    inner: Box<dyn MessageSource>,
    damage: DamageSlot,
    summary: Option<IngestSummary>,
}

impl Decompressed {
    pub fn new(inner: Box<dyn MessageSource>, damage: DamageSlot) -> Self {
        Decompressed {
            inner,
            damage,
            summary: None,
        }
    }

    fn finish(&mut self) {
        let mut s = self.inner.summary().clone();
        if let Some(d) = take_damage(&self.damage) {
            // The decompressor's damage is the cause of any damage the format reader
            // saw (a record cut short by the end of the decompressed bytes).
            s.damage = Some(format!(
                "{}: {d}; the {} record(s) decompressed before it were read",
                s.source, s.records
            ));
        }
        self.summary = Some(s);
    }
}

impl Iterator for Decompressed {
    type Item = Message;

    fn next(&mut self) -> Option<Message> {
        if self.summary.is_some() {
            return None;
        }
        let m = self.inner.next();
        if m.is_none() {
            self.finish();
        }
        m
    }
}

impl MessageSource for Decompressed {
    fn summary(&self) -> &IngestSummary {
        self.summary
            .as_ref()
            .unwrap_or_else(|| self.inner.summary())
    }

    fn dictionary(&self) -> Option<&KeyDictionary> {
        self.inner.dictionary()
    }

    fn declared_distinct(&self) -> Option<u64> {
        self.inner.declared_distinct()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decompress(bytes: &[u8]) -> (Vec<u8>, Option<String>) {
        let slot = DamageSlot::default();
        let mut r = ZstdReader::new(std::io::BufReader::new(bytes), slot.clone()).expect("init");
        let mut out = Vec::new();
        r.read_to_end(&mut out).expect("never an error");
        (out, take_damage(&slot))
    }

    #[test]
    fn every_flushed_block_before_a_cut_is_delivered() {
        // Flushing after each chunk ends a zstd block there: a cut after the flush
        // point of chunk i must deliver chunks 0..=i.
        let chunks: Vec<Vec<u8>> = (0..20u8)
            .map(|i| (0..5000).map(|j| (j as u8).wrapping_mul(i)).collect())
            .collect();
        let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).expect("encoder");
        let mut flushed = Vec::new();
        for c in &chunks {
            std::io::Write::write_all(&mut enc, c).expect("write");
            std::io::Write::flush(&mut enc).expect("flush");
            flushed.push(enc.get_ref().len());
        }
        let whole = enc.finish().expect("finish");
        let (all, d) = decompress(&whole);
        assert_eq!((all.len(), d), (100_000, None));
        for (i, &at) in flushed.iter().enumerate().take(19) {
            let (got, d) = decompress(&whole[..at + 1]);
            assert!(
                got.len() >= 5000 * (i + 1),
                "cut after chunk {i}: {}",
                got.len()
            );
            assert_eq!(&got[..], &all[..got.len()]);
            let d = d.expect("damage");
            assert!(
                d.contains("zstd") && d.contains(&format!("compressed byte offset {}", at + 1)),
                "{d}"
            );
            assert!(
                d.contains(&format!("decompressed byte offset {}", got.len())),
                "{d}"
            );
        }
    }

    #[test]
    fn corruption_is_reported_not_raised() {
        let whole = zstd::encode_all(&[7u8; 100_000][..], 3).expect("compress");
        let mut bad = whole.clone();
        let n = bad.len();
        bad[n / 2] ^= 0xFF;
        bad[n / 2 + 1] ^= 0xFF;
        let (_, d) = decompress(&bad);
        // Either the corruption is detected, or (rarely) it still decodes; never a panic.
        if let Some(d) = d {
            assert!(d.starts_with("zstd: "), "{d}");
        }
    }
}
