//! `rbf size`: the smallest filter meeting FP and FN targets, or the best FN at a given
//! memory (FN paper §7.1), by the models, confirmed by replay.

use clap::{ArgGroup, Args};

use crate::report::size::size_text;
use crate::size::command::{DEFAULT_CONFIRM_ARRIVALS, DEFAULT_SEED};
use crate::size::{size, ConfirmReplay, Goal, SizeRequest};
use crate::Result;

use super::filter_args::HashingArg;
use super::model_args::ModelArgs;
use super::workload_args::WorkloadArgs;

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
    #[arg(long, value_name = "N", default_value_t = DEFAULT_CONFIRM_ARRIVALS)]
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

pub fn run(a: SizeArgs, io: &mut super::io::Io) -> Result<()> {
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
    crate::out!("{}", size_text(&run)?);
    Ok(())
}
