//! The FN models' shared vocabulary: which method ([`Method`]), what its number claims
//! ([`Claim`]) and whether that is proven here ([`Guarantee`]), and the results
//! ([`MethodResult`], [`FnReport`]). The renewal and Markov parts and the facade
//! ([`super::FnModel`]) all speak it; it depends on none of them.

use serde::Serialize;

use super::renewal::RenewalResult;
use crate::error::{Error, Result};

/// One way of computing the FN rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Renewal upper bound (§5).
    Renewal,
    /// Markov chain with the "most popular recorded" lower bound (eq. 5).
    MarkovLower,
    /// Markov chain with sampling with replacement (eq. 6).
    MarkovSwr,
    /// Markov chain with the uniform distribution (eq. 7).
    MarkovUniform,
    /// Markov chain with the tightest bi-uniform distribution (eqs. 8-9).
    MarkovBiuniform,
    /// Markov chain with the drop-pins average (eqs. 10-11).
    DropPins,
    /// Markov chain with the disabling recursion of appendix G.2.
    MarkovDisabling,
}

impl Claim {
    /// The words every text output uses ("upper bound", "lower bound", "approximation").
    pub fn label(self) -> &'static str {
        match self {
            Claim::UpperBound => "upper bound",
            Claim::LowerBound => "lower bound",
            Claim::Approximation => "approximation",
        }
    }
}

impl Method {
    pub const ALL: [Method; 7] = [
        Method::Renewal,
        Method::MarkovLower,
        Method::MarkovSwr,
        Method::MarkovUniform,
        Method::MarkovBiuniform,
        Method::DropPins,
        Method::MarkovDisabling,
    ];

    /// Whether the method reads the popularity Q (and D, the placement): every Markov
    /// method and drop-pins. The renewal bound reads only p_r and the reuse profile, so
    /// a fit for it alone skips fitting Q (docs/FIT.md).
    pub fn reads_popularity(self) -> bool {
        self != Method::Renewal
    }

    pub fn name(self) -> &'static str {
        match self {
            Method::Renewal => "renewal",
            Method::MarkovLower => "markov-lower",
            Method::MarkovSwr => "markov-swr",
            Method::MarkovUniform => "markov-uniform",
            Method::MarkovBiuniform => "markov-biuniform",
            Method::DropPins => "drop-pins",
            Method::MarkovDisabling => "markov-disabling",
        }
    }

    /// Parses a comma-separated list of method names; `all` stands for every method.
    /// Duplicates are dropped, the first occurrence keeps its place.
    pub fn parse_list(s: &str) -> Result<Vec<Method>> {
        let mut out = Vec::new();
        for name in s.split(',').map(str::trim) {
            if name == "all" {
                out.extend(Method::ALL);
            } else {
                out.push(Method::parse(name)?);
            }
        }
        let mut seen = std::collections::HashSet::new();
        out.retain(|m| seen.insert(*m));
        Ok(out)
    }

    /// Parses a method name; `all` is handled by the caller.
    pub fn parse(name: &str) -> Result<Method> {
        Method::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Method::ALL.iter().map(|m| m.name()).collect();
                Error::config(
                    "method",
                    format!(
                        "unknown method `{name}`; allowed: all, {}",
                        names.join(", ")
                    ),
                )
            })
    }
}

/// What a method's number claims to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Claim {
    UpperBound,
    LowerBound,
    Approximation,
}

/// A method's claim for this filter and workload, and whether it is proven to hold.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Guarantee {
    pub claim: Claim,
    /// The claim is proven for this variant and workload (under the FN paper's arrival
    /// model). False means "not proven", not "false".
    pub guaranteed: bool,
    pub note: String,
}

/// One method's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MethodResult {
    pub method: Method,
    pub fn_rate: f64,
    /// The chain's (or renewal model's) FP per arrival.
    pub fp_rate: f64,
    pub guarantee: Guarantee,
    pub seconds: f64,
}

/// Results of [`super::FnModel::evaluate`].
#[derive(Clone, Debug, Serialize)]
pub struct FnReport {
    pub results: Vec<MethodResult>,
    /// Details of the renewal computation, when it ran.
    pub renewal: Option<RenewalResult>,
    /// States kept by the Markov truncation, when a Markov method ran.
    pub markov_states: Option<usize>,
}

impl FnReport {
    pub fn get(&self, method: Method) -> Option<&MethodResult> {
        self.results.iter().find(|r| r.method == method)
    }

    /// The FN paper's FP per arrival: from the renewal model when it ran, else from the
    /// first Markov chain.
    pub fn fp_rate(&self) -> Option<(f64, Method)> {
        self.get(Method::Renewal)
            .or_else(|| self.results.first())
            .map(|r| (r.fp_rate, r.method))
    }
}
