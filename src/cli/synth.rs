use std::path::PathBuf;

use clap::Args;

use rbf::synth::{write_request_log, SynthConfig, Synthesizer};
use rbf::workload::{Placement, Workload};
use rbf::{Error, Result};

#[derive(Args, Debug)]
pub struct SynthArgs {
    /// D: number of previously seen messages in the popularity ranking.
    #[arg(long, required_unless_present = "workload")]
    pub distinct: Option<usize>,
    /// Zipf exponent alpha of Q (0 = uniform).
    #[arg(long, default_value_t = 1.0)]
    pub zipf: f64,
    /// p_r: probability that an arrival repeats a previously seen message.
    #[arg(long, required_unless_present = "workload")]
    pub p_repeat: Option<f64>,
    /// Where new messages enter the ranking.
    #[arg(long, default_value = "uniform")]
    pub placement: String,
    /// Workload file (JSON, as written by `rbf fit`) with an explicit Q, p_r and placement;
    /// replaces --distinct/--zipf/--p-repeat/--placement.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["distinct", "p_repeat"])]
    pub workload: Option<PathBuf>,
    /// Arrivals after the prologue.
    #[arg(long)]
    pub arrivals: u64,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Do not start with the prologue (each of the D initial messages once).
    #[arg(long)]
    pub no_prologue: bool,
    /// Output file; a name ending in .zst is zstd-compressed.
    #[arg(long, short = 'o')]
    pub output: PathBuf,
}

pub fn run(a: SynthArgs) -> Result<()> {
    let workload = match &a.workload {
        Some(path) => Workload::load(path)?,
        None => {
            let d = a
                .distinct
                .ok_or_else(|| Error::config("distinct", "--distinct D is required"))?;
            let p = a
                .p_repeat
                .ok_or_else(|| Error::config("p_repeat", "--p-repeat P is required"))?;
            Workload::zipf(d, a.zipf, p, Placement::parse(&a.placement)?)
        }
    };
    let config = SynthConfig {
        workload,
        arrivals: a.arrivals,
        seed: a.seed,
        prologue: !a.no_prologue,
    };
    let s = Synthesizer::new(&config)?;
    let prologue = s.prologue_len();
    let file = std::fs::File::create(&a.output).map_err(|e| Error::io(&a.output, e))?;
    let zst = a.output.extension().is_some_and(|e| e == "zst");
    let written = if zst {
        let enc =
            zstd::stream::write::Encoder::new(file, 3).map_err(|e| Error::io(&a.output, e))?;
        let mut enc = enc.auto_finish();
        write_request_log(s, &mut enc).map_err(|e| Error::io(&a.output, e))?
    } else {
        write_request_log(s, file).map_err(|e| Error::io(&a.output, e))?
    };
    eprintln!(
        "wrote {written} arrivals to {} ({prologue} prologue + {} drawn); replay with --warmup {prologue} or more to measure the model's steady state",
        a.output.display(),
        a.arrivals
    );
    Ok(())
}
