//! `rbf-bench`: the measurements behind docs/PERFORMANCE.md and the coverage study
//! (docs/coverage/), runnable on any machine. A binary of its own, beside `rbf`, so that
//! the binary users run carries only their commands; it is built and tested with the
//! crate (`cargo build --release`, `cargo test --release`). One file per benchmark family.

mod coverage;
mod experiment;
mod false_negative;
mod false_positive;
mod fit;
mod ingest;
mod replay;

use std::process::ExitCode;

use clap::{CommandFactory, Subcommand};

use rbf_foundations::error::Result;

/// The command line: the library's root flags (`--quiet`) over the benchmarks.
type Cli = rbf::args::Cli<Bench>;

#[derive(Subcommand, Debug)]
enum Bench {
    /// Replay throughput of an in-memory synthetic stream.
    Replay(replay::ReplayBench),
    /// FP-model computation times.
    Fp(false_positive::FpBench),
    /// FN-bound computation times.
    Fn(false_negative::FnBench),
    /// Trace parsing throughput.
    Ingest(ingest::IngestBench),
    /// Workload-fitting throughput.
    Fit(fit::FitBench),
    /// Wall time of an experiment config's whole run.
    Experiment(experiment::ExperimentBench),
    /// Coverage study: do the printed intervals cover the truth as often as they claim?
    Coverage(coverage::CoverageBench),
}

fn main() -> ExitCode {
    // First: the signal mask it sets must be inherited by every thread started later.
    rbf_foundations::signals::install();
    rbf_foundations::signals::quiet_broken_pipe();
    let cli = parse();
    rbf_foundations::progress::set_quiet(cli.quiet);
    rbf::args::usage::exit_code(run(cli.command))
}

/// The root command: `rbf`'s, named and described as this program.
fn command() -> clap::Command {
    Cli::command()
        .name("rbf-bench")
        .bin_name("rbf-bench")
        .about("rbf's benchmarks (the measurements of docs/PERFORMANCE.md) and its coverage study")
}

/// Parses the process's arguments with the library's parsers; a usage error ends the
/// process as `rbf`'s do (status 2).
fn parse() -> Cli {
    rbf::args::try_parse_command(command(), std::env::args_os())
        .unwrap_or_else(|e| rbf::args::usage::exit_with(e))
}

fn run(bench: Bench) -> Result<()> {
    match bench {
        Bench::Replay(b) => replay::run(b),
        Bench::Fp(b) => false_positive::run(b),
        Bench::Fn(b) => false_negative::run(b),
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

#[cfg(test)]
mod tests {
    /// Every flag and argument of every benchmark says what it is in `--help`.
    #[test]
    fn every_flag_has_help() {
        let missing = rbf::args::usage::undocumented(&super::command());
        assert!(missing.is_empty(), "flags without help: {missing:?}");
    }
}
