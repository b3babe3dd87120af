//! Progress of long work, and a clean stop on Ctrl-C.
//!
//! A [`Progress`] stays silent for the first [`SHOW_AFTER`] (quick work prints nothing),
//! then draws a bar with an ETA on stderr when stderr is a terminal. When stderr is
//! redirected (logs, CI) work of known length writes nothing while it runs but its
//! expected duration up front (when over [`SHOW_AFTER`]) and one summary line when it
//! ends ("rbf run: 24 of 24 points in 5 s"); work of unknown
//! length (reading standard input or a FIFO) writes a plain line every [`LINE_INTERVAL`],
//! so that a stalled input shows as waiting, not as a hang. Nothing at all after
//! [`set_quiet`]. Work whose pace over its first [`ESTIMATE_AFTER`] puts it over a
//! minute says so at once ([`announce_estimate`]). It is shared by reference between threads (rayon workers report into
//! one bar). Output goes to stderr only, so results on stdout stay clean.
//!
//! Ctrl-C and SIGTERM: after [`install_interrupt_handler`], the first one only sets a
//! flag that long loops poll with [`check_interrupt`], so they return an error and
//! nothing is left half-written; a second one ends the process at once, removing its
//! temporary outputs (see [`crate::signals`]). Install it only where the work that
//! follows polls the flag.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use crate::console::{is_quiet, note, set_quiet};
use crate::error::{Error, Result};
pub use crate::stop::{interrupted, request_interrupt};

/// Work shorter than this shows no progress at all.
pub const SHOW_AFTER: Duration = Duration::from_secs(2);
/// Work measured for this long before its pace is extrapolated to an estimate.
pub const ESTIMATE_AFTER: Duration = Duration::from_millis(100);
/// Redraw interval of the terminal bar.
const BAR_INTERVAL: Duration = Duration::from_millis(200);
/// Interval of the plain lines written for work of unknown length when stderr is not a
/// terminal.
pub const LINE_INTERVAL: Duration = Duration::from_secs(10);

/// An error when the user asked to stop; long loops call this between steps.
pub fn check_interrupt() -> Result<()> {
    if interrupted() {
        Err(Error::Interrupted)
    } else {
        Ok(())
    }
}

/// Declares that the work from here on polls [`interrupted`] (or [`check_interrupt`]):
/// the first Ctrl-C or SIGTERM then sets the flag instead of stopping the process at
/// once, and the work ends with [`Error::Interrupted`], dropping (removing) its
/// unfinished outputs; a second one stops it at once. Without it, a signal removes the
/// temporary outputs and ends the process (see [`crate::signals`]).
pub fn install_interrupt_handler() {
    crate::stop::cooperate();
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// A bar redrawn in place (stderr is a terminal).
    Bar,
    /// A plain line every [`LINE_INTERVAL`] (work of unknown length, stderr redirected).
    Lines,
    /// One summary line at the end (work of known length, stderr redirected).
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
    /// None for work of unknown length (standard input, a FIFO): counts and a rate,
    /// no bar or ETA.
    total: Option<f64>,
    start: Instant,
    mode: Mode,
    state: Mutex<State>,
    /// Set by [`Progress::finish`]: a [`Progress::heartbeat`] stops drawing.
    finished: AtomicBool,
}

impl Progress {
    /// Progress towards `total` units (e.g. arrivals, grid points); the display mode
    /// follows `--quiet` and whether stderr is a terminal.
    pub fn new(label: impl Into<String>, total: f64, unit: &'static str) -> Progress {
        Progress::with_mode(label.into(), Some(total), unit, Progress::mode(true))
    }

    /// Progress of work whose length is not known (reading standard input or a FIFO):
    /// the units done so far and their rate. With [`Progress::heartbeat`] it is redrawn
    /// while nothing arrives, so a stalled input shows as waiting, not as a hang.
    pub fn open_ended(label: impl Into<String>, unit: &'static str) -> Progress {
        Progress::with_mode(label.into(), None, unit, Progress::mode(false))
    }

    fn mode(known_length: bool) -> Mode {
        if is_quiet() {
            Mode::Off
        } else if std::io::stderr().is_terminal() {
            Mode::Bar
        } else if known_length {
            Mode::Summary
        } else {
            Mode::Lines
        }
    }

    /// Redraws the display every bar interval from a thread of its own, whether or not
    /// units arrive, until [`Progress::finish`] or the last reference is gone.
    pub fn heartbeat(progress: &Arc<Progress>) {
        if progress.mode == Mode::Off {
            return;
        }
        let weak = Arc::downgrade(progress);
        let _ = std::thread::Builder::new()
            .name("rbf-heartbeat".into())
            .spawn(move || loop {
                std::thread::sleep(BAR_INTERVAL);
                match weak.upgrade() {
                    Some(p) if !p.finished.load(Ordering::Relaxed) => p.add(0.0),
                    _ => break,
                }
            });
    }

