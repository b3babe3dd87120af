//! Coverage per cell and per printed interval, from the records alone: the share of
//! seeds whose interval contains the truth, with a 95 % Wilson interval for that share
//! (its own binomial uncertainty), and on which side the misses fell.

use serde::Serialize;

use super::record::{FitRecord, ObservedRecord, Record, TruthRecord};
use rbf_data::filter::Positions;
use rbf_foundations::output_file::frame::csv_field;
use rbf_foundations::stats::{normal_quantile, replicated_ratio, Interval, RatioEstimate};
use rbf_judge::compare::JUDGED_POSITIONS;
use rbf_observed::replay::{batch_length, rebatch, CycleSums, DEFAULT_HASH_SEEDS};

/// One observed measure of a seed's variant (its FN or its FP count-instance).
type Measure = fn(&super::record::Variant) -> super::record::Observed;

/// Confidence of the Wilson interval around a measured coverage.
pub const COVERAGE_LEVEL: f64 = 0.95;

/// A cell's truth from its long replays.
#[derive(Clone, Debug, Serialize)]
pub struct Truth {
    pub traces: u64,
    pub replays: u64,
    /// Measured arrivals per long replay (mean).
    pub arrivals: f64,
    /// The long-run rates over every long replay's complete cycles (per trace over its
    /// hash seeds, then averaged over traces), with their own intervals at the study's
    /// level: hash seeds x time batches within a trace, traces independent.
    pub fn_rate: Interval,
    pub fp_count_instance: Interval,
    /// Standard deviation of FN between hash seeds of one long trace (pooled): how far
    /// one filter's long-run FN is from the hash average.
    pub fn_hash_sd: f64,
}
/// The coverage of one printed interval in one cell.
#[derive(Clone, Debug, Serialize)]
pub struct Coverage {
    pub cell: String,
    pub interval: String,
    /// Seeds with an interval, and how many of them contain the truth.
    pub seeds: u64,
    pub covered: u64,
    pub coverage: f64,
    pub coverage_low: f64,
    pub coverage_high: f64,
    /// Misses with the whole interval below / above the truth.
    pub below: u64,
    pub above: u64,
    /// Seeds that gave no interval.
    pub without: u64,
    /// Median half-width relative to the truth (None for the band and the bound).
    pub median_relative_half_width: Option<f64>,
}

/// Everything about one cell.
#[derive(Clone, Debug, Serialize)]
pub struct CellSummary {
    pub cell: String,
    pub seeds: u64,
    pub truth: Option<Truth>,
    /// The long-run FN and FP count-instance of the salted filter (new positions per
    /// cycle), if replayed.
    pub salted_fn: Option<Interval>,
    pub salted_fp: Option<Interval>,
    pub true_bound: Option<f64>,
    /// Seeds whose observed FN point lies outside its own interval.
    pub point_outside_interval: u64,
    pub mean_cycles: f64,
    pub rows: Vec<Coverage>,
}

/// Wilson score interval for x successes in n trials.
pub fn wilson(x: u64, n: u64, level: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let z = normal_quantile(0.5 + level / 2.0);
    let (x, n) = (x as f64, n as f64);
    let z2 = z * z;
    let centre = (x + z2 / 2.0) / (n + z2);
    let half = z * (x * (n - x) / n + z2 / 4.0).sqrt() / (n + z2);
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len().max(1) as f64
}

fn sd(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let m = mean(xs);
    (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64).sqrt()
}

