//! `rbf compare`'s text: the filter and trace lines, the observed rates beside the FP
//! model, every bound with its claim, standing and verdict, and their notes.

use super::verdicts::{claim_cell, regime_name, renewal_mode_line, value_cell, verdict_cell};
use super::{interval, sci, wrap, Table, WIDTH};
use crate::compare::record::METHOD_IDENTIFIED;
use crate::compare::{CompareRun, Comparison, Observed};
use rbf_data::filter::Positions;
use rbf_foundations::stats::Interval;
use rbf_observed::replay::TOO_FEW_CYCLES_WHY;

/// Everything `rbf compare` prints on a terminal for `run`, intervals at `confidence`.
pub fn compare_text(run: &CompareRun, confidence: f64) -> String {
    let obs = &run.observation;
    let (r, s) = (&obs.replay, &obs.fit.summary);
    // The filter as replayed (its positions resolved: per-cycle unless asked).
    let mut out = format!("filter: {}\n", r.filter.describe());
    out.push_str(&format!(
        "trace: {} arrivals ({} measured, {} recycles), p_r = {:.4}, {} distinct keys,\n",
        obs.seen, r.counts.arrivals, r.cycles, s.p_repeat, s.distinct_keys
    ));
    out.push_str(&format!(
        "       fitted D = {}, one-hit wonders {:.1}% of distinct keys\n",
        obs.fit.distinct_label(),
        100.0 * s.one_hit_share
    ));
    let per_cycle = r.filter.positions == Some(Positions::PerCycle);
    out.push_str(&tables(
        &run.comparison,
        confidence,
        (r.hash_seeds, per_cycle),
    ));
    let j = &run.comparison.judgement;
    if let Some(r) = j.report.as_ref().and_then(|r| r.renewal) {
        out.push_str(&wrap(&renewal_mode_line(&r), WIDTH, "    "));
    }
    let not_run = run.not_run();
    if !not_run.is_empty() {
        let line = format!(
            "FN methods not run (not in --method): {}",
            not_run.join(", ")
        );
        out.push_str(&wrap(&line, WIDTH, "    "));
    }
    out
}

fn interval_cell(i: Option<&Interval>) -> String {
    super::interval_or_why(i, interval)
}

/// The observed rates with their intervals and the FP model beside them, then every
/// bound with its claim, standing and verdict against the observed FN; each bound's
/// note once below.
fn tables(c: &Comparison, confidence: f64, (hash_seeds, per_cycle): (u64, bool)) -> String {
    let mut out = observed_table(c, confidence);
    if c.judgement.records.is_empty() {
        return out;
    }
    out.push('\n');
    out.push_str(&bounds_table(c));
    out.push_str(&bound_notes(c, hash_seeds, per_cycle));
    out
}

/// The observed FP and FN with their intervals, the FP model beside them.
fn observed_table(c: &Comparison, confidence: f64) -> String {
    let level = format!("{:.0}% interval", 100.0 * confidence);
    let mut t = Table::new(["observed", "value", level.as_str()]).left_aligned(&[2]);
    let row = |t: &mut Table, name: &str, o: &Observed| {
        t.row([
            name.to_string(),
            sci(o.rate),
            interval_cell(o.interval.as_ref()),
        ]);
    };
    row(&mut t, "FP per arrival", &c.observed_fp);
    row(&mut t, "FP count-instance", &c.observed_fp_count_instance);
    if let Some(fp) = c.fp_model.value {
        let inside = match c.observed_fp_count_instance.interval {
            Some(i) if i.contains(fp) => "inside the count-instance interval",
            Some(_) => "outside the count-instance interval",
            None => "no count-instance interval (too few cycles)",
        };
        t.row([
            "FP model f_sigma (estimate)".to_string(),
            sci(fp),
            inside.to_string(),
        ]);
    }
    row(&mut t, "FN per arrival", &c.observed_fn);
    t.render()
}

/// Every bound: its value (and range), claim, standing and verdict.
fn bounds_table(c: &Comparison) -> String {
    let regime = c.observed_fn.regime();
    let verdict_header = format!("verdict ({})", regime_name(regime));
    let mut m = Table::new([
        "bound",
        "FN per arrival",
        "claim",
        "standing",
        verdict_header.as_str(),
    ])
    .left_aligned(&[2, 3, 4]);
    for r in &c.judgement.records {
        m.row([
            r.bound.name().to_string(),
            value_cell(r),
            claim_cell(r.claim).to_string(),
            r.standing.to_string(),
            verdict_cell(r),
        ]);
    }
    m.render()
}

/// Each bound's note, what the verdicts mean, and what the observed intervals cover.
fn bound_notes(c: &Comparison, hash_seeds: u64, per_cycle: bool) -> String {
    let mut out = String::new();
    for r in &c.judgement.records {
        out.push_str(&wrap(
            &format!("{}: {}", r.bound.name(), r.note),
            WIDTH,
            "    ",
        ));
    }

    out.push_str(&wrap(
        "verdict: holds = the whole observed FN interval is on the bound's side, VIOLATED = \
         the whole interval is on the other side, undecided = it straddles the bound (in \
         parentheses: how far the observed point lies beyond the bound, relative to it, + above \
         an upper bound, - below a lower one); bounds describe the steady state, so a replay with \
         fewer than 10 recycles is judged as transient",
        WIDTH,
        "    ",
    ));
    if c.observed_fn.interval.is_none() {
        out.push_str(&wrap(TOO_FEW_CYCLES_WHY, WIDTH, "    "));
    }
    if c.judgement.records.iter().any(|r| r.range.is_some()) {
        out.push_str(&wrap(
            &format!(
                "[low, high]: the method over every workload the trace cannot tell apart from \
                 the fitted one (ends rounded outward); a Q-based method without a range is \
                 within {} % of its value on all of them; verdicts are against the whole \
                 spread either way",
                METHOD_IDENTIFIED * 100.0
            ),
            WIDTH,
            "    ",
        ));
    }
    let positions = if per_cycle {
        "drawing new positions at every recycle (--positions fixed: positions kept, as a \
         deployed filter's)"
    } else {
        "keeping its positions (as a deployed filter)"
    };
    let observed = if hash_seeds == 1 {
        // One filter that keeps its positions holds a single draw of the hash positions
        // the models average over: said, not passed over.
        let covered = if per_cycle {
            "each cycle's new positions vary both"
        } else {
            "one filter's positions are one draw of them; --hash-seeds 4, the default, \
             covers both"
        };
        format!(
            "observed: over the complete cycles of one filter, {positions}, the intervals over \
             its time batches (the models average over hash positions and arrivals alike; \
             {covered})"
        )
    } else {
        format!(
            "observed: over the complete cycles of {hash_seeds} filters hashed with different \
             seeds, each {positions}, the intervals over those filters and time batches (the \
             models average over hash positions and arrivals alike)"
        )
    };
    out.push_str(&wrap(&observed, WIDTH, "    "));
    out
}
