//! What rbf says to the user besides its results: notes on stderr, and the `--quiet`
//! switch that silences them. The lowest layer that talks to the user, so that
//! [`crate::resources`] and [`crate::progress`] can both speak without depending on
//! each other.

use std::sync::atomic::{AtomicBool, Ordering};

static QUIET: AtomicBool = AtomicBool::new(false);

/// Turns notes, estimates and every progress display off (`--quiet`).
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

pub fn is_quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// A note for the user on stderr ("note: ..."), unless `--quiet`.
pub fn note(text: &str) {
    if !is_quiet() {
        eprintln!("note: {text}");
    }
}
