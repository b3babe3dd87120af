//! `rbf model`: analytical predictions without a trace.

pub mod capacity;
pub mod false_negative;
pub mod false_positive;

use clap::{Args, Subcommand};

use rbf_foundations::error::Result;

#[derive(Args, Debug)]
pub struct ModelArgs {
    #[command(subcommand)]
    pub model: Model,
}

#[derive(Subcommand, Debug)]
pub enum Model {
    /// Average false-positive rate of a sigma-bounded filter (FP paper).
    Fp(false_positive::FpArgs),
    /// Message capacity for a target average FP rate, and the best k.
    Capacity(capacity::CapacityArgs),
    /// False-negative bounds and approximations for a workload (FN paper).
    Fn(false_negative::FnArgs),
}

pub fn run(a: ModelArgs, io: &mut super::io::Io) -> Result<()> {
    match a.model {
        // Both poll for Ctrl-C between steps of their long loops.
        Model::Fp(x) => {
            rbf_foundations::progress::install_interrupt_handler();
            false_positive::run(x, io)
        }
        Model::Capacity(x) => {
            rbf_foundations::progress::install_interrupt_handler();
            capacity::run(x, io)
        }
        Model::Fn(x) => false_negative::run(x, io),
    }
}
