//! `rbf synth`: write a synthetic request log drawn from the FN paper's arrival model.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::workload_args::WorkloadArgs;
use rbf::output_file::{check_outputs, is_stdio, OutputFile};
use rbf::progress::Progress;
use rbf::synth::{write_request_log, SynthConfig, Synthesizer};
use rbf::workload::Workload;
use rbf::{Error, Result};

#[derive(Args, Debug)]
pub struct SynthArgs {
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// Arrivals after the prologue.
    #[arg(long)]
    pub arrivals: u64,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Do not start with the prologue (each of the D initial messages once).
    #[arg(long)]
    pub no_prologue: bool,
    /// Output file; a name ending in .zst is zstd-compressed; `-` is stdout. It appears
    /// only once complete.
    #[arg(long, short = 'o')]
    pub output: PathBuf,
}

pub fn run(a: SynthArgs) -> Result<()> {
    let inputs: Vec<&std::path::Path> = a.workload.workload.iter().map(PathBuf::as_path).collect();
    check_outputs(&[&a.output], &inputs)?;
    let workload = a.workload.workload()?;
    let zst = a.output.extension().is_some_and(|e| e == "zst");
    if !is_stdio(&a.output) {
        check_disk(&a, &workload, zst)?;
    }
    let config = SynthConfig {
        workload,
        arrivals: a.arrivals,
        seed: a.seed,
        prologue: !a.no_prologue,
    };
    let s = Synthesizer::new(&config)?;
    let prologue = s.prologue_len();
    let total = (prologue as f64) + a.arrivals as f64;
    let progress = Progress::new("rbf synth", total, "arrivals");
    rbf::progress::install_interrupt_handler();
    let out = OutputFile::create(&a.output)?;
    let io = |e| Error::io(&a.output, e);
    let (written, out) = if zst {
        let mut enc = zstd::stream::write::Encoder::new(out, 3).map_err(io)?;
        let n = write_request_log(progress.track(s), &mut enc).map_err(io)?;
        (n, enc.finish().map_err(io)?)
    } else {
        let mut out = out;
        let n = write_request_log(progress.track(s), &mut out).map_err(io)?;
        out.flush().map_err(io)?;
        (n, out)
    };
    progress.finish();
    // Ctrl-C stopped the generator: the partial trace is dropped, not committed.
    rbf::progress::check_interrupt()?;
    out.commit()?;
    rbf::errln!(
        "wrote {written} arrivals to {} ({prologue} prologue + {} drawn); replay with --warmup {prologue} or more to measure the model's steady state",
        a.output.display(),
        a.arrivals
    );
    Ok(())
}

/// Refuses to start a trace the output's disk cannot hold (compressed output: at least
/// a byte a line).
fn check_disk(a: &SynthArgs, workload: &Workload, zst: bool) -> Result<()> {
    let dir = a
        .output
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let lines = a.arrivals as f64
        + if a.no_prologue {
            0.0
        } else {
            workload.distinct() as f64
        };
    if zst {
        // Compressed output has no useful estimate beyond a byte per line.
        rbf::resources::check_disk(
            &format!("the compressed synthetic trace ({lines:.3e} lines, at least a byte each)"),
            dir,
            lines,
        )
    } else {
        let size = rbf::synth::request_log_size(workload, a.arrivals, !a.no_prologue);
        rbf::resources::check_disk(
            &format!(
                "the synthetic trace ({lines:.3e} lines of about {:.0} bytes)",
                size.about / lines.max(1.0)
            ),
            dir,
            size.about,
        )
    }
}
