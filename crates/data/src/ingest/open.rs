//! Opening a trace: its format detected or given ([`Format`], [`IngestOptions`]), the
//! reader of that format chosen, a series of files read as one, compressed inputs
//! decompressed, flow records made from packets and decoding moved to a thread of its
//! own. The readers and what they share ([`super::source`]) know nothing of this.

use std::path::{Path, PathBuf};

use super::options::{Format, IngestOptions};
use super::source::{MessageSource, SourceFormat};
use super::{binary, compressed, csv, flowlog, input, lcs, packet, rbfs, readahead, series, text};
use rbf_foundations::error::{Error, Problem, Result};

/// Opens a trace as a message stream: one file, `-` (standard input), a directory or
/// a glob pattern (a series of files read as one).
pub fn open(path: &Path, options: &IngestOptions) -> Result<Box<dyn MessageSource>> {
    open_inputs(std::slice::from_ref(&path.to_path_buf()), options)
}

/// Opens the files `inputs` name (see [`series::expand`]) as one message stream, as
/// flow records when `options.flows` is set. Unless `options.same_thread`, the
/// stream is decoded on a thread of its own ([`readahead`]); flow records are made
/// on the consumer's side of it, so that decoding the packets and accounting them in
/// the flow table, the two costs of `--flows`, run side by side.
pub fn open_inputs(inputs: &[PathBuf], options: &IngestOptions) -> Result<Box<dyn MessageSource>> {
    let source = open_decoder(inputs, options)?;
    if let Some(timeouts) = options.flows {
        flows_apply(source.as_ref())?;
        let packets = read_ahead(source, options);
        return Ok(Box::new(packet::flows::FlowExport::new(packets, timeouts)));
    }
    Ok(read_ahead(source, options))
}

/// `source` on a decoding thread of its own unless `options.same_thread`.
fn read_ahead(source: Box<dyn MessageSource>, options: &IngestOptions) -> Box<dyn MessageSource> {
    if options.same_thread {
        source
    } else {
        readahead::ReadAhead::spawn(source)
    }
}

/// [`open_inputs`]'s messages (packets, not flows) on the calling thread.
fn open_decoder(inputs: &[PathBuf], options: &IngestOptions) -> Result<Box<dyn MessageSource>> {
    let files = series::expand(inputs)?;
    Ok(match files.as_slice() {
        [] => return Err(series::SeriesError::NoInput.into()),
        [one] => open_file(one, options, true)?,
        _ => Box::new(series::open(files, options, open_file)?),
    })
}

/// `--flows` applies to packet captures only: the error says why not otherwise.
fn flows_apply(source: &dyn MessageSource) -> Result<()> {
    let format = source.summary().format;
    if format != SourceFormat::Trace(Format::Pcap) {
        let flows_already = matches!(
            format,
            SourceFormat::Trace(Format::Zeek | Format::NfdumpCsv)
        );
        return Err(Error::setting(
            "flows",
            Problem::Conflict(format!(
                "applies to packet captures (pcap, pcapng), whose packets it aggregates into flow records; {} is a {format} trace{}",
                source.summary().source,
                if flows_already {
                    " whose records are flows already: read it without --flows"
                } else {
                    ""
                }
            ).into()),
        ));
    }
    Ok(())
}

/// Opens one file (or standard input) as a message stream of its records; with
/// `count`, a plain oracleGeneral file has its distinct objects estimated
/// ([`MessageSource::estimated_distinct`]).
pub(crate) fn open_file(
    path: &Path,
    options: &IngestOptions,
    count: bool,
) -> Result<Box<dyn MessageSource>> {
    let mut inp = input::open_with_progress(path, options.progress)?;
    let damage = inp.damage.take();
    let count = count && damage.is_none() && !super::source::is_stdin(path);
    let opened = (|| {
        let format = match options.format {
            Format::Auto => detect(path, &mut inp)?,
            f => f,
        };
        if format.is_text() {
            let head = input::peek(&mut inp, 4096).map_err(|e| Error::io(path, e))?;
            refuse_binary(path, &head, format, inp.compression)?;
            input::skip_bom(&mut inp).map_err(|e| Error::io(path, e))?;
        }
        open_format(path, inp.reader, format, options, count)
    })();
    match (opened, damage) {
        (Ok(source), None) => Ok(source),
        (Ok(source), Some(slot)) => Ok(Box::new(compressed::Decompressed::new(source, slot))),
        // Nothing could be decompressed before the damage: say so, not just that the
        // (empty or cut) decompressed start is no trace.
        (Err(e), Some(slot)) => match compressed::take_damage(&slot) {
            Some(d) => Err(Error::Format {
                path: path.to_path_buf(),
                offset: 0,
                message: format!("{d}: too little could be decompressed to read ({e})"),
            }),
            None => Err(e),
        },
        (Err(e), None) => Err(e),
    }
}

