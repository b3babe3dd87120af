//! The message source over a pcap or pcapng capture, read with pcap-parser's streaming
//! readers (legacy pcap in both byte orders with micro- or nanosecond timestamps;
//! pcapng with any number of sections and interfaces, each with its own link type,
//! `if_tsresol` and `if_tsoffset`).

use std::io::Read;
use std::path::PathBuf;

use pcap_parser::pcapng::Block;
use pcap_parser::traits::PcapReaderIterator;
use pcap_parser::{PcapBlockOwned, PcapError};

use super::key::KeySpec;
use super::link::mask_linktype;
use super::{decode, decode_into, PacketFields, Skip};
use crate::ingest::options::Format;
use crate::ingest::source::{IngestSummary, MessageSource, SourceFormat};
use crate::message::{KeyDictionary, KeyHasher, Message, Timestamp};
use rbf_foundations::error::{Error, Result};

/// Initial read buffer; grown on demand for larger blocks, up to [`MAX_BUFFER`]. Twice
/// the input's own buffer (`input::open`'s 1 MiB), so that the refills, which ask for
/// nearly all of it, bypass that buffer and read the file straight into this one (one
/// copy of every byte less).
const INITIAL_BUFFER: usize = 2 << 20;
/// A block claiming to be larger than this is treated as corruption, not as a reason
/// to allocate: real captures have blocks of at most a few hundred KiB.
const MAX_BUFFER: usize = 64 << 20;

/// One pcapng interface (or the single link of a legacy pcap file).
#[derive(Clone, Copy, Debug)]
struct Interface {
    linktype: u32,
    /// Timestamp units per second.
    units_per_sec: u64,
    /// Nanoseconds per unit when that is a whole number (every power of ten up to
    /// 10^9): timestamps then cost a multiplication, not a 128-bit division.
    ns_per_unit: Option<u64>,
    /// Seconds added to every timestamp (`if_tsoffset`).
    offset_s: i64,
}

impl Interface {
    /// A classic pcap record's time in nanoseconds.
    #[inline]
    fn legacy_ns(&self, ts_sec: u32, ts_frac: u32) -> u64 {
        u64::from(ts_sec) * 1_000_000_000 + u64::from(ts_frac) * self.ns_per_unit.unwrap_or(1)
    }

    /// A pcapng timestamp in nanoseconds (not yet checked for plausibility).
    #[inline]
    fn ng_ns(&self, ts_high: u32, ts_low: u32) -> i128 {
        let ts = (u64::from(ts_high) << 32) | u64::from(ts_low);
        let scaled = match self.ns_per_unit {
            Some(m) => i128::from(ts) * i128::from(m),
            None => (u128::from(ts) * 1_000_000_000 / u128::from(self.units_per_sec)) as i128,
        };
        scaled + i128::from(self.offset_s) * 1_000_000_000
    }
}

/// How a capture's packets become messages (one per IP packet; flow records are made
/// from these by [`super::flows::FlowExport`]).
#[derive(Clone, Copy, Debug)]
pub struct CaptureOptions {
    pub key: KeySpec,
    pub hasher: KeyHasher,
    pub keep_keys: bool,
}

/// A pcap/pcapng capture as a message stream.
pub struct PcapSource {
    path: PathBuf,
    reader: Box<dyn PcapReaderIterator + Send>,
    keying: Keying,
    interfaces: Vec<Interface>,
    /// A pcapng file, and the byte order of the section being read (to walk past a
    /// damaged block).
    pcapng: bool,
    big_endian: bool,
    /// How packet records are framed, for [`plain_record`]: known once the file or
    /// section header has been read.
    framing: Framing,
    /// Tests turn the hand-written record path off to compare it with the parser's.
    #[cfg(test)]
    plain_records: bool,
    buffer_size: usize,
    /// [`Iterator::next`]'s one-message batch, kept between calls.
    one: Vec<Message>,
    done: bool,
    summary: IngestSummary,
}

/// Why the parser returned no block, owned so that the reader can be used again.
enum ReadFailure {
    Eof,
    Incomplete,
    BufferTooSmall,
    UnexpectedEof,
    Read,
    Parse(String),
}

