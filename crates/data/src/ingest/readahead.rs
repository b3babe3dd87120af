//! Decoding beside the consumer: a source's reading, decompressing and parsing run on a
//! thread of their own, which hands the consumer (replay, fit, `rbf ingest`) batches of
//! messages through a bounded channel.
//!
//! Replay of a 2^20-bit filter takes about 25 ns per arrival and decoding an
//! oracleGeneral record about as long: on one thread each waits for the other, on two
//! they overlap (docs/PERFORMANCE.md, "Replay"). The stream is the same message for
//! message, so results do not change, whatever the number of cores.
//!
//! Memory is fixed: at most [`IN_FLIGHT`] full batches wait in the channel, plus the
//! one the consumer reads and the one the decoder fills; emptied batches go back to
//! the decoder for reuse, so nothing is allocated per batch in steady state.
//!
//! What the reader reports (damage with its file and offset, malformed records,
//! notes) is in the source's summary, which travels back with the source when the
//! stream ends: while the decoder has it, [`MessageSource::summary`] gives the summary
//! of the opened source (its name and format), and the complete one after the last
//! message.
//!
//! Ctrl-C: the decoder never decides to stop by itself (a stream that ended early
//! would look complete); the consumer polls the interrupt flag as before and drops
//! the stream, and the decoder ends at its next hand-over, when it finds nobody
//! listening.

use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError};
use std::thread::JoinHandle;

use super::source::{IngestSummary, MessageSource};
use crate::message::{KeyDictionary, Message};

/// Messages per batch handed over (128 KiB of messages: the channel's cost per batch,
/// a few microseconds at worst, is spread over many arrivals).
pub const BATCH: usize = 8192;
/// Full batches that may wait for the consumer (2 MiB of messages). Either thread
/// stalls now and then (a cache-missing stretch, the kernel's copy, the `.rbfs`
/// writer waiting for its compressor); with only 4 the decoder soon stopped on a full
/// channel and a core sat idle: `rbf replay big.pcap` took 0.46 s with 4, 0.42 with 8,
/// 0.39 with 16 and 32, and less CPU (fewer sleeps and wake-ups;
/// docs/history/PERFORMANCE-log.md, packet captures, 2026-11-28 04:20 UTC).
pub const IN_FLIGHT: usize = 16;
/// Batches that exist at once: those in flight, the consumer's and the decoder's.
const MAX_BATCHES: usize = IN_FLIGHT + 2;

/// A message source whose decoding runs on its own thread.
///
/// The thread starts at the first request for a message, not when the trace is
/// opened: the consumer may prepare first (a large ground-truth table), and reading
/// progress then measures the pace of the replay, not of a decoder filling its batches
/// and waiting.
pub struct ReadAhead {
    /// The source before the decoder starts, and again once the stream has ended (or
    /// throughout, read on the consumer's thread, when no thread could be started).
    source: Option<Box<dyn MessageSource>>,
    started: bool,
    /// No decoding thread: the source is read here.
    local: bool,
    full: Option<Receiver<Vec<Message>>>,
    empty: Option<SyncSender<Vec<Message>>>,
    worker: Option<JoinHandle<Box<dyn MessageSource>>>,
    current: Vec<Message>,
    pos: usize,
    /// The summary of the source as opened, while the decoder has it.
    opened: IngestSummary,
    declared_distinct: Option<u64>,
}

impl ReadAhead {
    /// Wraps `source` so that it is decoded on a thread of its own from the first
    /// request for a message. If no thread can be started it is read on the caller's
    /// thread instead (same messages, only slower).
    pub fn spawn(source: Box<dyn MessageSource>) -> Box<dyn MessageSource> {
        Box::new(ReadAhead {
            opened: source.summary().clone(),
            declared_distinct: source.declared_distinct(),
            source: Some(source),
            started: false,
            local: false,
            full: None,
            empty: None,
            worker: None,
            current: Vec::new(),
            pos: 0,
        })
    }

