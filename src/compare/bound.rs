//! The one list of what is put next to the observed FN: every FN method of the FN
//! paper on the workload the models run on, the same methods on the workload fitted from
//! a synthetic source's own trace (fitted against true), and the renewal bound at the
//! conservative end of the fit. JSON keys, CSV/Parquet columns,
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
    /// The Markov lower bound on the workload fitted from a synthetic source's trace.
    MarkovLowerFitted,
    /// Sampling with replacement on the fitted workload.
    MarkovSwrFitted,
    /// The uniform Markov bound on the fitted workload.
    MarkovUniformFitted,
    /// The bi-uniform Markov bound on the fitted workload.
    MarkovBiuniformFitted,
    /// Drop-pins on the fitted workload.
    DropPinsFitted,
    /// The disabling recursion on the fitted workload.
    MarkovDisablingFitted,
}

impl Bound {
    /// Every bound, in the order of every output.
    pub const ALL: [Bound; 15] = [
        Bound::Renewal,
        Bound::RenewalFitted,
        Bound::RenewalConservative,
        Bound::MarkovLower,
        Bound::MarkovSwr,
        Bound::MarkovUniform,
        Bound::MarkovBiuniform,
        Bound::DropPins,
        Bound::MarkovDisabling,
        Bound::MarkovLowerFitted,
        Bound::MarkovSwrFitted,
        Bound::MarkovUniformFitted,
        Bound::MarkovBiuniformFitted,
        Bound::DropPinsFitted,
        Bound::MarkovDisablingFitted,
    ];

    /// The FN method that computes it.
    pub fn method(self) -> Method {
        match self {
            Bound::Renewal | Bound::RenewalFitted | Bound::RenewalConservative => Method::Renewal,
            Bound::MarkovLower => Method::MarkovLower,
            Bound::MarkovSwr | Bound::MarkovSwrFitted => Method::MarkovSwr,
            Bound::MarkovUniform | Bound::MarkovUniformFitted => Method::MarkovUniform,
            Bound::MarkovBiuniform | Bound::MarkovBiuniformFitted => Method::MarkovBiuniform,
            Bound::DropPins | Bound::DropPinsFitted => Method::DropPins,
            Bound::MarkovDisabling | Bound::MarkovDisablingFitted => Method::MarkovDisabling,
            Bound::MarkovLowerFitted => Method::MarkovLower,
        }
    }

    /// The workload it is evaluated on.
    pub fn on(self) -> On {
        match self {
            Bound::RenewalFitted
            | Bound::MarkovLowerFitted
            | Bound::MarkovSwrFitted
            | Bound::MarkovUniformFitted
            | Bound::MarkovBiuniformFitted
            | Bound::DropPinsFitted
            | Bound::MarkovDisablingFitted => On::FittedPoint,
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
            Bound::MarkovLowerFitted => "markov-lower-fitted",
            Bound::MarkovSwrFitted => "markov-swr-fitted",
            Bound::MarkovUniformFitted => "markov-uniform-fitted",
            Bound::MarkovBiuniformFitted => "markov-biuniform-fitted",
            Bound::DropPinsFitted => "drop-pins-fitted",
            Bound::MarkovDisablingFitted => "markov-disabling-fitted",
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
            Bound::MarkovLowerFitted => "markov_lower_fitted",
            Bound::MarkovSwrFitted => "markov_swr_fitted",
            Bound::MarkovUniformFitted => "markov_uniform_fitted",
            Bound::MarkovBiuniformFitted => "markov_biuniform_fitted",
            Bound::DropPinsFitted => "drop_pins_fitted",
            Bound::MarkovDisablingFitted => "markov_disabling_fitted",
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
            Bound::MarkovLowerFitted => "fn_markov_lower_fitted",
            Bound::MarkovSwrFitted => "fn_markov_swr_fitted",
            Bound::MarkovUniformFitted => "fn_markov_uniform_fitted",
            Bound::MarkovBiuniformFitted => "fn_markov_biuniform_fitted",
            Bound::DropPinsFitted => "fn_drop_pins_fitted",
            Bound::MarkovDisablingFitted => "fn_markov_disabling_fitted",
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
            Bound::MarkovLowerFitted => "markov lower bound, fitted",
            Bound::MarkovSwrFitted => "markov swr, fitted",
            Bound::MarkovUniformFitted => "markov uniform, fitted",
            Bound::MarkovBiuniformFitted => "markov bi-uniform, fitted",
            Bound::DropPinsFitted => "drop-pins, fitted",
            Bound::MarkovDisablingFitted => "markov disabling, fitted",
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
            Bound::MarkovLowerFitted => "lower-fit",
            Bound::MarkovSwrFitted => "swr-fit",
            Bound::MarkovUniformFitted => "unif-fit",
            Bound::MarkovBiuniformFitted => "biuni-fit",
            Bound::DropPinsFitted => "pins-fit",
            Bound::MarkovDisablingFitted => "disab-fit",
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
            Bound::MarkovLowerFitted => "#9ecae1",
            Bound::MarkovSwrFitted => "#9edae5",
            Bound::MarkovUniformFitted => "#c5b0d5",
            Bound::MarkovBiuniformFitted => "#c49c94",
            Bound::DropPinsFitted => "#ffbb78",
            Bound::MarkovDisablingFitted => "#f7b6d2",
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

    /// The bound that reports `method` on the workload fitted from a synthetic source's
    /// own trace ([`On::FittedPoint`]).
    pub fn fitted(method: Method) -> Bound {
        match method {
            Method::Renewal => Bound::RenewalFitted,
            Method::MarkovLower => Bound::MarkovLowerFitted,
            Method::MarkovSwr => Bound::MarkovSwrFitted,
            Method::MarkovUniform => Bound::MarkovUniformFitted,
            Method::MarkovBiuniform => Bound::MarkovBiuniformFitted,
            Method::DropPins => Bound::DropPinsFitted,
            Method::MarkovDisabling => Bound::MarkovDisablingFitted,
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
            assert_eq!(Bound::fitted(m).method(), m);
            assert_eq!(Bound::fitted(m).on(), On::FittedPoint);
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
