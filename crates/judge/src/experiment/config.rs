//! The TOML experiment file: what to run (sources), over which filters (the grid),
//! and which numbers to put side by side (measures).
//!
//! ```toml
//! name = "quickstart"
//! output = "../out/quickstart"   # relative paths are relative to this file
//! seeds = [1, 2]                 # filter hashing (and synthetic traces) per seed
//! measures = ["observed", "fp-model", "renewal", "drop-pins"]
//! renewal_tolerance = 1e-3       # optional: the renewal bound's certified mode
//!
//! [[trace]]                      # a real trace, read as `rbf replay` reads it
//! path = "../traces/cdn/tragen-100k.csv.zst"   # or a list, a directory, a glob
//! warmup = 10000
//!
//! [[synthetic]]                  # the FN paper's arrival model (§3.1)
//! distinct = 1000
//! zipf = 1.0
//! p_repeat = 0.9
//! arrivals = 200000
//!
//! [grid]                         # the cross product of every list
//! memory = [10000, 20000]
//! hashes = [5]
//! sigma_fraction = [0.3]         # or sigma, target_fp, max_inserts
//! phases = [1, 2]
//! ```
//!
//! Unknown keys are errors (serde's `deny_unknown_fields`), and every error names
//! the file, the key and the values allowed.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::config_error::ConfigError;
use rbf_data::filter::FilterConfig;
use rbf_data::filter::{Hashing, Positions};
use rbf_data::ingest::packet::flows::{parse_duration_ns, FlowTimeouts};
use rbf_data::ingest::packet::key::FlowKeyKind;
use rbf_data::ingest::Format;
use rbf_data::workload::{Placement, Workload};
use rbf_foundations::error::{Error, Problem, Result};
use rbf_predicted::model::false_negative::Method;

/// A whole experiment file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentConfig {
    /// Names the outputs and titles the report.
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Output directory (relative to the config file); `rbf run --output` overrides it.
    #[serde(default = "default_output")]
    pub output: PathBuf,
    /// One replay per seed and point; the seed drives the filter's hashing and, for
    /// synthetic sources, the trace.
    #[serde(default = "default_seeds")]
    pub seeds: Vec<u64>,
    /// What to compute at each point.
    #[serde(default = "default_measures")]
    pub measures: Vec<Measure>,
    /// FN models' truncation epsilon (§4.1.3, §5.1).
    #[serde(default = "default_eps")]
    pub eps: f64,
    /// Renewal bound in the certified tolerance mode: a relative tolerance T in (0, 1);
    /// each point's bound V then satisfies exact <= V <= exact (1 + T)
    /// (`RenewalOptions::tolerance`); 0: the exact engine. Absent: the exact engine,
    /// except at filters of 2^19 bits or more where the hitting-time engine applies
    /// (certified within 1e-3).
    #[serde(default)]
    pub renewal_tolerance: Option<f64>,
    /// Confidence level of observed intervals.
    #[serde(default = "default_confidence")]
    pub confidence: f64,
    /// Filters (hash seeds) each replay runs, so that observed intervals cover the hash
    /// positions' randomness as the models do ([`rbf_observed::replay::Replays`]).
    #[serde(default = "default_hash_seeds")]
    pub hash_seeds: u32,
    /// Hash positions of the replayed filters: `per-cycle` (new positions at every
    /// recycle: the process the models describe, the default, as for every judged
    /// replay: [`crate::compare::JUDGED_POSITIONS`]) or `fixed` (a deployed filter's;
    /// docs/coverage/README.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub positions: Option<Positions>,
    #[serde(default, rename = "trace")]
    pub traces: Vec<TraceSource>,
    /// Synthetic sources; a `[[synthetic]]` table whose `distinct`, `zipf`,
    /// `p_repeat` or `placement` is a list stands for the cross product.
    #[serde(default, rename = "synthetic", deserialize_with = "expand_synthetic")]
    pub synthetic: Vec<SyntheticSource>,
    pub grid: GridConfig,
}

