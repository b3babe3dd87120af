//! `rbf size`: the smallest filter meeting FP and FN targets, or the best FN at a given
//! memory (FN paper §7.1), by the models, confirmed by replay.

use std::path::PathBuf;

use clap::{ArgGroup, Args};

use rbf::filter::Hashing;
use rbf::model::fneg::RenewalMode;
use rbf::report::Table;
use rbf::size::confirm::{confirm, Confirmation, LEVEL};
use rbf::size::{best_fn, smallest_memory, SizeOptions, Sizing, RELATIVE_PRECISION};
use rbf::workload::{Placement, Workload};
use rbf::{Error, Result};

use super::filter_args::HashingArg;

const DEFAULT_SEED: u64 = 1;

#[derive(Args, Debug)]
#[command(group(ArgGroup::new("goal").required(true).args(["target_fn", "memory"])))]
#[command(group(ArgGroup::new("source").required(true).args(["workload", "zipf"])))]
pub struct SizeArgs {
    /// Workload file (JSON, as written by `rbf fit`) with Q, p_r and placement.
    #[arg(long, value_name = "FILE")]
    pub workload: Option<PathBuf>,
    /// Zipf exponent alpha of Q (0 = uniform); with --distinct and --p-repeat.
    #[arg(long, value_name = "ALPHA", requires_all = ["distinct", "p_repeat"])]
    pub zipf: Option<f64>,
    /// D: number of previously seen messages in Q.
    #[arg(long, value_name = "D", requires = "zipf")]
    pub distinct: Option<usize>,
    /// p_r: probability that an arrival is a draw from Q.
    #[arg(long, value_name = "P", requires = "zipf")]
    pub p_repeat: Option<f64>,
    /// Where new messages enter Q: uniform, top or bottom.
    #[arg(long, default_value = "uniform", requires = "zipf")]
    pub placement: String,
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
    /// FN models' truncation: states and arrivals with probability below EPS are dropped.
    #[arg(long, default_value_t = 1e-10)]
    pub eps: f64,
    /// Renewal bound in the certified tolerance mode (exact <= V <= exact (1 + T)),
    /// as in `rbf model fn --tolerance`: faster where a method is proven, and the
    /// sizing stays on the safe side.
    #[arg(long, value_name = "T")]
    pub tolerance: Option<f64>,
    /// Print a JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(serde::Serialize)]
struct Output<'a> {
    question: &'static str,
    memory: u64,
    hashes: u32,
    sigma: u64,
    phases: u8,
    hashing: &'static str,
    /// Two-phase: the halves use independent positions (what the bound assumes).
    independent_halves: bool,
    fp_model: f64,
    fn_renewal_upper: f64,
    /// Which engine produced the FN bound (exact or certified) and its proven
    /// tolerance: exact <= fn_renewal_upper <= exact (1 + tolerance).
    fn_renewal_mode: RenewalMode,
    fn_renewal_tolerance: f64,
    fn_bound_guaranteed: bool,
    fn_bound_note: &'a str,
    target_fp: f64,
    target_fn: Option<f64>,
    candidates_evaluated: u64,
    /// Smallest-memory: the bisection stops within this fraction of M.
    memory_precision: Option<f64>,
    /// Smallest-memory: the largest M evaluated that failed.
    memory_fails: Option<u64>,
    search: &'a [(u64, bool)],
    confirmation: Option<&'a Confirmation>,
    seconds: f64,
}

