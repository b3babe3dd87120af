//! Stopping on SIGINT (Ctrl-C), SIGTERM and SIGHUP: every temporary output removed,
//! the user told what was kept, the shell's exit status (128 + the signal's number:
//! 130, 143, 129).
//!
//! [`install`] (called by `main` before any other thread starts) blocks the three
//! signals in every thread and hands them to one thread that waits for them, so the
//! work is never interrupted in the middle of a system call and the handling is
//! ordinary code, not a signal handler:
//!
//! * Work that polls [`crate::progress::interrupted`] between steps (a generator, the
//!   renewal recursion, a run's grid) declares it with [`crate::stop::cooperate`]: the first SIGINT
//!   or SIGTERM sets the flag and the work returns [`crate::error::Error::Interrupted`], its
//!   temporary outputs removed as they are dropped. If it is still running a second
//!   later, a line says what it is waiting for.
//! * Otherwise (reading, fitting, replaying, which do not poll), and on a second signal,
//!   and always on SIGHUP (the terminal is gone, nobody waits for a tidy end), the
//!   signal thread itself removes every temporary output
//!   ([`crate::output_file::pending::abandon`]), says which outputs were left as they
//!   were and what was kept, and ends the process.
//!
//! A signal that was ignored when rbf started (`nohup`, a background job of a
//! non-interactive shell) stays ignored. What a stop request is (the signal received,
//! the interrupt flag) lives below everything else, in [`crate::stop`]; this module is
//! the thread that answers signals.

use crate::stop::{name, request_interrupt};

/// Takes over SIGINT, SIGTERM and SIGHUP for the process (see the module
/// documentation). Call it first thing in `main`, before any thread is started: the
/// signal mask it sets is inherited by threads created later.
pub fn install() {
    #[cfg(unix)]
    unix::install();
}

/// `rbf ... | head`: when the reader goes away, end quietly the way coreutils do
/// (killed by SIGPIPE, status 141 in the shell) instead of panicking in `println!`.
/// Files being written are temporary until committed, so nothing half-written stays
/// under an output's name. For a binary's `main`, before any thread starts.
pub fn quiet_broken_pipe() {
    #[cfg(target_os = "linux")]
    // SAFETY: restoring the default action of a signal before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(unix)]
mod unix {
    use super::{name, request_interrupt};
    use crate::stop::{first_signal, is_cooperative};
    use std::time::Duration;

    /// Time a cooperative stop gets before the user is told what it is waiting for.
    const PATIENCE: Duration = Duration::from_secs(1);

    fn ignored(sig: libc::c_int) -> bool {
        // SAFETY: a query (null new action) into a zeroed struct we own.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction == libc::SIG_IGN
        }
    }

    pub fn install() {
        // SAFETY: sigset manipulation on a set we own; pthread_sigmask on this thread.
        let set = unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                if !ignored(sig) {
                    libc::sigaddset(&mut set, sig);
                }
            }
            if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
                return;
            }
            set
        };
        let spawned = std::thread::Builder::new()
            .name("rbf-signals".into())
            .spawn(move || wait_for_signals(set));
        if spawned.is_err() {
            // No thread to take them: give the signals back their default action.
            // SAFETY: as above.
            unsafe {
                libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            }
        }
    }

    fn wait_for_signals(set: libc::sigset_t) {
        loop {
            let mut sig: libc::c_int = 0;
            // SAFETY: waits for one of the blocked signals of `set`.
            if unsafe { libc::sigwait(&set, &mut sig) } != 0 {
                continue;
            }
            let first = first_signal(sig);
            if first && sig != libc::SIGHUP && is_cooperative() {
                request_interrupt();
                if let Some(again) = wait_for(&set, PATIENCE) {
                    stop_now(again);
                }
                say(&format!(
                    "rbf: stopping ({}) at the end of the current step; {} again to stop at once\n",
                    name(sig),
                    if sig == libc::SIGINT {
                        "Ctrl-C"
                    } else {
                        "send the signal"
                    }
                ));
                continue;
            }
            stop_now(sig);
        }
    }

    /// The next signal of `set` within `patience`, if any.
    fn wait_for(set: &libc::sigset_t, patience: Duration) -> Option<libc::c_int> {
        let ts = libc::timespec {
            tv_sec: patience.as_secs() as libc::time_t,
            tv_nsec: patience.subsec_nanos() as libc::c_long,
        };
        // SAFETY: waits for a blocked signal of `set` with a timeout we own.
        let sig = unsafe { libc::sigtimedwait(set, std::ptr::null_mut(), &ts) };
        (sig > 0).then_some(sig)
    }

    /// Removes every temporary output, says what became of the outputs, and ends the
    /// process with the shell's status for the signal.
    fn stop_now(sig: libc::c_int) -> ! {
        let done = crate::output_file::pending::abandon();
        // SAFETY: isatty only inspects descriptor 2.
        let terminal = unsafe { libc::isatty(2) } == 1;
        // On a terminal, start on a clean line (a progress bar may be drawn).
        let clear = if terminal { "\r\x1b[K" } else { "" };
        let mut text = format!("{clear}rbf: stopped by {} before finishing\n", name(sig));
        for line in &done.lines {
            text.push_str(&format!("  {line}\n"));
        }
        say(&text);
        // SAFETY: ends the process without running other threads' code (they may be
        // in the middle of writing; their temporary files are gone already).
        unsafe { libc::_exit(128 + sig) }
    }

    /// Writes to stderr directly: another thread may hold Rust's stderr lock, and a
    /// closed terminal (SIGHUP) makes the write fail, which must not matter.
    fn say(text: &str) {
        let bytes = text.as_bytes();
        let mut at = 0;
        while at < bytes.len() {
            // SAFETY: writes from a buffer we own to file descriptor 2.
            let n = unsafe {
                libc::write(
                    2,
                    bytes[at..].as_ptr().cast::<libc::c_void>(),
                    bytes.len() - at,
                )
            };
            if n <= 0 {
                break;
            }
            at += n as usize;
        }
    }
}