/// What one block turned into, owned so that the reader can move on.
enum Outcome {
    Packet {
        fields: PacketFields,
        time_ns: Option<u64>,
    },
    Skipped(Skip),
    Malformed(String),
    Nothing,
}

impl PcapSource {
    pub fn new(
        path: PathBuf,
        input: Box<dyn Read + Send>,
        options: CaptureOptions,
    ) -> Result<Self> {
        let reader =
            pcap_parser::create_reader(INITIAL_BUFFER, input).map_err(|e| Error::Format {
                path: path.clone(),
                offset: 0,
                message: match e {
                    PcapError::Eof | PcapError::Incomplete(_) | PcapError::UnexpectedEof => {
                        "truncated capture: the file header is incomplete".to_string()
                    }
                    PcapError::HeaderNotRecognized => {
                        "not a pcap or pcapng capture, or its file header is truncated or corrupt"
                            .to_string()
                    }
                    other => format!("cannot read the capture header: {other}"),
                },
            })?;
        let mut summary = IngestSummary::new(&path, SourceFormat::Trace(Format::Pcap));
        summary.key = Some(options.key.describe());
        Ok(PcapSource {
            path,
            reader,
            keying: Keying {
                dictionary: options.keep_keys.then(KeyDictionary::new),
                options,
                last_time_ns: 0,
            },
            interfaces: Vec::new(),
            pcapng: false,
            big_endian: false,
            framing: Framing::Unknown,
            #[cfg(test)]
            plain_records: true,
            buffer_size: INITIAL_BUFFER,
            one: Vec::with_capacity(1),
            done: false,
            summary,
        })
    }

    fn damage(&mut self, what: &str) {
        self.summary.damage = Some(format!(
            "{}: byte offset {}: {what}; the {} packet(s) before it were read",
            self.path.display(),
            self.reader.consumed(),
            self.summary.records
        ));
        self.end();
    }

    fn end(&mut self) {
        self.done = true;
    }

    /// Reads blocks until one yields a packet outcome (or the input ends); returns it
    /// with the byte offset of its block.
    #[inline(always)]
    fn next_outcome(&mut self) -> Option<(usize, Outcome)> {
        loop {
            if self.done {
                return None;
            }
            let offset = self.reader.consumed();
            // The parser's error borrows the reader (and carries the rest of the
            // buffer): keep only what kind of error it was, never the input.
            let error = match self.reader.next() {
                Ok((len, block)) => {
                    match &block {
                        PcapBlockOwned::NG(Block::SectionHeader(shb)) => {
                            self.pcapng = true;
                            self.big_endian = shb.big_endian();
                            self.framing = Framing::Ng {
                                big_endian: self.big_endian,
                            };
                        }
                        PcapBlockOwned::LegacyHeader(h) => {
                            self.pcapng = false;
                            // The modified (Kuznetzov) format has longer record headers.
                            self.framing = if h.is_modified_format() {
                                Framing::Unknown
                            } else {
                                Framing::Legacy {
                                    big_endian: h.is_bigendian(),
                                }
                            };
                        }
                        _ => {}
                    }
                    let o = outcome(block, &mut self.interfaces, &mut self.summary);
                    self.reader.consume(len);
                    if !matches!(o, Outcome::Nothing) {
                        return Some((offset, o));
                    }
                    continue;
                }
                Err(PcapError::NomError(_, kind) | PcapError::OwnedNomError(_, kind)) => {
                    ReadFailure::Parse(format!("the block does not parse ({kind:?})"))
                }
                Err(PcapError::Eof) => ReadFailure::Eof,
                Err(PcapError::Incomplete(_)) => ReadFailure::Incomplete,
                Err(PcapError::BufferTooSmall) => ReadFailure::BufferTooSmall,
                Err(PcapError::UnexpectedEof) => ReadFailure::UnexpectedEof,
                Err(PcapError::ReadError) => ReadFailure::Read,
                Err(PcapError::HeaderNotRecognized) => {
                    ReadFailure::Parse("a file header where a block was expected".into())
                }
            };
            // A whole pcapng block is buffered, yet the parser wants more or cannot
            // parse it: an inner length is wrong, and the block length says where the
            // next block starts.
            let inner = "an inner length runs past the block";
            match error {
                ReadFailure::Eof => self.end(),
                ReadFailure::Incomplete if self.skip_block(offset, inner) => {}
                ReadFailure::Incomplete => {
                    if let Err(e) = self.reader.refill() {
                        let what = format!("read error: {e}");
                        self.damage(&what);
                    }
                }
                ReadFailure::BufferTooSmall => {
                    let want = self.buffer_size.saturating_mul(2);
                    if want > MAX_BUFFER || !self.reader.grow(want) {
                        self.damage("corrupt capture: a record claims more than 64 MiB");
                    } else {
                        self.buffer_size = want;
                        if let Err(e) = self.reader.refill() {
                            let what = format!("read error: {e}");
                            self.damage(&what);
                        }
                    }
                }
                // pcap-parser reports the end of a fully consumed buffer as unexpected
                // when its reader ran dry before the buffer was last shifted.
                ReadFailure::UnexpectedEof if self.reader.data().is_empty() => self.end(),
                ReadFailure::UnexpectedEof if self.skip_block(offset, inner) => {}
                ReadFailure::UnexpectedEof => self.damage(
                    "truncated capture (or a corrupt length field): the record here is incomplete",
                ),
                ReadFailure::Read => self.damage("read error (or corrupt compressed input)"),
                ReadFailure::Parse(what) => {
                    if !self.skip_block(offset, &what) {
                        self.damage(&format!("corrupt capture: {what}"));
                    }
                }
            }
        }
    }

