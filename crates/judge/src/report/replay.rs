//! The human-readable replay table.

use super::{count, rate, Table};
use crate::compare::{Observed, Rate};
use rbf_foundations::stats::Interval;
use rbf_observed::replay::ReplayReport;

fn ci(i: Option<&Interval>) -> String {
    super::interval_or_why(i, |i| format!("[{}, {}]", rate(i.low), rate(i.high)))
}

pub fn replay_table(r: &ReplayReport) -> String {
    let c = &r.counts;
    let conf = r.confidence.as_ref();
    let level = conf.map_or(String::from("CI"), |c| {
        format!("{:.0}% CI (batch means)", c.level * 100.0)
    });
    let mut t = Table::new(["measure", "value", level.as_str()]);
    count_rows(&mut t, r);
    rate_rows(&mut t, r);
    per_cycle_rows(&mut t, r);
    let mut out = format!(
        "filter: {}\nwarm-up: {} arrivals; distinct keys: {}; complete cycles: {}\n\n",
        r.filter.describe(),
        count(r.warmup),
        count(r.distinct_keys),
        count(r.per_cycle.complete_cycles)
    );
    out.push_str(&t.render());
    let why = match conf {
        None => rbf_observed::replay::TOO_FEW_CYCLES_WHY.to_string(),
        Some(conf) => intervals_note(r, conf),
    };
    out.push_str(&super::wrap(&why, super::WIDTH, "    "));
    if c.repeat_classified_new > 0 {
        out.push_str(&format!(
            "\nBUG: {} repeats were classified as new; please report this.\n",
            c.repeat_classified_new
        ));
    }
    out
}

/// The ground truth's counts and the cycles.
fn count_rows(t: &mut Table, r: &ReplayReport) {
    let c = &r.counts;
    let counts = [
        ("arrivals", c.arrivals),
        ("new", c.new),
        ("non-repeat", c.non_repeat),
        ("repeat", c.repeat),
        ("false positives (new -> repeat)", c.false_positives),
        ("false negatives (non-repeat -> new)", c.false_negatives),
        ("lucky (non-repeat -> repeat)", c.lucky),
        ("cycles", r.cycles),
    ];
    for (label, n) in counts {
        t.row([label.to_string(), count(n), String::new()]);
    }
}

/// The rates, with their intervals where one means something.
fn rate_rows(t: &mut Table, r: &ReplayReport) {
    // Rates with an interval are the steady-state estimates the interval is about.
    let [fp, fnr, fpci] =
        [Rate::Fp, Rate::Fn, Rate::FpCountInstance].map(|rate| Observed::of_one(r, rate));
    let rates = [
        ("FP rate (FP / arrivals)", fp.rate, ci(fp.interval.as_ref())),
        (
            "FN rate (FN / arrivals)",
            fnr.rate,
            ci(fnr.interval.as_ref()),
        ),
        (
            "FP count-instance (FP paper)",
            fpci.rate,
            ci(fpci.interval.as_ref()),
        ),
        ("FP count-first", r.fp_rate_count_first, String::new()),
        ("FP count-each", r.fp_rate_count_each, String::new()),
    ];
    for (label, value, interval) in rates {
        t.row([label.to_string(), rate(value), interval]);
    }
}

/// The distributions of a cycle's arrivals, distinct keys and bit-setting arrivals.
fn per_cycle_rows(t: &mut Table, r: &ReplayReport) {
    let pc = &r.per_cycle;
    let per_cycle = [
        ("arrivals per cycle", &pc.arrivals),
        ("distinct per cycle", &pc.distinct),
        ("bit-setting per cycle", &pc.bit_setting),
    ];
    for (label, d) in per_cycle {
        let text = format!(
            "mean {:.1}, p50 {}, p99 {}, max {}",
            d.mean, d.p50, d.p99, d.max
        );
        t.row([label.to_string(), text, String::new()]);
    }
}

/// What the intervals are over: the filters' complete cycles, the batches and the hash
/// seeds.
fn intervals_note(r: &ReplayReport, conf: &rbf_observed::replay::Confidence) -> String {
    format!(
        "rates with an interval: over the complete cycles of {} filter(s) hashed with different seeds{} (the counts above are the first's); intervals over {} batches of {} arrivals{}",
        conf.hash_seeds,
        if r.filter.positions == Some(rbf_data::filter::Positions::PerCycle) {
            ", each drawing new positions at every recycle"
        } else {
            ""
        },
        conf.batches,
        count(conf.batch_arrivals),
        if conf.hash_seeds > 1 {
            " and over the hash seeds"
        } else {
            " (one hash seed: they leave out how the hash positions vary)"
        }
    )
}
