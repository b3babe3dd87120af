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

use std::fs::{File, Metadata};
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};

/// The name that means stdout (outputs) or stdin (inputs).
pub const STDIO: &str = "-";

/// `-`: stdout for an output, stdin for an input.
pub fn is_stdio(path: &Path) -> bool {
    path.as_os_str() == STDIO
}

/// A file's identity: the same device and inode is the same file, whatever the path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileId {
    dev: u64,
    ino: u64,
}

#[cfg(unix)]
fn file_id(m: &Metadata) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    Some(FileId {
        dev: m.dev(),
        ino: m.ino(),
    })
}

#[cfg(not(unix))]
fn file_id(_: &Metadata) -> Option<FileId> {
    None
}

/// The identity of what `path` names (symlinks followed), if it exists.
fn id_of(path: &Path) -> Option<FileId> {
    std::fs::metadata(path).ok().as_ref().and_then(file_id)
}

/// `path` with symlinks resolved as far as they exist: the file a rename must replace.
fn resolved(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The directory a file at `path` lives in ("." for a bare name).
fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Unique temporary names within this process (the pid makes them unique between
/// processes).
fn temp_name(target: &Path, tag: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let name = target
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    parent_dir(target).join(format!(".{name}.rbf-{tag}-{}-{n}", std::process::id()))
}

/// Removes the temporary files and directories that runs killed while writing
/// `target` left beside it (kill -9 gives no chance to clean up): those whose process
/// is gone. Best effort; only on Linux, where a process's liveness is visible.
fn remove_stale(target: &Path) {
    #[cfg(target_os = "linux")]
    {
        let Some(name) = target.file_name() else {
            return;
        };
        let prefix = format!(".{}.rbf-", name.to_string_lossy());
        let Ok(entries) = std::fs::read_dir(parent_dir(target)) else {
            return;
        };
        for e in entries.flatten() {
            let file = e.file_name().to_string_lossy().into_owned();
            let Some(rest) = file.strip_prefix(&prefix) else {
                continue;
            };
            // rest = "<tag>-<pid>-<n>"
            let mut parts = rest.split('-');
            let (Some(tag), Some(pid)) = (parts.next(), parts.next()) else {
                continue;
            };
            let known = matches!(tag, "tmp" | "new" | "old" | "probe");
            let Ok(pid) = pid.parse::<u32>() else {
                continue;
            };
            if !known || pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
                continue;
            }
            let p = e.path();
            let _ = if p.is_dir() {
                std::fs::remove_dir_all(&p)
            } else {
                std::fs::remove_file(&p)
            };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = target;
}

/// Whether an existing `target` is something other than a regular file or directory
/// (a device, a FIFO, a socket): those are written in place.
fn is_special(m: &Metadata) -> bool {
    !m.is_file() && !m.is_dir()
}

fn refuse(output: &Path, message: String) -> Error {
    Error::invalid(format!("refusing to write {}: {message}", output.display()))
}

/// Creates and removes a file in `dir`, the only sure test that it can be written.
pub fn check_dir_writable(dir: &Path) -> Result<()> {
    let probe = temp_name(&dir.join("probe"), "probe");
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(Error::Io {
            path: dir.to_path_buf(),
            source: std::io::Error::new(
                e.kind(),
                format!("cannot write output files in this directory: {e}"),
            ),
        }),
    }
}

/// Checks, before any work, that every output file can be written and none of them
/// is an input (or another output). `-` (stdout or stdin) is skipped.
pub fn check_outputs(outputs: &[&Path], inputs: &[&Path]) -> Result<()> {
    let input_ids: Vec<(&Path, FileId)> = inputs
        .iter()
        .filter(|p| !is_stdio(p))
        .filter_map(|p| id_of(p).map(|id| (*p, id)))
        .collect();
    if outputs.iter().filter(|p| is_stdio(p)).count() > 1 {
        return Err(Error::invalid(
            "only one output can go to stdout (`-`); give the others file names",
        ));
    }
    let mut seen: Vec<(&Path, FileId)> = Vec::new();
    for &out in outputs.iter().filter(|p| !is_stdio(p)) {
        if let Ok(m) = std::fs::metadata(out) {
            if m.is_dir() {
                return Err(refuse(out, "it is a directory, not a file".into()));
            }
            if let Some(id) = file_id(&m) {
                if let Some((input, _)) = input_ids.iter().find(|(_, i)| *i == id) {
                    return Err(refuse(
                        out,
                        format!(
                            "it is the input {} (the same file); choose another output name",
                            input.display()
                        ),
                    ));
                }
                if let Some((other, _)) = seen.iter().find(|(_, i)| *i == id) {
                    return Err(refuse(
                        out,
                        format!("it is also the output {}", other.display()),
                    ));
                }
                seen.push((out, id));
            }
            if is_special(&m) {
                continue;
            }
            crate::progress::note(&format!(
                "{} exists; it will be replaced once the new one is complete",
                out.display()
            ));
        }
        let dir = parent_dir(&resolved(out));
        if !dir.is_dir() {
            return Err(Error::Io {
                path: out.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("the directory {} does not exist", dir.display()),
                ),
            });
        }
        check_dir_writable(&dir)?;
    }
    Ok(())
}

/// Refuses an output directory that is an input or holds one (its contents are
/// replaced as a whole), and checks that its parent can be written.
pub fn check_output_dir(dir: &Path, inputs: &[&Path]) -> Result<()> {
    if let Ok(m) = std::fs::metadata(dir) {
        if !m.is_dir() {
            return Err(refuse(dir, "it exists and is not a directory".into()));
        }
        let dir_id = file_id(&m);
        for input in inputs.iter().filter(|p| !is_stdio(p)) {
            let inside = resolved(input)
                .ancestors()
                .any(|a| dir_id.is_some() && id_of(a) == dir_id);
            if inside {
                return Err(refuse(
                    dir,
                    format!(
                        "the input {} is in it, and an output directory is replaced as a whole",
                        input.display()
                    ),
                ));
            }
        }
    }
    let parent = parent_dir(&resolved(dir));
    if !parent.is_dir() {
        return Err(Error::Io {
            path: dir.to_path_buf(),
            source: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("the directory {} does not exist", parent.display()),
            ),
        });
    }
    check_dir_writable(&parent)
}

