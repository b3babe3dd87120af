//! The replays of a sweep, in as few passes over each source as memory allows.
//!
//! Why: a grid of memories and k over one capture used to read (and decode) the
//! capture once to fit it and again for every point and seed. Each point's filters
//! keep their own ground truth ([`Replays`]) whichever pass feeds them, so sharing the
//! reading changes no result, only its cost: a trace file is read once for its fit and
//! every point's replays together ([`super::source::Source::prepare`] feeds them the
//! keys it fits). A synthetic source is not shared this way: its generator costs little
//! beside a replay, so each replay draws its own stream, in parallel ([`Passes::finish`]).
//!
//! Memory: the replays of one pass are held at once, within half the machine's free
//! memory. Where the source says how many distinct keys it holds (declared or
//! estimated), the points are cut into passes whose ground truths and filters fit
//! that budget. Where it does not, the tables grow as keys arrive: before a growth that
//! would take the pass past the budget, the last points' replays are set aside
//! (started again in a later pass, sized by the count the others met), so a sweep
//! holds what a lone replay holds and more only where the machine has room for it.

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::config::ExperimentConfig;
use super::source::Source;
use crate::compare::with_judged_positions;
use rbf_data::filter::FilterConfig;
use rbf_data::ingest::MessageSource;
use rbf_data::message::Message;
use rbf_foundations::error::Result;
use rbf_foundations::progress::Progress;
use rbf_observed::fit::Fitter;
use rbf_observed::replay::memory::MemoryPlan;
use rbf_observed::replay::{check_growth, ReplayOptions, ReplayReport, Replays};
use rbf_observed::trace_renewal::{TraceBound, TraceRenewal};

/// Keys handed to every replay of a pass at once (the replays take them in parallel).
const BATCH: usize = 8192;

/// Free memory assumed when the machine does not say (the budget is half of it).
const UNKNOWN_FREE: u64 = 8 << 30;

/// What a point's replays gave: one report per seed, and the trace's own recycles
/// where they were followed (a trace file's first seed; every seed of a synthetic
/// source), in seed order.
pub struct Replayed {
    pub reports: Vec<ReplayReport>,
    pub traces: Vec<TraceBound>,
}

/// A point to replay: its position in the runner's slice and its filter (sigma settled).
pub struct Wanted {
    pub at: usize,
    pub filter: FilterConfig,
}

/// One point and seed, not replayed yet.
struct Spec {
    at: usize,
    seed: usize,
    filter: FilterConfig,
    follow: bool,
}

/// The replays of one point and seed, fed the pass's batches.
struct Lane {
    spec: Spec,
    replays: Replays,
    trace: Option<TraceRenewal>,
}

impl Lane {
    fn run_keys(&mut self, keys: &[u64]) {
        self.replays.run_keys(keys);
        if let Some(t) = self.trace.as_mut() {
            t.run_keys(keys);
        }
    }

    fn held_bytes(&self) -> u64 {
        (self.replays.truth_bytes() + self.replays.filter_bytes()) as u64
    }
}

/// The replays one reading of a source feeds.
pub struct Pass {
    lanes: Vec<Lane>,
    /// Points (positions) whose replays ended without a report, and why.
    failed: Vec<(usize, String)>,
    /// Replays set aside to keep the pass within `budget` (for a later pass).
    deferred: Vec<Spec>,
    budget: u64,
}

/// A point's replays as they come in, a slot per seed.
struct Slots {
    reports: Vec<Option<ReplayReport>>,
    traces: Vec<Option<TraceBound>>,
    error: Option<String>,
}

/// The replays a source owes its points.
pub struct Passes<'a> {
    config: &'a ExperimentConfig,
    source: &'a Source,
    warmup: u64,
    pending: Vec<Spec>,
    /// By the point's position in the runner's slice.
    slots: BTreeMap<usize, Slots>,
    /// Distinct keys a complete pass over the source met (sizes later passes).
    met_distinct: Option<u64>,
    /// Bytes a pass may hold (None: half the free memory; tests set it).
    budget: Option<u64>,
    /// Whether reading a long trace file shows how far it got.
    pub progress: bool,
}

