//! `rbf bench`: the measurements behind docs/PERFORMANCE.md, runnable on any machine.
//! One file per benchmark family.

mod coverage;
mod experiment;
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
    /// Wall time of an experiment config's whole run.
    Experiment(experiment::ExperimentBench),
    /// Coverage study: do the printed intervals cover the truth as often as they claim?
    Coverage(coverage::CoverageBench),
}

pub fn run(a: BenchArgs) -> Result<()> {
    match a.bench {
        Bench::Replay(b) => replay::run(b),
        Bench::Fp(b) => fp::run(b),
        Bench::Fn(b) => fneg::run(b),
        Bench::Ingest(b) => ingest::run(b),
        Bench::Fit(b) => fit::run(b),
        Bench::Experiment(b) => experiment::run(b),
        Bench::Coverage(b) => coverage::run(b),
    }
}

/// Wall-clock and CPU time of repeated runs. CPU time is this thread's time on a CPU
/// (from /proc/thread-self/schedstat, nanoseconds): on a busy machine it is what a run
/// would take with a core to itself, while wall time also counts waiting.
pub struct Measurement {
    pub runs: u32,
    pub wall_median: f64,
    pub wall_best: f64,
    pub cpu_median: Option<f64>,
    pub cpu_best: Option<f64>,
}

pub(crate) fn thread_cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

fn median_and_best(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0])
}

/// Runs `f` `runs` times (at least once) and measures each run.
pub fn measure(runs: u32, mut f: impl FnMut() -> Result<()>) -> Result<Measurement> {
    let runs = runs.max(1);
    let mut wall = Vec::new();
    let mut cpu = Vec::new();
    for _ in 0..runs {
        let c0 = thread_cpu_seconds();
        let t0 = std::time::Instant::now();
        f()?;
        wall.push(t0.elapsed().as_secs_f64());
        if let (Some(a), Some(b)) = (c0, thread_cpu_seconds()) {
            cpu.push(b - a);
        }
    }
    let (wall_median, wall_best) = median_and_best(wall);
    let (cpu_median, cpu_best) = if cpu.len() == runs as usize {
        let (m, b) = median_and_best(cpu);
        (Some(m), Some(b))
    } else {
        (None, None)
    };
    Ok(Measurement {
        runs,
        wall_median,
        wall_best,
        cpu_median,
        cpu_best,
    })
}

impl Measurement {
    /// "N units/s" summary of a run that processed `work` units.
    pub fn throughput(&self, work: f64, unit: &str) -> String {
        let rate = |secs: f64| work / secs / 1e6;
        let mut s = format!(
            "wall median {:.3} s ({:.1} M {unit}/s), best {:.3} s ({:.1} M {unit}/s)",
            self.wall_median,
            rate(self.wall_median),
            self.wall_best,
            rate(self.wall_best)
        );
        if let (Some(m), Some(b)) = (self.cpu_median, self.cpu_best) {
            s.push_str(&format!(
                "; CPU median {m:.3} s ({:.1} M {unit}/s), best {b:.3} s ({:.1} M {unit}/s)",
                rate(m),
                rate(b)
            ));
        }
        s.push_str(&format!(" over {} run(s)", self.runs));
        s
    }
}
