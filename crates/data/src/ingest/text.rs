//! Line-oriented text traces (request logs, one key per line), read in large chunks so
//! that parsing runs at memory speed; the per-line work is a strategy ([`LineParser`]).

use std::io::BufRead;
use std::path::PathBuf;

use crate::message::{KeyDictionary, KeyHasher, Message, Timestamp};

use super::options::Format;
use super::source::{IngestSummary, MessageSource, SourceFormat};

/// Turns one line (without its newline) into a key and a timestamp.
pub trait LineParser: Send {
    /// `Ok(Some((key, time)))` for a record, `Ok(None)` for a line that carries no record
    /// by design (blank, comment, header), `Err(reason)` for a malformed line.
    fn parse<'a>(
        &'a mut self,
        line: &'a [u8],
        line_no: u64,
    ) -> Result<Option<(&'a [u8], Timestamp)>, String>;

    /// The key bytes are a flow key's canonical encoding
    /// ([`crate::ingest::packet::key`]), named readably through
    /// [`render_encoded`](crate::ingest::packet::key::render_encoded), not shown as is.
    const ENCODED_KEYS: bool = false;

    /// The format it reads (its name in reports).
    fn format(&self) -> Format;

    /// Why line `line_no` carried no record (after `parse` returned `Ok(None)`).
    fn skip_reason(&self, _line_no: u64) -> &'static str {
        "blank or comment line"
    }
}

use super::source::MAX_EXAMPLES;

/// Longest line kept: memory must not grow with the input (a file without newlines
/// would otherwise be buffered whole). Longer lines are malformed.
pub const MAX_LINE: usize = 1 << 20;

/// A message source over a text input.
pub struct TextSource<P: LineParser> {
    path: PathBuf,
    reader: Box<dyn BufRead + Send>,
    parser: P,
    hasher: KeyHasher,
    dictionary: Option<KeyDictionary>,
    /// Carry-over of a line split across reads (at most [`MAX_LINE`] bytes).
    partial: Vec<u8>,
    /// Bytes of the current line dropped beyond [`MAX_LINE`].
    dropped: u64,
    chunk: Vec<u8>,
    pos: usize,
    line_no: u64,
    offset: u64,
    done: bool,
    summary: IngestSummary,
}

impl<P: LineParser> TextSource<P> {
    pub fn new(
        path: PathBuf,
        reader: Box<dyn BufRead + Send>,
        parser: P,
        hasher: KeyHasher,
        keep_keys: bool,
    ) -> Self {
        let summary = IngestSummary::new(&path, SourceFormat::Trace(parser.format()));
        TextSource {
            path,
            reader,
            parser,
            hasher,
            dictionary: keep_keys.then(KeyDictionary::new),
            partial: Vec::new(),
            dropped: 0,
            chunk: Vec::new(),
            pos: 0,
            line_no: 0,
            offset: 0,
            done: false,
            summary,
        }
    }

    /// Names the flow key in the summary (flow logs).
    pub fn with_key(mut self, key: Option<String>) -> Self {
        self.summary.key = key;
        self
    }

    /// Refills `chunk`; returns false at end of input (or on a read error, which is
    /// recorded as damage: everything before it has been delivered).
    fn refill(&mut self) -> bool {
        self.chunk.clear();
        self.pos = 0;
        match self.reader.fill_buf() {
            Ok([]) => false,
            Ok(buf) => {
                self.chunk.extend_from_slice(buf);
                let n = buf.len();
                self.reader.consume(n);
                true
            }
            Err(e) => {
                self.summary.damage = Some(format!(
                    "{}: read error after byte {} (line {}): {e}; everything before it was read",
                    self.path.display(),
                    self.offset,
                    self.line_no
                ));
                false
            }
        }
    }

    /// Appends part of a line split across reads, up to [`MAX_LINE`] bytes.
    fn carry(&mut self, bytes: &[u8]) {
        let room = MAX_LINE.saturating_sub(self.partial.len());
        let keep = bytes.len().min(room);
        self.partial.extend_from_slice(&bytes[..keep]);
        self.dropped += (bytes.len() - keep) as u64;
    }

    fn handle_line(&mut self, start: usize, end: usize, from_partial: bool) -> Option<Message> {
        self.line_no += 1;
        let raw: &[u8] = if from_partial {
            &self.partial
        } else {
            &self.chunk[start..end]
        };
        self.offset += raw.len() as u64 + 1 + self.dropped;
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        self.summary.records += 1;
        let parsed = if self.dropped > 0 {
            self.dropped = 0;
            Err(format!("line longer than {MAX_LINE} bytes"))
        } else {
            self.parser.parse(line, self.line_no)
        };
        match parsed {
            Ok(Some((key_bytes, time))) => {
                let key = self.hasher.hash(key_bytes);
                if let Some(d) = self.dictionary.as_mut() {
                    if !P::ENCODED_KEYS {
                        d.record(key, key_bytes);
                    } else if d.name(key).is_none() {
                        let name = crate::ingest::packet::key::render_encoded(key_bytes);
                        d.record(key, name.as_bytes());
                    }
                }
                self.summary.messages += 1;
                Some(Message::at(key, time))
            }
            Ok(None) => {
                let reason = self.parser.skip_reason(self.line_no);
                self.summary.skip(reason);
                None
            }
            Err(reason) => {
                let example = if self.summary.examples.len() < MAX_EXAMPLES {
                    let shown = String::from_utf8_lossy(&line[..line.len().min(80)]).into_owned();
                    format!(
                        "{}:{}: {reason}: {shown:?}",
                        self.summary.source, self.line_no
                    )
                } else {
                    String::new()
                };
                self.summary.malformed_at(&reason, &example);
                None
            }
        }
    }
}