impl<'a> Passes<'a> {
    /// The replays of `wanted` on `source`: each point once per seed of the config,
    /// with the trace's own recycles followed where the FN methods ask for them.
    pub fn new(
        config: &'a ExperimentConfig,
        source: &'a Source,
        warmup: u64,
        wanted: Vec<Wanted>,
    ) -> Self {
        let follow_wanted = crate::compare::trace::follow_the_trace(&config.fn_methods());
        let seeds = config.seeds.len();
        let mut pending = Vec::with_capacity(wanted.len() * seeds);
        let mut slots = BTreeMap::new();
        for w in wanted {
            for seed in 0..seeds {
                // The seeds of a trace file replay the same arrivals (followed once); a
                // synthetic source's seeds are other traces (followed on each).
                let follow = follow_wanted && (seed == 0 || !matches!(source, Source::Trace(_)));
                pending.push(Spec {
                    at: w.at,
                    seed,
                    filter: w.filter.clone(),
                    follow,
                });
            }
            slots.insert(
                w.at,
                Slots {
                    reports: (0..seeds).map(|_| None).collect(),
                    traces: (0..seeds).map(|_| None).collect(),
                    error: None,
                },
            );
        }
        Passes {
            config,
            source,
            warmup,
            pending,
            slots,
            met_distinct: None,
            budget: None,
            progress: false,
        }
    }

    /// The pass a trace file's own reading feeds (the fit's): as many replays as
    /// memory holds; the rest wait for [`Passes::finish`]. Empty for other sources.
    pub fn ride_along(&mut self, stream: &dyn MessageSource) -> Pass {
        if !matches!(self.source, Source::Trace(_)) {
            return Pass::new(0);
        }
        self.pass(known_distinct(stream))
    }

    /// Records what a pass gave; its set-aside replays wait for the next.
    pub fn keep(&mut self, pass: Pass) {
        self.record(pass.done());
    }

    fn record(&mut self, done: Done) {
        self.met_distinct = self.met_distinct.or(done.met_distinct);
        for (at, seed, outcome) in done.outcomes {
            if let Some(s) = self.slots.get_mut(&at) {
                match outcome {
                    Ok((report, trace)) => {
                        s.reports[seed] = Some(report);
                        s.traces[seed] = trace;
                    }
                    Err(e) => {
                        s.error.get_or_insert(e);
                    }
                }
            }
        }
        let mut pending = done.deferred;
        pending.append(&mut self.pending);
        self.pending = pending;
    }

    /// Runs the passes still owed and returns every point's replays, by position in
    /// the runner's slice. Stops with the interrupt on Ctrl-C.
    pub fn finish(mut self) -> Result<Vec<(usize, std::result::Result<Replayed, String>)>> {
        match self.source {
            Source::Synthetic(_) => self.generated()?,
            _ => {
                while !self.pending.is_empty() {
                    let stream = self.source.messages(0, self.progress)?;
                    let distinct = stream.known_distinct().or(self.met_distinct);
                    let mut pass = self.pass(distinct);
                    pass.feed(None, stream);
                    rbf_foundations::progress::check_interrupt()?;
                    self.keep(pass);
                }
            }
        }
        Ok(self
            .slots
            .into_iter()
            .map(|(at, s)| {
                let r = match s.error {
                    Some(e) => Err(e),
                    None => Ok(Replayed {
                        reports: s.reports.into_iter().flatten().collect(),
                        traces: s.traces.into_iter().flatten().collect(),
                    }),
                };
                (at, r)
            })
            .collect())
    }

