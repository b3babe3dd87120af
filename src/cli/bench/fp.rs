//! `rbf bench fp`: FP-model computation times (issue targets: f_sigma^1 for M = 2^23,
//! k = 7, sigma = M/2 under 1 s; a capacity search over k = 1..16 at M = 2^20 under 5 s).

use std::time::Instant;

use clap::Args;

use rbf::filter::Hashing;
use rbf::model::fp::{capacity, predict_sigma, CapacityQuery, Renewal};
use rbf::model::tau::Transitions;
use rbf::Result;

#[derive(Args, Debug)]
pub struct FpBench {
    /// M for the f_sigma^1 timing.
    #[arg(long, default_value_t = 1 << 23)]
    memory: u64,
    #[arg(long, default_value_t = 7)]
    hashes: u32,
    /// Defaults to M/2.
    #[arg(long)]
    sigma: Option<u64>,
    /// M for the capacity timing.
    #[arg(long, default_value_t = 1 << 20)]
    capacity_memory: u64,
    #[arg(long, default_value_t = 0.01)]
    target_fp: f64,
    #[arg(long, default_value_t = 16)]
    max_hashes: u32,
    #[arg(long, default_value_t = 3)]
    repeats: u32,
}

/// CPU time of this thread in seconds (Linux schedstat), so a run on a loaded machine
/// still shows what one core spends; None where unavailable.
fn thread_cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

/// Median and best wall-clock seconds, median CPU seconds, and the last result.
struct Timing<T> {
    wall_median: f64,
    wall_best: f64,
    cpu_median: Option<f64>,
    out: T,
}

fn timed<T>(repeats: u32, mut f: impl FnMut() -> Result<T>) -> Result<Timing<T>> {
    let mut wall = Vec::new();
    let mut cpu = Vec::new();
    let mut last = None;
    for _ in 0..repeats.max(1) {
        let c0 = thread_cpu_seconds();
        let t = Instant::now();
        last = Some(f()?);
        wall.push(t.elapsed().as_secs_f64());
        if let (Some(a), Some(b)) = (c0, thread_cpu_seconds()) {
            cpu.push(b - a);
        }
    }
    wall.sort_by(f64::total_cmp);
    cpu.sort_by(f64::total_cmp);
    let out = last.ok_or_else(|| rbf::Error::invalid("no repeats"))?;
    Ok(Timing {
        wall_median: wall[wall.len() / 2],
        wall_best: wall[0],
        cpu_median: cpu.get(cpu.len() / 2).copied(),
        out,
    })
}

fn describe<T>(t: &Timing<T>, repeats: u32) -> String {
    let cpu = t
        .cpu_median
        .map_or("n/a".to_string(), |c| format!("{c:.3} s"));
    format!(
        "wall median {:.3} s, best {:.3} s; CPU (one core) median {cpu}; {} runs",
        t.wall_median, t.wall_best, repeats
    )
}

pub fn run(a: FpBench) -> Result<()> {
    let sigma = a.sigma.unwrap_or(a.memory / 2);
    let t = timed(a.repeats, || {
        let r = Renewal::new(
            Transitions::new(a.memory, a.hashes, Hashing::Colliding),
            false,
        );
        predict_sigma(&r, sigma, 1, true)
    })?;
    let p = &t.out;
    println!(
        "f_sigma^1 M={} k={} sigma={} colliding non-retaining: {:.6e} (E[N_0] = {:.1}); {}; working memory {} doubles",
        a.memory,
        a.hashes,
        sigma,
        p.fp_sigma,
        p.expected_messages_per_cycle,
        describe(&t, a.repeats),
        3 * a.hashes + 4
    );
    let t = timed(a.repeats, || {
        capacity(&CapacityQuery {
            memory: a.capacity_memory,
            target: a.target_fp,
            k_max: a.max_hashes,
            hashing: Hashing::Colliding,
            retaining: false,
            copy_over: true,
        })
    })?;
    let c = &t.out;
    println!(
        "capacity M={} target={} k=1..{} (one and two phases, f_a, f_w): best k {} sigma {} capacity {:.1}, f_w ratio {:.3}; {}",
        a.capacity_memory,
        a.target_fp,
        a.max_hashes,
        c.best_k,
        c.sigma,
        c.capacity_sigma,
        c.ratio_fw,
        describe(&t, a.repeats)
    );
    Ok(())
}
