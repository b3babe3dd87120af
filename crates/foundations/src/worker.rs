//! A consumer on a thread of its own, fed items in batches through a bounded channel.
//!
//! The fitter beside a pass's replays and the fitter's successor counts both read a
//! stream that another thread produces and share nothing with it: each gets its items
//! in the order pushed, so it ends as it would have ended fed in line. Where no thread
//! can be started, the items are processed in line (the same result, later).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::Arc;
use std::thread::JoinHandle;

/// What a worker does with a batch: consumes it, and says whether it wants more (false:
/// it ignores every later item, so none are sent).
pub type Process<S, T> = fn(&mut S, &[T]) -> bool;

enum Place<S, T> {
    Thread {
        to_worker: SyncSender<Vec<T>>,
        worker: JoinHandle<S>,
        done: Arc<AtomicBool>,
    },
    Inline(S, bool),
}

/// State `S` fed items `T` on a thread of its own.
pub struct Worker<S, T> {
    pending: Vec<T>,
    batch: usize,
    process: Process<S, T>,
    place: Place<S, T>,
}

impl<S: Send + 'static, T: Send + 'static> Worker<S, T> {
    /// Starts `state`'s thread (named `name`), which runs `process` on batches of
    /// `batch` items and may lag up to `ahead` batches behind the pushes (more and the
    /// pushing thread waits).
    pub fn new(name: &str, state: S, batch: usize, ahead: usize, process: Process<S, T>) -> Self {
        let (to_worker, batches) = std::sync::mpsc::sync_channel::<Vec<T>>(ahead);
        let done = Arc::new(AtomicBool::new(false));
        let seen_done = Arc::clone(&done);
        // The state goes to the thread through a slot, so that it is still here when
        // no thread can be started.
        let slot = Arc::new(std::sync::Mutex::new(Some(state)));
        let theirs = Arc::clone(&slot);
        let spawned = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let mut state = theirs
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .take()
                    .expect("the state is handed over once");
                for items in batches {
                    if !process(&mut state, &items) {
                        seen_done.store(true, Ordering::Relaxed);
                    }
                }
                state
            });
        let place = match spawned {
            Ok(worker) => Place::Thread {
                to_worker,
                worker,
                done,
            },
            Err(_) => {
                let state = slot
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .take()
                    .expect("no thread took the state");
                Place::Inline(state, true)
            }
        };
        Worker {
            pending: Vec::with_capacity(batch),
            batch: batch.max(1),
            process,
            place,
        }
    }
}

impl<S, T> Worker<S, T> {
    /// The next item, in order.
    #[inline(always)]
    pub fn push(&mut self, item: T) {
        self.pending.push(item);
        if self.pending.len() >= self.batch {
            self.flush();
        }
    }

    /// The next items, in order.
    pub fn extend(&mut self, items: &[T])
    where
        T: Copy,
    {
        self.pending.extend_from_slice(items);
        if self.pending.len() >= self.batch {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        match &mut self.place {
            Place::Thread {
                to_worker, done, ..
            } => {
                if done.load(Ordering::Relaxed) {
                    self.pending.clear();
                    return;
                }
                let items = std::mem::replace(&mut self.pending, Vec::with_capacity(self.batch));
                // A send fails only once the thread has panicked: `finish` raises it.
                let _ = to_worker.send(items);
            }
            Place::Inline(state, wants) => {
                if *wants {
                    *wants = (self.process)(state, &self.pending);
                }
                self.pending.clear();
            }
        }
    }

    /// The state once every item pushed is processed; a panic on the worker's thread
    /// is raised here.
    pub fn finish(mut self) -> S {
        self.flush();
        match self.place {
            Place::Thread {
                to_worker, worker, ..
            } => {
                drop(to_worker);
                worker
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            }
            Place::Inline(state, _) => state,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Items arrive in order, in batches of any size; a worker that wants no more is
    /// sent no more.
    #[test]
    fn a_worker_sees_every_item_in_order_until_it_wants_no_more() {
        for batch in [1usize, 7, 1000] {
            let mut w = Worker::new("test", Vec::new(), batch, 2, |seen: &mut Vec<u32>, xs| {
                seen.extend_from_slice(xs);
                true
            });
            (0..500u32).for_each(|x| w.push(x));
            w.extend(&[500, 501]);
            assert_eq!(w.finish(), (0..502).collect::<Vec<u32>>());
            let mut w = Worker::new("test", 0usize, batch, 2, |n: &mut usize, xs: &[u32]| {
                *n += xs.len();
                *n < 10
            });
            (0..500u32).for_each(|x| w.push(x));
            assert!(w.finish() >= 10);
        }
    }
}
