//! Scratch directories for integration tests: fresh at the start, removed when the
//! guard drops, unless the test is failing (its files are then left for a look).

use std::path::{Path, PathBuf};

pub struct Scratch(PathBuf);

impl Scratch {
    /// `$TMPDIR/rbf-<tag>-<pid>`, emptied first.
    pub fn new(tag: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("rbf-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("scratch dir");
        Scratch(d)
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
