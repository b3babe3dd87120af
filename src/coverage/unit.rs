//! The study's units of work: one seed of a cell (a new trace and new hash positions,
//! replayed and fitted exactly as `rbf compare` does, every printed interval recorded),
//! or one long replay behind a cell's truth.

use std::time::Instant;

use super::cell::{Cell, EPS};
use super::record::{BandCheck, KnotInterval, Observed, Record, SeedRecord, TruthRecord};
use crate::compare::conservative_renewal;
use crate::error::Result;
use crate::filter::{mix64, FilterConfig};
use crate::fit::{Fit, FitOptions, Fitter};
use crate::message::{for_each_key_batch, KeyHasher};
use crate::model::fneg::{FnModel, RenewalOptions};
use crate::replay::{Replay, ReplayOptions, ReplayReport};
use crate::synth::{SynthConfig, Synthesizer};
use crate::workload::Workload;

/// A unit of work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Seed s (1-based) of cell c.
    Seed { cell: usize, seed: u64 },
    /// Hash seed h of long trace t of cell c.
    Truth { cell: usize, trace: u64, hash: u64 },
}

impl Unit {
    pub fn cell(&self) -> usize {
        match *self {
            Unit::Seed { cell, .. } | Unit::Truth { cell, .. } => cell,
        }
    }

    /// The key its record carries ([`Record::key`]).
    pub fn key(&self) -> (u8, u64, u64) {
        match *self {
            Unit::Seed { seed, .. } => (0, seed, 0),
            Unit::Truth { trace, hash, .. } => (1, trace, hash),
        }
    }
}

/// Truth traces and their hash seeds are drawn from seeds far from the study's.
const TRUTH_SEED_BASE: u64 = 1 << 40;

fn synthesizer(workload: &Workload, arrivals: u64, seed: u64) -> Result<Synthesizer> {
    Synthesizer::new(&SynthConfig {
        workload: workload.clone(),
        arrivals,
        seed,
        prologue: true,
    })
}

fn filter_with_seed(cell: &Cell, seed: u64) -> FilterConfig {
    let mut f = cell.filter.clone();
    f.seed = seed;
    f
}

/// Replays (and, with `fitter`, fits) one synthetic trace.
fn pass(
    synth: Synthesizer,
    replay: &mut Replay,
    mut fitter: Option<&mut Fitter>,
) {
    for_each_key_batch(synth.messages(KeyHasher::default()), |keys| {
        replay.run_keys(keys);
        if let Some(f) = fitter.as_deref_mut() {
            f.run_keys(keys);
        }
    });
}

/// The observed FN and FP count-instance as the CLI judges them.
fn observed(r: &ReplayReport) -> (Observed, Observed) {
    let c = r.confidence.as_ref();
    (
        Observed {
            estimate: r.fn_rate,
            interval: c.map(|c| c.fn_rate),
        },
        Observed {
            estimate: r.fp_rate_count_instance,
            interval: c.map(|c| c.fp_rate_count_instance),
        },
    )
}

