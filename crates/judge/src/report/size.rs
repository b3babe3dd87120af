//! `rbf size`'s text: the misfit warning, the answer in one sentence, the filter, the
//! models and the confirming replay against the targets, and the time taken.

use super::verdicts::{beyond, verdict_cell};
use super::{interval, interval_or_why, sci, wrap, Table, WIDTH};
use crate::compare::verdict::{Check, Side};
use crate::compare::{ModelTargetVerdict, Observed, Record, Regime, TargetVerdict};
use crate::size::confirm::{Confirmation, LEVEL};
use crate::size::trace::TraceSizeRun;
use crate::size::{Candidate, Question, SizeRun, RELATIVE_PRECISION};
use rbf_foundations::error::Result;
use rbf_foundations::stats::Interval;
use rbf_predicted::model::false_negative::RenewalMode;

/// Everything `rbf size` prints on a terminal for `run`. Errors: the judge gave no
/// renewal bound (before any text is made).
pub fn size_text(run: &SizeRun) -> Result<String> {
    let record = run.renewal()?;
    let c = run.confirmation.as_ref();
    let mut out = String::new();
    if let Some(why) = &run.misfit {
        out.push_str(&wrap(
            &misfit_warning(why, "the size below is"),
            WIDTH,
            "    ",
        ));
    }
    out.push_str(&wrap(&headline(run), WIDTH, "    "));
    let filter = format!(
        "filter: {} ({} candidates evaluated)",
        run.filter.describe(),
        run.sizing.candidates_evaluated
    );
    out.push_str(&wrap(&filter, WIDTH, "    "));
    out.push_str(&table(run, record).render());
    if let Some(c) = c {
        out.push_str(&replay_line(c));
    }
    out.push_str(&format!("time: {:.1} s (search and replay)\n", run.seconds));
    Ok(out)
}

/// Warns that `what` ("the size below is", "the bounds below are") is for a fitted
/// model whose fit failed its test: every command that reads such a workload file
/// says so.
pub fn misfit_warning(why: &str, what: &str) -> String {
    format!(
        "warning: the workload does not fit its trace ({why}): {what} for the fitted \
         model, not a promise for the trace"
    )
}

/// The confirming replay's length, warm-up and cycles.
fn replay_line(c: &Confirmation) -> String {
    format!(
        "replay: {} synthetic arrivals, first {} (prologue + 10%) not counted, {} cycles{}\n",
        c.arrivals,
        c.warmup,
        c.cycles,
        if c.regime == Regime::Transient {
            " (transient: too few recycles for a steady-state estimate)"
        } else {
            ""
        }
    )
}

/// The answer in one sentence, saying NOT CONFIRMED when the replay misses a target.
fn headline(run: &SizeRun) -> String {
    let (s, b) = (&run.sizing, &run.sizing.best);
    let headline = match s.question {
        Question::SmallestMemory => format!(
            "smallest memory for FP <= {} and FN <= {} (renewal bound), to {}%: {} bits{}",
            run.target_fp,
            run.target_fn.unwrap_or(f64::NAN),
            100.0 * RELATIVE_PRECISION,
            b.memory,
            s.memory_fails
                .map_or(String::new(), |m| format!(" ({m} bits fail)"))
        ),
        Question::BestFn => format!(
            "best FN bound at {} bits with FP <= {}",
            b.memory, run.target_fp
        ),
    };
    match &run.confirmation {
        Some(c) if c.misses() => format!(
            "{headline}; NOT CONFIRMED: its confirming replay MISSES the {} (below)",
            if c.fp_verdict == TargetVerdict::Misses {
                "FP target"
            } else {
                "FN target"
            }
        ),
        _ => headline,
    }
}

/// Models and observations against the targets. A model's number is exact for its
/// model, so its verdict is a comparison; an observation's is three-way on its interval.
fn table(run: &SizeRun, record: &Record) -> Table {
    let level = format!("{:.0}% interval", 100.0 * LEVEL);
    let mut t =
        Table::new(["measure", "value", "target", level.as_str(), "verdict"]).left_aligned(&[4]);
    model_rows(&mut t, run, record);
    let Some(c) = &run.confirmation else {
        return t;
    };
    observed_rows(&mut t, run, c);
    if record.verdict.is_some() {
        t.note(format!(
            "the renewal bound against the replay's FN interval: {}",
            verdict_cell(record)
        ));
    }
    t.note(
        "verdicts on observations: meets = the whole interval is within the target, \
         MISSES = the whole interval is beyond it, undecided = the interval straddles it",
    );
    if c.misses() {
        t.note(
            "NOT CONFIRMED: the model's number meets the target, but the replay of the same \
             filter misses it",
        );
    }
    t
}

