//! Compare: one pass over a trace feeds the same message stream to an exact replay
//! (observed FP and FN with batch-means intervals) and to a workload [`Fitter`]; the
//! fitted workload then goes to the models, and the numbers are put side by side.

use serde::Serialize;

use crate::error::Result;
use crate::filter::FilterConfig;
use crate::fit::{Fit, FitOptions, Fitter};
use crate::message::{for_each_key_batch, Message};
use crate::model::fneg::worst::renewal_worst_case;
use crate::model::fneg::{Claim, FnModel, FnReport, Method, RenewalOptions};
use crate::replay::{ReplayOptions, ReplayReport, Replays};
use crate::report::verdict::{BoundVerdict, Check, Side};
use crate::stats::Interval;
use crate::workload::Workload;

/// What one pass observed.
pub struct Observation {
    pub replay: ReplayReport,
    pub fit: Fit,
    /// Arrivals read, warm-up included.
    pub seen: u64,
}

/// Replays (with `hash_seeds` filters, [`Replays`]) and fits `stream` in one pass. The
/// fitter's warm-up is the replay's, so both describe the same measured arrivals.
pub fn observe<I: IntoIterator<Item = Message>>(
    filter: &FilterConfig,
    replay: ReplayOptions,
    hash_seeds: u32,
    fit: FitOptions,
    stream: I,
) -> Result<Observation> {
    let mut r = Replays::new(filter, replay, hash_seeds)?;
    let mut f = Fitter::new(FitOptions {
        warmup: replay.warmup,
        ..fit
    })?;
    for_each_key_batch(stream, |keys| {
        r.run_keys(keys);
        f.run_keys(keys);
    });
    Ok(Observation {
        replay: r.report(),
        seen: f.seen(),
        fit: f.finish()?,
    })
}

/// A row of the comparison: a model's number and what it claims to be.
#[derive(Clone, Debug, Serialize)]
pub struct ModelRow {
    pub name: String,
    /// "fn" or "fp".
    pub measure: &'static str,
    pub value: f64,
    /// "upper-bound", "lower-bound", "approximation" or "estimate".
    pub claim: String,
    /// The claim is proven for this filter and workload (under the model's assumptions).
    pub guaranteed: bool,
    /// value / observed rate of the same measure (None when nothing was observed).
    pub ratio_to_observed: Option<f64>,
    /// For bounds: the observed rate's interval against the bound (holds: the whole
    /// interval on the bound's side; violated: the whole interval on the other side;
    /// undecided: it straddles the bound, or there is no interval). None for
    /// approximations.
    pub verdict: Option<BoundVerdict>,
    /// For bounds: how far the observed point is on the wrong side, relative to the
    /// bound (None when it is on the right side).
    pub excess: Option<f64>,
    pub note: String,
}

/// The FN models evaluated on a (fitted) workload, as rows next to the observed FN.
pub struct FnComparison {
    /// What `rbf::model::fneg` computed (per-method timings, renewal details).
    pub report: FnReport,
    /// One row per method that ran, in the order requested.
    pub rows: Vec<ModelRow>,
    /// Methods that were not requested (so not computed): never silently absent.
    pub not_run: Vec<Method>,
}

/// The claim's name as it appears in a [`ModelRow`].
pub fn claim_name(c: Claim) -> &'static str {
    match c {
        Claim::UpperBound => "upper-bound",
        Claim::LowerBound => "lower-bound",
        Claim::Approximation => "approximation",
    }
}

/// Runs the FN paper's models (`methods`, truncation `eps`) for `filter` and `workload`
/// and puts each beside the observed FN per arrival (`observed_fn`, with its interval
/// when there is one). The claim and whether it is proven come from
/// [`FnModel::guarantee`]; the verdict judges the observed interval against the bound
/// ([`crate::report::verdict`]), whether or not the bound is proven.
pub fn fn_rows(
    filter: &FilterConfig,
    workload: &Workload,
    methods: &[Method],
    renewal: RenewalOptions,
    observed_fn: f64,
    observed_ci: Option<&Interval>,
) -> Result<FnComparison> {
    let model = FnModel::new(filter, workload, renewal.eps)?;
    let report = model.evaluate(methods, renewal)?;
    let rows = report
        .results
        .iter()
        .map(|r| {
            let g = &r.guarantee;
            let check = |side| Check::new(r.fn_rate, side, observed_fn, observed_ci);
            let check = match g.claim {
                Claim::UpperBound => Some(check(Side::AtMost)),
                Claim::LowerBound => Some(check(Side::AtLeast)),
                Claim::Approximation => None,
            };
            ModelRow {
                name: format!("fn {}", r.method.name()),
                measure: "fn",
                value: r.fn_rate,
                claim: claim_name(g.claim).to_string(),
                guaranteed: g.guaranteed,
                ratio_to_observed: (observed_fn > 0.0).then(|| r.fn_rate / observed_fn),
                verdict: check.map(|c| c.bound()),
                excess: check.and_then(|c| c.excess()),
                note: g.note.clone(),
            }
        })
        .collect();
    let not_run = Method::ALL
        .into_iter()
        .filter(|m| !methods.contains(m))
        .collect();
    Ok(FnComparison {
        report,
        rows,
        not_run,
    })
}