    /// Skips a pcapng block whose contents do not parse but whose framing is intact
    /// (type, a block length that is a multiple of 4, the same length repeated at the
    /// end): the block length says where the next block starts (pcapng §3.1), so one
    /// bad inner length need not end the capture. Counted as malformed, by reason.
    fn skip_block(&mut self, offset: usize, what: &str) -> bool {
        if !self.pcapng {
            // Legacy pcap has no block framing to resynchronise on.
            return false;
        }
        let data = self.reader.data();
        let word = |at: usize| -> Option<u32> {
            let b: [u8; 4] = data.get(at..at + 4)?.try_into().ok()?;
            Some(if self.big_endian {
                u32::from_be_bytes(b)
            } else {
                u32::from_le_bytes(b)
            })
        };
        let (Some(kind), Some(len)) = (word(0), word(4)) else {
            return false;
        };
        let len = len as usize;
        if len < 12 || !len.is_multiple_of(4) || word(len - 4) != Some(len as u32) {
            return false;
        }
        let example = format!(
            "{}: byte offset {offset}: pcapng block type {kind:#x} of {len} bytes: {what}",
            self.path.display()
        );
        self.reader.consume(len);
        self.summary.records += 1;
        self.summary.malformed_at(
            "pcapng block whose contents disagree with its length (skipped by its block length)",
            &example,
        );
        true
    }
}

/// The record framing of the file or section being read.
#[derive(Clone, Copy, Debug)]
enum Framing {
    /// Before the header, or a format only the parser reads.
    Unknown,
    /// Classic pcap: 16-byte record headers.
    Legacy { big_endian: bool },
    /// A pcapng section in this byte order.
    Ng { big_endian: bool },
}

const CAPLEN_OVER_ORIGLEN: &str =
    "capture length larger than original length (kept what was captured)";

/// A whole packet record of the plainest kind, read without pcap-parser.
struct PlainRecord<'a> {
    /// Bytes of the record, header included.
    len: usize,
    if_id: usize,
    time: RecordTime,
    /// A classic record whose captured length exceeds the original (counted in a note).
    caplen_over_origlen: bool,
    /// The packet's bytes (without pcapng's padding).
    frame: &'a [u8],
}

enum RecordTime {
    Legacy { sec: u32, frac: u32 },
    Ng { high: u32, low: u32 },
}

