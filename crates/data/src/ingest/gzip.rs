//! gzip-compressed inputs (RFC 1952): public capture archives and rotated tcpdump
//! files are mostly `.pcap.gz`. Read like zstd ones ([`super::compressed`]): told apart
//! by their magic number whatever the file is called, every byte decompressed before
//! damage handed out, and the damage (a truncated file, corrupt deflate data, a CRC or
//! length mismatch) recorded with its compressed and decompressed byte offsets for the
//! source above to report.
//!
//! A gzip file may hold several members one after the other (`cat a.gz b.gz`, `pigz`,
//! `bgzip`); they are one stream, as for `gzip -d`. The members' deflate data is
//! inflated by flate2 (its pure-Rust backend); the member headers and trailers are
//! read here, so that a cut anywhere is located exactly.

use std::io::{BufRead, Read};

use flate2::{Crc, Decompress, FlushDecompress, Status};

use super::compressed::DamageSlot;

/// ID1, ID2 and the only compression method defined (deflate).
pub const GZIP_MAGIC: [u8; 3] = [0x1F, 0x8B, 0x08];

const FHCRC: u8 = 1 << 1;
const FEXTRA: u8 = 1 << 2;
const FNAME: u8 = 1 << 3;
const FCOMMENT: u8 = 1 << 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// At the start of a member (or at the end of the stream).
    Header,
    Body,
    Trailer,
}

/// Decompresses a gzip stream (any number of members); damage ends the stream cleanly
/// (end of input to the reader above) after every byte decompressed before it.
pub struct GzipReader<R> {
    inner: R,
    inflate: Decompress,
    crc: Crc,
    state: State,
    /// Compressed bytes consumed so far.
    compressed: u64,
    /// Decompressed bytes handed out so far.
    decompressed: u64,
    members: u64,
    done: bool,
    damage: DamageSlot,
}

/// Why reading a member's header or trailer stopped.
enum Stop {
    /// The input ended exactly at a member boundary: the clean end of the stream.
    End,
    Damage(String),
}

impl<R: BufRead> GzipReader<R> {
    pub fn new(inner: R, damage: DamageSlot) -> Self {
        GzipReader {
            inner,
            inflate: Decompress::new(false),
            crc: Crc::new(),
            state: State::Header,
            compressed: 0,
            decompressed: 0,
            members: 0,
            done: false,
            damage,
        }
    }

    fn fail(&mut self, what: &str) {
        super::compressed::record_damage(
            &self.damage,
            "gzip",
            what,
            self.compressed,
            self.decompressed,
        );
        self.done = true;
    }