/// The truth of one rate from long replays: per trace, the two-way estimate over its
/// hash seeds and time batches (as a replay's own interval), then the mean of traces.
fn truth_rate(
    records: &[&TruthRecord],
    level: f64,
    pick: impl Fn(&CycleSums) -> (f64, f64),
) -> Option<Interval> {
    let mut traces: Vec<u64> = records.iter().map(|r| r.trace).collect();
    traces.sort_unstable();
    traces.dedup();
    let parts: Vec<RatioEstimate> = traces
        .iter()
        .filter_map(|t| {
            let rs: Vec<&&TruthRecord> = records.iter().filter(|r| r.trace == *t).collect();
            let measured = rs.iter().map(|r| r.arrivals).max()?;
            let (cycles, arrivals) = rs
                .iter()
                .flat_map(|r| &r.batches)
                .fold((0, 0), |a, b| (a.0 + b.cycles, a.1 + b.arrivals));
            let own = rs.iter().map(|r| r.batch_arrivals).max()?;
            let len = batch_length(own, measured, arrivals.div_ceil(cycles.max(1)));
            let count = measured.div_ceil(len) as usize;
            let table: Vec<Vec<(f64, f64)>> = rs
                .iter()
                .map(|r| {
                    let mut b = rebatch(&r.batches, r.batch_arrivals, len);
                    b.resize(count.max(b.len()), CycleSums::default());
                    b.iter().map(&pick).collect()
                })
                .collect();
            replicated_ratio(&table)
        })
        .collect();
    RatioEstimate::mean_of(&parts).map(|e| e.interval(level))
}

/// The cell's truth, or None without records, or when a trace was replayed with a
/// single hash seed: its interval would then leave out how the hash positions vary
/// (they are fixed for the whole replay), and what the models describe is the average
/// over them.
fn truth(records: &[&TruthRecord], level: f64) -> Option<Truth> {
    let mut traces: Vec<u64> = records.iter().map(|r| r.trace).collect();
    traces.sort_unstable();
    traces.dedup();
    let hash_seeds = |t: u64| records.iter().filter(|r| r.trace == t).count();
    if traces.is_empty() || traces.iter().any(|&t| hash_seeds(t) < 2) {
        return None;
    }
    let within: Vec<f64> = traces
        .iter()
        .filter_map(|t| {
            let xs: Vec<f64> = records
                .iter()
                .filter(|r| r.trace == *t)
                .map(|r| r.fn_rate)
                .collect();
            (xs.len() > 1).then(|| sd(&xs).powi(2))
        })
        .collect();
    Some(Truth {
        traces: traces.len() as u64,
        replays: records.len() as u64,
        arrivals: mean(
            &records
                .iter()
                .map(|r| r.arrivals as f64)
                .collect::<Vec<_>>(),
        ),
        fn_rate: truth_rate(records, level, |s| {
            (s.false_negatives as f64, s.arrivals as f64)
        })?,
        fp_count_instance: truth_rate(records, level, |s| {
            ((s.false_positives + s.lucky) as f64, s.first as f64)
        })?,
        fn_hash_sd: mean(&within).sqrt(),
    })
}

fn median(mut xs: Vec<f64>) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    Some(xs[xs.len() / 2])
}

/// Coverage of intervals `get(seed)` against `truth(seed)`.
fn coverage<T>(
    cell: &str,
    name: &str,
    seeds: &[&T],
    get: impl Fn(&T) -> Option<Interval>,
    truth: impl Fn(&T) -> f64,
) -> Coverage {
    let (mut n, mut covered, mut below, mut above, mut without) = (0, 0, 0, 0, 0);
    let mut widths = Vec::new();
    for s in seeds {
        let Some(i) = get(s) else {
            without += 1;
            continue;
        };
        let t = truth(s);
        n += 1;
        if i.high < t {
            below += 1;
        } else if i.low > t {
            above += 1;
        } else {
            covered += 1;
        }
        if t > 0.0 {
            widths.push(i.half_width() / t);
        }
    }
    Coverage::count(
        cell,
        name,
        (n, covered),
        (below, above),
        without,
        median(widths),
    )
}

impl Coverage {
    /// `covered` of `n` seeds, with the Wilson interval of that share and the misses
    /// on each side.
    fn count(
        cell: &str,
        name: &str,
        (n, covered): (u64, u64),
        (below, above): (u64, u64),
        without: u64,
        median_relative_half_width: Option<f64>,
    ) -> Coverage {
        let (lo, hi) = wilson(covered, n, COVERAGE_LEVEL);
        Coverage {
            cell: cell.to_string(),
            interval: name.to_string(),
            seeds: n,
            covered,
            coverage: covered as f64 / n.max(1) as f64,
            coverage_low: lo,
            coverage_high: hi,
            below,
            above,
            without,
            median_relative_half_width,
        }
    }
}