fn workload(a: &SizeArgs) -> Result<Workload> {
    let w = match (&a.workload, a.zipf) {
        (Some(path), _) => Workload::load(path)?,
        (None, Some(alpha)) => {
            let d = a
                .distinct
                .ok_or_else(|| Error::config("distinct", "--distinct D is required with --zipf"))?;
            let p = a
                .p_repeat
                .ok_or_else(|| Error::config("p-repeat", "--p-repeat P is required with --zipf"))?;
            Workload::zipf(d, alpha, p, Placement::parse(&a.placement)?)
        }
        (None, None) => {
            return Err(Error::config(
                "workload",
                "give --workload FILE or --zipf ALPHA --distinct D --p-repeat P",
            ))
        }
    };
    w.validate()?;
    Ok(w)
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

pub fn run(a: SizeArgs) -> Result<()> {
    let start = std::time::Instant::now();
    if a.confirm_arrivals == 0 && a.seed != DEFAULT_SEED {
        return Err(Error::config(
            "seed",
            "--seed is the seed of the confirming replay's trace: it does not apply with --confirm-arrivals 0",
        ));
    }
    // The search polls for Ctrl-C between memory sizes.
    rbf::progress::install_interrupt_handler();
    let w = workload(&a)?;
    let hashing = match a.hashing {
        HashingArg::Colliding => Hashing::Colliding,
        HashingArg::Distinct => Hashing::Distinct,
    };
    let options = SizeOptions {
        target_fp: a.target_fp,
        phases: phases(&a.phases)?,
        max_hashes: a.max_hashes,
        hashing,
        eps: a.eps,
        renewal_tolerance: a.tolerance,
    };
    let sizing = match (a.target_fn, a.memory) {
        (Some(g), _) => smallest_memory(g, &options, &w)?,
        (None, Some(m)) => best_fn(m, &options, &w)?,
        (None, None) => {
            return Err(Error::config(
                "target-fn",
                "give --target-fn G (smallest memory) or --memory M (best FN)",
            ))
        }
    };
    let filter = sizing.best.filter(hashing);
    let confirmation = if a.confirm_arrivals > 0 {
        let targets = (a.target_fp, a.target_fn);
        Some(confirm(&filter, &w, a.confirm_arrivals, a.seed, targets, LEVEL)?.0)
    } else {
        None
    };
    let b = &sizing.best;
    if a.json {
        let smallest = sizing.question == "smallest-memory";
        return super::print_json(&Output {
            question: sizing.question,
            memory: b.memory,
            hashes: b.hashes,
            sigma: b.sigma,
            phases: b.phases,
            hashing: hashing.name(),
            independent_halves: filter.independent_halves,
            fp_model: b.fp_model,
            fn_renewal_upper: b.fn_renewal_upper,
            fn_renewal_mode: b.fn_renewal_mode,
            fn_renewal_tolerance: b.fn_renewal_tolerance,
            fn_bound_guaranteed: b.fn_bound_guaranteed,
            fn_bound_note: &b.fn_bound_note,
            target_fp: a.target_fp,
            target_fn: a.target_fn,
            candidates_evaluated: sizing.candidates_evaluated,
            memory_precision: smallest.then_some(RELATIVE_PRECISION),
            memory_fails: sizing.memory_fails,
            search: &sizing.search,
            confirmation: confirmation.as_ref(),
            seconds: start.elapsed().as_secs_f64(),
        });
    }
    print_human(&a, &sizing, &filter, confirmation.as_ref());
    println!("{:.1} s", start.elapsed().as_secs_f64());
    Ok(())
}

fn yes_no(b: bool) -> String {
    if b { "yes" } else { "NO" }.to_string()
}

fn print_human(
    a: &SizeArgs,
    s: &Sizing,
    filter: &rbf::filter::FilterConfig,
    c: Option<&Confirmation>,
) {
    let b = &s.best;
    match s.question {
        "smallest-memory" => println!(
            "smallest memory for FP <= {} and FN <= {} (renewal bound), to {}%: {} bits{}",
            a.target_fp,
            a.target_fn.unwrap_or(f64::NAN),
            100.0 * RELATIVE_PRECISION,
            b.memory,
            s.memory_fails
                .map_or(String::new(), |m| format!(" ({m} bits fail)"))
        ),
        _ => println!(
            "best FN bound at {} bits with FP <= {}",
            b.memory, a.target_fp
        ),
    }
    println!(
        "filter: {} ({} candidates evaluated)",
        filter.describe(),
        s.candidates_evaluated
    );
    let mut t = Table::new(["measure", "value", "target", "note"]);
    t.row([
        "FP model (count-instance f_sigma)".to_string(),
        format!("{:.3e}", b.fp_model),
        format!("{}", a.target_fp),
        String::new(),
    ]);
    t.row([
        "FN renewal upper bound".to_string(),
        format!("{:.3e}", b.fn_renewal_upper),
        a.target_fn.map_or("-".into(), |g| g.to_string()),
        match (b.fn_bound_guaranteed, b.fn_renewal_mode) {
            (true, RenewalMode::Exact) => "proven (exact engine)".to_string(),
            (true, RenewalMode::Certified) => format!(
                "proven (certified mode, at most {:.1e} above the exact engine's value)",
                b.fn_renewal_tolerance
            ),
            (false, _) => format!("NOT proven: {}", b.fn_bound_note),
        },
    ]);
    if let Some(c) = c {
        let iv = |i: Option<rbf::stats::Interval>| {
            i.map_or("no interval".into(), |i| {
                format!("{:.0}% [{:.3e}, {:.3e}]", 100.0 * i.level, i.low, i.high)
            })
        };
        let i = c.intervals;
        t.row([
            "observed FP (count-instance)".to_string(),
            format!("{:.3e}", c.observed_fp_count_instance),
            format!("{}", a.target_fp),
            format!(
                "{}, meets: {}",
                iv(i.map(|i| i.fp_count_instance)),
                yes_no(c.meets_fp)
            ),
        ]);
        t.row([
            "observed FP (per arrival)".to_string(),
            format!("{:.3e}", c.observed_fp),
            String::new(),
            iv(i.map(|i| i.fp)),
        ]);
        t.row([
            "observed FN (per arrival)".to_string(),
            format!("{:.3e}", c.observed_fn),
            a.target_fn.map_or("-".into(), |g| g.to_string()),
            format!(
                "{}{}",
                iv(i.map(|i| i.fn_)),
                c.meets_fn
                    .map_or(String::new(), |m| format!(", meets: {}", yes_no(m)))
            ),
        ]);
    }
    print!("{}", t.render());
    if let Some(c) = c {
        println!(
            "replay: {} synthetic arrivals, first {} (prologue + 10%) not counted, {} cycles",
            c.arrivals, c.warmup, c.cycles
        );
    }
}