fn default_output() -> PathBuf {
    PathBuf::from("out")
}
fn default_seeds() -> Vec<u64> {
    vec![1]
}
fn default_measures() -> Vec<Measure> {
    vec![Measure::Observed, Measure::FpModel]
}
fn default_eps() -> f64 {
    rbf_predicted::model::false_negative::DEFAULT_EPS
}
/// The level of observed intervals unless a config says otherwise (also what results
/// written before the level was recorded used).
pub(crate) fn default_confidence() -> f64 {
    0.99
}
fn default_hash_seeds() -> u32 {
    rbf_observed::replay::DEFAULT_HASH_SEEDS
}

/// A number computed at each grid point. In TOML a measure is its name: `observed`,
/// `fp-model`, `capacity`, or an FN method's name ([`Method::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// Exact replay: observed FP and FN.
    Observed,
    /// The FP paper's average FP rate (f_sigma, or f_w/f_o/f_a when N-bounded).
    FpModel,
    /// Message capacity at the point's target FP: sigma-bounded model vs worst-case
    /// sizing (FP paper §V-B, Fig. 6-7). Needs `target_fp` in the grid.
    Capacity,
    /// An FN method (the FN paper's renewal bound and Markov-chain estimates).
    Fn(Method),
}

impl Measure {
    /// Every measure, the FN methods last in [`Method::ALL`] order.
    pub fn all() -> impl Iterator<Item = Measure> {
        [Measure::Observed, Measure::FpModel, Measure::Capacity]
            .into_iter()
            .chain(Method::ALL.map(Measure::Fn))
    }

    /// The name used in config files and outputs.
    pub fn name(self) -> &'static str {
        match self {
            Measure::Observed => "observed",
            Measure::FpModel => "fp-model",
            Measure::Capacity => "capacity",
            Measure::Fn(m) => m.name(),
        }
    }

    /// The measure called `name`, if any.
    pub fn parse(name: &str) -> Option<Measure> {
        Measure::all().find(|m| m.name() == name)
    }

    /// Every measure's name, comma-separated (for error messages).
    fn allowed() -> String {
        Measure::all()
            .map(Measure::name)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The FN method behind this measure, if it is one.
    pub fn fn_method(self) -> Option<Method> {
        match self {
            Measure::Fn(m) => Some(m),
            _ => None,
        }
    }
}

impl Serialize for Measure {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Measure {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Measure::parse(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "measures: unknown measure `{name}`; allowed: {}",
                Measure::allowed()
            ))
        })
    }
}

/// The files of a trace: one path, or a list read as one trace (a capture series);
/// each may be a directory or a glob pattern.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    untagged,
    expecting = "a path or a list of paths (files, directories or glob patterns)"
)]
pub enum TracePaths {
    One(PathBuf),
    Many(Vec<PathBuf>),
}

impl TracePaths {
    pub fn list(&self) -> &[PathBuf] {
        match self {
            TracePaths::One(p) => std::slice::from_ref(p),
            TracePaths::Many(v) => v,
        }
    }

    /// Every path absolute and canonical where it exists (a glob or a missing file is
    /// kept as written): the same files, however the working directory spells them.
    pub fn canonicalize(&mut self) {
        let canonical = |p: &mut PathBuf| {
            if let Ok(c) = std::fs::canonicalize(&*p) {
                *p = c;
            }
        };
        match self {
            TracePaths::One(p) => canonical(p),
            TracePaths::Many(v) => v.iter_mut().for_each(canonical),
        }
    }

    fn resolve(&mut self, base: &Path) {
        match self {
            TracePaths::One(p) => *p = relative_to(base, p),
            TracePaths::Many(v) => v.iter_mut().for_each(|p| *p = relative_to(base, p)),
        }
    }
}