/// A yes/no check per seed (the band covers S everywhere; the conservative bound is at
/// or above the true one).
fn share<T>(cell: &str, name: &str, seeds: &[&T], ok: impl Fn(&T) -> Option<bool>) -> Coverage {
    let (mut n, mut covered, mut without) = (0, 0, 0);
    for s in seeds {
        match ok(s) {
            Some(true) => {
                n += 1;
                covered += 1;
            }
            Some(false) => n += 1,
            None => without += 1,
        }
    }
    Coverage::count(cell, name, (n, covered), (n - covered, 0), without, None)
}

/// The coverage rows of one kind of observed seeds (fixed or per-cycle positions): for
/// each number of hash seeds the records hold (the printed one first), the FN and the
/// FP count-instance interval against each target `targets(n)` gives (a label tail and
/// the two truths).
fn variant_rows(
    cell: &str,
    positions: Positions,
    seeds: &[&ObservedRecord],
    targets: impl Fn(u64) -> Vec<(String, (f64, f64))>,
) -> Vec<Coverage> {
    let printed = u64::from(DEFAULT_HASH_SEEDS);
    let mut counts: Vec<u64> = seeds
        .first()
        .map(|s| s.variants.iter().map(|v| v.hash_seeds).collect())
        .unwrap_or_default();
    counts.sort_by_key(|&n| (n != printed, n));
    let mut rows = Vec::new();
    for n in counts {
        let mark = if n == printed && positions == JUDGED_POSITIONS {
            ", printed"
        } else {
            ""
        };
        let pick = |s: &ObservedRecord| s.variants.iter().find(|v| v.hash_seeds == n).copied();
        for (tail, (fn_truth, fp_truth)) in targets(n) {
            let measures: [(&str, Measure, f64); 2] = [
                ("observed FN", |v| v.fn_rate, fn_truth),
                (
                    "observed FP count-instance",
                    |v| v.fp_count_instance,
                    fp_truth,
                ),
            ];
            for (what, get, target) in measures {
                rows.push(coverage(
                    cell,
                    &format!(
                        "{what}, {} positions ({n} hash seed{}{mark}){tail}",
                        positions.name(),
                        if n == 1 { "" } else { "s" }
                    ),
                    seeds,
                    |s| pick(s).and_then(|v| get(&v).interval),
                    |_| target,
                ));
            }
        }
    }
    rows
}

/// Summaries of the cells named in `cells`, in that order, from `records`.
pub fn summarise(cells: &[String], records: &[Record], level: f64) -> Vec<CellSummary> {
    cells
        .iter()
        .map(|name| summarise_cell(name, &CellRecords::of(name, records), level))
        .collect()
}

/// One cell's records, by kind.
#[derive(Default)]
struct CellRecords<'a> {
    /// Observed seeds through fixed-position filters.
    seeds: Vec<&'a ObservedRecord>,
    /// The same seeds through filters with new positions at every recycle.
    per_cycle: Vec<&'a ObservedRecord>,
    fits: Vec<&'a FitRecord>,
    truths: Vec<&'a TruthRecord>,
    /// Long replays of the per-cycle process.
    salted: Vec<&'a TruthRecord>,
}

