//! The one list of what is put next to the observed FN: every FN method of the FN
//! paper on the workload the models run on, the same methods on the workload fitted from
//! a synthetic source's own trace (fitted against true), and the renewal bound at the
//! conservative end of the fit. JSON keys, CSV/Parquet columns,
//! table rows and columns, plot series and verdict summaries are all generated from
//! [`Bound::ALL`], itself derived from the methods' table
//! ([`rbf_predicted::model::false_negative::METHODS`]): a new method is one entry there and its
//! computation in [`rbf_predicted::model::false_negative::FnModel`].

use std::sync::OnceLock;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use rbf_predicted::model::false_negative::{Claim, Look, Method, Reads, METHODS};

/// Which workload a bound is evaluated on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EvaluatedOn {
    /// The workload the FN models run on: a synthetic source's true workload, or the
    /// workload fitted from a trace.
    Model,
    /// The workload fitted from a synthetic source's own trace (point estimate), next to
    /// the bound on its true workload; on a trace it would repeat [`EvaluatedOn::Model`], so it is
    /// not computed there.
    FittedPoint,
    /// The workloads at the conservative end of the fit's uncertainty (the largest bound
    /// over them, [`rbf_observed::fit::Fit::conservative_workloads`]).
    Conservative,
}

/// A number put next to the observed FN per arrival: a method on a workload. Its
/// names, keys, labels and colours come from the method's entry
/// ([`rbf_predicted::model::false_negative::METHODS`]) and the workload it is evaluated on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bound {
    method: Method,
    on: EvaluatedOn,
}

/// How many bounds there are: every method on the model and on the fitted point, and
/// those with a conservative end on it.
const COUNT: usize = {
    let mut n = 0;
    let mut i = 0;
    while i < METHODS.len() {
        n += if METHODS[i].on_conservative.is_some() {
            3
        } else if matches!(METHODS[i].reads, Reads::Trace) {
            1
        } else {
            2
        };
        i += 1;
    }
    n
};

/// The names derived once ([`Bound::name`], [`Bound::key`], [`Bound::value_key`]), by
/// position in [`Bound::ALL`].
struct Names {
    name: String,
    key: String,
    value_key: String,
}

fn names() -> &'static [Names] {
    static NAMES: OnceLock<Vec<Names>> = OnceLock::new();
    NAMES.get_or_init(|| {
        Bound::ALL
            .iter()
            .map(|b| {
                let entry = b.method.entry();
                let name = match b.on {
                    EvaluatedOn::Model => entry.name.to_string(),
                    EvaluatedOn::FittedPoint => format!("{}-fitted", entry.name),
                    EvaluatedOn::Conservative => format!("{}-conservative", entry.name),
                };
                let key = name.replace('-', "_");
                let value_key = match b.on {
                    EvaluatedOn::Model => entry.value_key.to_string(),
                    _ => format!("fn_{key}"),
                };
                Names {
                    name,
                    key,
                    value_key,
                }
            })
            .collect()
    })
}

impl Bound {
    /// Every bound, in the order of every output: the methods that read the reuse
    /// profile on every workload (the renewal rows), then the methods that read Q on
    /// the model, then on the fitted point; within each, in [`METHODS`] order.
    pub const ALL: [Bound; COUNT] = {
        let mut all = [Bound {
            method: Method::Renewal,
            on: EvaluatedOn::Model,
        }; COUNT];
        let mut n = 0;
        let mut pass = 0;
        while pass < 3 {
            let mut i = 0;
            while i < METHODS.len() {
                let e = &METHODS[i];
                let profile = matches!(e.reads, Reads::ReuseProfile);
                let ons: [Option<EvaluatedOn>; 3] = match (pass, profile) {
                    (0, true) => [
                        Some(EvaluatedOn::Model),
                        Some(EvaluatedOn::FittedPoint),
                        if e.on_conservative.is_some() {
                            Some(EvaluatedOn::Conservative)
                        } else {
                            None
                        },
                    ],
                    (0, false) if matches!(e.reads, Reads::Trace) => {
                        [Some(EvaluatedOn::Model), None, None]
                    }
                    (1, false) if !matches!(e.reads, Reads::Trace) => {
                        [Some(EvaluatedOn::Model), None, None]
                    }
                    (2, false) if !matches!(e.reads, Reads::Trace) => {
                        [Some(EvaluatedOn::FittedPoint), None, None]
                    }
                    _ => [None, None, None],
                };
                let mut j = 0;
                while j < 3 {
                    if let Some(on) = ons[j] {
                        all[n] = Bound {
                            method: e.method,
                            on,
                        };
                        n += 1;
                    }
                    j += 1;
                }
                i += 1;
            }
            pass += 1;
        }
        assert!(n == COUNT);
        all
    };