/// A trace file (or a series of files) as a source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSource {
    /// Label in tables and plots (default: the file name).
    #[serde(default)]
    pub name: Option<String>,
    pub path: TracePaths,
    /// A series is read in the order of its files' first timestamps, not as listed.
    #[serde(default)]
    pub sort_by_time: bool,
    /// Captures: one message per exported flow record instead of one per packet.
    #[serde(default)]
    pub flows: bool,
    /// Flow export: a flow idle this long is exported (e.g. "15s", "500ms").
    #[serde(default = "default_inactive")]
    pub inactive_timeout: String,
    /// Flow export: a flow lasting this long is exported and restarted (e.g. "30m").
    #[serde(default = "default_active")]
    pub active_timeout: String,
    #[serde(default)]
    pub format: Format,
    /// Captures: which header fields make the key (e.g. "dst-prefix" for the FN
    /// paper's campus use case).
    #[serde(default)]
    pub key: FlowKeyKind,
    #[serde(default = "default_prefix_v4")]
    pub prefix_v4: u8,
    #[serde(default = "default_prefix_v6")]
    pub prefix_v6: u8,
    /// Arrivals that update state but are not counted (replay and fit alike).
    #[serde(default)]
    pub warmup: u64,
    /// Fit window in arrivals (the workload the models get is fitted from the trace).
    #[serde(default = "default_window")]
    pub fit_window: u64,
}

fn default_prefix_v4() -> u8 {
    24
}
fn default_inactive() -> String {
    "15s".into()
}
fn default_active() -> String {
    "30m".into()
}

impl TraceSource {
    /// The flow export timeouts, when the trace is read as flow records.
    pub fn flow_timeouts(&self) -> Result<Option<FlowTimeouts>> {
        if !self.flows {
            return Ok(None);
        }
        let inactive_ns = parse_duration_ns(&self.inactive_timeout)
            .map_err(|e| Error::setting("trace.inactive_timeout", Problem::Unreadable(e)))?;
        let active_ns = parse_duration_ns(&self.active_timeout)
            .map_err(|e| Error::setting("trace.active_timeout", Problem::Unreadable(e)))?;
        if active_ns < inactive_ns {
            return Err(Error::setting(
                "trace.active_timeout",
                Problem::rule("must be at least the inactive timeout"),
            ));
        }
        Ok(Some(FlowTimeouts {
            inactive_ns,
            active_ns,
        }))
    }
}
fn default_prefix_v6() -> u8 {
    48
}
fn default_window() -> u64 {
    rbf_observed::fit::DEFAULT_WINDOW
}

/// A synthetic workload from the FN paper's arrival model (§3.1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SyntheticSource {
    #[serde(default)]
    pub name: Option<String>,
    /// D: previously seen messages.
    pub distinct: usize,
    /// Zipf exponent alpha of Q (0 = uniform).
    pub zipf: f64,
    /// p_r: probability that an arrival repeats a seen message.
    pub p_repeat: f64,
    #[serde(default = "default_placement")]
    pub placement: String,
    /// Arrivals after the prologue (each of the D messages once).
    pub arrivals: u64,
    /// Arrivals not counted; default: the prologue plus a tenth of the arrivals.
    #[serde(default)]
    pub warmup: Option<u64>,
    /// Also fit the workload from the generated trace (the first seed's), as for a
    /// real trace, and put the renewal bound on the fitted workload (point estimate
    /// and conservative end) next to the one on the true workload.
    #[serde(default)]
    pub fit: bool,
    /// The fit's window W in arrivals.
    #[serde(default = "default_window")]
    pub fit_window: u64,
}

fn default_placement() -> String {
    "uniform".into()
}

/// Ground truth of an exact replay per distinct message: at least this many bytes (the
/// slot table's 21-43 bytes per key between resizes; `rbf_observed::replay::truth`).
const TRUTH_BYTES_PER_MESSAGE: f64 = 21.0;

impl SyntheticSource {
    /// The source's workload, checked by the same code as `rbf synth`'s flags
    /// ([`Workload::validate`]); errors name the `[[synthetic]]` key.
    pub fn workload(&self) -> Result<Workload> {
        let in_synthetic = |e: Error| match e {
            Error::Setting(s) => {
                let key = match s.key.as_str() {
                    "popularity.zipf.alpha" => "zipf",
                    "popularity" => "distinct",
                    k => k,
                };
                let key = format!("synthetic.{key}");
                Error::Setting(s.renamed(key))
            }
            other => other,
        };
        let placement = Placement::parse(&self.placement).map_err(in_synthetic)?;
        let w = Workload::zipf(self.distinct, self.zipf, self.p_repeat, placement);
        w.validate().map_err(in_synthetic)?;
        Ok(w)
    }

