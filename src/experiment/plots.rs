//! Which charts a results table gets: the grid axis with the most values becomes the
//! x axis; every other setting (source, k, sigma rule, variant) splits the rows into
//! groups, one chart per group and quantity; one- and two-phase filters share a chart
//! so they can be compared. Observations are solid lines, models dashed.

use std::collections::BTreeMap;

use super::row::Row;
use super::svg::{Chart, Series};

/// Charts per run are capped; the table has everything.
pub const MAX_CHARTS: usize = 36;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Axis {
    Memory,
    TargetFp,
    Sigma,
    SigmaFraction,
    Hashes,
    MaxInserts,
}

impl Axis {
    const ALL: [Axis; 6] = [
        Axis::Memory,
        Axis::TargetFp,
        Axis::Sigma,
        Axis::SigmaFraction,
        Axis::Hashes,
        Axis::MaxInserts,
    ];

    fn value(self, r: &Row) -> Option<f64> {
        match self {
            Axis::Memory => Some(r.memory as f64),
            Axis::TargetFp => r.target_fp,
            // Only a configured sigma is an axis; one derived from a target FP or a
            // fraction follows the memory axis and would mix curves.
            Axis::Sigma if r.target_fp.is_none() && r.sigma_fraction.is_none() => {
                r.sigma.map(|s| s as f64)
            }
            Axis::Sigma => None,
            Axis::SigmaFraction => r.sigma_fraction,
            Axis::Hashes => Some(f64::from(r.hashes)),
            Axis::MaxInserts => r.max_inserts.map(|n| n as f64),
        }
    }

    fn label(self) -> &'static str {
        match self {
            Axis::Memory => "memory M (bits)",
            Axis::TargetFp => "target FP (count-instance)",
            Axis::Sigma => "sigma (bits set per array before a recycle)",
            Axis::SigmaFraction => "sigma / bits per array",
            Axis::Hashes => "k (hashes)",
            Axis::MaxInserts => "N (bit-setting insertions per cycle)",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Axis::Memory => "memory",
            Axis::TargetFp => "target-fp",
            Axis::Sigma => "sigma",
            Axis::SigmaFraction => "sigma-fraction",
            Axis::Hashes => "k",
            Axis::MaxInserts => "N",
        }
    }

    /// The settings of a row that do not vary along this axis: rows that agree on
    /// them are one curve. sigma is excluded when it derives from the x value.
    fn group_key(self, r: &Row) -> String {
        let mut parts = vec![r.source.clone()];
        if self != Axis::Memory {
            parts.push(format!("M={}", r.memory));
        }
        if self != Axis::Hashes {
            parts.push(format!("k={}", r.hashes));
        }
        let rule = match (r.target_fp, r.sigma_fraction, r.max_inserts) {
            (Some(t), _, _) if self != Axis::TargetFp && self != Axis::Sigma => {
                Some(format!("target FP={t}"))
            }
            (_, Some(f), _) if self != Axis::SigmaFraction => Some(format!("sigma={f}·M/phases")),
            (_, _, Some(n)) if self != Axis::MaxInserts => Some(format!("N={n}")),
            (None, None, None) if self != Axis::Sigma => r.sigma.map(|s| format!("sigma={s}")),
            _ => None,
        };
        parts.extend(rule);
        let variant = r.variant();
        let rest: Vec<&str> = variant.split(", ").skip(1).collect();
        if !rest.is_empty() {
            parts.push(rest.join(", "));
        }
        parts.join(", ")
    }
}

fn pick_axis(rows: &[Row]) -> Axis {
    let distinct = |a: Axis| {
        let mut v: Vec<u64> = rows
            .iter()
            .filter_map(|r| a.value(r))
            .map(f64::to_bits)
            .collect();
        v.sort_unstable();
        v.dedup();
        v.len()
    };
    // First of the most varied axes wins ties, in ALL's order.
    let mut best = Axis::Memory;
    for a in Axis::ALL {
        if distinct(a) > distinct(best) {
            best = a;
        }
    }
    best
}

fn log_scale(xs: impl Iterator<Item = f64>) -> bool {
    let (lo, hi) = xs
        .filter(|x| *x > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(l, h), x| (l.min(x), h.max(x)));
    lo.is_finite() && hi / lo >= 20.0
}

type Column = fn(&Row) -> Option<f64>;

/// The quantities plotted, each with its series: label, column, dashed.
/// A plotted quantity: file stem, y label, and its series (label, column, dashed).
type Quantity = (
    &'static str,
    &'static str,
    Vec<(&'static str, Column, bool)>,
);

fn quantities() -> [Quantity; 3] {
    [
        (
            "fn",
            "FN per arrival",
            vec![
                ("observed", |r| r.observed_fn, false),
                ("renewal upper bound", |r| r.fn_renewal_upper, true),
                ("markov lower", |r| r.fn_markov_lower, true),
                ("markov swr", |r| r.fn_markov_swr, true),
                ("markov uniform", |r| r.fn_markov_uniform, true),
                ("markov bi-uniform", |r| r.fn_markov_biuniform, true),
                ("drop-pins", |r| r.fn_drop_pins, true),
                ("markov disabling", |r| r.fn_markov_disabling, true),
            ],
        ),
        (
            "fp",
            "FP rate (count-instance)",
            vec![
                ("observed", |r| r.observed_fp_count_instance, false),
                ("FP model", |r| r.fp_model, true),
            ],
        ),
        (
            "capacity",
            "messages per cycle",
            vec![
                ("sigma-bounded model", |r| r.capacity_sigma, false),
                ("worst-case sizing (eq. 1)", |r| r.capacity_worst_case, true),
            ],
        ),
    ]
}

/// The charts for `rows`, as (file stem, chart), at most [`MAX_CHARTS`].
pub fn charts(rows: &[Row]) -> Vec<(String, Chart)> {
    let axis = pick_axis(rows);
    let mut groups: BTreeMap<String, Vec<&Row>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for r in rows {
        let key = axis.group_key(r);
        if !groups.contains_key(&key) {
            order.push(key.clone());
        }
        groups.entry(key).or_default().push(r);
    }
    let log_x = log_scale(rows.iter().filter_map(|r| axis.value(r)));
    let mut out = Vec::new();
    for (g, key) in order.iter().enumerate() {
        let members = &groups[key];
        let mut phases: Vec<u8> = members.iter().map(|r| r.phases).collect();
        phases.sort_unstable();
        phases.dedup();
        for (stem, y_label, columns) in quantities() {
            let mut series = Vec::new();
            for &(label, column, dashed) in &columns {
                for &ph in &phases {
                    let mut points: Vec<(f64, f64)> = members
                        .iter()
                        .filter(|r| r.phases == ph)
                        .filter_map(|r| Some((axis.value(r)?, column(r)?)))
                        .collect();
                    if points.is_empty() {
                        continue;
                    }
                    points.sort_by(|a, b| a.0.total_cmp(&b.0));
                    let label = if phases.len() > 1 {
                        format!("{label} ({ph}-phase)")
                    } else {
                        label.to_string()
                    };
                    series.push(Series {
                        label,
                        points,
                        dashed,
                    });
                }
            }
            if series.is_empty() {
                continue;
            }
            let log_y = stem != "capacity";
            out.push((
                format!("{:02}-{stem}-vs-{}", g + 1, axis.name()),
                Chart {
                    title: key.clone(),
                    x_label: axis.label().to_string(),
                    y_label: y_label.to_string(),
                    log_x,
                    log_y,
                    series,
                },
            ));
        }
    }
    out.truncate(MAX_CHARTS);
    out
}
