//! Configuration-driven experiments: a TOML file names sources (traces, synthetic
//! workloads), a grid of filters and the measures wanted; [`run`] evaluates every
//! point (observed by exact replay, predicted by the models) and [`output::write`]
//! puts them side by side in tables, plots and a report.
//!
//! Runs are deterministic: a point depends only on its inputs and seeds, points are
//! evaluated independently (in parallel) and collected in grid order. Sharding
//! ([`grid::Shard`]) splits the grid for cluster job arrays; [`merge`] reassembles
//! shard outputs into exactly what an unsharded run writes.

pub mod config;
pub mod grid;
pub mod output;
pub mod plots;
pub mod results;
pub mod resume;
pub mod row;
pub mod runner;
pub mod source;
pub mod svg;
pub mod tables;

pub use config::{ExperimentConfig, Measure};
pub use grid::{Point, Shard};
pub use output::Written;
pub use results::{Results, SourceInfo};
pub use resume::Journal;
pub use row::Row;

use rayon::prelude::*;

use crate::error::{Error, Result};
use source::Source;

/// How to run an experiment besides its config.
#[derive(Clone, Copy, Debug)]
pub struct RunOptions {
    pub shard: Shard,
    /// Points done and an ETA on stderr (see [`crate::progress`]).
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
    let points: Vec<Point> = grid::expand(config)
        .into_iter()
        .filter(|p| options.shard.contains(p))
        .collect();
    let total = grid::expand(config).len();
    let needs_workload = !config.fn_methods().is_empty();
    let used: Vec<bool> = {
        let n = (config.traces.len() + config.synthetic.len()).max(1);
        let mut u = vec![false; n];
        // A source whose points are all in the journal need not be read again.
        for p in points
            .iter()
            .filter(|p| journal.is_none_or(|j| j.done(p.index).is_none()))
        {
            u[p.source] = true;
        }
        u
    };
    // Sources with no point left to compute in this shard are not read. Each is
    // prepared on its own (fits included), in parallel; results keep the sources' order.
    let fit_seed = config.seeds.first().copied().unwrap_or(1);
    let sources = Source::all(config)
        .into_par_iter()
        .zip(used.into_par_iter())
        .map(|(s, u)| {
            if u {
                s.prepare(needs_workload, fit_seed)
            } else {
                Ok(s.unprepared())
            }
        })
        .collect::<Result<Vec<_>>>()?;
    let rows = runner::run_points(config, &sources, &points, options.progress, journal)?;
    Ok(Results {
        format: results::RESULTS_FORMAT.to_string(),
        name: config.name.clone(),
        description: config.description.clone(),
        total_points: total,
        shard: options.shard,
        measures: measure_names(config),
        sources: sources
            .iter()
            .map(|p| SourceInfo {
                name: p.name.clone(),
                workload: p.title.clone(),
                notes: p.notes.clone(),
                ingest_digest: p.ingest.as_ref().and_then(|i| i.digest()),
                ingest: p.ingest.clone(),
            })
            .collect(),
        rows,
    })
}

/// Combines shard results into the results of the whole grid. Every shard must come
/// from the same experiment, and together they must cover every point exactly once:
/// a merge with a missing or repeated shard is an error, not a partial table.
pub fn merge(parts: Vec<Results>) -> Result<Results> {
    let first = parts
        .first()
        .ok_or_else(|| Error::invalid("merge needs at least one results.json"))?;
    let (name, total) = (first.name.clone(), first.total_points);
    let mut out = Results {
        shard: Shard::ALL,
        rows: Vec::with_capacity(total),
        ..first.clone()
    };
    out.rows.clear();
    // A source a shard did not read has no summary: take it from a shard that did.
    for p in &parts {
        for (mine, theirs) in out.sources.iter_mut().zip(&p.sources) {
            if mine.ingest.is_none() && theirs.ingest.is_some() {
                *mine = theirs.clone();
            }
        }
    }
    for p in &parts {
        if p.name != name || p.total_points != total || p.measures != first.measures {
            return Err(Error::invalid(format!(
                "cannot merge shards of different experiments: `{}` ({} points) and `{}` ({} points)",
                name, total, p.name, p.total_points
            )));
        }
        out.rows.extend(p.rows.iter().cloned());
    }
    out.rows.sort_by_key(|r| r.point);
    let mut seen = vec![false; total];
    for r in &out.rows {
        match seen.get_mut(r.point) {
            Some(s) if !*s => *s = true,
            Some(_) => {
                return Err(Error::invalid(format!(
                    "point {} appears in more than one shard",
                    r.point
                )))
            }
            None => {
                return Err(Error::invalid(format!(
                    "point {} is outside the grid of {total} points",
                    r.point
                )))
            }
        }
    }
    let missing = seen.iter().filter(|s| !**s).count();
    if missing > 0 {
        return Err(Error::invalid(format!(
            "{missing} of {total} points are missing: merge the results of every shard"
        )));
    }
    Ok(out)
}
