//! The FN models' shared vocabulary: which method ([`Method`]), what its number claims
//! ([`Claim`]) and whether that is proven here ([`Guarantee`]), and the results
//! ([`MethodResult`], [`FnReport`]). The renewal and Markov parts and the facade
//! ([`super::FnModel`]) all speak it; it depends on none of them.

use serde::Serialize;

use super::renewal::RenewalResult;
use rbf_foundations::error::{Error, Problem, Result};

/// One way of computing the FN rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Renewal upper bound (§5).
    Renewal,
    /// The renewal argument on a trace's own recycles (`rbf_observed::trace_renewal`): needs
    /// the trace, not a workload.
    RenewalTrace,
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

/// What a method's source reads from the workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reads {
    /// p_r and the reuse profile (U_j) only.
    ReuseProfile,
    /// The popularity Q, D and the placement as well.
    Popularity,
    /// The trace itself (its arrivals in order), not a workload.
    Trace,
}

/// How a number is shown: a label for people, a column header of at most 9
/// characters, and a chart colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Look {
    pub label: &'static str,
    pub short: &'static str,
    pub color: &'static str,
}

/// Everything the outputs need to know of one method, in one place. Adding a method
/// is a variant of [`Method`], one entry of [`METHODS`] and its computation in
/// [`super::FnModel`]; every JSON key, CSV column, table row, plot series and `--method`
/// help text is derived from the entry (`compare::Bound` for the keys).
#[derive(Clone, Copy, Debug)]
pub struct MethodEntry {
    pub method: Method,
    /// Its name on the command line and in JSON: "renewal", "markov-lower", ...
    pub name: &'static str,
    /// What its number claims to be, for every filter and workload (whether the claim
    /// is proven for a given one is [`Guarantee::guaranteed`]).
    pub claim: Claim,
    pub reads: Reads,
    /// Its value's JSON/CSV key on the workload the models run on (the fitted and
    /// conservative ones are derived from [`MethodEntry::name`]).
    pub value_key: &'static str,
    /// Shown on the workload the models run on, on the workload fitted from a
    /// synthetic source's own trace, and at the conservative end of the fit (only
    /// where the method has one).
    pub on_model: Look,
    pub on_fitted: Look,
    pub on_conservative: Option<Look>,
}

const fn look(label: &'static str, short: &'static str, color: &'static str) -> Look {
    Look {
        label,
        short,
        color,
    }
}

/// Every method, in the order of every output.
pub const METHODS: [MethodEntry; 8] = [
    MethodEntry {
        method: Method::Renewal,
        name: "renewal",
        claim: Claim::UpperBound,
        reads: Reads::ReuseProfile,
        value_key: "fn_renewal_upper",
        on_model: look("renewal upper bound", "renewal", "#d62728"),
        on_fitted: look("renewal, fitted point estimate", "fitted", "#f4a582"),
        on_conservative: Some(look(
            "renewal, conservative end of the fit",
            "conserv.",
            "#67001f",
        )),
    },
    MethodEntry {
        method: Method::RenewalTrace,
        name: "renewal-trace",
        claim: Claim::UpperBound,
        reads: Reads::Trace,
        value_key: "fn_renewal_trace",
        on_model: look(
            "renewal bound on the trace's own recycles",
            "trace",
            "#2ca02c",
        ),
        on_fitted: look(
            "renewal bound on the trace's own recycles",
            "trace",
            "#2ca02c",
        ),
        on_conservative: None,
    },
    MethodEntry {
        method: Method::MarkovLower,
        name: "markov-lower",
        claim: Claim::LowerBound,
        reads: Reads::Popularity,
        value_key: "fn_markov_lower",
        on_model: look("markov lower bound", "mk-lower", "#1f77b4"),
        on_fitted: look("markov lower bound, fitted", "lower-fit", "#9ecae1"),
        on_conservative: None,
    },
    MethodEntry {
        method: Method::MarkovSwr,
        name: "markov-swr",
        claim: Claim::UpperBound,
        reads: Reads::Popularity,
        value_key: "fn_markov_swr",
        on_model: look("markov swr", "mk-swr", "#17becf"),
        on_fitted: look("markov swr, fitted", "swr-fit", "#9edae5"),
        on_conservative: None,
    },
    MethodEntry {
        method: Method::MarkovUniform,
        name: "markov-uniform",
        claim: Claim::UpperBound,
        reads: Reads::Popularity,
        value_key: "fn_markov_uniform",
        on_model: look("markov uniform", "mk-unif.", "#9467bd"),
        on_fitted: look("markov uniform, fitted", "unif-fit", "#c5b0d5"),
        on_conservative: None,
    },
    MethodEntry {
        method: Method::MarkovBiuniform,
        name: "markov-biuniform",
        claim: Claim::UpperBound,
        reads: Reads::Popularity,
        value_key: "fn_markov_biuniform",
        on_model: look("markov bi-uniform", "mk-biunif", "#8c564b"),
        on_fitted: look("markov bi-uniform, fitted", "biuni-fit", "#c49c94"),
        on_conservative: None,
    },
    MethodEntry {
        method: Method::DropPins,
        name: "drop-pins",
        claim: Claim::Approximation,
        reads: Reads::Popularity,
        value_key: "fn_drop_pins",
        on_model: look("drop-pins", "drop-pins", "#ff7f0e"),
        on_fitted: look("drop-pins, fitted", "pins-fit", "#ffbb78"),
        on_conservative: None,
    },
    MethodEntry {
        method: Method::MarkovDisabling,
        name: "markov-disabling",
        claim: Claim::Approximation,
        reads: Reads::Popularity,
        value_key: "fn_markov_disabling",
        on_model: look("markov disabling", "mk-disabl", "#e377c2"),
        on_fitted: look("markov disabling, fitted", "disab-fit", "#f7b6d2"),
        on_conservative: None,
    },
];

