//! The successor counts ([`super::successor`]) on a thread of their own.
//!
//! Counting (message, successor) pairs is a hash-table update per arrival, in a table
//! of up to 4 million pairs that misses the caches: about a third of the fitter's pass
//! (0.35-0.4 s of 1.15 s on the 10^7-packet capture). It reads only the compact ids in
//! arrival order, so the fitter hands them over in batches and goes on; the counts end
//! as if pushed in line (the same pushes in the same order). Once the pair cap is
//! reached the counts ignore every later id, so the fitter stops sending them.

use super::successor::SuccessorCounts;
use rbf_foundations::worker::Worker;

/// Ids per batch handed over.
const FEED_BATCH: usize = 8192;
/// Batches the counting thread may lag behind: 2^20 ids (4 MB). When the pair table
/// doubles, the counting thread stops to have the kernel zero the new table (64-85 MB
/// of fresh pages for the last doublings, 0.2-0.4 s on the project's 2-core VM); with 8
/// batches the fitter, and with it the pass feeding the fitter, waited for it from the
/// first 65 536 ids on. The thread catches up afterwards: between doublings it is busy
/// about half the time (per-thread samples of `perf record` on the 10^7-packet capture).
const FEED_AHEAD: usize = 128;
/// How far ahead the counting thread prefetches a pair's slot.
const PAIR_AHEAD: usize = 8;

/// Successor counts fed with the measured arrivals' ids.
pub struct SuccessorFeed(Worker<SuccessorCounts, u32>);

impl SuccessorFeed {
    /// Counts with at most `cap` distinct pairs, on a thread of their own where one can
    /// be started (else in line, the same counts).
    pub fn new(cap: usize) -> Self {
        SuccessorFeed(Worker::new(
            "rbf-successors",
            SuccessorCounts::new(cap),
            FEED_BATCH,
            FEED_AHEAD,
            count,
        ))
    }

    /// The next measured arrival's compact id.
    #[inline(always)]
    pub fn push(&mut self, id: u32) {
        self.0.push(id);
    }

    /// The counts of every id pushed.
    pub fn finish(self) -> SuccessorCounts {
        self.0.finish()
    }
}

/// Pushes `ids` in order, prefetching the slot of the pair PAIR_AHEAD arrivals on;
/// false once the pair cap is reached (every later id is ignored).
fn count(counts: &mut SuccessorCounts, ids: &[u32]) -> bool {
    for (i, &id) in ids.iter().enumerate() {
        if let (Some(&a), Some(&b)) = (ids.get(i + PAIR_AHEAD - 1), ids.get(i + PAIR_AHEAD)) {
            counts.prefetch(a, b);
        }
        counts.push(id);
    }
    !counts.is_full()
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
