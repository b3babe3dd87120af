//! Opening inputs: plain files and zstd-compressed files, told apart by magic number.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::progress::ProgressReader;
use crate::error::{Error, Result};

pub const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// An opened input, decompressed if it was zstd, with its first bytes available for
/// format detection.
pub struct Input {
    pub reader: Box<dyn BufRead + Send>,
    pub compressed: bool,
}

/// Opens `path`, transparently decompressing zstd (detected by magic number, whatever
/// the file is called).
pub fn open(path: &Path) -> Result<Input> {
    open_with_progress(path, false)
}

/// [`open`], with a progress line on stderr for large files when `progress` is set.
pub fn open_with_progress(path: &Path, progress: bool) -> Result<Input> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let file: Box<dyn Read + Send> = if progress {
        let total = file.metadata().map(|m| m.len()).unwrap_or(0);
        let label = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        match ProgressReader::wrap(file, label, total) {
            Ok(p) => Box::new(p),
            Err(f) => Box::new(f),
        }
    } else {
        Box::new(file)
    };
    let mut raw = BufReader::with_capacity(1 << 20, file);
    let head = raw.fill_buf().map_err(|e| Error::io(path, e))?;
    if head.starts_with(&ZSTD_MAGIC) {
        let decoder =
            zstd::stream::read::Decoder::with_buffer(raw).map_err(|e| Error::io(path, e))?;
        Ok(Input {
            reader: Box::new(BufReader::with_capacity(1 << 20, decoder)),
            compressed: true,
        })
    } else {
        Ok(Input {
            reader: Box::new(raw),
            compressed: false,
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
