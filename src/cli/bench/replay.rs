//! `rbf bench`: measurements behind docs/PERFORMANCE.md, runnable on any machine.

use std::time::Instant;

use clap::Args;

use rbf::filter::FilterConfig;
use rbf::message::KeyHasher;
use rbf::progress::Progress;
use rbf::replay::{Replay, ReplayOptions};
use rbf::synth::{SynthConfig, Synthesizer};
use rbf::workload::{Placement, Workload};
use rbf::Result;

/// Replay throughput of an in-memory synthetic stream (issue target: 40 M arrivals/s).
#[derive(Args, Debug)]
pub struct ReplayBench {
    /// Arrivals in the synthetic stream (generated once, before the timed runs).
    #[arg(long, default_value_t = 10_000_000)]
    arrivals: u64,
    /// D: previously seen messages in the generating workload.
    #[arg(long, default_value_t = 1_000_000)]
    distinct: usize,
    /// Zipf exponent alpha of the popularity Q.
    #[arg(long, default_value_t = 1.0)]
    zipf: f64,
    /// p_r: probability that an arrival is a repeat draw from Q.
    #[arg(long, default_value_t = 0.9)]
    p_repeat: f64,
    /// M: filter memory in bits (one phase).
    #[arg(long, default_value_t = 1 << 20)]
    memory: u64,
    /// k: hash positions per message.
    #[arg(long, default_value_t = 4)]
    hashes: u32,
    /// Recycle when more than SIGMA bits are set (default: M/2).
    #[arg(long)]
    sigma: Option<u64>,
    /// Timed replays of the stream (the median and the best are reported).
    #[arg(long, default_value_t = 5)]
    repeats: u32,
}

pub fn run(a: ReplayBench) -> Result<()> {
    let config = FilterConfig::sigma_bounded(a.memory, a.hashes, a.sigma.unwrap_or(a.memory / 2));
    config.validate()?;
    // The stream is generated into memory first, so that replay alone is timed.
    rbf::resources::check_memory(
        &format!("a stream of {} arrivals in memory", a.arrivals),
        a.arrivals as f64 * 8.0,
    )?;
    let t = Instant::now();
    let synth = Synthesizer::new(&SynthConfig {
        workload: Workload::zipf(a.distinct, a.zipf, a.p_repeat, Placement::Uniform),
        arrivals: a.arrivals,
        seed: 1,
        prologue: false,
    })?;
    let progress = Progress::new("generating the stream", a.arrivals as f64, "arrivals");
    let stream: Vec<u64> = progress
        .track(synth.messages(KeyHasher::default()))
        .map(|m| m.key)
        .collect();
    progress.finish();
    rbf::progress::check_interrupt()?;
    println!(
        "generated {} arrivals (D = {}, Zipf {}, p_r = {}) in {:.2} s",
        stream.len(),
        a.distinct,
        a.zipf,
        a.p_repeat,
        t.elapsed().as_secs_f64()
    );
    println!("filter: {}", config.describe());
    let mut last = None;
    let m = super::measure(a.repeats, || {
        let mut r = Replay::new(&config, ReplayOptions::default())?;
        r.run_keys(&stream);
        last = Some(r);
        Ok(())
    })?;
    println!("replay: {}", m.throughput(stream.len() as f64, "arrivals"));
    let r = last.expect("repeats >= 1");
    let report = r.report();
    let keys = report.distinct_keys.max(1);
    let truth = r.truth_bytes() as f64;
    println!(
        "memory: {keys} distinct keys; ground truth {:.1} MB = {:.1} bytes/key (at most {:.1} bytes/key while it doubles); filter arrays {:.2} MB",
        truth / 1e6,
        truth / keys as f64,
        truth * 1.5 / keys as f64,
        r.filter_bytes() as f64 / 1e6
    );
    println!(
        "check: fn_rate {:.5}, fp_rate {:.3e}, cycles {}",
        report.fn_rate, report.fp_rate, report.cycles
    );
    Ok(())
}