    /// The bound that reports `method` on the model workload.
    pub const fn of(method: Method) -> Bound {
        Bound {
            method,
            on: EvaluatedOn::Model,
        }
    }

    /// The bound that reports `method` on the workload fitted from a synthetic source's
    /// own trace ([`EvaluatedOn::FittedPoint`]).
    pub const fn fitted(method: Method) -> Bound {
        Bound {
            method,
            on: EvaluatedOn::FittedPoint,
        }
    }

    /// The renewal bound at the conservative end of the fit's uncertainty.
    pub const fn conservative() -> Bound {
        Bound {
            method: Method::Renewal,
            on: EvaluatedOn::Conservative,
        }
    }

    /// The FN method that computes it.
    pub fn method(self) -> Method {
        self.method
    }

    /// The workload it is evaluated on.
    pub fn on(self) -> EvaluatedOn {
        self.on
    }

    /// Its place in [`Bound::ALL`] (and so in every output).
    fn position(self) -> usize {
        Bound::ALL
            .iter()
            .position(|b| *b == self)
            .expect("every Bound is built from Bound::ALL's constructors")
    }

    /// What its number claims to be (the same for every filter and workload; whether
    /// the claim is proven is the record's standing).
    pub fn claim(self) -> Claim {
        self.method.claim()
    }

    /// The methods that read the popularity Q (every Markov method and drop-pins): they
    /// are judged only where the fitted Q reproduces the trace
    /// ([`rbf_observed::fit::adequacy::QFitCheck`]). The renewal rows read the reuse profile.
    pub fn reads_q(self) -> bool {
        self.method.reads_popularity()
    }

    /// Its name in JSON (`"bound"`) and on the command line: "renewal",
    /// "renewal-conservative", "markov-lower", "markov-lower-fitted", ...
    pub fn name(self) -> &'static str {
        &names()[self.position()].name
    }

    /// The stem of its CSV columns (`{key}_verdict_steady`, `{key}_standing`, ...): the
    /// name with underscores.
    pub fn key(self) -> &'static str {
        &names()[self.position()].key
    }

    /// Its value's key in JSON and CSV: FN per arrival.
    pub fn value_key(self) -> &'static str {
        &names()[self.position()].value_key
    }

    fn look(self) -> Look {
        let entry = self.method.entry();
        match self.on {
            EvaluatedOn::Model => entry.on_model,
            EvaluatedOn::FittedPoint => entry.on_fitted,
            EvaluatedOn::Conservative => entry
                .on_conservative
                .expect("a conservative Bound exists only for methods that have one"),
        }
    }

    /// For people: table rows, plot legends, summaries.
    pub fn label(self) -> &'static str {
        self.look().label
    }

    /// A column header of at most 9 characters.
    pub fn short(self) -> &'static str {
        self.look().short
    }

    /// Its colour in every chart.
    pub fn color(self) -> &'static str {
        self.look().color
    }

    /// Whether it is judged against the observed interval (bounds are; approximations
    /// are not).
    pub fn gets_verdict(self) -> bool {
        self.claim() != Claim::Approximation
    }
}

impl PartialOrd for Bound {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// In [`Bound::ALL`] order.
impl Ord for Bound {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.position().cmp(&other.position())
    }
}

