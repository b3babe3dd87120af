//! `rbf model fp`: the FP paper's average false-positive rate for one filter.

use rbf_foundations::error::Result;
use rbf_judge::report::{rate, Table};
use rbf_predicted::model::false_positive::{predict, FpPrediction};

use crate::args::filter_args::FilterArgs;

#[derive(clap::Args, Debug)]
pub struct FpArgs {
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Print a JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: FpArgs, io: &mut crate::args::io::Io) -> Result<()> {
    let p = predict(&a.filter.config()?)?;
    if a.json {
        return io.json(&p);
    }
    rbf_foundations::out!("{}", render(&p));
    Ok(())
}

fn render(p: &FpPrediction) -> String {
    let mut t = Table::new(["quantity", "value"]);
    if let Some(s) = &p.sigma {
        if p.filter.phases == 2 {
            let how = if p.filter.copy_over {
                "f_sigma^2 (eq. 26)"
            } else {
                "f_sigma^2 (no copy-over, renewal-reward)"
            };
            t.row([how.to_string(), rate(s.fp_sigma)]);
            t.row(["active half f_sigma^1".to_string(), rate(s.fp_active)]);
            t.row(["frozen half mean rho".to_string(), rate(s.fp_frozen)]);
        } else {
            t.row(["f_sigma^1 (eq. 18)".to_string(), rate(s.fp_sigma)]);
        }
        t.row([
            "E[N_0] messages per cycle".to_string(),
            format!("{:.3}", s.expected_messages_per_cycle),
        ]);
        t.row([
            "bit-setting messages per cycle".to_string(),
            format!("{:.3}", s.expected_bit_setting_per_cycle),
        ]);
    }
    if let Some(n) = &p.n_bounded {
        t.row(["f_w worst case (eq. 1)".to_string(), rate(n.fp_worst_case)]);
        t.row(["f_o oracle (eq. 2)".to_string(), rate(n.fp_oracle)]);
        t.row([
            "f_a real user, lower bound (eq. 3)".to_string(),
            rate(n.fp_actual_lower_bound),
        ]);
        t.row([
            "messages per cycle (f_a model)".to_string(),
            format!("{:.3}", n.expected_messages_per_cycle),
        ]);
    }
    for n in &p.notes {
        t.note(n);
    }
    format!("filter: {}\n{}", p.description, t.render())
}
