//! Progress of long work, and a clean stop on Ctrl-C.
//!
//! A [`Progress`] stays silent for the first [`SHOW_AFTER`] (quick work prints nothing),
//! then draws a bar with an ETA on stderr when stderr is a terminal; when stderr is
//! redirected (logs, CI) it writes nothing while the work runs and one summary line when
//! it ends ("rbf run: 24 of 24 points in 5 s"), and nothing at all after [`set_quiet`]. Work whose pace over its first [`ESTIMATE_AFTER`] puts it over a
//! minute says so at once ([`announce_estimate`]). It is shared by reference between threads (rayon workers report into
//! one bar). Output goes to stderr only, so results on stdout stay clean.
//!
//! Ctrl-C: after [`install_interrupt_handler`], the first SIGINT only sets a flag that
//! long loops poll with [`check_interrupt`], so they return an error and nothing is
//! left half-written; a second SIGINT ends the process at once. Install it only where
//! the work that follows polls the flag (otherwise the first Ctrl-C would do nothing).

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use crate::console::{is_quiet, note, set_quiet};
use crate::error::{Error, Result};

/// Work shorter than this shows no progress at all.
pub const SHOW_AFTER: Duration = Duration::from_secs(2);
/// Work measured for this long before its pace is extrapolated to an estimate.
pub const ESTIMATE_AFTER: Duration = Duration::from_millis(100);
/// Redraw interval of the terminal bar.
const BAR_INTERVAL: Duration = Duration::from_millis(200);

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The user asked to stop (Ctrl-C once).
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// An error when the user asked to stop; long loops call this between steps.
pub fn check_interrupt() -> Result<()> {
    if interrupted() {
        Err(Error::Interrupted)
    } else {
        Ok(())
    }
}

/// Makes the first Ctrl-C set the [`interrupted`] flag instead of killing the process;
/// a second one restores the default action and kills it.
pub fn install_interrupt_handler() {
    #[cfg(unix)]
    unix_signal::install();
}

#[cfg(unix)]
mod unix_signal {
    use super::INTERRUPTED;
    use std::sync::atomic::Ordering;

