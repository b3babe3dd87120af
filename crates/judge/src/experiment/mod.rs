//! Configuration-driven experiments: a TOML file names sources (traces, synthetic
//! workloads), a grid of filters and the measures wanted; [`run`] evaluates every
//! point (observed by exact replay, predicted by the models) and [`output::write`]
//! puts them side by side in tables, plots and a report.
//!
//! Runs are deterministic: a point depends only on its inputs and seeds, points are
//! evaluated independently (in parallel) and collected in grid order. Sharding
//! ([`grid::Shard`]) splits the grid for cluster job arrays; [`merge`] reassembles
//! shard outputs into exactly what an unsharded run writes.

pub mod command;
pub mod config;
mod config_error;
pub mod grid;
pub mod output;
pub mod page;
pub mod pass;
pub mod plots;
pub mod results;
mod results_error;
pub mod resume;
mod resume_error;
pub mod row;
pub mod runner;
mod shard_error;
pub mod shards;
pub mod source;
pub mod svg;
pub mod tables;
pub mod texts;

pub use config::{ExperimentConfig, Measure};
pub use config_error::ConfigError;
pub use grid::{Point, Shard};
pub use output::Written;
pub use results::{Results, SourceInfo};
pub use results_error::ResultsError;
pub use resume::Journal;
pub use resume_error::ResumeError;
pub use row::Row;
pub use shard_error::ShardError;
pub use shards::{merge, merge_labelled};

use rayon::prelude::*;

use rbf_foundations::error::{Error, Result};
use source::{Prepared, Source};

/// How to run an experiment besides its config.
#[derive(Clone, Copy, Debug)]
pub struct RunOptions {
    pub shard: Shard,
    /// Points done and an ETA on stderr (see [`rbf_foundations::progress`]).
    pub progress: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            shard: Shard::ALL,
            progress: false,
        }
    }
}

/// Memory per grid point while a run holds it: the point, its row (computed, then in
/// the results, the output frame and its JSON), and the row's text (names, notes).
fn bytes_per_point() -> f64 {
    (std::mem::size_of::<Point>() + 3 * std::mem::size_of::<Row>() + 1024) as f64
}

/// Checks a config's grid before it is built: its size against this machine's memory
/// (a run holds every point's row), then that at least one point is a valid filter. A
/// value that is invalid on its own (M = 0, k = 0) is refused by
/// [`config::GridConfig`] with the command line's message;
/// a combination that is invalid at some points only (sigma above one of the memory
/// sizes) leaves those points with a note, but a grid with no valid point at all is
/// refused with the first point's reason, as the command line refuses that filter.
pub fn check(config: &ExperimentConfig) -> Result<()> {
    config::no_duplicates(
        "trace.name / synthetic.name (a source's name in tables)",
        Source::all(config).iter().map(Source::name),
    )?;
    let n = grid::count(config).ok_or_else(|| {
        Error::Resource("the grid has more points than this machine can count".into())
    })?;
    rbf_foundations::resources::check_memory(
        &format!("a grid of {n} points"),
        n as f64 * bytes_per_point(),
    )?;
    let mut first = None;
    for p in grid::expand(config) {
        // With a target FP the sigma is chosen by the FP model at run time: the filter's
        // shape is what there is to check.
        let probe = p.filter(None, 0);
        let valid = match p.rule {
            grid::SigmaRule::TargetFp(_) => probe.validate_shape(),
            _ => probe.validate(),
        };
        match valid {
            Ok(()) => return Ok(()),
            Err(e) => {
                first.get_or_insert((p, e));
            }
        }
    }
    match first {
        Some((p, e)) => Err(ConfigError::NoValidPoint {
            filter: p.filter(None, 0).describe(),
            source_name: Source::all(config)[p.source].name(),
            why: e.in_section("grid"),
        }
        .into()),
        None => Ok(()),
    }
}

fn measure_names(config: &ExperimentConfig) -> Vec<String> {
    config
        .measures
        .iter()
        .map(|m| m.name().to_string())
        .collect()
}

/// Runs the shard's points of `config`. Sources are prepared first (a trace's
/// workload is fitted once), then the points run in parallel.
pub fn run(config: &ExperimentConfig, options: RunOptions) -> Result<Results> {
    run_resumable(config, options, None)
}

/// [`run`], taking the points in `journal` from an interrupted earlier run and
/// recording each point computed there (see [`resume`]).
pub fn run_resumable(
    config: &ExperimentConfig,
    options: RunOptions,
    journal: Option<&Journal>,
) -> Result<Results> {
    check(config)?;
    let points: Vec<Point> = grid::expand(config)
        .into_iter()
        .filter(|p| options.shard.contains(p))
        .collect();
    let total = grid::expand(config).len();
    // What this run's results are computed from: the config and the inputs' sizes now,
    // their contents' digests once the sources are read (below).
    let mut fingerprint = results::RunFingerprint::of(config)?;
    let n = (config.traces.len() + config.synthetic.len()).max(1);
    let used = used_sources(&points, journal, n);
    if options.progress {
        announce_replays(config, &points, journal);
    }
    let filters = runner::point_filters(&points, journal);
    let (sources, replayed) = prepare_sources(config, &points, &filters, &used, options.progress)?;
    fingerprint.take_digests()?;
    if let Some(j) = journal {
        j.record_inputs(&fingerprint.inputs);
    }
    let infos = source_infos(&sources, &used, journal);
    let rows = runner::run_points(
        config,
        &sources,
        &points,
        filters,
        replayed,
        options.progress,
        journal,
    )?;
    Ok(Results {
        format: results::RESULTS_FORMAT.to_string(),
        name: config.name.clone(),
        description: config.description.clone(),
        total_points: total,
        shard: options.shard,
        measures: measure_names(config),
        confidence: config.confidence,
        config: Some(config.to_toml()),
        fingerprint: Some(fingerprint),
        sources: infos,
        rows,
    })
}

