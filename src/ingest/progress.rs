//! Progress of reading a long input: bytes of the file read so far, on the shared
//! [`crate::progress::Progress`] display (bar on a terminal, periodic lines otherwise,
//! nothing with `--quiet` or for inputs read in under two seconds).

use std::io::Read;

use crate::progress::Progress;

/// Wraps the raw (possibly compressed) file and reports how much of it was read.
///
/// The display starts at the second read: the first is the format detection when the
/// trace is opened, which may come long before reading proper (the consumer prepares,
/// the decoding thread starts at the first request for a message), and the pace that
/// predicts how long reading takes is measured from there.
pub struct ProgressReader<R> {
    inner: R,
    label: String,
    total: u64,
    progress: Option<Progress>,
    /// Bytes of the first read, counted when the display starts.
    first: Option<u64>,
}

impl<R: Read> ProgressReader<R> {
    /// `Err(inner)` when no progress can be shown (size unknown, or `--quiet`).
    pub fn wrap(inner: R, label: String, total: u64) -> Result<Self, R> {
        if total == 0 || crate::progress::is_quiet() {
            return Err(inner);
        }
        Ok(ProgressReader {
            inner,
            label,
            total,
            progress: None,
            first: None,
        })
    }
}

impl<R: Read> Read for ProgressReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        match (&self.progress, self.first) {
            (Some(p), _) => p.add(n as f64),
            (None, None) => self.first = Some(n as u64),
            (None, Some(first)) => {
                let p = Progress::new(
                    format!("reading {}", self.label),
                    self.total as f64,
                    "bytes",
                );
                p.add((first + n as u64) as f64);
                self.progress = Some(p);
            }
        }
        Ok(n)
    }
}