    /// Progress that never shows (for library callers that want none).
    pub fn hidden() -> Progress {
        Progress::with_mode(String::new(), Some(1.0), "", Mode::Off)
    }

    fn with_mode(label: String, total: Option<f64>, unit: &'static str, mode: Mode) -> Progress {
        Progress {
            label,
            unit,
            total: total.map(|t| t.max(0.0)),
            start: Instant::now(),
            mode,
            state: Mutex::new(State {
                done: 0.0,
                last: None,
                bar_shown: false,
                estimated: false,
                summarised: false,
            }),
            finished: AtomicBool::new(false),
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
        if let Some(total) = self.total {
            if elapsed >= ESTIMATE_AFTER && done > 0.0 && !s.estimated {
                // From the pace of the first units: long work says so up front. Without
                // a bar (stderr redirected), anything that would have shown one says up
                // front how long it takes: the log's only sign of life until the summary
                // line; with a bar, work over a minute.
                let expected = elapsed.as_secs_f64() * total / done;
                let limit = if self.mode == Mode::Summary {
                    SHOW_AFTER.as_secs_f64()
                } else {
                    60.0
                };
                let say = expected > limit;
                if say {
                    estimate_note(&self.label, expected);
                }
                // Units whose cost grows (the N-bounded bit distribution's insertions)
                // make the first pace too quick: until SHOW_AFTER has passed, a quiet
                // estimate is made again from the longer pace.
                s.estimated = say || elapsed >= SHOW_AFTER;
            }
        }
        if elapsed < SHOW_AFTER || self.mode == Mode::Summary {
            return done;
        }
        let interval = match self.mode {
            Mode::Bar => BAR_INTERVAL,
            _ => LINE_INTERVAL,
        };
        if s.last.is_some_and(|t| now.duration_since(t) < interval) {
            return done;
        }
        // The first plain line comes at SHOW_AFTER, later ones every LINE_INTERVAL.
        s.last = Some(now);
        let text = self.describe(s.done, elapsed);
        let mut err = std::io::stderr().lock();
        let _ = match self.mode {
            Mode::Bar => {
                s.bar_shown = true;
                write!(err, "\r{text}\x1b[K")
            }
            _ => writeln!(err, "{text}"),
        };
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

    /// "label [#####     ] 45.0% (4.5e6 of 1e7 arrivals), 12 s, ETA 15 s"; for work of
    /// unknown length "label: 1.2 GiB (45 MiB/s), 27 s elapsed".
    fn describe(&self, done: f64, elapsed: Duration) -> String {
        let secs = elapsed.as_secs_f64();
        let Some(total) = self.total else {
            let amount = |x: f64| match self.unit {
                "bytes" => count_text(x, self.unit),
                unit => format!("{} {unit}", count_text(x, unit)),
            };
            let so_far = if done > 0.0 {
                format!("{} ({}/s)", amount(done), amount(done / secs.max(1e-3)))
            } else {
                "waiting for data".to_string()
            };
            return format!("{}: {so_far}, {} elapsed", self.label, duration_text(secs));
        };
        let frac = if total > 0.0 {
            (done / total).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let width = 24;
        let filled = (frac * width as f64) as usize;
        let bar = format!("[{}{}]", "#".repeat(filled), " ".repeat(width - filled));
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
            count_text(total, self.unit),
            duration_text(secs)
        )
        .replace(" )", ")")
    }

    /// Counts the items of `iter` as units done (in batches, so that a per-message
    /// loop pays one addition per item, not a lock). The iteration ends early after
    /// Ctrl-C (with [`install_interrupt_handler`]); the caller then checks [`interrupted`].
    pub fn track<I: Iterator>(&self, iter: I) -> Tracked<'_, I> {
        self.track_weighted(iter, 1.0)
    }

    /// [`Progress::track`], each item counting `weight` units (work whose items cost
    /// different amounts in different loops, e.g. one arrival through several filters).
    pub fn track_weighted<I: Iterator>(&self, iter: I, weight: f64) -> Tracked<'_, I> {
        Tracked {
            progress: self,
            iter,
            pending: 0,
            weight,
        }
    }

    /// Clears the bar (so later output starts on a clean line), or, with stderr
    /// redirected, writes the one summary line of work that ran past [`SHOW_AFTER`].
    /// Only the first call writes it.
    pub fn finish(&self) {
        self.finished.store(true, Ordering::Relaxed);
        if let Ok(mut s) = self.state.lock() {
            if s.bar_shown {
                let _ = write!(std::io::stderr(), "\r\x1b[K");
                s.bar_shown = false;
            }
            let elapsed = self.start.elapsed();
            let redirected = matches!(self.mode, Mode::Summary | Mode::Lines);
            if redirected && !s.summarised && elapsed >= SHOW_AFTER {
                let _ = writeln!(std::io::stderr(), "{}", self.summary(s.done, elapsed));
            }
            s.summarised = true;
        }
    }

