//! The per-insertion sums built on a thread of their own while the arrivals consume
//! them: the two stages of the exact engine (the bit distribution over insertions,
//! then the law of the insertion count over arrivals) overlap on two cores instead of
//! running in turn.
//!
//! The arrival stage at arrival j reads the sums of insertion counts up to the top of
//! N_j's window plus one, which the insertion stage passed long before (an arrival
//! adds at most one insertion, an insertion stage step is one insertion), so it rarely
//! waits. The values are the same as with every sum built first
//! ([`super::inscount::Decomposed::open`]): the same sums in the same order, and a
//! step never reads a count that has not arrived (it waits for it, or for the end).

use super::input::{RenewalInput, RenewalOptions};
use super::inscount::Decomposed;
use super::insertions::{expected_insertions, per_insertion_sums};
use crate::model::false_negative::bitdist::Summary;
use rbf_foundations::error::{Error, Result};
use std::sync::mpsc::{sync_channel, Receiver};

/// Sums per message; a few in the unit tests, so that their runs wait for sums
/// mid-cycle (`worst::tests::shared_per_insertion_sums_give_the_same_bits` compares
/// them with sums built first, bit for bit).
const CHUNK: usize = if cfg!(test) { 7 } else { 4096 };
/// Messages the insertion stage may run ahead (its sums are kept anyway: bounding the
/// channel only bounds the copies in flight).
const AHEAD: usize = 1 << 14;

/// What the insertion stage sends.
enum Msg {
    Sums(Vec<Summary>),
    /// The last sums are in: the dropped mass and the frozen half's E[tau(l, l)].
    End(f64, f64),
    Failed(Error),
}

/// The law of N over arrivals, fed by the insertion stage's thread.
pub(super) struct Streamed {
    pub d: Decomposed,
    rx: Receiver<Msg>,
    ended: bool,
    failed: Option<Error>,
    /// The expected number of insertions (for the progress display).
    pub expected: usize,
}

impl Streamed {
    /// Starts the insertion stage on a thread of `scope` and waits for its first sums.
    pub fn start<'scope, 'env>(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        input: &'env RenewalInput<'env>,
        opt: RenewalOptions,
    ) -> Result<Streamed> {
        let (tx, rx) = sync_channel(AHEAD);
        scope.spawn(move || {
            let mut chunk = Vec::with_capacity(CHUNK);
            // The progress of this stage shows in the arrivals' bar.
            let hidden = rbf_foundations::progress::Progress::hidden();
            // A chunk also goes out once it is 50 ms old, so that the arrivals start
            // early where insertions are slow (the largest filters).
            let mut opened = std::time::Instant::now();
            let built = per_insertion_sums(input, opt, &hidden, &mut |s| {
                chunk.push(s);
                let old = chunk.len().is_multiple_of(64)
                    && opened.elapsed() > std::time::Duration::from_millis(50);
                if chunk.len() == CHUNK || old {
                    opened = std::time::Instant::now();
                    let full = std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK));
                    // The receiver is gone when the arrivals stopped with an error.
                    tx.send(Msg::Sums(full)).map_err(|_| Error::Interrupted)?;
                }
                Ok(())
            });
            let last = match built {
                Ok((dropped, frozen)) => {
                    let _ = tx.send(Msg::Sums(chunk));
                    Msg::End(dropped, frozen)
                }
                Err(e) => Msg::Failed(e),
            };
            let _ = tx.send(last);
        });
        let expected = expected_insertions(input) as usize;
        let mut first = Vec::new();
        let mut ended = false;
        let mut end = None;
        let mut failed = None;
        // Until the first sums (an empty last chunk is possible only after them).
        while first.is_empty() && !ended {
            match rx.recv() {
                Ok(Msg::Sums(s)) => first = s,
                Ok(Msg::End(dropped, frozen)) => {
                    ended = true;
                    end = Some((dropped, frozen));
                }
                Ok(Msg::Failed(e)) => return Err(e),
                Err(_) => {
                    ended = true;
                    failed = Some(lost());
                }
            }
        }
        if let Some(e) = failed {
            return Err(e);
        }
        if first.is_empty() {
            return Err(lost());
        }
        let mut d = Decomposed::open(&first, opt.tiny);
        if let Some((dropped, frozen)) = end {
            d.close(dropped, frozen);
        }
        Ok(Streamed {
            d,
            rx,
            ended,
            failed: None,
            expected,
        })
    }

    /// Waits until the sums a step from the current window reads are in: counts up to
    /// the window's top plus one, or the last count.
    pub fn ready_for_step(&mut self) {
        while !self.ended && self.d.counts() < self.d.top() + 2 {
            self.receive();
        }
    }

    /// Waits for the insertion stage to end: the dropped mass and the frozen half's
    /// E[tau(l, l)] are known from then on. Its error, if it failed.
    pub fn finish(&mut self) -> Result<()> {
        while !self.ended {
            self.receive();
        }
        self.check()
    }

    /// The insertion stage's error, as soon as it is known.
    pub fn check(&mut self) -> Result<()> {
        match self.failed.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn receive(&mut self) {
        match self.rx.recv() {
            Ok(Msg::Sums(s)) => self.d.extend(&s),
            Ok(Msg::End(dropped, frozen)) => {
                self.ended = true;
                self.d.close(dropped, frozen);
            }
            Ok(Msg::Failed(e)) => {
                self.ended = true;
                self.failed = Some(e);
            }
            Err(_) => {
                self.ended = true;
                self.failed = Some(lost());
            }
        }
    }
}

/// The insertion stage's thread ended without a word (it panicked: the scope re-raises
/// the panic when it ends).
fn lost() -> Error {
    Error::Internal("the renewal bound's insertion stage stopped without its sums")
}
