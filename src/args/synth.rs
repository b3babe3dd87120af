//! `rbf synth`: write a synthetic request log drawn from the FN paper's arrival model.

use std::path::PathBuf;

use clap::Args;

use super::workload_args::WorkloadArgs;
use rbf_data::synth::command::{self, SynthRequest, SynthRun};
use rbf_foundations::error::Result;

#[derive(Args, Debug)]
pub struct SynthArgs {
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// Arrivals after the prologue.
    #[arg(long)]
    pub arrivals: u64,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Do not start with the prologue (each of the D initial messages once).
    #[arg(long)]
    pub no_prologue: bool,
    /// Output file; a name ending in .zst is zstd-compressed; `-` is stdout. It appears
    /// only once complete.
    #[arg(long, short = 'o')]
    pub output: PathBuf,
}

pub fn run(a: SynthArgs) -> Result<()> {
    let spec = a.workload.spec();
    let request = SynthRequest::new(&spec, a.arrivals, a.seed, !a.no_prologue, &a.output)?;
    if let Some(why) = rbf_judge::size::misfit(request.workload()) {
        rbf_foundations::errln!(
            "{}",
            rbf_judge::report::size::misfit_warning(&why, "the trace written is drawn")
        );
    }
    let SynthRun { written, prologue } = command::run(&request)?;
    rbf_foundations::errln!(
        "wrote {written} arrivals to {} ({prologue} prologue + {} drawn); replay with --warmup {prologue} or more to measure the model's steady state",
        a.output.display(),
        a.arrivals
    );
    Ok(())
}