    /// A synthetic source's replays, each from a stream of its own, in parallel: a
    /// generator costs little beside a replay, and replays side by side on one stream
    /// measured slower (each one's tables out of the cache: 100 points of
    /// configs/bench-grid.toml, 34.8 s against 31.0 s, and 1.8 GB against 93 MB).
    fn generated(&mut self) -> Result<()> {
        let Source::Synthetic(s) = self.source else {
            return Ok(());
        };
        let specs = std::mem::take(&mut self.pending);
        let bar = match self.progress {
            true => Progress::new(
                format!("rbf run: replaying {}", s.label()),
                specs.len() as f64 * (s.distinct as u64 + s.arrivals) as f64,
                "arrivals",
            ),
            false => Progress::hidden(),
        };
        let done = specs
            .into_par_iter()
            .with_max_len(1)
            .map(|spec| -> Result<Done> {
                let stream = self.source.messages(self.config.seeds[spec.seed], false)?;
                let at = spec.at;
                let mut pass = Pass::new(u64::MAX);
                match self.lane(spec, None) {
                    Ok(l) => pass.lanes.push(l),
                    Err(e) => pass.failed.push((at, e.to_string())),
                }
                pass.feed(None, bar.track(stream));
                Ok(pass.done())
            })
            .collect::<Result<Vec<Done>>>()?;
        bar.finish();
        rbf_foundations::progress::check_interrupt()?;
        for d in done {
            self.record(d);
        }
        Ok(())
    }

    /// The next pass: the pending points and seeds in order, as many as half the free
    /// memory holds when sized for `distinct` keys (at least one).
    fn pass(&mut self, distinct: Option<u64>) -> Pass {
        let budget = self.budget.unwrap_or_else(|| {
            rbf_foundations::resources::available_memory().unwrap_or(UNKNOWN_FREE) / 2
        });
        let mut used = 0u64;
        let mut chunk = Vec::new();
        let mut rest = Vec::with_capacity(self.pending.len());
        for spec in self.pending.drain(..) {
            let bytes = distinct.map_or(0, |d| {
                let p = MemoryPlan::new(&spec.filter, d, true)
                    .filters(u64::from(self.config.hash_seeds));
                p.truth + p.filter
            });
            let fits = chunk.is_empty() || used.saturating_add(bytes) <= budget;
            if fits {
                used = used.saturating_add(bytes);
                chunk.push(spec);
            } else {
                rest.push(spec);
            }
        }
        self.pending = rest;
        let distinct = sized(distinct, used);
        let mut pass = Pass::new(budget);
        for spec in chunk {
            let at = spec.at;
            match self.lane(spec, distinct) {
                Ok(l) => pass.lanes.push(l),
                Err(e) => pass.failed.push((at, e.to_string())),
            }
        }
        pass
    }

    /// One point and seed: one filter per hash seed, so that the intervals cover the
    /// hash positions.
    fn lane(&self, spec: Spec, distinct: Option<u64>) -> Result<Lane> {
        let mut f = spec.filter.clone();
        f.seed = self.config.seeds[spec.seed];
        f.positions = self.config.positions;
        let replays = Replays::sized(
            &with_judged_positions(&f),
            ReplayOptions {
                warmup: self.warmup,
                confidence: self.config.confidence,
            },
            self.config.hash_seeds,
            distinct,
        )?;
        let mut trace = spec
            .follow
            .then(|| TraceRenewal::new(&spec.filter, self.warmup))
            .flatten();
        if let (Some(t), Some(d)) = (trace.as_mut(), distinct) {
            t.expect_distinct(d);
        }
        Ok(Lane {
            spec,
            replays,
            trace,
        })
    }
}

/// What a pass gave, its tables dropped: per point and seed, the report and the
/// trace's own bound, or why there is none.
struct Done {
    #[allow(clippy::type_complexity)]
    outcomes: Vec<(
        usize,
        usize,
        std::result::Result<(ReplayReport, Option<TraceBound>), String>,
    )>,
    deferred: Vec<Spec>,
    /// The distinct keys of the source, where a replay of the pass read it whole.
    met_distinct: Option<u64>,
}

impl Pass {
    fn new(budget: u64) -> Pass {
        Pass {
            lanes: Vec::new(),
            failed: Vec::new(),
            deferred: Vec::new(),
            budget,
        }
    }

