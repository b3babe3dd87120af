//! `rbf-bench fit`: workload-fitting throughput (target: 35 M arrivals, the size
//! of the FN paper's campus flow trace, in under 10 s).

use std::time::Instant;

use clap::Args;

use rbf_data::message::{KeyHasher, Message};
use rbf_data::synth::{SynthConfig, Synthesizer};
use rbf_data::workload::{Placement, Workload};
use rbf_foundations::error::Result;
use rbf_foundations::progress::Progress;
use rbf_observed::fit::{FitOptions, Fitter, DEFAULT_WINDOW};

/// Fits an in-memory synthetic stream, generated in chunks outside the timed part.
#[derive(Args, Debug)]
pub struct FitBench {
    /// Arrivals fitted (the size of the campus trace this targets).
    #[arg(long, default_value_t = 35_000_000)]
    arrivals: u64,
    /// D of the generating workload (the campus trace has 227,668 distinct /24s).
    #[arg(long, default_value_t = 230_000)]
    distinct: usize,
    /// Zipf exponent alpha of the generating popularity Q.
    #[arg(long, default_value_t = 1.0)]
    zipf: f64,
    /// p_r of the generating workload.
    #[arg(long, default_value_t = 0.99)]
    p_repeat: f64,
    /// The fit's window W in arrivals (as `rbf fit --window`).
    #[arg(long, default_value_t = DEFAULT_WINDOW)]
    window: u64,
    /// Distinct successor pairs counted at most (as `rbf fit --pair-cap`).
    #[arg(long, default_value_t = rbf_observed::fit::successor::DEFAULT_PAIR_CAP)]
    pair_cap: usize,
    /// Arrivals generated per chunk outside the timed part (bounds the memory used).
    #[arg(long, default_value_t = 1 << 20)]
    chunk: usize,
}

pub fn run(a: FitBench) -> Result<()> {
    if a.chunk == 0 {
        return Err(rbf_foundations::error::Error::setting(
            "chunk",
            rbf_foundations::error::Problem::rule("must be at least 1"),
        ));
    }
    rbf_foundations::resources::check_memory(
        &format!("chunks of {} messages", a.chunk),
        a.chunk as f64 * std::mem::size_of::<Message>() as f64,
    )?;
    let synth = Synthesizer::new(&SynthConfig {
        workload: Workload::zipf(a.distinct, a.zipf, a.p_repeat, Placement::Uniform),
        arrivals: a.arrivals,
        seed: 1,
        prologue: true,
    })?;
    let mut fitter = Fitter::new(FitOptions {
        window: a.window,
        pair_cap: a.pair_cap,
        ..FitOptions::default()
    })?;
    let progress = Progress::new("rbf-bench fit", a.arrivals as f64, "arrivals");
    let push_secs = stream(
        synth.messages(KeyHasher::default()),
        &mut fitter,
        a.chunk,
        &progress,
    )?;
    let n = fitter.seen();
    let t = Instant::now();
    let fit = fitter.finish()?;
    let finish_secs = t.elapsed().as_secs_f64();
    let total = push_secs + finish_secs;
    rbf_foundations::outln!(
        "workload: D = {}, Zipf {}, p_r = {}, uniform placement; {n} arrivals (prologue included)",
        a.distinct,
        a.zipf,
        a.p_repeat
    );
    rbf_foundations::outln!(
        "fit: streaming {push_secs:.2} s ({:.1} M arrivals/s) + estimation {finish_secs:.2} s = {total:.2} s",
        n as f64 / push_secs / 1e6
    );
    let s = &fit.summary;
    rbf_foundations::outln!(
        "check: p_r {:.5}, distinct keys {}, fitted D {}, windows {}, entropy {} (pairs {}, truncated {})",
        s.p_repeat,
        s.distinct_keys,
        s.model_distinct,
        s.windows,
        s.successor_entropy
            .mean_entropy
            .map_or("-".into(), |e| format!("{e:.3}")),
        s.successor_entropy.distinct_pairs,
        s.successor_entropy.truncated
    );
    Ok(())
}

/// Feeds `messages` to `fitter` in chunks of `chunk` (drawing them is not timed);
/// returns the seconds the fitter took.
fn stream(
    mut messages: impl Iterator<Item = Message>,
    fitter: &mut Fitter,
    chunk: usize,
    progress: &Progress,
) -> Result<f64> {
    let mut buf: Vec<Message> = Vec::with_capacity(chunk);
    let mut push_secs = 0.0;
    loop {
        progress.advance(buf.len() as f64)?;
        buf.clear();
        buf.extend(messages.by_ref().take(chunk));
        if buf.is_empty() {
            return Ok(push_secs);
        }
        let t = Instant::now();
        fitter.run(buf.iter().copied());
        push_secs += t.elapsed().as_secs_f64();
    }
}
