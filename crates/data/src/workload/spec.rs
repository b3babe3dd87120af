//! A workload as the command line describes one: a file written by `rbf fit` (whose
//! p_r and placement may be overridden), or Zipf(alpha) over D ranks with p_r and a
//! placement. `rbf synth`, `rbf size` and `rbf model fn` all resolve theirs here, so
//! the three agree on what is required, what overrides what, and how a missing value
//! is named.

use std::path::PathBuf;

use super::{Placement, Workload};
use rbf_foundations::error::{Error, Problem, Result};

/// The Zipf exponent when none is given.
pub const DEFAULT_ZIPF: f64 = 1.0;

/// What the flags say; [`WorkloadSpec::resolve`] turns it into a checked [`Workload`].
#[derive(Clone, Debug, Default)]
pub struct WorkloadSpec {
    /// A workload file (JSON, as written by `rbf fit`).
    pub file: Option<PathBuf>,
    /// Zipf exponent of Q (0 = uniform); [`DEFAULT_ZIPF`] when absent.
    pub zipf: Option<f64>,
    /// D, the ranks of Q.
    pub distinct: Option<usize>,
    /// p_r: required without a file, overrides the file's with one.
    pub p_repeat: Option<f64>,
    /// Where new messages enter Q ([`Placement::parse`]): uniform when absent without a
    /// file, overrides the file's with one.
    pub placement: Option<String>,
}

impl WorkloadSpec {
    /// The workload, checked ([`Workload::validate`]).
    pub fn resolve(&self) -> Result<Workload> {
        let mut w = match &self.file {
            Some(path) => {
                if self.zipf.is_some() || self.distinct.is_some() {
                    return Err(Error::setting(
                        "workload",
                        Problem::Conflict(
                            "--workload FILE brings its own Q: leave out --zipf and --distinct"
                                .into(),
                        ),
                    ));
                }
                Workload::load(path)?
            }
            None => {
                let d = self.distinct.ok_or_else(|| {
                    Error::setting(
                        "distinct",
                        Problem::Missing("give --distinct D and --p-repeat P (and --zipf ALPHA, default 1), or --workload FILE"),
                    )
                })?;
                let p = self.p_repeat.ok_or_else(|| {
                    Error::setting(
                        "p-repeat",
                        Problem::Missing("--p-repeat P is required with --distinct"),
                    )
                })?;
                let alpha = self.zipf.unwrap_or(DEFAULT_ZIPF);
                Workload::zipf(d, alpha, p, Placement::Uniform)
            }
        };
        if let Some(p) = self.p_repeat {
            w.p_repeat = p;
        }
        if let Some(p) = &self.placement {
            w.placement = Placement::parse(p)?;
        }
        w.validate()?;
        Ok(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_resolve_one_way() {
        let spec = WorkloadSpec {
            distinct: Some(100),
            p_repeat: Some(0.9),
            placement: Some("top".into()),
            ..WorkloadSpec::default()
        };
        let w = spec.resolve().unwrap();
        assert_eq!(
            w,
            Workload::zipf(100, DEFAULT_ZIPF, 0.9, Placement::parse("top").unwrap())
        );
        let missing = WorkloadSpec {
            distinct: Some(100),
            ..WorkloadSpec::default()
        };
        let e = missing.resolve().unwrap_err().to_string();
        assert!(e.contains("p-repeat"), "{e}");
        let e = WorkloadSpec::default().resolve().unwrap_err().to_string();
        assert!(e.contains("--workload FILE"), "{e}");
        let bad = WorkloadSpec {
            distinct: Some(100),
            p_repeat: Some(1.5),
            ..WorkloadSpec::default()
        };
        assert!(bad.resolve().is_err());
    }
}
