//! The coverage study's TOML file: the cells (a synthetic workload and a filter each),
//! how many seeds per cell, and how long the replays behind each cell's truth are.
//!
//! ```toml
//! name = "coverage"
//! level = 0.99          # the intervals checked are rbf's intervals at this level
//! seeds = 200           # seeds 1..=200 per cell: a new trace and new hash positions each
//! truth_traces = 4      # independent long traces behind each cell's truth ...
//! truth_hash_seeds = 8  # ... each replayed with this many hash seeds ...
//! truth_length = 25     # ... and this many times a seed's arrivals long
//!
//! [[cell]]
//! name = "bottom-corner"
//! distinct = 1000
//! zipf = 1.0
//! p_repeat = 0.9
//! placement = "bottom"
//! arrivals = 2000000    # after the prologue; the warm-up is D + arrivals / 10
//! memory = 32000
//! hashes = 4
//! sigma = 8299          # or target_fp = 1e-3 (sigma from the FP model)
//! phases = 1            # two phases use independent halves and copy-over
//! ```

use std::path::Path;

use serde::{Deserialize, Serialize};

use rbf_data::workload::Placement;
use rbf_foundations::error::{Error, Problem, Result};

/// A whole coverage-study file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoverageConfig {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Output directory, relative to the file (default: ../docs/NAME).
    #[serde(default)]
    pub output: Option<std::path::PathBuf>,
    /// Confidence level of the intervals whose coverage is measured.
    #[serde(default = "default_level")]
    pub level: f64,
    /// Seeds 1..=seeds per cell (0: only the truth, e.g. to settle a bound).
    pub seeds: u64,
    /// Independent traces behind a cell's truth.
    #[serde(default = "default_truth_traces")]
    pub truth_traces: u64,
    /// Hash seeds each truth trace is replayed with (the truth averages over hash
    /// positions, as the models do).
    #[serde(default = "default_truth_hash_seeds")]
    pub truth_hash_seeds: u64,
    /// A truth trace's length, in multiples of a seed's `arrivals`.
    #[serde(default = "default_truth_length")]
    pub truth_length: u64,
    #[serde(rename = "cell")]
    pub cells: Vec<CellConfig>,
}

fn default_level() -> f64 {
    0.99
}
fn default_truth_traces() -> u64 {
    4
}
fn default_truth_hash_seeds() -> u64 {
    8
}
fn default_truth_length() -> u64 {
    25
}
fn one() -> u8 {
    1
}

/// One cell: a workload of the FN paper's arrival model and one filter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellConfig {
    pub name: String,
    pub distinct: usize,
    pub zipf: f64,
    pub p_repeat: f64,
    pub placement: String,
    /// Arrivals per seed after the prologue.
    pub arrivals: u64,
    /// Arrivals not counted (default: the prologue D plus a tenth of `arrivals`).
    #[serde(default)]
    pub warmup: Option<u64>,
    pub memory: u64,
    pub hashes: u32,
    #[serde(default)]
    pub sigma: Option<u64>,
    #[serde(default)]
    pub target_fp: Option<f64>,
    #[serde(default = "one")]
    pub phases: u8,
    /// Hash seeds per truth trace for this cell (default: the study's). How many units
    /// there are, not what a record means: left out of the serialised form (the
    /// records' fingerprint), so that changing it keeps the records.
    #[serde(default, skip_serializing)]
    pub truth_hash_seeds: Option<u64>,
    /// Also replay each truth trace once through a filter that draws new hash
    /// positions at every recycle ([`rbf_data::filter::Positions::PerCycle`]): the process
    /// the models describe. Left out of the serialised form, as `truth_hash_seeds`.
    /// Implied by `per_cycle_seeds`.
    #[serde(default, skip_serializing)]
    pub salted: bool,
    /// Seeds (1, 2, ...) also replayed through filters with per-cycle positions, whose
    /// intervals are judged against the per-cycle truth (the salted long replays):
    /// does an interval over per-cycle filters cover what the models describe where
    /// fixed filters' skewed spread between hash positions defeats it? Left out of the
    /// serialised form, as `truth_hash_seeds`.
    #[serde(default, skip_serializing)]
    pub per_cycle_seeds: Option<u64>,
    /// Seeds whose observed replay runs, when more than the study's `seeds`: a cell
    /// whose replays are cheap measures its observed intervals' coverage more precisely
    /// (a share near 99 % is known to +-1.4 % from 200 seeds, +-0.6 % from 1 000), while
    /// the fits, the costly part, run for the study's seeds. Left out of the serialised
    /// form, as `truth_hash_seeds`: it says how many records there are, not what one means.
    #[serde(default, skip_serializing)]
    pub observed_seeds: Option<u64>,
}

