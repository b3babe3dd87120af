//! The renewal model's inputs, settings and result, shared by the exact engine
//! ([`super`]), its certified tolerance mode ([`super::certified`]) and the cycle
//! tracker ([`super::cycle`]).

use crate::model::tau::Transitions;
use rbf_data::workload::ReuseProfile;

/// Settings of the renewal computation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RenewalOptions {
    /// Stop when the probability of a still-running cycle is below this.
    pub eps: f64,
    /// Window threshold of the bit distribution (0: the exact recursion).
    pub tiny: f64,
    /// Hard limit on arrivals per cycle followed.
    pub max_arrivals: u64,
    /// Follow eq. (19) literally, one bit distribution per arrival, instead of the
    /// insertion-count decomposition (same arithmetic up to rounding and windows,
    /// several times slower; kept as the reference).
    pub direct: bool,
    /// Certified tolerance mode: a relative tolerance T in (0, 1). The result is then
    /// a value V with exact <= V <= exact (1 + T), where exact is the exact engine's
    /// value, from a faster method where one is proven for the workload
    /// ([`super::certified`], [`super::hitting`]), else from the exact engine. Some(0):
    /// the exact engine. None: the exact engine, except at filters of
    /// [`super::CERTIFIED_FROM`] bits or more where the hitting-time engine applies
    /// ([`RenewalInput::tolerance`]).
    pub tolerance: Option<f64>,
    /// Show progress with an ETA on stderr when the computation runs for more than a
    /// couple of seconds, and the expected time up front when it is over a minute (off
    /// for library callers and parallel workers).
    pub progress: bool,
}

impl Default for RenewalOptions {
    fn default() -> Self {
        RenewalOptions {
            eps: super::super::DEFAULT_EPS,
            tiny: 1e-30,
            max_arrivals: 1 << 32,
            direct: false,
            tolerance: None,
            progress: false,
        }
    }
}

/// What the renewal computation produced.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct RenewalResult {
    /// The upper bound: truncated ratio plus the window term.
    pub fn_upper: f64,
    /// The truncated ratio without the window term.
    pub fn_ratio: f64,
    /// Window term added to the ratio.
    pub window_term: f64,
    /// The FN paper's FP per arrival in the same model (sigma-cut bits, not a bound).
    pub fp_rate: f64,
    /// sum_j E[A_j]: mean arrivals per cycle (truncated).
    pub arrivals_per_cycle: f64,
    /// Arrivals followed (m).
    pub arrivals_followed: u64,
    /// Probability that a cycle outlives the arrivals followed.
    pub truncated_mass: f64,
    /// Which engine produced `fn_upper`.
    pub mode: RenewalMode,
    /// The tolerance T asked for (`RenewalOptions::tolerance`), if any.
    pub tolerance: Option<f64>,
    /// Proven: exact <= fn_upper <= exact (1 + certified_tolerance), with exact the
    /// exact engine's value; 0 for the exact engine itself. At most `tolerance`.
    pub certified_tolerance: f64,
    /// Proven: fn_lower <= exact (equal to `fn_upper` for the exact engine).
    pub fn_lower: f64,
    /// Why the exact engine ran although a tolerance was given (empty otherwise).
    pub mode_note: &'static str,
}

/// The proven relative distance V / V- - 1 of a certified value V from the exact one,
/// given a proven lower bound V- of the exact value (infinite when V- is 0 and V is not).
pub fn certified_tolerance(upper: f64, lower: f64) -> f64 {
    if lower > 0.0 {
        upper / lower - 1.0
    } else if upper > 0.0 {
        f64::INFINITY
    } else {
        0.0
    }
}

/// The engine behind a renewal result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RenewalMode {
    /// The eq. (24) recursion for every arrival (the reference).
    Exact,
    /// A certified bracket of U_j without the eq. (24) recursion
    /// ([`super::certified`]).
    Certified,
}

/// Inputs of the renewal model.
pub struct RenewalInput<'a> {
    pub t: Transitions,
    pub sigma: u64,
    /// N-bounded filter: recycle after more than N bit-setting insertions (`sigma` is
    /// then ignored). Always followed through the decomposition.
    pub max_inserts: Option<u64>,
    pub retaining: bool,
    pub phases: u8,
    pub q: &'a [f64],
    pub zeta: &'a [f64],
    pub p_r: f64,
    /// An interval of p_r: the result then bounds the ratio for every p_r in it (one
    /// phase, see [`super::cycle::Draws`]); `p_r` is ignored by the renewal recursion.
    pub p_r_interval: Option<(f64, f64)>,
    /// A measured reuse profile: U_j is read from it (U_j = S(j - 1)) instead of
    /// following eq. (24) with `q` and `zeta`.
    pub reuse: Option<&'a ReuseProfile>,
    /// The per-insertion sums, when already built for this filter (used where they
    /// match: [`super::shared::SharedBits`]).
    pub shared_bits: Option<&'a super::shared::SharedBits>,
    /// The hitting-time engine's per-insertion fields, when already built for this
    /// filter (used where they match: [`super::hitting::shared_fields`]).
    pub hitting_fields: Option<&'a super::hitting::fields::BitFields>,
}
