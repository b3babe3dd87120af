//! Opening inputs: plain files, standard input (`-`) and zstd- or gzip-compressed data
//! (told apart by magic number, whatever the file is called).

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::compressed::{self, DamageSlot, ZstdReader};
use super::gzip::{GzipReader, GZIP_MAGIC};
use super::progress::ProgressReader;
use super::source::{is_stdin, label};
use rbf_foundations::error::{Error, Result};

/// The UTF-8 byte order mark some editors put at the start of text files.
pub const UTF8_BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// An opened input, decompressed if it was zstd or gzip, with its first bytes
/// available for format detection.
pub struct Input {
    pub reader: Box<dyn BufRead + Send>,
    /// `Some` for a compressed input: where the decompressor records damage.
    pub damage: Option<DamageSlot>,
    /// The compression removed on the way in (`zstd`, `gzip`), to name it when what
    /// lies inside is compressed again.
    pub compression: Option<&'static str>,
}

impl Input {
    pub fn compressed(&self) -> bool {
        self.damage.is_some()
    }
}

/// Opens `path` (`-`: standard input), transparently decompressing zstd and gzip.
pub fn open(path: &Path) -> Result<Input> {
    open_with_progress(path, false)
}

/// [`open`], with a progress line on stderr for large files when `progress` is set.
pub fn open_with_progress(path: &Path, progress: bool) -> Result<Input> {
    // Opening a FIFO blocks until a writer opens it: its display starts first, so that
    // the wait shows as waiting, as standard input's does.
    let fifo =
        !is_stdin(path) && std::fs::metadata(path).is_ok_and(|m| read_once_kind(&m) == Some(FIFO));
    let waiting = if progress && fifo {
        ProgressReader::<File>::waiting(&display_name(path))
    } else {
        None
    };
    let (raw, total): (Box<dyn Read + Send>, Option<u64>) = if is_stdin(path) {
        (Box::new(std::io::stdin()), None)
    } else {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        if let Some(display) = waiting {
            return wrap_decoders(path, Box::new(ProgressReader::with_display(file, display)));
        }
        let meta = file.metadata().ok();
        if meta.as_ref().is_some_and(|m| m.is_dir()) {
            return Err(Error::Format {
                path: path.to_path_buf(),
                offset: 0,
                message: "is a directory, not a trace file".into(),
            });
        }
        // A regular file's length is known; a FIFO's or a device's is not. A regular
        // file's content is hashed on the way ([`super::digest`]).
        let total = meta.filter(|m| m.is_file()).map(|m| m.len());
        let raw: Box<dyn Read + Send> = match total {
            Some(_) => Box::new(super::digest::Hashing::new(file, path)),
            None => Box::new(file),
        };
        (raw, total)
    };
    let raw: Box<dyn Read + Send> = if progress {
        match ProgressReader::wrap(raw, display_name(path), total) {
            Ok(p) => Box::new(p),
            Err(r) => r,
        }
    } else {
        raw
    };
    wrap_decoders(path, raw)
}

/// How the progress display names an input: `<stdin>` or the file's name.
fn display_name(path: &Path) -> String {
    if is_stdin(path) {
        label(path)
    } else {
        path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    }
}

/// The raw input, with a zstd or gzip decoder on it when its magic number says so.
fn wrap_decoders(path: &Path, raw: Box<dyn Read + Send>) -> Result<Input> {
    let mut raw = BufReader::with_capacity(1 << 20, raw);
    let head = raw.fill_buf().map_err(|e| Error::io(path, e))?;
    if compressed::is_zstd(head) {
        compressed::check_window(head).map_err(|e| match e {
            Error::Resource(m) => Error::Resource(format!("{}: {m}", label(path))),
            other => other,
        })?;
        let slot = DamageSlot::default();
        let decoder = ZstdReader::new(raw, slot.clone()).map_err(|e| Error::io(path, e))?;
        Ok(Input {
            reader: Box::new(BufReader::with_capacity(1 << 20, decoder)),
            damage: Some(slot),
            compression: Some("zstd"),
        })
    } else if head.starts_with(&GZIP_MAGIC) {
        let slot = DamageSlot::default();
        let decoder = GzipReader::new(raw, slot.clone());
        Ok(Input {
            reader: Box::new(BufReader::with_capacity(1 << 20, decoder)),
            damage: Some(slot),
            compression: Some("gzip"),
        })
    } else {
        Ok(Input {
            reader: Box::new(raw),
            damage: None,
            compression: None,
        })
    }
}

