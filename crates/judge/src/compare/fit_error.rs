//! Why the judge cannot use a trace's fitted workload: the fit produced parameters
//! the FN models refuse, so no fitted bound can be computed for that trace.

use rbf_foundations::error::{Error, Kind};

/// A fit of a trace the judge cannot use.
#[derive(Debug, thiserror::Error)]
pub enum FitError {
    /// The fitted workload of trace `label` (its point estimate or a conservative
    /// one) is refused by the FN models' checks; `error` says which value.
    #[error("{label}: the fitted workload is not usable by the FN models: {error}")]
    Unusable { label: String, error: Error },
}

rbf_foundations::layer_error!(FitError => Kind::Request);