/// The first block in `data` when it is a whole packet record of the plainest kind: a
/// classic pcap record, or a pcapng enhanced packet block without options whose two
/// lengths agree. These are most of a capture, and for them pcap-parser returns exactly
/// these fields (its checks are repeated here), but through general machinery (a boxed
/// parser, nom, an options list, a block enum of 100 bytes). Anything else, or a
/// record not wholly in `data`, is None and is left to pcap-parser, with its errors.
#[inline(always)]
fn plain_record(data: &[u8], framing: Framing) -> Option<PlainRecord<'_>> {
    let word = |at: usize, big_endian: bool| -> Option<u32> {
        let b: [u8; 4] = data.get(at..at + 4)?.try_into().ok()?;
        Some(if big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        })
    };
    match framing {
        Framing::Unknown => None,
        Framing::Legacy { big_endian } => {
            let caplen = word(8, big_endian)?;
            let len = 16usize.checked_add(caplen as usize)?;
            Some(PlainRecord {
                len,
                if_id: 0,
                time: RecordTime::Legacy {
                    sec: word(0, big_endian)?,
                    frac: word(4, big_endian)?,
                },
                caplen_over_origlen: caplen > word(12, big_endian)?,
                frame: data.get(16..len)?,
            })
        }
        Framing::Ng { big_endian } => {
            // Type 6 (enhanced packet), a length of exactly header + padded data +
            // trailer (no options), the same length at the end.
            let block_len = word(4, big_endian)?;
            let caplen = word(20, big_endian)?;
            let padded = caplen.checked_add(3)? & !3;
            if word(0, big_endian)? != 6 || Some(block_len) != padded.checked_add(32) {
                return None;
            }
            let len = block_len as usize;
            if word(len - 4, big_endian)? != block_len {
                return None;
            }
            Some(PlainRecord {
                len,
                if_id: word(8, big_endian)? as usize,
                time: RecordTime::Ng {
                    high: word(12, big_endian)?,
                    low: word(16, big_endian)?,
                },
                caplen_over_origlen: false,
                frame: data.get(28..28 + caplen as usize)?,
            })
        }
    }
}

/// Interprets one block. Section headers reset the interface list (pcapng §4.1:
/// interface ids are per section).
#[inline(always)]
fn outcome(
    block: PcapBlockOwned<'_>,
    interfaces: &mut Vec<Interface>,
    summary: &mut IngestSummary,
) -> Outcome {
    let (if_id, data, time_ns) = match block {
        PcapBlockOwned::LegacyHeader(h) => {
            let units = if h.is_nanosecond_precision() {
                1_000_000_000
            } else {
                1_000_000
            };
            interfaces.clear();
            interfaces.push(Interface {
                linktype: mask_linktype(h.network.0),
                units_per_sec: units,
                ns_per_unit: ns_per_unit(units),
                offset_s: 0,
            });
            summary.note_resolution(units);
            return Outcome::Nothing;
        }
        PcapBlockOwned::Legacy(b) => {
            let Some(i) = interfaces.first() else {
                summary.records += 1;
                return Outcome::Malformed("record before the file header".into());
            };
            let ns = i.legacy_ns(b.ts_sec, b.ts_usec);
            if b.caplen > b.origlen {
                summary.note(CAPLEN_OVER_ORIGLEN);
            }
            (0usize, b.data, Some(ns))
        }
        PcapBlockOwned::NG(Block::SectionHeader(_)) => {
            interfaces.clear();
            return Outcome::Nothing;
        }
        PcapBlockOwned::NG(Block::InterfaceDescription(idb)) => {
            let units = ts_units(idb.if_tsresol).unwrap_or_else(|| {
                summary.note("interface with an invalid if_tsresol: microseconds assumed");
                1_000_000
            });
            interfaces.push(Interface {
                linktype: mask_linktype(idb.linktype.0),
                units_per_sec: units,
                ns_per_unit: ns_per_unit(units),
                offset_s: idb.ts_offset(),
            });
            summary.note_resolution(units);
            return Outcome::Nothing;
        }
        PcapBlockOwned::NG(Block::EnhancedPacket(epb)) => {
            let Some(i) = interfaces.get(epb.if_id as usize) else {
                summary.records += 1;
                return Outcome::Malformed(format!(
                    "packet on interface {} but the section defines {}",
                    epb.if_id,
                    interfaces.len()
                ));
            };
            let time_ns = plausible_time(i.ng_ns(epb.ts_high, epb.ts_low), summary);
            // The block's data is padded to 32 bits: the packet is its first caplen bytes.
            let data = &epb.data[..(epb.caplen as usize).min(epb.data.len())];
            (epb.if_id as usize, data, time_ns)
        }
        PcapBlockOwned::NG(Block::SimplePacket(spb)) => {
            if interfaces.is_empty() {
                summary.records += 1;
                return Outcome::Malformed("simple packet block before any interface".into());
            }
            let data = &spb.data[..(spb.origlen as usize).min(spb.data.len())];
            (0, data, None)
        }
        PcapBlockOwned::NG(other) => {
            summary.note(block_name(&other));
            return Outcome::Nothing;
        }
    };
    summary.records += 1;
    match decode(interfaces[if_id].linktype, data) {
        Ok(fields) => Outcome::Packet { fields, time_ns },
        Err(s) => Outcome::Skipped(s),
    }
}