    /// Distinct messages in the generated trace: the D of the prologue plus every new
    /// arrival, (1 - p_r) of the arrivals on average.
    pub fn expected_messages(&self) -> f64 {
        self.distinct as f64 + (1.0 - self.p_repeat) * self.arrivals as f64
    }

    /// Refuses a source whose exact replay (or fit) cannot keep its ground truth in
    /// this machine's memory: one entry per distinct message, which the arrival model
    /// makes grow with the arrivals unless p_r = 1.
    pub fn check_memory(&self) -> Result<()> {
        let messages = self.expected_messages();
        rbf_foundations::resources::check_memory(
            &format!(
                "exact replay of [[synthetic]] `{}`, which keeps each of its D + (1 - p_r) x arrivals = {messages:.2e} distinct messages,",
                self.label()
            ),
            messages * TRUTH_BYTES_PER_MESSAGE,
        )
    }

    /// The name in tables: the given one, or the workload's parameters.
    pub fn label(&self) -> String {
        self.name.clone().unwrap_or_else(|| {
            format!(
                "zipf({}, {}) p_r={} {}",
                self.distinct, self.zipf, self.p_repeat, self.placement
            )
        })
    }
}

/// One value or a list of values of a `[[synthetic]]` key.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
enum OneOrMany<T> {
    One(T),
    Many(Vec<T>),
}

impl<T: Clone> OneOrMany<T> {
    fn values(&self) -> Vec<T> {
        match self {
            OneOrMany::One(x) => vec![x.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

/// A `[[synthetic]]` table as written: list-valued keys are axes of a cross product.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SyntheticSpec {
    #[serde(default)]
    name: Option<String>,
    distinct: OneOrMany<usize>,
    zipf: OneOrMany<f64>,
    p_repeat: OneOrMany<f64>,
    #[serde(default = "default_placements")]
    placement: OneOrMany<String>,
    arrivals: u64,
    #[serde(default)]
    warmup: Option<u64>,
    #[serde(default)]
    fit: bool,
    #[serde(default = "default_window")]
    fit_window: u64,
}

fn default_placements() -> OneOrMany<String> {
    OneOrMany::One(default_placement())
}

/// Expands list-valued `[[synthetic]]` keys, in the order distinct, zipf, p_repeat,
/// placement (the last varies fastest). A name is kept only for single sources.
fn expand_synthetic<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Vec<SyntheticSource>, D::Error> {
    let specs = Vec::<SyntheticSpec>::deserialize(d)?;
    let mut out = Vec::new();
    for s in specs {
        let (ds, zs, ps, pls) = (
            s.distinct.values(),
            s.zipf.values(),
            s.p_repeat.values(),
            s.placement.values(),
        );
        let single = ds.len() * zs.len() * ps.len() * pls.len() == 1;
        for &distinct in &ds {
            for &zipf in &zs {
                for &p_repeat in &ps {
                    for placement in &pls {
                        out.push(SyntheticSource {
                            name: if single { s.name.clone() } else { None },
                            distinct,
                            zipf,
                            p_repeat,
                            placement: placement.clone(),
                            arrivals: s.arrivals,
                            warmup: s.warmup,
                            fit: s.fit,
                            fit_window: s.fit_window,
                        });
                    }
                }
            }
        }
    }
    Ok(out)
}

/// The filter grid: every list is an axis, the grid is their cross product. Numbers
/// take the command line's spellings (`1e4`, `"2^14"`: `rbf_foundations::numbers`).
/// Exactly one of `sigma`, `sigma_fraction`, `target_fp`, `max_inserts` is given.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GridConfig {
    /// M in bits (give this or `bits_per_distinct`).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "rbf_foundations::numbers::whole_list"
    )]
    pub memory: Vec<u64>,
    /// M as bits per message of a synthetic source's D (M = round(x D)), so that one
    /// grid spans the same filter sizes relative to workloads of different D.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "rbf_foundations::numbers::real_list"
    )]
    pub bits_per_distinct: Vec<f64>,
    /// k.
    #[serde(deserialize_with = "rbf_foundations::numbers::whole_list")]
    pub hashes: Vec<u32>,
    /// Absolute sigma values (bits set per array before a recycle).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "rbf_foundations::numbers::whole_list"
    )]
    pub sigma: Vec<u64>,
    /// sigma as a fraction of the bits per array (M, or M/2 for two phases).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "rbf_foundations::numbers::real_list"
    )]
    pub sigma_fraction: Vec<f64>,
    /// sigma chosen from the FP model: the largest whose average FP meets the target.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "rbf_foundations::numbers::real_list"
    )]
    pub target_fp: Vec<f64>,
    /// N-bounded filters: recycle after N bit-setting insertions per array.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "rbf_foundations::numbers::whole_list"
    )]
    pub max_inserts: Vec<u64>,
    #[serde(
        default = "default_phases",
        deserialize_with = "rbf_foundations::numbers::whole_list"
    )]
    pub phases: Vec<u8>,
    #[serde(default = "default_hashing")]
    pub hashing: Vec<Hashing>,
    #[serde(default = "default_true")]
    pub retaining: Vec<bool>,
    #[serde(default = "default_true")]
    pub copy_over: Vec<bool>,
    #[serde(default = "default_false")]
    pub independent_halves: Vec<bool>,
}

