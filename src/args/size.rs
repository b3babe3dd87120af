//! `rbf size`: the smallest filter meeting FP and FN targets, or the best FN at a given
//! memory (FN paper §7.1), by the models, confirmed by replay.

use std::path::PathBuf;

use clap::{ArgGroup, Args};

use rbf_foundations::error::Result;
use rbf_judge::report::size::{size_text, trace_size_text};
use rbf_judge::size::command::{DEFAULT_CONFIRM_ARRIVALS, DEFAULT_SEED};
use rbf_judge::size::trace::{size_from_trace, TraceSizeRequest};
use rbf_judge::size::{size, ConfirmReplay, Goal, SizeRequest};
use rbf_observed::replay::{ReplayOptions, DEFAULT_HASH_SEEDS};

use super::filter_args::HashingArg;
use super::model_args::ModelArgs;
use super::trace_args::TraceArgs;
use super::workload_args::WorkloadArgs;

/// The workload flags, which a trace replaces (it is fitted instead).
const WORKLOAD_FLAGS: [&str; 5] = ["workload", "zipf", "distinct", "p_repeat", "placement"];

#[derive(Args, Debug)]
#[command(group(ArgGroup::new("goal").required(true).args(["target_fn", "memory"])))]
#[command(mut_arg("distinct", |a| a.required_unless_present_any(["workload", "trace"])))]
#[command(mut_arg("p_repeat", |a| a.required_unless_present_any(["workload", "trace"])))]
pub struct SizeArgs {
    /// Trace to size the filter on (files, a directory or a glob read as one series, or
    /// `-` for standard input; decoded once, its keys kept in a temporary file for the
    /// search's later passes). The filter is sized
    /// by the bound that holds on this trace (renewal-trace) and confirmed by replaying
    /// the trace itself; the smallest memory the replay shows sufficient is printed
    /// beside it. Without a trace, the workload flags describe the traffic.
    #[arg(num_args = 1.., conflicts_with_all = WORKLOAD_FLAGS)]
    pub trace: Vec<PathBuf>,
    #[command(flatten)]
    pub trace_args: TraceArgs,
    /// With a trace: arrivals that update state but are not counted.
    #[arg(long, default_value_t = 0, requires = "trace")]
    pub warmup: u64,
    /// With a trace: filters (hash seeds) replayed per candidate.
    #[arg(long, default_value_t = DEFAULT_HASH_SEEDS, requires = "trace")]
    pub hash_seeds: u32,
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
    /// Synthetic arrivals replayed through the chosen filter (0: no replay); a trace
    /// is replayed itself instead.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_CONFIRM_ARRIVALS, conflicts_with = "trace")]
    pub confirm_arrivals: u64,
    /// Seed of the synthetic trace.
    #[arg(long, default_value_t = DEFAULT_SEED, conflicts_with = "trace")]
    pub seed: u64,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Print a JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: SizeArgs, io: &mut super::io::Io) -> Result<()> {
    if !a.trace.is_empty() {
        return run_on_trace(a, io);
    }
    let goal = Goal {
        target_fp: a.target_fp,
        target_fn: a.target_fn,
        memory: a.memory,
    };
    let replay = ConfirmReplay {
        arrivals: a.confirm_arrivals,
        seed: a.seed,
    };
    let mut request = SizeRequest::new(&a.workload.spec(), goal, &a.phases, replay)?;
    request.search.max_hashes = a.max_hashes;
    request.search.hashing = a.hashing.into();
    request.search.eps = a.model.eps;
    request.search.renewal_tolerance = a.model.tolerance;
    request.search.progress = true;
    let run = size(&request)?;
    if a.json {
        return io.json(&run.output());
    }
    rbf_foundations::out!("{}", size_text(&run)?);
    Ok(())
}

/// `rbf size TRACE`: the search replays the trace once per memory size tried.
fn run_on_trace(a: SizeArgs, io: &mut super::io::Io) -> Result<()> {
    let mut request = TraceSizeRequest::new(a.target_fp, a.target_fn, a.memory);
    request.phases = rbf_judge::size::command::phase_counts(&a.phases)?;
    request.max_hashes = a.max_hashes;
    request.hashing = a.hashing.into();
    request.replay = ReplayOptions {
        warmup: a.warmup,
        ..ReplayOptions::default()
    };
    request.hash_seeds = a.hash_seeds;
    request.eps = a.model.eps;
    request.tolerance = a.model.tolerance;
    request.progress = true;
    let mut source = io.open(&a.trace_args, &a.trace)?;
    let run = size_from_trace(&request, source.as_mut())?;
    super::print_ingest_notes(&run.ingest);
    if a.json {
        return io.json(&run);
    }
    rbf_foundations::out!("{}", trace_size_text(&run)?);
    Ok(())
}