/// The latest packet time taken as real: 2200-01-01 00:00:00 UTC. pcapng's 64-bit
/// timestamps reach far beyond any capture (legacy pcap's 32-bit seconds end in 2106).
const FAR_FUTURE_NS: i128 = 7_258_118_400 * 1_000_000_000;

const IMPLAUSIBLE_TIME: &str =
    "pcapng packet time after 2200 or before 1970 (damaged): the previous packet's time used";

/// A pcapng packet's time in nanoseconds, or None for one no capture can have (after
/// 2200, or before 1970 once `if_tsoffset` is applied), counted in a note. Such a time
/// is damage, not a moment: taken as it is, one packet would move the flow table's
/// clock centuries ahead and export every live flow at once (a flow exporter stamps
/// packets with its own clock as they arrive). The packet is kept and given the time
/// of the packet before it, as a simple packet block (which has no time) is, so one
/// damaged timestamp changes no flow record.
fn plausible_time(ns: i128, summary: &mut IngestSummary) -> Option<u64> {
    if (0..=FAR_FUTURE_NS).contains(&ns) {
        Some(ns as u64)
    } else {
        summary.note(IMPLAUSIBLE_TIME);
        None
    }
}

fn ns_per_unit(units_per_sec: u64) -> Option<u64> {
    (units_per_sec > 0 && units_per_sec <= 1_000_000_000 && 1_000_000_000 % units_per_sec == 0)
        .then(|| 1_000_000_000 / units_per_sec)
}

/// Timestamp units per second from `if_tsresol` (pcapng §4.2: the high bit selects a
/// power of two, otherwise a power of ten). pcap-parser's own helper compares the
/// whole byte against 63 and so rejects every valid power-of-two resolution.
fn ts_units(tsresol: u8) -> Option<u64> {
    let exp = u32::from(tsresol & 0x7F);
    if tsresol & 0x80 == 0 {
        10u64.checked_pow(exp)
    } else {
        1u64.checked_shl(exp).filter(|_| exp < 64)
    }
}

