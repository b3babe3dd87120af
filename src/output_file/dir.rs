//! Whole directories of outputs: written under a temporary name, then put in place.

use std::fs::File;
use std::path::{Path, PathBuf};

use super::paths::{parent_dir, remove_stale, resolved, sync_dir, temp_name};
use crate::error::{Error, Result};

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
