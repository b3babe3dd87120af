//! The workload flags of `rbf synth`, `rbf size` and `rbf model fn`, declared once and
//! resolved by the library ([`rbf_data::workload::WorkloadSpec`]).

use std::path::PathBuf;

use clap::Args;

use rbf_data::workload::{Workload, WorkloadSpec};
use rbf_foundations::error::Result;

#[derive(Args, Debug, Clone)]
pub struct WorkloadArgs {
    /// Workload file (JSON, as written by `rbf fit`) with Q, p_r and placement;
    /// --p-repeat and --placement override its values.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["zipf", "distinct"])]
    pub workload: Option<PathBuf>,
    /// Zipf exponent alpha of Q (0 = uniform; 1 when not given); with --distinct.
    #[arg(long, value_name = "ALPHA", requires = "distinct")]
    pub zipf: Option<f64>,
    /// D: number of previously seen messages in Q.
    #[arg(long, value_name = "D", required_unless_present = "workload")]
    pub distinct: Option<usize>,
    /// p_r: probability that an arrival is a draw from Q (a repeat).
    #[arg(long, value_name = "P", required_unless_present = "workload")]
    pub p_repeat: Option<f64>,
    /// Where new messages enter Q: uniform (when not given), top, bottom,
    /// segments:W1,W2,... (relative weights of equal rank segments) or w0,...,w{D-1}
    /// (one weight per rank).
    #[arg(long)]
    pub placement: Option<String>,
}

impl WorkloadArgs {
    pub fn spec(&self) -> WorkloadSpec {
        WorkloadSpec {
            file: self.workload.clone(),
            zipf: self.zipf,
            distinct: self.distinct,
            p_repeat: self.p_repeat,
            placement: self.placement.clone(),
        }
    }

    /// The workload, checked.
    pub fn workload(&self) -> Result<Workload> {
        self.spec().resolve()
    }
}