fn open_format(
    path: &Path,
    reader: Box<dyn std::io::BufRead + Send>,
    format: Format,
    options: &IngestOptions,
    count: bool,
) -> Result<Box<dyn MessageSource>> {
    let p = path.to_path_buf();
    let (hasher, keep) = (options.hasher, options.keep_keys);
    Ok(match format {
        Format::Jedi | Format::Lines | Format::Csv => text_source(p, reader, format, options)?,
        Format::Pcap => Box::new(packet::capture::PcapSource::new(
            p,
            Box::new(reader),
            packet::capture::CaptureOptions {
                key: options.key,
                hasher,
                keep_keys: keep,
            },
        )?),
        Format::Zeek => flow_log(
            p,
            reader,
            flowlog::zeek::ZeekParser::new(options.key),
            options,
        ),
        Format::NfdumpCsv => flow_log(
            p,
            reader,
            flowlog::nfdump::NfdumpParser::new(options.key),
            options,
        ),
        Format::Binary => {
            let source = binary::BinarySource::new(p, reader, hasher, keep);
            Box::new(if count { source.estimating() } else { source })
        }
        Format::Lcs => lcs_source(p, reader, options)?,
        Format::Rbfs => Box::new(rbfs::RbfsSource::open(p, Box::new(reader), hasher)?),
        Format::Auto => unreachable!("detect() never returns Auto"),
    })
}

/// A line-oriented text source: JEDI, one key a line, or CSV.
fn text_source(
    p: PathBuf,
    reader: Box<dyn std::io::BufRead + Send>,
    format: Format,
    options: &IngestOptions,
) -> Result<Box<dyn MessageSource>> {
    let (hasher, keep) = (options.hasher, options.keep_keys);
    Ok(match format {
        Format::Jedi => Box::new(text::TextSource::new(
            p,
            reader,
            text::JediParser::default(),
            hasher,
            keep,
        )),
        Format::Lines => Box::new(text::TextSource::new(
            p,
            reader,
            text::LinesParser,
            hasher,
            keep,
        )),
        // Format::Csv, the only other format `open_format` passes here.
        _ => Box::new(text::TextSource::new(
            p,
            reader,
            csv::CsvParser::new(options.csv.clone())?,
            hasher,
            keep,
        )),
    })
}

/// An lcs trace: its header read and checked, then fixed-size records of its layout,
/// announcing the header's request and object counts.
fn lcs_source(
    p: PathBuf,
    mut reader: Box<dyn std::io::BufRead + Send>,
    options: &IngestOptions,
) -> Result<Box<dyn MessageSource>> {
    let header = lcs::read_header(&p, &mut reader)?;
    Ok(Box::new(
        binary::BinarySource::with_layout(
            p,
            reader,
            options.hasher,
            options.keep_keys,
            header.layout,
            Format::Lcs,
            header.len as u64,
        )
        .announce(header.requests, header.objects),
    ))
}

/// A flow log's text source, its summary naming the flow key.
fn flow_log<P: text::LineParser + 'static>(
    path: PathBuf,
    reader: Box<dyn std::io::BufRead + Send>,
    parser: P,
    options: &IngestOptions,
) -> Box<dyn MessageSource> {
    Box::new(
        text::TextSource::new(path, reader, parser, options.hasher, options.keep_keys)
            .with_key(Some(options.key.describe())),
    )
}

/// Magic numbers of compression formats, to name them where the data is not a trace.
/// zstd and gzip are decompressed when the input is opened ([`input::open`]): their
/// magic seen after that is a compression inside another (e.g. `.gz.zst`).
const COMPRESSIONS: [(&[u8], &str, &str); 5] = [
    (&[0x1F, 0x8B], "gzip", "gzip -dc"),
    (&[0xFD, b'7', b'z', b'X', b'Z', 0x00], "xz", "xz -dc"),
    (b"BZh", "bzip2", "bzip2 -dc"),
    (&[0x04, 0x22, 0x4D, 0x18], "lz4", "lz4 -dc"),
    (&[0x28, 0xB5, 0x2F, 0xFD], "zstd", "zstd -dc"),
];

/// What to tell the user when `head` (the input's first bytes, after the compression
/// `outer` rbf removed) starts with a compression's magic number: which one, and what
/// to do about it. None when it does not.
fn compression_hint(head: &[u8], outer: Option<&str>) -> Option<String> {
    let (_, name, tool) = COMPRESSIONS.iter().find(|(m, _, _)| head.starts_with(m))?;
    Some(match outer {
        Some(outer) => format!(
            "{name}-compressed data inside {outer} compression (nested compression): rbf removes one layer of zstd or gzip; decompress both (`{outer} -dc FILE | {tool} | rbf ... -`)"
        ),
        None => format!(
            "{name}-compressed, which rbf does not decompress (it reads zstd and gzip): decompress it first (`{tool} FILE | rbf ... -`, or `{tool} FILE > FILE2`)"
        ),
    })
}

