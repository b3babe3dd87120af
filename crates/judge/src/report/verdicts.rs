//! Verdicts: judged bounds ([`crate::compare::Record`]) in words: the cells, marks and summary
//! lines every command prints, so that `rbf compare`, `rbf run`, `rbf size` and the
//! report say the same thing the same way.

use std::collections::BTreeMap;

use super::{rate, sci};
use crate::compare::verdict::{Check, Side};
use crate::compare::{Bound, BoundVerdict, Record, Regime, Standing};
use rbf_predicted::model::false_negative::{Claim, RenewalMode, RenewalResult};

/// A fraction as a percentage with enough digits to be non-zero.
pub fn percent(e: f64) -> String {
    if e < 0.01 {
        format!("{:.2} %", 100.0 * e)
    } else {
        format!("{:.1} %", 100.0 * e)
    }
}

/// "observed 9.704e-2 is 0.11 % above the bound 9.693e-2" (or "21.8 times the
/// bound"), or None when the point estimate is on the limit's side. `what` names the
/// limit ("the bound", "the target").
pub fn beyond(check: &Check, what: &str) -> Option<String> {
    let e = check.excess()?;
    let dir = match check.side {
        Side::AtMost => "above",
        Side::AtLeast => "below",
    };
    let how = if !e.is_finite() {
        format!("{dir} {what}")
    } else if e >= 1.0 && check.side == Side::AtMost {
        format!("{:.1} times {what}", 1.0 + e)
    } else {
        format!("{} {dir} {what}", percent(e))
    };
    Some(format!(
        "observed {} is {how} {}",
        sci(check.estimate),
        sci(check.far_end())
    ))
}

/// The claim in a table cell: "upper bound", "lower bound", "approx.".
pub fn claim_cell(c: Claim) -> &'static str {
    match c {
        Claim::Approximation => "approx.",
        c => c.label(),
    }
}

/// The value, with its range when the trace does not pin it down:
/// "3.443e-1 [3.1e-1, 3.6e-1]".
pub fn value_cell(r: &Record) -> String {
    match r.range {
        Some(x) => format!(
            "{} [{}, {}]",
            sci(r.value),
            outward(x.low, false),
            outward(x.high, true)
        ),
        None => sci(r.value),
    }
}

/// `x` to two significant digits, rounded away from the inside of a range (down for
/// its low end, up for its high end), so the range printed holds the range computed.
fn outward(x: f64, up: bool) -> String {
    if !x.is_finite() || x == 0.0 {
        return sci(x);
    }
    format!("{:.1e}", outward_value(x, up))
}

/// The end of a range as [`value_cell`] prints it: `x` at two significant digits,
/// rounded down (`up` false) or up, so the printed range holds the computed one.
pub fn outward_value(x: f64, up: bool) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    let scale = 10f64.powf(x.abs().log10().floor() - 1.0);
    let digits = x / scale;
    // A value already at two digits stays (x / scale may land just beside it).
    let rounded = if (digits - digits.round()).abs() < 1e-9 {
        digits.round()
    } else if up {
        digits.ceil()
    } else {
        digits.floor()
    };
    rounded * scale
}

/// The verdict with the observed point's excess: "VIOLATED (-53.8 %)", "holds", "-".
pub fn verdict_cell(r: &Record) -> String {
    let Some(v) = r.verdict else {
        return match r.standing {
            Standing::NotJudged => "not judged".into(),
            _ => "-".into(),
        };
    };
    let mut s = v.to_string();
    if let Some(e) = r.excess {
        // Signed: + above an upper bound, - below a lower one.
        let sign = if r.claim == Claim::LowerBound {
            '-'
        } else {
            '+'
        };
        s.push_str(&format!(" ({sign}{})", percent(e)));
    }
    s
}

/// One character for a verdict, after a value in a narrow table.
pub fn mark(r: &Record) -> &'static str {
    match (r.verdict, r.standing) {
        (_, Standing::NotJudged) => " n",
        (Some(BoundVerdict::Holds), _) => " ✓",
        (Some(BoundVerdict::Violated), _) => " ✗",
        (Some(BoundVerdict::Undecided), _) => " ?",
        (None, _) => "",
    }
}

/// What [`mark`] means, for the line under a table.
pub const MARKS: &str = "the observed FN interval against a bound: ✓ holds, ✗ VIOLATED, ? \
undecided, n not judged";

/// "regime" for people.
pub fn regime_name(r: Regime) -> &'static str {
    match r {
        Regime::Steady => "steady state",
        Regime::Transient => "transient",
    }
}