/// The FP model's and the renewal bound's rows, verdicts by comparison with the targets.
fn model_rows(t: &mut Table, run: &SizeRun, record: &Record) {
    let (b, c) = (&run.sizing.best, run.confirmation.as_ref());
    let model_verdict = |value: f64, target: f64, replay: Option<TargetVerdict>| {
        ModelTargetVerdict::of(value, target, replay).to_string()
    };
    t.row([
        "FP model (count-instance f_sigma)".to_string(),
        sci(b.fp_model),
        sci(run.target_fp),
        String::new(),
        model_verdict(b.fp_model, run.target_fp, c.map(|c| c.fp_verdict)),
    ]);
    let n = t.note(format!(
        "{}: {} ({}): {}",
        record.bound.name(),
        record.standing,
        engine(b),
        record.note
    ));
    t.row([
        format!("FN renewal upper bound, {} [{n}]", record.standing),
        sci(record.value),
        run.target_fn.map_or("-".into(), sci),
        String::new(),
        run.target_fn.map_or("-".into(), |g| {
            model_verdict(b.fn_renewal_upper, g, c.and_then(|c| c.fn_verdict))
        }),
    ]);
}

/// Which engine computed the candidate's renewal bound.
fn engine(b: &Candidate) -> String {
    match b.fn_renewal_mode {
        RenewalMode::Exact => "exact engine".to_string(),
        RenewalMode::Certified => format!(
            "certified mode, at most {:.1e} above the exact engine's value",
            b.fn_renewal_tolerance
        ),
    }
}

/// The confirming replay's rows, each verdict three-way on its interval.
fn observed_rows(t: &mut Table, run: &SizeRun, c: &Confirmation) {
    let iv = |i: Option<&Interval>| interval_or_why(i, interval);
    let i = c.intervals.as_ref();
    let verdict = |t: &mut Table, check: Check| {
        let v = check.target().to_string();
        match beyond(&check, "the target") {
            Some(e) => format!("{v} [{}]", t.note(e)),
            None => v,
        }
    };
    let fp_verdict = verdict(t, c.fp_check(run.target_fp));
    t.row([
        "observed FP (count-instance)".to_string(),
        sci(c.observed_fp_count_instance),
        sci(run.target_fp),
        iv(i.map(|i| &i.fp_count_instance)),
        fp_verdict,
    ]);
    t.row([
        "observed FP (per arrival)".to_string(),
        sci(c.observed_fp),
        String::new(),
        iv(i.map(|i| &i.fp)),
        String::new(),
    ]);
    let fn_verdict = run
        .target_fn
        .map_or(String::new(), |g| verdict(t, c.fn_check(g)));
    t.row([
        "observed FN (per arrival)".to_string(),
        sci(c.observed_fn),
        run.target_fn.map_or("-".into(), sci),
        iv(i.map(|i| &i.fn_)),
        fn_verdict,
    ]);
}

/// Everything `rbf size TRACE` prints: the bound's size and the replay's side by side,
/// the chosen filter's bounds and observations against the targets, the trace and the
/// time taken.
pub fn trace_size_text(run: &TraceSizeRun) -> Result<String> {
    let mut out = String::new();
    for line in trace_headline(run) {
        out.push_str(&wrap(&line, WIDTH, "    "));
    }
    let c = &run.chosen;
    let filter = format!(
        "filter: {} (the bound's choice; {} cycles on this trace)",
        c.filter(rbf_data::filter::Hashing::Colliding).describe(),
        c.cycles
    );
    out.push_str(&wrap(&filter, WIDTH, "    "));
    out.push_str(&trace_table(run).render());
    out.push_str(&format!(
        "trace: {} arrivals, {} distinct, first {} not counted\n",
        run.arrivals, run.distinct, run.fit.warmup
    ));
    out.push_str(&format!(
        "time: {:.1} s ({} passes over the trace)\n",
        run.seconds, run.passes
    ));
    Ok(out)
}

