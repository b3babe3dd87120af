//! `rbf bench`: the measurements behind docs/PERFORMANCE.md, runnable on any machine.
//! One file per benchmark family.

mod fit;
mod fneg;
mod fp;
mod ingest;
mod replay;

use clap::{Args, Subcommand};

use rbf::Result;

#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub bench: Bench,
}

#[derive(Subcommand, Debug)]
pub enum Bench {
    /// Replay throughput of an in-memory synthetic stream.
    Replay(replay::ReplayBench),
    /// FP-model computation times.
    Fp(fp::FpBench),
    /// FN-bound computation times.
    Fn(fneg::FnBench),
    /// Trace parsing throughput.
    Ingest(ingest::IngestBench),
    /// Workload-fitting throughput.
    Fit(fit::FitBench),
}

pub fn run(a: BenchArgs) -> Result<()> {
    match a.bench {
        Bench::Replay(b) => replay::run(b),
        Bench::Fp(b) => fp::run(b),
        Bench::Fn(b) => fneg::run(b),
        Bench::Ingest(b) => ingest::run(b),
        Bench::Fit(b) => fit::run(b),
    }
}
