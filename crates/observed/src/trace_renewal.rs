//! The renewal argument run on the trace's own recycles: an FN upper bound for one
//! trace, whatever its workload does (regime switches, scans, packet trains), with no
//! stationarity assumed. docs/TRACE-BOUND.md has the argument; in short:
//!
//! * Call an *attempt* an arrival whose message is not in the active array's window
//!   (its previous occurrence, if any, is before the active cycle began). Only attempts
//!   touch the active array: they either find all k bits set (lucky, or an FP when new)
//!   or set bits. A later arrival of the message in the same cycle finds its bits set.
//! * Under the hash model every Bloom filter analysis uses (the k positions of distinct
//!   messages independent and uniform), the bit count moves over *attempts* as the
//!   tau chain of the FP paper (§IV-C1, eqs. 4 and 11), whatever the messages are:
//!   the cycle length counted in attempts is a renewal process of its own, independent
//!   of the workload. The trace decides only *where* the attempts fall.
//! * A false negative is an attempt by a message seen before that is not lucky and,
//!   with two phases, was not recorded in the frozen half either: its previous occurrence
//!   is before the *previous* cycle began (else it is in the frozen half and copied
//!   over). Ignoring luck in the frozen half only raises the count.
//!
//! So the FN count of a trace is a function of the trace and of the attempt chain's
//! random path alone. [`TraceRenewal`] follows `replicates` independent paths of that
//! chain over the trace in one pass (exact transition probabilities, sampled hash by
//! hash), and [`TraceBound`] is the mean count with its upper confidence limit over the
//! paths, and the 99 % prediction limit of one filter's count: an upper bound, at that
//! confidence, of the FN count a filter has on this trace. It needs no fitted model and holds on
//! non-stationary traffic; it reads the trace, so it exists where the trace is read
//! (`rbf compare`, `rbf run` on a trace).
//!
//! Memory: one last-seen arrival per distinct key, and a few words per path.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use serde::Serialize;

use rbf_data::filter::{mix64, FilterConfig, Hashing};
use rbf_data::synth::Rng;

/// Independent paths of the attempt chain: enough that the mean's standard error is
/// a small part of the bound (the 99 % limit adds 2.74 standard errors at 32 paths).
pub const REPLICATES: usize = 32;

/// The paths' seed: fixed, so the bound is the same on every run.
const SEED: u64 = 0x7261_6365_5f72_656e;

/// Student's t quantile at 0.995 with `REPLICATES - 1` = 31 degrees of freedom: the
/// one-sided 99.5 % point (the upper end of a two-sided 99 % interval).
const T_995_31: f64 = 2.744;

/// Keys are already hashed (or are ids): one multiply-mix spreads them for the table.
#[derive(Default)]
struct MixHasher(u64);

impl Hasher for MixHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = mix64(self.0 ^ u64::from(*b));
        }
    }
    fn write_u64(&mut self, k: u64) {
        self.0 = mix64(k);
    }
}

/// One path of the attempt chain over the trace.
#[derive(Clone, Debug)]
struct Path {
    rng: Rng,
    /// Arrival index at which the active cycle began.
    start: u64,
    /// Arrival index at which the previous cycle began (two phases: the frozen half's).
    previous_start: u64,
    /// No recycle yet: the frozen half is empty.
    first_cycle: bool,
    /// Bits set in the active array.
    bits: u64,
    /// Bit-setting insertions in the active cycle.
    inserts: u64,
    /// Measured false negatives (attempts by old messages, not lucky, outside the halves).
    false_negatives: u64,
    /// Recycles at measured arrivals.
    recycles: u64,
    /// The running cycle's first arrival and its measured false negatives so far.
    cycle_first: u64,
    cycle_false_negatives: u64,
    /// Sums over complete cycles (begun and ended at measured arrivals), as the replay's
    /// observed rates are ratios of sums over its complete cycles.
    complete_false_negatives: u64,
    complete_arrivals: u64,
}