/// The answer: the bound's memory, and the replay's beside it.
fn trace_headline(run: &TraceSizeRun) -> Vec<String> {
    let (c, r) = (&run.chosen, &run.by_replay);
    let fails = |m: Option<u64>| m.map_or(String::new(), |m| format!(" ({m} bits fail)"));
    match run.target_fn {
        Some(g) => vec![
            format!(
                "smallest memory for FP <= {} and FN <= {g} on this trace, by the renewal-trace bound, to {}%: {} bits{}",
                run.target_fp,
                100.0 * RELATIVE_PRECISION,
                c.memory,
                fails(run.bound_fails)
            ),
            format!(
                "the replay of this trace shows {} bits sufficient{} ({}-phase, k={}, observed FN {}): the bound asks {:.2}x that",
                r.memory,
                fails(run.replay_fails),
                r.phases,
                r.hashes,
                sci(r.observed_fn.rate),
                run.memory_ratio.unwrap_or(f64::NAN)
            ),
        ],
        None => vec![
            format!(
                "lowest renewal-trace bound at {} bits with FP <= {} on this trace: {}",
                c.memory,
                run.target_fp,
                sci(c.upper())
            ),
            format!(
                "lowest observed FN there: {} ({}-phase, k={})",
                sci(r.observed_fn.rate),
                r.phases,
                r.hashes
            ),
        ],
    }
}

/// The chosen filter: FP model and FN bounds (by comparison with the targets), then
/// the replay's observations (three-way on their intervals).
fn trace_table(run: &TraceSizeRun) -> Table {
    let level = format!("{:.0}% interval", 100.0 * LEVEL);
    let mut t =
        Table::new(["measure", "value", "target", level.as_str(), "verdict"]).left_aligned(&[4]);
    let c = &run.chosen;
    let model = |value: f64, target: Option<f64>| {
        target.map_or("-".to_string(), |g| {
            if value <= g { "meets" } else { "MISSES" }.to_string()
        })
    };
    t.row([
        "FP model (count-instance f_sigma)".to_string(),
        sci(c.fp_model),
        sci(run.target_fp),
        String::new(),
        model(c.fp_model, Some(run.target_fp)),
    ]);
    for r in &run.judgement.records {
        let n = t.note(format!("{}: {}: {}", r.bound.name(), r.standing, r.note));
        t.row([
            format!("FN {}, {} [{n}]", r.bound.name(), r.standing),
            sci(r.value),
            run.target_fn.map_or("-".into(), sci),
            String::new(),
            model(r.value, run.target_fn),
        ]);
    }
    let observed = |t: &mut Table, name: &str, o: &Observed, target: Option<f64>| {
        let verdict = target.map_or(String::new(), |g| {
            let check = Check::new(g, Side::AtMost, o.rate, o.interval.as_ref());
            let v = check.target().to_string();
            match beyond(&check, "the target") {
                Some(e) => format!("{v} [{}]", t.note(e)),
                None => v,
            }
        });
        t.row([
            name.to_string(),
            sci(o.rate),
            target.map_or(String::new(), sci),
            interval_or_why(o.interval.as_ref(), interval),
            verdict,
        ]);
    };
    observed(
        &mut t,
        "observed FP (count-instance)",
        &c.observed_fp_count_instance,
        Some(run.target_fp),
    );
    observed(
        &mut t,
        "observed FN (per arrival)",
        &c.observed_fn,
        run.target_fn,
    );
    for r in &run.judgement.records {
        if r.verdict.is_some() {
            t.note(format!(
                "{} against the replay's FN interval: {}",
                r.bound.name(),
                verdict_cell(r)
            ));
        }
    }
    if c.observed_fn.regime() == Regime::Transient {
        t.note(
            "the chosen filter recycles too few times on this trace for a steady-state \
             estimate: the trace is short for it, and a longer capture of the same \
             traffic may need more memory",
        );
    }
    t.note(
        "the bound's size is what the bound promises on this trace; the replay's is what \
         hindsight shows was enough for it (its observed FN is a point estimate, not a \
         promise)",
    );
    t
}
