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

fn timed<T>(repeats: u32, mut f: impl FnMut() -> Result<T>) -> Result<(f64, f64, T)> {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..repeats.max(1) {
        let t = Instant::now();
        last = Some(f()?);
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    let out = last.ok_or_else(|| rbf::Error::invalid("no repeats"))?;
    Ok((times[times.len() / 2], times[0], out))
}

pub fn run(a: FpBench) -> Result<()> {
    let sigma = a.sigma.unwrap_or(a.memory / 2);
    let (median, best, p) = timed(a.repeats, || {
        let r = Renewal::new(
            Transitions::new(a.memory, a.hashes, Hashing::Colliding),
            false,
        );
        predict_sigma(&r, sigma, 1, true)
    })?;
    println!(
        "f_sigma^1 M={} k={} sigma={} colliding non-retaining: {:.6e} (E[N_0] = {:.1}); median {:.3} s, best {:.3} s over {} runs; memory O(k) = {} doubles",
        a.memory,
        a.hashes,
        sigma,
        p.fp_sigma,
        p.expected_messages_per_cycle,
        median,
        best,
        a.repeats,
        2 * (a.hashes + 1)
    );
    let (median, best, c) = timed(a.repeats, || {
        capacity(&CapacityQuery {
            memory: a.capacity_memory,
            target: a.target_fp,
            k_max: a.max_hashes,
            hashing: Hashing::Colliding,
            retaining: false,
            copy_over: true,
        })
    })?;
    println!(
        "capacity M={} target={} k=1..{} (one and two phases, f_a, f_w): best k {} sigma {} capacity {:.1}, f_w ratio {:.3}; median {:.3} s, best {:.3} s over {} runs",
        a.capacity_memory,
        a.target_fp,
        a.max_hashes,
        c.best_k,
        c.sigma,
        c.capacity_sigma,
        c.ratio_fw,
        median,
        best,
        a.repeats
    );
    Ok(())
}
