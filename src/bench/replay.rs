//! `rbf-bench replay`: replay throughput, of an in-memory synthetic stream (the
//! kernel alone) or of trace files end to end (reading, decompressing and parsing on
//! the decode thread beside the replay), over a sweep of filter sizes.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use rbf_data::filter::FilterConfig;
use rbf_data::ingest::{self, Format, IngestOptions};
use rbf_data::message::KeyHasher;
use rbf_data::synth::{SynthConfig, Synthesizer};
use rbf_data::workload::{Placement, Workload};
use rbf_foundations::error::{Error, Problem, Result};
use rbf_foundations::progress::Progress;
use rbf_judge::experiment::svg::{AxisSpec, Chart, Marker, Point, Scale, Series, Style};
use rbf_observed::replay::{ReplayOptions, ReplayReport, Replays, MAX_HASH_SEEDS};

/// Replay throughput (targets: 40 M arrivals/s in memory, 25 M arrivals/s end to end
/// from an oracleGeneral file).
#[derive(Args, Debug)]
pub struct ReplayBench {
    /// Replay these trace files end to end (decode, replay, report) instead of an
    /// in-memory synthetic stream; several files are read as one trace.
    #[arg(long, num_args = 1..)]
    trace: Vec<PathBuf>,
    /// Format of --trace (auto: detected from the content).
    #[arg(long, value_parser = rbf::args::value_enums::parser::<rbf::args::value_enums::FormatArg, Format>(), default_value = "auto", requires = "trace")]
    format: Format,
    /// File mode: decode on the replay's own thread (to measure what the decode thread
    /// brings).
    #[arg(long, requires = "trace")]
    same_thread: bool,
    /// Arrivals in the synthetic stream (generated once, before the timed runs).
    #[arg(long, default_value_t = 10_000_000, conflicts_with = "trace")]
    arrivals: u64,
    /// D: previously seen messages in the generating workload.
    #[arg(long, default_value_t = 1_000_000, conflicts_with = "trace")]
    distinct: usize,
    /// Zipf exponent alpha of the popularity Q.
    #[arg(long, default_value_t = 1.0, conflicts_with = "trace")]
    zipf: f64,
    /// p_r: probability that an arrival is a repeat draw from Q.
    #[arg(long, default_value_t = 0.9, conflicts_with = "trace")]
    p_repeat: f64,
    /// M: filter memory in bits (one phase); several (comma-separated or repeated)
    /// make a sweep.
    #[arg(long, value_delimiter = ',', default_value = "1048576")]
    memory: Vec<u64>,
    /// A sweep over M = 2^A, 2^(A+1), ..., 2^B bits (`A..B`), instead of --memory.
    #[arg(long, value_name = "A..B", conflicts_with = "memory")]
    memory_log2: Option<String>,
    /// k: hash positions per message.
    #[arg(long, default_value_t = 4)]
    hashes: u32,
    /// Recycle when more than SIGMA bits are set (default: M/2 at each M); sizes with
    /// M <= SIGMA are left out of the sweep.
    #[arg(long)]
    sigma: Option<u64>,
    /// Arrivals that update state but are not counted.
    #[arg(long, default_value_t = 0)]
    warmup: u64,
    /// Filters (hash seeds) replayed together, as `rbf replay --hash-seeds` (default
    /// 1: the kernel of one filter, as docs/PERFORMANCE.md's one-filter figures are
    /// taken).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_HASH_SEEDS)))]
    hash_seeds: u32,
    /// Timed replays per size (the median and the best are reported).
    #[arg(long, default_value_t = 5)]
    repeats: u32,
    /// Write the throughput curve (arrivals/s against M) as an SVG plot.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Hash positions of the filter: fixed (as `rbf replay`), or per-cycle (as the
    /// judged replays of `rbf compare` and `rbf run`).
    #[arg(long, value_enum, default_value = "fixed")]
    positions: rbf::args::filter_args::PositionsArg,
}

