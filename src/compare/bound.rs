//! The one list of what is put next to the observed FN: every FN method of the FN
//! paper on the workload the models run on, and the renewal bound on the fitted
//! workload and at the conservative end of the fit. JSON keys, CSV/Parquet columns,
//! table rows and columns, plot series and verdict summaries are all generated from
//! [`Bound::ALL`]: a new bound is one more variant here and its computation in
//! [`mod@super::judge`].

use serde::{Deserialize, Serialize};

use crate::model::fneg::{Claim, Method};

/// Which workload a bound is evaluated on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum On {
    /// The workload the FN models run on: a synthetic source's true workload, or the
    /// workload fitted from a trace.
    Model,
    /// The workload fitted from a synthetic source's own trace (point estimate), next to
    /// the bound on its true workload; on a trace it would repeat [`On::Model`], so it is
    /// not computed there.
    FittedPoint,
    /// The workloads at the conservative end of the fit's uncertainty (the largest bound
    /// over them, [`crate::fit::Fit::conservative_workloads`]).
    Conservative,
}

/// A number put next to the observed FN per arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Bound {
    /// The renewal upper bound (FN paper §5).
    Renewal,
    /// The renewal bound on the workload fitted from a synthetic source's trace.
    RenewalFitted,
    /// The renewal bound at the conservative end of the fit's uncertainty.
    RenewalConservative,
    /// The Markov chain with the "most popular recorded" lower bound (eq. 5).
    MarkovLower,
    /// The Markov chain with sampling with replacement (eq. 6).
    MarkovSwr,
    /// The Markov chain with the uniform distribution (eq. 7).
    MarkovUniform,
    /// The Markov chain with the tightest bi-uniform distribution (eqs. 8-9).
    MarkovBiuniform,
    /// The drop-pins approximation (eqs. 10-11).
    DropPins,
    /// The Markov chain with the disabling recursion (appendix G.2).
    MarkovDisabling,
}

impl Bound {
    /// Every bound, in the order of every output.
    pub const ALL: [Bound; 9] = [
        Bound::Renewal,
        Bound::RenewalFitted,
        Bound::RenewalConservative,
        Bound::MarkovLower,
        Bound::MarkovSwr,
        Bound::MarkovUniform,
        Bound::MarkovBiuniform,
        Bound::DropPins,
        Bound::MarkovDisabling,
    ];

    /// The FN method that computes it.
    pub fn method(self) -> Method {
        match self {
            Bound::Renewal | Bound::RenewalFitted | Bound::RenewalConservative => Method::Renewal,
            Bound::MarkovLower => Method::MarkovLower,
            Bound::MarkovSwr => Method::MarkovSwr,
            Bound::MarkovUniform => Method::MarkovUniform,
            Bound::MarkovBiuniform => Method::MarkovBiuniform,
            Bound::DropPins => Method::DropPins,
            Bound::MarkovDisabling => Method::MarkovDisabling,
        }
    }

    /// The workload it is evaluated on.
    pub fn on(self) -> On {
        match self {
            Bound::RenewalFitted => On::FittedPoint,
            Bound::RenewalConservative => On::Conservative,
            _ => On::Model,
        }
    }

    /// What its number claims to be (the same for every filter and workload; whether
    /// the claim is proven is the record's standing).
    pub fn claim(self) -> Claim {
        match self.method() {
            Method::Renewal
            | Method::MarkovSwr
            | Method::MarkovUniform
            | Method::MarkovBiuniform => Claim::UpperBound,
            Method::MarkovLower => Claim::LowerBound,
            Method::DropPins | Method::MarkovDisabling => Claim::Approximation,
        }
    }

    /// The methods that read the popularity Q (every Markov method and drop-pins): they
    /// are judged only where the fitted Q reproduces the trace
    /// ([`crate::fit::adequacy::QFitCheck`]). The renewal rows read the reuse profile.
    pub fn reads_q(self) -> bool {
        self.method() != Method::Renewal
    }

