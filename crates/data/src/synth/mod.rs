//! Synthetic traces drawn from the FN paper's arrival model (§3.1): with probability
//! p_r an arrival repeats the message at a rank drawn from Q; otherwise a new message
//! enters the ranking at a rank drawn from zeta, pushing lower ranks down and evicting
//! the message at rank D.
//!
//! The model's D messages are "previously seen". A trace starts from nothing, so by
//! default the generator first emits a *prologue*: each of the D initial messages once,
//! in random order. Replaying with `--warmup` at least the prologue length (plus a few
//! cycles for the filter to reach steady state) measures the model's steady state.

mod alias;
pub mod command;
mod ranking;
mod rng;

pub use alias::AliasTable;
pub use ranking::Ranking;
pub use rng::Rng;

use std::io::Write;

use crate::message::{KeyHasher, Message, Timestamp};
use crate::workload::{Placement, Workload};
use rbf_foundations::error::{Error, Problem, Result};

/// How an arrival was generated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// First sight of one of the D initial messages.
    Prologue,
    /// A draw from Q.
    Repeat { rank: usize },
    /// A new message placed at `rank`.
    New { rank: usize },
}

/// One synthetic arrival: an object id (as written to the trace) and how it came about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SynthArrival {
    pub index: u64,
    pub object: u64,
    pub origin: Origin,
}

enum PlacementSampler {
    Uniform,
    Top,
    Bottom,
    Table(AliasTable),
}

/// Settings of a synthetic trace.
#[derive(Clone, Debug)]
pub struct SynthConfig {
    pub workload: Workload,
    /// Arrivals after the prologue.
    pub arrivals: u64,
    pub seed: u64,
    pub prologue: bool,
}

/// An endless-until-`arrivals` iterator of synthetic arrivals.
pub struct Synthesizer {
    ranking: Ranking,
    q: AliasTable,
    placement: PlacementSampler,
    p_repeat: f64,
    rng: Rng,
    next_id: u64,
    prologue: Vec<u64>,
    remaining: u64,
    index: u64,
}

impl Synthesizer {
    pub fn new(config: &SynthConfig) -> Result<Self> {
        let w = &config.workload;
        w.validate()?;
        let q = w.repeat_distribution()?;
        let d = q.len();
        if d > u32::MAX as usize {
            return Err(Error::setting(
                "distinct",
                Problem::rule("at most 2^32 - 1 messages"),
            ));
        }
        let placement = match &w.placement {
            Placement::Uniform => PlacementSampler::Uniform,
            Placement::Top => PlacementSampler::Top,
            Placement::Bottom => PlacementSampler::Bottom,
            Placement::Explicit(_) | Placement::Segments(_) | Placement::Mixture { .. } => {
                PlacementSampler::Table(AliasTable::new(&w.placement_distribution()?)?)
            }
        };
        let mut rng = Rng::seed(config.seed);
        let prologue = if config.prologue {
            // Fisher-Yates; reversed because it is consumed with pop().
            let mut p: Vec<u64> = (0..d as u64).collect();
            for i in (1..d).rev() {
                let j = rng.below(i as u64 + 1) as usize;
                p.swap(i, j);
            }
            p
        } else {
            Vec::new()
        };
        Ok(Synthesizer {
            ranking: Ranking::new(0..d as u64),
            q: AliasTable::new(&q)?,
            placement,
            p_repeat: w.p_repeat,
            rng,
            next_id: d as u64,
            prologue,
            remaining: config.arrivals,
            index: 0,
        })
    }

    /// Length of the prologue still to come (D at the start, 0 without one).
    pub fn prologue_len(&self) -> usize {
        self.prologue.len()
    }

    /// The current ranking (most popular first).
    pub fn ranking(&self) -> &Ranking {
        &self.ranking
    }

    fn place(&mut self) -> usize {
        let d = self.ranking.len();
        match &self.placement {
            PlacementSampler::Uniform => self.rng.below(d as u64) as usize,
            PlacementSampler::Top => 0,
            PlacementSampler::Bottom => d - 1,
            PlacementSampler::Table(t) => t.sample(&mut self.rng),
        }
    }

    /// Maps arrivals to messages keyed as a reader of the written trace would key them
    /// (the hash of the decimal object id).
    pub fn messages(self, hasher: KeyHasher) -> impl Iterator<Item = Message> {
        let mut buf = itoa_buf();
        self.map(move |a| {
            Message::at(
                hasher.hash(format_u64(a.object, &mut buf)),
                Timestamp::from_secs(a.index),
            )
        })
    }
}