/// One size's timings (seconds).
struct Timed {
    memory: u64,
    wall_median: f64,
    wall_best: f64,
    wall_slowest: f64,
    /// CPU time of the whole process (every thread), median.
    cpu_median: Option<f64>,
    /// CPU time of the replay's own thread, median (file mode).
    replay_cpu_median: Option<f64>,
    arrivals: u64,
    load: f64,
    report: ReplayReport,
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn best(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

/// The 1-minute load average: every figure is quoted with the load it was taken under.
fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

/// CPU seconds of the whole process (every thread), from getrusage.
fn process_cpu_seconds() -> Option<f64> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: getrusage fills the zeroed struct we own.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
            return None;
        }
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        Some(secs(u.ru_utime) + secs(u.ru_stime))
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// The sizes of the sweep.
fn sizes(a: &ReplayBench) -> Result<Vec<u64>> {
    let Some(range) = &a.memory_log2 else {
        return Ok(a.memory.clone());
    };
    let bad = || {
        Error::setting(
            "memory-log2",
            Problem::range(
                "expected A..B with whole numbers 3 <= A <= B <= 40",
                format!("{range:?}"),
            ),
        )
    };
    let (lo, hi) = range.split_once("..").ok_or_else(bad)?;
    let (lo, hi): (u32, u32) = (
        lo.trim().parse().map_err(|_| bad())?,
        hi.trim().parse().map_err(|_| bad())?,
    );
    if !(3..=40).contains(&lo) || !(lo..=40).contains(&hi) {
        return Err(bad());
    }
    Ok((lo..=hi).map(|e| 1u64 << e).collect())
}

fn describe_memory(m: u64) -> String {
    if m.is_power_of_two() {
        format!("2^{}", m.trailing_zeros())
    } else {
        m.to_string()
    }
}

pub fn run(a: ReplayBench) -> Result<()> {
    let sizes = sizes(&a)?;
    let configs: Vec<FilterConfig> = sizes
        .iter()
        .filter_map(|&m| {
            let sigma = a.sigma.unwrap_or(m / 2);
            if sigma >= m {
                rbf_foundations::progress::note(&format!(
                    "M = {} bits is left out: sigma = {sigma} is not below it",
                    describe_memory(m)
                ));
                return None;
            }
            let mut f = FilterConfig::sigma_bounded(m, a.hashes, sigma);
            f.positions = Some(a.positions.into());
            Some(f)
        })
        .collect();
    if configs.is_empty() {
        return Err(Error::setting(
            "memory",
            Problem::Conflict("no filter size of the sweep is larger than sigma".into()),
        ));
    }
    for c in &configs {
        c.validate()?;
    }
    if let Some(p) = &a.plot {
        let inputs: Vec<&std::path::Path> = a.trace.iter().map(PathBuf::as_path).collect();
        rbf_foundations::output_file::check_outputs(&[p.as_path()], &inputs)?;
    }
    rbf_foundations::progress::install_interrupt_handler();
    let options = ReplayOptions {
        warmup: a.warmup,
        ..ReplayOptions::default()
    };
    let (what, points) = if a.trace.is_empty() {
        in_memory(&a, &configs, options)?
    } else {
        from_files(&a, &configs, options)?
    };
    summary_table(&points)?;
    if let Some(p) = &a.plot {
        plot(&what, &a, &points, p)?;
    }
    Ok(())
}

/// The kernel alone: a synthetic stream generated into memory first.
fn in_memory(
    a: &ReplayBench,
    configs: &[FilterConfig],
    options: ReplayOptions,
) -> Result<(String, Vec<Timed>)> {
    rbf_foundations::resources::check_memory(
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
    rbf_foundations::progress::check_interrupt()?;
    rbf_foundations::outln!(
        "generated {} arrivals (D = {}, Zipf {}, p_r = {}) in {:.2} s",
        stream.len(),
        a.distinct,
        a.zipf,
        a.p_repeat,
        t.elapsed().as_secs_f64()
    );
    let mut points = Vec::new();
    for config in configs {
        rbf_foundations::outln!("filter: {}", config.describe());
        let load = load_average();
        let mut last = None;
        let m = super::measure(a.repeats, || {
            rbf_foundations::progress::check_interrupt()?;
            // Keys in memory: the ground truth grows as they arrive, as in `rbf replay -`.
            let mut r = Replays::sized(config, options, a.hash_seeds, None)?;
            r.run_keys(&stream);
            last = Some(r);
            Ok(())
        })?;
        rbf_foundations::outln!(
            "replay: {} (load {load:.2})",
            m.throughput(stream.len() as f64, "arrivals")
        );
        let r = last.expect("repeats >= 1");
        let report = r.report();
        let keys = report.distinct_keys.max(1);
        let truth = r.truth_bytes() as f64;
        rbf_foundations::outln!(
            "memory: {keys} distinct keys; ground truth {:.1} MB = {:.1} bytes/key (at most {:.1} bytes/key while it doubles); filter arrays {:.2} MB",
            truth / 1e6,
            truth / keys as f64,
            truth * 1.5 / keys as f64,
            r.filter_bytes() as f64 / 1e6
        );
        rbf_foundations::outln!(
            "check: fn_rate {:.5}, fp_rate {:.3e}, cycles {}",
            report.fn_rate,
            report.fp_rate,
            report.cycles
        );
        // The thread's CPU time is the process's here: nothing else runs.
        points.push(Timed {
            memory: config.memory,
            wall_median: m.wall_median,
            wall_best: m.wall_best,
            wall_slowest: m.wall_median,
            cpu_median: m.cpu_median,
            replay_cpu_median: m.cpu_median,
            arrivals: stream.len() as u64,
            load,
            report,
        });
    }
    Ok((
        format!(
            "in memory ({} arrivals, D = {}, Zipf {}, p_r = {})",
            a.arrivals, a.distinct, a.zipf, a.p_repeat
        ),
        points,
    ))
}

/// Trace files end to end: open, decode (on the decode thread), replay, report.
fn from_files(
    a: &ReplayBench,
    configs: &[FilterConfig],
    options: ReplayOptions,
) -> Result<(String, Vec<Timed>)> {
    let ingest_options = IngestOptions {
        format: a.format,
        same_thread: a.same_thread,
        ..IngestOptions::default()
    };
    let name = ingest::series::expand(&a.trace)?
        .iter()
        .map(|p| {
            p.file_name()
                .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
        })
        .collect::<Vec<_>>()
        .join(" + ");
    let bytes: u64 = ingest::series::expand(&a.trace)?
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    // Read once untimed, so that every timed run finds the file in the page cache.
    let mut warm = ingest::open_inputs(&a.trace, &ingest_options)?;
    warm.by_ref().for_each(drop);
    warm.summary().require_data()?;
    let format = warm.summary().format;
    for w in warm.summary().warnings() {
        rbf_foundations::errln!("{w}");
    }
    drop(warm);
    rbf_foundations::outln!(
        "trace: {name} ({format}, {:.1} MB), decoded {}",
        bytes as f64 / 1e6,
        if a.same_thread {
            "on the replay thread"
        } else {
            "on a thread of its own"
        }
    );
    let mut points = Vec::new();
    for config in configs {
        rbf_foundations::outln!("filter: {}", config.describe());
        let load = load_average();
        let (mut wall, mut cpu, mut own) = (Vec::new(), Vec::new(), Vec::new());
        let mut last: Option<(u64, ReplayReport)> = None;
        let mut sized = None;
        for _ in 0..a.repeats.max(1) {
            rbf_foundations::progress::check_interrupt()?;
            let c0 = process_cpu_seconds();
            let o0 = super::thread_cpu_seconds();
            let t0 = Instant::now();
            let mut source = ingest::open_inputs(&a.trace, &ingest_options)?;
            let plan = rbf_observed::replay::sizing::distinct_up_front(
                config,
                source.as_ref(),
                u64::from(a.hash_seeds),
            );
            let mut r = Replays::sized(config, options, a.hash_seeds, plan)?;
            sized = plan;
            r.run_source(source.as_mut())?;
            let report = r.report();
            wall.push(t0.elapsed().as_secs_f64());
            cpu.push(c0.zip(process_cpu_seconds()).map(|(a, b)| b - a));
            own.push(o0.zip(super::thread_cpu_seconds()).map(|(a, b)| b - a));
            rbf_foundations::progress::check_interrupt()?;
            if let Some((_, before)) = &last {
                if before.counts != report.counts {
                    return Err(Error::Internal(
                        "two replays of the same trace counted differently",
                    ));
                }
            }
            last = Some((r.seen(), report));
        }
        let (arrivals, report) = last.expect("repeats >= 1");
        let rate = |s: f64| arrivals as f64 / s / 1e6;
        let cpus: Vec<f64> = cpu.iter().flatten().copied().collect();
        let owns: Vec<f64> = own.iter().flatten().copied().collect();
        rbf_foundations::outln!(
            "end to end: wall median {:.3} s ({:.1} M arrivals/s), best {:.3} s ({:.1} M arrivals/s) over {} run(s), load {load:.2}",
            median(&wall),
            rate(median(&wall)),
            best(&wall),
            rate(best(&wall)),
            wall.len()
        );
        if cpus.len() == wall.len() && owns.len() == wall.len() {
            // On a loaded machine the wall time counts waiting for a core; the busier
            // thread's CPU time is what two free cores would take (plus the hand-over).
            let others: Vec<f64> = cpus.iter().zip(&owns).map(|(c, o)| c - o).collect();
            rbf_foundations::outln!(
                "CPU (median): all threads {:.3} s; replay thread {:.3} s, decoding {:.3} s ({:.1} M arrivals/s for the busier one)",
                median(&cpus),
                median(&owns),
                median(&others),
                rate(median(&owns).max(median(&others)))
            );
        }
        rbf_foundations::outln!(
            "check: {arrivals} arrivals, {} distinct keys, fn_rate {:.5}, fp_rate {:.3e}, cycles {}",
            report.distinct_keys, report.fn_rate, report.fp_rate, report.cycles
        );
        let plan = rbf_observed::replay::memory::MemoryPlan::new(
            config,
            sized.unwrap_or(report.distinct_keys),
            sized.is_some(),
        )
        .filters(u64::from(a.hash_seeds));
        // Measure a single run's peak with `/usr/bin/time -v rbf replay ...`: here the
        // allocator keeps memory between runs.
        rbf_foundations::outln!(
            "memory: predicted peak of `rbf replay` {} ({})",
            plan.describe(),
            if sized.is_some() {
                "ground truth sized up front, from the header or the records' next-access field"
            } else {
                "ground truth grown by doubling"
            }
        );
        points.push(Timed {
            memory: config.memory,
            wall_median: median(&wall),
            wall_best: best(&wall),
            wall_slowest: wall.iter().copied().fold(0.0, f64::max),
            cpu_median: (cpus.len() == wall.len()).then(|| median(&cpus)),
            replay_cpu_median: (owns.len() == wall.len()).then(|| median(&owns)),
            arrivals,
            load,
            report,
        });
    }
    Ok((format!("{name}, end to end"), points))
}

/// The sweep as one table, times relative to 2^20 bits (or the first size).
fn summary_table(points: &[Timed]) -> Result<()> {
    if points.len() < 2 {
        return Ok(());
    }
    let base = points
        .iter()
        .find(|p| p.memory == 1 << 20)
        .unwrap_or(&points[0]);
    rbf_foundations::outln!();
    rbf_foundations::outln!(
        "| M (bits) | wall median (s) | best (s) | CPU, all threads (s) | CPU, replay thread (s) | M arrivals/s | vs {} | fn_rate | load |",
        describe_memory(base.memory)
    );
    rbf_foundations::outln!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for p in points {
        rbf_foundations::outln!(
            "| {} | {:.3} | {:.3} | {} | {} | {:.1} | {:.2}x | {:.5} | {:.2} |",
            describe_memory(p.memory),
            p.wall_median,
            p.wall_best,
            p.cpu_median.map_or("-".into(), |c| format!("{c:.3}")),
            p.replay_cpu_median
                .map_or("-".into(), |c| format!("{c:.3}")),
            p.arrivals as f64 / p.wall_median / 1e6,
            p.wall_median / base.wall_median,
            p.report.fn_rate,
            p.load
        );
    }
    Ok(())
}

fn plot(what: &str, a: &ReplayBench, points: &[Timed], path: &std::path::Path) -> Result<()> {
    let sigma = match a.sigma {
        Some(s) => format!("sigma = {s}"),
        None => "sigma = M/2".into(),
    };
    let load = points.iter().map(|p| p.load).sum::<f64>() / points.len() as f64;
    let rate = |p: &Timed, s: f64| p.arrivals as f64 / s / 1e6;
    let mut series = vec![Series {
        label: "wall time (median; bar: slowest to fastest)".into(),
        style: Style::Observed,
        color: "#1f77b4",
        marker: Marker::Circle,
        points: points
            .iter()
            .map(|p| Point {
                x: p.memory as f64,
                y: rate(p, p.wall_median),
                interval: Some((rate(p, p.wall_slowest), rate(p, p.wall_best))),
            })
            .collect(),
    }];
    if !a.trace.is_empty() && points.iter().all(|p| p.replay_cpu_median.is_some()) {
        series.push(Series {
            label: "replay thread's CPU time (median)".into(),
            style: Style::Observed,
            color: "#d62728",
            marker: Marker::Square,
            points: points
                .iter()
                .filter_map(|p| {
                    Some(Point {
                        x: p.memory as f64,
                        y: rate(p, p.replay_cpu_median?),
                        interval: None,
                    })
                })
                .collect(),
        });
    }
    let chart = Chart {
        title: format!(
            "replay throughput: {what}; k = {}, {sigma}; load average {load:.1} on {} cores",
            a.hashes,
            rbf_foundations::resources::available_threads()
        ),
        x: AxisSpec {
            label: "filter memory M (bits)".into(),
            scale: Scale::Log2,
            integer: true,
        },
        y: AxisSpec {
            label: "M arrivals/s".into(),
            scale: Scale::Linear,
            integer: false,
        },
        series,
    };
    let svg = chart
        .render()
        .ok_or_else(|| Error::Internal("nothing to plot"))?;
    rbf_foundations::output_file::write_file(path, svg.as_bytes())?;
    rbf_foundations::outln!("plot: {}", path.display());
    Ok(())
}
