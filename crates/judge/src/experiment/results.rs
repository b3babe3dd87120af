//! `results.json`: what a run computed, in the form `rbf merge` and the resume journal
//! read back: the rows, the sources, and where they came from.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::config::ExperimentConfig;
use super::grid::Shard;
use super::results_error::ResultsError;
use super::row::Row;
use rbf_data::ingest::IngestSummary;
use rbf_foundations::error::{Error, Result};

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
    /// What the run computed from ([`RunFingerprint`]): `rbf merge` combines only
    /// shards whose fingerprints agree. Absent in results written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<RunFingerprint>,
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

/// The identity of a run's computation: its normalised config and its inputs. Two
/// shards are parts of one run only when these agree; where the outputs went, the
/// shard and the thread count are not part of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunFingerprint {
    /// XXH3-128 (hex) of the config in TOML form, without `output` and with every trace
    /// path made absolute and canonical (so the working directory does not matter).
    pub config: String,
    /// Every trace file, in the order read.
    pub inputs: Vec<InputIdentity>,
}

/// A trace file as a fingerprint knows it: its path, size and the digest of its whole
/// content, taken while the run read it ([`rbf_data::ingest::digest`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputIdentity {
    pub path: PathBuf,
    pub bytes: u64,
    /// XXH3-128 (hex) of the whole file; absent where this run did not read it (a
    /// shard with no point of its source) and in results of an rbf that sampled the
    /// file's ends instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

impl RunFingerprint {
    /// The fingerprint of a run of `config`, its inputs' digests not yet known (see
    /// [`RunFingerprint::take_digests`]): nothing is read.
    pub fn of(config: &ExperimentConfig) -> Result<RunFingerprint> {
        let mut normal = config.clone();
        normal.output = PathBuf::new();
        let mut inputs = Vec::new();
        for t in &mut normal.traces {
            for f in super::source::trace_files(t)? {
                inputs.push(InputIdentity::of(&f)?);
            }
            t.path.canonicalize();
        }
        let hash = xxhash_rust::xxh3::xxh3_128(normal.to_toml().as_bytes());
        Ok(RunFingerprint {
            config: format!("{hash:032x}"),
            inputs,
        })
    }

    /// Fills in the digest of every input this process read to its end (or verified
    /// against a journal); an input whose size is no longer the one the run started
    /// with is an error naming it.
    pub fn take_digests(&mut self) -> Result<()> {
        for i in &mut self.inputs {
            let Some(d) = rbf_data::ingest::digest::recorded(&i.path) else {
                continue;
            };
            if d.bytes != i.bytes {
                return Err(ResultsError::InputChanged {
                    path: i.path.clone(),
                    before: i.bytes,
                    after: d.bytes,
                }
                .into());
            }
            i.digest = Some(d.hex());
        }
        Ok(())
    }
}

impl InputIdentity {
    fn of(path: &Path) -> Result<InputIdentity> {
        let bytes = std::fs::metadata(path)
            .map_err(|e| Error::io(path, e))?
            .len();
        Ok(InputIdentity {
            path: path.to_path_buf(),
            bytes,
            digest: None,
        })
    }
}

pub const RESULTS_FORMAT: &str = "rbf-experiment/3";
