//! Compare: the one place where a model meets an observation.
//!
//! * [`bound`]: the one list of what is put next to the observed FN ([`Bound::ALL`]);
//! * [`observed`]: the observed point estimate and its interval, read in one place;
//! * [`verdict`]: an interval against a bound or a target, never more optimistic than
//!   the interval;
//! * [`record`]: one judged bound, as every output prints it;
//! * [`mod@judge`]: the models on a filter and workload, judged.
//!
//! For a trace, [`compare`] does it all in one pass: the same message stream feeds an
//! exact replay (observed FP and FN with batch-means intervals) and a workload fitter,
//! the models run on the fit, and every bound comes back as a [`Record`] next to what
//! was observed.

pub mod bound;
pub mod command;
mod fit_error;
pub mod judge;
pub mod model_fn;
pub mod observed;
pub mod record;
pub mod trace;
pub mod verdict;

pub use bound::{Bound, EvaluatedOn};
pub use command::{compare, CompareOptions, CompareOutput, CompareRun};
pub use fit_error::FitError;
pub use judge::{is_fitted, judge, ConservativeRenewal, Fitted, JudgeOptions, Judgement, Subject};
pub use observed::{Observed, Rate, Seeds};
pub use record::{values_by_key, Range, Record, Standing};
pub use verdict::{BoundVerdict, ModelTargetVerdict, Regime, TargetVerdict};

use serde::Serialize;

use rbf_data::filter::{FilterConfig, Positions};
use rbf_data::message::Message;
use rbf_foundations::error::Result;
use rbf_observed::fit::beside::beside;
use rbf_observed::fit::{Fit, FitOptions, Fitter};
use rbf_observed::replay::{ReplayOptions, ReplayReport, Replays};
use rbf_observed::trace_renewal::{TraceBound, TraceRenewal};

/// The FP paper's average FP rate for a filter: f_sigma (sigma-bounded) or f_a
/// (N-bounded), an estimate of the count-instance rate, with the model's caveats for
/// this filter (the definition every prediction shares is left out).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FpModel {
    pub value: Option<f64>,
    pub notes: Vec<String>,
}

impl FpModel {
    pub fn of(filter: &FilterConfig) -> Result<FpModel> {
        let p = rbf_predicted::model::false_positive::predict(filter)?;
        Ok(FpModel {
            value: p
                .sigma
                .map(|s| s.fp_sigma)
                .or(p.n_bounded.map(|n| n.fp_actual_lower_bound)),
            notes: p
                .notes
                .into_iter()
                .filter(|n| n != rbf_predicted::model::false_positive::predict::COUNT_INSTANCE)
                .collect(),
        })
    }
}

/// The hash positions of the filters whose observed rates are judged against the
/// models, unless the caller chose: new positions at every recycle. The models average
/// over hash positions; filters that keep theirs have rates that depend on them (with a
/// few popular messages, by up to a quarter of the FP rate), and an interval over four
/// such filters covered the hash-averaged FP count-instance rate at only 97.0-97.4 %
/// in two cells of the coverage study, where per-cycle filters cover every observed
/// rate at 98.3 % or more in every cell (docs/coverage/README.md). `rbf replay`, which
/// reports the filter itself, keeps fixed positions unless told otherwise, and so do
/// two-phase filters whose halves share positions ([`with_judged_positions`]).
pub const JUDGED_POSITIONS: Positions = Positions::PerCycle;

/// `filter` as judged replays run it: its positions, else [`JUDGED_POSITIONS`], except
/// for two halves that share their positions, which only fixed positions keep shared
/// (per-cycle positions would judge a filter with independent halves instead).
pub fn with_judged_positions(filter: &FilterConfig) -> FilterConfig {
    let shared_halves = filter.phases == 2 && !filter.independent_halves;
    let default = if shared_halves {
        Positions::Fixed
    } else {
        JUDGED_POSITIONS
    };
    let mut f = filter.clone();
    f.positions = Some(filter.positions_or(default));
    f
}

/// Keys per batch of [`observe`]'s pass.
const OBSERVE_BATCH: usize = 8192;

/// What one pass over a trace observed.
pub struct Observation {
    pub replay: ReplayReport,
    pub fit: Fit,
    /// Arrivals read, warm-up included.
    pub seen: u64,
    /// The renewal argument on this trace's own recycles ([`rbf_observed::trace_renewal`]);
    /// None where it does not cover the filter (two phases without copy-over).
    pub trace: Option<TraceBound>,
}

