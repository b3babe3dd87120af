//! The TOML experiment file: what to run (sources), over which filters (the grid),
//! and which numbers to put side by side (measures).
//!
//! ```toml
//! name = "quickstart"
//! output = "../out/quickstart"   # relative paths are relative to this file
//! seeds = [1, 2]                 # filter hashing (and synthetic traces) per seed
//! measures = ["observed", "fp-model", "renewal", "drop-pins"]
//!
//! [[trace]]                      # a real trace, read as `rbf replay` reads it
//! path = "../traces/cdn/tragen-100k.csv.zst"
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

use crate::error::{Error, Result};
use crate::filter::Hashing;
use crate::ingest::packet::key::FlowKeyKind;
use crate::ingest::Format;
use crate::model::fneg::Method;
use crate::workload::Placement;

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
    /// Confidence level of observed intervals.
    #[serde(default = "default_confidence")]
    pub confidence: f64,
    #[serde(default, rename = "trace")]
    pub traces: Vec<TraceSource>,
    #[serde(default, rename = "synthetic")]
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
    1e-10
}
fn default_confidence() -> f64 {
    0.99
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

/// A trace file as a source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSource {
    /// Label in tables and plots (default: the file name).
    #[serde(default)]
    pub name: Option<String>,
    pub path: PathBuf,
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
fn default_prefix_v6() -> u8 {
    48
}
fn default_window() -> u64 {
    crate::fit::DEFAULT_WINDOW
}

/// A synthetic workload from the FN paper's arrival model (§3.1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
}

fn default_placement() -> String {
    "uniform".into()
}

/// The filter grid: every list is an axis, the grid is their cross product.
/// Exactly one of `sigma`, `sigma_fraction`, `target_fp`, `max_inserts` is given.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GridConfig {
    /// M in bits.
    pub memory: Vec<u64>,
    /// k.
    pub hashes: Vec<u32>,
    /// Absolute sigma values (bits set per array before a recycle).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sigma: Vec<u64>,
    /// sigma as a fraction of the bits per array (M, or M/2 for two phases).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sigma_fraction: Vec<f64>,
    /// sigma chosen from the FP model: the largest whose average FP meets the target.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub target_fp: Vec<f64>,
    /// N-bounded filters: recycle after N bit-setting insertions per array.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub max_inserts: Vec<u64>,
    #[serde(default = "default_phases")]
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
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        ExperimentConfig::parse(&text, path)
    }

    /// Parses `text` (read from `path`, used for messages and relative paths).
    pub fn parse(text: &str, path: &Path) -> Result<ExperimentConfig> {
        let mut c: ExperimentConfig = toml::from_str(text).map_err(|e| {
            Error::invalid(format!("{}: {}", path.display(), e.to_string().trim_end()))
        })?;
        let base = path.parent().unwrap_or(Path::new(""));
        c.output = relative_to(base, &c.output);
        for t in &mut c.traces {
            t.path = relative_to(base, &t.path);
        }
        c.validate()
            .map_err(|e| Error::invalid(format!("{}: {e}", path.display())))?;
        Ok(c)
    }

    /// Checks what serde cannot: non-empty axes, ranges, exactly one sigma rule.
    pub fn validate(&self) -> Result<()> {
        let needs_data = self
            .measures
            .iter()
            .any(|m| *m == Measure::Observed || m.fn_method().is_some());
        if needs_data && self.traces.is_empty() && self.synthetic.is_empty() {
            return Err(Error::config(
                "trace / synthetic",
                "`observed` and the FN measures need a workload: give at least one [[trace]] or [[synthetic]] source",
            ));
        }
        if self.seeds.is_empty() {
            return Err(Error::config("seeds", "give at least one seed"));
        }
        if self.measures.is_empty() {
            return Err(Error::config(
                "measures",
                format!("give at least one of: {}", Measure::allowed()),
            ));
        }
        if !(self.eps > 0.0 && self.eps < 1.0) {
            return Err(Error::config("eps", "must lie strictly between 0 and 1"));
        }
        if !(self.confidence > 0.0 && self.confidence < 1.0) {
            return Err(Error::config(
                "confidence",
                "must lie strictly between 0 and 1",
            ));
        }
        for s in &self.synthetic {
            Placement::parse(&s.placement).map_err(|_| {
                Error::config(
                    "synthetic.placement",
                    format!(
                        "unknown placement `{}`; allowed: uniform, top, bottom",
                        s.placement
                    ),
                )
            })?;
            if !(0.0..=1.0).contains(&s.p_repeat) {
                return Err(Error::config("synthetic.p_repeat", "must lie in [0, 1]"));
            }
            if s.distinct == 0 || s.arrivals == 0 {
                return Err(Error::config(
                    "synthetic.distinct / synthetic.arrivals",
                    "must be positive",
                ));
            }
        }
        self.grid.validate(&self.measures)
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
    fn validate(&self, measures: &[Measure]) -> Result<()> {
        let axes: [(&str, bool); 6] = [
            ("grid.memory", self.memory.is_empty()),
            ("grid.hashes", self.hashes.is_empty()),
            ("grid.phases", self.phases.is_empty()),
            ("grid.hashing", self.hashing.is_empty()),
            ("grid.retaining", self.retaining.is_empty()),
            ("grid.copy_over", self.copy_over.is_empty()),
        ];
        if let Some((key, _)) = axes.iter().find(|(_, empty)| *empty) {
            return Err(Error::config(
                *key,
                "the list is empty: give at least one value",
            ));
        }
        let rules = [
            !self.sigma.is_empty(),
            !self.sigma_fraction.is_empty(),
            !self.target_fp.is_empty(),
            !self.max_inserts.is_empty(),
        ];
        if rules.iter().filter(|r| **r).count() != 1 {
            return Err(Error::config(
                "grid.sigma",
                "give exactly one of: sigma, sigma_fraction, target_fp, max_inserts",
            ));
        }
        if let Some(p) = self.phases.iter().find(|p| !matches!(p, 1 | 2)) {
            return Err(Error::config(
                "grid.phases",
                format!("allowed values are 1 and 2, found {p}"),
            ));
        }
        if let Some(f) = self
            .sigma_fraction
            .iter()
            .find(|f| !(**f > 0.0 && **f < 1.0))
        {
            return Err(Error::config(
                "grid.sigma_fraction",
                format!("must lie strictly between 0 and 1, found {f}"),
            ));
        }
        if let Some(f) = self.target_fp.iter().find(|f| !(**f > 0.0 && **f < 1.0)) {
            return Err(Error::config(
                "grid.target_fp",
                format!("must lie strictly between 0 and 1, found {f}"),
            ));
        }
        if measures.contains(&Measure::Capacity) && self.target_fp.is_empty() {
            return Err(Error::config(
                "measures",
                "`capacity` sizes a filter for a target FP: give grid.target_fp",
            ));
        }
        Ok(())
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
