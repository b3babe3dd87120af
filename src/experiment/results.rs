//! `results.json`: what a run computed, in the form `rbf merge` and the resume journal
//! read back: the rows, the sources, and where they came from.

use serde::{Deserialize, Serialize};

use super::grid::Shard;
use super::row::Row;
use crate::ingest::IngestSummary;

/// `results.json`: the rows and where they came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Results {
    pub format: String,
    pub name: String,
    pub description: String,
    /// Points in the whole grid (a shard holds only some of them).
    pub total_points: usize,
    pub shard: Shard,
    pub measures: Vec<String>,
    /// Confidence level of the observed intervals (the config's `confidence`): what
    /// the verdicts' chance note counts with. Results written before it was recorded
    /// used the default.
    #[serde(default = "super::config::default_confidence")]
    pub confidence: f64,
    /// The experiment file as rbf read it ([`super::ExperimentConfig::to_toml`]):
    /// shown by report.html; absent in results written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    /// Every source of the config, in order: what reading it met.
    #[serde(default)]
    pub sources: Vec<SourceInfo>,
    pub rows: Vec<Row>,
}

/// A source of the run and what reading it met.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourceInfo {
    pub name: String,
    /// What the FN models run on, in a few words (e.g. the fitted workload's D and p_r).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<String>,
    /// Caveats that hold for every row of the source (also in each row's notes).
    pub notes: Vec<String>,
    /// One line: records read and, by reason, skipped, malformed and noted, over all
    /// its files ([`IngestSummary::digest`]); None when there was nothing to say or the
    /// source was not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ingest_digest: Option<String>,
    /// The reader's summary, with each file's own (the per-file detail).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ingest: Option<IngestSummary>,
}

pub const RESULTS_FORMAT: &str = "rbf-experiment/3";
