//! The study's units of work: one seed of a cell (a new trace and new hash positions,
//! replayed and fitted exactly as `rbf compare` does, every printed interval recorded),
//! or one long replay behind a cell's truth.

use std::time::Instant;

use super::cell::{Cell, EPS};
use super::record::{
    BandCheck, FitRecord, KnotInterval, ObservedRecord, Record, TruthRecord, Variant,
};
use rbf_data::filter::{mix64, FilterConfig, Positions};
use rbf_data::message::{for_each_key_batch, KeyHasher};
use rbf_data::synth::{SynthConfig, Synthesizer};
use rbf_data::workload::Workload;
use rbf_foundations::error::Result;
use rbf_foundations::progress::{check_interrupt, Progress};
use rbf_judge::compare::judge::conservative_renewal;
use rbf_judge::compare::{Observed, Rate};
use rbf_observed::fit::{Fit, FitOptions, Fitter};
use rbf_observed::replay::{confidence, Replay, ReplayOptions, Replays, DEFAULT_HASH_SEEDS};
use rbf_predicted::model::false_negative::{FnModel, RenewalOptions};

/// A unit of work.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Seed s (1-based) of cell c: the replays (observed intervals).
    Observed { cell: usize, seed: u64 },
    /// Seed s of cell c: the fit (its intervals and the conservative bound).
    Fit { cell: usize, seed: u64 },
    /// Hash seeds `hashes` of long trace t of cell c, replayed in one pass.
    Truth {
        cell: usize,
        trace: u64,
        hashes: std::ops::Range<u64>,
    },
    /// Long trace t of cell c through a filter that draws new positions per cycle.
    Salted { cell: usize, trace: u64 },
    /// Seed s of cell c through filters with per-cycle positions.
    PerCycle { cell: usize, seed: u64 },
}

impl Unit {
    pub fn cell(&self) -> usize {
        match *self {
            Unit::Observed { cell, .. }
            | Unit::Fit { cell, .. }
            | Unit::Truth { cell, .. }
            | Unit::Salted { cell, .. }
            | Unit::PerCycle { cell, .. } => cell,
        }
    }

    /// The keys its records carry ([`Record::key`]).
    pub fn keys(&self) -> Vec<(u8, u64, u64)> {
        match self {
            Unit::Observed { seed, .. } => vec![(0, *seed, 0)],
            Unit::Fit { seed, .. } => vec![(3, *seed, 0)],
            Unit::Truth { trace, hashes, .. } => hashes.clone().map(|h| (1, *trace, h)).collect(),
            Unit::Salted { trace, .. } => vec![(2, *trace, 0)],
            Unit::PerCycle { seed, .. } => vec![(4, *seed, 0)],
        }
    }
}

/// Truth traces and their hash seeds are drawn from seeds far from the study's.
const TRUTH_SEED_BASE: u64 = 1 << 40;

/// A unit's synthetic trace, counted on the study's bar as it is drawn (each arrival
/// `weight` units: the filters it goes through) and cut short by Ctrl-C: a long truth
/// pass (minutes) stops within a batch, and the unit then returns [`check_interrupt`]'s
/// error instead of a record, so nothing partial is recorded.
fn stream<'p>(
    workload: &Workload,
    arrivals: u64,
    seed: u64,
    (progress, weight): (&'p Progress, f64),
) -> Result<impl Iterator<Item = rbf_data::message::Message> + 'p> {
    let messages = Synthesizer::new(&SynthConfig {
        workload: workload.clone(),
        arrivals,
        seed,
        prologue: true,
    })?
    .messages(KeyHasher::default());
    Ok(progress.track_weighted(messages, weight))
}

fn filter_with_seed(cell: &Cell, seed: u64) -> FilterConfig {
    let mut f = cell.filter.clone();
    f.seed = seed;
    f
}

/// Hash seeds of the variants a seed reports (the default among them).
pub const VARIANTS: [u32; 4] = [1, 2, 4, 8];