/// Replays (with `hash_seeds` filters, [`Replays`], with [`with_judged_positions`]) and fits
/// `stream` in one pass. The fitter's warm-up is the replay's, so both describe the
/// same measured arrivals. `expected_distinct` sizes the ground truth up front (from
/// [`rbf_observed::replay::sizing::distinct_up_front`] for a trace that declares or estimates
/// its keys; None: grown as keys arrive). With `trace`, the trace's own recycles are
/// followed in the same pass ([`rbf_observed::trace_renewal`], the renewal-trace bound).
pub fn observe<I: IntoIterator<Item = Message>>(
    filter: &FilterConfig,
    replay: ReplayOptions,
    hash_seeds: u32,
    fit: FitOptions,
    expected_distinct: Option<u64>,
    trace: bool,
    stream: I,
) -> Result<Observation> {
    let mut r = Replays::sized(
        &with_judged_positions(filter),
        replay,
        hash_seeds,
        expected_distinct,
    )?;
    let mut t = trace
        .then(|| TraceRenewal::new(filter, replay.warmup))
        .flatten();
    if let (Some(t), Some(d)) = (t.as_mut(), expected_distinct) {
        t.expect_distinct(d);
    }
    let f = Fitter::new(FitOptions {
        warmup: replay.warmup,
        ..fit
    })?;
    // The fitter on a thread of its own, the replays and the trace's paths here.
    let (f, ()) = beside(f, |feed| {
        let mut it = stream.into_iter();
        loop {
            let keys: Vec<u64> = it.by_ref().take(OBSERVE_BATCH).map(|m| m.key).collect();
            if keys.is_empty() {
                break;
            }
            r.run_keys(&keys);
            if let Some(t) = t.as_mut() {
                t.run_keys(&keys);
            }
            feed(&keys);
            if keys.len() < OBSERVE_BATCH {
                break;
            }
        }
    });
    Ok(Observation {
        replay: r.report(),
        seen: f.seen(),
        fit: f.finish()?,
        trace: t.and_then(|t| t.finish()),
    })
}

/// A trace's observation with every bound judged: what `rbf compare` prints.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// Observed FN per arrival, the FN paper's FP per arrival and the FP paper's
    /// count-instance rate, each with its interval.
    pub observed_fn: Observed,
    pub observed_fp: Observed,
    pub observed_fp_count_instance: Observed,
    pub fp_model: FpModel,
    pub judgement: Judgement,
}

/// Judges the models on the workload fitted in `observation` against what its replay
/// observed. `label` names the trace in errors.
pub fn judge_observation(
    filter: &FilterConfig,
    observation: &Observation,
    options: &JudgeOptions,
    label: &str,
) -> Result<(Fitted, Comparison)> {
    let observed = |rate| Observed::of_one(&observation.replay, rate);
    let fitted = Fitted::from_fit(&observation.fit, label)?;
    let observed_fn = observed(Rate::Fn);
    let judgement = judge(
        &Subject {
            trace: observation.trace.as_ref(),
            ..Subject::fitted(filter, &fitted)
        },
        options,
        Some(&observed_fn),
    )?;
    let comparison = Comparison {
        observed_fn,
        observed_fp: observed(Rate::Fp),
        observed_fp_count_instance: observed(Rate::FpCountInstance),
        fp_model: FpModel::of(filter)?,
        judgement,
    };
    Ok((fitted, comparison))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judged_replays_draw_positions_per_cycle_unless_the_halves_share_them() {
        let mut f = FilterConfig::sigma_bounded(1000, 3, 300);
        assert_eq!(
            with_judged_positions(&f).positions,
            Some(Positions::PerCycle)
        );
        f.phases = 2;
        assert_eq!(with_judged_positions(&f).positions, Some(Positions::Fixed));
        f.independent_halves = true;
        assert_eq!(
            with_judged_positions(&f).positions,
            Some(Positions::PerCycle)
        );
        f.positions = Some(Positions::Fixed);
        assert_eq!(with_judged_positions(&f).positions, Some(Positions::Fixed));
        assert!(with_judged_positions(&f).validate().is_ok());
        f.independent_halves = false;
        f.positions = Some(Positions::PerCycle);
        let e = f.validate().unwrap_err().to_string();
        assert!(e.contains("positions") && e.contains("independent"), "{e}");
    }
}
