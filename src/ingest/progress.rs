//! Progress of reading a long input: bytes of the file read so far, on the shared
//! [`crate::progress::Progress`] display (bar on a terminal, periodic lines otherwise,
//! nothing with `--quiet` or for inputs read in under two seconds).

use std::io::Read;

use crate::progress::Progress;

/// Wraps the raw (possibly compressed) file and reports how much of it was read.
pub struct ProgressReader<R> {
    inner: R,
    progress: Progress,
}

impl<R: Read> ProgressReader<R> {
    /// `Err(inner)` when no progress can be shown (size unknown, or `--quiet`).
    pub fn wrap(inner: R, label: String, total: u64) -> Result<Self, R> {
        if total == 0 || crate::progress::is_quiet() {
            return Err(inner);
        }
        Ok(ProgressReader {
            inner,
            progress: Progress::new(format!("reading {label}"), total as f64, "bytes"),
        })
    }
}

impl<R: Read> Read for ProgressReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.progress.add(n as f64);
        Ok(n)
    }
}