impl Iterator for Synthesizer {
    type Item = SynthArrival;

    fn next(&mut self) -> Option<SynthArrival> {
        let index = self.index;
        if let Some(object) = self.prologue.pop() {
            self.index += 1;
            return Some(SynthArrival {
                index,
                object,
                origin: Origin::Prologue,
            });
        }
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        self.index += 1;
        if self.rng.chance(self.p_repeat) {
            let rank = self.q.sample(&mut self.rng);
            Some(SynthArrival {
                index,
                object: self.ranking.get(rank),
                origin: Origin::Repeat { rank },
            })
        } else {
            let rank = self.place();
            let object = self.next_id;
            self.next_id += 1;
            self.ranking.insert(rank, object);
            Some(SynthArrival {
                index,
                object,
                origin: Origin::New { rank },
            })
        }
    }
}

/// Writes arrivals as a JEDI/TRAGEN request log: `timestamp,object_id,object_size`, one
/// per line, no header. The timestamp is the arrival index in seconds; the size (KB) is
/// a fixed pseudo-random function of the object id, as replay and fitting ignore it.
pub fn write_request_log<W: Write>(
    arrivals: impl Iterator<Item = SynthArrival>,
    out: W,
) -> std::io::Result<u64> {
    let mut out = std::io::BufWriter::with_capacity(1 << 20, out);
    let mut n = 0;
    for a in arrivals {
        let size = 1 + crate::filter::mix64(a.object) % 2048;
        writeln!(out, "{},{},{}", a.index, a.object, size)?;
        n += 1;
    }
    out.flush()?;
    Ok(n)
}

/// Sizes of the request log [`write_request_log`] writes for `arrivals` draws of
/// `workload` (plus the prologue of its D messages when `prologue`), in bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogSize {
    /// The log is at least this long (barring a 6-sigma shortfall of new messages):
    /// every line's index exactly, the ids of the prologue and of the new messages,
    /// and at least one digit for a repeat's id and for the size.
    pub at_least: f64,
    /// About this long: repeats' ids as long as the largest id, the sizes' digits at
    /// their average.
    pub about: f64,
}

/// The size of a request log before writing it (for the up-front disk check).
pub fn request_log_size(workload: &Workload, arrivals: u64, prologue: bool) -> LogSize {
    let d = workload.distinct() as f64;
    let first = if prologue { d } else { 0.0 };
    let lines = first + arrivals as f64;
    let new_rate = 1.0 - workload.p_repeat;
    let a = arrivals as f64;
    let new_low = (new_rate * a - 6.0 * (a * new_rate * workload.p_repeat).sqrt()).max(0.0);
    let repeats = (a - new_low).max(0.0);
    let index = digits_below(lines);
    let prologue_ids = digits_below(first);
    let new_ids = digits_below(d + new_low) - digits_below(d);
    // 2 commas, a line break; at least a digit for each repeat's id and each size.
    let at_least = index + prologue_ids + new_ids + repeats + lines * 4.0;
    let largest_id = d + new_rate * a;
    // Sizes 1..=2048, uniformly: 3.46 digits on average.
    const SIZE_DIGITS: f64 = (9.0 + 2.0 * 90.0 + 3.0 * 900.0 + 4.0 * 1049.0) / 2048.0;
    let about = index
        + prologue_ids
        + new_ids
        + repeats * digits_of(largest_id)
        + lines * (3.0 + SIZE_DIGITS);
    LogSize { at_least, about }
}

/// Decimal digits of the whole number `x` (>= 1 digit).
fn digits_of(x: f64) -> f64 {
    let mut digits = 1.0;
    let mut limit = 10.0;
    while x >= limit && digits < 400.0 {
        digits += 1.0;
        limit *= 10.0;
    }
    digits
}

/// Total decimal digits of the whole numbers 0..n (n need not be whole: its floor).
fn digits_below(n: f64) -> f64 {
    let n = n.floor().max(0.0);
    let mut total = 0.0;
    let (mut lo, mut digits) = (0.0_f64, 1.0);
    while lo < n && digits < 400.0 {
        let hi = if digits == 1.0 { 10.0 } else { lo * 10.0 };
        total += (hi.min(n) - lo) * digits;
        lo = hi;
        digits += 1.0;
    }
    total
}

fn itoa_buf() -> [u8; 20] {
    [0; 20]
}

/// Decimal text of `x` in `buf`, without allocating.
pub fn format_u64(mut x: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (x % 10) as u8;
        x /= 10;
        if x == 0 {
            break;
        }
    }
    &buf[i..]
}

#[cfg(test)]
mod tests;
