//! `rbf size`: the smallest filter meeting FP and FN targets, or the best FN at a given
//! memory (FN paper §7.1), by the models, confirmed by replay.

use clap::{ArgGroup, Args};

use rbf::compare::verdict::Check;
use rbf::compare::{
    values_by_key, Bound, ModelTargetVerdict, Observed, Rate, Record, Regime, TargetVerdict,
};
use rbf::filter::Hashing;
use rbf::model::fneg::{Method, RenewalMode};
use rbf::report::judged::{beyond, verdict_cell};
use rbf::report::Table;
use rbf::size::confirm::{confirm, Confirmation, LEVEL};
use rbf::size::{
    best_fn, judged, misfit, smallest_memory, Question, SizeOptions, Sizing, RELATIVE_PRECISION,
};
use rbf::workload::Workload;
use rbf::{Error, Result};

use super::filter_args::HashingArg;
use super::model_args::ModelArgs;
use super::workload_args::WorkloadArgs;

const DEFAULT_SEED: u64 = 1;

#[derive(Args, Debug)]
#[command(group(ArgGroup::new("goal").required(true).args(["target_fn", "memory"])))]
pub struct SizeArgs {
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// Target average FP rate (FP paper, count-instance).
    #[arg(long, value_name = "F")]
    pub target_fp: f64,
    /// Target FN rate per arrival: find the smallest memory (question 2 of §7.1).
    #[arg(long, value_name = "G")]
    pub target_fn: Option<f64>,
    /// Memory M in bits: find the best FN bound there (question 1 of §7.1).
    #[arg(long, value_name = "M")]
    pub memory: Option<u64>,
    /// Phase counts to try: 1, 2 or both.
    #[arg(long, default_value = "both")]
    pub phases: String,
    /// k is tried from 1 to K.
    #[arg(long, value_name = "K", default_value_t = 8)]
    pub max_hashes: u32,
    /// Bit positions: colliding (with replacement) or distinct (without).
    #[arg(long, value_enum, default_value = "colliding")]
    pub hashing: HashingArg,
    /// Synthetic arrivals replayed through the chosen filter (0: no replay).
    #[arg(long, value_name = "N", default_value_t = 2_000_000)]
    pub confirm_arrivals: u64,
    /// Seed of the synthetic trace.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Print a JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(serde::Serialize)]
struct Output<'a> {
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
    values: std::collections::BTreeMap<&'static str, Option<f64>>,
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

fn phases(s: &str) -> Result<Vec<u8>> {
    match s {
        "1" => Ok(vec![1]),
        "2" => Ok(vec![2]),
        "both" => Ok(vec![1, 2]),
        other => Err(Error::config(
            "phases",
            format!("expected 1, 2 or both, found `{other}`"),
        )),
    }
}

pub fn run(a: SizeArgs, io: &mut super::io::Io) -> Result<()> {
    let start = std::time::Instant::now();
    if a.confirm_arrivals == 0 && a.seed != DEFAULT_SEED {
        return Err(Error::config(
            "seed",
            "--seed is the seed of the confirming replay's trace: it does not apply with --confirm-arrivals 0",
        ));
    }
    // The search polls for Ctrl-C between memory sizes.
    rbf::progress::install_interrupt_handler();
    let w = a.workload.workload()?;
    let hashing = match a.hashing {
        HashingArg::Colliding => Hashing::Colliding,
        HashingArg::Distinct => Hashing::Distinct,
    };
    let options = SizeOptions {
        target_fp: a.target_fp,
        phases: phases(&a.phases)?,
        max_hashes: a.max_hashes,
        hashing,
        eps: a.model.eps,
        renewal_tolerance: a.model.tolerance,
        progress: true,
    };
    let sizing = search(&a, &options, &w)?;
    let filter = sizing.best.filter(hashing);
    let (confirmation, observed) = if a.confirm_arrivals > 0 {
        let targets = (a.target_fp, a.target_fn);
        let (c, report) = confirm(&filter, &w, a.confirm_arrivals, a.seed, targets, LEVEL)?;
        (Some(c), Some(Observed::of_one(&report, Rate::Fn)))
    } else {
        (None, None)
    };
    let judgement = judged(&sizing.best, &options, &w, observed.as_ref())?;
    let chosen = Chosen {
        sizing: &sizing,
        filter: &filter,
        records: &judgement.records,
        confirmation: confirmation.as_ref(),
    };
    if a.json {
        return io.json(&chosen.output(&a, misfit(&w), start.elapsed().as_secs_f64()));
    }
    let record = judgement
        .get(Bound::of(Method::Renewal))
        .ok_or_else(|| Error::invalid("the judge gave no renewal bound for the chosen filter"))?;
    if let Some(why) = misfit(&w) {
        warn_misfit(&why)?;
    }
    print_human(&a, &sizing, &filter, record, confirmation.as_ref())?;
    rbf::outln!(
        "time: {:.1} s (search and replay)",
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Warns that the size is for a fitted model whose fit failed its test.
fn warn_misfit(why: &str) -> Result<()> {
    rbf::out!(
        "{}",
        rbf::report::wrap(
            &format!(
                "warning: the workload does not fit its trace ({why}): the size below is for \
                 the fitted model, not a promise for the trace"
            ),
            rbf::report::WIDTH,
            "    "
        )
    );
    Ok(())
}

/// The search for the question asked: the smallest memory for `--target-fn`, or the
/// best FN at `--memory`.
fn search(a: &SizeArgs, options: &SizeOptions, w: &Workload) -> Result<Sizing> {
    match (a.target_fn, a.memory) {
        (Some(g), _) => smallest_memory(g, options, w),
        (None, Some(m)) => best_fn(m, options, w),
        (None, None) => Err(Error::config(
            "target-fn",
            "give --target-fn G (smallest memory) or --memory M (best FN)",
        )),
    }
}

/// What the search chose, the judged bound and the confirming replay: what the JSON
/// output is made of.
struct Chosen<'a> {
    sizing: &'a Sizing,
    filter: &'a rbf::filter::FilterConfig,
    records: &'a [Record],
    confirmation: Option<&'a Confirmation>,
}

impl<'a> Chosen<'a> {
    /// The JSON object, with the misfit warning and the seconds taken.
    fn output(&self, a: &SizeArgs, workload_misfit: Option<String>, seconds: f64) -> Output<'a> {
        let (s, b) = (self.sizing, &self.sizing.best);
        let smallest = s.question == Question::SmallestMemory;
        Output {
            question: s.question,
            memory: b.memory,
            hashes: b.hashes,
            sigma: b.sigma,
            phases: b.phases,
            hashing: self.filter.hashing.name(),
            independent_halves: self.filter.independent_halves,
            fp_model: b.fp_model,
            values: values_by_key(self.records),
            fn_renewal_mode: b.fn_renewal_mode,
            fn_renewal_tolerance: b.fn_renewal_tolerance,
            models: self.records,
            target_fp: a.target_fp,
            target_fn: a.target_fn,
            candidates_evaluated: s.candidates_evaluated,
            memory_precision: smallest.then_some(RELATIVE_PRECISION),
            memory_fails: s.memory_fails,
            search: &s.search,
            confirmation: self.confirmation,
            confirmed: self.confirmation.map(|c| !c.misses()),
            workload_misfit,
            seconds,
        }
    }
}

fn print_human(
    a: &SizeArgs,
    s: &Sizing,
    filter: &rbf::filter::FilterConfig,
    record: &Record,
    c: Option<&Confirmation>,
) -> Result<()> {
    rbf::out!(
        "{}",
        rbf::report::wrap(&headline(a, s, c), rbf::report::WIDTH, "    ")
    );
    rbf::out!(
        "{}",
        rbf::report::wrap(
            &format!(
                "filter: {} ({} candidates evaluated)",
                filter.describe(),
                s.candidates_evaluated
            ),
            rbf::report::WIDTH,
            "    "
        )
    );
    rbf::out!("{}", table(a, &s.best, record, c).render());
    if let Some(c) = c {
        rbf::outln!(
            "replay: {} synthetic arrivals, first {} (prologue + 10%) not counted, {} cycles{}",
            c.arrivals,
            c.warmup,
            c.cycles,
            if c.regime == Regime::Transient {
                " (transient: too few recycles for a steady-state estimate)"
            } else {
                ""
            }
        );
    }
    Ok(())
}

/// The answer in one sentence, saying NOT CONFIRMED when the replay misses a target.
fn headline(a: &SizeArgs, s: &Sizing, c: Option<&Confirmation>) -> String {
    let b = &s.best;
    let headline = match s.question {
        Question::SmallestMemory => format!(
            "smallest memory for FP <= {} and FN <= {} (renewal bound), to {}%: {} bits{}",
            a.target_fp,
            a.target_fn.unwrap_or(f64::NAN),
            100.0 * RELATIVE_PRECISION,
            b.memory,
            s.memory_fails
                .map_or(String::new(), |m| format!(" ({m} bits fail)"))
        ),
        Question::BestFn => format!(
            "best FN bound at {} bits with FP <= {}",
            b.memory, a.target_fp
        ),
    };
    match c {
        Some(c) if c.misses() => format!(
            "{headline}; NOT CONFIRMED: its confirming replay MISSES the {} (below)",
            if c.fp_verdict == TargetVerdict::Misses {
                "FP target"
            } else {
                "FN target"
            }
        ),
        _ => headline,
    }
}

/// Models and observations against the targets. A model's number is exact for its
/// model, so its verdict is a comparison; an observation's is three-way on its interval.
fn table(
    a: &SizeArgs,
    b: &rbf::size::Candidate,
    record: &Record,
    c: Option<&Confirmation>,
) -> Table {
    let level = format!("{:.0}% interval", 100.0 * LEVEL);
    let mut t =
        Table::new(["measure", "value", "target", level.as_str(), "verdict"]).left_aligned(&[4]);
    model_rows(&mut t, a, b, record, c);
    let Some(c) = c else {
        return t;
    };
    observed_rows(&mut t, a, c);
    if record.verdict.is_some() {
        t.note(format!(
            "the renewal bound against the replay's FN interval: {}",
            verdict_cell(record)
        ));
    }
    t.note(
        "verdicts on observations: meets = the whole interval is within the target, \
         MISSES = the whole interval is beyond it, undecided = the interval straddles it",
    );
    if c.misses() {
        t.note(
            "NOT CONFIRMED: the model's number meets the target, but the replay of the same \
             filter misses it",
        );
    }
    t
}

/// The FP model's and the renewal bound's rows, verdicts by comparison with the targets.
fn model_rows(
    t: &mut Table,
    a: &SizeArgs,
    b: &rbf::size::Candidate,
    record: &Record,
    c: Option<&Confirmation>,
) {
    let model_verdict = |value: f64, target: f64, replay: Option<TargetVerdict>| {
        ModelTargetVerdict::of(value, target, replay).to_string()
    };
    t.row([
        "FP model (count-instance f_sigma)".to_string(),
        rbf::report::sci(b.fp_model),
        rbf::report::sci(a.target_fp),
        String::new(),
        model_verdict(b.fp_model, a.target_fp, c.map(|c| c.fp_verdict)),
    ]);
    let engine = match b.fn_renewal_mode {
        RenewalMode::Exact => "exact engine".to_string(),
        RenewalMode::Certified => format!(
            "certified mode, at most {:.1e} above the exact engine's value",
            b.fn_renewal_tolerance
        ),
    };
    let n = t.note(format!(
        "{}: {} ({engine}): {}",
        record.bound.name(),
        record.standing,
        record.note
    ));
    t.row([
        format!("FN renewal upper bound, {} [{n}]", record.standing),
        rbf::report::sci(record.value),
        a.target_fn.map_or("-".into(), rbf::report::sci),
        String::new(),
        a.target_fn.map_or("-".into(), |g| {
            model_verdict(b.fn_renewal_upper, g, c.and_then(|c| c.fn_verdict))
        }),
    ]);
}

/// The confirming replay's rows, each verdict three-way on its interval.
fn observed_rows(t: &mut Table, a: &SizeArgs, c: &Confirmation) {
    let iv =
        |i: Option<&rbf::stats::Interval>| rbf::report::interval_or_why(i, rbf::report::interval);
    let i = c.intervals.as_ref();
    let verdict = |t: &mut Table, check: Check| {
        let v = check.target().to_string();
        match beyond(&check, "the target") {
            Some(e) => format!("{v} [{}]", t.note(e)),
            None => v,
        }
    };
    let fp_verdict = verdict(t, c.fp_check(a.target_fp));
    t.row([
        "observed FP (count-instance)".to_string(),
        rbf::report::sci(c.observed_fp_count_instance),
        rbf::report::sci(a.target_fp),
        iv(i.map(|i| &i.fp_count_instance)),
        fp_verdict,
    ]);
    t.row([
        "observed FP (per arrival)".to_string(),
        rbf::report::sci(c.observed_fp),
        String::new(),
        iv(i.map(|i| &i.fp)),
        String::new(),
    ]);
    let fn_verdict = a
        .target_fn
        .map_or(String::new(), |g| verdict(t, c.fn_check(g)));
    t.row([
        "observed FN (per arrival)".to_string(),
        rbf::report::sci(c.observed_fn),
        a.target_fn.map_or("-".into(), rbf::report::sci),
        iv(i.map(|i| &i.fn_)),
        fn_verdict,
    ]);
}