fn default_phases() -> Vec<u8> {
    vec![1]
}
fn default_hashing() -> Vec<Hashing> {
    vec![Hashing::Colliding]
}
fn default_true() -> Vec<bool> {
    vec![true]
}
fn default_false() -> Vec<bool> {
    vec![false]
}

impl ExperimentConfig {
    /// Reads and checks a config file. Relative paths inside are resolved against the
    /// file's directory, so a config runs the same from any working directory.
    pub fn load(path: &Path) -> Result<ExperimentConfig> {
        let text = rbf_data::ingest::input::read_text(path)?;
        ExperimentConfig::parse(&text, path)
    }

    /// Parses `text` (read from `path`, used for messages and relative paths).
    pub fn parse(text: &str, path: &Path) -> Result<ExperimentConfig> {
        let mut c: ExperimentConfig =
            toml::from_str(text).map_err(|e| ConfigError::Unreadable {
                path: path.to_path_buf(),
                message: rbf_foundations::error::clip_lines(&e.to_string()),
            })?;
        let base = path.parent().unwrap_or(Path::new(""));
        c.output = relative_to(base, &c.output);
        for t in &mut c.traces {
            t.path.resolve(base);
        }
        c.validate().map_err(|error| ConfigError::Refused {
            path: path.to_path_buf(),
            error,
        })?;
        Ok(c)
    }

