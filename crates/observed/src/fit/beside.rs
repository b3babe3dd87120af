//! A fitter fed on a thread of its own, beside a pass that does other work with the
//! same keys (the replays of `rbf compare` and `rbf size TRACE`).
//!
//! The fitter and the replays read the same keys and share nothing, so each ends as it
//! would alone. On the 10^7-packet capture the fitter takes 1.15 s and the replays with
//! the trace's paths 1.05 s: one after the other per batch, the pass took 2.2 s; a rayon
//! join per batch overlapped them by a third only (the pool's other worker was often
//! asleep when a batch's second half was ready). A thread that takes batches from a
//! channel keeps both cores busy: 1.6-1.8 s, with the decoding thread beside them.

use super::Fitter;
use rbf_foundations::worker::Worker;

/// Keys per batch handed to the fitter.
const FEED_BATCH: usize = 8192;
/// Batches the fitter may lag behind the pass.
const FEED_AHEAD: usize = 8;

/// Runs `body` with a `feed` that hands keys to `fitter`, on a thread of its own
/// ([`Worker`]), in the order fed; returns the fitter once it has consumed every key,
/// with `body`'s result. A panic on the fitter's thread is raised here.
pub fn beside<R>(fitter: Fitter, body: impl FnOnce(&mut dyn FnMut(&[u64])) -> R) -> (Fitter, R) {
    let mut worker = Worker::new(
        "rbf-fitter",
        fitter,
        FEED_BATCH,
        FEED_AHEAD,
        |f: &mut Fitter, keys| {
            f.run_keys(keys);
            true
        },
    );
    let out = body(&mut |keys| worker.extend(keys));
    (worker.finish(), out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::FitOptions;

    /// Fed on its own thread, in batches of any size, a fitter ends as one fed in
    /// line: the same fit, bit for bit.
    #[test]
    fn a_fitter_beside_the_pass_fits_what_one_in_line_fits() {
        let keys: Vec<u64> = (0..50_000u64)
            .map(|i| (i * 2_654_435_761) % 3_001 + (i % 7) * 10_000)
            .collect();
        let options = FitOptions {
            warmup: 1_000,
            ..FitOptions::default()
        };
        let mut alone = Fitter::new(options).expect("valid options");
        alone.run_keys(&keys);
        let alone = format!("{:?}", alone.finish().expect("a fit"));
        for batch in [1usize, 700, 8192, 50_000] {
            let fitter = Fitter::new(options).expect("valid options");
            let (fitter, fed) = beside(fitter, |feed| keys.chunks(batch).map(feed).count());
            assert_eq!(fed, keys.len().div_ceil(batch));
            let fit = format!("{:?}", fitter.finish().expect("a fit"));
            assert!(fit == alone, "batches of {batch}");
        }
    }
}