/// The variants of a seed replayed with per-cycle positions: a filter's positions no
/// longer persist, so fewer filters should do.
pub const PER_CYCLE_VARIANTS: [u32; 3] = [1, 2, 4];

/// One seed of a cell, observed: the trace of seed `seed` through filters hashed with
/// `seed` and the further hash seeds, as `rbf compare` replays it (with `positions`
/// per cycle: the same, each filter drawing new positions at every recycle).
pub fn run_observed(
    cell: &Cell,
    fingerprint: &str,
    (seed, positions): (u64, Positions),
    level: f64,
    progress: (&Progress, f64),
) -> Result<Record> {
    let t = Instant::now();
    let c = &cell.config;
    let options = ReplayOptions {
        warmup: c.warmup(),
        confidence: level,
    };
    let per_cycle = positions == Positions::PerCycle;
    let variants: &[u32] = if per_cycle {
        &PER_CYCLE_VARIANTS
    } else {
        &VARIANTS
    };
    let most = variants
        .iter()
        .copied()
        .max()
        .unwrap_or(1)
        .max(DEFAULT_HASH_SEEDS);
    let mut filter = filter_with_seed(cell, seed);
    filter.positions = Some(positions);
    let mut replay = Replays::sized(&filter, options, most, None)?;
    replay.run(stream(&cell.workload, c.arrivals, seed, progress)?);
    check_interrupt()?;
    let first = replay.first_report();
    let measured = replay.measured();
    let stats = replay.cycle_stats();
    let variants = variants
        .iter()
        .map(|&n| {
            let mut r = first.clone();
            r.confidence = confidence(&stats[..n as usize], measured, level);
            Variant {
                hash_seeds: u64::from(n),
                fn_rate: Observed::of_one(&r, Rate::Fn).into(),
                fp_count_instance: Observed::of_one(&r, Rate::FpCountInstance).into(),
            }
        })
        .collect();
    Ok(Record::Observed(ObservedRecord {
        cell: c.name.clone(),
        fingerprint: fingerprint.to_string(),
        seed,
        per_cycle,
        arrivals: first.counts.arrivals,
        cycles: first.per_cycle.complete_cycles,
        variants,
        fn_all_arrivals: first.fn_rate,
        seconds: t.elapsed().as_secs_f64(),
    }))
}

