//! Whether the user asked rbf to stop, and how: the signal received (SIGINT, SIGTERM,
//! SIGHUP), whether the work in progress polls for a stop, and the interrupt flag that
//! such work polls. State only, at the bottom of the crate, so that [`crate::error`]
//! (the exit status), [`crate::progress`] (the polling) and [`crate::signals`] (the
//! thread that answers signals) can all read it.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// The first stopping signal received (0: none yet).
static RECEIVED: AtomicI32 = AtomicI32::new(0);
/// The work in progress polls the interrupt flag.
static COOPERATIVE: AtomicBool = AtomicBool::new(false);

/// The work from now on polls [`interrupted`] often enough that a stop request can
/// wait for it.
pub fn cooperate() {
    COOPERATIVE.store(true, Ordering::SeqCst);
}

/// The signal that stopped (or is stopping) the process, if any.
pub fn received() -> Option<i32> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// The process exit status after a stop: 128 + the signal (130 when no signal was
/// received, e.g. a library caller's own interrupt).
pub fn exit_status() -> u8 {
    let sig = received().unwrap_or(2);
    u8::try_from(128 + sig).unwrap_or(130)
}

/// How people call the signal that stopped the process: "Ctrl-C", "SIGTERM", "SIGHUP".
pub fn describe() -> &'static str {
    name(received().unwrap_or(2))
}

pub fn name(sig: i32) -> &'static str {
    match sig {
        1 => "SIGHUP",
        2 => "Ctrl-C",
        15 => "SIGTERM",
        _ => "a signal",
    }
}

/// Whether the work in progress polls the interrupt flag ([`cooperate`]).
pub fn is_cooperative() -> bool {
    COOPERATIVE.load(Ordering::SeqCst)
}

/// Records `sig` as the signal that stops the process; true when it is the first.
pub fn first_signal(sig: i32) -> bool {
    RECEIVED
        .compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
}

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The user asked to stop (Ctrl-C once).
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Sets the [`interrupted`] flag (the signal thread's doing, or a library caller's).
pub fn request_interrupt() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Clears the [`interrupted`] flag: a library caller that lives on after a stop (the
/// Python package: one Ctrl-C ends one call, not the session) starts the next piece
/// of work with it down.
pub fn clear_interrupt() {
    INTERRUPTED.store(false, Ordering::SeqCst);
}
