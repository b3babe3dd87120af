//! Text tables for a workload fit.

use super::Table;
use crate::fit::Fit;

fn opt(x: Option<f64>, digits: usize) -> String {
    x.map_or("-".into(), |v| format!("{v:.digits$}"))
}

/// The fit's summary, head of Q and zeta, and the per-window table (first `max_windows`).
pub fn fit_table(fit: &Fit, max_windows: usize) -> String {
    let s = &fit.summary;
    let mut t = Table::new(["quantity", "value"]);
    t.row(["measured arrivals".to_string(), s.arrivals.to_string()]);
    t.row(["warm-up".to_string(), s.warmup.to_string()]);
    let ci = s.p_repeat_interval.map_or(String::new(), |i| {
        format!(
            "  [{:.5}, {:.5}] ({:.0}%, {} batches)",
            i.low,
            i.high,
            i.level * 100.0,
            i.samples
        )
    });
    t.row(["p_r".to_string(), format!("{:.5}{ci}", s.p_repeat)]);
    t.row([
        "distinct keys (whole trace)".to_string(),
        s.distinct_keys.to_string(),
    ]);
    t.row([
        "one-hit wonders".to_string(),
        format!("{} ({:.1}%)", s.one_hit_wonders, 100.0 * s.one_hit_share),
    ]);
    t.row([
        "fitted D (ranks of Q)".to_string(),
        s.model_distinct.to_string(),
    ]);
    t.row([
        "window W / windows".to_string(),
        format!(
            "{} / {}{}",
            s.window,
            s.windows,
            if s.partial_window { " (partial)" } else { "" }
        ),
    ]);
    t.row([
        "placement sample / censored".to_string(),
        format!("{} / {}", s.placement_sample, s.placement_censored),
    ]);
    t.row([
        "new never redrawn within W".to_string(),
        format!("{:.1}%", 100.0 * s.placement_never_redrawn),
    ]);
    if let Some(r) = &s.reuse {
        t.row([
            "reuse distance (arrivals)".to_string(),
            format!(
                "median {}, longest {}",
                r.median_distance.map_or("-".into(), |m| m.to_string()),
                r.max_distance,
            ),
        ]);
        t.row([
            "reuse profile S(n): measured to n".to_string(),
            format!(
                "{} ({} repeats, {} batches)",
                r.covered_up_to, r.repeats, r.batches
            ),
        ]);
    }
    let u = &s.uncertainty;
    let band = |i: &Option<crate::stats::Interval>| {
        i.map_or("-".into(), |i| {
            format!(
                "{:.4} [{:.4}, {:.4}] ({:.0}%)",
                i.estimate,
                i.low,
                i.high,
                i.level * 100.0
            )
        })
    };
    t.row([
        format!("Q mass, top {} ranks", crate::fit::uncertainty::HEAD_RANKS),
        band(&u.q_head_mass),
    ]);
    t.row([
        "Q mass, less popular half".to_string(),
        band(&u.q_tail_mass),
    ]);
    t.row([
        "placement: share on top 10% ranks".to_string(),
        band(&u.placement_top_share),
    ]);
    t.row([
        "placement: mean rank / D".to_string(),
        band(&u.placement_mean_rank),
    ]);
    let e = &s.successor_entropy;
    t.row([
        "successor entropy (normalised)".to_string(),
        format!(
            "{} over {} messages, {} transitions{}",
            opt(e.mean_entropy, 3),
            e.messages,
            e.transitions,
            if e.truncated { " (a prefix)" } else { "" }
        ),
    ]);
    let mut out = t.render();
    let mut note =
        |text: String| out.push_str(&super::wrap(&format!("note: {text}"), super::WIDTH, "    "));
    if e.truncated {
        note(format!(
            "the successor entropy is over a prefix of the trace: its pair cap ({}, --pair-cap) was reached",
            e.pair_cap
        ));
    }
    if let Some(n) = &s.placement_note {
        note(n.clone());
    }
    out.push('\n');
    let mut h = Table::new(["rank", "q", "zeta", "mean draws/window"]);
    let head = fit.q.len().min(10);
    for r in 0..head {
        h.row([
            r.to_string(),
            format!("{:.5}", fit.q[r]),
            format!("{:.5}", fit.zeta[r]),
            format!("{:.2}", fit.mean_counts[r]),
        ]);
    }
    let zeta_tail: f64 = fit.zeta[head..].iter().sum();
    h.row([
        format!("{head}..{}", fit.q.len()),
        format!("{:.5}", 1.0 - fit.q[..head].iter().sum::<f64>()),
        format!("{zeta_tail:.5}"),
        String::new(),
    ]);
    out.push_str(&h.render());
    out.push('\n');
    let mut w = Table::new(["window", "start", "arrivals", "p_r", "drawn", "head of Q"]);
    for x in s.per_window.iter().take(max_windows) {
        w.row([
            x.index.to_string(),
            x.start.to_string(),
            x.arrivals.to_string(),
            format!("{:.4}", x.p_repeat),
            x.drawn.to_string(),
            x.head
                .iter()
                .map(|q| format!("{q:.4}"))
                .collect::<Vec<_>>()
                .join(" "),
        ]);
    }
    out.push_str(&w.render());
    if s.per_window.len() > max_windows {
        out.push_str(&format!(
            "... {} more windows (all in --json)\n",
            s.per_window.len() - max_windows
        ));
    }
    out
}