/// What the filter's recycling depends on, read from a [`FilterConfig`].
#[derive(Clone, Copy, Debug)]
struct Chain {
    /// Bits per array (M, or M/2 per half).
    m: u64,
    k: u32,
    sigma: Option<u64>,
    max_inserts: Option<u64>,
    distinct: bool,
    retaining: bool,
    two_phases: bool,
}

impl Chain {
    /// New bits set by one message's k positions in an array with `bits` set, drawn
    /// hash by hash with the tau chain's probabilities (FP eqs. 4 and 11).
    #[inline]
    fn new_bits(&self, bits: u64, rng: &mut Rng) -> u64 {
        let mut set = bits;
        for h in 0..u64::from(self.k) {
            let (free, out_of) = if self.distinct {
                // Without replacement: h of the message's positions are taken (set).
                (self.m - set, self.m - h)
            } else {
                (self.m - set, self.m)
            };
            if free > 0 && rng.below(out_of) < free {
                set += 1;
            }
        }
        set - bits
    }

    fn recycles(&self, bits: u64, inserts: u64) -> bool {
        match (self.sigma, self.max_inserts) {
            (Some(s), _) => bits > s,
            (None, Some(n)) => inserts > n,
            (None, None) => false,
        }
    }
}

/// The attempt chain's paths over one trace, fed in arrival order.
pub struct TraceRenewal {
    chain: Chain,
    warmup: u64,
    last: HashMap<u64, u64, BuildHasherDefault<MixHasher>>,
    paths: Vec<Path>,
    /// The latest cycle start of any path: an arrival whose message was seen at or after
    /// it is in every path's cycle, an attempt on none (most arrivals of packet traces).
    latest_start: u64,
    arrivals: u64,
}

/// The bound for one trace and filter.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceBound {
    /// Measured arrivals (after the warm-up).
    pub measured: u64,
    /// Mean FN count over the paths (every measured arrival).
    pub mean_count: f64,
    /// The rates are over each path's complete cycles (begun and ended at measured
    /// arrivals), as the replay's observed rates are; false: over every measured arrival
    /// (some path has no complete cycle).
    pub over_complete_cycles: bool,
    /// The FN rate's standard deviation between paths.
    pub sd: f64,
    /// Mean recycles at measured arrivals over the paths.
    pub mean_recycles: f64,
    /// Paths followed.
    pub replicates: usize,
    /// FN per arrival: the mean over the paths (the expected rate over hash positions).
    pub estimate: f64,
    /// The bound: the 99 % prediction limit of one filter's FN per arrival on this
    /// trace (a filter's own count stays below it with 99 % probability over hash
    /// positions, so the mean of several filters does too), the larger of the limits
    /// for the rate over complete cycles and over every measured arrival: it bounds
    /// the rate however the replay states it (over every measured arrival when it has
    /// too few cycles for an interval). [`TraceBound::stated`] picks the limit for the
    /// rate a replay states.
    pub upper: f64,
    /// The 99 % prediction limit for the rate over complete cycles alone: the bound for
    /// a replay that states that rate (one with enough cycles for an interval).
    pub upper_complete_cycles: f64,
    /// The 99 % interval of the mean over hash positions (the expected FN per arrival).
    pub mean_upper: f64,
    pub lower: f64,
}

