//! Temporal-correlation diagnostic (FN paper §7.2): the average entropy of the
//! successor distributions of a first-order Markov chain over requests.
//!
//! For each message a with n_a >= 2 observed transitions a -> b (b the next arrival),
//! H_a = -sum_b p(b|a) ln p(b|a) is normalised by ln n_a, the largest entropy n_a
//! transitions can show (all successors different). So 0 means a is always followed
//! by the same message (a fully sequential trace) and 1 means no successor ever
//! repeated, as for independent draws from a large population. The diagnostic is the
//! mean of the normalised H_a over those messages; messages with a single transition
//! say nothing about predictability and are left out (their number is reported). The
//! paper reports values in [0, 1] (0.39 campus flows, 0.51 and 0.59 JEDI), so it
//! normalises too; it does not say how, hence this stated choice.
//!
//! Memory: one counter per distinct (a, b) pair, which for random traffic approaches
//! the trace length. The chain is therefore estimated on the longest prefix of the
//! measured trace with at most `pair_cap` distinct pairs; the prefix length is reported.
//! Each pair is one 16-byte slot (the pair, and its count beside its order of first
//! sight) in a table that stops growing at the cap's size: 85 MB at the default cap,
//! where a separate list of counts and a table doubled past the cap held 225 MB at
//! its peak (docs/PERFORMANCE.md, "The workload fit"; both measured in
//! docs/history/PERFORMANCE-log.md, "2026-12-02: compare at capture scale").

use serde::Serialize;

use rbf_foundations::slot_table::SlotTable;

/// Default bound on distinct (message, successor) pairs (21-43 bytes each as the
/// table grows, about 21 once it holds the cap).
pub const DEFAULT_PAIR_CAP: usize = 4_000_000;

/// Successor counts, keyed by compact message ids.
pub struct SuccessorCounts {
    /// Pair `a << 32 | b` -> its order of first sight (high half) and its count (low
    /// half, saturating): the order is kept so that the entropy sums each message's
    /// terms in the order they always were, bit for bit.
    pairs: SlotTable,
    cap: usize,
    previous: Option<u32>,
    transitions: u64,
    full: bool,
}

/// A pair's slot value with its count one higher (saturating, as it always was).
#[inline(always)]
fn bump(v: u64) -> u64 {
    if v as u32 == u32::MAX {
        v
    } else {
        v + 1
    }
}

#[inline(always)]
fn pair(a: u32, b: u32) -> u64 {
    (u64::from(a) << 32) | u64::from(b)
}

/// Pairs at most: the order of first sight must fit the slot's high half.
fn effective_cap(cap: usize) -> usize {
    cap.min(u32::MAX as usize)
}

/// The diagnostic's value and its coverage.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SuccessorEntropy {
    /// Mean normalised successor entropy (None when no message has two transitions).
    pub mean_entropy: Option<f64>,
    /// Messages with at least two transitions (the ones averaged).
    pub messages: u64,
    /// Messages with exactly one transition (left out).
    pub single_transition: u64,
    /// Transitions counted (the prefix length minus one).
    pub transitions: u64,
    pub distinct_pairs: u64,
    pub pair_cap: u64,
    /// The pair cap was reached: the estimate covers a prefix of the measured trace.
    pub truncated: bool,
}

impl SuccessorCounts {
    pub fn new(cap: usize) -> Self {
        SuccessorCounts {
            pairs: SlotTable::capped(effective_cap(cap) as u64),
            cap,
            previous: None,
            transitions: 0,
            full: false,
        }
    }

    /// Starts loading the table slot of the transition `a -> b` (a hint).
    #[inline(always)]
    pub fn prefetch(&self, a: u32, b: u32) {
        if !self.full {
            self.pairs.prefetch(pair(a, b));
        }
    }

    /// Whether the pair cap was reached: every later arrival is ignored.
    pub fn is_full(&self) -> bool {
        self.full
    }

    /// Records the arrival of the message with compact id `id`.
    #[inline]
    pub fn push(&mut self, id: u32) {
        if self.full {
            return;
        }
        if let Some(a) = self.previous {
            let p = pair(a, id);
            let order = self.pairs.len() as u64;
            if self.pairs.len() < effective_cap(self.cap) {
                let (v, fresh) = self.pairs.entry(p);
                *v = if fresh { order << 32 | 1 } else { bump(*v) };
            } else if let Some(v) = self.pairs.get_mut(p) {
                *v = bump(*v);
            } else {
                self.full = true;
                return;
            }
            self.transitions += 1;
        }
        self.previous = Some(id);
    }