    /// The config as TOML, defaults filled in and paths as resolved (relative to the
    /// directory rbf ran in): what produced a run, for its report. It parses back to
    /// the same config.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_else(|e| {
            // Not expected (every field has a TOML form); the JSON form says the same.
            let json = serde_json::to_string_pretty(self).unwrap_or_default();
            format!("# not expressible as TOML ({e}); as JSON:\n{json}\n")
        })
    }

    /// Checks what serde cannot: non-empty axes, ranges, exactly one sigma rule.
    pub fn validate(&self) -> Result<()> {
        self.check_measures()?;
        self.check_levels()?;
        self.check_traces()?;
        self.check_synthetic()?;
        // The grid as a whole (its size, at least one valid point) is checked by
        // `experiment::check`, which needs the grid built.
        self.grid.validate(&self.measures)
    }

    /// A workload for the measures that need one, seeds and measures given once each.
    fn check_measures(&self) -> Result<()> {
        let needs_data = self
            .measures
            .iter()
            .any(|m| *m == Measure::Observed || m.fn_method().is_some());
        if needs_data && self.traces.is_empty() && self.synthetic.is_empty() {
            return Err(Error::setting(
                "trace / synthetic",
                Problem::Missing("`observed` and the FN measures need a workload: give at least one [[trace]] or [[synthetic]] source"),
            ));
        }
        if self.seeds.is_empty() {
            return Err(Error::setting(
                "seeds",
                Problem::Empty("give at least one seed"),
            ));
        }
        no_duplicates("seeds", self.seeds.iter().map(u64::to_string))?;
        no_duplicates(
            "measures",
            self.measures.iter().map(|m| m.name().to_string()),
        )?;
        if self.measures.is_empty() {
            return Err(Error::setting(
                "measures",
                Problem::rule(format!("give at least one of: {}", Measure::allowed())),
            ));
        }
        Ok(())
    }

    /// eps in (0, 0.01) (the models' rule), the renewal tolerance and the confidence in
    /// (0, 1); hash seeds in range.
    fn check_levels(&self) -> Result<()> {
        rbf_predicted::model::false_negative::check_eps(self.eps)?;
        if let Some(t) = self.renewal_tolerance {
            if !(t == 0.0 || (t > 0.0 && t < 1.0)) {
                // The found value follows a semicolon here, not `, found`: it is part
                // of the allowed text, which keeps the message as it was.
                return Err(Error::setting(
                    "renewal_tolerance",
                    Problem::rule(format!(
                        "a relative tolerance strictly between 0 and 1, e.g. 1e-3, or 0 for the exact engine; found {t}"
                    )),
                ));
            }
        }
        if !(self.confidence > 0.0 && self.confidence < 1.0) {
            return Err(Error::setting(
                "confidence",
                Problem::rule("must lie strictly between 0 and 1"),
            ));
        }
        if !(1..=rbf_observed::replay::MAX_HASH_SEEDS).contains(&self.hash_seeds) {
            return Err(Error::setting(
                "hash_seeds",
                Problem::range(
                    format!(
                        "allowed range is 1..={}",
                        rbf_observed::replay::MAX_HASH_SEEDS
                    ),
                    self.hash_seeds,
                ),
            ));
        }
        Ok(())
    }

    /// Each [[trace]]: files to read more than once (no standard input), valid flow
    /// timeouts; and no sizing by D, which a trace does not have.
    fn check_traces(&self) -> Result<()> {
        if !self.grid.bits_per_distinct.is_empty() && !self.traces.is_empty() {
            return Err(Error::setting(
                "grid.bits_per_distinct",
                Problem::Conflict("sizes filters by a synthetic source's D, which a [[trace]] does not have: use grid.memory".into()),
            ));
        }
        for t in &self.traces {
            let paths = t.path.list();
            if paths.is_empty() {
                return Err(Error::setting(
                    "trace.path",
                    Problem::Empty("the list is empty: give at least one file"),
                ));
            }
            if paths.iter().any(|p| rbf_data::ingest::source::is_stdin(p)) {
                return Err(Error::setting(
                    "trace.path",
                    Problem::Conflict("`-` (standard input) cannot be a config's trace: an experiment reads its traces several times".into()),
                ));
            }
            t.flow_timeouts()?;
        }
        Ok(())
    }

    /// Each [[synthetic]] source: a workload, a fit window, and memory for its trace
    /// where it is held.
    fn check_synthetic(&self) -> Result<()> {
        let observed = self.wants(Measure::Observed);
        let fits = !self.fn_methods().is_empty();
        for s in &self.synthetic {
            if s.distinct == 0 || s.arrivals == 0 {
                return Err(Error::setting(
                    "synthetic.distinct / synthetic.arrivals",
                    Problem::rule("must be positive"),
                ));
            }
            s.workload()?;
            if s.fit_window < 2 {
                return Err(Error::setting(
                    "synthetic.fit_window",
                    Problem::rule("must be at least 2 arrivals"),
                ));
            }
            // Replayed for `observed`, and read by the fit with `fit = true`.
            if observed || (fits && s.fit) {
                s.check_memory()?;
            }
        }
        Ok(())
    }

    /// The FN methods among the measures, in the order given.
    pub fn fn_methods(&self) -> Vec<Method> {
        self.measures.iter().filter_map(|m| m.fn_method()).collect()
    }

    pub fn wants(&self, m: Measure) -> bool {
        self.measures.contains(&m)
    }
}

