//! `rbf replay` as one library call: a trace through `hash_seeds` filters with exact
//! ground truth, sized up front from what the trace declares ([`run`]), and the JSON the
//! command prints ([`ReplayRun::output`]). The command line and the Python package parse
//! their arguments into a [`ReplayRequest`] and print what comes back.

use serde::Serialize;

use super::{ReplayOptions, ReplayReport, Replays};
use rbf_data::filter::FilterConfig;
use rbf_data::ingest::{IngestSummary, MessageSource};
use rbf_foundations::error::{Error, Problem, Result};

/// What `rbf replay` is asked: the filter, the warm-up and interval level, how many
/// filters (hash seeds). Built by [`ReplayRequest::new`], which checks the filter and
/// the level before any trace is opened.
#[derive(Clone, Debug)]
pub struct ReplayRequest {
    filter: FilterConfig,
    options: ReplayOptions,
    hash_seeds: u32,
}

impl ReplayRequest {
    /// Errors, in this order: an invalid filter, a confidence level outside (0, 1).
    /// The hash seeds are checked when the replay starts, after the trace opened.
    pub fn new(filter: &FilterConfig, options: ReplayOptions, hash_seeds: u32) -> Result<Self> {
        filter.validate()?;
        let level = options.confidence;
        if !(level > 0.0 && level < 1.0) {
            return Err(Error::setting(
                "confidence",
                Problem::range("must lie in (0, 1)", level),
            ));
        }
        Ok(ReplayRequest {
            filter: filter.clone(),
            options,
            hash_seeds,
        })
    }
}

/// What [`run`] observed.
pub struct ReplayRun {
    /// The first filter's counts, every filter's rates and intervals.
    pub report: ReplayReport,
    /// Arrivals read, warm-up included.
    pub seen: u64,
}

/// Replays `source` through the request's filters, their ground truth sized up front
/// where the trace says how many keys it holds. `on_read` sees the trace's ingest
/// summary once it is read (the command line prints its notes there); a trace that gave
/// no message is an error, and one wholly within the warm-up is warned about on stderr.
pub fn run(
    request: &ReplayRequest,
    source: &mut dyn MessageSource,
    on_read: impl FnOnce(&IngestSummary),
) -> Result<ReplayRun> {
    let mut replay =
        Replays::for_source(&request.filter, request.options, request.hash_seeds, source)?;
    replay.run_source(source)?;
    let report = replay.report();
    on_read(source.summary());
    source.summary().require_data()?;
    let warmup = request.options.warmup;
    if warmup > 0 && replay.seen() <= warmup {
        rbf_foundations::errln!(
            "warning: the trace has {} arrivals, all within the warm-up of {warmup}: nothing was measured",
            replay.seen(),
        );
    }
    Ok(ReplayRun {
        report,
        seen: replay.seen(),
    })
}

/// The JSON `rbf replay --json` prints: the report's fields, then the trace's summary.
#[derive(Serialize)]
pub struct ReplayOutput<'a> {
    #[serde(flatten)]
    report: &'a ReplayReport,
    ingest: &'a IngestSummary,
}

impl ReplayRun {
    /// The JSON record of this run; `ingest` is the trace's summary.
    pub fn output<'a>(&'a self, ingest: &'a IngestSummary) -> ReplayOutput<'a> {
        ReplayOutput {
            report: &self.report,
            ingest,
        }
    }
}
