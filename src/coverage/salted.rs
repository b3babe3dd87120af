//! A diagnostic replay of the process the renewal model describes: a one-phase,
//! sigma-bounded filter that draws fresh hash positions at every recycle (a new salt
//! per cycle), so that hash positions are independent from cycle to cycle, as the
//! model assumes (FN §5: each cycle's messages land on uniform positions). A real
//! filter keeps its positions for ever; comparing the two separates what the model's
//! argument does from what fixed positions do (docs/FIT.md, "The corner").
//!
//! Not a filter rbf replays for users: it exists for the coverage study's corner. With
//! a salt that never changes it counts exactly what [`crate::replay::Replay`] counts
//! (tested below), which is what makes its numbers comparable.

use crate::error::{Error, Result};
use crate::filter::{
    mix64, BitArray, FilterConfig, PositionBuf, PositionHasher, Trigger, MAX_HASHES,
};
use crate::replay::{confidence, Confidence, CycleStats, CycleSums, GroundTruth, Truth};

/// A one-phase filter whose positions change at every recycle, with exact ground truth.
pub struct SaltedReplay {
    bits: BitArray,
    config: FilterConfig,
    sigma: u64,
    hasher: PositionHasher,
    /// Draw a new salt at every recycle (false: keep the first, as a real filter does).
    resalt: bool,
    truth: GroundTruth,
    warmup: u64,
    seen: u64,
    recycles: u64,
    tally: CycleSums,
    /// The current cycle started after the warm-up.
    complete: bool,
    stats: CycleStats,
    buf: PositionBuf,
}

impl SaltedReplay {
    /// One phase, sigma-bounded only.
    pub fn new(config: &FilterConfig, warmup: u64, resalt: bool) -> Result<SaltedReplay> {
        config.validate()?;
        let Trigger::Sigma(sigma) = config.trigger()? else {
            return Err(Error::config(
                "sigma",
                "the salted replay is sigma-bounded only",
            ));
        };
        if config.phases != 1 {
            return Err(Error::config(
                "phases",
                "the salted replay has one phase only",
            ));
        }
        let mut r = SaltedReplay {
            bits: BitArray::new(config.memory),
            config: config.clone(),
            sigma,
            hasher: PositionHasher::new(config.memory, config.hashes, config.hashing, config.seed),
            resalt,
            truth: GroundTruth::new(),
            warmup,
            seen: 0,
            recycles: 0,
            tally: CycleSums::default(),
            complete: warmup == 0,
            stats: CycleStats::default(),
            buf: [0; MAX_HASHES as usize],
        };
        r.salt();
        Ok(r)
    }

    /// The positions of the current cycle.
    fn salt(&mut self) {
        let seed = if self.resalt {
            mix64(self.config.seed ^ mix64(self.recycles.wrapping_add(0x5a17)))
        } else {
            self.config.seed
        };
        let c = &self.config;
        self.hasher = PositionHasher::new(c.memory, c.hashes, c.hashing, seed);
    }

    /// One arrival, with the semantics of [`crate::replay::Replay`] for a one-phase,
    /// retaining or not, filter.
    pub fn push(&mut self, key: u64) {
        let cycle = self.recycles;
        let mut slot = self.truth.lookup(key, cycle, 1);
        let truth = slot.truth;
        let new_bits = {
            let p = self.hasher.positions(key, &mut self.buf);
            self.bits.insert(p)
        };
        let found = new_bits == 0;
        let recycled = new_bits > 0 && self.bits.count_ones() > self.sigma;
        let at = if recycled && self.config.retaining {
            cycle + 1
        } else {
            cycle
        };
        slot.record(at, false);
        if self.seen >= self.warmup {
            let t = &mut self.tally;
            t.arrivals += 1;
            t.first += u64::from(truth != Truth::Repeat);
            t.bit_setting += u64::from(new_bits > 0);
            t.false_positives += u64::from(truth == Truth::New && found);
            t.false_negatives += u64::from(truth == Truth::NonRepeat && !found);
            t.lucky += u64::from(truth == Truth::NonRepeat && found);
        }
        self.seen += 1;
        if recycled {
            self.recycle(key);
        }
    }

    #[cold]
    fn recycle(&mut self, key: u64) {
        let counting = self.seen > self.warmup;
        if self.complete {
            let mut c = self.tally;
            c.cycles = 1;
            self.stats.record(&c, self.seen - self.warmup);
        }
        self.tally = CycleSums::default();
        self.complete = counting;
        self.bits.clear();
        self.recycles += 1;
        self.salt();
        if self.config.retaining {
            let p = self.hasher.positions(key, &mut self.buf);
            self.bits.insert(p);
        }
    }

    pub fn run_keys(&mut self, keys: &[u64]) {
        for &k in keys {
            self.push(k);
        }
    }

    pub fn measured(&self) -> u64 {
        self.seen.saturating_sub(self.warmup)
    }

    pub fn cycle_stats(&self) -> &CycleStats {
        &self.stats
    }

    /// Intervals over the complete cycles.
    pub fn confidence(&self, level: f64) -> Option<Confidence> {
        confidence(&[&self.stats], self.measured(), level)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{for_each_key_batch, KeyHasher};
    use crate::replay::{Replay, ReplayOptions};
    use crate::synth::{SynthConfig, Synthesizer};
    use crate::workload::{Placement, Workload};

    #[test]
    fn without_resalting_it_counts_what_replay_counts() {
        let w = Workload::zipf(500, 1.0, 0.9, Placement::Bottom);
        for retaining in [true, false] {
            let mut f = FilterConfig::sigma_bounded(4000, 4, 1000);
            f.retaining = retaining;
            f.seed = 7;
            let warmup = 5000;
            let mut salted = SaltedReplay::new(&f, warmup, false).unwrap();
            let mut replay = Replay::new(
                &f,
                ReplayOptions {
                    warmup,
                    confidence: 0.99,
                },
            )
            .unwrap();
            // The same trace for each filter.
            let trace = || {
                Synthesizer::new(&SynthConfig {
                    workload: w.clone(),
                    arrivals: 200_000,
                    seed: 3,
                    prologue: true,
                })
                .unwrap()
            };
            for_each_key_batch(trace().messages(KeyHasher::default()), |k| {
                salted.run_keys(k);
                replay.run_keys(k);
            });
            let a = salted.cycle_stats().totals();
            let b = replay.cycle_stats().totals();
            assert!(a.cycles > 50, "{a:?}");
            assert_eq!(
                a,
                CycleSums {
                    distinct: a.distinct,
                    ..b
                },
                "retaining {retaining}"
            );
            // Resalting changes the positions, not the arrivals.
            let mut resalted = SaltedReplay::new(&f, warmup, true).unwrap();
            for_each_key_batch(trace().messages(KeyHasher::default()), |k| {
                resalted.run_keys(k)
            });
            let c = resalted.cycle_stats().totals();
            assert!(c.cycles > 50 && c.false_negatives != a.false_negatives);
        }
    }
}
