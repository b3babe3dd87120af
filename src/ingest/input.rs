//! Opening inputs: plain files, standard input (`-`) and zstd- or gzip-compressed data
//! (told apart by magic number, whatever the file is called).

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::compressed::{DamageSlot, ZstdReader};
use super::gzip::{GzipReader, GZIP_MAGIC};
use super::progress::ProgressReader;
use crate::error::{Error, Result};

pub const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// The UTF-8 byte order mark some editors put at the start of text files.
pub const UTF8_BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// The path that means standard input.
pub const STDIN: &str = "-";

/// Whether `path` means standard input.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == STDIN
}

/// How an input is named in summaries and messages.
pub fn label(path: &Path) -> String {
    if is_stdin(path) {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}

/// An opened input, decompressed if it was zstd or gzip, with its first bytes
/// available for format detection.
pub struct Input {
    pub reader: Box<dyn BufRead + Send>,
    /// `Some` for a compressed input: where the decompressor records damage.
    pub damage: Option<DamageSlot>,
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
    let raw: Box<dyn Read + Send> = if is_stdin(path) {
        Box::new(std::io::stdin())
    } else {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        if file.metadata().is_ok_and(|m| m.is_dir()) {
            return Err(Error::Format {
                path: path.to_path_buf(),
                offset: 0,
                message: "is a directory, not a trace file".into(),
            });
        }
        if progress {
            let total = file.metadata().map(|m| m.len()).unwrap_or(0);
            let name = path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            match ProgressReader::wrap(file, name, total) {
                Ok(p) => Box::new(p),
                Err(f) => Box::new(f),
            }
        } else {
            Box::new(file)
        }
    };
    let mut raw = BufReader::with_capacity(1 << 20, raw);
    let head = raw.fill_buf().map_err(|e| Error::io(path, e))?;
    if head.starts_with(&ZSTD_MAGIC) {
        let slot = DamageSlot::default();
        let decoder = ZstdReader::new(raw, slot.clone()).map_err(|e| Error::io(path, e))?;
        Ok(Input {
            reader: Box::new(BufReader::with_capacity(1 << 20, decoder)),
            damage: Some(slot),
        })
    } else if head.starts_with(&GZIP_MAGIC) {
        let slot = DamageSlot::default();
        let decoder = GzipReader::new(raw, slot.clone());
        Ok(Input {
            reader: Box::new(BufReader::with_capacity(1 << 20, decoder)),
            damage: Some(slot),
        })
    } else {
        Ok(Input {
            reader: Box::new(raw),
            damage: None,
        })
    }
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

/// Reads a whole text file (configs, workloads) without a leading byte order mark.
pub fn read_text(path: &Path) -> Result<String> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(t) => t.to_string(),
        None => text,
    })
}