/// Refuses to read binary data as a text format (`--format jedi` on a compressed file
/// would otherwise turn its bytes into thousands of malformed "lines"): a head whose
/// bytes are more than a quarter control characters or invalid UTF-8 is binary, where
/// a text trace with a few damaged bytes is still read (and its bad lines counted).
fn refuse_binary(path: &Path, head: &[u8], format: Format, outer: Option<&str>) -> Result<()> {
    if head.len() < 16 {
        return Ok(());
    }
    let mut odd = 0usize;
    for chunk in head.utf8_chunks() {
        odd += chunk.invalid().len();
        odd += chunk
            .valid()
            .bytes()
            .filter(|&b| (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r')) || b == 0x7F)
            .count();
    }
    if odd * 4 <= head.len() {
        return Ok(());
    }
    let hint = compression_hint(head, outer).unwrap_or_else(|| {
        "compressed or binary data; rbf decompresses zstd and gzip by itself, other compressed files must be decompressed first".to_string()
    });
    Err(Error::Format {
        path: path.to_path_buf(),
        offset: 0,
        message: format!(
            "binary data, not a {} text trace: {hint}; or pass the --format of a binary trace (pcap, binary, rbfs)",
            format.name()
        ),
    })
}

/// pcap magic numbers (micro/nanosecond, both byte orders) and the pcapng section header.
const PCAP_MAGICS: [[u8; 4]; 5] = [
    [0xD4, 0xC3, 0xB2, 0xA1],
    [0xA1, 0xB2, 0xC3, 0xD4],
    [0x4D, 0x3C, 0xB2, 0xA1],
    [0xA1, 0xB2, 0x3C, 0x4D],
    [0x0A, 0x0D, 0x0D, 0x0A],
];

fn detect(path: &Path, inp: &mut input::Input) -> Result<Format> {
    let head = input::peek(inp, 4096).map_err(|e| Error::io(path, e))?;
    if head.is_empty() {
        return Err(Error::Format {
            path: path.to_path_buf(),
            offset: 0,
            message: "empty input: nothing to detect a format from".into(),
        });
    }
    if head.starts_with(&rbfs::MAGIC) {
        return Ok(Format::Rbfs);
    }
    if PCAP_MAGICS.iter().any(|m| head.starts_with(m)) {
        return Ok(Format::Pcap);
    }
    if head.starts_with(&lcs::MAGIC) {
        return Ok(Format::Lcs);
    }
    let text = head.strip_prefix(&input::UTF8_BOM[..]).unwrap_or(&head);
    let first_line = text.split(|&b| b == b'\n').next().unwrap_or(&[]);
    let first_line = first_line.strip_suffix(b"\r").unwrap_or(first_line);
    if flowlog::zeek::ZeekParser::detect(first_line) {
        return Ok(Format::Zeek);
    }
    if flowlog::nfdump::NfdumpParser::detect(first_line) {
        return Ok(Format::NfdumpCsv);
    }
    if text::looks_like_jedi(first_line) {
        return Ok(Format::Jedi);
    }
    // A JEDI log with a header line: the header is skipped by the reader.
    let mut lines = text.split(|&b| b == b'\n');
    if let (Some(first), Some(second)) = (lines.next(), lines.next()) {
        if text::is_jedi_header(first) && text::looks_like_jedi(second) {
            return Ok(Format::Jedi);
        }
    }
    if lcs::looks_like_oracle_general(&head) {
        return Ok(Format::Binary);
    }
    if let Some(hint) = compression_hint(&head, inp.compression) {
        return Err(Error::Format {
            path: path.to_path_buf(),
            offset: 0,
            message: format!("not a trace: {hint}"),
        });
    }
    Err(Error::Format {
        path: path.to_path_buf(),
        offset: 0,
        message: format!(
            "not a trace this reader recognises (first bytes {:?}); expected a pcap/pcapng capture, an .rbfs stream, a libCacheSim lcs or oracleGeneral trace, a Zeek conn.log (TSV or JSON), `nfdump -o csv` output or a JEDI request log (`timestamp,object_id,object_size`); pass --format to choose one of: pcap, jedi, csv, lines, binary, lcs, rbfs, zeek, nfdump-csv",
            String::from_utf8_lossy(&first_line[..first_line.len().min(48)])
        ),
    })
}
