//! `rbf synth` as one library call: a synthetic request log drawn from the workload
//! model, written whole or not at all ([`run`]). The command line and the Python package
//! parse their arguments into a [`SynthRequest`] and say what comes back.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{request_log_size, write_request_log, SynthConfig, Synthesizer};
use crate::workload::WorkloadSpec;
use rbf_foundations::error::{Error, Result};
use rbf_foundations::output_file::{check_outputs, is_stdio, OutputFile};
use rbf_foundations::progress::Progress;

/// What `rbf synth` is asked: the trace's model, length and seed, and where it goes.
/// Built by [`SynthRequest::new`], which checks the output, the workload and the
/// output's disk before anything is drawn.
#[derive(Clone, Debug)]
pub struct SynthRequest {
    config: SynthConfig,
    output: PathBuf,
}

impl SynthRequest {
    /// `arrivals` drawn with `seed` from the workload `spec`, after the prologue (each
    /// of the D initial messages once) when `prologue`, written to `output` (a name
    /// ending in .zst is zstd-compressed; `-` is stdout). Errors, in this order: an
    /// output that cannot be written or is the workload file, the workload, a disk that
    /// cannot hold the trace.
    pub fn new(
        spec: &WorkloadSpec,
        arrivals: u64,
        seed: u64,
        prologue: bool,
        output: &Path,
    ) -> Result<Self> {
        let inputs: Vec<&Path> = spec.file.iter().map(PathBuf::as_path).collect();
        check_outputs(&[output], &inputs)?;
        let config = SynthConfig {
            workload: spec.resolve()?,
            arrivals,
            seed,
            prologue,
        };
        if !is_stdio(output) {
            check_disk(output, &config)?;
        }
        Ok(SynthRequest {
            config,
            output: output.to_path_buf(),
        })
    }
}

impl SynthRequest {
    /// The workload the trace is drawn from.
    pub fn workload(&self) -> &crate::workload::Workload {
        &self.config.workload
    }
}

/// What [`run`] wrote.
pub struct SynthRun {
    /// Arrivals written, prologue included.
    pub written: u64,
    /// The prologue's arrivals (0 without one).
    pub prologue: usize,
}

/// Draws the request's trace and writes it, with a progress bar; the file appears only
/// once complete (Ctrl-C leaves nothing behind).
pub fn run(request: &SynthRequest) -> Result<SynthRun> {
    let s = Synthesizer::new(&request.config)?;
    let prologue = s.prologue_len();
    let total = (prologue as f64) + request.config.arrivals as f64;
    let progress = Progress::new("rbf synth", total, "arrivals");
    rbf_foundations::progress::install_interrupt_handler();
    let path = &request.output;
    let out = OutputFile::create(path)?;
    let io = |e| Error::io(path, e);
    let (written, out) = if path.extension().is_some_and(|e| e == "zst") {
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
    rbf_foundations::progress::check_interrupt()?;
    out.commit()?;
    Ok(SynthRun { written, prologue })
}

/// Refuses to start a trace the output's disk cannot hold (compressed output: at least
/// a byte a line).
fn check_disk(output: &Path, config: &SynthConfig) -> Result<()> {
    let dir = output
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let workload = &config.workload;
    let lines = config.arrivals as f64
        + if config.prologue {
            workload.distinct() as f64
        } else {
            0.0
        };
    if output.extension().is_some_and(|e| e == "zst") {
        // Compressed output has no useful estimate beyond a byte per line.
        rbf_foundations::resources::check_disk(
            &format!("the compressed synthetic trace ({lines:.3e} lines, at least a byte each)"),
            dir,
            lines,
        )
    } else {
        let size = request_log_size(workload, config.arrivals, config.prologue);
        rbf_foundations::resources::check_disk(
            &format!(
                "the synthetic trace ({lines:.3e} lines of about {:.0} bytes)",
                size.about / lines.max(1.0)
            ),
            dir,
            size.about,
        )
    }
}