    /// `[a, count]` per pair, in order of first sight (the order the sums always used).
    fn counts(&self) -> Vec<[u32; 2]> {
        let mut counts = vec![[0u32; 2]; self.pairs.len()];
        for &[p, v] in self.pairs.slots() {
            // Every order is below len: one slot each, written once.
            if let Some(c) = counts.get_mut((v >> 32) as usize) {
                *c = [(p >> 32) as u32, v as u32];
            }
        }
        counts
    }

    /// Computes the diagnostic; `ids` bounds the compact ids in use.
    pub fn entropy(&self, ids: usize) -> SuccessorEntropy {
        // Per message: n_a and sum_b c_ab ln c_ab, so that H_a = ln n_a - S_a / n_a.
        let mut n = vec![0u64; ids];
        let mut s = vec![0f64; ids];
        let counts = self.counts();
        for &[a, c] in &counts {
            let a = a as usize;
            if a < ids {
                n[a] += u64::from(c);
                let c = f64::from(c);
                s[a] += c * c.ln();
            }
        }
        let mut sum = 0.0;
        let mut messages = 0u64;
        let mut single = 0u64;
        for (&na, &sa) in n.iter().zip(&s) {
            match na {
                0 => {}
                1 => single += 1,
                _ => {
                    let na = na as f64;
                    let h = na.ln() - sa / na;
                    sum += (h / na.ln()).clamp(0.0, 1.0);
                    messages += 1;
                }
            }
        }
        SuccessorEntropy {
            mean_entropy: (messages > 0).then(|| sum / messages as f64),
            messages,
            single_transition: single,
            transitions: self.transitions,
            distinct_pairs: counts.len() as u64,
            pair_cap: self.cap as u64,
            truncated: self.full,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(ids: &[u32]) -> SuccessorEntropy {
        let mut s = SuccessorCounts::new(100);
        ids.iter().for_each(|&i| s.push(i));
        s.entropy(10)
    }

    #[test]
    fn sequential_is_zero_and_scattered_is_one() {
        // 0 1 2 0 1 2 ...: every message always has the same successor.
        let seq: Vec<u32> = (0..30).map(|i| i % 3).collect();
        assert_eq!(run(&seq).mean_entropy, Some(0.0));
        // 0 followed by 1, 2, 3, 4 once each: H = ln 4 = ln n_0.
        let e = run(&[0, 1, 0, 2, 0, 3, 0, 4]);
        assert_eq!(e.messages, 1);
        assert_eq!(e.single_transition, 3);
        assert!((e.mean_entropy.unwrap() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn cap_truncates_to_a_prefix() {
        let mut s = SuccessorCounts::new(2);
        for i in [0, 1, 2, 3, 0, 1] {
            s.push(i);
        }
        let e = s.entropy(4);
        assert!(e.truncated);
        assert_eq!(e.distinct_pairs, 2);
        assert_eq!(e.transitions, 2);
    }

    #[test]
    fn memory_stops_at_the_pair_cap_however_long_the_trace() {
        // A trace with ever more distinct pairs (a random walk over 5 000 ids): the
        // table holds the cap's pairs and no more, at the slots the cap needs.
        let cap = 10_000;
        let mut s = SuccessorCounts::new(cap);
        let mut x = 1u64;
        let mut after_cap = None;
        for step in 0..200_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            s.push((x >> 33) as u32 % 5_000);
            if s.full && after_cap.is_none() {
                after_cap = Some((step, s.pairs.allocated_bytes()));
            }
        }
        let (_, bytes) = after_cap.expect("the cap is reached");
        assert_eq!(s.pairs.allocated_bytes(), bytes);
        assert_eq!(
            bytes as u64,
            rbf_foundations::slot_table::slots_of(
                cap as u64,
                rbf_foundations::slot_table::SLOT_BYTES
            ) * rbf_foundations::slot_table::SLOT_BYTES
        );
        let e = s.entropy(5_000);
        assert_eq!(e.distinct_pairs, cap as u64);
        assert!(e.truncated);
    }

    #[test]
    fn counts_keep_the_order_of_first_sight() {
        // 0 -> 0 (pair key 0, stored beside the slots) first, then others: the counts
        // come back in the order the pairs were first seen, whatever their slots.
        let mut s = SuccessorCounts::new(100);
        for i in [0, 0, 3, 1, 0, 0, 3, 2, 2] {
            s.push(i);
        }
        assert_eq!(
            s.counts(),
            vec![[0, 2], [0, 2], [3, 1], [1, 1], [3, 1], [2, 1]]
        );
    }
}
