//! Whether the fitted Q and placement reproduce the trace (issue 27).
//!
//! Under the FN paper's arrival model the U_j that eq. (24) gives for (Q, zeta, p_r)
//! equals the reuse-distance survival S(j - 1) the fit measures (docs/FIT.md), so the
//! measured profile tests any fitted (Q, zeta). The Q-based methods (every Markov method
//! and drop-pins) are judged only when the test passes; the renewal rows read S itself
//! and do not depend on it.

use serde::Serialize;

use super::observables::Observable;
use crate::workload::Workload;

/// The goodness-of-fit of a fitted (Q, zeta) against the measured reuse profile, and
/// the workloads the trace cannot tell apart from it.
#[derive(Clone, Debug, Serialize)]
pub struct QFitCheck {
    /// The largest |U_j(model) - S(j - 1)| over the checked j.
    pub gap: f64,
    /// The largest gap that sampling noise alone explains at the fit's confidence level.
    pub noise: f64,
    /// gap <= noise: the fitted (Q, zeta) reproduce the trace within its noise. When
    /// false, the Q-based rows are reported but not judged ("the model does not fit this
    /// trace: reuse-profile gap X").
    pub fits: bool,
    /// Where the gap is: which statistic, at which time scale tau (arrivals).
    pub observable: Observable,
    pub tau: f64,
    /// The smallest and largest D whose best fit also passes the test (None when the
    /// fit itself does not pass).
    pub distinct_range: Option<(usize, usize)>,
    /// Other workloads that reproduce the trace as well as the fit (the parts of Q or D
    /// the trace does not identify). The Q-based methods' spread over the fit and these
    /// is what the trace allows; empty when the fit is identified.
    #[serde(skip)]
    pub alternatives: Vec<Workload>,
}