impl<'a> CellRecords<'a> {
    /// The records of cell `name`, in the order they were read.
    fn of(name: &str, records: &'a [Record]) -> CellRecords<'a> {
        let mut out = CellRecords::default();
        for r in records.iter().filter(|r| r.cell() == name) {
            match r {
                Record::Observed(s) if s.per_cycle => out.per_cycle.push(s),
                Record::Observed(s) => out.seeds.push(s),
                Record::Fitted(s) => out.fits.push(s),
                Record::Truth(t) if t.salted => out.salted.push(t),
                Record::Truth(t) => out.truths.push(t),
            }
        }
        out
    }
}

/// One cell's summary: its truths, then the coverage of each interval rbf prints.
fn summarise_cell(name: &str, r: &CellRecords, level: f64) -> CellSummary {
    let truth = truth(&r.truths, level);
    let salted_fn = truth_rate(&r.salted, level, |s| {
        (s.false_negatives as f64, s.arrivals as f64)
    });
    let salted_fp = truth_rate(&r.salted, level, |s| {
        ((s.false_positives + s.lucky) as f64, s.first as f64)
    });
    let mut rows = Vec::new();
    if let Some(t) = &truth {
        rows.extend(fixed_rows(name, &r.seeds, t));
    }
    // Per-cycle filters, against the per-cycle truth (what they estimate) and
    // against the fixed filters' hash average (whether the two processes agree).
    if let (Some(sf), Some(sp)) = (salted_fn, salted_fp) {
        let fixed = truth
            .as_ref()
            .map(|t| (t.fn_rate.estimate, t.fp_count_instance.estimate));
        let printed = u64::from(DEFAULT_HASH_SEEDS);
        rows.extend(variant_rows(name, Positions::PerCycle, &r.per_cycle, |n| {
            let mut targets = vec![(String::new(), (sf.estimate, sp.estimate))];
            if let Some(f) = fixed.filter(|_| n == printed) {
                targets.push((", against the fixed filters' long-run rate".into(), f));
            }
            targets
        }));
    }
    rows.extend(fit_rows(name, &r.fits));
    CellSummary {
        cell: name.to_string(),
        seeds: r.seeds.len().max(r.fits.len()) as u64,
        truth,
        salted_fn,
        salted_fp,
        true_bound: r
            .fits
            .first()
            .map(|s| s.true_bound)
            .or(r.truths.first().map(|t| t.true_bound)),
        point_outside_interval: points_outside_interval(&r.seeds),
        mean_cycles: mean(&r.seeds.iter().map(|s| s.cycles as f64).collect::<Vec<_>>()),
        rows,
    }
}

/// The fixed-position seeds' rows: against the long replays' truth `t`, and the printed
/// number of hash seeds also against the seeds' pooled mean.
fn fixed_rows(name: &str, seeds: &[&ObservedRecord], t: &Truth) -> Vec<Coverage> {
    let printed = u64::from(DEFAULT_HASH_SEEDS);
    // The mean over every seed of the estimates with the most hash seeds: in
    // a cell whose long-run rate has a skewed spread between hash positions
    // the long replays' truth (a few tens of filters) can be off by a few
    // per cent, while this pools hundreds of seeds x their filters. Not
    // independent of the intervals judged against it, but each seed is one
    // of hundreds in it.
    let most = seeds
        .first()
        .and_then(|s| s.variants.iter().map(|v| v.hash_seeds).max())
        .unwrap_or(printed);
    let pooled = |get: Measure| {
        let xs: Vec<f64> = seeds
            .iter()
            .filter_map(|s| s.variants.iter().find(|v| v.hash_seeds == most))
            .map(|v| get(v).estimate)
            .collect();
        mean(&xs)
    };
    let truths = (t.fn_rate.estimate, t.fp_count_instance.estimate);
    let pooled = (pooled(|v| v.fn_rate), pooled(|v| v.fp_count_instance));
    let against = format!(", against the {} seeds' pooled mean", seeds.len());
    variant_rows(name, Positions::Fixed, seeds, |n| {
        let mut targets = vec![(String::new(), truths)];
        if n == printed && seeds.len() > 1 {
            targets.push((against.clone(), pooled));
        }
        targets
    })
}

/// The fit's rows: p_r, S at the median distance, the reuse band, the conservative bound.
fn fit_rows(name: &str, fits: &[&FitRecord]) -> [Coverage; 4] {
    [
        coverage(name, "p_r", fits, |s| s.p_repeat, |s| s.true_p_repeat),
        coverage(
            name,
            "S at the median distance (pointwise)",
            fits,
            |s| s.s_median.map(|k| k.interval),
            |s| s.s_median.map_or(0.0, |k| k.truth),
        ),
        share(name, "reuse band, every knot at once", fits, |s| {
            (s.band.knots > 0).then(|| s.band.covers())
        }),
        share(
            name,
            "conservative bound >= true-workload bound",
            fits,
            |s| s.conservative_bound.map(|c| c >= s.true_bound),
        ),
    ]
}

/// Seeds' variants whose observed FN point lies outside its own interval.
fn points_outside_interval(seeds: &[&ObservedRecord]) -> u64 {
    seeds
        .iter()
        .flat_map(|s| &s.variants)
        .filter(|v| {
            v.fn_rate
                .interval
                .is_some_and(|i| !i.contains(v.fn_rate.estimate))
        })
        .count() as u64
}

fn pct(x: f64) -> String {
    format!("{:.1}", 100.0 * x)
}

/// An interval as a table cell: estimate [low, high].
fn interval_cell(i: &Interval) -> String {
    format!("{:.6} [{:.6}, {:.6}]", i.estimate, i.low, i.high)
}

/// The summaries as a Markdown document: the truths, then one coverage table.
pub fn markdown(summaries: &[CellSummary], level: f64) -> String {
    let mut out = truths_table(summaries, level);
    if summaries.iter().any(|s| s.salted_fn.is_some()) {
        out.push_str(&per_cycle_table(summaries));
    }
    out.push_str(&coverage_table(summaries, level));
    let outside: Vec<String> = summaries
        .iter()
        .filter(|s| s.point_outside_interval > 0)
        .map(|s| format!("{} ({} seeds)", s.cell, s.point_outside_interval))
        .collect();
    out.push_str(&format!(
        "\nObserved FN point outside its own interval: {}.\n",
        if outside.is_empty() {
            "never".to_string()
        } else {
            outside.join(", ")
        }
    ));
    out
}

/// The Markdown table of each cell's truths and its true-workload bound's verdict.
fn truths_table(summaries: &[CellSummary], level: f64) -> String {
    let mut out = String::new();
    out.push_str("### Truths\n\n");
    out.push_str(&format!("| cell | seeds | complete cycles per seed | long-run FN [{l}] | hash s.d. | true-workload renewal bound | bound vs long-run FN | long-run FP count-instance [{l}] | long replays x arrivals |\n", l = format!("{:.0} %", 100.0 * level)));
    out.push_str("|---|---:|---:|---|---:|---:|---|---|---|\n");
    for s in summaries {
        let t = s.truth.as_ref();
        let verdict = match (t, s.true_bound) {
            (Some(t), Some(b)) if t.fn_rate.high <= b => "holds",
            (Some(t), Some(b)) if t.fn_rate.low > b => "VIOLATED",
            (Some(_), Some(_)) => "undecided",
            _ => "-",
        };
        out.push_str(&format!(
            "| {} | {} | {:.0} | {} | {} | {} | {} | {} | {} |\n",
            s.cell,
            s.seeds,
            s.mean_cycles,
            t.map_or("-".into(), |t| interval_cell(&t.fn_rate)),
            t.map_or("-".into(), |t| format!("{:.2e}", t.fn_hash_sd)),
            s.true_bound.map_or("-".into(), |b| format!("{b:.6}")),
            verdict,
            t.map_or("-".into(), |t| interval_cell(&t.fp_count_instance)),
            t.map_or("-".into(), |t| format!(
                "{} x {:.3e}",
                t.replays, t.arrivals
            )),
        ));
    }
    out
}

/// The Markdown table of the per-cycle process's long-run rates next to the fixed
/// filters' and the bound.
fn per_cycle_table(summaries: &[CellSummary]) -> String {
    let mut out = String::new();
    out.push_str("\n### The renewal model's own process: new hash positions at every recycle\n\n");
    out.push_str("| cell | long-run FN, new positions per cycle | long-run FN, fixed positions (hash average) | true-workload renewal bound | bound vs new positions per cycle | long-run FP count-instance, new positions per cycle | the same, fixed positions |\n");
    out.push_str("|---|---|---|---:|---|---|---|\n");
    for s in summaries {
        let Some(f) = &s.salted_fn else { continue };
        let verdict = match s.true_bound {
            Some(b) if f.high <= b => "holds",
            Some(b) if f.low > b => "VIOLATED",
            Some(_) => "undecided",
            None => "-",
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            s.cell,
            interval_cell(f),
            s.truth
                .as_ref()
                .map_or("-".into(), |t| interval_cell(&t.fn_rate)),
            s.true_bound.map_or("-".into(), |b| format!("{b:.6}")),
            verdict,
            s.salted_fp.as_ref().map_or("-".into(), interval_cell),
            s.truth
                .as_ref()
                .map_or("-".into(), |t| interval_cell(&t.fp_count_instance)),
        ));
    }
    out
}