    /// "rbf run: 24 of 24 points in 5 s", "... stopped at 45.0% (...) after 5 s", or for
    /// work of unknown length "reading <stdin>: 3.0 MiB in 12 s".
    fn summary(&self, done: f64, elapsed: Duration) -> String {
        let unit = if self.unit == "bytes" { "" } else { self.unit };
        let secs = duration_text(elapsed.as_secs_f64());
        let Some(total) = self.total else {
            let amount = format!("{} {unit}", count_text(done, self.unit));
            return format!("{}: {} in {secs}", self.label, amount.trim_end());
        };
        // A total that was an estimate may be passed: the count alone then.
        let counts = if done > total {
            format!("{} {unit}", count_text(done, self.unit))
        } else {
            format!(
                "{} of {} {unit}",
                count_text(done, self.unit),
                count_text(total, self.unit)
            )
        };
        let counts = counts.trim_end();
        if total > 0.0 && done < total {
            format!(
                "{}: stopped at {:.1}% ({counts}) after {secs}",
                self.label,
                100.0 * done / total
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
    weight: f64,
}

impl<I: Iterator> Iterator for Tracked<'_, I> {
    type Item = I::Item;

    #[inline]
    fn next(&mut self) -> Option<I::Item> {
        self.pending += 1;
        if self.pending == TRACK_BATCH {
            self.progress.add(f64::from(self.pending) * self.weight);
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
        self.progress.add(f64::from(self.pending) * self.weight);
    }
}

const DAY: f64 = 86_400.0;
const YEAR: f64 = 365.25 * DAY;

/// A rounded human duration: "850 ms", "12 s", "3 min 20 s", "2 h 5 min", "3 days",
/// "12 years".
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
    } else if secs >= 2.0 * YEAR {
        format!("{:.0} years", secs / YEAR)
    } else if secs >= 2.0 * DAY {
        format!("{:.0} days", secs / DAY)
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
    if seconds > 60.0 {
        estimate_note(what, seconds);
    }
}

fn estimate_note(what: &str, seconds: f64) {
    if !is_quiet() {
        crate::errln!(
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
        let p = Progress::with_mode("renewal".into(), Some(200.0), "arrivals", Mode::Off);
        let t = p.describe(50.0, Duration::from_secs(10));
        assert!(t.starts_with("renewal ["), "{t}");
        assert!(t.contains(" 25.0% (50 of 200 arrivals)"), "{t}");
        assert!(t.contains("10 s elapsed, ETA 30 s"), "{t}");
        let t = p.describe(0.0, Duration::from_secs(3));
        assert!(t.contains("ETA unknown"), "{t}");
        let p = Progress::with_mode("reading <stdin>".into(), None, "bytes", Mode::Off);
        let t = p.describe(3.0 * 1024.0 * 1024.0, Duration::from_secs(2));
        assert_eq!(t, "reading <stdin>: 3.0 MiB (1.5 MiB/s), 2 s elapsed");
        let t = p.describe(0.0, Duration::from_secs(12));
        assert_eq!(t, "reading <stdin>: waiting for data, 12 s elapsed");
        let p = Progress::with_mode("x".into(), None, "arrivals", Mode::Off);
        assert_eq!(
            p.describe(500.0, Duration::from_secs(5)),
            "x: 500 arrivals (100 arrivals/s), 5 s elapsed"
        );
    }

    #[test]
    fn the_summary_line_says_how_far_the_work_got() {
        let p = Progress::with_mode("rbf run".into(), Some(24.0), "points", Mode::Off);
        let s = Duration::from_secs(5);
        assert_eq!(p.summary(24.0, s), "rbf run: 24 of 24 points in 5 s");
        assert_eq!(
            p.summary(12.0, s),
            "rbf run: stopped at 50.0% (12 of 24 points) after 5 s"
        );
        // An estimated total that the work ran past is not printed as "25 of 24".
        assert_eq!(p.summary(25.0, s), "rbf run: 25 points in 5 s");
        let p = Progress::with_mode("reading <stdin>".into(), None, "bytes", Mode::Off);
        assert_eq!(
            p.summary(3.0 * 1024.0 * 1024.0, s),
            "reading <stdin>: 3.0 MiB in 5 s"
        );
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration_text(0.25), "250 ms");
        assert_eq!(duration_text(12.4), "12 s");
        assert_eq!(duration_text(200.0), "3 min 20 s");
        assert_eq!(duration_text(7500.0), "2 h 5 min");
        assert_eq!(duration_text(3.0 * 86_400.0), "3 days");
        assert_eq!(duration_text(3.4e7 * 1000.0), "1077 years");
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