/// One seed of a cell, fitted: the trace of seed `seed` as `rbf compare` fits it, and
/// the renewal bounds from the fit.
pub fn run_fit(
    cell: &Cell,
    fingerprint: &str,
    seed: u64,
    level: f64,
    progress: (&Progress, f64),
) -> Result<Record> {
    let t = Instant::now();
    let c = &cell.config;
    // The record reads p_r, the reuse profile and the renewal bounds from it, none of
    // which uses Q: its fit (seconds per seed) is left out.
    let mut fitter = Fitter::new(FitOptions {
        warmup: c.warmup(),
        confidence: level,
        popularity: false,
        ..FitOptions::default()
    })?;
    fitter.run(stream(&cell.workload, c.arrivals, seed, progress)?);
    check_interrupt()?;
    let fit = fitter.finish()?;
    let (fitted_bound, conservative_bound) = fitted_bounds(cell, &fit)?;
    let reuse = fit.reuse.as_ref();
    Ok(Record::Fitted(FitRecord {
        cell: c.name.clone(),
        fingerprint: fingerprint.to_string(),
        seed,
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
        .map(|(c, _)| c.fn_upper);
    Ok((Some(point), conservative))
}

/// The upper profile (read as steps) against the true S at every knot.
fn band_check(cell: &Cell, upper: &rbf_data::workload::ReuseProfile) -> BandCheck {
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

/// Long replays behind a cell's truth: trace `trace`, `length` times a seed's arrivals,
/// through one filter per hash seed in `hashes`, in one pass.
pub fn run_truth(
    cell: &Cell,
    fingerprint: &str,
    trace: u64,
    hashes: std::ops::Range<u64>,
    length: u64,
    level: f64,
    progress: (&Progress, f64),
) -> Result<Vec<Record>> {
    let t = Instant::now();
    let c = &cell.config;
    let options = ReplayOptions {
        warmup: c.warmup(),
        confidence: level,
    };
    let mut replays = hashes
        .clone()
        .map(|h| {
            let seed = mix64(TRUTH_SEED_BASE + (trace << 20) + h);
            Replay::new(&filter_with_seed(cell, seed), options)
        })
        .collect::<Result<Vec<_>>>()?;
    for_each_key_batch(
        stream(
            &cell.workload,
            c.arrivals * length,
            TRUTH_SEED_BASE + trace,
            progress,
        )?,
        |keys| replays.iter_mut().for_each(|r| r.run_keys(keys)),
    );
    check_interrupt()?;
    let seconds = t.elapsed().as_secs_f64() / replays.len() as f64;
    Ok(hashes
        .zip(&replays)
        .map(|(hash, replay)| {
            let r = replay.report();
            let (batch_arrivals, batches) = replay.cycle_stats().time_batches();
            Record::Truth(TruthRecord {
                cell: c.name.clone(),
                fingerprint: fingerprint.to_string(),
                salted: false,
                trace,
                hash,
                arrivals: r.counts.arrivals,
                cycles: r.per_cycle.complete_cycles,
                fn_rate: Observed::of_one(&r, Rate::Fn).rate,
                fp_count_instance: Observed::of_one(&r, Rate::FpCountInstance).rate,
                fn_all_arrivals: r.fn_rate,
                batch_arrivals,
                batches: batches.to_vec(),
                true_bound: cell.true_bound,
                seconds,
            })
        })
        .collect())
}

/// Long trace `trace` (as [`run_truth`]'s) through a filter with per-cycle positions
/// ([`Positions::PerCycle`]): the process the models describe.
pub fn run_salted(
    cell: &Cell,
    fingerprint: &str,
    trace: u64,
    length: u64,
    progress: (&Progress, f64),
) -> Result<Record> {
    let t = Instant::now();
    let c = &cell.config;
    let seed = mix64(TRUTH_SEED_BASE + (trace << 20) + 0xfff);
    let mut filter = filter_with_seed(cell, seed);
    filter.positions = Some(Positions::PerCycle);
    let options = ReplayOptions {
        warmup: c.warmup(),
        confidence: 0.99,
    };
    let mut replay = Replay::new(&filter, options)?;
    for_each_key_batch(
        stream(
            &cell.workload,
            c.arrivals * length,
            TRUTH_SEED_BASE + trace,
            progress,
        )?,
        |keys| replay.run_keys(keys),
    );
    check_interrupt()?;
    let (batch_arrivals, batches) = replay.cycle_stats().time_batches();
    let totals = replay.cycle_stats().totals();
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    Ok(Record::Truth(TruthRecord {
        cell: c.name.clone(),
        fingerprint: fingerprint.to_string(),
        salted: true,
        trace,
        hash: 0,
        arrivals: replay.measured(),
        cycles: totals.cycles,
        fn_rate: ratio(totals.false_negatives, totals.arrivals),
        fp_count_instance: ratio(totals.false_positives + totals.lucky, totals.first),
        fn_all_arrivals: ratio(totals.false_negatives, totals.arrivals),
        batch_arrivals,
        batches: batches.to_vec(),
        true_bound: cell.true_bound,
        seconds: t.elapsed().as_secs_f64(),
    }))
}

/// Hash seeds per truth pass: all of them, unless their ground-truth tables (about 48
/// bytes per distinct key each) would pass `budget` bytes.
pub fn truth_seeds_per_pass(cell: &super::CellConfig, length: u64, seeds: u64, budget: f64) -> u64 {
    let keys = cell.distinct as f64 + (1.0 - cell.p_repeat) * (cell.arrivals * length) as f64;
    ((budget / (48.0 * keys)).floor() as u64).clamp(1, seeds.max(1))
}
