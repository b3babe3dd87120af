//! `rbf model fn`'s text: the filter and workload, the judged methods' table, how the
//! renewal bound was computed, and the FP per arrival with the model it came from.

use super::verdicts::{claim_cell, renewal_mode_line};
use super::{rate, wrap, Table, WIDTH};
use crate::compare::model_fn::FnRun;
use crate::compare::Record;

/// The whole text of `rbf model fn` for `run`.
pub fn model_fn_text(run: &FnRun) -> String {
    let w = run.workload;
    let mut out = match run.workload_misfit() {
        Some(why) => wrap(
            &crate::report::size::misfit_warning(&why, "D and the bounds below are"),
            WIDTH,
            "    ",
        ),
        None => String::new(),
    };
    out.push_str(&format!(
        "filter: {}\nworkload: D = {}, p_r = {:.5}, placement {}\n",
        run.filter.describe(),
        w.distinct(),
        w.p_repeat,
        w.placement.describe()
    ));
    out.push_str(&table(&run.judgement.records));
    if let Some(r) = run.renewal() {
        out.push_str(&wrap(&renewal_mode_line(&r), WIDTH, "    "));
    }
    if let Some((fp, from)) = run.fp_rate() {
        out.push_str(&format!(
            "FP per arrival (FN paper's definition, {} model): {}\n",
            from.name(),
            rate(fp)
        ));
    }
    out
}

fn table(records: &[Record]) -> String {
    let mut t = Table::new(["method", "FN per arrival", "claim", "standing"]).left_aligned(&[2, 3]);
    for r in records {
        let n = t.note(&r.note);
        t.row([
            format!("{} [{n}]", r.bound.name()),
            rate(r.value),
            claim_cell(r.claim).to_string(),
            r.standing.to_string(),
        ]);
    }
    t.render()
}
