//! The coverage study: do rbf's printed intervals hold their level, and is
//! the conservative fitted renewal bound at or above the true-workload bound as often
//! as it claims?
//!
//! Each cell of a [`CoverageConfig`] is a workload of the FN paper's arrival model and a
//! filter. A *seed* of a cell is a new synthetic trace and new hash positions, replayed
//! and fitted exactly as `rbf compare` does; every interval rbf prints is recorded
//! ([`record::ObservedRecord`], [`record::FitRecord`]). A cell's *truth* is what the models describe: for p_r and
//! S(n) the exact values of the workload (eq. 24 gives S), for the observed FN and FP
//! the long-run rates averaged over hash positions, from replays
//! `truth_length` times longer than a seed's, each trace replayed with several hash
//! seeds. The summary ([`summary`]) reports, per cell and interval, the share of seeds
//! whose interval contains the truth, with its own binomial uncertainty.
//!
//! Work is cut into units (a seed, or one long replay), run in parallel, and each
//! finished unit is appended as one JSON line to `records/shard-I-of-N.jsonl` in the
//! output directory, so a run can be stopped, resumed and sharded (`--shard I/N`); the
//! summary is computed from every records file present. Records of a cell whose
//! settings (or the study's method version) changed are ignored.

mod cell;
pub mod config;
pub mod record;
pub mod summary;
mod unit;

pub use cell::Cell;
pub use config::{CellConfig, CoverageConfig};
pub use record::Kind;
pub use record::Record;
pub use unit::{run_fit, run_observed, run_truth, Unit};

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rayon::prelude::*;

use rbf_data::filter::Positions;
use rbf_foundations::error::{Error, Result};
use rbf_foundations::progress::{check_interrupt, interrupted, Progress};
use rbf_judge::experiment::grid::Shard;
use rbf_observed::replay::DEFAULT_HASH_SEEDS;

/// Change whenever what a record of that kind means changes (an interval method), so
/// that records of an earlier method are not mixed with new ones; each kind has its
/// own, so a change to the fit keeps the replays' records and the other way round.
pub const OBSERVED_VERSION: &str =
    "v3: observed: hash seeds x time batches of complete cycles, complete-cycle point";
pub const FIT_VERSION: &str = "v6: count floor of the band by the exact Poisson limit, worst p_r by partition, reuse band simultaneous (multiplier bootstrap, units of batches spanning 2n), conservative bound over the whole p_r interval, band and interval at (1 + level) / 2";
pub const PER_CYCLE_VERSION: &str =
    "v1: per-cycle positions: hash seeds x time batches of complete cycles";
pub const TRUTH_VERSION: &str = "v1: complete cycles of fixed-hash replays";

/// Memory one truth pass's ground-truth tables may take (two passes run at once on a
/// 2-core machine).
const TRUTH_PASS_BYTES: f64 = 4e9;

/// The fingerprint of a cell's records of one kind (truth records also depend on the
/// truth replays' length). For truth records it is what it was before the kinds were
/// split, so that the long replays already run stay current.
pub fn fingerprint(cell: &CellConfig, level: f64, kind: Kind, truth_length: u64) -> String {
    let text = match kind {
        Kind::Truth => serde_json::json!({
            "cell": cell,
            "level": level,
            "truth_length": Some(truth_length),
            "version": TRUTH_VERSION,
        }),
        Kind::Observed | Kind::Fitted | Kind::PerCycle => {
            let (name, version) = match kind {
                Kind::Observed => ("observed", OBSERVED_VERSION),
                Kind::PerCycle => ("observed-per-cycle", PER_CYCLE_VERSION),
                _ => ("fitted", FIT_VERSION),
            };
            serde_json::json!({
                "cell": cell,
                "level": level,
                "kind": name,
                "version": version,
            })
        }
    }
    .to_string();
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(text.as_bytes()))
}

/// Every unit of the study, cells in order, truth replays first within a cell.
pub fn units(config: &CoverageConfig) -> Vec<Unit> {
    let mut out = Vec::new();
    for (cell, c) in config.cells.iter().enumerate() {
        let h = c.truth_hash_seeds(config.truth_hash_seeds);
        let per = unit::truth_seeds_per_pass(c, config.truth_length, h, TRUTH_PASS_BYTES);
        for trace in 0..config.truth_traces {
            for start in (0..h).step_by(per as usize) {
                out.push(Unit::Truth {
                    cell,
                    trace,
                    hashes: start..(start + per).min(h),
                });
            }
            if c.salted() {
                out.push(Unit::Salted { cell, trace });
            }
        }
        let observed = c.observed_seeds(config.seeds);
        for seed in 1..=observed.max(c.per_cycle_seeds()) {
            if seed <= observed {
                out.push(Unit::Observed { cell, seed });
            }
            if seed <= config.seeds {
                out.push(Unit::Fit { cell, seed });
            }
            if seed <= c.per_cycle_seeds() {
                out.push(Unit::PerCycle { cell, seed });
            }
        }
    }
    out
}