/// The renewal bound at the conservative end of a fit's uncertainty.
#[derive(Clone, Debug, Serialize)]
pub struct ConservativeRenewal {
    /// The largest bound over the workloads given (one, from a fit).
    pub fn_upper: f64,
    /// Where in the interval the largest bound at a single p_r was found, and the
    /// interval of p_r the bound covers (every p_r in it at once, one phase;
    /// docs/FIT.md).
    pub p_repeat: f64,
    pub p_repeat_interval: Option<[f64; 2]>,
    /// The construction is proven to bound the true workload's bound whenever the band
    /// and the interval hold: one phase only (two phases: measured, docs/coverage).
    pub proven: bool,
    pub seconds: f64,
}

/// The renewal bound for `filter` at the conservative end of a fit: the largest bound
/// over `workloads` (from [`Fit::conservative_workloads`]); None when there are none
/// (a fit without a reuse profile).
pub fn conservative_renewal(
    filter: &FilterConfig,
    workloads: &[Workload],
    eps: f64,
) -> Result<Option<ConservativeRenewal>> {
    let t = std::time::Instant::now();
    let mut best: Option<ConservativeRenewal> = None;
    for w in workloads {
        let model = FnModel::new(filter, w, eps)?;
        // The worst case over p_r's whole interval (model::fneg::worst).
        let r = renewal_worst_case(
            &model,
            RenewalOptions {
                eps,
                ..RenewalOptions::default()
            },
        )?;
        if best.as_ref().is_none_or(|b| r.fn_upper > b.fn_upper) {
            best = Some(ConservativeRenewal {
                fn_upper: r.fn_upper,
                p_repeat: r.p_repeat,
                p_repeat_interval: w.p_repeat_interval,
                proven: filter.phases == 1,
                seconds: 0.0,
            });
        }
    }
    Ok(best.map(|b| ConservativeRenewal {
        seconds: t.elapsed().as_secs_f64(),
        ..b
    }))
}

/// A comparison row for the conservative renewal bound.
pub fn conservative_row(
    c: &ConservativeRenewal,
    guaranteed: bool,
    observed_fn: f64,
    observed_ci: Option<&Interval>,
) -> ModelRow {
    let check = Check::new(c.fn_upper, Side::AtMost, observed_fn, observed_ci);
    let p = match c.p_repeat_interval {
        Some([l, h]) => format!("every p_r in [{l:.4}, {h:.4}]"),
        None => format!("p_r = {:.4}", c.p_repeat),
    };
    ModelRow {
        name: "fn renewal, conservative".into(),
        measure: "fn",
        value: c.fn_upper,
        claim: claim_name(Claim::UpperBound).to_string(),
        guaranteed: guaranteed && c.proven,
        ratio_to_observed: (observed_fn > 0.0).then(|| c.fn_upper / observed_fn),
        verdict: Some(check.bound()),
        excess: check.excess(),
        note: format!(
            "renewal bound with the reuse profile at the upper end of its band (simultaneous over every distance) and {p}, both at the conservative level (1 + level) / 2; the fit's uncertainty, not the model's assumptions, is covered{}",
            if c.proven {
                ""
            } else {
                "; two phases: not proven to stay above the true workload's bound (the one-phase monotonicity argument does not carry over), measured to in at least 99 % of seeds by docs/coverage"
            }
        ),
    }
}

/// The largest sigma whose FP-paper average FP rate (f_sigma, count-instance) is at
/// most `target`, for the filter's M, k, phases and hashing (bisection: the rate grows
/// with sigma). Errors when even sigma = k misses the target.
pub fn sigma_for_target(filter: &FilterConfig, target: f64) -> Result<(u64, f64)> {
    if !(target > 0.0 && target < 1.0) {
        return Err(crate::Error::config(
            "target-fp",
            format!("must lie strictly between 0 and 1, found {target}"),
        ));
    }
    let rate = |sigma: u64| -> Result<f64> {
        let mut c = filter.clone();
        c.sigma = Some(sigma);
        c.max_inserts = None;
        let p = crate::model::fp::predict(&c)?;
        p.sigma.map(|s| s.fp_sigma).ok_or_else(|| {
            crate::Error::invalid("the FP model gave no sigma-bounded prediction".to_string())
        })
    };
    let mut lo = u64::from(filter.hashes);
    let lo_rate = rate(lo)?;
    if lo_rate > target {
        return Err(crate::Error::config(
            "target-fp",
            format!(
                "{target} is below the FP rate {lo_rate:.3e} of the smallest sigma (= k = {lo}) for M = {}: use more memory or a larger target",
                filter.memory
            ),
        ));
    }
    let mut hi = filter.half_memory().saturating_sub(1).max(lo);
    if rate(hi)? <= target {
        return Ok((hi, rate(hi)?));
    }
    // Invariant: rate(lo) <= target < rate(hi).
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if rate(mid)? <= target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok((lo, rate(lo)?))
}
