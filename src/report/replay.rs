//! The human-readable replay table.

use super::{count, rate, Table};
use crate::compare::{Observed, Rate};
use crate::replay::ReplayReport;
use crate::stats::Interval;

fn ci(i: Option<&Interval>) -> String {
    super::interval_or_why(i, |i| format!("[{}, {}]", rate(i.low), rate(i.high)))
}

pub fn replay_table(r: &ReplayReport) -> String {
    let c = &r.counts;
    let conf = r.confidence.as_ref();
    let level = conf.map_or(String::from("CI"), |c| {
        format!("{:.0}% CI (batch means)", c.level * 100.0)
    });
    // Rates with an interval are the steady-state estimates the interval is about.
    let [fp, fnr, fpci] =
        [Rate::Fp, Rate::Fn, Rate::FpCountInstance].map(|rate| Observed::of_one(r, rate));
    let mut t = Table::new(["measure", "value", level.as_str()]);
    t.row(["arrivals".to_string(), count(c.arrivals), String::new()]);
    t.row(["new".to_string(), count(c.new), String::new()]);
    t.row(["non-repeat".to_string(), count(c.non_repeat), String::new()]);
    t.row(["repeat".to_string(), count(c.repeat), String::new()]);
    t.row([
        "false positives (new -> repeat)".to_string(),
        count(c.false_positives),
        String::new(),
    ]);
    t.row([
        "false negatives (non-repeat -> new)".to_string(),
        count(c.false_negatives),
        String::new(),
    ]);
    t.row([
        "lucky (non-repeat -> repeat)".to_string(),
        count(c.lucky),
        String::new(),
    ]);
    t.row(["cycles".to_string(), count(r.cycles), String::new()]);
    t.row([
        "FP rate (FP / arrivals)".to_string(),
        rate(fp.rate),
        ci(fp.interval.as_ref()),
    ]);
    t.row([
        "FN rate (FN / arrivals)".to_string(),
        rate(fnr.rate),
        ci(fnr.interval.as_ref()),
    ]);
    t.row([
        "FP count-instance (FP paper)".to_string(),
        rate(fpci.rate),
        ci(fpci.interval.as_ref()),
    ]);
    t.row([
        "FP count-first".to_string(),
        rate(r.fp_rate_count_first),
        String::new(),
    ]);
    t.row([
        "FP count-each".to_string(),
        rate(r.fp_rate_count_each),
        String::new(),
    ]);
    let pc = &r.per_cycle;
    let dist = |d: &crate::replay::Distribution| {
        format!(
            "mean {:.1}, p50 {}, p99 {}, max {}",
            d.mean, d.p50, d.p99, d.max
        )
    };
    t.row([
        "arrivals per cycle".to_string(),
        dist(&pc.arrivals),
        String::new(),
    ]);
    t.row([
        "distinct per cycle".to_string(),
        dist(&pc.distinct),
        String::new(),
    ]);
    t.row([
        "bit-setting per cycle".to_string(),
        dist(&pc.bit_setting),
        String::new(),
    ]);
    let mut out = format!(
        "filter: {}\nwarm-up: {} arrivals; distinct keys: {}; complete cycles: {}\n\n",
        r.filter.describe(),
        count(r.warmup),
        count(r.distinct_keys),
        count(pc.complete_cycles)
    );
    out.push_str(&t.render());
    if conf.is_none() {
        out.push_str(&super::wrap(
            crate::replay::TOO_FEW_CYCLES_WHY,
            super::WIDTH,
            "    ",
        ));
    }
    if let Some(conf) = conf {
        let line = format!(
            "rates with an interval: over the complete cycles of {} filter(s) hashed with different seeds{} (the counts above are the first's); intervals over {} batches of {} arrivals{}",
            conf.hash_seeds,
            if r.filter.positions == Some(crate::filter::Positions::PerCycle) {
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
        );
        out.push_str(&super::wrap(&line, super::WIDTH, "    "));
    }
    if c.repeat_classified_new > 0 {
        out.push_str(&format!(
            "\nBUG: {} repeats were classified as new; please report this.\n",
            c.repeat_classified_new
        ));
    }
    out
}