/// Prepares every source (its fit included) and replays its points. Sources with no
/// point left to compute in this shard are not read. Each is prepared on its own, in
/// parallel, and its points replayed in as few passes over it as memory allows (the
/// first one the fit's: [`pass`]); results keep the sources' and the points' order.
fn prepare_sources(
    config: &ExperimentConfig,
    points: &[Point],
    filters: &[Option<runner::PointFilter>],
    used: &[bool],
    progress: bool,
) -> Result<(Vec<Prepared>, Vec<Option<runner::PointReplays>>)> {
    let needs_workload = !config.fn_methods().is_empty();
    let fit_seed = config.seeds.first().copied().unwrap_or(1);
    let all = Source::all(config);
    let mut wanted: Vec<Vec<pass::Wanted>> = (0..all.len()).map(|_| Vec::new()).collect();
    if config.wants(Measure::Observed) {
        // A point the journal holds, or whose filter does not resolve (its row says
        // why), is not replayed.
        for (at, (p, f)) in points.iter().zip(filters).enumerate() {
            if let (Some(Ok(filter)), Some(w)) = (f, wanted.get_mut(p.source)) {
                w.push(pass::Wanted {
                    at,
                    filter: filter.clone(),
                });
            }
        }
    }
    let prepared = all
        .par_iter()
        .zip(used.par_iter())
        .zip(wanted.into_par_iter())
        .map(|((s, &u), w)| {
            let mut passes = pass::Passes::new(config, s, s.warmup(), w);
            passes.progress = progress;
            let p = if u {
                s.prepare(needs_workload, fit_seed, &mut passes)?
            } else {
                s.unprepared()
            };
            Ok((p, passes.finish()?))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut replayed: Vec<Option<runner::PointReplays>> = points.iter().map(|_| None).collect();
    let mut sources = Vec::with_capacity(prepared.len());
    for (p, r) in prepared {
        sources.push(p);
        for (at, r) in r {
            replayed[at] = Some(r);
        }
    }
    Ok((sources, replayed))
}

/// Which sources were prepared by this run: those with a point of the shard that the
/// journal lacks, or whose report lines it lacks.
fn used_sources(points: &[Point], journal: Option<&Journal>, n: usize) -> Vec<bool> {
    let mut u = vec![false; n];
    for p in points.iter().filter(|p| {
        journal.is_none_or(|j| j.done(p.index).is_none() || j.source(p.source).is_none())
    }) {
        u[p.source] = true;
    }
    u
}

/// What the outputs say of each source: from its preparation by this run (and then
/// journalled), else from the journal of the interrupted run that prepared it, else
/// nothing (a source with no point in this shard: `rbf merge` takes a shard's that
/// read it).
fn source_infos(sources: &[Prepared], used: &[bool], journal: Option<&Journal>) -> Vec<SourceInfo> {
    sources
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let fresh = SourceInfo {
                name: p.name.clone(),
                workload: p.title.clone(),
                notes: p.notes.clone(),
                ingest_digest: p.ingest.as_ref().and_then(|i| i.digest()),
                ingest: p.ingest.clone(),
            };
            match journal {
                Some(j) if used.get(i).copied().unwrap_or(false) => {
                    j.record_source(i, &fresh);
                    fresh
                }
                Some(j) => j.source(i).cloned().unwrap_or(fresh),
                None => fresh,
            }
        })
        .collect()
}

/// Arrivals replayed per timing sample of [`announce_replays`].
const SAMPLE_ARRIVALS: u64 = 1 << 17;

/// Says up front how long the replays of synthetic sources will take when that is over
/// a minute (`rbf synth` does the same for writing them), from the pace of a short
/// sample replay of the longest source on this machine. Progress counts grid points,
/// which says nothing while a single point replays 10^12 arrivals.
fn announce_replays(config: &ExperimentConfig, points: &[Point], journal: Option<&Journal>) {
    if !config.wants(Measure::Observed) {
        return;
    }
    let traces = config.traces.len();
    let mut work = 0.0;
    for p in points {
        if journal.is_some_and(|j| j.done(p.index).is_some()) {
            continue;
        }
        if let Some(s) = p
            .source
            .checked_sub(traces)
            .and_then(|i| config.synthetic.get(i))
        {
            work += config.seeds.len() as f64 * (s.distinct as f64 + s.arrivals as f64);
        }
    }
    if work < 1e8 {
        return;
    }
    // The sample builds a generator of its own: not for a D whose tables are large.
    let Some(largest) = config
        .synthetic
        .iter()
        .filter(|s| s.distinct <= 1 << 20)
        .max_by_key(|s| s.arrivals)
    else {
        return;
    };
    let Some(point) = points.first() else {
        return;
    };
    let mut filter = point.filter(None, 0);
    filter.sigma = Some(filter.half_memory() / 2);
    filter.max_inserts = None;
    let sample = (|| -> Result<f64> {
        let stream = Source::Synthetic(largest.clone()).messages(0, false)?;
        let mut replay = rbf_observed::replay::Replay::new(&filter, Default::default())?;
        let t = std::time::Instant::now();
        replay.run(stream.take(SAMPLE_ARRIVALS as usize));
        Ok(t.elapsed().as_secs_f64() / SAMPLE_ARRIVALS as f64)
    })();
    if let Ok(per_arrival) = sample {
        let threads = rayon::current_num_threads().max(1) as f64;
        rbf_foundations::progress::announce_estimate(
            &format!("rbf run: replaying {work:.2e} synthetic arrivals"),
            work * per_arrival / threads,
        );
    }
}
