//! `rbf-bench fn`: computation times of the FN models (docs/PERFORMANCE.md, "FN: the
//! renewal bound" and "FN: the Markov bounds and drop-pins").
//!
//! * `--suite table1`: FN Table 1's setting (M = 10000, k = 5, p_r = 0.9, Zipf(1000, 1),
//!   uniform placement, sigma = 1000, 2000, 3000): renewal bound and drop-pins times
//!   and their relative difference.
//! * `--suite scale`: time vs M = 2^a ... 2^b for sigma = M/2, k = 4 (`--hashes`),
//!   p_r = 0.9 (`--p-repeat`), D messages with Zipf(alpha) popularity, uniform
//!   placement (`--placement`), renewal bound (exact, or the certified mode with
//!   `--tolerance T`) and drop-pins. The thread count follows RAYON_NUM_THREADS.

use std::time::Instant;

use clap::{Args, ValueEnum};

use rbf_data::filter::FilterConfig;
use rbf_data::workload::{Placement, Workload};
use rbf_foundations::error::Result;
use rbf_predicted::model::false_negative::{FnModel, Method, RenewalMode, RenewalOptions};

#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum Suite {
    Table1,
    Scale,
}

#[derive(Args, Debug)]
pub struct FnBench {
    /// table1: the FN paper's Table 1 points (M = 10000, k = 5); scale: drop-pins and
    /// the renewal bound over M = 2^MIN_LOG2 .. 2^MAX_LOG2.
    #[arg(long, value_enum, default_value_t = Suite::Table1)]
    suite: Suite,
    /// Timed runs per point (the best and the median are reported).
    #[arg(long, default_value_t = 5)]
    repeats: u32,
    /// Scale suite: D, previously seen messages in Q.
    #[arg(long, default_value_t = 100_000)]
    distinct: usize,
    /// Scale suite: Zipf exponent of Q.
    #[arg(long, default_value_t = 1.0)]
    zipf: f64,
    /// Scale suite: smallest log2 M.
    #[arg(long, default_value_t = 14)]
    min_log2: u32,
    /// Scale suite: largest log2 M.
    #[arg(long, default_value_t = 20)]
    max_log2: u32,
    /// Scale suite: stop the sweep after a point slower than this (seconds).
    #[arg(long, default_value_t = 120.0)]
    max_seconds: f64,
    /// Scale suite: hashes k.
    #[arg(long, default_value_t = 4)]
    hashes: u32,
    /// Scale suite: p_r.
    #[arg(long, default_value_t = 0.9)]
    p_repeat: f64,
    /// Scale suite: placement of new messages (uniform, top, bottom).
    #[arg(long, default_value = "uniform")]
    placement: String,
    /// Scale suite: the renewal bound's certified tolerance mode with this T.
    #[arg(long, value_name = "T")]
    tolerance: Option<f64>,
    /// Scale suite: time drop-pins only (the renewal bound's O(D x arrivals) recursion
    /// is out of reach at the largest sizes).
    #[arg(long)]
    skip_renewal: bool,
}