impl Method {
    /// Every method, in [`METHODS`] order.
    pub const ALL: [Method; METHODS.len()] = {
        let mut all = [Method::Renewal; METHODS.len()];
        let mut i = 0;
        while i < METHODS.len() {
            all[i] = METHODS[i].method;
            i += 1;
        }
        all
    };

    /// Its entry of [`METHODS`] (the variants are declared in the table's order: a
    /// unit test checks it).
    pub const fn entry(self) -> &'static MethodEntry {
        &METHODS[self as usize]
    }

    /// Whether the method reads the popularity Q (and D, the placement): every Markov
    /// method and drop-pins. The renewal bound reads only p_r and the reuse profile, so
    /// a fit for it alone skips fitting Q (docs/FIT.md).
    pub const fn reads_popularity(self) -> bool {
        matches!(self.entry().reads, Reads::Popularity)
    }

    /// Whether the method reads the trace itself (its arrivals in order): it has a
    /// value only where a trace is read, never on a workload alone.
    pub const fn reads_trace(self) -> bool {
        matches!(self.entry().reads, Reads::Trace)
    }

    pub const fn name(self) -> &'static str {
        self.entry().name
    }

    /// What its number claims to be (the same for every filter and workload).
    pub const fn claim(self) -> Claim {
        self.entry().claim
    }

    /// The names `--method` accepts, for help texts and errors: "all, renewal, ...".
    pub fn choices() -> String {
        let names: Vec<&str> = Method::ALL.iter().map(|m| m.name()).collect();
        format!("all, {}", names.join(", "))
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
                Error::setting(
                    "method",
                    Problem::Unknown {
                        what: "method",
                        found: name.to_string(),
                        allowed: Method::choices().into(),
                    },
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Each variant's successor in declaration order. The match is exhaustive, so a new
    /// variant stops this test compiling until it is placed here; the walk then fails
    /// until [`METHODS`] has its entry at the same place. What else a new method
    /// touches: its computation in `FnModel::evaluate` and its guarantee in
    /// `FnModel::variant_guarantee` (both matches stop compiling too). Its names, JSON
    /// and CSV keys, table rows, plot series and `--method` help come from the entry.
    fn next(m: Method) -> Option<Method> {
        match m {
            Method::Renewal => Some(Method::RenewalTrace),
            Method::RenewalTrace => Some(Method::MarkovLower),
            Method::MarkovLower => Some(Method::MarkovSwr),
            Method::MarkovSwr => Some(Method::MarkovUniform),
            Method::MarkovUniform => Some(Method::MarkovBiuniform),
            Method::MarkovBiuniform => Some(Method::DropPins),
            Method::DropPins => Some(Method::MarkovDisabling),
            Method::MarkovDisabling => None,
        }
    }

    #[test]
    fn a_new_method_is_one_entry_of_the_table() {
        let mut declared = vec![Method::Renewal];
        while let Some(m) = next(*declared.last().unwrap()) {
            declared.push(m);
        }
        assert_eq!(declared, Method::ALL.to_vec());
        for (i, m) in declared.iter().enumerate() {
            assert_eq!(*m as usize, i, "variants in table order");
            assert_eq!(METHODS[i].method, *m);
            assert_eq!(Method::parse(m.name()).unwrap(), *m);
        }
        assert!(Method::choices().starts_with("all, renewal, renewal-trace, markov-lower"));
    }
}