    /// Moves the source onto the decoding thread.
    fn start(&mut self) {
        let Some(source) = self.source.take() else {
            return;
        };
        let (full_tx, full_rx) = mpsc::sync_channel::<Vec<Message>>(IN_FLIGHT);
        let (empty_tx, empty_rx) = mpsc::sync_channel::<Vec<Message>>(MAX_BATCHES);
        // The source moves into the thread only if the thread starts: keep it in a slot
        // the closure takes it from, so that a failed spawn can hand it back.
        let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(source)));
        let theirs = slot.clone();
        let spawned = std::thread::Builder::new()
            .name("rbf-decode".into())
            .spawn(move || {
                let source = theirs
                    .lock()
                    .ok()
                    .and_then(|mut s| s.take())
                    .expect("the source is handed over once");
                decode(source, &full_tx, &empty_rx)
            });
        match spawned {
            Ok(worker) => {
                self.full = Some(full_rx);
                self.empty = Some(empty_tx);
                self.worker = Some(worker);
            }
            Err(_) => {
                self.source = slot.lock().ok().and_then(|mut s| s.take());
                self.local = true;
            }
        }
    }

    /// The next batch; false once the stream has ended (the source is then back in
    /// `source`).
    #[cold]
    fn next_batch(&mut self) -> bool {
        if !self.started {
            self.started = true;
            self.start();
        }
        if self.local {
            self.current.clear();
            self.pos = 0;
            if let Some(source) = self.source.as_mut() {
                source.fill(&mut self.current, BATCH);
            }
            return !self.current.is_empty();
        }
        let Some(full) = &self.full else {
            return false;
        };
        let done = std::mem::take(&mut self.current);
        if let Some(empty) = &self.empty {
            // The decoder may have stopped listening already (end of stream); the
            // batch is then simply dropped.
            let _ = empty.try_send(done);
        }
        self.pos = 0;
        match full.recv() {
            Ok(batch) => {
                self.current = batch;
                true
            }
            Err(_) => {
                self.full = None;
                self.empty = None;
                self.join();
                false
            }
        }
    }

    fn join(&mut self) {
        if let Some(worker) = self.worker.take() {
            match worker.join() {
                Ok(source) => self.source = Some(source),
                // A panic in a reader is a bug: let it surface as one.
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
    }
}

/// The decoding thread: fills batches until the source ends or the consumer is gone,
/// then returns the source (with its complete summary).
fn decode(
    mut source: Box<dyn MessageSource>,
    full: &SyncSender<Vec<Message>>,
    empty: &Receiver<Vec<Message>>,
) -> Box<dyn MessageSource> {
    let mut made = 0;
    loop {
        let mut batch = match empty.try_recv() {
            Ok(b) => b,
            Err(TryRecvError::Empty) if made < MAX_BATCHES => {
                made += 1;
                Vec::with_capacity(BATCH)
            }
            Err(TryRecvError::Empty) => match empty.recv() {
                Ok(b) => b,
                Err(_) => break,
            },
            Err(TryRecvError::Disconnected) => break,
        };
        batch.clear();
        source.fill(&mut batch, BATCH);
        let last = batch.len() < BATCH;
        if !batch.is_empty() && full.send(batch).is_err() {
            break;
        }
        if last {
            break;
        }
    }
    source
}

impl Iterator for ReadAhead {
    type Item = Message;

    #[inline]
    fn next(&mut self) -> Option<Message> {
        if self.pos >= self.current.len() && !self.next_batch() {
            return None;
        }
        let m = self.current[self.pos];
        self.pos += 1;
        Some(m)
    }
}

impl MessageSource for ReadAhead {
    fn summary(&self) -> &IngestSummary {
        match &self.source {
            Some(s) => s.summary(),
            None => &self.opened,
        }
    }

    fn dictionary(&self) -> Option<&KeyDictionary> {
        self.source.as_ref().and_then(|s| s.dictionary())
    }

    fn declared_distinct(&self) -> Option<u64> {
        self.declared_distinct
    }

    /// Asked before the first message (while the source has not moved to the
    /// decoding thread); None after.
    fn estimated_distinct(&self) -> Option<super::count::DistinctEstimate> {
        self.source.as_ref()?.estimated_distinct()
    }

    fn fill(&mut self, out: &mut Vec<Message>, max: usize) {
        while out.len() < max {
            if self.pos >= self.current.len() && !self.next_batch() {
                return;
            }
            if out.is_empty() && self.pos == 0 && self.current.len() <= max {
                // A whole batch into an empty buffer: exchange the vectors instead of
                // copying (the caller's empty one goes back to the decoder).
                std::mem::swap(out, &mut self.current);
                continue;
            }
            let n = (max - out.len()).min(self.current.len() - self.pos);
            out.extend_from_slice(&self.current[self.pos..self.pos + n]);
            self.pos += n;
        }
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        // Closing both channels ends the decoder at its next hand-over. It is not
        // waited for: it may be blocked reading a pipe that never ends.
        self.full = None;
        self.empty = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Timestamp;

    /// A source of `n` numbered messages whose summary counts them and notes the end.
    struct Counting {
        n: u64,
        at: u64,
        summary: IngestSummary,
    }

    impl Iterator for Counting {
        type Item = Message;
        fn next(&mut self) -> Option<Message> {
            if self.at == self.n {
                self.summary.damage = Some(format!("ended at {}", self.at));
                return None;
            }
            self.at += 1;
            self.summary.records += 1;
            Some(Message::at(self.at * 7, Timestamp::from_nanos(self.at)))
        }
    }

    impl MessageSource for Counting {
        fn summary(&self) -> &IngestSummary {
            &self.summary
        }
    }

    fn counting(n: u64) -> Box<dyn MessageSource> {
        let summary = IngestSummary {
            source: "counting".into(),
            ..Default::default()
        };
        Box::new(Counting { n, at: 0, summary })
    }

    #[test]
    fn same_messages_and_final_summary() {
        for n in [0, 1, BATCH as u64 - 1, BATCH as u64, 5 * BATCH as u64 + 3] {
            let direct: Vec<Message> = counting(n).collect();
            let mut ahead = ReadAhead::spawn(counting(n));
            assert_eq!(ahead.summary().source, "counting");
            assert_eq!(ahead.summary().records, 0);
            let mut got = Vec::new();
            // Mix the two ways of reading.
            while let Some(m) = ahead.next() {
                got.push(m);
                let max = got.len() + 1000;
                ahead.fill(&mut got, max);
            }
            assert_eq!(got, direct, "n = {n}");
            assert_eq!(ahead.summary().records, n);
            // Whole batches into empty buffers (exchanged, not copied).
            let mut ahead = ReadAhead::spawn(counting(n));
            let mut got = Vec::new();
            loop {
                let mut b = Vec::new();
                ahead.fill(&mut b, BATCH);
                let last = b.len() < BATCH;
                got.extend(b);
                if last {
                    break;
                }
            }
            assert_eq!(got, direct, "n = {n}");
            assert_eq!(ahead.summary().damage, Some(format!("ended at {n}")));
            assert_eq!(ahead.next(), None);
        }
    }

    #[test]
    fn dropping_early_stops_the_decoder() {
        let mut ahead = ReadAhead::spawn(counting(u64::MAX));
        assert!(ahead.by_ref().take(3 * BATCH).count() == 3 * BATCH);
        drop(ahead);
    }
}
