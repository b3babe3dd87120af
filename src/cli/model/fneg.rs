//! `rbf model fn`: false-negative bounds and approximations of the FN paper for a
//! filter and a workload (Q, p_r, placement).

use clap::Args;
use serde::Serialize;

use rbf::compare::{judge, values_by_key, JudgeOptions, Record, Subject};
use rbf::filter::FilterConfig;
use rbf::model::fneg::{Method, MethodResult, RenewalMode, RenewalResult};
use rbf::report::judged::{claim_cell, renewal_mode_line};
use rbf::report::{rate, wrap, Table, WIDTH};

use rbf::workload::Placement;
use rbf::Result;

use crate::cli::filter_args::FilterArgs;
use crate::cli::model_args::{MethodArgs, ModelArgs};
use crate::cli::workload_args::WorkloadArgs;

#[derive(Args, Debug)]
pub struct FnArgs {
    #[command(flatten)]
    pub filter: Box<FilterArgs>,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    #[command(flatten)]
    pub methods: MethodArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Print a JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// One method's entry in the JSON output.
#[derive(Serialize)]
struct MethodEntry<'a> {
    #[serde(flatten)]
    result: &'a MethodResult,
}

#[derive(Serialize)]
struct Output<'a> {
    filter: &'a FilterConfig,
    distinct: usize,
    p_repeat: f64,
    placement: &'a Placement,
    /// FN per arrival of every bound of the one list (`fn_renewal_upper`,
    /// `fn_markov_lower`, ...; null: not computed).
    #[serde(flatten)]
    values: std::collections::BTreeMap<&'static str, Option<f64>>,
    /// Which engine produced the renewal bound (exact or certified) and its proven
    /// tolerance: exact <= fn_renewal_upper <= exact (1 + tolerance).
    fn_renewal_mode: Option<RenewalMode>,
    fn_renewal_tolerance: Option<f64>,
    /// The FN paper's FP per arrival (false positives / arrivals).
    fp_rate: Option<f64>,
    fp_rate_from: Option<&'static str>,
    /// Per method: value, claim (upper-bound / lower-bound / approximation), whether
    /// the claim is proven for this workload, and why.
    methods: std::collections::BTreeMap<&'static str, MethodEntry<'a>>,
    /// Every method judged as every command reports it: claim and standing (proven,
    /// or for the fitted model with a workload fitted from a trace) and note.
    models: &'a [Record],
    renewal: Option<&'a RenewalResult>,
    markov_states: Option<usize>,
}

pub fn run(a: FnArgs, io: &mut crate::cli::io::Io) -> Result<()> {
    let filter = a.filter.config()?;
    let w = a.workload.workload()?;
    let methods = a.methods.methods()?;
    if methods.contains(&Method::Renewal) {
        // The renewal loop polls the flag: Ctrl-C stops it with a clean error.
        rbf::progress::install_interrupt_handler();
    }
    let j = judge(
        &Subject::given(&filter, &w),
        &JudgeOptions::new(methods, a.model.eps, a.model.tolerance, true),
        None,
    )?;
    let report = j.report.as_ref();
    let renewal = report.and_then(|r| r.renewal);
    let fp = report.and_then(|r| r.fp_rate());
    if a.json {
        let out = Output {
            filter: &filter,
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
                    r.results
                        .iter()
                        .map(|r| (r.method.name(), MethodEntry { result: r }))
                        .collect()
                })
                .unwrap_or_default(),
            models: &j.records,
            renewal: renewal.as_ref(),
            markov_states: report.and_then(|r| r.markov_states),
        };
        return io.json(&out);
    }
    rbf::outln!("filter: {}", filter.describe());
    rbf::outln!(
        "workload: D = {}, p_r = {:.5}, placement {}",
        w.distinct(),
        w.p_repeat,
        w.placement.describe()
    );
    print_results(&j.records, renewal.as_ref(), fp)
}

/// The judged methods' table, how the renewal bound was computed, and the FP per
/// arrival with the model it came from.
fn print_results(
    records: &[Record],
    renewal: Option<&RenewalResult>,
    fp: Option<(f64, Method)>,
) -> Result<()> {
    rbf::out!("{}", table(records));
    if let Some(r) = renewal {
        rbf::out!("{}", wrap(&renewal_mode_line(r), WIDTH, "    "));
    }
    if let Some((fp, from)) = fp {
        rbf::outln!(
            "FP per arrival (FN paper's definition, {} model): {}",
            from.name(),
            rate(fp)
        );
    }
    Ok(())
}

fn table(records: &[Record]) -> String {
    let mut t = Table::new(["method", "FN per arrival", "claim", "standing"]).left_aligned(&[2, 3]);
    for r in records {
        let n = t.note(&r.note);
        t.row([
            format!("{} [{n}]", r.bound.name()),
            rate(r.value),
            claim_cell(r.claim).to_string(),
            r.standing.to_string(),
        ]);
    }
    t.render()
}
