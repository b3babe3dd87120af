//! `rbf size` as one library call: the search for the question asked, the chosen
//! filter's confirming replay and its judged renewal bound ([`size`]), and the JSON the
//! command prints ([`SizeRun::output`]). The command line and the Python package parse
//! their arguments into a [`SizeRequest`] and print what comes back.

use std::collections::BTreeMap;

use serde::Serialize;

use super::confirm::{confirm, Confirmation, LEVEL};
use super::{
    best_fn, misfit, renewal_judgement, smallest_memory, Question, SizeOptions, Sizing,
    RELATIVE_PRECISION,
};
use crate::compare::{values_by_key, Bound, Judgement, Observed, Rate, Record};
use rbf_data::filter::{FilterConfig, Hashing};
use rbf_data::workload::{Workload, WorkloadSpec};
use rbf_foundations::error::{Error, Problem, Result};
use rbf_predicted::model::false_negative::{Method, RenewalMode, DEFAULT_EPS};

/// The seed of the confirming replay's trace when none is given.
pub const DEFAULT_SEED: u64 = 1;
/// Synthetic arrivals of the confirming replay when not given.
pub const DEFAULT_CONFIRM_ARRIVALS: u64 = 2_000_000;

/// The question: the FP target, and the FN target (smallest memory) or the memory
/// (best FN).
#[derive(Clone, Copy, Debug)]
pub struct Goal {
    pub target_fp: f64,
    pub target_fn: Option<f64>,
    pub memory: Option<u64>,
}

/// The confirming replay: `arrivals` synthetic arrivals (0: none) drawn with `seed`.
#[derive(Clone, Copy, Debug)]
pub struct ConfirmReplay {
    pub arrivals: u64,
    pub seed: u64,
}

/// What `rbf size` is asked: the workload, the question, the search and the replay.
/// Built by [`SizeRequest::new`], which checks everything before any search.
#[derive(Clone, Debug)]
pub struct SizeRequest {
    workload: Workload,
    ask: Ask,
    replay: ConfirmReplay,
    /// What the search tries (k, phases, hashing) and its models' settings.
    pub search: SizeOptions,
}

impl SizeRequest {
    /// The request for `goal` on the workload `spec`, phase counts from `phases` (1, 2
    /// or both), every other search setting at `rbf size`'s default. Errors, in this
    /// order: a seed without a replay, the workload, the phases, no question asked.
    pub fn new(
        spec: &WorkloadSpec,
        goal: Goal,
        phases: &str,
        replay: ConfirmReplay,
    ) -> Result<Self> {
        if replay.arrivals == 0 && replay.seed != DEFAULT_SEED {
            return Err(Error::setting(
                "seed",
                Problem::Conflict("--seed is the seed of the confirming replay's trace: it does not apply with --confirm-arrivals 0".into()),
            ));
        }
        let workload = spec.resolve()?;
        let search = SizeOptions {
            target_fp: goal.target_fp,
            phases: phase_counts(phases)?,
            max_hashes: 8,
            hashing: Hashing::Colliding,
            eps: DEFAULT_EPS,
            renewal_tolerance: None,
            progress: false,
        };
        let ask = match (goal.target_fn, goal.memory) {
            (Some(g), _) => Ask::SmallestMemory(g),
            (None, Some(m)) => Ask::BestFn(m),
            (None, None) => {
                return Err(Error::setting(
                    "target-fn",
                    Problem::Missing(super::GIVE_A_GOAL),
                ))
            }
        };
        Ok(SizeRequest {
            workload,
            ask,
            replay,
            search,
        })
    }

    /// The workload sized for, checked.
    pub fn workload(&self) -> &Workload {
        &self.workload
    }
}

/// The search asked for: a target FN wins over a memory when both are given.
#[derive(Clone, Copy, Debug)]
enum Ask {
    SmallestMemory(f64),
    BestFn(u64),
}

