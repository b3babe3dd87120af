//! The keys of a trace kept on disk between the passes of `rbf size TRACE`: the first
//! pass decodes the trace (a capture series can take most of a pass) and writes its
//! keys here, eight bytes an arrival; every later pass reads them back. So every pass
//! sees the same arrivals (a trace rewritten meanwhile cannot mix two traces), standard
//! input and FIFOs can be sized, and memory does not grow with the trace's length.

use std::fs::{File, OpenOptions};
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::PathBuf;

use rbf_foundations::error::{Error, Result};

/// Arrivals per batch read back (as the trace readers hand them out).
const BATCH: usize = 8192;

/// A temporary file of keys, removed when dropped.
pub struct Spool {
    path: PathBuf,
    writer: Option<BufWriter<File>>,
    keys: u64,
}

impl Spool {
    /// A new, empty spool in the system's temporary directory (`TMPDIR`).
    pub fn create() -> Result<Spool> {
        let dir = std::env::temp_dir();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path = dir.join(format!("rbf-size-{}-{nanos}.keys", std::process::id()));
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        Ok(Spool {
            path,
            writer: Some(BufWriter::with_capacity(1 << 20, file)),
            keys: 0,
        })
    }

    /// Appends `keys` (the first pass).
    pub fn write(&mut self, keys: &[u64]) -> Result<()> {
        let Some(w) = self.writer.as_mut() else {
            return Err(Error::Internal("the key spool is already closed"));
        };
        for k in keys {
            w.write_all(&k.to_le_bytes())
                .map_err(|e| Error::io(&self.path, e))?;
        }
        self.keys += keys.len() as u64;
        Ok(())
    }

    /// Ends the first pass: everything written reaches the file.
    pub fn close(&mut self) -> Result<()> {
        if let Some(mut w) = self.writer.take() {
            w.flush().map_err(|e| Error::io(&self.path, e))?;
        }
        Ok(())
    }

    /// Keys spooled.
    pub fn len(&self) -> u64 {
        self.keys
    }

    /// Whether no key was spooled.
    pub fn is_empty(&self) -> bool {
        self.keys == 0
    }

    /// Bytes on disk.
    pub fn bytes(&self) -> u64 {
        self.keys * 8
    }

    /// Hands the spooled keys to `each` in batches, in order; Ctrl-C stops it between
    /// batches. A spool shorter than written (the file cut meanwhile) is an error.
    pub fn for_each_batch(&self, mut each: impl FnMut(&[u64])) -> Result<()> {
        let file = File::open(&self.path).map_err(|e| Error::io(&self.path, e))?;
        let mut r = BufReader::with_capacity(1 << 20, file);
        let mut bytes = vec![0u8; BATCH * 8];
        let mut keys = Vec::with_capacity(BATCH);
        let mut left = self.keys;
        while left > 0 {
            let n = usize::try_from(left.min(BATCH as u64)).unwrap_or(BATCH);
            r.read_exact(&mut bytes[..n * 8])
                .map_err(|e| Error::io(&self.path, e))?;
            keys.clear();
            keys.extend(bytes[..n * 8].chunks_exact(8).map(|c| {
                let mut b = [0u8; 8];
                b.copy_from_slice(c);
                u64::from_le_bytes(b)
            }));
            each(&keys);
            left -= n as u64;
            rbf_foundations::progress::check_interrupt()?;
        }
        Ok(())
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        self.writer = None;
        // Our own temporary file: nothing to report if it is already gone.
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_come_back_in_order_across_batches_and_the_file_goes() -> Result<()> {
        let mut s = Spool::create()?;
        let keys: Vec<u64> = (0..20_000u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        s.write(&keys[..5])?;
        s.write(&keys[5..])?;
        s.close()?;
        assert_eq!(s.len(), 20_000);
        let mut back = Vec::new();
        let mut batches = 0;
        s.for_each_batch(|b| {
            back.extend_from_slice(b);
            batches += 1;
        })?;
        assert_eq!(back, keys);
        assert_eq!(batches, 3);
        let path = s.path.clone();
        assert!(path.exists());
        drop(s);
        assert!(!path.exists());
        Ok(())
    }
}
