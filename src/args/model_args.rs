//! The FN-model flags every command that runs the FN models flattens in, declared once:
//! which methods (`compare`, `model fn`) and the models' truncation and renewal
//! tolerance (`compare`, `model fn`, `size`). The `--method` help lists
//! [`Method::ALL`], so a new method shows up without touching this file.

use clap::Args;

use rbf_foundations::error::Result;
use rbf_predicted::model::false_negative::{Method, DEFAULT_EPS};

/// `--method`.
#[derive(Args, Debug, Clone)]
pub struct MethodArgs {
    #[arg(long, default_value = "all", help = method_help())]
    pub method: String,
}

fn method_help() -> String {
    format!(
        "FN methods to run, comma-separated: {}. Methods left out are listed as not run (`fn_methods_not_run` in JSON); leave out the slow ones when D or sigma is large",
        Method::choices()
    )
}

impl MethodArgs {
    /// The methods asked for, in the order given.
    pub fn methods(&self) -> Result<Vec<Method>> {
        Method::parse_list(&self.method)
    }
}

/// `--eps` and `--tolerance`.
#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// FN models' truncation: states and arrivals with probability below EPS are dropped.
    #[arg(long, default_value_t = DEFAULT_EPS)]
    pub eps: f64,
    /// Renewal bound in the certified tolerance mode: a value V with
    /// exact <= V <= exact (1 + T) for a relative tolerance T in (0, 1) such as 1e-3,
    /// from a faster method where one is proven for the workload (else the exact
    /// engine runs, and the output says so); 0: the exact engine. Without it: the
    /// exact engine, except for one-phase sigma-bounded filters of 2^19 bits or more
    /// with a fitted reuse profile, which are certified within 1e-3.
    #[arg(long, value_name = "T")]
    pub tolerance: Option<f64>,
}
