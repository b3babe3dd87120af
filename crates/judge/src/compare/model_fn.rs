//! `rbf model fn` as one library call: every requested FN method judged for a filter
//! and a given workload, without a trace ([`model_fn`]), and the JSON the command
//! prints ([`FnRun::output`]). The command line and the Python package parse their
//! arguments into a filter, a workload and [`JudgeOptions`] and print what comes back.

use std::collections::BTreeMap;

use serde::Serialize;

use super::judge::misfit_note;
use super::{judge, values_by_key, JudgeOptions, Judgement, Record, Subject};
use rbf_data::filter::FilterConfig;
use rbf_data::workload::{Placement, Workload};
use rbf_foundations::error::Result;
use rbf_observed::fit::adequacy::QFitCheck;
use rbf_predicted::model::false_negative::{Method, MethodResult, RenewalMode, RenewalResult};

/// What [`model_fn`] found: the filter and workload judged, and the judgement.
pub struct FnRun<'a> {
    pub filter: &'a FilterConfig,
    pub workload: &'a Workload,
    pub judgement: Judgement,
}

/// Judges `options.methods` for `filter` on the workload `workload`, given as the truth
/// (or as fitted, when it was fitted from a trace).
pub fn model_fn<'a>(
    filter: &'a FilterConfig,
    workload: &'a Workload,
    options: &JudgeOptions,
) -> Result<FnRun<'a>> {
    if options.methods.contains(&Method::Renewal) {
        // The renewal loop polls the flag: Ctrl-C stops it with a clean error.
        rbf_foundations::progress::install_interrupt_handler();
    }
    let judgement = judge(&Subject::given(filter, workload), options, None)?;
    Ok(FnRun {
        filter,
        workload,
        judgement,
    })
}

impl FnRun<'_> {
    /// Why the workload's fit does not reproduce its trace, when it is a file `rbf fit`
    /// wrote whose test failed (or could not be run): D and every bound are then the
    /// fitted model's, not the trace's.
    pub fn workload_misfit(&self) -> Option<String> {
        QFitCheck::recorded(self.workload)
            .filter(|c| !c.fits)
            .map(|c| misfit_note(&c))
    }

    /// How the renewal bound was computed, when it was.
    pub fn renewal(&self) -> Option<RenewalResult> {
        self.judgement.report.as_ref().and_then(|r| r.renewal)
    }

    /// The FN paper's FP per arrival and the method it came from, when one gave it.
    pub fn fp_rate(&self) -> Option<(f64, Method)> {
        self.judgement.report.as_ref().and_then(|r| r.fp_rate())
    }

    /// The JSON record of this run.
    pub fn output(&self) -> FnOutput<'_> {
        let (j, w) = (&self.judgement, self.workload);
        let report = j.report.as_ref();
        let renewal = report.and_then(|r| r.renewal.as_ref());
        let fp = self.fp_rate();
        FnOutput {
            filter: self.filter,
            distinct: w.distinct(),
            p_repeat: w.p_repeat,
            placement: &w.placement,
            values: values_by_key(&j.records),
            fn_renewal_mode: renewal.map(|r| r.mode),
            fn_renewal_tolerance: renewal.map(|r| r.certified_tolerance),
            fp_rate: fp.map(|x| x.0),
            fp_rate_from: fp.map(|x| x.1.name()),
            methods: report
                .map(|r| {
                    let entry = |r| MethodEntry { result: r };
                    r.results
                        .iter()
                        .map(|r| (r.method.name(), entry(r)))
                        .collect()
                })
                .unwrap_or_default(),
            models: &j.records,
            renewal,
            markov_states: report.and_then(|r| r.markov_states),
            workload_misfit: self.workload_misfit(),
        }
    }
}

/// One method's entry in the JSON output.
#[derive(Serialize)]
pub struct MethodEntry<'a> {
    #[serde(flatten)]
    result: &'a MethodResult,
}

/// The JSON `rbf model fn --json` prints.
#[derive(Serialize)]
pub struct FnOutput<'a> {
    filter: &'a FilterConfig,
    distinct: usize,
    p_repeat: f64,
    placement: &'a Placement,
    /// FN per arrival of every bound of the one list (`fn_renewal_upper`,
    /// `fn_markov_lower`, ...; null: not computed).
    #[serde(flatten)]
    values: BTreeMap<&'static str, Option<f64>>,
    /// Which engine produced the renewal bound (exact or certified) and its proven
    /// tolerance: exact <= fn_renewal_upper <= exact (1 + tolerance).
    fn_renewal_mode: Option<RenewalMode>,
    fn_renewal_tolerance: Option<f64>,
    /// The FN paper's FP per arrival (false positives / arrivals).
    fp_rate: Option<f64>,
    fp_rate_from: Option<&'static str>,
    /// Per method: value, claim (upper-bound / lower-bound / approximation), whether
    /// the claim is proven for this workload, and why.
    methods: BTreeMap<&'static str, MethodEntry<'a>>,
    /// Every method judged as every command reports it: claim and standing (proven,
    /// or for the fitted model with a workload fitted from a trace) and note.
    models: &'a [Record],
    renewal: Option<&'a RenewalResult>,
    markov_states: Option<usize>,
    /// Why the workload file's fit was rejected (null: given as the truth, or a fit
    /// that passed its test): the numbers are then the fitted model's only.
    workload_misfit: Option<String>,
}