/// Best and median seconds of `repeats` runs of `f`, and its last value.
fn time<T>(repeats: u32, mut f: impl FnMut() -> T) -> (f64, f64, T) {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..repeats.max(1) {
        let t = Instant::now();
        last = Some(f());
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    (
        times[0],
        times[times.len() / 2],
        last.expect("at least one run"),
    )
}

/// What the renewal computation of a point gave: value, arrivals followed, engine,
/// certified tolerance.
type RenewalPoint = (f64, u64, &'static str, f64);

/// Renewal and drop-pins times and values at one setting (renewal NaN when skipped).
fn point(
    m: u64,
    k: u32,
    sigma: u64,
    w: &Workload,
    repeats: u32,
    renewal: Option<RenewalOptions>,
) -> Result<(f64, f64, RenewalPoint, f64, f64, f64)> {
    let model = FnModel::new(
        &FilterConfig::sigma_bounded(m, k, sigma),
        w,
        rbf_predicted::model::false_negative::DEFAULT_EPS,
    )?;
    let (rb, rm, r) = if let Some(options) = renewal {
        let (rb, rm, r) = time(repeats, || model.renewal(options));
        let r = r?;
        let mode = match r.mode {
            RenewalMode::Exact => "exact",
            RenewalMode::Certified => "certified",
        };
        (
            rb,
            rm,
            (r.fn_upper, r.arrivals_followed, mode, r.certified_tolerance),
        )
    } else {
        (f64::NAN, f64::NAN, (f64::NAN, 0, "skipped", f64::NAN))
    };
    let (pb, pm, p) = time(repeats, || {
        model.profile(false).ok().map_or(f64::NAN, |profile| {
            model
                .markov(Method::DropPins, &profile)
                .map_or(f64::NAN, |r| r.fn_rate)
        })
    });
    Ok((rb, rm, r, pb, pm, p))
}

/// The scale suite's flags, given with `--suite table1`, would be silently ignored.
fn check_applicable(a: &FnBench) -> Result<()> {
    let d: FnBench = rbf::args::defaults();
    let scale_only = a.distinct != d.distinct
        || a.zipf != d.zipf
        || a.min_log2 != d.min_log2
        || a.max_log2 != d.max_log2
        || a.max_seconds != d.max_seconds
        || a.skip_renewal;
    if matches!(a.suite, Suite::Table1) && scale_only {
        return Err(rbf_foundations::error::Error::setting(
            "suite",
            rbf_foundations::error::Problem::Conflict(
                "--distinct, --zipf, --min-log2, --max-log2, --max-seconds and --skip-renewal apply to --suite scale only".into(),
            ),
        ));
    }
    Ok(())
}

pub fn run(a: FnBench) -> Result<()> {
    check_applicable(&a)?;
    match a.suite {
        Suite::Table1 => {
            let w = Workload::zipf(1000, 1.0, 0.9, Placement::Uniform);
            rbf_foundations::outln!("FN Table 1 setting: M = 10000, k = 5, p_r = 0.9, Zipf(1000, 1), uniform placement; best / median of {} runs", a.repeats);
            rbf_foundations::outln!("sigma  renewal_best_ms  renewal_median_ms  fn_renewal  drop_pins_best_ms  drop_pins_median_ms  fn_drop_pins  diff_%  arrivals_followed");
            for sigma in [1000u64, 2000, 3000] {
                let (rb, rm, (r, m, _, _), pb, pm, p) = point(
                    10_000,
                    5,
                    sigma,
                    &w,
                    a.repeats,
                    Some(RenewalOptions::default()),
                )?;
                rbf_foundations::outln!(
                    "{sigma}  {:.2}  {:.2}  {r:.6}  {:.2}  {:.2}  {p:.6}  {:+.2}  {m}",
                    rb * 1e3,
                    rm * 1e3,
                    pb * 1e3,
                    pm * 1e3,
                    100.0 * (p - r) / r
                );
            }
        }
        Suite::Scale => {
            let placement = Placement::parse(&a.placement)?;
            let w = Workload::zipf(a.distinct, a.zipf, a.p_repeat, placement);
            rbf_foundations::outln!(
                "scale: sigma = M/2, k = {}, p_r = {}, Zipf({}, {}), {} placement, renewal tolerance {:?}, {} threads; best / median of {} runs",
                a.hashes, a.p_repeat, a.distinct, a.zipf, a.placement, a.tolerance,
                rayon::current_num_threads(), a.repeats
            );
            rbf_foundations::outln!("log2M  renewal_best_s  renewal_median_s  fn_renewal  renewal_mode  certified_tolerance  drop_pins_best_s  drop_pins_median_s  fn_drop_pins  arrivals_followed");
            let options = (!a.skip_renewal).then_some(RenewalOptions {
                tolerance: a.tolerance,
                ..RenewalOptions::default()
            });
            for e in a.min_log2..=a.max_log2 {
                let m = 1u64 << e;
                let (rb, rm, (r, steps, mode, tol), pb, pm, p) =
                    point(m, a.hashes, m / 2, &w, a.repeats, options)?;
                rbf_foundations::outln!("{e}  {rb:.3}  {rm:.3}  {r:.6}  {mode}  {tol:.1e}  {pb:.3}  {pm:.3}  {p:.6}  {steps}");
                if rb.max(pb) > a.max_seconds {
                    // A skipped renewal time is NaN, and max() then takes the other.
                    rbf_foundations::outln!("stopping: a point took more than {} s", a.max_seconds);
                    break;
                }
            }
        }
    }
    Ok(())
}
