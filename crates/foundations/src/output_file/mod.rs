//! Writing a user's files without ever destroying one.
//!
//! * [`check_outputs`] runs before any work: it refuses an output that is one of the
//!   inputs (same path, a symlink to it or a hard link: device and inode are compared),
//!   and proves that the output's directory can be written by creating (and removing)
//!   a file there, so a bad path fails in a second, not after an hour of replay.
//! * [`OutputFile`] writes to a temporary file in the target's directory and renames it
//!   over the target only in [`OutputFile::commit`], after a flush and an fsync: a
//!   reader sees the old file or the complete new one, never a half-written one, and an
//!   interrupted run leaves the old file untouched (an uncommitted temporary file is
//!   removed when dropped). `-` is stdout; a device such as `/dev/null` is written in
//!   place (renaming over it would replace the device).
//! * [`replace_dir`] puts a complete directory (written under a temporary name) in the
//!   place of an output directory in one atomic exchange where the file system has it.

mod check;
mod dir;
pub mod frame;
mod paths;
pub mod pending;

pub use check::{check_dir_writable, check_output_dir, check_outputs};
pub use dir::{discard_dir, replace_dir, temp_dir_for};
pub use paths::{resolved_path, same_file};

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use check::refuse;
use paths::{is_special, parent_dir, remove_stale, resolved, sync_dir, temp_name};

/// The name that means stdout (outputs) or stdin (inputs).
pub const STDIO: &str = "-";

/// `-`: stdout for an output, stdin for an input.
pub fn is_stdio(path: &Path) -> bool {
    path.as_os_str() == STDIO
}

enum Sink {
    Stdout(BufWriter<std::io::Stdout>),
    /// A temporary file renamed over `target` on commit.
    Temp {
        file: BufWriter<File>,
        temp: PathBuf,
        target: PathBuf,
        ticket: pending::Ticket,
    },
    /// A device or FIFO, written in place.
    InPlace(BufWriter<File>),
}

/// An output being written: see the module documentation.
pub struct OutputFile {
    /// The name the user gave (for messages).
    name: PathBuf,
    sink: Option<Sink>,
}

impl OutputFile {
    /// Starts writing `path` (`-`: stdout). Nothing under the final name changes
    /// until [`OutputFile::commit`].
    pub fn create(path: &Path) -> Result<OutputFile> {
        let sink = if is_stdio(path) {
            if crate::console::stdout_closed() {
                return Err(crate::console::closed_stdout_error());
            }
            Sink::Stdout(BufWriter::with_capacity(1 << 16, std::io::stdout()))
        } else {
            let target = resolved(path);
            match std::fs::metadata(&target) {
                Ok(m) if m.is_dir() => {
                    return Err(refuse(path, "it is a directory, not a file".into()))
                }
                Ok(m) if is_special(&m) => Sink::InPlace(BufWriter::new(
                    std::fs::OpenOptions::new()
                        .write(true)
                        .open(&target)
                        .map_err(|e| Error::io(path, e))?,
                )),
                existing => {
                    remove_stale(&target);
                    let temp = temp_name(&target, "tmp");
                    // Registered before it exists: a signal from here on removes it.
                    let ticket = pending::register(&temp, Some(path), false);
                    let file = match std::fs::OpenOptions::new()
                        .write(true)
                        .create_new(true)
                        .open(&temp)
                    {
                        Ok(f) => f,
                        Err(e) => {
                            pending::settle(ticket, || ());
                            return Err(Error::io(path, e));
                        }
                    };
                    // A replaced file keeps its permissions, as with an in-place edit.
                    if let Ok(m) = existing {
                        let _ = file.set_permissions(m.permissions());
                    }
                    Sink::Temp {
                        file: BufWriter::with_capacity(1 << 16, file),
                        temp,
                        target,
                        ticket,
                    }
                }
            }
        };
        Ok(OutputFile {
            name: path.to_path_buf(),
            sink: Some(sink),
        })
    }

    /// The name the user gave (`-` for stdout).
    pub fn name(&self) -> &Path {
        &self.name
    }

    /// Whether the output can be rewound ([`OutputFile::patch`] works): a regular file.
    pub fn seekable(&self) -> bool {
        matches!(self.sink, Some(Sink::Temp { .. }))
    }