/// The first clause of a note (up to its first ';'): the reason without its details.
fn reason(note: &str) -> &str {
    note.split(';').next().unwrap_or(note).trim()
}

/// What chance alone makes of a violation count. Each verdict is a two-sided interval
/// at `level` against its bound, so even a bound exactly equal to the true rate at
/// every point is VIOLATED at a point with probability (1 - level) / 2, and a bound
/// above the true rate less often: among `n` points about n (1 - level) / 2 VIOLATED
/// are expected from chance alone, whatever the points' dependence (linearity of
/// expectation). The binomial tail is exact only for independent points (separate
/// traces, seeds and hash positions); points sharing a trace move together, which
/// makes larger counts likelier than it says. Said, not decided: a count above the
/// chance level is evidence against the bound, one within it is no evidence for it.
fn chance_note(violated: usize, n: usize, level: f64, claim: Claim) -> String {
    let per_point = (1.0 - level) / 2.0;
    let expected = n as f64 * per_point;
    let side = if claim == Claim::LowerBound {
        "below"
    } else {
        "above"
    };
    let tail = rbf_foundations::stats::binomial_tail(n as u64, per_point, violated as u64);
    format!(
        " (by chance: a bound equal to the true rate everywhere is VIOLATED at about {} \
         of {n}, each {} interval lying wholly {side} it {} of the time; {violated} or \
         more: P = {} if the points were independent)",
        if expected < 0.1 {
            format!("{expected:.1e}")
        } else if expected < 10.0 {
            format!("{expected:.1}")
        } else {
            format!("{expected:.0}")
        },
        percent(level),
        percent(per_point),
        if tail < 0.01 {
            format!("{tail:.1e}")
        } else {
            format!("{tail:.2}")
        }
    )
}

/// One line per bound: its standing at the points that have it, then per regime how
/// many points hold, are undecided and are violated (with what chance alone would
/// make of that count, [`chance_note`]), and where the observed point lies beyond the
/// bound. `records` pairs each record with its point's number; `level` is the
/// observed intervals' confidence level.
pub fn summary(records: &[(usize, &Record)], level: f64) -> Vec<String> {
    let mut out = Vec::new();
    for bound in Bound::ALL {
        let of: Vec<(usize, &Record)> = records
            .iter()
            .filter(|(_, r)| r.bound == bound)
            .copied()
            .collect();
        if of.is_empty() || !bound.gets_verdict() {
            continue;
        }
        let n = of.len();
        let mut line = format!(
            "{} ({}; {n} point{})",
            bound.label(),
            standings(&of),
            if n == 1 { "" } else { "s" }
        );
        for regime in [Regime::Steady, Regime::Transient] {
            line.push_str(&regime_counts(&of, regime, level, bound.claim()));
        }
        line.push_str(&not_judged(&of));
        line.push_str(&points_beyond(&of, bound.claim()));
        line.push('.');
        out.push(line);
    }
    out
}

