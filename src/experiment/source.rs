//! Sources of an experiment: trace files (re-read for every replay, so memory stays
//! proportional to distinct keys) and synthetic workloads (regenerated from the seed).
//! A trace's workload, which the models need, is fitted once, in a first pass.

use super::config::{ExperimentConfig, SyntheticSource, TraceSource};
use crate::compare::Fitted;
use crate::error::{Error, Result};
use crate::fit::{FitOptions, Fitter};
use crate::ingest::packet::key::KeySpec;
use crate::ingest::{self, IngestOptions, IngestSummary};
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
    /// The workload fitted from the trace (for synthetic sources with `fit = true`,
    /// from the first seed's trace), when FN measures were asked for.
    pub fitted: Option<Fitted>,
    /// Caveats that apply to every row of this source (fitted workload).
    pub notes: Vec<String>,
    /// What the FN models run on, in a few words, when it is worth saying (a fitted
    /// workload).
    pub title: Option<String>,
    /// What reading the trace met (skipped and malformed records, damage), per file.
    pub ingest: Option<IngestSummary>,
}

/// Fits the workload of `stream`; `label` names it in errors.
fn fit_stream(
    label: &str,
    options: FitOptions,
    stream: impl IntoIterator<Item = Message>,
) -> Result<Fitted> {
    let mut fitter = Fitter::new(options)?;
    fitter.run(stream);
    Fitted::from_fit(&fitter.finish()?, label)
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

    /// A source that is not read (no point of it in this shard).
    pub fn unprepared(&self) -> Prepared {
        Prepared {
            source: self.clone(),
            name: self.name(),
            warmup: self.warmup(),
            workload: None,
            fitted: None,
            notes: Vec::new(),
            title: None,
            ingest: None,
        }
    }

    /// Fits (traces, and synthetic sources with `fit`) or builds (synthetic) the
    /// workload, and collects the trace's ingest warnings so they reach the report
    /// instead of being dropped. `seed` is the seed of the synthetic trace to fit.
    pub fn prepare(&self, needs_workload: bool, seed: u64) -> Result<Prepared> {
        let mut p = self.unprepared();
        match self {
            Source::ModelsOnly => {}
            Source::Synthetic(s) => {
                if needs_workload {
                    p.workload = Some(Source::synthetic_workload(s)?);
                }
                if needs_workload && s.fit {
                    let options = FitOptions {
                        warmup: p.warmup,
                        window: s.fit_window,
                        ..FitOptions::default()
                    };
                    p.fitted = Some(fit_stream(&p.name, options, self.messages(seed)?)?);
                }
            }
            Source::Trace(t) => {
                let mut stream = Source::open_trace(t)?;
                if needs_workload {
                    let options = FitOptions {
                        warmup: p.warmup,
                        window: t.fit_window,
                        ..FitOptions::default()
                    };
                    let label = stream.summary().source.to_string();
                    let fitted = fit_stream(&label, options, &mut stream)?;
                    let w = &fitted.point;
                    p.title = Some(format!(
                        "FN models on the workload fitted from the trace (D = {}, p_r = {:.4})",
                        w.distinct(),
                        w.p_repeat
                    ));
                    p.notes.push(format!(
                        "FN models on the workload fitted from the trace (D = {}, p_r = {:.4}; the renewal bound reads its reuse profile): bounds hold for the fitted model, not for the trace itself",
                        w.distinct(),
                        w.p_repeat
                    ));
                    p.workload = Some(fitted.point.clone());
                    p.fitted = Some(fitted);
                } else {
                    stream.by_ref().for_each(drop);
                }
                stream.summary().require_data()?;
                p.ingest = Some(stream.summary().clone());
            }
        }
        Ok(p)
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
