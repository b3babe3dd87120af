//! Sources of an experiment: trace files (re-read for every replay, so memory stays
//! proportional to distinct keys) and synthetic workloads (regenerated from the seed).
//! A trace's workload, which the models need, is fitted once, in a first pass.

use super::config::{ExperimentConfig, SyntheticSource, TraceSource};
use crate::error::{Error, Result};
use crate::fit::{FitOptions, Fitter};
use crate::ingest::packet::key::KeySpec;
use crate::ingest::{self, IngestOptions};
use crate::message::{KeyHasher, Message};
use crate::synth::{SynthConfig, Synthesizer};
use crate::workload::{Placement, Workload};

/// A source, ready to be replayed any number of times.
#[derive(Clone, Debug)]
pub enum Source {
    Trace(TraceSource),
    Synthetic(SyntheticSource),
    /// No data: a config whose measures are all models of the filter alone (FP
    /// model, capacity) has this one pseudo-source.
    ModelsOnly,
}

/// What the runner knows about a source before the grid starts.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub source: Source,
    pub name: String,
    pub warmup: u64,
    /// The workload the FN models get: the true one for synthetic sources, the
    /// fitted one for traces (None when no FN measure was asked for).
    pub workload: Option<Workload>,
    /// Caveats that apply to every row of this source (fitted workload, skipped
    /// records of the trace).
    pub notes: Vec<String>,
}

impl Source {
    /// Every source of the config, traces first, in the order of [`super::grid::expand`].
    pub fn all(config: &ExperimentConfig) -> Vec<Source> {
        if config.traces.is_empty() && config.synthetic.is_empty() {
            return vec![Source::ModelsOnly];
        }
        config
            .traces
            .iter()
            .cloned()
            .map(Source::Trace)
            .chain(config.synthetic.iter().cloned().map(Source::Synthetic))
            .collect()
    }

    pub fn name(&self) -> String {
        match self {
            Source::Trace(t) => t.name.clone().unwrap_or_else(|| {
                let paths = t.path.list();
                let first = paths.first().map_or_else(String::new, |p| {
                    p.file_name()
                        .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
                });
                match paths.len() {
                    1 => first,
                    n => format!("{first} (+{} more)", n - 1),
                }
            }),
            Source::Synthetic(s) => s.name.clone().unwrap_or_else(|| {
                format!(
                    "zipf({}, {}) p_r={} {}",
                    s.distinct, s.zipf, s.p_repeat, s.placement
                )
            }),
            Source::ModelsOnly => "models only".into(),
        }
    }

    pub fn warmup(&self) -> u64 {
        match self {
            Source::Trace(t) => t.warmup,
            Source::Synthetic(s) => s.warmup.unwrap_or(s.distinct as u64 + s.arrivals / 10),
            Source::ModelsOnly => 0,
        }
    }

    fn synthetic_workload(s: &SyntheticSource) -> Result<Workload> {
        let placement = Placement::parse(&s.placement)?;
        let w = Workload::zipf(s.distinct, s.zipf, s.p_repeat, placement);
        w.validate()?;
        Ok(w)
    }

    fn ingest_options(t: &TraceSource) -> Result<IngestOptions> {
        Ok(IngestOptions {
            format: t.format,
            key: KeySpec::new(t.key, t.prefix_v4, t.prefix_v6)?,
            flows: t.flow_timeouts()?,
            sort_by_time: t.sort_by_time,
            ..IngestOptions::default()
        })
    }

    fn open_trace(t: &TraceSource) -> Result<Box<dyn ingest::MessageSource>> {
        ingest::open_inputs(t.path.list(), &Source::ingest_options(t)?)
    }

    /// The message stream of one replay. Synthetic traces depend on the seed; a trace
    /// file is the same for every seed.
    pub fn messages(&self, seed: u64) -> Result<Stream> {
        match self {
            Source::Trace(t) => {
                let source = Source::open_trace(t)?;
                Ok(Stream::Trace(source))
            }
            Source::Synthetic(s) => {
                let synth = Synthesizer::new(&SynthConfig {
                    workload: Source::synthetic_workload(s)?,
                    arrivals: s.arrivals,
                    seed,
                    prologue: true,
                })?;
                Ok(Stream::Synthetic(Box::new(
                    synth.messages(KeyHasher::default()),
                )))
            }
            Source::ModelsOnly => Err(Error::invalid(
                "this experiment has no [[trace]] or [[synthetic]] source to replay",
            )),
        }
    }

    /// Fits (traces) or builds (synthetic) the workload, and collects the trace's
    /// ingest warnings so they reach the report instead of being dropped.
    pub fn prepare(&self, needs_workload: bool) -> Result<Prepared> {
        let name = self.name();
        let warmup = self.warmup();
        match self {
            Source::ModelsOnly => Ok(Prepared {
                source: self.clone(),
                name,
                warmup,
                workload: None,
                notes: Vec::new(),
            }),
            Source::Synthetic(s) => Ok(Prepared {
                source: self.clone(),
                name,
                warmup,
                workload: needs_workload
                    .then(|| Source::synthetic_workload(s))
                    .transpose()?,
                notes: Vec::new(),
            }),
            Source::Trace(t) => {
                let mut stream = Source::open_trace(t)?;
                let mut notes: Vec<String> = Vec::new();
                let workload = if needs_workload {
                    let mut fitter = Fitter::new(FitOptions {
                        warmup,
                        window: t.fit_window,
                        ..FitOptions::default()
                    })?;
                    fitter.run(&mut stream);
                    let fit = fitter.finish()?;
                    let w = fit.workload().map_err(|e| {
                        Error::invalid(format!(
                            "{}: the fitted workload is not usable by the FN models: {e}",
                            stream.summary().source
                        ))
                    })?;
                    notes.push(format!(
                        "FN models use the workload fitted from the trace (D = {}, p_r = {:.4}); bounds are guaranteed for the fitted model, not for the trace itself",
                        w.distinct(),
                        w.p_repeat
                    ));
                    Some(w)
                } else {
                    stream.by_ref().for_each(drop);
                    None
                };
                notes.extend(stream.summary().warnings());
                stream.summary().require_data()?;
                Ok(Prepared {
                    source: self.clone(),
                    name,
                    warmup,
                    workload,
                    notes,
                })
            }
        }
    }
}

/// A replayable stream: a trace reader (whose summary is kept) or a generator.
pub enum Stream {
    Trace(Box<dyn ingest::MessageSource>),
    Synthetic(Box<dyn Iterator<Item = Message> + Send>),
}

impl Iterator for Stream {
    type Item = Message;

    fn next(&mut self) -> Option<Message> {
        match self {
            Stream::Trace(s) => s.next(),
            Stream::Synthetic(s) => s.next(),
        }
    }
}