enum Sink {
    Stdout(BufWriter<std::io::Stdout>),
    /// A temporary file renamed over `target` on commit.
    Temp {
        file: BufWriter<File>,
        temp: PathBuf,
        target: PathBuf,
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
                    let file = std::fs::OpenOptions::new()
                        .write(true)
                        .create_new(true)
                        .open(&temp)
                        .map_err(|e| Error::io(path, e))?;
                    // A replaced file keeps its permissions, as with an in-place edit.
                    if let Ok(m) = existing {
                        let _ = file.set_permissions(m.permissions());
                    }
                    Sink::Temp {
                        file: BufWriter::with_capacity(1 << 16, file),
                        temp,
                        target,
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

    /// Flushes, fsyncs and renames the file into place (and fsyncs its directory, so
    /// the rename survives a crash).
    pub fn commit(mut self) -> Result<()> {
        let name = self.name.clone();
        let io = |e| Error::io(&name, e);
        match self.sink.take() {
            Some(Sink::Stdout(mut out)) => out.flush().map_err(io),
            Some(Sink::InPlace(mut out)) => out.flush().map_err(io),
            Some(Sink::Temp { file, temp, target }) => {
                let done = file
                    .into_inner()
                    .map_err(|e| e.into_error())
                    .and_then(|f| f.sync_all())
                    .and_then(|()| std::fs::rename(&temp, &target));
                if let Err(e) = done {
                    let _ = std::fs::remove_file(&temp);
                    return Err(io(e));
                }
                sync_dir(&parent_dir(&target));
                Ok(())
            }
            None => Ok(()),
        }
    }
}

/// Makes a rename in `dir` durable; best effort (some file systems refuse).
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
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
        if let Some(Sink::Temp { temp, .. }) = self.sink.take() {
            let _ = std::fs::remove_file(&temp);
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

/// A fresh, empty temporary directory next to `target` (for [`replace_dir`]).
pub fn temp_dir_for(target: &Path, tag: &str) -> Result<PathBuf> {
    remove_stale(&resolved(target));
    let dir = temp_name(&resolved(target), tag);
    std::fs::create_dir(&dir).map_err(|e| Error::io(&dir, e))?;
    Ok(dir)
}

/// Puts the complete directory `new` in the place of `target` (created or replaced)
/// and removes what was there. Where the file system can exchange two names
/// atomically (Linux `renameat2`), a reader sees the old directory or the new one,
/// never a mix; elsewhere the old one is moved aside first.
pub fn replace_dir(new: &Path, target: &Path) -> Result<()> {
    let target = resolved(target);
    sync_tree(new);
    if !target.exists() {
        std::fs::rename(new, &target).map_err(|e| Error::io(&target, e))?;
        sync_dir(&parent_dir(&target));
        return Ok(());
    }
    if exchange(new, &target).is_ok() {
        // `new` now names the old directory.
        sync_dir(&parent_dir(&target));
        std::fs::remove_dir_all(new).map_err(|e| Error::io(new, e))?;
        return Ok(());
    }
    let old = temp_name(&target, "old");
    std::fs::rename(&target, &old).map_err(|e| Error::io(&target, e))?;
    if let Err(e) = std::fs::rename(new, &target) {
        // Put the old outputs back rather than leave nothing.
        let _ = std::fs::rename(&old, &target);
        return Err(Error::io(&target, e));
    }
    sync_dir(&parent_dir(&target));
    std::fs::remove_dir_all(&old).map_err(|e| Error::io(&old, e))
}

/// fsyncs every file in `dir` (one level of subdirectories deep) and the directories.
fn sync_tree(dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                sync_tree(&p);
            } else if let Ok(f) = File::open(&p) {
                let _ = f.sync_all();
            }
        }
    }
    sync_dir(dir);
}

#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let ca = CString::new(a.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
    let cb = CString::new(b.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
    // SAFETY: two valid NUL-terminated paths; renameat2 only reads them.
    let r = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            ca.as_ptr(),
            libc::AT_FDCWD,
            cb.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> std::io::Result<()> {
    Err(std::io::Error::other("no atomic exchange on this system"))
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
