//! zstd-compressed inputs: a decompressing reader that hands out every byte it could
//! decompress before damage (a truncated or corrupt stream) and records where the
//! damage is, in compressed and decompressed bytes; and a source wrapper that puts that
//! record into the reader's summary, so the warning names zstd and both offsets.
//!
//! The `zstd` crate's own stream reader fails the whole `read` call that meets the end
//! of a truncated frame, dropping the bytes it decompressed in that call: with a 1 MiB
//! buffer, a capture cut anywhere in its first MiB yielded nothing at all.
//!
//! A zstd stream may start with skippable frames (`pzstd` writes one before every
//! frame; the decoder passes over them), and its frames may need a window larger than
//! the decoder's default limit of 128 MiB (`zstd --long=31` writes 2 GiB windows): the
//! limit is raised to what this machine's memory allows ([`window_log_max`]), and a
//! stream that needs more is refused up front with the window it needs
//! ([`check_window`]).

use std::io::{BufRead, Read};
use std::sync::{Arc, Mutex};

use zstd::stream::raw::{DParameter, Decoder, InBuffer, Operation, OutBuffer};

use super::source::{IngestSummary, MessageSource};
use crate::message::{KeyDictionary, Message};

/// The first four bytes of a zstd frame.
pub const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// The largest window a zstd frame may declare (`zstd --long=31`, 2 GiB).
const MAX_WINDOW_LOG: u32 = 31;

/// A skippable frame: magic 0x184D2A50..=0x184D2A5F, little-endian.
fn is_skippable(b: &[u8]) -> bool {
    b.len() >= 4 && b[0] & 0xF0 == 0x50 && b[1..4] == [0x2A, 0x4D, 0x18]
}

/// Whether `head`, the first bytes of an input, starts a zstd stream: a frame, or a
/// skippable frame (as `pzstd` writes first).
pub fn is_zstd(head: &[u8]) -> bool {
    head.starts_with(&ZSTD_MAGIC) || is_skippable(head)
}

/// The window (bytes) the first frame in `head` needs, skipping skippable frames; None
/// when `head` does not hold the frame's header.
pub fn first_window(head: &[u8]) -> Option<u64> {
    let mut at = 0usize;
    while is_skippable(head.get(at..)?) {
        let size = u32::from_le_bytes(head.get(at + 4..at + 8)?.try_into().ok()?);
        at = at.checked_add(8 + size as usize)?;
    }
    let h = head.get(at..)?;
    if !h.starts_with(&ZSTD_MAGIC) {
        return None;
    }
    let descriptor = *h.get(4)?;
    if descriptor & 0x20 == 0 {
        // Window_Descriptor: exponent and mantissa (RFC 8878, 3.1.1.1.2).
        let wd = *h.get(5)?;
        let log = 10 + u32::from(wd >> 3);
        let base = 1u64 << log;
        return Some(base + (base / 8) * u64::from(wd & 7));
    }
    // Single segment: the window is the frame's content size.
    let dict = [0usize, 1, 2, 4][usize::from(descriptor & 3)];
    let start = 5 + dict;
    Some(match descriptor >> 6 {
        0 => u64::from(*h.get(start)?),
        1 => {
            u64::from(u16::from_le_bytes(
                h.get(start..start + 2)?.try_into().ok()?,
            )) + 256
        }
        2 => u64::from(u32::from_le_bytes(
            h.get(start..start + 4)?.try_into().ok()?,
        )),
        _ => u64::from_le_bytes(h.get(start..start + 8)?.try_into().ok()?),
    })
}

/// The largest window log the decoder accepts here: zstd's maximum (31), lowered so
/// that the window fits in the memory available.
pub fn window_log_max() -> u32 {
    let avail = rbf_foundations::resources::available_memory().unwrap_or(u64::MAX);
    (10..=MAX_WINDOW_LOG)
        .rev()
        .find(|&log| (1u64 << log) <= avail)
        .unwrap_or(10)
}

