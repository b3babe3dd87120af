//! Progress of reading a long input: bytes of the file read so far, on the shared
//! [`crate::progress::Progress`] display (bar on a terminal, periodic lines otherwise,
//! nothing with `--quiet` or for inputs read in under two seconds). An input of unknown
//! length (standard input, a FIFO, a device) shows the bytes read and their rate, and
//! keeps showing them while no data comes, so a slow or stalled pipe is not silent.

use std::io::Read;
use std::sync::Arc;

use crate::progress::Progress;

/// Wraps the raw (possibly compressed) file and reports how much of it was read.
pub struct ProgressReader<R> {
    inner: R,
    progress: Arc<Progress>,
}

impl<R: Read> ProgressReader<R> {
    /// `Err(inner)` when no progress is shown (`--quiet`). `total` is the input's
    /// length in bytes, None when it is not known.
    pub fn wrap(inner: R, label: String, total: Option<u64>) -> Result<Self, R> {
        if crate::progress::is_quiet() {
            return Err(inner);
        }
        let label = format!("reading {label}");
        let progress = match total {
            Some(t) if t > 0 => Arc::new(Progress::new(label, t as f64, "bytes")),
            _ => {
                let p = Arc::new(Progress::open_ended(label, "bytes"));
                Progress::heartbeat(&p);
                p
            }
        };
        Ok(ProgressReader { inner, progress })
    }
}

impl<R: Read> Read for ProgressReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && !buf.is_empty() {
            // The end: the display is cleared and the heartbeat stops.
            self.progress.finish();
        } else {
            self.progress.add(n as f64);
        }
        Ok(n)
    }
}