impl GridConfig {
    /// Each check in the order a user fixes a config: the sizes, the axes, repeated
    /// values, the sigma rule, then each value by the flags' checks.
    fn validate(&self, measures: &[Measure]) -> Result<()> {
        self.check_sizes()?;
        self.check_axes()?;
        self.check_sigma_rule()?;
        self.check_values(measures)
    }

    /// Exactly one of memory and bits_per_distinct, the latter positive.
    fn check_sizes(&self) -> Result<()> {
        if self.memory.is_empty() && self.bits_per_distinct.is_empty() {
            return Err(Error::setting(
                "grid.memory",
                Problem::Missing("the list is empty or missing: give memory (bits) or bits_per_distinct (bits per message of a synthetic source's D)"),
            ));
        }
        if !self.memory.is_empty() && !self.bits_per_distinct.is_empty() {
            return Err(Error::setting(
                "grid.memory",
                Problem::Conflict("give exactly one of: memory (bits), bits_per_distinct (bits per message of a synthetic source's D)".into()),
            ));
        }
        if let Some(x) = self
            .bits_per_distinct
            .iter()
            .find(|x| !(x.is_finite() && **x > 0.0))
        {
            return Err(Error::setting(
                "grid.bits_per_distinct",
                Problem::range("must be a positive number", x),
            ));
        }
        Ok(())
    }

    /// Every axis given, and no value twice on any list.
    fn check_axes(&self) -> Result<()> {
        let axes: [(&str, bool); 5] = [
            ("grid.hashes", self.hashes.is_empty()),
            ("grid.phases", self.phases.is_empty()),
            ("grid.hashing", self.hashing.is_empty()),
            ("grid.retaining", self.retaining.is_empty()),
            ("grid.copy_over", self.copy_over.is_empty()),
        ];
        if let Some((key, _)) = axes.iter().find(|(_, empty)| *empty) {
            return Err(Error::setting(
                *key,
                Problem::Empty("the list is empty: give at least one value"),
            ));
        }
        let text = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>();
        let reals = |v: &[f64]| v.iter().map(f64::to_string).collect::<Vec<_>>();
        let flags = |v: &[bool]| v.iter().map(bool::to_string).collect::<Vec<_>>();
        no_duplicates("grid.memory", text(&self.memory))?;
        no_duplicates("grid.bits_per_distinct", reals(&self.bits_per_distinct))?;
        no_duplicates("grid.hashes", self.hashes.iter().map(u32::to_string))?;
        no_duplicates("grid.sigma", text(&self.sigma))?;
        no_duplicates("grid.sigma_fraction", reals(&self.sigma_fraction))?;
        no_duplicates("grid.target_fp", reals(&self.target_fp))?;
        no_duplicates("grid.max_inserts", text(&self.max_inserts))?;
        no_duplicates("grid.phases", self.phases.iter().map(u8::to_string))?;
        no_duplicates(
            "grid.hashing",
            self.hashing.iter().map(|h| h.name().to_string()),
        )?;
        no_duplicates("grid.retaining", flags(&self.retaining))?;
        no_duplicates("grid.copy_over", flags(&self.copy_over))?;
        no_duplicates("grid.independent_halves", flags(&self.independent_halves))
    }

    /// Exactly one sigma rule; phases, sigma fractions and FP targets in range.
    fn check_sigma_rule(&self) -> Result<()> {
        let rules = [
            !self.sigma.is_empty(),
            !self.sigma_fraction.is_empty(),
            !self.target_fp.is_empty(),
            !self.max_inserts.is_empty(),
        ];
        const ONE_RULE: &str = "give exactly one of: sigma, sigma_fraction, target_fp, max_inserts";
        match rules.iter().filter(|r| **r).count() {
            1 => {}
            0 => return Err(Error::setting("grid.sigma", Problem::Missing(ONE_RULE))),
            _ => {
                return Err(Error::setting(
                    "grid.sigma",
                    Problem::Conflict(ONE_RULE.into()),
                ))
            }
        }
        for &p in &self.phases {
            FilterConfig::check_phases(p).map_err(|e| e.in_section("grid"))?;
        }
        if let Some(f) = self
            .sigma_fraction
            .iter()
            .find(|f| !(**f > 0.0 && **f < 1.0))
        {
            return Err(Error::setting(
                "grid.sigma_fraction",
                Problem::range("must lie strictly between 0 and 1", f),
            ));
        }
        if let Some(f) = self.target_fp.iter().find(|f| !(**f > 0.0 && **f < 1.0)) {
            return Err(Error::setting(
                "grid.target_fp",
                Problem::range("must lie strictly between 0 and 1", f),
            ));
        }
        Ok(())
    }