impl<P: LineParser> Iterator for TextSource<P> {
    type Item = Message;

    fn next(&mut self) -> Option<Message> {
        loop {
            if self.done {
                return None;
            }
            if self.pos >= self.chunk.len() && !self.refill() {
                self.done = true;
                if !self.partial.is_empty() || self.dropped > 0 {
                    // Last line without a trailing newline.
                    let m = self.handle_line(0, 0, true);
                    self.partial.clear();
                    if m.is_some() {
                        return m;
                    }
                }
                return None;
            }
            match memchr::memchr(b'\n', &self.chunk[self.pos..]) {
                Some(i) => {
                    let (start, end) = (self.pos, self.pos + i);
                    self.pos = end + 1;
                    let m = if self.partial.is_empty() {
                        self.handle_line(start, end, false)
                    } else {
                        let tail = self.chunk[start..end].to_vec();
                        self.carry(&tail);
                        let m = self.handle_line(0, 0, true);
                        self.partial.clear();
                        m
                    };
                    if m.is_some() {
                        return m;
                    }
                }
                None => {
                    let rest = self.chunk[self.pos..].to_vec();
                    self.carry(&rest);
                    self.pos = self.chunk.len();
                }
            }
        }
    }
}

impl<P: LineParser> MessageSource for TextSource<P> {
    fn summary(&self) -> &IngestSummary {
        &self.summary
    }

    fn dictionary(&self) -> Option<&KeyDictionary> {
        self.dictionary.as_ref()
    }
}

/// Parses an unsigned decimal integer, rejecting empty input, signs and overflow.
#[inline]
pub fn parse_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in s {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    Some(v)
}

/// Parses a timestamp in seconds: an integer, or a decimal with a fractional part.
pub fn parse_seconds(s: &[u8]) -> Option<Timestamp> {
    if let Some(v) = parse_u64(s) {
        return Some(Timestamp::from_secs(v));
    }
    let text = std::str::from_utf8(s).ok()?;
    let x: f64 = text.trim().parse().ok()?;
    if !x.is_finite() || x < 0.0 {
        return None;
    }
    Some(Timestamp::from_nanos((x * 1e9).round() as u64))
}

/// JEDI / TRAGEN request log: `timestamp,object_id,object_size`. The logs have no
/// header, but some tools that write them add one (`timestamp,obj_id,obj_size`): a
/// first line of three column names is skipped as a header (and counted), not
/// reported as malformed.
#[derive(Default)]
pub struct JediParser {
    /// The first line was a header.
    header: bool,
}

const JEDI_HEADER: &str = "header line (column names)";

/// Whether `line` is a header naming three columns: three comma-separated names
/// (letters, digits, `_`, `-`, blanks, quotes), none a number where the log has one.
pub fn is_jedi_header(line: &[u8]) -> bool {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let fields: Vec<&[u8]> = line.split(|&b| b == b',').collect();
    let name = |f: &&[u8]| {
        let f = f.trim_ascii();
        !f.is_empty()
            && f.iter().any(u8::is_ascii_alphabetic)
            && f.iter()
                .all(|&b| b.is_ascii_alphanumeric() || b"_- \"'".contains(&b))
    };
    fields.len() == 3 && fields.iter().all(name)
}

impl LineParser for JediParser {
    #[inline]
    fn parse<'a>(
        &'a mut self,
        line: &'a [u8],
        line_no: u64,
    ) -> Result<Option<(&'a [u8], Timestamp)>, String> {
        if line.is_empty() {
            return Ok(None);
        }
        if line_no == 1 && is_jedi_header(line) {
            self.header = true;
            return Ok(None);
        }
        // Lines are ~20 bytes: a plain scan beats memchr's per-call setup here (this
        // is the hot loop of `rbf-bench ingest --which jedi`).
        let comma = |s: &[u8]| s.iter().position(|&b| b == b',');
        let c1 = comma(line).ok_or("expected `timestamp,object_id,object_size`, found no comma")?;
        let rest = &line[c1 + 1..];
        let c2 = comma(rest).ok_or("expected 3 comma-separated fields, found 2")?;
        let (ts, id, size) = (&line[..c1], &rest[..c2], &rest[c2 + 1..]);
        if comma(size).is_some() {
            return Err("expected 3 comma-separated fields, found more".into());
        }
        let time = parse_seconds(ts).ok_or("timestamp is not a non-negative number")?;
        if id.is_empty() {
            return Err("empty object_id".into());
        }
        if parse_u64(size).is_none() {
            return Err("object_size is not a non-negative integer".into());
        }
        Ok(Some((id, time)))
    }

    fn format(&self) -> Format {
        Format::Jedi
    }

    fn skip_reason(&self, line_no: u64) -> &'static str {
        if line_no == 1 && self.header {
            JEDI_HEADER
        } else {
            "blank or comment line"
        }
    }
}

/// One key per line (surrounding blanks trimmed; blank lines and `#` comments skipped).
#[derive(Default)]
pub struct LinesParser;

impl LineParser for LinesParser {
    fn parse<'a>(
        &'a mut self,
        line: &'a [u8],
        _line_no: u64,
    ) -> Result<Option<(&'a [u8], Timestamp)>, String> {
        let t = line.trim_ascii();
        if t.is_empty() || t[0] == b'#' {
            return Ok(None);
        }
        Ok(Some((t, Timestamp::NONE)))
    }

    fn format(&self) -> Format {
        Format::Lines
    }
}

/// Whether a first line looks like a JEDI record (three comma-separated numbers).
pub fn looks_like_jedi(line: &[u8]) -> bool {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let mut p = JediParser::default();
    matches!(p.parse(line, 1), Ok(Some((id, _))) if parse_u64(id).is_some())
}
