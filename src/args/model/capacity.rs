//! `rbf model capacity`: expected messages per cycle for a target average FP rate,
//! per model, and the best k (FP paper §V-B, §V-C).

use rbf_foundations::error::Result;
use rbf_judge::report::capacity::capacity_text;
use rbf_predicted::model::false_positive::{capacity, CapacityQuery};

use crate::args::filter_args::HashingArg;

#[derive(clap::Args, Debug)]
pub struct CapacityArgs {
    /// M: total memory in bits (two-phase: two halves of M/2).
    #[arg(long, short = 'm')]
    pub memory: u64,
    /// Target average (count-instance) false-positive rate, in (0, 1).
    #[arg(long)]
    pub target_fp: f64,
    /// Search k over 1..=MAX_HASHES.
    #[arg(long, default_value_t = 16)]
    pub max_hashes: u32,
    /// Bit positions of the sigma-bounded model.
    #[arg(long, value_enum, default_value_t = HashingArg::Colliding)]
    pub hashing: HashingArg,
    /// Model a retaining filter: the message that triggers a recycle is inserted into the
    /// emptied filter (the default, as in `rbf replay` and every other command).
    #[arg(long, overrides_with = "non_retaining")]
    pub retaining: bool,
    /// Model a non-retaining filter (the FP paper's figures).
    #[arg(long)]
    pub non_retaining: bool,
    /// Two-phase model without copy-over.
    #[arg(long)]
    pub no_copy_over: bool,
    /// Print a JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: CapacityArgs, io: &mut crate::args::io::Io) -> Result<()> {
    let c = capacity(&CapacityQuery {
        memory: a.memory,
        target: a.target_fp,
        k_max: a.max_hashes,
        hashing: a.hashing.into(),
        retaining: !a.non_retaining,
        copy_over: !a.no_copy_over,
    })?;
    if a.json {
        return io.json(&c);
    }
    rbf_foundations::out!("{}", capacity_text(&c, !a.non_retaining));
    Ok(())
}
