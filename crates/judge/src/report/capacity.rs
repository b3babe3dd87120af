//! `rbf model capacity`'s text: each k's largest sigma and capacities, then each
//! model's best k.

use super::{rate, Table};
use rbf_predicted::model::false_positive::Capacity;

/// `rbf model capacity`'s text: the per-k table, then the best k of each model.
pub fn capacity_text(c: &Capacity, retaining: bool) -> String {
    format!(
        "M = {} bits, target average FP = {} (count-instance), {}\n{}\n{}",
        c.memory,
        c.target_fp,
        if retaining {
            "retaining"
        } else {
            "non-retaining"
        },
        per_k_table(c).render(),
        best_table(c).render()
    )
}

/// Each k's largest sigma and capacities.
fn per_k_table(c: &Capacity) -> Table {
    let mut t = Table::new([
        "k",
        "sigma",
        "f_sigma^1",
        "capacity sigma",
        "2-phase sigma",
        "capacity 2-phase",
        "capacity f_a",
        "capacity f_w",
    ]);
    let cell = |x: Option<u64>| x.map_or("-".to_string(), |v| v.to_string());
    for k in &c.per_k {
        t.row([
            k.k.to_string(),
            cell(k.one_phase.map(|s| s.sigma)),
            k.one_phase.map_or("-".to_string(), |s| rate(s.fp)),
            k.one_phase
                .map_or("-".to_string(), |s| format!("{:.1}", s.messages_per_cycle)),
            cell(k.two_phase.map(|s| s.sigma)),
            k.two_phase
                .map_or("-".to_string(), |s| format!("{:.1}", s.messages_per_cycle)),
            format!("{:.1}", k.capacity_fa),
            k.capacity_fw.to_string(),
        ]);
    }
    t.note(
        "sigma: set bits per array at which the filter recycles; f_sigma^1: the FP paper's \
         average FP rate (count-instance) at that sigma; capacity: expected messages per \
         cycle (two-phase: per half of M/2 bits); f_a, f_w: N-bounded sizing by the \
         real-user and worst-case rates",
    );
    t
}

/// Each model's best k and capacity, against the one-phase sigma-bounded one.
fn best_table(c: &Capacity) -> Table {
    let mut s = Table::new(["model", "best k", "messages per cycle", "vs sigma-bounded"]);
    s.row([
        "sigma-bounded, one phase".to_string(),
        c.best_k.to_string(),
        format!("{:.1}", c.capacity_sigma),
        "1".to_string(),
    ]);
    s.row([
        "sigma-bounded, two phases".to_string(),
        c.best_k_two_phase.to_string(),
        format!("{:.1}", c.capacity_two_phase),
        format!("{:.3}", ratio(c.capacity_two_phase, c.capacity_sigma)),
    ]);
    s.row([
        "f_a (N-bounded, real user)".to_string(),
        c.best_k_fa.to_string(),
        format!("{:.1}", c.capacity_fa),
        format!("{:.3}", c.ratio_fa),
    ]);
    s.row([
        "f_w (worst case)".to_string(),
        c.best_k_fw.to_string(),
        format!("{:.1}", c.capacity_fw),
        format!("{:.3}", c.ratio_fw),
    ]);
    s
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}
