//! The temporary files and directories being written right now, so that a process
//! stopped by a signal removes them instead of leaving hidden partial outputs behind
//! ([`abandon`], called by [`crate::signals`]), and what it keeps on purpose (a run's
//! journal of finished points) so that it can say so.
//!
//! Putting a temporary in place (a rename or a directory exchange) and removing one
//! happen under the registry's lock ([`settle`]). [`abandon`] takes the lock and never
//! gives it back: once it has started, no output is put in place, and every output is
//! either its complete new version or its old one, never a half-written file.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

struct Entry {
    id: u64,
    temp: PathBuf,
    /// What the temporary becomes when complete (for messages); None for a scratch
    /// file nobody needs to hear about (a writability probe).
    target: Option<PathBuf>,
    dir: bool,
}

struct Registry {
    pending: Vec<Entry>,
    kept: Vec<(u64, String)>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    pending: Vec::new(),
    kept: Vec::new(),
});
static NEXT: AtomicU64 = AtomicU64::new(1);

/// The lock, also after a panic elsewhere (the list stays usable).
fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// A registered temporary: [`settle`] it when it is put in place or removed.
#[derive(Debug)]
pub(crate) struct Ticket(u64);

/// Records a temporary file (or directory, `dir`) that becomes `target` when complete
/// (None: a scratch file, removed without a word).
pub(crate) fn register(temp: &Path, target: Option<&Path>, dir: bool) -> Ticket {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    registry().pending.push(Entry {
        id,
        temp: temp.to_path_buf(),
        target: target.map(Path::to_path_buf),
        dir,
    });
    Ticket(id)
}

/// Runs `f` (the rename that puts the temporary in place, or its removal) under the
/// registry's lock and forgets the temporary.
pub(crate) fn settle<R>(ticket: Ticket, f: impl FnOnce() -> R) -> R {
    let mut r = registry();
    let out = f();
    r.pending.retain(|e| e.id != ticket.0);
    out
}

/// The ticket of the temporary directory `temp`, if it is registered (directories are
/// settled by path: [`super::replace_dir`] receives the path, not the ticket).
pub(crate) fn ticket_of(temp: &Path) -> Option<Ticket> {
    registry()
        .pending
        .iter()
        .find(|e| e.temp == temp)
        .map(|e| Ticket(e.id))
}

/// Something kept on purpose when the process stops early, said then ("the finished
/// points are kept in ..."); forgotten when the guard drops.
pub struct Kept(u64);

/// Registers `note`, said if the process is stopped while the guard lives.
pub fn keep(note: String) -> Kept {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    registry().kept.push((id, note));
    Kept(id)
}

impl Drop for Kept {
    fn drop(&mut self) {
        registry().kept.retain(|(id, _)| *id != self.0);
    }
}

/// What [`abandon`] did: one line per output, then what was kept.
pub struct Abandoned {
    pub lines: Vec<String>,
}

/// Removes every temporary being written and returns what to tell the user. The
/// registry stays locked for the rest of the process: call it only on the way out.
pub fn abandon() -> Abandoned {
    let r = registry();
    let mut lines = Vec::new();
    for e in &r.pending {
        let removed = if e.dir {
            // Writers may still be adding files to it: try a few times.
            (0..5).any(|_| std::fs::remove_dir_all(&e.temp).is_ok() || !e.temp.exists())
        } else {
            std::fs::remove_file(&e.temp).is_ok() || !e.temp.exists()
        };
        let Some(target) = &e.target else {
            continue;
        };
        let was = if target.exists() {
            "unchanged"
        } else {
            "not written"
        };
        let target = target.display();
        lines.push(if removed {
            format!("{target}: {was} (the unfinished new version was removed)")
        } else {
            format!(
                "{target}: {was}; the unfinished {} could not be removed",
                e.temp.display()
            )
        });
    }
    lines.extend(r.kept.iter().map(|(_, note)| note.clone()));
    // Nothing may be put in place from now on.
    std::mem::forget(r);
    Abandoned { lines }
}
