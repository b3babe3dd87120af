//! One stream replayed through the same filter hashed with several seeds.
//!
//! Why: the models describe a filter averaged over hash positions as well as over
//! arrivals, but one replay fixes the positions of every message for the whole trace.
//! With few popular messages (D = 1000, say) a filter's long-run FN differs from the
//! hash average by as much as a long replay's batch-means interval is wide, and an
//! interval from one filter cannot see that (docs/coverage/README.md measures it: 85.5 %
//! coverage for a nominal 99 % in one cell, 98-100 % with four filters). Each seed's filter runs the
//! whole stream with its own ground truth; their complete cycles are cut into the same
//! time batches and the intervals come from the two-way table (hash seeds x batches,
//! [`crate::stats::replicated_ratio_interval`]), so they cover the hash positions'
//! randomness, and the point estimate is the ratio over every seed's complete cycles.
//!
//! The first filter is the one configured (its seed, its counts in the report); the
//! others use seeds derived from it. Cost: one replay per seed, time and memory.

use super::cycles::confidence;
use super::{Replay, ReplayOptions, ReplayReport};
use crate::error::{Error, Result};
use crate::filter::{mix64, FilterConfig};
use crate::message::{for_each_key_batch, Message};

/// Hash seeds a replay uses unless told otherwise (docs/coverage/README.md: the fewest
/// with which the printed FN interval covers at 98 % or more in every complete cell of
/// the coverage study; 2 gave 97.5 % in one).
pub const DEFAULT_HASH_SEEDS: u32 = 4;

/// Most hash seeds accepted.
pub const MAX_HASH_SEEDS: u32 = 64;

/// The filter seed of replica `r` (replica 0 keeps the configured seed).
pub fn replica_seed(seed: u64, r: u32) -> u64 {
    if r == 0 {
        seed
    } else {
        mix64(seed ^ mix64(0x6861_7368_0000_0000 | u64::from(r)))
    }
}

/// Replays of one stream through one filter per hash seed.
pub struct Replays {
    replays: Vec<Replay>,
    options: ReplayOptions,
}

impl Replays {
    /// `hash_seeds` filters like `config`, the first with its seed.
    pub fn new(config: &FilterConfig, options: ReplayOptions, hash_seeds: u32) -> Result<Self> {
        if hash_seeds == 0 || hash_seeds > MAX_HASH_SEEDS {
            return Err(Error::config(
                "hash-seeds",
                format!("allowed range is 1..={MAX_HASH_SEEDS}, found {hash_seeds}"),
            ));
        }
        let replays = (0..hash_seeds)
            .map(|r| {
                let mut c = config.clone();
                c.seed = replica_seed(config.seed, r);
                Replay::new(&c, options)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Replays { replays, options })
    }

    /// Replays every message of a stream.
    pub fn run<I: IntoIterator<Item = Message>>(&mut self, stream: I) {
        for_each_key_batch(stream, |keys| self.run_keys(keys));
    }

    /// Sizes every filter's ground truth for `distinct` keys up front
    /// ([`Replay::expect_distinct`]).
    pub fn expect_distinct(&mut self, distinct: u64) {
        for r in &mut self.replays {
            r.expect_distinct(distinct);
        }
    }

    /// Replays every message of a trace source in batches, like
    /// [`Replay::run_source`]: each filter has its own ground truth, and they grow
    /// together, so a growth is checked against the machine for all of them at once;
    /// Ctrl-C stops it between batches.
    pub fn run_source(&mut self, source: &mut dyn crate::ingest::MessageSource) -> Result<()> {
        super::source_batches(source, |keys| {
            let growth: u64 = self
                .replays
                .iter()
                .filter_map(|r| r.truth_growth_bytes(keys.len()))
                .sum();
            if growth > 0 {
                self.replays[0].check_growth(growth)?;
            }
            self.run_keys(keys);
            Ok(())
        })
    }

    /// Replays a slice of keys through every filter.
    pub fn run_keys(&mut self, keys: &[u64]) {
        for r in &mut self.replays {
            r.run_keys(keys);
        }
    }

    /// Replays one arrival through every filter.
    pub fn push(&mut self, key: u64) {
        for r in &mut self.replays {
            r.push(key);
        }
    }

    /// Arrivals replayed so far, warm-up included.
    pub fn seen(&self) -> u64 {
        self.replays[0].seen()
    }

    pub fn hash_seeds(&self) -> usize {
        self.replays.len()
    }

    /// The configured filter's replay.
    pub fn first(&self) -> &Replay {
        &self.replays[0]
    }

    /// Every filter's replay, the configured one first.
    pub fn replays(&self) -> &[Replay] {
        &self.replays
    }

    /// Bytes held by the ground-truth tables.
    pub fn truth_bytes(&self) -> usize {
        self.replays.iter().map(Replay::truth_bytes).sum()
    }

    /// Bytes held by the filters.
    pub fn filter_bytes(&self) -> usize {
        self.replays.iter().map(Replay::filter_bytes).sum()
    }

    /// The configured filter's report, with the intervals (and the point estimates
    /// they belong to) over every hash seed's complete cycles.
    pub fn report(&self) -> ReplayReport {
        let mut r = self.replays[0].report();
        let stats: Vec<_> = self.replays.iter().map(Replay::cycle_stats).collect();
        r.confidence = confidence(&stats, self.replays[0].measured(), self.options.confidence);
        r.hash_seeds = self.replays.len() as u64;
        r
    }
}

/// Replays a whole stream with `hash_seeds` filters and reports.
pub fn replay_seeds<I: IntoIterator<Item = Message>>(
    config: &FilterConfig,
    options: ReplayOptions,
    hash_seeds: u32,
    stream: I,
) -> Result<ReplayReport> {
    let mut r = Replays::new(config, options, hash_seeds)?;
    r.run(stream);
    Ok(r.report())
}