/// The phase counts `s` names: 1, 2 or both.
pub fn phase_counts(s: &str) -> Result<Vec<u8>> {
    match s {
        "1" => Ok(vec![1]),
        "2" => Ok(vec![2]),
        "both" => Ok(vec![1, 2]),
        other => Err(Error::setting(
            "phases",
            Problem::range("expected 1, 2 or both", format!("`{other}`")),
        )),
    }
}

/// What [`size`] found: the search, the chosen filter, its judged bound and its
/// confirming replay.
pub struct SizeRun {
    pub sizing: Sizing,
    pub filter: FilterConfig,
    pub judgement: Judgement,
    /// None without a replay.
    pub confirmation: Option<Confirmation>,
    pub target_fp: f64,
    pub target_fn: Option<f64>,
    /// The workload's failed fit test in words (None: given as the truth, or it fits).
    pub misfit: Option<String>,
    /// Seconds taken by the search and the replay.
    pub seconds: f64,
}

/// Answers `request`: the smallest memory for its FN target, or the best FN at its
/// memory, the chosen filter replayed on a synthetic trace and its renewal bound judged
/// against that replay's FN.
pub fn size(request: &SizeRequest) -> Result<SizeRun> {
    let start = std::time::Instant::now();
    // The search polls for Ctrl-C between memory sizes.
    rbf_foundations::progress::install_interrupt_handler();
    let (options, w) = (&request.search, &request.workload);
    let (sizing, target_fn) = match request.ask {
        Ask::SmallestMemory(g) => (smallest_memory(g, options, w)?, Some(g)),
        Ask::BestFn(m) => (best_fn(m, options, w)?, None),
    };
    let filter = sizing.best.filter(options.hashing);
    let (confirmation, observed) = if request.replay.arrivals > 0 {
        let targets = (options.target_fp, target_fn);
        let ConfirmReplay { arrivals, seed } = request.replay;
        let (c, report) = confirm(&filter, w, arrivals, seed, targets, LEVEL)?;
        (Some(c), Some(Observed::of_one(&report, Rate::Fn)))
    } else {
        (None, None)
    };
    let judgement = renewal_judgement(&sizing.best, options, w, observed.as_ref())?;
    Ok(SizeRun {
        sizing,
        filter,
        judgement,
        confirmation,
        target_fp: options.target_fp,
        target_fn,
        misfit: misfit(w),
        seconds: start.elapsed().as_secs_f64(),
    })
}

impl SizeRun {
    /// The chosen filter's judged renewal bound.
    pub fn renewal(&self) -> Result<&Record> {
        self.judgement
            .get(Bound::of(Method::Renewal))
            .ok_or(Error::Internal(
                "the judge gave no renewal bound for the chosen filter",
            ))
    }

    /// The JSON record of this run.
    pub fn output(&self) -> SizeOutput<'_> {
        let (s, b) = (&self.sizing, &self.sizing.best);
        let records = &self.judgement.records;
        SizeOutput {
            question: s.question,
            memory: b.memory,
            hashes: b.hashes,
            sigma: b.sigma,
            phases: b.phases,
            hashing: self.filter.hashing.name(),
            independent_halves: self.filter.independent_halves,
            fp_model: b.fp_model,
            values: values_by_key(records),
            fn_renewal_mode: b.fn_renewal_mode,
            fn_renewal_tolerance: b.fn_renewal_tolerance,
            models: records,
            target_fp: self.target_fp,
            target_fn: self.target_fn,
            candidates_evaluated: s.candidates_evaluated,
            memory_precision: (s.question == Question::SmallestMemory)
                .then_some(RELATIVE_PRECISION),
            memory_fails: s.memory_fails,
            search: &s.search,
            confirmation: self.confirmation.as_ref(),
            confirmed: self.confirmation.as_ref().map(|c| !c.misses()),
            workload_misfit: self.misfit.clone(),
            seconds: self.seconds,
        }
    }
}