    /// Reads `out.len()` bytes of a header or trailer; `Ok(false)` when the input ends
    /// before the first of them.
    fn exact(&mut self, out: &mut [u8], part: &str) -> Result<bool, Stop> {
        let mut n = 0;
        while n < out.len() {
            let avail = match self.inner.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Stop::Damage(format!("read error ({e})"))),
            };
            if avail.is_empty() {
                if n == 0 {
                    return Ok(false);
                }
                return Err(Stop::Damage(format!(
                    "the compressed stream ends inside a member's {part} (truncated)"
                )));
            }
            let take = avail.len().min(out.len() - n);
            out[n..n + take].copy_from_slice(&avail[..take]);
            self.inner.consume(take);
            self.compressed += take as u64;
            n += take;
        }
        Ok(true)
    }

    /// [`GzipReader::exact`] where the input must not end.
    fn need(&mut self, out: &mut [u8], part: &str) -> Result<(), Stop> {
        if self.exact(out, part)? {
            Ok(())
        } else {
            Err(Stop::Damage(format!(
                "the compressed stream ends inside a member's {part} (truncated)"
            )))
        }
    }

    /// Skips a zero-terminated header field.
    fn skip_text(&mut self) -> Result<(), Stop> {
        let mut b = [0u8];
        loop {
            self.need(&mut b, "header")?;
            if b[0] == 0 {
                return Ok(());
            }
        }
    }

    /// Reads a member header.
    fn header(&mut self) -> Result<(), Stop> {
        let mut fixed = [0u8; 10];
        if !self.exact(&mut fixed[..1], "header")? {
            return Err(if self.members == 0 {
                Stop::Damage("empty input".into())
            } else {
                Stop::End
            });
        }
        let start = self.compressed - 1;
        let is_gzip = fixed[0] == GZIP_MAGIC[0] && {
            self.need(&mut fixed[1..], "header")?;
            fixed[..3] == GZIP_MAGIC
        };
        if !is_gzip {
            self.compressed = start;
            return Err(Stop::Damage(if self.members == 0 {
                "not a gzip stream".to_string()
            } else {
                // gzip -d ignores such trailing bytes with a warning; so do we.
                format!(
                    "bytes that are not a gzip member follow member {} (ignored)",
                    self.members
                )
            }));
        }
        let flags = fixed[3];
        if flags & FEXTRA != 0 {
            let mut len = [0u8; 2];
            self.need(&mut len, "header")?;
            let mut left = usize::from(u16::from_le_bytes(len));
            let mut chunk = [0u8; 256];
            while left > 0 {
                let n = left.min(chunk.len());
                self.need(&mut chunk[..n], "header")?;
                left -= n;
            }
        }
        if flags & FNAME != 0 {
            self.skip_text()?;
        }
        if flags & FCOMMENT != 0 {
            self.skip_text()?;
        }
        if flags & FHCRC != 0 {
            self.need(&mut [0u8; 2], "header")?;
        }
        Ok(())
    }

    /// Reads and checks a member trailer (CRC-32 and length of the member's data).
    fn trailer(&mut self) -> Result<(), Stop> {
        let mut t = [0u8; 8];
        self.need(&mut t, "trailer")?;
        let crc = u32::from_le_bytes([t[0], t[1], t[2], t[3]]);
        let len = u32::from_le_bytes([t[4], t[5], t[6], t[7]]);
        if crc != self.crc.sum() || len != self.crc.amount() {
            return Err(Stop::Damage(format!(
                "member {} fails its check (CRC-32 {:08x}, length {} stored; {:08x}, {} decompressed): corrupt data",
                self.members + 1,
                crc,
                len,
                self.crc.sum(),
                self.crc.amount()
            )));
        }
        self.members += 1;
        self.crc.reset();
        self.inflate.reset(false);
        Ok(())
    }

    /// Moves between members; false when the stream is over (cleanly or not).
    fn boundary(&mut self) -> bool {
        let r = match self.state {
            State::Header => self.header().map(|()| State::Body),
            State::Trailer => self.trailer().map(|()| State::Header),
            State::Body => return true,
        };
        match r {
            Ok(next) => {
                self.state = next;
                true
            }
            Err(Stop::End) => {
                self.done = true;
                false
            }
            Err(Stop::Damage(what)) => {
                self.fail(&what);
                false
            }
        }
    }
}