impl CellConfig {
    /// Seeds whose observed replay runs (validated to be at least the study's).
    pub fn observed_seeds(&self, study: u64) -> u64 {
        self.observed_seeds.unwrap_or(study).max(study)
    }

    /// Seeds replayed with per-cycle positions.
    pub fn per_cycle_seeds(&self) -> u64 {
        self.per_cycle_seeds.unwrap_or(0)
    }

    /// Whether the truth traces are also replayed with per-cycle positions.
    pub fn salted(&self) -> bool {
        self.salted || self.per_cycle_seeds() > 0
    }

    /// Hash seeds per truth trace.
    pub fn truth_hash_seeds(&self, study: u64) -> u64 {
        self.truth_hash_seeds.unwrap_or(study).max(1)
    }

    pub fn warmup(&self) -> u64 {
        self.warmup
            .unwrap_or(self.distinct as u64 + self.arrivals / 10)
    }

    fn validate(&self) -> Result<()> {
        let key = |k: &str| format!("cell `{}`: {k}", self.name);
        if self.arrivals == 0 {
            return Err(Error::setting(
                key("arrivals"),
                Problem::rule("must be at least 1"),
            ));
        }
        if self.sigma.is_some() == self.target_fp.is_some() {
            return Err(Error::setting(
                key("sigma"),
                Problem::Conflict("give exactly one of sigma and target_fp".into()),
            ));
        }
        // The parser's error names `placement`: the same problem, under the cell's key.
        Placement::parse(&self.placement).map_err(|e| match e {
            Error::Setting(s) => Error::Setting(s.renamed(key("placement"))),
            other => other,
        })?;
        Ok(())
    }
}

impl CoverageConfig {
    pub fn load(path: &Path) -> Result<CoverageConfig> {
        let text = rbf_data::ingest::input::read_text(path)?;
        let c: CoverageConfig =
            toml::from_str(&text).map_err(|e| rbf_judge::experiment::ConfigError::Unreadable {
                path: path.to_path_buf(),
                message: rbf_foundations::error::clip_lines(&e.to_string()),
            })?;
        c.validate()?;
        Ok(c)
    }

    pub fn validate(&self) -> Result<()> {
        if !(self.level > 0.0 && self.level < 1.0) {
            return Err(Error::setting(
                "level",
                Problem::range("must lie in (0, 1)", self.level),
            ));
        }
        for (key, v) in [
            ("truth_traces", self.truth_traces),
            ("truth_hash_seeds", self.truth_hash_seeds),
            ("truth_length", self.truth_length),
        ] {
            if v == 0 {
                return Err(Error::setting(key, Problem::rule("must be at least 1")));
            }
        }
        if self.cells.is_empty() {
            return Err(Error::setting(
                "cell",
                Problem::Empty("the study needs at least one [[cell]]"),
            ));
        }
        for (i, c) in self.cells.iter().enumerate() {
            c.validate()?;
            if c.observed_seeds.is_some_and(|n| n < self.seeds) {
                return Err(Error::setting(
                    format!("cell `{}`: observed_seeds", c.name),
                    Problem::rule(format!(
                        "must be at least the study's seeds ({}): every seed's fit is \
                         judged beside its replay",
                        self.seeds
                    )),
                ));
            }
            if self.cells[..i].iter().any(|o| o.name == c.name) {
                // A name given twice, in the study's own words (Duplicate's
                // sentence would change the message).
                return Err(Error::setting(
                    "cell",
                    Problem::Other(format!("two cells are named `{}`", c.name)),
                ));
            }
        }
        Ok(())
    }
}
