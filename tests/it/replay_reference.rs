//! Replay cross-checked against a deliberately naive reference: plain `Vec<bool>` bit
//! arrays, recycling by clearing whole vectors, and ground truth kept as explicit
//! `HashSet`s of the keys recorded in each half. Both use the same bit positions (the
//! reference asks an untouched `RecyclingFilter` for them), so every count must agree
//! exactly, for every variant, on many small random traces. Filters with per-cycle
//! positions get theirs from a [`PositionHasher`] seeded as documented for each
//! array and cycle (the rule of `rbf_data::filter::cycle_seed`, written out again here).

use std::collections::HashSet;

use rbf_data::filter::{
    mix64, FilterConfig, Hashing, PositionHasher, Positions, RecyclingFilter, Trigger,
};
use rbf_data::synth::Rng;
use rbf_observed::replay::{Replay, ReplayOptions};

#[derive(Default, Debug, PartialEq, Eq)]
struct Counts {
    arrivals: u64,
    new: u64,
    non_repeat: u64,
    repeat: u64,
    fp: u64,
    fnn: u64,
    lucky: u64,
    bit_setting: u64,
    cycles: u64,
}

struct Half {
    bits: Vec<bool>,
    inserts: u64,
    recorded: HashSet<u64>,
}

impl Half {
    fn new(m: usize) -> Self {
        Half {
            bits: vec![false; m],
            inserts: 0,
            recorded: HashSet::new(),
        }
    }
    fn all_set(&self, p: &[u64]) -> bool {
        p.iter().all(|&i| self.bits[i as usize])
    }
    fn set(&mut self, p: &[u64]) -> u32 {
        let mut n = 0;
        for &i in p {
            if !self.bits[i as usize] {
                self.bits[i as usize] = true;
                n += 1;
            }
        }
        n
    }
    fn ones(&self) -> u64 {
        self.bits.iter().filter(|b| **b).count() as u64
    }
    fn clear(&mut self) {
        self.bits.iter_mut().for_each(|b| *b = false);
        self.inserts = 0;
        self.recorded.clear();
    }
}

fn reference(c: &FilterConfig, keys: &[u64], warmup: usize) -> Counts {
    let oracle = RecyclingFilter::new(c).unwrap();
    let m = c.half_memory() as usize;
    let phases = c.phases as usize;
    let mut halves: Vec<Half> = (0..phases).map(|_| Half::new(m)).collect();
    let mut active = 0usize;
    // Per-cycle positions: the recycle that last cleared each array.
    let mut cleared_at = [0u64; 2];
    let mut recycles = 0u64;
    let positions = |key: u64, array: usize, cleared_at: &[u64; 2]| -> Vec<u64> {
        if c.positions != Some(Positions::PerCycle) {
            return oracle.positions(key, array);
        }
        let own = if c.independent_halves {
            c.seed ^ mix64(array as u64 + 1)
        } else {
            c.seed
        };
        let seed = mix64(own ^ mix64(cleared_at[array].wrapping_add(0x5a17)));
        let h = PositionHasher::new(m as u64, c.hashes, c.hashing, seed);
        let mut buf = [0; 64];
        h.positions(key, &mut buf).to_vec()
    };
    let mut seen = HashSet::new();
    let mut out = Counts::default();
    let trigger = c.trigger().unwrap();
    for (t, &key) in keys.iter().enumerate() {
        let counting = t >= warmup;
        let pa = positions(key, active, &cleared_at);
        let truth = if !seen.contains(&key) {
            0
        } else if halves.iter().any(|h| h.recorded.contains(&key)) {
            2
        } else {
            1
        };
        seen.insert(key);
        let (found, new_bits) = if phases == 1 {
            let found = halves[0].all_set(&pa);
            let n = halves[0].set(&pa);
            halves[0].recorded.insert(key);
            (found, n)
        } else {
            let f = 1 - active;
            let pf = positions(key, f, &cleared_at);
            let in_frozen = halves[f].all_set(&pf);
            let in_active = halves[active].all_set(&pa);
            if !in_frozen || c.copy_over || in_active {
                let n = halves[active].set(&pa);
                halves[active].recorded.insert(key);
                (in_frozen || in_active, n)
            } else {
                (true, 0)
            }
        };
        if counting {
            out.arrivals += 1;
            match truth {
                0 => {
                    out.new += 1;
                    out.fp += u64::from(found);
                }
                1 => {
                    out.non_repeat += 1;
                    out.lucky += u64::from(found);
                    out.fnn += u64::from(!found);
                }
                _ => {
                    out.repeat += 1;
                    assert!(found, "reference: repeat classified new");
                }
            }
            out.bit_setting += u64::from(new_bits > 0);
        }
        if new_bits > 0 {
            halves[active].inserts += 1;
            let exceeded = match trigger {
                Trigger::Sigma(s) => halves[active].ones() > s,
                Trigger::MaxInserts(n) => halves[active].inserts > n,
            };
            if exceeded {
                if counting {
                    out.cycles += 1;
                }
                let next = if phases == 2 { 1 - active } else { active };
                halves[next].clear();
                recycles += 1;
                cleared_at[next] = recycles;
                active = next;
                if c.retaining {
                    let p = positions(key, active, &cleared_at);
                    if halves[active].set(&p) > 0 {
                        halves[active].inserts = 1;
                    }
                    halves[active].recorded.insert(key);
                }
            }
        }
    }
    out
}

