//! `rbf model`: analytical predictions without a trace.

pub mod capacity;
pub mod fneg;
pub mod fp;

use clap::{Args, Subcommand};

use crate::Result;

#[derive(Args, Debug)]
pub struct ModelArgs {
    #[command(subcommand)]
    pub model: Model,
}

#[derive(Subcommand, Debug)]
pub enum Model {
    /// Average false-positive rate of a sigma-bounded filter (FP paper).
    Fp(fp::FpArgs),
    /// Message capacity for a target average FP rate, and the best k.
    Capacity(capacity::CapacityArgs),
    /// False-negative bounds and approximations for a workload (FN paper).
    Fn(fneg::FnArgs),
}

pub fn run(a: ModelArgs, io: &mut super::io::Io) -> Result<()> {
    match a.model {
        // Both poll for Ctrl-C between steps of their long loops.
        Model::Fp(x) => {
            crate::progress::install_interrupt_handler();
            fp::run(x, io)
        }
        Model::Capacity(x) => {
            crate::progress::install_interrupt_handler();
            capacity::run(x, io)
        }
        Model::Fn(x) => fneg::run(x, io),
    }
}
