//! Sources of an experiment: trace files (re-read for every replay, so memory stays
//! proportional to distinct keys) and synthetic workloads (regenerated from the seed).
//! A trace's workload, which the models need, is fitted once, in a first pass.

use std::path::PathBuf;

use super::config::{ExperimentConfig, SyntheticSource, TraceSource};
use super::pass::{self, Passes};
use crate::compare::Fitted;
use rbf_data::ingest::packet::key::KeySpec;
use rbf_data::ingest::{self, IngestOptions, IngestSummary};
use rbf_data::message::{KeyHasher, Message};
use rbf_data::synth::{SynthConfig, Synthesizer};
use rbf_data::workload::Workload;
use rbf_foundations::error::{Error, Problem, Result};
use rbf_observed::fit::{FitOptions, Fitter};

/// The files of a `[[trace]]` (directories and patterns expanded), each one that can be
/// read again: an experiment reads a trace to fit it and replay its points, more than
/// once where memory does not hold every point's replay at once ([`super::pass`]), and
/// where a resumed or sharded run reads it again; a FIFO, a socket or a character device (`/dev/stdin`, a pipe from
/// a decompressor) gives its data only once. Reading one a second time used to block
/// forever, silently; such a source is refused before any work.
pub fn trace_files(t: &TraceSource) -> Result<Vec<PathBuf>> {
    let files = rbf_data::ingest::series::expand(t.path.list())?;
    for f in &files {
        let m = std::fs::metadata(f).map_err(|e| Error::io(f, e))?;
        if let Some(kind) = rbf_data::ingest::input::read_once_kind(&m) {
            return Err(Error::setting(
                "trace.path",
                Problem::Conflict(format!(
                    "{} is {kind}, whose data can be read only once, and an experiment may read each trace several times (its fit and the points' replays, in more than one reading where memory does not hold every replay at once); save it to a file first, e.g. `rbf ingest {} -o trace.rbfs`, and name that file",
                    f.display(),
                    f.display()
                ).into()),
            ));
        }
    }
    Ok(files)
}

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

impl Prepared {
    /// Takes the workload fitted from the trace, for the FN models, and says so.
    fn take_fit(&mut self, fitted: Fitted) {
        let w = &fitted.point;
        self.title = Some(format!(
            "FN models on the workload fitted from the trace (D = {}, p_r = {:.4})",
            fitted.distinct_label, w.p_repeat
        ));
        self.notes.push(format!(
            "FN models on the workload fitted from the trace (D = {}, p_r = {:.4}; the renewal bound reads its reuse profile): bounds hold for the fitted model, not for the trace itself",
            fitted.distinct_label, w.p_repeat
        ));
        self.workload = Some(fitted.point.clone());
        self.fitted = Some(fitted);
    }
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
            Source::Synthetic(s) => s.label(),
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

    fn ingest_options(t: &TraceSource, progress: bool) -> Result<IngestOptions> {
        Ok(IngestOptions {
            progress,
            format: t.format,
            key: KeySpec::new(t.key, t.prefix_v4, t.prefix_v6)?,
            flows: t.flow_timeouts()?,
            sort_by_time: t.sort_by_time,
            ..IngestOptions::default()
        })
    }

    /// The trace's reader; with `progress`, reading a long file shows how far it got.
    pub(super) fn open_trace(
        t: &TraceSource,
        progress: bool,
    ) -> Result<Box<dyn ingest::MessageSource>> {
        ingest::open_inputs(&trace_files(t)?, &Source::ingest_options(t, progress)?)
    }