    extern "C" fn on_sigint(_: libc::c_int) {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            // Second Ctrl-C: the default action (terminate) from now on, and now.
            // SAFETY: signal() and raise() are async-signal-safe.
            unsafe {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                libc::raise(libc::SIGINT);
            }
        }
    }

    pub fn install() {
        // SAFETY: installs a handler that only touches an atomic and calls
        // async-signal-safe functions.
        unsafe {
            libc::signal(
                libc::SIGINT,
                on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// A bar redrawn in place (stderr is a terminal).
    Bar,
    /// One summary line at the end (stderr is redirected).
    Summary,
    Off,
}

struct State {
    done: f64,
    last: Option<Instant>,
    bar_shown: bool,
    estimated: bool,
    /// The summary line was written (or is not to be).
    summarised: bool,
}

/// Progress of one piece of work measured in `unit`s out of a known total.
pub struct Progress {
    label: String,
    unit: &'static str,
    total: f64,
    start: Instant,
    mode: Mode,
    state: Mutex<State>,
}

impl Progress {
    /// Progress towards `total` units (e.g. arrivals, grid points); the display mode
    /// follows `--quiet` and whether stderr is a terminal.
    pub fn new(label: impl Into<String>, total: f64, unit: &'static str) -> Progress {
        let mode = if is_quiet() {
            Mode::Off
        } else if std::io::stderr().is_terminal() {
            Mode::Bar
        } else {
            Mode::Summary
        };
        Progress::with_mode(label.into(), total, unit, mode)
    }

    /// Progress that never shows (for library callers that want none).
    pub fn hidden() -> Progress {
        Progress::with_mode(String::new(), 1.0, "", Mode::Off)
    }

    fn with_mode(label: String, total: f64, unit: &'static str, mode: Mode) -> Progress {
        Progress {
            label,
            unit,
            total: total.max(0.0),
            start: Instant::now(),
            mode,
            state: Mutex::new(State {
                done: 0.0,
                last: None,
                bar_shown: false,
                estimated: false,
                summarised: false,
            }),
        }
    }

    /// Adds `delta` units done.
    pub fn add(&self, delta: f64) {
        self.update(|d| d + delta);
    }

    /// Sets the units done.
    pub fn set(&self, done: f64) {
        self.update(|_| done);
    }

    /// Applies `f` to the units done and redraws when due; returns the new count
    /// (0 for a display that is off).
    fn update(&self, f: impl FnOnce(f64) -> f64) -> f64 {
        if self.mode == Mode::Off {
            return 0.0;
        }
        let Ok(mut s) = self.state.lock() else {
            return 0.0;
        };
        s.done = f(s.done);
        let done = s.done;
        let now = Instant::now();
        let elapsed = now.duration_since(self.start);
        if elapsed >= ESTIMATE_AFTER && done > 0.0 && !s.estimated {
            // Once, from the pace of the first units: long work says so up front.
            s.estimated = true;
            announce_estimate(&self.label, elapsed.as_secs_f64() * self.total / done);
        }
        if elapsed < SHOW_AFTER || self.mode != Mode::Bar {
            return done;
        }
        if s.last.is_some_and(|t| now.duration_since(t) < BAR_INTERVAL) {
            return done;
        }
        s.last = Some(now);
        let text = self.describe(s.done, elapsed);
        let mut err = std::io::stderr().lock();
        s.bar_shown = true;
        let _ = write!(err, "\r{text}\x1b[K");
        let _ = err.flush();
        done
    }

    /// For a loop of known length: records `done` units (the first report after
    /// [`ESTIMATE_AFTER`] says how long the whole is expected to take, when that is
    /// over a minute: [`announce_estimate`]) and returns [`Error::Interrupted`] after
    /// Ctrl-C. Call it every few milliseconds of work, not per item.
    pub fn step(&self, done: f64) -> Result<()> {
        self.set(done);
        check_interrupt()
    }

    /// [`Progress::step`] by `delta` more units.
    pub fn advance(&self, delta: f64) -> Result<()> {
        self.add(delta);
        check_interrupt()
    }

    /// "label [#####     ] 45.0% (4.5e6 of 1e7 arrivals), 12 s, ETA 15 s"
    fn describe(&self, done: f64, elapsed: Duration) -> String {
        let frac = if self.total > 0.0 {
            (done / self.total).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let width = 24;
        let filled = (frac * width as f64) as usize;
        let bar = format!("[{}{}]", "#".repeat(filled), " ".repeat(width - filled));
        let secs = elapsed.as_secs_f64();
        let eta = if frac > 0.0 {
            format!("ETA {}", duration_text(secs * (1.0 - frac) / frac))
        } else {
            "ETA unknown".to_string()
        };
        let unit = if self.unit == "bytes" { "" } else { self.unit };
        format!(
            "{} {bar} {:5.1}% ({} of {} {unit}), {} elapsed, {eta}",
            self.label,
            frac * 100.0,
            count_text(done, self.unit),
            count_text(self.total, self.unit),
            duration_text(secs)
        )
        .replace(" )", ")")
    }

    /// Counts the items of `iter` as units done (in batches, so that a per-message
    /// loop pays one addition per item, not a lock). The iteration ends early after
    /// Ctrl-C (with [`install_interrupt_handler`]); the caller then checks [`interrupted`].
    pub fn track<I: Iterator>(&self, iter: I) -> Tracked<'_, I> {
        Tracked {
            progress: self,
            iter,
            pending: 0,
        }
    }

    /// Clears the bar (so later output starts on a clean line), or, with stderr
    /// redirected, writes the one summary line of work that ran past [`SHOW_AFTER`].
    /// Only the first call does anything.
    pub fn finish(&self) {
        if let Ok(mut s) = self.state.lock() {
            if s.bar_shown {
                let _ = write!(std::io::stderr(), "\r\x1b[K");
                s.bar_shown = false;
            }
            let elapsed = self.start.elapsed();
            if self.mode == Mode::Summary && !s.summarised && elapsed >= SHOW_AFTER {
                let _ = writeln!(std::io::stderr(), "{}", self.summary(s.done, elapsed));
            }
            s.summarised = true;
        }
    }

    /// "rbf run: 24 of 24 points in 5 s", or "... stopped at 45.0% (...) after 5 s".
    fn summary(&self, done: f64, elapsed: Duration) -> String {
        let unit = if self.unit == "bytes" { "" } else { self.unit };
        let counts = format!(
            "{} of {} {unit}",
            count_text(done, self.unit),
            count_text(self.total, self.unit)
        );
        let counts = counts.trim_end();
        let secs = duration_text(elapsed.as_secs_f64());
        if self.total > 0.0 && done < self.total {
            format!(
                "{}: stopped at {:.1}% ({counts}) after {secs}",
                self.label,
                100.0 * done / self.total
            )
        } else {
            format!("{}: {counts} in {secs}", self.label)
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Items counted between two updates of a tracked iteration.
const TRACK_BATCH: u32 = 1 << 16;

/// An iterator that reports its items to a [`Progress`] (see [`Progress::track`]).
/// It ends early, between two batches, once the user pressed Ctrl-C.
pub struct Tracked<'a, I> {
    progress: &'a Progress,
    iter: I,
    pending: u32,
}

impl<I: Iterator> Iterator for Tracked<'_, I> {
    type Item = I::Item;

    #[inline]
    fn next(&mut self) -> Option<I::Item> {
        self.pending += 1;
        if self.pending == TRACK_BATCH {
            self.progress.add(f64::from(self.pending));
            self.pending = 0;
            if interrupted() {
                return None;
            }
        }
        self.iter.next()
    }
}

impl<I> Drop for Tracked<'_, I> {
    fn drop(&mut self) {
        self.progress.add(f64::from(self.pending));
    }
}

/// A rounded human duration: "850 ms", "12 s", "3 min 20 s", "2 h 5 min".
pub fn duration_text(secs: f64) -> String {
    if !secs.is_finite() {
        return "unknown".into();
    }
    if secs < 1.0 {
        format!("{:.0} ms", secs * 1e3)
    } else if secs < 60.0 {
        format!("{secs:.0} s")
    } else if secs < 3600.0 {
        format!("{} min {} s", (secs / 60.0) as u64, (secs % 60.0) as u64)
    } else {
        format!(
            "{} h {} min",
            (secs / 3600.0) as u64,
            ((secs % 3600.0) / 60.0) as u64
        )
    }
}

fn count_text(x: f64, unit: &str) -> String {
    if unit == "bytes" {
        return crate::resources::bytes_text(x);
    }
    if x < 1e5 {
        format!("{x:.0}")
    } else {
        format!("{x:.3e}")
    }
}

/// Says up front how long a request is expected to take, when that is over a minute.
pub fn announce_estimate(what: &str, seconds: f64) {
    if seconds > 60.0 && !is_quiet() {
        eprintln!(
            "note: {what} is expected to take about {} on this machine (Ctrl-C stops it)",
            duration_text(seconds)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_fraction_and_eta() {
        let p = Progress::with_mode("renewal".into(), 200.0, "arrivals", Mode::Off);
        let t = p.describe(50.0, Duration::from_secs(10));
        assert!(t.starts_with("renewal ["), "{t}");
        assert!(t.contains(" 25.0% (50 of 200 arrivals)"), "{t}");
        assert!(t.contains("10 s elapsed, ETA 30 s"), "{t}");
        let t = p.describe(0.0, Duration::from_secs(3));
        assert!(t.contains("ETA unknown"), "{t}");
    }

    #[test]
    fn the_summary_line_says_how_far_the_work_got() {
        let p = Progress::with_mode("rbf run".into(), 24.0, "points", Mode::Off);
        let s = Duration::from_secs(5);
        assert_eq!(p.summary(24.0, s), "rbf run: 24 of 24 points in 5 s");
        assert_eq!(
            p.summary(12.0, s),
            "rbf run: stopped at 50.0% (12 of 24 points) after 5 s"
        );
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration_text(0.25), "250 ms");
        assert_eq!(duration_text(12.4), "12 s");
        assert_eq!(duration_text(200.0), "3 min 20 s");
        assert_eq!(duration_text(7500.0), "2 h 5 min");
        assert_eq!(duration_text(f64::NAN), "unknown");
    }

    #[test]
    fn hidden_progress_is_silent_and_cheap() {
        let p = Progress::hidden();
        p.add(1.0);
        p.set(2.0);
        p.finish();
    }
}