impl<R: BufRead> Read for GzipReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while !self.done && !buf.is_empty() {
            if self.state != State::Body {
                self.boundary();
                continue;
            }
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
            let (in0, out0) = (self.inflate.total_in(), self.inflate.total_out());
            let result = self.inflate.decompress(input, buf, FlushDecompress::None);
            let used = (self.inflate.total_in() - in0) as usize;
            let made = (self.inflate.total_out() - out0) as usize;
            self.inner.consume(used);
            self.compressed += used as u64;
            self.crc.update(&buf[..made]);
            self.decompressed += made as u64;
            match result {
                Ok(Status::StreamEnd) => self.state = State::Trailer,
                Ok(_) if made == 0 && (at_end || used == 0) => {
                    self.fail("the compressed stream ends inside a member's data (truncated)");
                }
                Ok(_) => {}
                Err(e) => {
                    let what = format!("corrupt compressed data ({e})");
                    self.fail(&what);
                }
            }
            if made > 0 {
                return Ok(made);
            }
        }
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::compressed::take_damage;
    use std::io::Write;

    fn gunzip(bytes: &[u8]) -> (Vec<u8>, Option<String>) {
        let slot = DamageSlot::default();
        let mut r = GzipReader::new(std::io::BufReader::new(bytes), slot.clone());
        let mut out = Vec::new();
        r.read_to_end(&mut out).expect("never an error");
        (out, take_damage(&slot))
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).expect("write");
        e.finish().expect("finish")
    }

    fn sample(n: usize, seed: u8) -> Vec<u8> {
        (0..n)
            .map(|j| (j as u8).wrapping_mul(seed) ^ (j >> 7) as u8)
            .collect()
    }

    #[test]
    fn members_are_one_stream_and_header_fields_are_skipped() {
        let (a, b) = (sample(70_000, 3), sample(1000, 5));
        let mut two = gzip(&a);
        // A second member with a name, a comment, an extra field and a header CRC.
        let mut e = flate2::GzBuilder::new()
            .filename("b.pcap")
            .comment("rotated")
            .extra(vec![1, 2, 3])
            .write(Vec::new(), flate2::Compression::fast());
        e.write_all(&b).expect("write");
        two.extend(e.finish().expect("finish"));
        let (got, d) = gunzip(&two);
        assert_eq!(d, None);
        assert_eq!(got, [a, b].concat());
        let (empty, d) = gunzip(&gzip(b""));
        assert!(empty.is_empty() && d.is_none());
    }

    #[test]
    fn every_flushed_block_before_a_cut_is_delivered() {
        let chunks: Vec<Vec<u8>> = (1..=20u8).map(|i| sample(5000, i)).collect();
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        let mut flushed = Vec::new();
        for c in &chunks {
            enc.write_all(c).expect("write");
            enc.flush().expect("flush");
            flushed.push(enc.get_ref().len());
        }
        let whole = enc.finish().expect("finish");
        let (all, d) = gunzip(&whole);
        assert_eq!((all.len(), d), (100_000, None));
        for (i, &at) in flushed.iter().enumerate() {
            let (got, d) = gunzip(&whole[..at + 1]);
            assert!(got.len() >= 5000 * (i + 1), "cut after chunk {i}");
            assert_eq!(&got[..], &all[..got.len()]);
            let d = d.expect("damage");
            assert!(
                d.starts_with("gzip: ")
                    && d.contains("truncated")
                    && d.contains(&format!("compressed byte offset {}", at + 1))
                    && d.contains(&format!("decompressed byte offset {}", got.len())),
                "{d}"
            );
        }
        // Cut in the trailer: all the data, and the damage.
        let (got, d) = gunzip(&whole[..whole.len() - 3]);
        assert_eq!(got.len(), 100_000);
        assert!(d.expect("damage").contains("trailer"));
        // Cut in the header.
        let (got, d) = gunzip(&whole[..5]);
        assert!(got.is_empty());
        assert!(d.expect("damage").contains("header"));
    }

    #[test]
    fn corruption_and_trailing_bytes_are_reported_not_raised() {
        let whole = gzip(&sample(100_000, 7));
        let mut bad = whole.clone();
        let n = bad.len();
        bad[n - 6] ^= 0x55; // stored CRC
        let (got, d) = gunzip(&bad);
        assert_eq!(got.len(), 100_000);
        assert!(d.expect("damage").contains("fails its check"));
        let mut bad = whole.clone();
        bad[n / 2] ^= 0xFF;
        let (_, d) = gunzip(&bad);
        assert!(d.expect("damage").starts_with("gzip: "));
        let mut padded = whole.clone();
        padded.extend([0u8; 512]);
        let (got, d) = gunzip(&padded);
        assert_eq!(got.len(), 100_000);
        let d = d.expect("a note");
        assert!(
            d.contains("not a gzip member") && d.contains(&format!("offset {n}")),
            "{d}"
        );
    }
}