/// The Markdown table of every interval's coverage, cell by cell.
fn coverage_table(summaries: &[CellSummary], level: f64) -> String {
    let mut out = format!(
        "\n### Coverage of rbf's {:.0} % intervals\n\n",
        100.0 * level
    );
    out.push_str("| cell | interval | seeds | covered | coverage % | 95 % Wilson | misses below / above | no interval | median half-width / truth |\n");
    out.push_str("|---|---|---:|---:|---:|---|---|---:|---:|\n");
    for s in summaries {
        for r in s.rows.iter().filter(|r| r.seeds + r.without > 0) {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | [{}, {}] | {} / {} | {} | {} |\n",
                r.cell,
                r.interval,
                r.seeds,
                r.covered,
                pct(r.coverage),
                pct(r.coverage_low),
                pct(r.coverage_high),
                r.below,
                r.above,
                r.without,
                r.median_relative_half_width
                    .map_or("-".into(), |w| format!("{:.2}%", 100.0 * w)),
            ));
        }
    }
    out
}

/// The coverage rows as CSV (names quoted where they hold a comma).
pub fn csv(summaries: &[CellSummary]) -> String {
    let mut out = String::from(
        "cell,interval,seeds,covered,coverage,coverage_low,coverage_high,below,above,without,median_relative_half_width\n",
    );
    for s in summaries {
        for r in &s.rows {
            out.push_str(&format!(
                "{},{},{},{},{},{},{},{},{},{},{}\n",
                csv_field(&r.cell),
                csv_field(&r.interval),
                r.seeds,
                r.covered,
                r.coverage,
                r.coverage_low,
                r.coverage_high,
                r.below,
                r.above,
                r.without,
                r.median_relative_half_width
                    .map_or(String::new(), |w| w.to_string()),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_names_with_commas() {
        let row = Coverage::count(
            "a, b",
            "FN (4 hash seeds, printed)",
            (2, 1),
            (1, 0),
            0,
            None,
        );
        let text = csv(&[CellSummary {
            cell: "a, b".into(),
            seeds: 2,
            truth: None,
            salted_fn: None,
            salted_fp: None,
            true_bound: None,
            point_outside_interval: 0,
            mean_cycles: 0.0,
            rows: vec![row],
        }]);
        let line = text.lines().nth(1).expect("a row");
        assert!(
            line.starts_with("\"a, b\",\"FN (4 hash seeds, printed)\",2,1,"),
            "{line}"
        );
    }

    #[test]
    fn wilson_matches_a_reference() {
        // 95 % Wilson interval for 198 of 200: [0.9643, 0.9973] (standard tables).
        let (lo, hi) = wilson(198, 200, 0.95);
        assert!(
            (lo - 0.9643).abs() < 5e-4 && (hi - 0.9973).abs() < 5e-4,
            "{lo} {hi}"
        );
        assert_eq!(wilson(0, 0, 0.95), (0.0, 1.0));
    }
}
