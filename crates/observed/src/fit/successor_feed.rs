//! The successor counts ([`super::successor`]) on a thread of their own.
//!
//! Counting (message, successor) pairs is a hash-table update per arrival, in a table
//! of up to 4 million pairs that misses the caches: about a third of the fitter's pass
//! (0.35-0.4 s of 1.15 s on the 10^7-packet capture). It reads only the compact ids in
//! arrival order, so the fitter hands them over in batches and goes on; the counts end
//! as if pushed in line (the same pushes in the same order). Once the pair cap is
//! reached the counts ignore every later id, so the fitter stops sending them.

use super::successor::SuccessorCounts;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::Arc;
use std::thread::JoinHandle;

/// Ids per batch handed over, and the batches the counts may lag behind.
const FEED_BATCH: usize = 8192;
const BATCHES_AHEAD: usize = 8;
/// How far ahead the counting thread prefetches a pair's slot.
const PAIR_AHEAD: usize = 8;

/// Where the counts are kept: on their thread, or here where no thread could be made.
enum Counts {
    Thread {
        to_counts: SyncSender<Vec<u32>>,
        counts: JoinHandle<SuccessorCounts>,
        full: Arc<AtomicBool>,
    },
    Inline(SuccessorCounts),
}

/// Successor counts fed with the measured arrivals' ids.
pub struct SuccessorFeed {
    pending: Vec<u32>,
    counts: Counts,
}

impl SuccessorFeed {
    /// Counts with at most `cap` distinct pairs, on a thread of their own where one can
    /// be started (else in line, the same counts).
    pub fn new(cap: usize) -> Self {
        let (to_counts, batches) = std::sync::mpsc::sync_channel::<Vec<u32>>(BATCHES_AHEAD);
        let full = Arc::new(AtomicBool::new(false));
        let seen_full = Arc::clone(&full);
        let spawned = std::thread::Builder::new()
            .name("rbf-successors".into())
            .spawn(move || {
                let mut counts = SuccessorCounts::new(cap);
                for ids in batches {
                    count(&mut counts, &ids);
                    if counts.is_full() {
                        seen_full.store(true, Ordering::Relaxed);
                    }
                }
                counts
            });
        let counts = match spawned {
            Ok(counts) => Counts::Thread {
                to_counts,
                counts,
                full,
            },
            Err(_) => Counts::Inline(SuccessorCounts::new(cap)),
        };
        SuccessorFeed {
            pending: Vec::with_capacity(FEED_BATCH),
            counts,
        }
    }

    /// The next measured arrival's compact id.
    #[inline(always)]
    pub fn push(&mut self, id: u32) {
        self.pending.push(id);
        if self.pending.len() >= FEED_BATCH {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        match &mut self.counts {
            Counts::Thread {
                to_counts, full, ..
            } => {
                if full.load(Ordering::Relaxed) {
                    // Past the cap the counts ignore every id.
                    self.pending.clear();
                    return;
                }
                let ids = std::mem::replace(&mut self.pending, Vec::with_capacity(FEED_BATCH));
                // A send fails only once the counting thread has panicked: `finish`
                // raises that panic.
                let _ = to_counts.send(ids);
            }
            Counts::Inline(counts) => {
                count(counts, &self.pending);
                self.pending.clear();
            }
        }
    }

    /// The counts of every id pushed.
    pub fn finish(mut self) -> SuccessorCounts {
        self.flush();
        match self.counts {
            Counts::Thread {
                to_counts, counts, ..
            } => {
                drop(to_counts);
                counts
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            }
            Counts::Inline(counts) => counts,
        }
    }
}

/// Pushes `ids` in order, prefetching the slot of the pair PAIR_AHEAD arrivals on.
fn count(counts: &mut SuccessorCounts, ids: &[u32]) {
    for (i, &id) in ids.iter().enumerate() {
        if let (Some(&a), Some(&b)) = (ids.get(i + PAIR_AHEAD - 1), ids.get(i + PAIR_AHEAD)) {
            counts.prefetch(a, b);
        }
        counts.push(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fed on its thread, the counts are the counts pushed in line, below and past the
    /// pair cap, whatever the batches.
    #[test]
    fn the_thread_counts_what_pushing_in_line_counts() {
        let ids: Vec<u32> = (0..40_000u32)
            .map(|i| (i * 7_919) % 1_013 + i % 3)
            .collect();
        for cap in [50usize, 5_000, 1_000_000] {
            let mut inline = SuccessorCounts::new(cap);
            ids.iter().for_each(|&id| inline.push(id));
            let mut feed = SuccessorFeed::new(cap);
            ids.iter().for_each(|&id| feed.push(id));
            let fed = feed.finish();
            assert_eq!(fed.entropy(1_100), inline.entropy(1_100), "cap {cap}");
        }
    }
}
