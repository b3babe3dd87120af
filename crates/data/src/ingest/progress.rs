//! Progress of reading a long input: bytes of the file read so far, on the shared
//! [`rbf_foundations::progress::Progress`] display (bar on a terminal, periodic lines otherwise,
//! nothing with `--quiet` or for inputs read in under two seconds). An input of unknown
//! length (standard input, a FIFO, a device) shows the bytes read and their rate, and
//! keeps showing them while no data comes, so a slow or stalled pipe is not silent.

use std::io::Read;
use std::sync::Arc;

use rbf_foundations::progress::Progress;

/// Wraps the raw (possibly compressed) file and reports how much of it was read.
///
/// For an input of known length the display starts at the second read: the first is
/// the format detection when the trace is opened, which may come long before reading
/// proper (the consumer prepares, the decoding thread starts at the first request for
/// a message), and the pace that predicts how long reading takes is measured from
/// there. An input of unknown length shows its heartbeat at once: a pipe that stalls
/// before its first byte is shown waiting.
pub struct ProgressReader<R> {
    inner: R,
    progress: Option<Arc<Progress>>,
    /// The label and length of a display not started yet.
    pending: Option<(String, f64)>,
    /// Bytes of the first read, counted when the display starts.
    first: Option<u64>,
}

impl<R: Read> ProgressReader<R> {
    /// `Err(inner)` when no progress is shown (`--quiet`). `total` is the input's
    /// length in bytes, None when it is not known.
    pub fn wrap(inner: R, label: String, total: Option<u64>) -> Result<Self, R> {
        if rbf_foundations::progress::is_quiet() {
            return Err(inner);
        }
        let label = format!("reading {label}");
        let (progress, pending) = match total {
            Some(t) if t > 0 => (None, Some((label, t as f64))),
            _ => {
                let p = Arc::new(Progress::open_ended(label, "bytes"));
                Progress::heartbeat(&p);
                (Some(p), None)
            }
        };
        Ok(ProgressReader {
            inner,
            progress,
            pending,
            first: None,
        })
    }

    /// The display of an input of unknown length, started before the input is opened:
    /// opening a FIFO blocks until a writer opens it, and that wait must not be silent
    /// either (`reading NAME: waiting for data`). None with `--quiet`.
    pub fn waiting(label: &str) -> Option<Arc<Progress>> {
        if rbf_foundations::progress::is_quiet() {
            return None;
        }
        let p = Arc::new(Progress::open_ended(format!("reading {label}"), "bytes"));
        Progress::heartbeat(&p);
        Some(p)
    }

    /// Wraps `inner` with a display from [`ProgressReader::waiting`].
    pub fn with_display(inner: R, progress: Arc<Progress>) -> Self {
        ProgressReader {
            inner,
            progress: Some(progress),
            pending: None,
            first: None,
        }
    }
}

impl<R: Read> Read for ProgressReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && !buf.is_empty() {
            // The end: the display is cleared and the heartbeat stops.
            if let Some(p) = &self.progress {
                p.finish();
            }
            return Ok(n);
        }
        match (&self.progress, self.first) {
            (Some(p), _) => p.add(n as f64),
            (None, None) => self.first = Some(n as u64),
            (None, Some(first)) => {
                if let Some((label, total)) = self.pending.take() {
                    let p = Arc::new(Progress::new(label, total, "bytes"));
                    p.add((first + n as u64) as f64);
                    self.progress = Some(p);
                }
            }
        }
        Ok(n)
    }
}
