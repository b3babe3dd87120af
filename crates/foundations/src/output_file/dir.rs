//! Whole directories of outputs: written under a temporary name, then put in place.

use std::fs::File;
use std::path::{Path, PathBuf};

use super::paths::{parent_dir, remove_stale, resolved, sync_dir, temp_name};
use super::pending;
use crate::error::{Error, Result};

/// A fresh, empty temporary directory next to `target` (for [`replace_dir`]).
/// It is removed if the process is stopped by a signal before [`replace_dir`] or
/// [`discard_dir`].
pub fn temp_dir_for(target: &Path, tag: &str) -> Result<PathBuf> {
    remove_stale(&resolved(target));
    let dir = temp_name(&resolved(target), tag);
    let ticket = pending::register(&dir, Some(target), true);
    if let Err(e) = std::fs::create_dir(&dir) {
        pending::settle(ticket, || ());
        return Err(Error::io(&dir, e));
    }
    Ok(dir)
}

/// Removes a temporary directory of [`temp_dir_for`] that will not be put in place.
pub fn discard_dir(dir: &Path) {
    let remove = || {
        let _ = std::fs::remove_dir_all(dir);
    };
    match pending::ticket_of(dir) {
        Some(t) => pending::settle(t, remove),
        None => remove(),
    }
}

/// Puts the complete directory `new` in the place of `target` (created or replaced)
/// and removes what was there. Where the file system can exchange two names
/// atomically (Linux `renameat2`), a reader sees the old directory or the new one,
/// never a mix; elsewhere the old one is moved aside first.
pub fn replace_dir(new: &Path, target: &Path) -> Result<()> {
    sync_tree(new);
    match pending::ticket_of(new) {
        // Under the registry's lock: a signal cannot remove `new` half-way through.
        Some(t) => pending::settle(t, || put_in_place(new, target)),
        None => put_in_place(new, target),
    }
}

fn put_in_place(new: &Path, target: &Path) -> Result<()> {
    let target = resolved(target);
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