impl Serialize for Bound {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Bound {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Bound, D::Error> {
        let name = String::deserialize(d)?;
        Bound::ALL
            .into_iter()
            .find(|b| b.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Bound::ALL.iter().map(|b| b.name()).collect();
                serde::de::Error::custom(format!(
                    "unknown bound `{name}`; allowed: {}",
                    names.join(", ")
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_has_its_bound_and_names_are_unique() {
        for m in Method::ALL {
            assert_eq!(Bound::of(m).method(), m);
            assert_eq!(Bound::of(m).on(), EvaluatedOn::Model);
            assert_eq!(Bound::fitted(m).method(), m);
            assert_eq!(Bound::fitted(m).on(), EvaluatedOn::FittedPoint);
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
        let json = serde_json::to_string(&Bound::conservative()).unwrap();
        assert_eq!(json, format!("\"{}\"", Bound::conservative().name()));
    }

    /// The derived names are the ones every output has always used (results files of
    /// earlier runs are read back by `rbf merge`).
    #[test]
    fn derived_names_are_the_published_ones() {
        let got: Vec<String> = Bound::ALL
            .iter()
            .map(|b| {
                format!(
                    "{} {} {} | {} | {} | {}",
                    b.name(),
                    b.key(),
                    b.value_key(),
                    b.label(),
                    b.short(),
                    b.color()
                )
            })
            .collect();
        let want = [
            "renewal renewal fn_renewal_upper | renewal upper bound | renewal | #d62728",
            "renewal-fitted renewal_fitted fn_renewal_fitted | renewal, fitted point estimate | fitted | #f4a582",
            "renewal-conservative renewal_conservative fn_renewal_conservative | renewal, conservative end of the fit | conserv. | #67001f",
            "renewal-trace renewal_trace fn_renewal_trace | renewal bound on the trace's own recycles | trace | #2ca02c",
            "markov-lower markov_lower fn_markov_lower | markov lower bound | mk-lower | #1f77b4",
            "markov-swr markov_swr fn_markov_swr | markov swr | mk-swr | #17becf",
            "markov-uniform markov_uniform fn_markov_uniform | markov uniform | mk-unif. | #9467bd",
            "markov-biuniform markov_biuniform fn_markov_biuniform | markov bi-uniform | mk-biunif | #8c564b",
            "drop-pins drop_pins fn_drop_pins | drop-pins | drop-pins | #ff7f0e",
            "markov-disabling markov_disabling fn_markov_disabling | markov disabling | mk-disabl | #e377c2",
            "markov-lower-fitted markov_lower_fitted fn_markov_lower_fitted | markov lower bound, fitted | lower-fit | #9ecae1",
            "markov-swr-fitted markov_swr_fitted fn_markov_swr_fitted | markov swr, fitted | swr-fit | #9edae5",
            "markov-uniform-fitted markov_uniform_fitted fn_markov_uniform_fitted | markov uniform, fitted | unif-fit | #c5b0d5",
            "markov-biuniform-fitted markov_biuniform_fitted fn_markov_biuniform_fitted | markov bi-uniform, fitted | biuni-fit | #c49c94",
            "drop-pins-fitted drop_pins_fitted fn_drop_pins_fitted | drop-pins, fitted | pins-fit | #ffbb78",
            "markov-disabling-fitted markov_disabling_fitted fn_markov_disabling_fitted | markov disabling, fitted | disab-fit | #f7b6d2",
        ];
        assert_eq!(got, want);
        let mut sorted = Bound::ALL.to_vec();
        sorted.reverse();
        sorted.sort();
        assert_eq!(sorted, Bound::ALL.to_vec());
        for b in Bound::ALL {
            let json = serde_json::to_string(&b).unwrap();
            assert_eq!(serde_json::from_str::<Bound>(&json).unwrap(), b);
        }
        assert!(serde_json::from_str::<Bound>("\"markov-nothing\"").is_err());
    }
}