    /// Its name in JSON (`"bound"`) and on the command line: "renewal",
    /// "renewal-conservative", "markov-lower", ...
    pub fn name(self) -> &'static str {
        match self {
            Bound::RenewalFitted => "renewal-fitted",
            Bound::RenewalConservative => "renewal-conservative",
            b => b.method().name(),
        }
    }

    /// The stem of its CSV columns (`{key}_verdict_steady`, `{key}_standing`, ...).
    pub fn key(self) -> &'static str {
        match self {
            Bound::Renewal => "renewal",
            Bound::RenewalFitted => "renewal_fitted",
            Bound::RenewalConservative => "renewal_conservative",
            Bound::MarkovLower => "markov_lower",
            Bound::MarkovSwr => "markov_swr",
            Bound::MarkovUniform => "markov_uniform",
            Bound::MarkovBiuniform => "markov_biuniform",
            Bound::DropPins => "drop_pins",
            Bound::MarkovDisabling => "markov_disabling",
        }
    }

    /// Its value's key in JSON and CSV: FN per arrival.
    pub fn value_key(self) -> &'static str {
        match self {
            Bound::Renewal => "fn_renewal_upper",
            Bound::RenewalFitted => "fn_renewal_fitted",
            Bound::RenewalConservative => "fn_renewal_conservative",
            Bound::MarkovLower => "fn_markov_lower",
            Bound::MarkovSwr => "fn_markov_swr",
            Bound::MarkovUniform => "fn_markov_uniform",
            Bound::MarkovBiuniform => "fn_markov_biuniform",
            Bound::DropPins => "fn_drop_pins",
            Bound::MarkovDisabling => "fn_markov_disabling",
        }
    }

    /// For people: table rows, plot legends, summaries.
    pub fn label(self) -> &'static str {
        match self {
            Bound::Renewal => "renewal upper bound",
            Bound::RenewalFitted => "renewal, fitted point estimate",
            Bound::RenewalConservative => "renewal, conservative end of the fit",
            Bound::MarkovLower => "markov lower bound",
            Bound::MarkovSwr => "markov swr",
            Bound::MarkovUniform => "markov uniform",
            Bound::MarkovBiuniform => "markov bi-uniform",
            Bound::DropPins => "drop-pins",
            Bound::MarkovDisabling => "markov disabling",
        }
    }

    /// A column header of at most 9 characters.
    pub fn short(self) -> &'static str {
        match self {
            Bound::Renewal => "renewal",
            Bound::RenewalFitted => "fitted",
            Bound::RenewalConservative => "conserv.",
            Bound::MarkovLower => "mk-lower",
            Bound::MarkovSwr => "mk-swr",
            Bound::MarkovUniform => "mk-unif.",
            Bound::MarkovBiuniform => "mk-biunif",
            Bound::DropPins => "drop-pins",
            Bound::MarkovDisabling => "mk-disabl",
        }
    }

    /// Its colour in every chart.
    pub fn color(self) -> &'static str {
        match self {
            Bound::Renewal => "#d62728",
            Bound::RenewalFitted => "#f4a582",
            Bound::RenewalConservative => "#67001f",
            Bound::MarkovLower => "#1f77b4",
            Bound::MarkovSwr => "#17becf",
            Bound::MarkovUniform => "#9467bd",
            Bound::MarkovBiuniform => "#8c564b",
            Bound::DropPins => "#ff7f0e",
            Bound::MarkovDisabling => "#e377c2",
        }
    }

    /// The bound that reports `method` on the model workload.
    pub fn of(method: Method) -> Bound {
        match method {
            Method::Renewal => Bound::Renewal,
            Method::MarkovLower => Bound::MarkovLower,
            Method::MarkovSwr => Bound::MarkovSwr,
            Method::MarkovUniform => Bound::MarkovUniform,
            Method::MarkovBiuniform => Bound::MarkovBiuniform,
            Method::DropPins => Bound::DropPins,
            Method::MarkovDisabling => Bound::MarkovDisabling,
        }
    }

    /// Whether it is judged against the observed interval (bounds are; approximations
    /// are not).
    pub fn judged(self) -> bool {
        self.claim() != Claim::Approximation
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_has_its_bound_and_names_are_unique() {
        for m in Method::ALL {
            assert_eq!(Bound::of(m).method(), m);
            assert_eq!(Bound::of(m).on(), On::Model);
        }
        for f in [
            Bound::name,
            Bound::key,
            Bound::value_key,
            Bound::label,
            Bound::short,
        ] {
            let mut names: Vec<&str> = Bound::ALL.iter().map(|b| f(*b)).collect();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), Bound::ALL.len());
        }
        assert!(Bound::ALL.iter().all(|b| b.short().len() <= 9));
        let json = serde_json::to_string(&Bound::RenewalConservative).unwrap();
        assert_eq!(json, format!("\"{}\"", Bound::RenewalConservative.name()));
    }
}