/// One seed of a cell: a trace from seed `seed` through a filter hashed with `seed`,
/// replayed and fitted in one pass as `rbf compare` does.
pub fn run_seed(cell: &Cell, fingerprint: &str, seed: u64, level: f64) -> Result<Record> {
    let t = Instant::now();
    let c = &cell.config;
    let warmup = c.warmup();
    let mut replay = Replay::new(
        &filter_with_seed(cell, seed),
        ReplayOptions {
            warmup,
            confidence: level,
        },
    )?;
    let mut fitter = Fitter::new(FitOptions {
        warmup,
        confidence: level,
        ..FitOptions::default()
    })?;
    pass(
        synthesizer(&cell.workload, c.arrivals, seed)?,
        &mut replay,
        Some(&mut fitter),
    );
    let r = replay.report();
    let fit = fitter.finish()?;
    let (fn_rate, fp_count_instance) = observed(&r);
    let (fitted_bound, conservative_bound) = fitted_bounds(cell, &fit)?;
    let reuse = fit.reuse.as_ref();
    Ok(Record::Seed(SeedRecord {
        cell: c.name.clone(),
        fingerprint: fingerprint.to_string(),
        seed,
        arrivals: r.counts.arrivals,
        cycles: r.per_cycle.complete_cycles,
        hash_seeds: 1,
        fn_rate,
        fp_count_instance,
        fn_all_arrivals: r.fn_rate,
        p_repeat: fit.summary.p_repeat_interval,
        s_median: reuse.and_then(|e| {
            let n = e.summary.median_distance?;
            Some(KnotInterval {
                n,
                interval: e.summary.survival_at_median?,
                truth: cell.s(n),
            })
        }),
        band: reuse.map_or_else(BandCheck::default, |e| band_check(cell, &e.upper)),
        fitted_bound,
        conservative_bound,
        true_bound: cell.true_bound,
        true_p_repeat: c.p_repeat,
        seconds: t.elapsed().as_secs_f64(),
    }))
}

/// The renewal bound on the fitted workload: point estimate and conservative end.
fn fitted_bounds(cell: &Cell, fit: &Fit) -> Result<(Option<f64>, Option<f64>)> {
    if fit.reuse.is_none() {
        return Ok((None, None));
    }
    let opts = RenewalOptions {
        eps: EPS,
        ..RenewalOptions::default()
    };
    let point = FnModel::new(&cell.filter, &fit.workload()?, EPS)?
        .renewal(opts)?
        .fn_upper;
    let conservative = conservative_renewal(&cell.filter, &fit.conservative_workloads()?, EPS)?
        .map(|c| c.fn_upper);
    Ok((Some(point), conservative))
}

/// The upper profile (read as steps) against the true S at every knot.
fn band_check(cell: &Cell, upper: &crate::workload::ReuseProfile) -> BandCheck {
    let mut b = BandCheck {
        worst_shortfall: f64::NEG_INFINITY,
        ..BandCheck::default()
    };
    for (&n, &u) in upper.n.iter().zip(&upper.survival) {
        let s = cell.s(n);
        b.knots += 1;
        let short = s - u;
        b.worst_shortfall = b.worst_shortfall.max(short);
        // A relative slack for rounding: the true S is a sum over D ranks.
        if short > 1e-12 * s.max(1e-300) + 1e-15 {
            b.misses += 1;
            b.first_miss.get_or_insert(n);
        }
    }
    b
}

/// One long replay behind a cell's truth: trace `trace`, hash seed `hash`.
pub fn run_truth(
    cell: &Cell,
    fingerprint: &str,
    trace: u64,
    hash: u64,
    length: u64,
    level: f64,
) -> Result<Record> {
    let t = Instant::now();
    let c = &cell.config;
    let filter_seed = mix64(TRUTH_SEED_BASE + (trace << 20) + hash);
    let mut replay = Replay::new(
        &filter_with_seed(cell, filter_seed),
        ReplayOptions {
            warmup: c.warmup(),
            confidence: level,
        },
    )?;
    pass(
        synthesizer(&cell.workload, c.arrivals * length, TRUTH_SEED_BASE + trace)?,
        &mut replay,
        None,
    );
    let r = replay.report();
    let conf = r.confidence.as_ref();
    Ok(Record::Truth(TruthRecord {
        cell: c.name.clone(),
        fingerprint: fingerprint.to_string(),
        trace,
        hash,
        arrivals: r.counts.arrivals,
        cycles: r.per_cycle.complete_cycles,
        fn_rate: conf.map_or(r.fn_rate, |c| c.fn_rate.estimate),
        fp_count_instance: conf.map_or(r.fp_rate_count_instance, |c| {
            c.fp_rate_count_instance.estimate
        }),
        fn_all_arrivals: r.fn_rate,
        seconds: t.elapsed().as_secs_f64(),
    }))
}