/// [`read_once_kind`] of a FIFO.
pub const FIFO: &str = "a FIFO (named pipe)";

/// What a file that cannot be read twice is ([`FIFO`], "a socket", "a character
/// device"), or None for one that can (a regular file, a block device). Such a file
/// gives its data once: it cannot be opened to check its format and then read, or be
/// read once per replay.
pub fn read_once_kind(m: &std::fs::Metadata) -> Option<&'static str> {
    if m.is_file() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = m.file_type();
        if t.is_block_device() {
            return None;
        }
        if t.is_fifo() {
            return Some(FIFO);
        }
        if t.is_socket() {
            return Some("a socket");
        }
        if t.is_char_device() {
            return Some("a character device");
        }
    }
    Some("not a regular file")
}

/// Up to `n` leading bytes of the (decompressed) input without consuming them.
pub fn peek(input: &mut Input, n: usize) -> std::io::Result<Vec<u8>> {
    // fill_buf returns at least some bytes unless at EOF; the buffer is 1 MiB so one
    // call covers any magic number or first line we look at.
    let head = input.reader.fill_buf()?;
    Ok(head[..head.len().min(n)].to_vec())
}

/// Skips a UTF-8 byte order mark at the start of a text input; true if there was one.
pub fn skip_bom(input: &mut Input) -> std::io::Result<bool> {
    let bom = input.reader.fill_buf()?.starts_with(&UTF8_BOM);
    if bom {
        input.reader.consume(UTF8_BOM.len());
    }
    Ok(bom)
}

/// Reads a whole (possibly compressed) file into memory; for small inputs and tests.
pub fn read_all(path: &Path) -> Result<Vec<u8>> {
    let mut input = open(path)?;
    let mut v = Vec::new();
    input
        .reader
        .read_to_end(&mut v)
        .map_err(|e| Error::io(path, e))?;
    Ok(v)
}

/// Reads a whole text file (configs, workloads, results) without a leading byte order
/// mark. What is read is checked as it comes: a file (or a device such as /dev/zero, or
/// a FIFO) that would not fit in memory beside what is parsed from it is refused with
/// its size, and binary data (a NUL byte) is refused at once, not read to the end.
pub fn read_text(path: &Path) -> Result<String> {
    // Opening a FIFO blocks until a writer opens it: say so first, as a trace does.
    if std::fs::metadata(path).is_ok_and(|m| read_once_kind(&m) == Some(FIFO)) {
        rbf_foundations::console::note(&format!(
            "reading {}: {FIFO}, waiting for data",
            display_name(path)
        ));
    }
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    // The text and what is parsed from it are in memory together: a third of what is
    // available is the most a text input may take.
    let limit = rbf_foundations::resources::available_memory().map_or(u64::MAX, |a| a / 3);
    let declared = file.metadata().map_or(0, |m| m.len());
    if declared > limit {
        return Err(too_big(path, declared as f64, limit));
    }
    let mut bytes = Vec::with_capacity(declared as usize);
    let mut reader = BufReader::with_capacity(1 << 16, file);
    loop {
        let chunk = match reader.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io(path, e)),
        };
        if chunk.is_empty() {
            break;
        }
        if let Some(at) = memchr::memchr(0, chunk) {
            return Err(Error::Format {
                path: path.to_path_buf(),
                offset: (bytes.len() + at) as u64,
                message: "a NUL byte: binary data, not a text file".into(),
            });
        }
        if (bytes.len() + chunk.len()) as u64 > limit {
            return Err(too_big(path, (bytes.len() + chunk.len()) as f64, limit));
        }
        bytes.extend_from_slice(chunk);
        let n = chunk.len();
        reader.consume(n);
    }
    let text = String::from_utf8(bytes).map_err(|e| Error::Format {
        path: path.to_path_buf(),
        offset: e.utf8_error().valid_up_to() as u64,
        message: "not UTF-8 text".into(),
    })?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(t) => t.to_string(),
        None => text,
    })
}

fn too_big(path: &Path, at_least: f64, limit: u64) -> Error {
    Error::Resource(format!(
        "{}: a text input of at least {} is more than this machine can read and parse ({} available for it)",
        path.display(),
        rbf_foundations::resources::bytes_text(at_least),
        rbf_foundations::resources::bytes_text(limit as f64)
    ))
}