pub(crate) fn random_config(rng: &mut Rng) -> FilterConfig {
    let phases = 1 + rng.below(2) as u8;
    let half = 8 + rng.below(120);
    let memory = half * u64::from(phases);
    let hashing = if rng.chance(0.5) {
        Hashing::Colliding
    } else {
        Hashing::Distinct
    };
    // Up to 9 hashes: replay has a loop per k = 1..=8 and a generic one.
    let hashes = 1 + rng.below(9.min(half)) as u32;
    let mut c = FilterConfig::sigma_bounded(memory, hashes, 0);
    if rng.chance(0.7) {
        c.sigma = Some(rng.below(half));
    } else {
        c.sigma = None;
        c.max_inserts = Some(1 + rng.below(40));
    }
    c.phases = phases;
    c.hashing = hashing;
    c.retaining = rng.chance(0.5);
    c.copy_over = rng.chance(0.5);
    c.independent_halves = rng.chance(0.3);
    c.seed = rng.next_u64();
    // Per-cycle positions need independent halves (they are refused with shared ones).
    if rng.chance(0.3) && (phases == 1 || c.independent_halves) {
        c.positions = Some(Positions::PerCycle);
    }
    c
}

#[test]
fn replay_agrees_exactly_with_naive_reference() {
    let mut rng = Rng::seed(2024);
    let mut cycles_seen = 0;
    for case in 0..400 {
        let c = random_config(&mut rng);
        let universe = 5 + rng.below(300);
        let n = 500 + rng.below(2500) as usize;
        // Skewed keys: squaring a uniform variate favours small ids.
        let keys: Vec<u64> = (0..n)
            .map(|_| {
                let u = rng.next_f64();
                (u * u * universe as f64) as u64 ^ 0xABCD_0000
            })
            .collect();
        let warmup = rng.below(n as u64 / 2) as usize;
        let mut r = Replay::new(
            &c,
            ReplayOptions {
                warmup: warmup as u64,
                ..Default::default()
            },
        )
        .unwrap();
        r.run(keys.iter().map(|&k| rbf_data::message::Message::new(k)));
        let rep = r.report();
        let got = Counts {
            arrivals: rep.counts.arrivals,
            new: rep.counts.new,
            non_repeat: rep.counts.non_repeat,
            repeat: rep.counts.repeat,
            fp: rep.counts.false_positives,
            fnn: rep.counts.false_negatives,
            lucky: rep.counts.lucky,
            bit_setting: rep.counts.bit_setting,
            cycles: rep.cycles,
        };
        let want = reference(&c, &keys, warmup);
        assert_eq!(got, want, "case {case}: {}", c.describe());
        assert_eq!(rep.counts.repeat_classified_new, 0);
        cycles_seen += want.cycles;
    }
    assert!(
        cycles_seen > 1000,
        "the random configs must exercise recycling ({cycles_seen})"
    );
}