/// Refuses, before reading, a stream whose first frame needs a larger window than
/// zstd allows or this machine's memory holds, saying which.
pub fn check_window(head: &[u8]) -> rbf_foundations::error::Result<()> {
    let Some(window) = first_window(head) else {
        return Ok(());
    };
    let what = "decompressing this zstd stream (written with `zstd --long`)";
    if window > 1u64 << MAX_WINDOW_LOG {
        return Err(rbf_foundations::error::Error::Resource(format!(
            "{what} needs a window of {}, more than zstd's largest (2 GiB)",
            rbf_foundations::resources::bytes_text(window as f64)
        )));
    }
    rbf_foundations::resources::check_memory(&format!("{what}: its window"), window as f64)
}

/// Where a decompressing reader records damage for the source above it to report.
pub type DamageSlot = Arc<Mutex<Option<String>>>;

/// Records a decompressor's damage: what, and where in the compressed and the
/// decompressed stream. The first damage is kept: what follows is its consequence.
pub(super) fn record_damage(
    slot: &DamageSlot,
    codec: &str,
    what: &str,
    compressed: u64,
    decompressed: u64,
) {
    if let Ok(mut s) = slot.lock() {
        s.get_or_insert_with(|| {
            format!(
                "{codec}: {what} at compressed byte offset {compressed} (decompressed byte offset {decompressed})"
            )
        });
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
        let mut decoder = Decoder::new()?;
        decoder.set_parameter(DParameter::WindowLogMax(window_log_max()))?;
        Ok(ZstdReader {
            inner,
            decoder,
            compressed: 0,
            decompressed: 0,
            in_frame: false,
            done: false,
            damage,
        })
    }

    fn fail(&mut self, what: &str) {
        record_damage(
            &self.damage,
            "zstd",
            what,
            self.compressed,
            self.decompressed,
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
                Err(e) if e.to_string().contains("too much memory") => {
                    let what = format!(
                        "a frame needs a larger window than the {} this machine can give it (written with `zstd --long`?)",
                        rbf_foundations::resources::bytes_text((1u64 << window_log_max()) as f64)
                    );
                    self.decompressed += made as u64;
                    self.fail(&what);
                    return Ok(made);
                }
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

    fn estimated_distinct(&self) -> Option<super::count::DistinctEstimate> {
        self.inner.estimated_distinct()
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
    fn skippable_frames_and_long_windows_are_read() {
        let data: Vec<u8> = (0..200_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let frame = zstd::encode_all(&data[..], 3).expect("compress");
        // pzstd's layout: a skippable frame (its payload: the next frame's size)
        // before each frame; and one with an arbitrary payload in the middle.
        let mut stream = Vec::new();
        for magic in [0x50u8, 0x5F] {
            stream.extend([magic, 0x2A, 0x4D, 0x18]);
            stream.extend(4u32.to_le_bytes());
            stream.extend((frame.len() as u32).to_le_bytes());
            stream.extend(&frame);
        }
        assert!(is_zstd(&stream));
        let (out, d) = decompress(&stream);
        assert_eq!(d, None);
        assert_eq!(out.len(), 2 * data.len());
        assert_eq!(&out[..data.len()], &data[..]);
        // A frame declaring a 2 GiB window (as `zstd --long=31` on a pipe writes it).
        let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).expect("encoder");
        std::io::Write::write_all(&mut enc, &data).expect("write");
        let mut long = enc.finish().expect("finish");
        assert_eq!(long[4] & 0x20, 0, "a window descriptor");
        long[5] = 21 << 3; // window log 31
        assert_eq!(first_window(&long), Some(1 << 31));
        if window_log_max() == 31 {
            let (out, d) = decompress(&long);
            assert_eq!((out.len(), d), (data.len(), None));
        }
        // Beyond zstd's largest window: refused with what it needs.
        long[5] = 22 << 3;
        let e = check_window(&long).unwrap_err().to_string();
        assert!(e.contains("4.0 GiB") && e.contains("zstd --long"), "{e}");
        let (_, d) = decompress(&long);
        assert!(d.expect("damage").contains("larger window"));
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
