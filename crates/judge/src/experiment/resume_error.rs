//! Why a run cannot keep its journal (the finished points a rerun resumes from):
//! another rbf run writes to the same output directory.

use std::path::PathBuf;

use rbf_foundations::error::Kind;

/// A journal this run cannot hold for itself.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    /// The journal's lock file keeps being removed under this run by other runs on
    /// the same `output`: holding a lock on a removed file would protect nothing.
    #[error(
        "the journal {} keeps being removed by other rbf runs writing to {}; wait for them",
        journal.display(),
        output.display()
    )]
    JournalRemoved { journal: PathBuf, output: PathBuf },

    /// Another run holds the journal's lock (`lock`) of the same `output`: two runs
    /// writing one journal would mix their points.
    #[error(
        "another rbf run is writing to {} (its journal {} is locked); wait for it or choose another output directory",
        output.display(),
        lock.display()
    )]
    Locked { output: PathBuf, lock: PathBuf },
}

rbf_foundations::layer_error!(ResumeError => Kind::Request);
