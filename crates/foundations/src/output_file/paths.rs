//! Where files are: identities (device and inode), resolved targets, and the hidden
//! temporary names writers use beside their targets (and clean up after killed runs).

use std::fs::{File, Metadata};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A file's identity: the same device and inode is the same file, whatever the path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct FileId {
    dev: u64,
    ino: u64,
}

#[cfg(unix)]
pub(super) fn file_id(m: &Metadata) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    Some(FileId {
        dev: m.dev(),
        ino: m.ino(),
    })
}

#[cfg(not(unix))]
pub(super) fn file_id(_: &Metadata) -> Option<FileId> {
    None
}

/// The identity of what `path` names (symlinks followed), if it exists.
pub(super) fn id_of(path: &Path) -> Option<FileId> {
    std::fs::metadata(path).ok().as_ref().and_then(file_id)
}

/// Whether `a` and `b` are one file: the same inode where both exist (hard links
/// too), else the same resolved path (a symbolic link to a file not written yet).
pub fn same_file(a: &Path, b: &Path) -> bool {
    matches!((id_of(a), id_of(b)), (Some(x), Some(y)) if x == y) || resolved(a) == resolved(b)
}

/// `path` with symlinks resolved: the file a rename must replace ([`resolved_path`]).
pub(super) fn resolved(path: &Path) -> PathBuf {
    resolved_path(path)
}

/// `path` as the file system resolves it, also where it does not exist yet: the
/// canonical path when it exists (symlinks followed), else its canonical parent
/// joined with its name. Two spellings of one place (`out/x`, `out/../out/x`, a
/// symlink to it) give the same result.
pub fn resolved_path(path: &Path) -> PathBuf {
    let mut path = path.to_path_buf();
    // A symlink to a directory not created yet: follow it by hand (as the kernel
    // would), at most as many links as Linux follows.
    for _ in 0..40 {
        if let Ok(p) = std::fs::canonicalize(&path) {
            return p;
        }
        match std::fs::read_link(&path) {
            Ok(target) => path = parent_dir(&path).join(target),
            Err(_) => break,
        }
    }
    match (path.file_name(), std::fs::canonicalize(parent_dir(&path))) {
        (Some(name), Ok(parent)) => parent.join(name),
        _ => path,
    }
}

/// The directory a file at `path` lives in ("." for a bare name).
pub(super) fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Unique temporary names within this process (the pid makes them unique between
/// processes).
pub(super) fn temp_name(target: &Path, tag: &str) -> PathBuf {
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
pub(super) fn remove_stale(target: &Path) {
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
pub(super) fn is_special(m: &Metadata) -> bool {
    !m.is_file() && !m.is_dir()
}

/// Makes a rename in `dir` durable; best effort (some file systems refuse).
pub(super) fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}