/// The standings of a bound's records: one word when all share it, else each with its
/// count ("proven at 3, not proven at 1").
fn standings(of: &[(usize, &Record)]) -> String {
    let mut standings: BTreeMap<Standing, usize> = BTreeMap::new();
    for (_, r) in of {
        *standings.entry(r.standing).or_default() += 1;
    }
    standings
        .iter()
        .map(|(s, c)| {
            if *c == of.len() {
                s.label().to_string()
            } else {
                format!("{} at {c}", s.label())
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// "; steady: 3 hold, 1 VIOLATED of 4" (and the chance of that many violations by
/// luck alone), or nothing when no record was judged in `regime`.
fn regime_counts(of: &[(usize, &Record)], regime: Regime, level: f64, claim: Claim) -> String {
    let judged: Vec<BoundVerdict> = of
        .iter()
        .filter_map(|(_, r)| r.verdict_in(regime))
        .collect();
    if judged.is_empty() {
        return String::new();
    }
    let count = |v| judged.iter().filter(|x| **x == v).count();
    let counts: Vec<String> = [
        (BoundVerdict::Holds, "hold"),
        (BoundVerdict::Undecided, "undecided"),
        (BoundVerdict::Violated, "VIOLATED"),
    ]
    .into_iter()
    .filter(|(v, _)| count(*v) > 0)
    .map(|(v, word)| format!("{} {word}", count(v)))
    .collect();
    let mut s = format!(
        "; {}: {} of {}",
        regime_name(regime),
        counts.join(", "),
        judged.len()
    );
    let violated = count(BoundVerdict::Violated);
    if violated > 0 {
        s.push_str(&chance_note(violated, judged.len(), level, claim));
    }
    s
}

/// "; not judged at N: reason, reason", or nothing.
fn not_judged(of: &[(usize, &Record)]) -> String {
    let not_judged: Vec<&str> = of
        .iter()
        .filter(|(_, r)| r.standing == Standing::NotJudged)
        .map(|(_, r)| reason(&r.note))
        .collect();
    if not_judged.is_empty() {
        return String::new();
    }
    let mut why: Vec<&str> = not_judged.clone();
    why.sort_unstable();
    why.dedup();
    format!("; not judged at {}: {}", not_judged.len(), why.join(", "))
}

/// The points whose observation lies beyond the bound, by how much (the first few).
fn points_beyond(of: &[(usize, &Record)], claim: Claim) -> String {
    let dir = if claim == Claim::LowerBound {
        "below"
    } else {
        "above"
    };
    let beyond: Vec<String> = of
        .iter()
        .filter_map(|(p, r)| {
            let e = r.excess?;
            let t = if r.regime == Some(Regime::Transient) {
                ", transient"
            } else {
                ""
            };
            Some(format!("{p} ({} {dir}{t})", percent(e)))
        })
        .collect();
    if beyond.is_empty() {
        return String::new();
    }
    const SHOWN: usize = 4;
    let more = beyond.len().saturating_sub(SHOWN);
    format!(
        "; observed point beyond the bound at {}{}",
        beyond[..beyond.len().min(SHOWN)].join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    )
}

/// Which engine produced the renewal bound, and how close to the exact value it is.
pub fn renewal_mode_line(r: &RenewalResult) -> String {
    match r.mode {
        RenewalMode::Exact if r.mode_note.is_empty() => {
            "renewal bound: exact engine (eq. 24 for every arrival)".to_string()
        }
        RenewalMode::Exact => format!("renewal bound: exact engine ({})", r.mode_note),
        RenewalMode::Certified => format!(
            "renewal bound: certified mode, within {:.1e} of the exact engine's value (tolerance {:.1e}); exact lies in [{}, {}]",
            r.certified_tolerance,
            r.tolerance.unwrap_or(f64::NAN),
            rate(r.fn_lower),
            rate(r.fn_upper)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::Range;
    use rbf_predicted::model::false_negative::Method;

    fn record(
        bound: Bound,
        value: f64,
        verdict: Option<BoundVerdict>,
        standing: Standing,
    ) -> Record {
        Record {
            bound,
            value,
            range: None,
            claim: bound.claim(),
            standing,
            verdict,
            regime: verdict.map(|_| Regime::Steady),
            excess: None,
            note: "why; details".into(),
        }
    }

    #[test]
    fn cells_and_summary() {
        let mut v = record(
            Bound::of(Method::MarkovLower),
            0.3443,
            Some(BoundVerdict::Violated),
            Standing::NotProven,
        );
        v.excess = Some(0.538);
        assert_eq!(verdict_cell(&v), "VIOLATED (-53.8 %)");
        assert_eq!(mark(&v), " ✗");
        let nj = record(
            Bound::of(Method::MarkovLower),
            0.3,
            None,
            Standing::NotJudged,
        );
        assert_eq!(verdict_cell(&nj), "not judged");
        let ranged = Record {
            range: Some(Range {
                low: 0.25,
                high: 0.35,
            }),
            ..v.clone()
        };
        assert_eq!(value_cell(&ranged), "3.443e-1 [2.5e-1, 3.5e-1]");
        let h = record(
            Bound::of(Method::Renewal),
            0.2,
            Some(BoundVerdict::Holds),
            Standing::FittedModel,
        );
        let lines = summary(&[(0, &v), (1, &nj), (2, &h)], 0.99);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[0].starts_with(
                "renewal upper bound (fitted model; 1 point); steady state: 1 hold of 1"
            ),
            "{lines:?}"
        );
        assert!(
            lines[1].contains("not proven at 1, not judged at 1; 2 points"),
            "{lines:?}"
        );
        assert!(lines[1].contains("not judged at 1: why"), "{lines:?}");
        // One VIOLATED of one judged point: at a 99 % level chance alone gives 0.005.
        assert!(
            lines[1].contains(
                "VIOLATED at about 5.0e-3 of 1, each 99.0 % interval lying wholly below \
                 it 0.50 % of the time; 1 or more: P = 5.0e-3 if the points were independent"
            ),
            "{lines:?}"
        );
        assert!(
            lines[1].contains("beyond the bound at 0 (53.8 % below)"),
            "{lines:?}"
        );
    }
}