    fn done(self) -> Done {
        // Every replay still in the pass read the source whole (a refused growth
        // empties the pass).
        let met_distinct = self.lanes.iter().map(|l| l.replays.distinct() as u64).max();
        let mut outcomes: Vec<_> = self
            .lanes
            .into_iter()
            .map(|l| {
                let trace = l.trace.as_ref().and_then(TraceRenewal::finish);
                (l.spec.at, l.spec.seed, Ok((l.replays.report(), trace)))
            })
            .collect();
        outcomes.extend(self.failed.into_iter().map(|(at, e)| (at, 0, Err(e))));
        Done {
            outcomes,
            deferred: self.deferred,
            met_distinct,
        }
    }

    /// Reads `stream` to its end, handing each batch of keys to the fitter and to every
    /// replay (in parallel).
    pub fn feed(
        &mut self,
        mut fitter: Option<&mut Fitter>,
        stream: impl IntoIterator<Item = Message>,
    ) {
        let mut it = stream.into_iter();
        let mut keys = Vec::with_capacity(BATCH);
        loop {
            keys.clear();
            keys.extend(it.by_ref().take(BATCH).map(|m| m.key));
            if keys.is_empty() {
                return;
            }
            self.make_room(keys.len());
            let lanes = &mut self.lanes;
            let mut replay = || lanes.par_iter_mut().for_each(|l| l.run_keys(&keys));
            match fitter.as_deref_mut() {
                Some(f) => {
                    rayon::join(|| f.run_keys(&keys), replay);
                }
                None => replay(),
            }
            if keys.len() < BATCH {
                return;
            }
        }
    }

    /// Before the tables grow for `more` new keys: sets the last replays aside while
    /// the pass would outgrow its budget (keeping one), then checks what growth is left
    /// against the machine; a refusal ends the pass's replays with it.
    fn make_room(&mut self, more: usize) {
        let growth =
            |lanes: &[Lane]| -> u64 { lanes.iter().map(|l| l.replays.growth_bytes(more)).sum() };
        let mut g = growth(&self.lanes);
        if g == 0 {
            return;
        }
        while self.lanes.len() > 1 {
            let held: u64 = self.lanes.iter().map(Lane::held_bytes).sum();
            if held.saturating_add(g) <= self.budget {
                break;
            }
            if let Some(l) = self.lanes.pop() {
                self.deferred.insert(0, l.spec);
            }
            g = growth(&self.lanes);
        }
        let distinct = self
            .lanes
            .iter()
            .map(|l| l.replays.distinct())
            .max()
            .unwrap_or(0);
        if let Err(e) = check_growth(distinct, g) {
            let e = e.to_string();
            for l in self.lanes.drain(..) {
                self.failed.push((l.spec.at, e.clone()));
            }
        }
    }
}

/// The count to size a pass's tables for up front: `distinct` when the machine holds
/// the pass's `bytes`, else None (the tables grow, each growth checked), as
/// [`rbf_observed::replay::sizing::distinct_up_front`] decides for a single replay.
fn sized(distinct: Option<u64>, bytes: u64) -> Option<u64> {
    let d = distinct?;
    match rbf_foundations::resources::check_memory(
        &format!("replaying a sweep's points side by side ({d} distinct keys)"),
        bytes as f64,
    ) {
        Ok(()) => Some(d),
        Err(e) => {
            rbf_foundations::progress::note(&format!(
                "{e}; the ground truth is not sized up front but grown as keys arrive, each step checked"
            ));
            None
        }
    }
}

