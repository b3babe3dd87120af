//! `rbf-bench coverage CONFIG`: the coverage study (configs/coverage.toml,
//! outputs in docs/coverage/): do the printed 99 % intervals cover the truth in 99 % of
//! seeds, and is the conservative fitted renewal bound at or above the true-workload
//! bound? Resumable and shardable; the summary is rewritten from every record present.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use rbf_foundations::error::Result;
use rbf_judge::experiment::grid::Shard;
use rbf_study::coverage::{self, CoverageConfig};

#[derive(Args, Debug)]
pub struct CoverageBench {
    /// Study file (e.g. configs/coverage.toml).
    config: PathBuf,
    /// Output directory (records/, summary.md, summary.csv); default: the config's
    /// `output` (relative to it), else its name under the config file's `../docs/`.
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Run only shard I of N (0-based, round-robin over units); every shard appends to
    /// its own records file in the same directory, and the summary covers them all.
    #[arg(long)]
    shard: Option<String>,
    /// Seeds per cell instead of the config's (a smaller or larger study).
    #[arg(long)]
    seeds: Option<u64>,
    /// Only summarise the records present; run nothing.
    #[arg(long)]
    summary_only: bool,
    /// Print each cell's sigma, true-workload bound and expected cycles per seed, and
    /// run nothing.
    #[arg(long)]
    plan: bool,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
}

pub fn run(a: CoverageBench) -> Result<()> {
    let mut config = CoverageConfig::load(&a.config)?;
    if let Some(s) = a.seeds {
        config.seeds = s;
        config.validate()?;
    }
    let base = a.config.parent().unwrap_or(std::path::Path::new("."));
    let dir = a.output.clone().unwrap_or_else(|| match &config.output {
        Some(o) => base.join(o),
        None => base.join("../docs").join(&config.name),
    });
    rbf_foundations::output_file::check_dir_writable(&dir).or_else(|_| {
        std::fs::create_dir_all(&dir).map_err(|e| rbf_foundations::error::Error::io(&dir, e))?;
        rbf_foundations::output_file::check_dir_writable(&dir)
    })?;
    if a.plan {
        return print_plan(&config);
    }
    let shard = a
        .shard
        .as_deref()
        .map(Shard::parse)
        .transpose()?
        .unwrap_or(Shard::ALL);
    let t = Instant::now();
    if !a.summary_only {
        rbf::args::with_threads(a.threads, || {
            coverage::run(&config, &dir, shard, !rbf_foundations::progress::is_quiet())
        })?;
    }
    let summaries = coverage::write_summary(&config, &dir)?;
    rbf_foundations::outln!(
        "coverage study {}: {} cells in {:.1} s; summary in {}",
        config.name,
        summaries.len(),
        t.elapsed().as_secs_f64(),
        dir.join("summary.md").display()
    );
    print_lowest(&summaries)
}

/// `--plan`: each cell's sigma, true-workload bound and expected cycles per seed.
fn print_plan(config: &CoverageConfig) -> Result<()> {
    for c in &config.cells {
        let cell = coverage::Cell::new(c)?;
        rbf_foundations::outln!(
            "{}: sigma {}, true-workload renewal bound {:.6}, {:.0} arrivals per cycle, about {:.0} cycles per seed (fit batches of about {} arrivals)",
            c.name,
            cell.filter.sigma.unwrap_or(0),
            cell.true_bound,
            cell.arrivals_per_cycle,
            c.arrivals as f64 * 0.9 / cell.arrivals_per_cycle,
            (c.arrivals * 9 / 10 / 48).max(1),
        );
    }
    Ok(())
}

/// The lowest coverage of any interval with seeds, and where.
fn print_lowest(summaries: &[coverage::summary::CellSummary]) -> Result<()> {
    let worst = summaries
        .iter()
        .flat_map(|s| &s.rows)
        .filter(|r| r.seeds > 0)
        .min_by(|a, b| a.coverage.total_cmp(&b.coverage));
    if let Some(w) = worst {
        rbf_foundations::outln!(
            "lowest coverage: {} in cell {}: {}/{} = {:.1} % [{:.1}, {:.1}]",
            w.interval,
            w.cell,
            w.covered,
            w.seeds,
            100.0 * w.coverage,
            100.0 * w.coverage_low,
            100.0 * w.coverage_high
        );
    }
    Ok(())
}