impl TraceRenewal {
    /// The paths for `filter` (None where the argument does not cover the variant: a
    /// two-phase filter without copy-over, whose active half skips the frozen half's
    /// messages), measuring after `warmup` arrivals.
    pub fn new(filter: &FilterConfig, warmup: u64) -> Option<TraceRenewal> {
        let two = filter.phases == 2;
        if two && !filter.copy_over {
            return None;
        }
        let m = if two {
            filter.half_memory()
        } else {
            filter.memory
        };
        if m == 0 || filter.hashes == 0 {
            return None;
        }
        let chain = Chain {
            m,
            k: filter.hashes,
            sigma: filter.sigma,
            max_inserts: filter.max_inserts,
            distinct: matches!(filter.hashing, Hashing::Distinct),
            retaining: filter.retaining,
            two_phases: two,
        };
        let paths = (0..REPLICATES as u64)
            .map(|i| Path {
                rng: Rng::seed(SEED ^ mix64(i + 1)),
                start: 0,
                previous_start: 0,
                first_cycle: true,
                bits: 0,
                inserts: 0,
                false_negatives: 0,
                recycles: 0,
                cycle_first: 0,
                cycle_false_negatives: 0,
                complete_false_negatives: 0,
                complete_arrivals: 0,
            })
            .collect();
        Some(TraceRenewal {
            chain,
            warmup,
            last: HashMap::default(),
            paths,
            latest_start: 0,
            arrivals: 0,
        })
    }

    /// Expects about `distinct` keys (sizes the last-seen table once).
    pub fn expect_distinct(&mut self, distinct: u64) {
        let want = usize::try_from(distinct).unwrap_or(usize::MAX);
        self.last.reserve(want.saturating_sub(self.last.len()));
    }

    /// The next arrivals, in order.
    pub fn run_keys(&mut self, keys: &[u64]) {
        for &key in keys {
            let t = self.arrivals;
            self.arrivals += 1;
            let previous = self.last.insert(key, t);
            if previous.is_some_and(|p| p >= self.latest_start) {
                continue;
            }
            for path in &mut self.paths {
                step(&self.chain, path, t, previous, self.warmup);
                self.latest_start = self.latest_start.max(path.start);
            }
        }
    }

    /// The bound (None before any measured arrival).
    pub fn finish(&self) -> Option<TraceBound> {
        let measured = self.arrivals.checked_sub(self.warmup).filter(|&n| n > 0)?;
        let n = self.paths.len() as f64;
        // Each path's rate as the replay states its own: over its complete cycles, or,
        // without one, over every measured arrival.
        let complete = self.paths.iter().all(|p| p.complete_arrivals > 0);
        let over_all = |p: &Path| p.false_negatives as f64 / measured as f64;
        let rates: Vec<f64> = self
            .paths
            .iter()
            .map(|p| {
                if complete {
                    p.complete_false_negatives as f64 / p.complete_arrivals as f64
                } else {
                    over_all(p)
                }
            })
            .collect();
        let (mean, sd) = mean_sd(&rates);
        // The bound is for a filter's own rate, not only for the mean: a 99 % prediction
        // limit of one more path (mean + t sd sqrt(1 + 1/n)); the mean's own interval is
        // mean -+ t sd / sqrt(n).
        let half = T_995_31 * sd / n.sqrt();
        let limit = |mean: f64, sd: f64| mean + T_995_31 * sd * (1.0 + 1.0 / n).sqrt();
        // A replay with too few cycles for an interval states its rate over every
        // measured arrival instead, partial cycles included (with one recycle, the
        // complete cycle is the first, which has no false negative, and every one falls
        // in the partial cycle after it): the bound covers the rate stated either way.
        let all: Vec<f64> = self.paths.iter().map(over_all).collect();
        let (mean_all, sd_all) = mean_sd(&all);
        let upper = limit(mean, sd).max(limit(mean_all, sd_all));
        let mean_count = self
            .paths
            .iter()
            .map(|p| p.false_negatives as f64)
            .sum::<f64>()
            / n;
        Some(TraceBound {
            measured,
            mean_count,
            over_complete_cycles: complete,
            sd,
            mean_recycles: self.paths.iter().map(|p| p.recycles as f64).sum::<f64>() / n,
            replicates: self.paths.len(),
            estimate: mean,
            upper: upper.min(1.0),
            upper_complete_cycles: limit(mean, sd).min(1.0),
            mean_upper: (mean + half).min(1.0),
            lower: (mean - half).max(0.0),
        })
    }
}