fn block_name(b: &Block<'_>) -> &'static str {
    match b {
        Block::NameResolution(_) => "pcapng name resolution block (not needed)",
        Block::InterfaceStatistics(_) => "pcapng interface statistics block (not needed)",
        Block::DecryptionSecrets(_) => "pcapng decryption secrets block (not needed)",
        Block::SystemdJournalExport(_) => "pcapng systemd journal block (not needed)",
        Block::ProcessInformation(_) => "pcapng process information block (not needed)",
        Block::Custom(_) => "pcapng custom block (not needed)",
        _ => "pcapng block of unknown type (ignored as the specification requires)",
    }
}

impl PcapSource {
    /// Reads the plain records ([`plain_record`]) lying whole at the front of the
    /// buffer into `out`, up to `max` messages, until a record that is not plain or is
    /// on an unknown interface (the parser's path reads that one): the number of
    /// records read. The buffer is borrowed once for the whole run and consumed once
    /// at its end, not through the reader's dynamic calls for every record (three a
    /// packet, a fifth of the decoding thread's user time). The same counts, notes and
    /// messages as the parser's path, without its block enums.
    #[inline(always)]
    fn plain_run(&mut self, out: &mut Vec<Message>, max: usize) -> usize {
        #[cfg(test)]
        if !self.plain_records {
            return 0;
        }
        let start = self.reader.consumed();
        let data = self.reader.data();
        let (mut pos, mut records) = (0, 0);
        while out.len() < max {
            let Some(r) = plain_record(&data[pos..], self.framing) else {
                break;
            };
            let Some(&i) = self.interfaces.get(r.if_id) else {
                break;
            };
            let time_ns = match r.time {
                RecordTime::Legacy { sec, frac } => Some(i.legacy_ns(sec, frac)),
                RecordTime::Ng { high, low } => {
                    plausible_time(i.ng_ns(high, low), &mut self.summary)
                }
            };
            if r.caplen_over_origlen {
                self.summary.note(CAPLEN_OVER_ORIGLEN);
            }
            self.summary.records += 1;
            let mut fields = PacketFields::default();
            match decode_into(i.linktype, r.frame, &mut fields) {
                Ok(()) => out.push(self.keying.message(&mut self.summary, &fields, time_ns)),
                Err(s) => skipped(&self.path, &mut self.summary, start + pos, &s),
            }
            pos += r.len;
            records += 1;
        }
        // The buffer is shifted at the next refill: once per buffer, not every half
        // buffer as `consume` does.
        self.reader.consume_noshift(pos);
        records
    }
}

/// What turns a decoded packet into a message: the key, the kept key names, the time
/// of a packet that has none.
struct Keying {
    options: CaptureOptions,
    dictionary: Option<KeyDictionary>,
    last_time_ns: u64,
}

impl Keying {
    /// The message of a decoded packet.
    #[inline(always)]
    fn message(
        &mut self,
        summary: &mut IngestSummary,
        fields: &PacketFields,
        time_ns: Option<u64>,
    ) -> Message {
        if let Some(p) = fields.partial {
            summary.note(p.note());
        }
        let spec = self.options.key;
        let key = spec.hash(fields, &self.options.hasher);
        if let Some(d) = self.dictionary.as_mut() {
            if d.name(key).is_none() {
                d.record(key, spec.render(fields).as_bytes());
            }
        }
        let t = time_ns.unwrap_or(self.last_time_ns);
        self.last_time_ns = t;
        summary.messages += 1;
        Message::at(key, Timestamp::from_nanos(t))
    }
}

/// Counts a packet that yielded no message, by reason.
fn skipped(path: &std::path::Path, summary: &mut IngestSummary, offset: usize, s: &Skip) {
    if s.is_malformed() {
        let at = format!("{}: byte offset {offset}: {}", path.display(), s.detail());
        summary.malformed_at(&s.reason(), &at);
    } else {
        summary.skip(&s.reason());
    }
}

impl PcapSource {
    /// One block read by pcap-parser (a record that is not plain, or cut by the
    /// buffer's end, headers on the way): its message, None inside for a packet that
    /// gave none, None at the end of the capture.
    fn parsed_step(&mut self) -> Option<Option<Message>> {
        let (offset, outcome) = self.next_outcome()?;
        Some(match outcome {
            Outcome::Packet { fields, time_ns } => {
                Some(self.keying.message(&mut self.summary, &fields, time_ns))
            }
            Outcome::Skipped(s) => {
                skipped(&self.path, &mut self.summary, offset, &s);
                None
            }
            Outcome::Malformed(what) => {
                let at = format!("{}: byte offset {offset}: {what}", self.path.display());
                self.summary.malformed_at(&what, &at);
                None
            }
            Outcome::Nothing => None,
        })
    }
}

impl Iterator for PcapSource {
    type Item = Message;

    /// Through [`MessageSource::fill`], one message at a time (its vector is kept).
    fn next(&mut self) -> Option<Message> {
        let mut one = std::mem::take(&mut self.one);
        one.clear();
        self.fill(&mut one, 1);
        let m = one.pop();
        self.one = one;
        m
    }
}

impl MessageSource for PcapSource {
    fn summary(&self) -> &IngestSummary {
        &self.summary
    }

    /// Runs of plain records straight from the buffer; the rest through pcap-parser.
    fn fill(&mut self, out: &mut Vec<Message>, max: usize) {
        while out.len() < max {
            if self.plain_run(out, max) > 0 {
                continue;
            }
            match self.parsed_step() {
                Some(Some(m)) => out.push(m),
                Some(None) => {}
                None => return,
            }
        }
    }

    fn dictionary(&self) -> Option<&KeyDictionary> {
        self.keying.dictionary.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::Rng;

    /// An Ethernet/IPv4 or IPv6 TCP/UDP frame, or now and then an ARP frame.
    fn frame(rng: &mut Rng) -> Vec<u8> {
        let mut f = vec![2u8; 12];
        match rng.below(8) {
            0 => {
                f.extend_from_slice(&[0x08, 0x06]);
                f.extend_from_slice(&[0; 28]);
            }
            1 => {
                f.extend_from_slice(&[0x86, 0xDD, 0x60, 0, 0, 0, 0, 8, 17, 64]);
                f.extend((0..40).map(|_| rng.below(256) as u8));
            }
            _ => {
                f.extend_from_slice(&[0x08, 0x00, 0x45, 0, 0, 40, 0, 0, 0x40, 0, 64, 6, 0, 0]);
                f.extend((0..28).map(|_| rng.below(4) as u8));
            }
        }
        f.truncate(f.len() - rng.below(4) as usize);
        f
    }

    /// A classic pcap capture in either byte order and resolution, some records with
    /// a captured length over the original.
    fn legacy(rng: &mut Rng, big_endian: bool, nanos: bool) -> Vec<u8> {
        let w = |v: u32| {
            if big_endian {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let magic = if nanos { 0xA1B2_3C4D } else { 0xA1B2_C3D4 };
        let mut out = w(magic).to_vec();
        // Version 2.4 (two 16-bit fields), then zone, sigfigs, snap length, Ethernet.
        let version = if big_endian {
            [0, 2, 0, 4]
        } else {
            [2, 0, 4, 0]
        };
        out.extend_from_slice(&version);
        for v in [0, 0, 65535, 1] {
            out.extend_from_slice(&w(v));
        }
        for i in 0..300u32 {
            let f = frame(rng);
            let orig = f.len() as u32 + u32::from(rng.chance(0.1)) - u32::from(rng.chance(0.05));
            for v in [1_700_000_000 + i / 7, i * 1013, f.len() as u32, orig] {
                out.extend_from_slice(&w(v));
            }
            out.extend_from_slice(&f);
        }
        out
    }

    /// A pcapng capture: two interfaces (one in nanoseconds), packets with and without
    /// options, on a missing interface, simple packet blocks, a statistics block.
    fn pcapng(rng: &mut Rng, big_endian: bool) -> Vec<u8> {
        let w = |v: u32| {
            if big_endian {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let block = |out: &mut Vec<u8>, kind: u32, body: &[u8]| {
            let padded = body.len().next_multiple_of(4);
            let len = 12 + padded as u32;
            out.extend_from_slice(&w(kind));
            out.extend_from_slice(&w(len));
            out.extend_from_slice(body);
            out.resize(out.len() + padded - body.len(), 0);
            out.extend_from_slice(&w(len));
        };
        let mut out = Vec::new();
        let mut shb = w(0x1A2B_3C4D).to_vec();
        shb.extend_from_slice(&if big_endian {
            [0, 1, 0, 0]
        } else {
            [1, 0, 0, 0]
        });
        shb.extend_from_slice(&[0xFF; 8]);
        block(&mut out, 0x0A0D_0D0A, &shb);
        let idb = |nanos: bool| {
            let mut b = if big_endian {
                vec![0, 1, 0, 0]
            } else {
                vec![1, 0, 0, 0]
            };
            b.extend_from_slice(&w(65535));
            if nanos {
                // if_tsresol = 9, then the end of options.
                let code = if big_endian {
                    [0, 9, 0, 1]
                } else {
                    [9, 0, 1, 0]
                };
                b.extend_from_slice(&code);
                b.extend_from_slice(&[9, 0, 0, 0, 0, 0, 0, 0]);
            }
            b
        };
        block(&mut out, 1, &idb(false));
        block(&mut out, 1, &idb(true));
        for i in 0..300u32 {
            let f = frame(rng);
            if rng.chance(0.05) {
                let mut b = w(f.len() as u32).to_vec();
                b.extend_from_slice(&f);
                block(&mut out, 3, &b);
                continue;
            }
            let if_id = [0, 1, 1, 2][rng.below(4) as usize];
            let mut b = Vec::new();
            for v in [if_id, 0x0005_F000, i * 7919, f.len() as u32, f.len() as u32] {
                b.extend_from_slice(&w(v));
            }
            b.extend_from_slice(&f);
            if rng.chance(0.2) {
                // An opt_comment.
                b.resize(b.len().next_multiple_of(4), 0);
                let code = if big_endian {
                    [0, 1, 0, 4]
                } else {
                    [1, 0, 4, 0]
                };
                b.extend_from_slice(&code);
                b.extend_from_slice(b"abcd");
                b.extend_from_slice(&[0; 4]);
            }
            block(&mut out, 6, &b);
            if i == 150 {
                block(&mut out, 5, &[0; 12]);
            }
        }
        out
    }

    /// `bytes` as a capture with the default key.
    fn source(bytes: &[u8]) -> Result<PcapSource> {
        let input = Box::new(std::io::Cursor::new(bytes.to_vec()));
        let options = CaptureOptions {
            key: KeySpec::default(),
            hasher: KeyHasher::default(),
            keep_keys: false,
        };
        PcapSource::new(PathBuf::from("t.pcap"), input, options)
    }

    /// The summary a refused capture leaves: its error as the source's name.
    fn refused(e: Error) -> (Vec<Message>, IngestSummary) {
        (
            Vec::new(),
            IngestSummary::new(&PathBuf::from(e.to_string()), SourceFormat::Unknown),
        )
    }

    fn read(bytes: &[u8], plain_records: bool) -> (Vec<Message>, IngestSummary) {
        match source(bytes) {
            Ok(mut s) => {
                s.plain_records = plain_records;
                let mut out = Vec::new();
                loop {
                    let before = out.len();
                    s.fill(&mut out, before + 1000);
                    if out.len() < before + 1000 {
                        break;
                    }
                }
                (out, s.summary)
            }
            Err(e) => refused(e),
        }
    }

    /// The messages and summary of `bytes` read one message at a time.
    fn read_one_by_one(bytes: &[u8]) -> (Vec<Message>, IngestSummary) {
        match source(bytes) {
            Ok(mut s) => {
                let out: Vec<Message> = (&mut s).collect();
                (out, s.summary)
            }
            Err(e) => refused(e),
        }
    }

    /// `next` (one message a call) reads what `fill` reads in batches, on intact, cut
    /// and corrupted captures of both kinds.
    #[test]
    fn next_reads_what_fill_reads() {
        let mut rng = Rng::seed(7);
        let captures = [
            legacy(&mut rng, false, false),
            legacy(&mut rng, true, true),
            pcapng(&mut rng, false),
            pcapng(&mut rng, true),
        ];
        for c in captures {
            assert!(read_one_by_one(&c).0.len() > 150);
            let mut variants = vec![c.clone()];
            for _ in 0..10 {
                variants.push(c[..rng.below(c.len() as u64) as usize].to_vec());
                let mut d = c.clone();
                let at = 24 + rng.below(c.len() as u64 - 24) as usize;
                d[at] = rng.below(256) as u8;
                variants.push(d);
            }
            for v in variants {
                let (batched, one) = (read(&v, true), read_one_by_one(&v));
                assert_eq!(batched.0, one.0);
                assert_eq!(batched.1, one.1);
            }
        }
    }

    #[test]
    fn plain_records_read_like_the_parser_reads_them() {
        let mut rng = Rng::seed(41);
        let mut captures = Vec::new();
        for (big_endian, nanos) in [(false, false), (true, false), (false, true), (true, true)] {
            captures.push(legacy(&mut rng, big_endian, nanos));
        }
        captures.push(pcapng(&mut rng, false));
        captures.push(pcapng(&mut rng, true));
        for c in captures {
            // The intact capture is read (mostly packets, some skipped, some notes).
            let (messages, summary) = read(&c, true);
            assert!(
                messages.len() > 150 && summary.records >= 280,
                "{summary:?}"
            );
            // Intact, cut short anywhere, and with bytes changed after the file header.
            let mut variants = vec![c.clone()];
            for _ in 0..20 {
                variants.push(c[..rng.below(c.len() as u64) as usize].to_vec());
                let mut d = c.clone();
                for _ in 0..1 + rng.below(8) {
                    let at = 24 + rng.below(c.len() as u64 - 24) as usize;
                    d[at] = rng.below(256) as u8;
                }
                variants.push(d);
            }
            for v in variants {
                let (plain, general) = (read(&v, true), read(&v, false));
                assert_eq!(plain.0, general.0);
                assert_eq!(plain.1, general.1);
            }
        }
    }
}
