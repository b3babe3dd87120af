//! `rbf-bench fp`: FP-model computation times (targets: f_sigma^1 for M = 2^23,
//! k = 7, sigma = M/2 under 1 s; a capacity search over k = 1..16 at M = 2^20 under 5 s).

use clap::Args;

use rbf_data::filter::Hashing;
use rbf_foundations::error::Result;
use rbf_predicted::model::false_positive::{capacity, predict_sigma, CapacityQuery, Renewal};
use rbf_predicted::model::tau::Transitions;

use super::{measure, Measurement};

#[derive(Args, Debug)]
pub struct FpBench {
    /// M in bits for the f_sigma^1 timing.
    #[arg(long, default_value_t = 1 << 23)]
    memory: u64,
    /// k for the f_sigma^1 timing.
    #[arg(long, default_value_t = 7)]
    hashes: u32,
    /// sigma for the f_sigma^1 timing (default: M/2).
    #[arg(long)]
    sigma: Option<u64>,
    /// M in bits for the capacity timing.
    #[arg(long, default_value_t = 1 << 20)]
    capacity_memory: u64,
    /// Target average FP rate of the capacity timing.
    #[arg(long, default_value_t = 0.01)]
    target_fp: f64,
    /// The capacity timing searches k over 1..=MAX_HASHES.
    #[arg(long, default_value_t = 16)]
    max_hashes: u32,
    /// Timed runs of each computation (the median and the best are reported).
    #[arg(long, default_value_t = 3)]
    repeats: u32,
}

/// Measures `f` with the shared [`measure`] and keeps its last result.
fn timed<T>(runs: u32, mut f: impl FnMut() -> Result<T>) -> Result<(Measurement, T)> {
    let mut last = None;
    let m = measure(runs, || {
        last = Some(f()?);
        Ok(())
    })?;
    let out = last.ok_or_else(|| rbf_foundations::error::Error::Internal("no runs"))?;
    Ok((m, out))
}

fn describe(m: &Measurement) -> String {
    let cpu = match (m.cpu_median, m.cpu_best) {
        (Some(a), Some(b)) => format!("CPU (one core) median {a:.3} s, best {b:.3} s"),
        _ => "CPU time n/a".to_string(),
    };
    format!(
        "wall median {:.3} s, best {:.3} s; {cpu}; {} runs",
        m.wall_median, m.wall_best, m.runs
    )
}

pub fn run(a: FpBench) -> Result<()> {
    let sigma = a.sigma.unwrap_or(a.memory / 2);
    let mut config = rbf_data::filter::FilterConfig::sigma_bounded(a.memory, a.hashes, sigma);
    config.retaining = false;
    config.validate()?;
    let (t, p) = timed(a.repeats, || {
        let r = Renewal::new(
            Transitions::new(a.memory, a.hashes, Hashing::Colliding),
            false,
        );
        predict_sigma(&r, sigma, 1, true)
    })?;
    rbf_foundations::outln!(
        "f_sigma^1 M={} k={} sigma={} colliding non-retaining: {:.6e} (E[N_0] = {:.1}); {}; working memory {} doubles",
        a.memory,
        a.hashes,
        sigma,
        p.fp_sigma,
        p.expected_messages_per_cycle,
        describe(&t),
        3 * a.hashes + 4
    );
    let (t, c) = timed(a.repeats, || {
        capacity(&CapacityQuery {
            memory: a.capacity_memory,
            target: a.target_fp,
            k_max: a.max_hashes,
            hashing: Hashing::Colliding,
            retaining: false,
            copy_over: true,
        })
    })?;
    rbf_foundations::outln!(
        "capacity M={} target={} k=1..{} (one and two phases, f_a, f_w): best k {} sigma {} capacity {:.1}, f_w ratio {:.3}; {}",
        a.capacity_memory,
        a.target_fp,
        a.max_hashes,
        c.best_k,
        c.sigma,
        c.capacity_sigma,
        c.ratio_fw,
        describe(&t)
    );
    Ok(())
}