impl TraceBound {
    /// The bound for the rate a replay states: over its complete cycles when it has an
    /// interval (`complete_cycles`) and every path had a complete cycle, else the
    /// larger limit ([`TraceBound::upper`]).
    pub fn stated(&self, complete_cycles: bool) -> f64 {
        if complete_cycles && self.over_complete_cycles {
            self.upper_complete_cycles
        } else {
            self.upper
        }
    }

    /// The bound for the mean rate of several traces (a synthetic source's seeds): the
    /// mean of each trace's, as the observed rate is the mean of theirs (None for none).
    pub fn mean_of(bounds: &[TraceBound]) -> Option<TraceBound> {
        let first = bounds.first()?;
        let n = bounds.len() as f64;
        let mean = |f: fn(&TraceBound) -> f64| bounds.iter().map(f).sum::<f64>() / n;
        Some(TraceBound {
            measured: bounds.iter().map(|b| b.measured).sum(),
            mean_count: mean(|b| b.mean_count),
            over_complete_cycles: bounds.iter().all(|b| b.over_complete_cycles),
            sd: mean(|b| b.sd),
            mean_recycles: mean(|b| b.mean_recycles),
            replicates: first.replicates,
            estimate: mean(|b| b.estimate),
            upper: mean(|b| b.upper),
            upper_complete_cycles: mean(|b| b.upper_complete_cycles),
            mean_upper: mean(|b| b.mean_upper),
            lower: mean(|b| b.lower),
        })
    }
}

/// The mean and the sample standard deviation of `x` (at least two values).
fn mean_sd(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

/// One arrival on one path: `previous` is the message's last arrival before `t`.
#[inline]
fn step(chain: &Chain, path: &mut Path, t: u64, previous: Option<u64>, warmup: u64) {
    let measured = t >= warmup;
    let attempt = previous.is_none_or(|p| p < path.start);
    if !attempt {
        return;
    }
    let new = chain.new_bits(path.bits, &mut path.rng);
    if new == 0 {
        // All k bits set: classified a repeat (lucky, or an FP when new); nothing set.
        return;
    }
    if let (Some(p), true) = (previous, measured) {
        // Two phases: a message of the previous cycle is in the frozen half (found there,
        // copied over); only an older one is a non-repeat.
        let non_repeat = !chain.two_phases || path.first_cycle || p < path.previous_start;
        if non_repeat {
            path.false_negatives += 1;
            path.cycle_false_negatives += 1;
        }
    }
    path.bits += new;
    path.inserts += 1;
    if chain.recycles(path.bits, path.inserts) {
        if measured {
            path.recycles += 1;
        }
        // The trigger is the ending cycle's last arrival (retained or not).
        if path.cycle_first >= warmup {
            path.complete_false_negatives += path.cycle_false_negatives;
            path.complete_arrivals += t + 1 - path.cycle_first;
        }
        path.cycle_first = t + 1;
        path.cycle_false_negatives = 0;
        path.first_cycle = false;
        path.previous_start = path.start;
        if chain.retaining {
            // The trigger is inserted into the emptied array: recorded in the new cycle.
            path.start = t;
            path.bits = chain.new_bits(0, &mut path.rng);
            path.inserts = 1;
        } else {
            path.start = t + 1;
            path.bits = 0;
            path.inserts = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_draws_the_tau_law() {
        // One hash into m bits with l set: a new bit with probability (m - l)/m.
        let chain = Chain {
            m: 10,
            k: 1,
            sigma: Some(9),
            max_inserts: None,
            distinct: false,
            retaining: false,
            two_phases: false,
        };
        let mut rng = Rng::seed(1);
        let n = 100_000;
        let hits: u64 = (0..n).map(|_| chain.new_bits(7, &mut rng)).sum();
        let p = hits as f64 / n as f64;
        // 0.3 with a standard error of 0.00145: 5 of them either side.
        assert!((p - 0.3).abs() < 0.0073, "{p}");
    }
}
