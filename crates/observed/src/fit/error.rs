//! What the fit refuses: a trace with nothing to estimate from, and a request whose
//! two outputs are one file.

use std::path::PathBuf;

/// A fit that cannot be made as asked. Of kind `Request`: the trace is readable, but
/// the request (its warm-up, its outputs) or the trace chosen gives the fit nothing
/// to stand on.
#[derive(Debug, thiserror::Error)]
pub enum FitError {
    /// Every arrival fell within the warm-up: no arrival is measured, so neither
    /// p_r nor Q has a sample.
    #[error(
        "nothing to fit: the trace has {arrivals} arrivals, all within the warm-up of {warmup}"
    )]
    AllInWarmup {
        /// Arrivals in the trace.
        arrivals: u64,
        /// The warm-up asked for, in arrivals.
        warmup: u64,
    },

    /// No measured arrival repeats a key: p_r = 0, and Q, a distribution over
    /// repeats, has no sample.
    #[error(
        "no key was seen twice among the {arrivals} measured arrivals: the repeat distribution Q cannot be estimated (p_r = 0)"
    )]
    NoRepeat {
        /// Arrivals measured (after the warm-up).
        arrivals: u64,
    },

    /// The workload file and the rank table name one file (one path, two spellings
    /// of it, a link): the second written would replace the first.
    #[error(
        "the workload file (`-o {}`) and the rank table (`--table {}`) are one file: the table would replace the workload; give them different names",
        workload.display(),
        table.display()
    )]
    OneFileForBoth {
        /// The workload file, as given.
        workload: PathBuf,
        /// The rank table, as given.
        table: PathBuf,
    },
}

rbf_foundations::layer_error!(FitError => rbf_foundations::error::Kind::Request);

#[cfg(test)]
mod tests {
    use super::*;
    use rbf_foundations::error::{exit_status, Error};

    #[test]
    fn a_refused_fit_reads_as_before_and_exits_as_a_request() {
        let e: Error = FitError::AllInWarmup {
            arrivals: 10,
            warmup: 100,
        }
        .into();
        assert_eq!(
            e.to_string(),
            "nothing to fit: the trace has 10 arrivals, all within the warm-up of 100"
        );
        assert_eq!(e.exit_status(), exit_status::USAGE);
        assert!(matches!(
            e.layer::<FitError>(),
            Some(FitError::AllInWarmup { warmup: 100, .. })
        ));
    }
}
