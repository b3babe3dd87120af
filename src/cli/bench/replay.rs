//! `rbf bench`: measurements behind docs/PERFORMANCE.md, runnable on any machine.

use std::time::Instant;

use clap::Args;

use rbf::filter::FilterConfig;
use rbf::message::KeyHasher;
use rbf::replay::{Replay, ReplayOptions};
use rbf::synth::{SynthConfig, Synthesizer};
use rbf::workload::{Placement, Workload};
use rbf::Result;

/// Replay throughput of an in-memory synthetic stream (issue target: 40 M arrivals/s).
#[derive(Args, Debug)]
pub struct ReplayBench {
    #[arg(long, default_value_t = 10_000_000)]
    arrivals: u64,
    #[arg(long, default_value_t = 1_000_000)]
    distinct: usize,
    #[arg(long, default_value_t = 1.0)]
    zipf: f64,
    #[arg(long, default_value_t = 0.9)]
    p_repeat: f64,
    #[arg(long, default_value_t = 1 << 20)]
    memory: u64,
    #[arg(long, default_value_t = 4)]
    hashes: u32,
    /// Defaults to M/2.
    #[arg(long)]
    sigma: Option<u64>,
    #[arg(long, default_value_t = 5)]
    repeats: u32,
}

pub fn run(a: ReplayBench) -> Result<()> {
    let ReplayBench {
        arrivals,
        distinct,
        zipf,
        p_repeat,
        memory,
        hashes,
        sigma,
        repeats,
    } = a;
    {
        {
            let t = Instant::now();
            let synth = Synthesizer::new(&SynthConfig {
                workload: Workload::zipf(distinct, zipf, p_repeat, Placement::Uniform),
                arrivals,
                seed: 1,
                prologue: false,
            })?;
            let stream: Vec<u64> = synth
                .messages(KeyHasher::default())
                .map(|m| m.key)
                .collect();
            println!(
                "generated {} arrivals (D = {distinct}, Zipf {zipf}, p_r = {p_repeat}) in {:.2} s",
                stream.len(),
                t.elapsed().as_secs_f64()
            );
            let config = FilterConfig::sigma_bounded(memory, hashes, sigma.unwrap_or(memory / 2));
            let mut best = f64::INFINITY;
            let mut times = Vec::new();
            let mut last = None;
            for _ in 0..repeats {
                let mut r = Replay::new(&config, ReplayOptions::default())?;
                let t = Instant::now();
                r.run_keys(&stream);
                let secs = t.elapsed().as_secs_f64();
                best = best.min(secs);
                times.push(secs);
                last = Some(r);
            }
            times.sort_by(f64::total_cmp);
            let median = times[times.len() / 2];
            let r = last.expect("repeats >= 1");
            let report = r.report();
            let keys = report.distinct_keys.max(1);
            let truth_bytes = r.allocated_bytes() as f64 - (memory / 8) as f64 * 1.5;
            println!("filter: {}", config.describe());
            println!(
                "replay: median {:.3} s, best {:.3} s over {repeats} runs -> {:.1} M arrivals/s (median), {:.1} M arrivals/s (best)",
                median,
                best,
                arrivals as f64 / median / 1e6,
                arrivals as f64 / best / 1e6
            );
            println!(
                "memory: {} distinct keys; ground truth {:.1} MB = {:.1} bytes/key; filter + clear list {:.2} MB",
                keys,
                truth_bytes / 1e6,
                truth_bytes / keys as f64,
                (memory / 8) as f64 * 1.5 / 1e6
            );
            println!(
                "check: fn_rate {:.5}, fp_rate {:.3e}, cycles {}",
                report.fn_rate, report.fp_rate, report.cycles
            );
            Ok(())
        }
    }
}