/// Every record under `dir/records/`, and how many lines were unreadable.
pub fn read_records(dir: &Path) -> Result<(Vec<Record>, u64)> {
    let rec = dir.join("records");
    let mut records = Vec::new();
    let mut bad = 0;
    let Ok(entries) = std::fs::read_dir(&rec) else {
        return Ok((records, 0));
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    paths.sort();
    for p in paths {
        let text = std::fs::read_to_string(&p).map_err(|e| Error::io(&p, e))?;
        // A line cut by a crash (no line break, or not JSON) is not a record.
        let complete = text.rfind('\n').map_or("", |i| &text[..=i]);
        for line in complete.lines().filter(|l| !l.trim().is_empty()) {
            match serde_json::from_str::<Record>(line) {
                Ok(r) => records.push(r),
                Err(_) => bad += 1,
            }
        }
    }
    Ok((records, bad))
}

/// The records of the current config: the right fingerprint, one per unit.
pub fn current_records(config: &CoverageConfig, records: Vec<Record>) -> Vec<Record> {
    let mut seen = HashSet::new();
    records
        .into_iter()
        .filter(|r| {
            let Some(c) = config.cells.iter().find(|c| c.name == r.cell()) else {
                return false;
            };
            let want = fingerprint(c, config.level, r.kind(), config.truth_length);
            r.fingerprint() == want && seen.insert((r.cell().to_string(), r.key()))
        })
        .collect()
}

/// Runs the units of `shard` not yet in `dir`'s records, appending each record as it
/// finishes. Ctrl-C stops new units from starting; what finished stays recorded.
pub fn run(config: &CoverageConfig, dir: &Path, shard: Shard, progress: bool) -> Result<()> {
    let rec_dir = dir.join("records");
    std::fs::create_dir_all(&rec_dir).map_err(|e| Error::io(&rec_dir, e))?;
    let todo = pending_units(config, dir, shard)?;
    if todo.is_empty() {
        return Ok(());
    }
    let cells = prepare_cells(config, &todo)?;
    let path = rec_dir.join(format!("shard-{}-of-{}.jsonl", shard.index, shard.count));
    let log = Mutex::new(
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?,
    );
    let bar = if progress {
        Progress::new(
            "rbf-bench coverage",
            todo.iter()
                .map(|u| unit_arrivals(config, u) * filters_per_arrival(u))
                .sum(),
            "M filter-arrivals",
        )
    } else {
        Progress::hidden()
    };
    todo.par_iter().try_for_each(|u| -> Result<()> {
        if interrupted() {
            return Ok(());
        }
        let cell = cells[u.cell()]
            .as_ref()
            .expect("every cell with a unit to run was prepared");
        let records = run_unit(config, cell, u, &bar)?;
        append_records(&log, &path, &records)
    })?;
    bar.finish();
    check_interrupt()
}

/// The units of `shard` whose records are not all in `dir` yet (a resumed run skips
/// what finished).
fn pending_units(config: &CoverageConfig, dir: &Path, shard: Shard) -> Result<Vec<Unit>> {
    let (existing, _) = read_records(dir)?;
    let done: HashSet<(String, (u8, u64, u64))> = current_records(config, existing)
        .iter()
        .map(|r| (r.cell().to_string(), r.key()))
        .collect();
    Ok(units(config)
        .into_iter()
        .enumerate()
        .filter(|(i, _)| i % shard.count == shard.index)
        .map(|(_, u)| u)
        .filter(|u| {
            let name = &config.cells[u.cell()].name;
            !u.keys()
                .into_iter()
                .all(|k| done.contains(&(name.clone(), k)))
        })
        .collect())
}

/// Prepares only the cells with work to do (the true S can take seconds), indexed like
/// `config.cells`.
fn prepare_cells(config: &CoverageConfig, todo: &[Unit]) -> Result<Vec<Option<Cell>>> {
    let mut needed: Vec<usize> = todo.iter().map(Unit::cell).collect();
    needed.dedup();
    (0..config.cells.len())
        .into_par_iter()
        .map(|i| {
            needed
                .contains(&i)
                .then(|| Cell::new(&config.cells[i]))
                .transpose()
        })
        .collect::<Result<_>>()
}

/// Millions of filters a unit runs each arrival through, for the progress bar.
///
/// The bar counts millions of arrivals through one filter, so that the up-front
/// estimate (from the pace of the work so far, long truth replays counted as they
/// run) holds for a mix of short seeds and long replays: drawing a trace costs
/// about one filter's replay, a seed's observed unit replays `VARIANTS`' largest
/// number of filters, its fit about two, a salted filter (new positions at every
/// recycle) about two. Each unit counts its arrivals at its filters per arrival.
fn filters_per_arrival(u: &Unit) -> f64 {
    let most = unit::VARIANTS.iter().copied().max().unwrap_or(1) as f64;
    let filters = match u {
        Unit::Observed { .. } => 1.0 + most,
        // The general loop (no positions computed ahead): about 1.5 filters each.
        Unit::PerCycle { .. } => 1.0 + 1.5 * f64::from(DEFAULT_HASH_SEEDS),
        Unit::Fit { .. } | Unit::Salted { .. } => 3.0,
        Unit::Truth { hashes, .. } => 1.0 + (hashes.end - hashes.start) as f64,
    };
    filters / 1e6
}

/// Arrivals a unit draws: a seed's trace, or a truth replay `truth_length` times longer.
fn unit_arrivals(config: &CoverageConfig, u: &Unit) -> f64 {
    let seed = config.cells[u.cell()].arrivals as f64;
    match u {
        Unit::Observed { .. } | Unit::Fit { .. } | Unit::PerCycle { .. } => seed,
        Unit::Truth { .. } | Unit::Salted { .. } => seed * config.truth_length as f64,
    }
}

/// Runs one unit on its prepared cell: its records, to append.
fn run_unit(config: &CoverageConfig, cell: &Cell, u: &Unit, bar: &Progress) -> Result<Vec<Record>> {
    let c = &config.cells[u.cell()];
    let fp = |kind| fingerprint(c, config.level, kind, config.truth_length);
    let tick = (bar, filters_per_arrival(u));
    Ok(match u {
        Unit::Observed { seed, .. } => {
            vec![run_observed(
                cell,
                &fp(Kind::Observed),
                (*seed, Positions::Fixed),
                config.level,
                tick,
            )?]
        }
        Unit::PerCycle { seed, .. } => {
            vec![run_observed(
                cell,
                &fp(Kind::PerCycle),
                (*seed, Positions::PerCycle),
                config.level,
                tick,
            )?]
        }
        Unit::Fit { seed, .. } => {
            vec![run_fit(cell, &fp(Kind::Fitted), *seed, config.level, tick)?]
        }
        Unit::Truth { trace, hashes, .. } => run_truth(
            cell,
            &fp(Kind::Truth),
            *trace,
            hashes.clone(),
            config.truth_length,
            config.level,
            tick,
        )?,
        Unit::Salted { trace, .. } => vec![unit::run_salted(
            cell,
            &fp(Kind::Truth),
            *trace,
            config.truth_length,
            tick,
        )?],
    })
}

/// Appends a unit's records to the shard's records file in one write, so a crash cuts
/// at most the last unit's lines.
fn append_records(log: &Mutex<std::fs::File>, path: &Path, records: &[Record]) -> Result<()> {
    let mut line = String::new();
    for r in records {
        line.push_str(&serde_json::to_string(r).map_err(|e| Error::encode("encode a record", e))?);
        line.push('\n');
    }
    log.lock()
        .map_err(|_| Error::Internal("the records file's lock was poisoned"))?
        .write_all(line.as_bytes())
        .map_err(|e| Error::io(path, e))
}

/// Summarises every current record in `dir` into `dir/summary.md` and
/// `dir/summary.csv`; returns the summaries.
pub fn write_summary(config: &CoverageConfig, dir: &Path) -> Result<Vec<summary::CellSummary>> {
    let (records, _) = read_records(dir)?;
    let records = current_records(config, records);
    let names: Vec<String> = config.cells.iter().map(|c| c.name.clone()).collect();
    let s = summary::summarise(&names, &records, config.level);
    let mut md = format!(
        "# Coverage study `{}`: summary\n\nGenerated by `rbf-bench coverage` from the records in `records/` ({} records; observed: {}; fit: {}; truth: {}).\n\n",
        config.name,
        records.len(),
        OBSERVED_VERSION,
        FIT_VERSION,
        TRUTH_VERSION
    );
    md.push_str(&summary::markdown(&s, config.level));
    rbf_foundations::output_file::write_file(&dir.join("summary.md"), md.as_bytes())?;
    rbf_foundations::output_file::write_file(
        &dir.join("summary.csv"),
        summary::csv(&s).as_bytes(),
    )?;
    Ok(s)
}
