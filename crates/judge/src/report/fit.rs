//! Text tables for a workload fit.

use super::Table;
use rbf_observed::fit::Fit;

fn opt(x: Option<f64>, digits: usize) -> String {
    x.map_or("-".into(), |v| format!("{v:.digits$}"))
}

/// The fit's summary, head of Q and zeta, and the per-window table (first `max_windows`).
pub fn fit_table(fit: &Fit, max_windows: usize) -> String {
    let mut out = summary_table(fit);
    out.push('\n');
    out.push_str(&head_table(fit));
    out.push('\n');
    out.push_str(&windows_table(fit, max_windows));
    out
}

/// The fit's summary as (quantity, value) rows, and a note when the successor entropy
/// covers only a prefix.
fn summary_table(fit: &Fit) -> String {
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
    for (k, v) in reuse_rows(fit).into_iter().chain(popularity_rows(fit)) {
        t.row([k.to_string(), v]);
    }
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
    if e.truncated {
        let text = format!(
            "the successor entropy is over a prefix of the trace: its pair cap ({}, --pair-cap) was reached",
            e.pair_cap
        );
        out.push_str(&super::wrap(&format!("note: {text}"), super::WIDTH, "    "));
    }
    out
}

/// The reuse distances' rows, when the fit measured them.
fn reuse_rows(fit: &Fit) -> Vec<(&'static str, String)> {
    let Some(r) = &fit.summary.reuse else {
        return Vec::new();
    };
    vec![
        (
            "reuse distance (arrivals)",
            format!(
                "median {}, longest {}",
                r.median_distance.map_or("-".into(), |m| m.to_string()),
                r.max_distance,
            ),
        ),
        (
            "reuse profile S(n): measured to n",
            format!(
                "{} ({} repeats, {} batches)",
                r.covered_up_to, r.repeats, r.batches
            ),
        ),
    ]
}

/// The ten most popular ranks' q and zeta, then the rest summed.
fn head_table(fit: &Fit) -> String {
    let mut h = Table::new(["rank", "q", "zeta"]);
    let head = fit.q.len().min(10);
    for r in 0..head {
        h.row([
            r.to_string(),
            format!("{:.5}", fit.q[r]),
            format!("{:.5}", fit.zeta[r]),
        ]);
    }
    let zeta_tail: f64 = fit.zeta[head..].iter().sum();
    h.row([
        format!("{head}..{}", fit.q.len()),
        format!("{:.5}", 1.0 - fit.q[..head].iter().sum::<f64>()),
        format!("{zeta_tail:.5}"),
    ]);
    h.render()
}

/// The first `max_windows` fit windows, and how many more the JSON holds.
fn windows_table(fit: &Fit, max_windows: usize) -> String {
    let s = &fit.summary;
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
    let mut out = w.render();
    if s.per_window.len() > max_windows {
        out.push_str(&format!(
            "... {} more windows (all in --json)\n",
            s.per_window.len() - max_windows
        ));
    }
    out
}

/// The fit of Q, D and the placement, and its test, as (quantity, value) rows.
pub fn popularity_rows(fit: &Fit) -> Vec<(&'static str, String)> {
    let s = &fit.summary;
    let mut rows = Vec::new();
    let Some(p) = &s.popularity else {
        rows.push(("fitted D (ranks of Q)", fit.distinct_label()));
        if let Some(why) = fit.q_check.as_ref().and_then(|c| c.untested.clone()) {
            rows.push(("Q, D, placement", format!("not tested: {why}")));
        }
        return rows;
    };
    let c = &p.check;
    let allowed = match c.distinct_range {
        Some((lo, hi)) if c.identifies_distinct(p.distinct, IDENTIFIED) => {
            format!(" (trace allows {lo}-{hi})")
        }
        Some((lo, hi)) => format!(" (NOT identified: {lo}-{hi})"),
        None => String::new(),
    };
    let distinct = if c.fits {
        format!("{}{allowed}", p.distinct)
    } else {
        // Not an estimate: the closest member of a family the trace rejects.
        format!(
            "none (the model does not fit this trace; closest: {} ranks)",
            p.distinct
        )
    };
    rows.push(("fitted D (ranks of Q)", distinct));
    let shown = p
        .exponents
        .iter()
        .take(decades(p.distinct))
        .map(|a| format!("{a:.3}"))
        .collect::<Vec<_>>()
        .join(" ");
    // A rejected fit's Q and placement are the closest member's, not the trace's.
    let caveat = if c.fits { "" } else { " (rejected fit)" };
    rows.push((
        "Q: Zipf exponent per rank decade",
        format!("{shown}{caveat}"),
    ));
    rows.push((
        "placement: top, bottom, segments",
        format!(
            "{:.3}, {:.3}, {}{caveat}",
            p.placement_top,
            p.placement_bottom,
            p.placement_segments
                .iter()
                .map(|w| format!("{w:.3}"))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    ));
    rows.push(("goodness of fit", goodness(c)));
    rows
}

/// D is called identified when the range the trace allows is within this share of it.
pub const IDENTIFIED: f64 = 0.1;

/// Decades of rank that D reaches (1 to 9: one, 10 to 99: two, ...).
fn decades(distinct: usize) -> usize {
    ((distinct.max(1) as f64).log10().floor() as usize + 1).max(1)
}

/// "fits: gap 2.8e-5 (noise 1.3e-4), age at tau 1.5".
pub fn goodness(c: &rbf_observed::fit::adequacy::QFitCheck) -> String {
    if let Some(why) = &c.untested {
        return format!("not tested: {why}");
    }
    format!(
        "{}: gap {:.1e} (noise {:.1e}), {} at tau {}",
        if c.fits { "fits" } else { "DOES NOT FIT" },
        c.gap,
        c.noise,
        c.observable.short(),
        scale(c.tau),
    )
}

/// A time scale in arrivals: "1", "40", "2.5e4".
fn scale(tau: f64) -> String {
    if tau < 1e3 {
        format!("{tau:.0}")
    } else {
        format!("{tau:.1e}")
    }
}
