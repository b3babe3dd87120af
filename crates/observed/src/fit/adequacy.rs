//! Whether the fitted Q and placement reproduce the trace.
//!
//! Under the FN paper's arrival model the U_j that eq. (24) gives for (Q, zeta, p_r)
//! equals the reuse-distance survival S(j - 1) the fit measures (docs/FIT.md), so the
//! measured profile tests any fitted (Q, zeta). The Q-based methods (every Markov method
//! and drop-pins) are judged only when the test passes; the renewal rows read S itself
//! and do not depend on it.

use serde::Serialize;

use super::observables::Observable;
use rbf_data::workload::Workload;

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
    /// trace: ..." with the statistic, gap, tau and noise).
    pub fits: bool,
    /// Where the gap is: which statistic, at which time scale tau (arrivals).
    pub observable: Observable,
    pub tau: f64,
    /// The D the trace allows: every D whose best fit passes the test lies inside (the
    /// ends are the nearest D found to fail, to within a factor 2^(1/8), or the
    /// search's limits); None when the fit itself does not pass.
    pub distinct_range: Option<(usize, usize)>,
    /// Why there is no test (then `fits` is false and gap and noise are NaN).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub untested: Option<String>,
    /// Other workloads that reproduce the trace as well as the fit (the parts of Q or D
    /// the trace does not identify). The Q-based methods' spread over the fit and these
    /// is what the trace allows; empty when the fit is identified.
    #[serde(skip)]
    pub alternatives: Vec<Workload>,
}

/// The key of a workload file's provenance that carries the fit's [`QFitCheck`].
pub const PROVENANCE_KEY: &str = "q_check";

impl QFitCheck {
    /// The test recorded in a workload file that `rbf fit` wrote (its provenance's
    /// [`PROVENANCE_KEY`], or the popularity fit's `check` in files written before it
    /// was there); None for a workload given as the truth or a file without one. A
    /// record that cannot be read is a test that cannot be relied on: untested.
    pub fn recorded(w: &Workload) -> Option<QFitCheck> {
        let p = w.provenance.as_ref()?;
        let c = p
            .get(PROVENANCE_KEY)
            .or_else(|| p.get("popularity").and_then(|q| q.get("check")))
            .filter(|c| !c.is_null())?;
        let number = |key: &str| c.get(key).and_then(|v| v.as_f64()).unwrap_or(f64::NAN);
        let observable = c
            .get("observable")
            .and_then(|v| v.as_str())
            .and_then(|s| Observable::ALL.into_iter().find(|o| o.token() == s));
        let untested = c.get("untested").and_then(|v| v.as_str());
        let fits = c.get("fits").and_then(|v| v.as_bool());
        Some(match (fits, observable, untested) {
            (_, _, Some(why)) => QFitCheck::untested(why.to_string()),
            (Some(fits), Some(observable), None) => QFitCheck {
                gap: number("gap"),
                noise: number("noise"),
                fits,
                observable,
                tau: number("tau"),
                distinct_range: None,
                untested: None,
                alternatives: Vec::new(),
            },
            _ => QFitCheck::untested(format!(
                "the workload file's `provenance.{PROVENANCE_KEY}` cannot be read"
            )),
        })
    }

    /// No test could be made (`why`): the Q-based methods are not judged.
    pub fn untested(why: String) -> QFitCheck {
        QFitCheck {
            gap: f64::NAN,
            noise: f64::NAN,
            fits: false,
            observable: Observable::Reuse,
            tau: f64::NAN,
            distinct_range: None,
            untested: Some(why),
            alternatives: Vec::new(),
        }
    }

    /// A tested result with the gap at the reuse distance (for tests of what the judge
    /// and the outputs do with it).
    pub fn tested(gap: f64, noise: f64, alternatives: Vec<Workload>) -> QFitCheck {
        QFitCheck {
            gap,
            noise,
            fits: gap <= noise,
            observable: Observable::Reuse,
            tau: 300.0,
            distinct_range: None,
            untested: None,
            alternatives,
        }
    }

    /// Whether the trace pins D down to within `share` (0.1: 10 %) of the estimate
    /// `distinct`.
    pub fn identifies_distinct(&self, distinct: usize, share: f64) -> bool {
        self.distinct_range.is_some_and(|(lo, hi)| {
            let d = distinct as f64;
            lo as f64 >= d * (1.0 - share) && hi as f64 <= d * (1.0 + share)
        })
    }
}
