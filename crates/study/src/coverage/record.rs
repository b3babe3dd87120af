//! What one unit of the study leaves behind: a JSON line per seed of a cell, or per
//! long replay behind a cell's truth. The summary is computed from these lines alone,
//! so shards and interrupted runs combine by concatenation.

use serde::{Deserialize, Serialize};

use rbf_foundations::stats::Interval;
use rbf_observed::replay::CycleSums;

/// One line of a records file.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Record {
    Observed(ObservedRecord),
    Fitted(FitRecord),
    Truth(TruthRecord),
}

/// What a record is, for its fingerprint: each kind has its own method version, so a
/// change to the fit's intervals keeps the replays' records and the other way round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Observed,
    /// Observed with per-cycle positions.
    PerCycle,
    Fitted,
    Truth,
}

impl Record {
    pub fn cell(&self) -> &str {
        match self {
            Record::Observed(s) => &s.cell,
            Record::Fitted(s) => &s.cell,
            Record::Truth(t) => &t.cell,
        }
    }

    pub fn fingerprint(&self) -> &str {
        match self {
            Record::Observed(s) => &s.fingerprint,
            Record::Fitted(s) => &s.fingerprint,
            Record::Truth(t) => &t.fingerprint,
        }
    }

    pub fn kind(&self) -> Kind {
        match self {
            Record::Observed(s) if s.per_cycle => Kind::PerCycle,
            Record::Observed(_) => Kind::Observed,
            Record::Fitted(_) => Kind::Fitted,
            Record::Truth(_) => Kind::Truth,
        }
    }

    /// The unit's key within its cell (what, seed or truth trace, hash seed).
    pub fn key(&self) -> (u8, u64, u64) {
        match self {
            Record::Observed(s) => (if s.per_cycle { 4 } else { 0 }, s.seed, 0),
            Record::Fitted(s) => (3, s.seed, 0),
            Record::Truth(t) => (if t.salted { 2 } else { 1 }, t.trace, t.hash),
        }
    }
}

/// The observed rates rbf printed for one seed (a new trace and new hash positions).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ObservedRecord {
    pub cell: String,
    pub fingerprint: String,
    pub seed: u64,
    /// The filters drew new positions at every recycle
    /// ([`rbf_data::filter::Positions::PerCycle`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub per_cycle: bool,
    /// Measured arrivals and complete cycles (of the first hash seed's filter).
    pub arrivals: u64,
    pub cycles: u64,
    /// The observed FN and FP count-instance, point and interval, from the first 1, 2,
    /// 4, ... hash seeds' filters (rbf prints [`rbf_observed::replay::DEFAULT_HASH_SEEDS`]).
    pub variants: Vec<Variant>,
    /// FN over every measured arrival of the first filter (partial cycles included).
    pub fn_all_arrivals: f64,
    pub seconds: f64,
}

/// What the fit of one seed's trace printed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FitRecord {
    pub cell: String,
    pub fingerprint: String,
    pub seed: u64,
    /// The fit's p_r interval.
    pub p_repeat: Option<Interval>,
    /// The fit's pointwise interval of S at its median knot.
    pub s_median: Option<KnotInterval>,
    /// The upper reuse profile against the true S at every knot.
    pub band: BandCheck,
    /// The renewal bound from the fitted workload: point estimate and conservative end.
    pub fitted_bound: Option<f64>,
    pub conservative_bound: Option<f64>,
    /// The renewal bound of the true workload (the same for every seed of the cell).
    pub true_bound: f64,
    /// The workload's p_r (the truth of the p_r interval).
    pub true_p_repeat: f64,
    pub seconds: f64,
}

/// A rate as rbf prints it: the point judged and its interval (the record's form of
/// [`rbf_judge::compare::Observed`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Observed {
    pub estimate: f64,
    pub interval: Option<rbf_foundations::stats::Interval>,
}

impl From<rbf_judge::compare::Observed> for Observed {
    fn from(o: rbf_judge::compare::Observed) -> Self {
        Observed {
            estimate: o.rate,
            interval: o.interval,
        }
    }
}

/// The observed intervals from a given number of hash seeds.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Variant {
    pub hash_seeds: u64,
    pub fn_rate: Observed,
    pub fp_count_instance: Observed,
}

/// A pointwise interval of S at knot n.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct KnotInterval {
    pub n: u64,
    pub interval: Interval,
    /// The true S(n).
    pub truth: f64,
}

/// The upper reuse profile against the true S.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct BandCheck {
    /// Knots checked (those within the true S computed).
    pub knots: u64,
    /// Knots where the upper profile is below the true S.
    pub misses: u64,
    /// The first such knot.
    pub first_miss: Option<u64>,
    /// The largest shortfall S(n) - upper(n) (negative when covered everywhere).
    pub worst_shortfall: f64,
}

impl BandCheck {
    /// The band covers S at every knot at once.
    pub fn covers(&self) -> bool {
        self.misses == 0
    }
}

/// One long replay behind a cell's truth.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TruthRecord {
    pub cell: String,
    pub fingerprint: String,
    /// The filter drew new hash positions at every recycle
    /// ([`rbf_data::filter::Positions::PerCycle`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub salted: bool,
    /// Which long trace and which hash seed.
    pub trace: u64,
    pub hash: u64,
    pub arrivals: u64,
    pub cycles: u64,
    /// FN and FP count-instance over the complete cycles, with the number of
    /// arrivals and first-in-cycle arrivals they rest on.
    pub fn_rate: f64,
    pub fp_count_instance: f64,
    pub fn_all_arrivals: f64,
    /// The complete cycles by time batch (`batch_arrivals` measured arrivals each), for
    /// the truth's own interval (hash seeds x batches within a trace).
    pub batch_arrivals: u64,
    pub batches: Vec<CycleSums>,
    /// The renewal bound of the true workload.
    pub true_bound: f64,
    pub seconds: f64,
}
