//! Content digests of input files, taken while they are read: every regular file
//! opened through [`super::input`] is hashed (XXH3-128) as its bytes go by, and a file
//! read to its end leaves its digest here, keyed by its canonical path, for what must
//! know that a file is the one an earlier run or another shard read (`rbf run`'s
//! journal, `rbf merge`'s shards). No second pass: a file the process has not read to
//! its end is hashed only when asked for ([`of_file`]: a resumed run's check of the files
//! its journal's points came from).

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use xxhash_rust::xxh3::Xxh3;

use rbf_foundations::error::{Error, Result};

/// A file's whole content as a digest: its length and XXH3-128, in hex.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Digest {
    pub bytes: u64,
    pub hash: u128,
}

impl Digest {
    pub fn hex(&self) -> String {
        format!("{:032x}", self.hash)
    }
}

/// Digests of the files read to their end by this process (the latest read of each).
fn registry() -> &'static Mutex<HashMap<PathBuf, Digest>> {
    static R: OnceLock<Mutex<HashMap<PathBuf, Digest>>> = OnceLock::new();
    R.get_or_init(Default::default)
}

fn key(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

fn publish(path: &Path, d: Digest) {
    if let Ok(mut r) = registry().lock() {
        r.insert(key(path), d);
    }
}

/// The digest of `path` as the last read of it to its end found it, if this process
/// read it to its end.
pub fn recorded(path: &Path) -> Option<Digest> {
    registry().lock().ok()?.get(&key(path)).cloned()
}

/// The digest of `path`'s content now, read whole (and recorded).
pub fn of_file(path: &Path) -> Result<Digest> {
    let f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut r = Hashing::new(f, path);
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match r.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    Ok(r.digest())
}

/// A reader that hashes what it hands out and, at the end of its input, records the
/// digest of the whole file.
pub struct Hashing<R> {
    inner: R,
    path: PathBuf,
    hasher: Xxh3,
    bytes: u64,
    published: bool,
}

impl<R: Read> Hashing<R> {
    pub fn new(inner: R, path: &Path) -> Self {
        Hashing {
            inner,
            path: path.to_path_buf(),
            hasher: Xxh3::new(),
            bytes: 0,
            published: false,
        }
    }

    fn digest(&self) -> Digest {
        Digest {
            bytes: self.bytes,
            hash: self.hasher.digest128(),
        }
    }
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 {
            if !self.published && !buf.is_empty() {
                self.published = true;
                publish(&self.path, self.digest());
            }
        } else {
            self.hasher.update(&buf[..n]);
            self.bytes += n as u64;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_read_to_its_end_is_recorded_and_a_change_replaces_it() {
        let dir = std::env::temp_dir().join(format!("rbf-digest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a");
        std::fs::write(&p, b"one two three").unwrap();
        let mut half = Hashing::new(std::fs::File::open(&p).unwrap(), &p);
        let mut b = [0u8; 4];
        half.read_exact(&mut b).unwrap();
        assert_eq!(recorded(&p), None, "a partial read records nothing");
        let mut all = Vec::new();
        Hashing::new(std::fs::File::open(&p).unwrap(), &p)
            .read_to_end(&mut all)
            .unwrap();
        let d = recorded(&p).expect("recorded");
        assert_eq!(d.bytes, 13);
        assert_eq!(d.hash, xxhash_rust::xxh3::xxh3_128(b"one two three"));
        assert_eq!(of_file(&p).unwrap(), d);
        std::fs::write(&p, b"one two thrEE").unwrap();
        let mut again = Vec::new();
        Hashing::new(std::fs::File::open(&p).unwrap(), &p)
            .read_to_end(&mut again)
            .unwrap();
        assert_ne!(recorded(&p), Some(d), "the latest read is recorded");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