    /// Overwrites `bytes` at `offset` of a seekable output (e.g. a header completed at
    /// the end) and returns to the end; an error for stdout and devices.
    pub fn patch(&mut self, offset: u64, bytes: &[u8]) -> std::io::Result<()> {
        match &mut self.sink {
            Some(Sink::Temp { file, .. }) => {
                let end = file.stream_position()?;
                file.seek(SeekFrom::Start(offset))?;
                file.write_all(bytes)?;
                file.seek(SeekFrom::Start(end))?;
                Ok(())
            }
            _ => Err(std::io::Error::other("this output cannot be rewound")),
        }
    }

    /// Starts the kernel writing what has been written so far to the disk, without
    /// waiting for it (Linux's `sync_file_range`; elsewhere only the flush), so that
    /// the fsync in [`OutputFile::commit`] waits for the last part only: for a 40 MB
    /// `.rbfs` that wait was 15-25 ms at the end of a run of 0.36 s
    /// (docs/history/PERFORMANCE-log.md, packet captures, 2026-11-28 04:20 UTC). A hint:
    /// the bytes do not change, and a writeback error shows in commit's fsync. Only a
    /// temporary file is written back this way.
    pub fn start_writeback(&mut self) -> std::io::Result<()> {
        let Some(Sink::Temp { file, .. }) = &mut self.sink else {
            return Ok(());
        };
        file.flush()?;
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: a plain system call on a descriptor the BufWriter owns and keeps
            // open; it reads no memory of ours.
            unsafe {
                libc::sync_file_range(
                    file.get_ref().as_raw_fd(),
                    0,
                    0,
                    libc::SYNC_FILE_RANGE_WRITE,
                );
            }
        }
        Ok(())
    }

    /// Flushes, fsyncs and renames the file into place (and fsyncs its directory, so
    /// the rename survives a crash). Once the user has asked to stop, a named output is
    /// not put in place: whatever the work produced after the request (a fit of a
    /// stream cut short by Ctrl-C, say) is not the result of the whole input, and the
    /// call ends with [`Error::Interrupted`], the old file untouched.
    pub fn commit(self) -> Result<()> {
        let stopped = crate::stop::interrupted();
        self.commit_unless(stopped)
    }

    fn commit_unless(mut self, stopped: bool) -> Result<()> {
        if stopped && matches!(self.sink, Some(Sink::Temp { .. })) {
            // Dropped: the temporary file is removed.
            return Err(Error::Interrupted);
        }
        let name = self.name.clone();
        let io = |e| Error::io(&name, e);
        match self.sink.take() {
            Some(Sink::Stdout(mut out)) => out.flush().map_err(io),
            Some(Sink::InPlace(mut out)) => out.flush().map_err(io),
            Some(Sink::Temp {
                file,
                temp,
                target,
                ticket,
            }) => {
                let synced = file
                    .into_inner()
                    .map_err(|e| e.into_error())
                    .and_then(|f| f.sync_all());
                // Renamed (or removed) under the registry's lock: a signal cannot
                // remove the file half-way through being put in place.
                let done = pending::settle(ticket, || {
                    let done = synced.and_then(|()| std::fs::rename(&temp, &target));
                    if done.is_err() {
                        let _ = std::fs::remove_file(&temp);
                    }
                    done
                });
                done.map_err(io)?;
                sync_dir(&parent_dir(&target));
                Ok(())
            }
            None => Ok(()),
        }
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.sink {
            Some(Sink::Stdout(w)) => w.write(buf),
            Some(Sink::Temp { file, .. }) => file.write(buf),
            Some(Sink::InPlace(w)) => w.write(buf),
            None => Err(std::io::Error::other("output already committed")),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        match &mut self.sink {
            Some(Sink::Stdout(w)) => w.write_all(buf),
            Some(Sink::Temp { file, .. }) => file.write_all(buf),
            Some(Sink::InPlace(w)) => w.write_all(buf),
            None => Err(std::io::Error::other("output already committed")),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.sink {
            Some(Sink::Stdout(w)) => w.flush(),
            Some(Sink::Temp { file, .. }) => file.flush(),
            Some(Sink::InPlace(w)) => w.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        // Not committed: the work failed or was interrupted; the old file stays.
        if let Some(Sink::Temp { temp, ticket, .. }) = self.sink.take() {
            pending::settle(ticket, || {
                let _ = std::fs::remove_file(&temp);
            });
        }
    }
}

/// Writes `bytes` to `path` through an [`OutputFile`].
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut out = OutputFile::create(path)?;
    out.write_all(bytes).map_err(|e| Error::io(path, e))?;
    out.commit()
}

/// Writes to `path` with `f` through an [`OutputFile`]; an I/O error names the path.
pub fn write_with(
    path: &Path,
    f: impl FnOnce(&mut OutputFile) -> std::io::Result<()>,
) -> Result<()> {
    let mut out = OutputFile::create(path)?;
    f(&mut out).map_err(|e| Error::io(path, e))?;
    out.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rbf-out-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn uncommitted_output_leaves_the_old_file() {
        let d = scratch("keep");
        let p = d.join("a.txt");
        std::fs::write(&p, "old").unwrap();
        {
            let mut o = OutputFile::create(&p).unwrap();
            o.write_all(b"new, half").unwrap();
            // dropped without commit: interrupted work
        }
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
        assert_eq!(
            std::fs::read_dir(&d).unwrap().count(),
            1,
            "no temp file left"
        );
        write_file(&p, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn no_named_output_is_committed_after_a_stop_request() {
        let d = scratch("stopped");
        let p = d.join("a.txt");
        std::fs::write(&p, "old").unwrap();
        let mut o = OutputFile::create(&p).unwrap();
        o.write_all(b"a result of part of the input").unwrap();
        // The flag itself is process-wide (other tests poll it): its value is passed in.
        let e = o.commit_unless(true).unwrap_err();
        assert!(matches!(e, Error::Interrupted), "{e}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
        assert_eq!(
            std::fs::read_dir(&d).unwrap().count(),
            1,
            "no temp file left"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn refuses_inputs_by_identity() {
        let d = scratch("ident");
        let input = d.join("in.csv");
        std::fs::write(&input, "1\n").unwrap();
        let e = check_outputs(&[&input], &[&input]).unwrap_err().to_string();
        assert!(e.contains("it is the input"), "{e}");
        #[cfg(unix)]
        {
            let link = d.join("link.csv");
            std::os::unix::fs::symlink(&input, &link).unwrap();
            assert!(check_outputs(&[&link], &[&input]).is_err());
            let hard = d.join("hard.csv");
            std::fs::hard_link(&input, &hard).unwrap();
            assert!(check_outputs(&[&hard], &[&input]).is_err());
        }
        let other = d.join("out.rbfs");
        check_outputs(&[&other], &[&input]).unwrap();
        let e = check_outputs(&[&d.join("no/such/dir/x")], &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not exist"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// Writing back part-way changes nothing: not the bytes, not the old file until
    /// the commit, not a patched header; and it is a no-op on a device.
    #[test]
    fn writeback_part_way_keeps_the_bytes() {
        let d = scratch("writeback");
        let p = d.join("s.bin");
        std::fs::write(&p, "old").unwrap();
        let mut o = OutputFile::create(&p).unwrap();
        let block: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        o.write_all(b"0000").unwrap();
        for _ in 0..3 {
            o.write_all(&block).unwrap();
            o.start_writeback().unwrap();
        }
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
        o.patch(0, b"HEAD").unwrap();
        o.write_all(b"!").unwrap();
        o.commit().unwrap();
        let mut want = b"HEAD".to_vec();
        (0..3).for_each(|_| want.extend_from_slice(&block));
        want.push(b'!');
        assert!(std::fs::read(&p).unwrap() == want, "the bytes changed");
        #[cfg(unix)]
        {
            let mut null = OutputFile::create(Path::new("/dev/null")).unwrap();
            null.write_all(&block).unwrap();
            null.start_writeback().unwrap();
            null.commit().unwrap();
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn patch_rewrites_a_header() {
        let d = scratch("patch");
        let p = d.join("s.bin");
        let mut o = OutputFile::create(&p).unwrap();
        o.write_all(b"0000tail").unwrap();
        o.patch(0, b"HEAD").unwrap();
        o.write_all(b"!").unwrap();
        o.commit().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"HEADtail!");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn directory_replaced_whole() {
        let d = scratch("dir");
        let target = d.join("out");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("old.txt"), "old").unwrap();
        let new = temp_dir_for(&target, "new").unwrap();
        std::fs::write(new.join("new.txt"), "new").unwrap();
        replace_dir(&new, &target).unwrap();
        assert!(!target.join("old.txt").exists());
        assert_eq!(
            std::fs::read_to_string(target.join("new.txt")).unwrap(),
            "new"
        );
        assert!(!new.exists());
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        let inside = target.join("new.txt");
        assert!(check_output_dir(&target, &[&inside]).is_err());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