    /// Each value on its own, by the checks of the command line's flags, and a target
    /// FP for `capacity`.
    fn check_values(&self, measures: &[Measure]) -> Result<()> {
        let grid = |e: Error| e.in_section("grid");
        for &m in &self.memory {
            FilterConfig::check_memory(m).map_err(grid)?;
        }
        for &k in &self.hashes {
            FilterConfig::check_hashes(k).map_err(grid)?;
        }
        for &n in &self.max_inserts {
            FilterConfig::check_max_inserts(n).map_err(grid)?;
        }
        if measures.contains(&Measure::Capacity) && self.target_fp.is_empty() {
            return Err(Error::setting(
                "measures",
                Problem::Missing("`capacity` sizes a filter for a target FP: give grid.target_fp"),
            ));
        }
        Ok(())
    }
}

/// Refuses a list that gives a value twice (by its printed form): the grid or the
/// seeds would repeat rows, and a repeated source name would file two sources' rows
/// under one heading.
pub(crate) fn no_duplicates(key: &str, values: impl IntoIterator<Item = String>) -> Result<()> {
    let mut seen = std::collections::BTreeSet::new();
    match values.into_iter().find(|v| !seen.insert(v.clone())) {
        Some(v) => Err(Error::setting(key, Problem::Duplicate(v))),
        None => Ok(()),
    }
}

/// `path` as written in a config in directory `base`, resolved the way the user reads
/// it: `configs/../out` is `out`. The base is canonicalised first, so removing `..`
/// lexically is exact even when `base` is a symlink, and the result is shown relative
/// to the working directory when it lies inside it.
fn relative_to(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        return clean(path);
    }
    let dir = if base.as_os_str().is_empty() {
        Path::new(".")
    } else {
        base
    };
    let Ok(dir) = std::fs::canonicalize(dir) else {
        return clean(&base.join(path));
    };
    let full = clean(&dir.join(path));
    let cwd = std::env::current_dir().and_then(std::fs::canonicalize);
    match cwd.as_deref().map(|c| full.strip_prefix(c)) {
        Ok(Ok(rel)) if !rel.as_os_str().is_empty() => rel.to_path_buf(),
        _ => full,
    }
}

/// Lexical clean-up: `.` dropped, `a/..` removed (a leading `..` is kept).
fn clean(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod path_tests {
    use super::*;

    #[test]
    fn clean_paths() {
        assert_eq!(clean(Path::new("configs/../out/./q")), Path::new("out/q"));
        assert_eq!(clean(Path::new("../x/../y")), Path::new("../y"));
        assert_eq!(clean(Path::new("/a/b/../../c")), Path::new("/c"));
        let cwd = std::env::current_dir().unwrap();
        let here = cwd.file_name().unwrap();
        let up = Path::new("..").join(here).join("out");
        assert_eq!(relative_to(Path::new(""), &up), Path::new("out"));
    }
}

#[cfg(test)]
mod toml_tests {
    use super::*;

    /// The config a report shows is the config that ran: it parses back to the same.
    #[test]
    fn every_shipped_config_survives_its_toml_form() {
        // The repository's configs/, two folders above this crate's.
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_none_or(|x| x != "toml") {
                continue;
            }
            let Ok(c) = ExperimentConfig::load(&path) else {
                continue; // not an experiment file
            };
            let text = c.to_toml();
            assert!(!text.starts_with("# not expressible"), "{text}");
            let back = ExperimentConfig::parse(&text, Path::new("shown.toml"))
                .unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()));
            assert_eq!(back, c, "{}", path.display());
            n += 1;
        }
        assert!(n >= 3, "{n} configs");
    }
}