/// The JSON `rbf size --json` prints.
#[derive(Serialize)]
pub struct SizeOutput<'a> {
    question: Question,
    memory: u64,
    hashes: u32,
    sigma: u64,
    phases: u8,
    hashing: &'static str,
    /// Two-phase: the halves use independent positions (what the bound assumes).
    independent_halves: bool,
    fp_model: f64,
    /// FN per arrival of every bound of the one list (here only `fn_renewal_upper`
    /// is computed; the rest are null).
    #[serde(flatten)]
    values: BTreeMap<&'static str, Option<f64>>,
    /// Which engine produced the FN bound (exact or certified) and its proven
    /// tolerance: exact <= fn_renewal_upper <= exact (1 + tolerance).
    fn_renewal_mode: RenewalMode,
    fn_renewal_tolerance: f64,
    /// The renewal bound judged: claim, standing (proven, or for the fitted model
    /// when the workload was fitted from a trace), its verdict against the confirming
    /// replay's FN, and note.
    models: &'a [Record],
    target_fp: f64,
    target_fn: Option<f64>,
    candidates_evaluated: u64,
    /// Smallest-memory: the bisection stops within this fraction of M.
    memory_precision: Option<f64>,
    /// Smallest-memory: the largest M evaluated that failed.
    memory_fails: Option<u64>,
    search: &'a [(u64, bool)],
    confirmation: Option<&'a Confirmation>,
    /// false when the confirming replay MISSES a target (the size is then not
    /// presented as meeting it); None without a replay.
    confirmed: Option<bool>,
    /// A workload file whose fit failed its test (`rbf fit`'s "DOES NOT FIT"), in
    /// words; absent for a workload given as the truth or a fit that passed.
    #[serde(skip_serializing_if = "Option::is_none")]
    workload_misfit: Option<String>,
    seconds: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(p_repeat: f64) -> WorkloadSpec {
        WorkloadSpec {
            distinct: Some(100),
            p_repeat: Some(p_repeat),
            ..WorkloadSpec::default()
        }
    }

    const GOAL: Goal = Goal {
        target_fp: 1e-2,
        target_fn: None,
        memory: Some(4000),
    };
    const REPLAY: ConfirmReplay = ConfirmReplay {
        arrivals: 0,
        seed: DEFAULT_SEED,
    };

    /// The key of the configuration error `r` is, if it is one.
    fn key(r: Result<SizeRequest>) -> Option<String> {
        match r {
            Err(Error::Setting(s)) => Some(s.key),
            _ => None,
        }
    }

    #[test]
    fn request_errors_come_in_the_commands_order() {
        let seeded = ConfirmReplay { seed: 5, ..REPLAY };
        // A seed without a replay is reported before a bad workload and bad phases.
        assert_eq!(
            key(SizeRequest::new(&spec(1.5), GOAL, "3", seeded)),
            Some("seed".into())
        );
        // A bad workload before bad phases.
        let bad_workload = SizeRequest::new(&spec(1.5), GOAL, "3", REPLAY);
        assert!(bad_workload.is_err() && key(bad_workload) != Some("phases".into()));
        assert_eq!(
            key(SizeRequest::new(&spec(0.9), GOAL, "3", REPLAY)),
            Some("phases".into())
        );
        let no_question = Goal {
            memory: None,
            ..GOAL
        };
        let r = SizeRequest::new(&spec(0.9), no_question, "both", REPLAY);
        assert_eq!(key(r), Some("target-fn".into()));
    }

    #[test]
    fn best_fn_run_answers_at_the_memory_asked() -> Result<()> {
        let mut request = SizeRequest::new(&spec(0.9), GOAL, "1", REPLAY)?;
        request.search.max_hashes = 3;
        let run = size(&request)?;
        assert_eq!(run.sizing.question, Question::BestFn);
        assert!(run.sizing.best.memory <= 4000 && run.sizing.best.phases == 1);
        assert!(run.confirmation.is_none() && run.target_fn.is_none());
        assert_eq!(run.renewal()?.value, run.sizing.best.fn_renewal_upper);
        let json = serde_json::to_value(run.output())
            .map_err(|e| Error::encode("serialise the size output", e))?;
        assert_eq!(json["memory_precision"], serde_json::Value::Null);
        assert_eq!(json["confirmed"], serde_json::Value::Null);
        Ok(())
    }
}