    /// The message stream of one replay. Synthetic traces depend on the seed; a trace
    /// file is the same for every seed. With `progress`, reading a long trace file
    /// shows how far it got.
    pub fn messages(&self, seed: u64, progress: bool) -> Result<Stream> {
        match self {
            Source::Trace(t) => {
                let source = Source::open_trace(t, progress)?;
                Ok(Stream::new(Inner::Trace(source)))
            }
            Source::Synthetic(s) => {
                let synth = Synthesizer::new(&SynthConfig {
                    workload: s.workload()?,
                    arrivals: s.arrivals,
                    seed,
                    prologue: true,
                })?;
                Ok(Stream::new(Inner::Synthetic(Box::new(
                    synth.messages(KeyHasher::default()),
                ))))
            }
            // The config's checks refuse measures that replay without a source.
            Source::ModelsOnly => Err(Error::Internal(
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
    /// instead of being dropped. `seed` is the seed of the synthetic trace to fit. A
    /// trace file's reading also feeds the replays of `passes` that memory holds
    /// ([`super::pass`]): a sweep reads its trace once for the fit and the points.
    pub fn prepare(
        &self,
        needs_workload: bool,
        seed: u64,
        passes: &mut Passes,
    ) -> Result<Prepared> {
        let mut p = self.unprepared();
        match self {
            Source::ModelsOnly => {}
            Source::Synthetic(s) => {
                if needs_workload {
                    p.workload = Some(s.workload()?);
                }
                if needs_workload && s.fit {
                    let options = FitOptions {
                        warmup: p.warmup,
                        window: s.fit_window,
                        ..FitOptions::default()
                    };
                    let fitted = fit_stream(&p.name, options, self.messages(seed, false)?);
                    rbf_foundations::progress::check_interrupt()?;
                    p.fitted = Some(fitted?);
                }
            }
            Source::Trace(t) => {
                let mut stream = Source::open_trace(t, passes.progress)?;
                let label = stream.summary().source.to_string();
                let mut fitter = needs_workload
                    .then(|| {
                        Fitter::new(FitOptions {
                            warmup: p.warmup,
                            window: t.fit_window,
                            ..FitOptions::default()
                        })
                    })
                    .transpose()?;
                let mut pass = passes.ride_along(stream.as_ref());
                pass.feed(fitter.as_mut(), stoppable(&mut stream));
                // Cut short by a stop request: the interrupt, not what the fit made of
                // part of the trace.
                rbf_foundations::progress::check_interrupt()?;
                passes.keep(pass);
                if let Some(fitter) = fitter {
                    p.take_fit(Fitted::from_fit(&fitter.finish()?, &label)?);
                }
                stream.summary().require_data()?;
                p.ingest = Some(stream.summary().clone());
            }
        }
        Ok(p)
    }
}

/// Messages read between two looks at the stop flag.
const CHECK_EVERY: u32 = 1 << 16;

/// An iterator that ends early once a stop is requested
/// ([`rbf_foundations::progress::interrupted`]), looking every [`CHECK_EVERY`] items: a run
/// stopped by Ctrl-C or SIGTERM does not wait for a replay of 10^12 arrivals. What was
/// computed from a stream cut short is discarded: the runner keeps no row computed while
/// stopping, and [`Source::prepare`] returns the interrupt.
struct Stoppable<I> {
    inner: I,
    until_check: u32,
}

fn stoppable<I: Iterator<Item = Message>>(inner: I) -> Stoppable<I> {
    Stoppable {
        inner,
        until_check: CHECK_EVERY,
    }
}

impl<I: Iterator<Item = Message>> Iterator for Stoppable<I> {
    type Item = Message;

    #[inline]
    fn next(&mut self) -> Option<Message> {
        self.until_check -= 1;
        if self.until_check == 0 {
            self.until_check = CHECK_EVERY;
            if rbf_foundations::progress::interrupted() {
                return None;
            }
        }
        self.inner.next()
    }
}

/// A replayable stream: a trace reader or a generator, ending early on a stop request.
pub struct Stream(Stoppable<Inner>);

enum Inner {
    Trace(Box<dyn ingest::MessageSource>),
    Synthetic(Box<dyn Iterator<Item = Message> + Send>),
}

impl Iterator for Inner {
    type Item = Message;

    #[inline]
    fn next(&mut self) -> Option<Message> {
        match self {
            Inner::Trace(s) => s.next(),
            Inner::Synthetic(s) => s.next(),
        }
    }
}

impl Stream {
    fn new(inner: Inner) -> Stream {
        Stream(stoppable(inner))
    }

    /// The distinct keys a trace declares or estimates ([`pass::known_distinct`]); None
    /// for a synthetic stream (its tables grow as keys arrive).
    pub fn known_distinct(&self) -> Option<u64> {
        match &self.0.inner {
            Inner::Trace(source) => pass::known_distinct(source.as_ref()),
            Inner::Synthetic(_) => None,
        }
    }
}

impl Iterator for Stream {
    type Item = Message;

    #[inline]
    fn next(&mut self) -> Option<Message> {
        self.0.next()
    }
}
