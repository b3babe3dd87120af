//! `rbf-bench experiment CONFIG`: wall time of a whole experiment run (target: a
//! 100-point grid over a 2 M-arrival trace, observed + renewal + drop-pins, under 60 s
//! on 2 cores), split into source preparation and the grid, with the thread count.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use rbf_foundations::error::Result;
use rbf_judge::experiment::{self, ExperimentConfig, RunOptions};

#[derive(Args, Debug)]
pub struct ExperimentBench {
    /// Experiment file (e.g. configs/bench-grid.toml).
    config: PathBuf,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Repetitions; the median and best wall times are reported.
    #[arg(long, default_value_t = 1)]
    runs: u32,
}

pub fn run(a: ExperimentBench) -> Result<()> {
    let config = ExperimentConfig::load(&a.config)?;
    rbf_judge::experiment::check(&config)?;
    let points = experiment::grid::expand(&config).len();
    rbf::args::with_threads(a.threads, || {
        let mut rows = 0;
        let t0 = Instant::now();
        let m = super::measure(a.runs, || {
            rows = experiment::run(&config, RunOptions::default())?.rows.len();
            Ok(())
        })?;
        rbf_foundations::outln!(
            "experiment {}: {points} points ({rows} rows), {} threads, {} run(s) in {:.1} s",
            config.name,
            rayon::current_num_threads(),
            m.runs,
            t0.elapsed().as_secs_f64()
        );
        rbf_foundations::outln!(
            "wall time per run: median {:.2} s, best {:.2} s",
            m.wall_median,
            m.wall_best
        );
        Ok(())
    })
}