/// The distinct keys a trace declares or estimates.
pub fn known_distinct(source: &dyn MessageSource) -> Option<u64> {
    source
        .declared_distinct()
        .or_else(|| source.estimated_distinct().map(|e| e.distinct))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// A trace file and a synthetic source, two seeds, four points (one and two phases),
    /// with the trace's own recycles followed.
    fn config() -> ExperimentConfig {
        let trace =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces/cdn/tragen-100k.csv.zst");
        let text = format!(
            r#"
name = "passes"
seeds = [1, 2]
measures = ["observed", "renewal-trace"]
hash_seeds = 4

[[trace]]
path = "{}"
warmup = 20000

[[synthetic]]
distinct = 2000
zipf = 1.0
p_repeat = 0.9
arrivals = 60000

[grid]
memory = [3000, 9000]
hashes = [3]
sigma_fraction = [0.3]
phases = [1, 2]
"#,
            trace.display()
        );
        ExperimentConfig::parse(&text, Path::new("passes.toml")).expect("config parses")
    }

    fn wanted(config: &ExperimentConfig, source: usize) -> Vec<Wanted> {
        super::super::grid::expand(config)
            .iter()
            .enumerate()
            .filter(|(_, p)| p.source == source)
            .map(|(at, p)| Wanted {
                at,
                filter: super::super::runner::point_filter(p).expect("filter"),
            })
            .collect()
    }

    /// Every point's reports and trace bounds as text, by position.
    fn text(r: Vec<(usize, std::result::Result<Replayed, String>)>) -> Vec<(usize, String)> {
        r.into_iter()
            .map(|(at, r)| {
                let r = r.expect("replayed");
                (at, format!("{:?} {:?}", r.reports, r.traces))
            })
            .collect()
    }

    /// The source's points through [`Passes`], the first pass riding along a reading of
    /// the trace as the fit's does, with `budget` bytes a pass.
    fn through_passes(
        config: &ExperimentConfig,
        source: usize,
        budget: Option<u64>,
    ) -> Vec<(usize, String)> {
        let all = Source::all(config);
        let s = &all[source];
        let mut passes = Passes::new(config, s, s.warmup(), wanted(config, source));
        passes.budget = budget;
        if let Source::Trace(t) = s {
            let mut stream = Source::open_trace(t, false).expect("opens");
            let mut pass = passes.ride_along(stream.as_ref());
            pass.feed(None, &mut stream);
            passes.keep(pass);
        }
        text(passes.finish().expect("passes"))
    }

    /// Each point and seed replayed on its own, as a lone `rbf replay` does.
    fn alone(config: &ExperimentConfig, source: usize) -> Vec<(usize, String)> {
        let all = Source::all(config);
        let s = &all[source];
        let trace_file = matches!(s, Source::Trace(_));
        wanted(config, source)
            .into_iter()
            .map(|w| {
                let mut reports = Vec::new();
                let mut traces = Vec::new();
                for (i, &seed) in config.seeds.iter().enumerate() {
                    let mut f = w.filter.clone();
                    f.seed = seed;
                    f.positions = config.positions;
                    let options = ReplayOptions {
                        warmup: s.warmup(),
                        confidence: config.confidence,
                    };
                    let mut r =
                        Replays::new(&with_judged_positions(&f), options, config.hash_seeds)
                            .expect("replays");
                    let mut t = (i == 0 || !trace_file)
                        .then(|| TraceRenewal::new(&w.filter, s.warmup()))
                        .flatten();
                    rbf_data::message::for_each_key_batch(
                        s.messages(seed, false).expect("opens"),
                        |keys| {
                            r.run_keys(keys);
                            if let Some(t) = t.as_mut() {
                                t.run_keys(keys);
                            }
                        },
                    );
                    reports.push(r.report());
                    traces.extend(t.and_then(|t| t.finish()));
                }
                (w.at, format!("{reports:?} {traces:?}"))
            })
            .collect()
    }

    #[test]
    fn passes_give_each_point_the_replays_it_would_get_alone() {
        let c = config();
        for source in 0..2 {
            let reference = alone(&c, source);
            assert_eq!(reference.len(), 4);
            assert!(
                reference.iter().all(|(_, t)| t.contains("TraceBound")),
                "trace bounds followed"
            );
            // One pass for all (per seed for the synthetic source).
            assert_eq!(
                through_passes(&c, source, None),
                reference,
                "source {source}"
            );
        }
    }

    #[test]
    fn a_pass_over_its_budget_sets_replays_aside_for_later_passes() {
        // One byte a pass: every growth sets all replays but one aside, so each point
        // and seed gets a pass of its own, sized by the count the first pass met.
        let c = config();
        for source in 0..2 {
            assert_eq!(
                through_passes(&c, source, Some(1)),
                alone(&c, source),
                "source {source}"
            );
        }
    }
}
