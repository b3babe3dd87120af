//! A progress line on stderr for long inputs: bytes of the file read so far, shown
//! only when stderr is a terminal (never in pipes, logs or tests). A dozen lines of
//! our own rather than a progress-bar dependency.

use std::io::{IsTerminal, Read, Write};
use std::time::{Duration, Instant};

/// Redraw at most this often.
const INTERVAL: Duration = Duration::from_millis(250);
/// Inputs smaller than this finish too fast for a progress line to help.
const MIN_BYTES: u64 = 64 << 20;

/// Wraps the raw (possibly compressed) file and reports how much of it was read.
pub struct ProgressReader<R> {
    inner: R,
    label: String,
    total: u64,
    read: u64,
    last: Instant,
    shown: bool,
}

impl<R: Read> ProgressReader<R> {
    /// `None` when no progress should be shown (not a terminal, or a small input).
    pub fn wrap(inner: R, label: String, total: u64) -> Result<Self, R> {
        if total < MIN_BYTES || !std::io::stderr().is_terminal() {
            return Err(inner);
        }
        Ok(ProgressReader {
            inner,
            label,
            total,
            read: 0,
            last: Instant::now(),
            shown: false,
        })
    }

    fn draw(&mut self) {
        let frac = self.read as f64 / self.total.max(1) as f64;
        let width = 30;
        let filled = ((frac * width as f64) as usize).min(width);
        let _ = write!(
            std::io::stderr(),
            "\r{}: [{}{}] {:5.1}% of {:.0} MB",
            self.label,
            "#".repeat(filled),
            " ".repeat(width - filled),
            frac * 100.0,
            self.total as f64 / 1e6
        );
        self.shown = true;
    }
}

impl<R: Read> Read for ProgressReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if self.last.elapsed() >= INTERVAL {
            self.last = Instant::now();
            self.draw();
        }
        Ok(n)
    }
}

impl<R> Drop for ProgressReader<R> {
    fn drop(&mut self) {
        if self.shown {
            // Clear the line so that later output starts clean.
            let _ = write!(
                std::io::stderr(),
                "\r{}\r",
                " ".repeat(self.label.len() + 60)
            );
        }
    }
}
