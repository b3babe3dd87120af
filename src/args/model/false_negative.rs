//! `rbf model fn`: false-negative bounds and approximations of the FN paper for a
//! filter and a workload (Q, p_r, placement).

use clap::Args;

use rbf_foundations::error::Result;
use rbf_judge::compare::model_fn::model_fn;
use rbf_judge::compare::JudgeOptions;
use rbf_judge::report::model_fn::model_fn_text;

use crate::args::filter_args::FilterArgs;
use crate::args::model_args::{MethodArgs, ModelArgs};
use crate::args::workload_args::WorkloadArgs;

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

pub fn run(a: FnArgs, io: &mut crate::args::io::Io) -> Result<()> {
    let filter = a.filter.config()?;
    let w = a.workload.workload()?;
    let methods = a.methods.methods()?;
    let options = JudgeOptions::new(methods, a.model.eps, a.model.tolerance, true);
    let run = model_fn(&filter, &w, &options)?;
    if a.json {
        return io.json(&run.output());
    }
    rbf_foundations::out!("{}", model_fn_text(&run));
    Ok(())
}
