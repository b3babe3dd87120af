//! Which charts a results table gets: the grid axis with the most values becomes the
//! x axis; every other setting (source, k, sigma rule, variant) splits the rows into
//! groups, one chart per group and quantity; one- and two-phase filters share a chart
//! so they can be compared (same colour per measure, a marker per phase count).
//!
//! Every measure has one style in every chart: observations are points with error bars,
//! bounds proven at every point of the series solid lines, and everything else dashed,
//! its legend saying why in the words of the record's standing ("(fitted model)",
//! "(checked)", "(not proven)", "(not judged)"; approximations "(approx.)"). The FN
//! series are [`Bound::ALL`], in its order and colours.

use std::collections::BTreeMap;

use super::row::Row;
use super::svg::{AxisSpec, Chart, Marker, Point, Scale, Series, Style};
use crate::compare::{Bound, EvaluatedOn, Standing};
use rbf_predicted::model::false_negative::{Claim, Method};

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

    /// Integer-valued axes get integer ticks.
    fn integer(self) -> bool {
        matches!(
            self,
            Axis::Memory | Axis::Sigma | Axis::Hashes | Axis::MaxInserts
        )
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

/// Log-2 for sizes that double (all powers of two, spanning at least 4x), log-10 for
/// other geometric or wide ranges, linear otherwise.
fn x_scale(xs: impl Iterator<Item = f64>) -> Scale {
    let mut v: Vec<f64> = xs.filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    let (Some(&lo), Some(&hi)) = (v.first(), v.last()) else {
        return Scale::Linear;
    };
    if lo <= 0.0 || v.len() < 2 {
        return Scale::Linear;
    }
    let ratios: Vec<f64> = v.windows(2).map(|w| w[1] / w[0]).collect();
    let geometric = v.len() >= 3
        && hi / lo >= 4.0
        && ratios
            .iter()
            .all(|r| *r >= 1.5 && (r / ratios[0] - 1.0).abs() <= 0.5);
    let powers_of_two = v
        .iter()
        .all(|x| x.fract() == 0.0 && (*x as u64).is_power_of_two());
    if powers_of_two && hi / lo >= 4.0 {
        Scale::Log2
    } else if geometric || hi / lo >= 20.0 {
        Scale::Log10
    } else {
        Scale::Linear
    }
}

type Value = fn(&Row) -> Option<f64>;
type Range = fn(&Row) -> Option<(f64, f64)>;

/// How a model's measure is drawn, the same in every chart (observations are points
/// with error bars, [`observed_series`]).
#[derive(Clone, Copy)]
enum Kind {
    /// A bound or approximation of the one list: its style and legend from the
    /// records' claim and standing.
    Model(Bound),
    /// An estimate of the FP paper: always dashed, "(approx.)".
    Approx(Value),
}

/// One plotted measure: legend label, colour (fixed across charts) and kind.
struct Measure {
    label: &'static str,
    color: &'static str,
    kind: Kind,
}

impl Measure {
    fn value(&self, r: &Row) -> Option<f64> {
        match self.kind {
            Kind::Model(b) => r.value(b),
            Kind::Approx(f) => f(r),
        }
    }
}

fn fn_interval(r: &Row) -> Option<(f64, f64)> {
    Some((r.observed_fn_low?, r.observed_fn_high?))
}

fn fp_interval(r: &Row) -> Option<(f64, f64)> {
    Some((
        r.observed_fp_count_instance_low?,
        r.observed_fp_count_instance_high?,
    ))
}

/// A plotted quantity: file stem, y label, y scale, the observed series and the rest.
struct Quantity {
    stem: &'static str,
    y_label: &'static str,
    scale: Scale,
    observed: Option<(Value, Range)>,
    measures: Vec<Measure>,
}

const OBSERVED: &str = "#000000";

fn quantities() -> [Quantity; 3] {
    let approx = |label, color, value| Measure {
        label,
        color,
        kind: Kind::Approx(value),
    };
    [
        Quantity {
            stem: "fn",
            y_label: "FN per arrival",
            scale: Scale::Log10,
            observed: Some((|r| r.observed_fn, fn_interval)),
            measures: Bound::ALL
                .into_iter()
                .map(|b| Measure {
                    label: b.label(),
                    color: b.color(),
                    kind: Kind::Model(b),
                })
                .collect(),
        },
        Quantity {
            stem: "fp",
            y_label: "FP rate (count-instance)",
            scale: Scale::Log10,
            observed: Some((|r| r.observed_fp_count_instance, fp_interval)),
            measures: vec![approx("FP model f_sigma", "#2ca02c", |r| r.fp_model)],
        },
        Quantity {
            stem: "capacity",
            y_label: "messages per cycle",
            scale: Scale::Linear,
            observed: None,
            measures: vec![
                approx("sigma-bounded model", "#2ca02c", |r| r.capacity_sigma),
                approx("worst-case sizing, eq. 1", "#7f7f7f", |r| {
                    r.capacity_worst_case
                }),
            ],
        },
    ]
}

/// The points of `rows` along `axis` (with their intervals), in x order; None when no
/// row has a value.
fn points(
    rows: &[&Row],
    axis: Axis,
    value: impl Fn(&Row) -> Option<f64>,
    interval: impl Fn(&Row) -> Option<(f64, f64)>,
) -> Option<Vec<Point>> {
    let mut points: Vec<Point> = rows
        .iter()
        .filter_map(|r| {
            Some(Point {
                x: axis.value(r)?,
                y: value(r)?,
                interval: interval(r),
            })
        })
        .collect();
    points.sort_by(|a, b| a.x.total_cmp(&b.x));
    (!points.is_empty()).then_some(points)
}

/// The observed series over `rows` (one filter variant).
fn observed_series(
    value: Value,
    range: Range,
    axis: Axis,
    rows: &[&Row],
    variant: Option<String>,
    marker: Marker,
) -> Option<Series> {
    let points = points(rows, axis, value, range)?;
    let mut label = "observed".to_string();
    if let Some(v) = variant {
        label.push_str(&format!(", {v}"));
    }
    Some(Series {
        label,
        style: Style::Observed,
        color: OBSERVED,
        marker,
        points,
    })
}

/// The series of one measure over `rows` (one filter variant), or None when no row has it.
fn series(
    measure: &Measure,
    axis: Axis,
    rows: &[&Row],
    variant: Option<String>,
    marker: Marker,
) -> Option<Series> {
    let points = points(rows, axis, |r| measure.value(r), |_| None)?;
    // The weakest standing over the series' points names its style.
    let (style, why) = match measure.kind {
        Kind::Model(b) => {
            let weakest = rows
                .iter()
                .filter_map(|r| r.model(b))
                .map(|m| m.standing)
                .max()
                .unwrap_or(Standing::NotProven);
            match (b.claim(), weakest) {
                (_, Standing::Proven) if b.claim() != Claim::Approximation => (Style::Proven, None),
                (Claim::Approximation, _) => (Style::Approx, Some("approx.")),
                (_, s) => (Style::Approx, Some(s.label())),
            }
        }
        _ => (Style::Approx, Some("approx.")),
    };
    let mut label = measure.label.to_string();
    // On a fitted workload, say so (unless the standing already does); a bound read off
    // the trace itself is on no workload.
    let fitted = matches!(measure.kind, Kind::Model(b) if !b.method().reads_trace())
        && rows.iter().any(|r| r.fitted_workload)
        && why != Some(Standing::FittedModel.label());
    if fitted {
        label.push_str(", fitted");
    }
    if let Some(w) = why {
        label.push_str(&format!(" ({w})"));
    }
    if let Some(v) = variant {
        label.push_str(&format!(", {v}"));
    }
    Some(Series {
        label,
        style,
        color: measure.color,
        marker,
        points,
    })
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
    let x_scale = x_scale(rows.iter().filter_map(|r| axis.value(r)));
    let mut out = Vec::new();
    for (g, key) in order.iter().enumerate() {
        for q in quantities() {
            let all = quantity_series(&q, axis, &groups[key]);
            if all.is_empty() {
                continue;
            }
            out.push((
                format!("{:02}-{}-vs-{}", g + 1, q.stem, axis.name()),
                Chart {
                    title: key.clone(),
                    x: AxisSpec {
                        label: axis.label().to_string(),
                        scale: x_scale,
                        integer: axis.integer(),
                    },
                    y: AxisSpec {
                        label: q.y_label.to_string(),
                        scale: q.scale,
                        integer: false,
                    },
                    series: all,
                },
            ));
        }
    }
    if let Some(c) = markov_fitted_vs_true(rows) {
        out.insert(0, ("00-markov-fitted-vs-true".to_string(), c));
    }
    if let Some(c) = fitted_vs_true(rows) {
        out.insert(0, ("00-renewal-fitted-vs-true".to_string(), c));
    }
    out.truncate(MAX_CHARTS);
    out
}

/// One chart's series: quantity `q` of a group's `members` along `axis`, the
/// observation first, one series per phase count (a marker each) and measure.
fn quantity_series(q: &Quantity, axis: Axis, members: &[&Row]) -> Vec<Series> {
    let mut phases: Vec<u8> = members.iter().map(|r| r.phases).collect();
    phases.sort_unstable();
    phases.dedup();
    let mut all = Vec::new();
    let of_phase =
        |ph: u8| -> Vec<&Row> { members.iter().copied().filter(|r| r.phases == ph).collect() };
    let variant = |ph: u8| (phases.len() > 1).then(|| format!("{ph}-phase"));
    let marker = |i: usize| Marker::ALL[i % Marker::ALL.len()];
    if let Some((value, range)) = q.observed {
        for (i, &ph) in phases.iter().enumerate() {
            all.extend(observed_series(
                value,
                range,
                axis,
                &of_phase(ph),
                variant(ph),
                marker(i),
            ));
        }
    }
    for measure in &q.measures {
        for (i, &ph) in phases.iter().enumerate() {
            all.extend(series(measure, axis, &of_phase(ph), variant(ph), marker(i)));
        }
    }
    all
}

/// Synthetic sources with `fit`: every Q-based method on the fitted workload over the
/// same method on the true one, against the true value, with the 5 % band of the
/// fit's criterion; a bar spans the method's range over the workloads the trace cannot
/// tell apart from the fit.
fn markov_fitted_vs_true(rows: &[Row]) -> Option<Chart> {
    let mut series = Vec::new();
    let (mut lo, mut hi, mut points) = (f64::INFINITY, 0.0f64, 0);
    for bound in Bound::ALL {
        if !bound.reads_q() || bound.on() != EvaluatedOn::Model {
            continue;
        }
        let fitted = Bound::fitted(bound.method());
        let mut pts: Vec<Point> = rows
            .iter()
            .filter(|r| !r.fitted_workload)
            .filter_map(|r| {
                let t = r.value(bound).filter(|t| *t > 0.0)?;
                let f = r.model(fitted)?;
                Some(Point {
                    x: t,
                    y: f.value / t,
                    interval: f.range.map(|x| (x.low / t, x.high / t)),
                })
            })
            .collect();
        if pts.is_empty() {
            continue;
        }
        pts.sort_by(|a, b| a.x.total_cmp(&b.x));
        for p in &pts {
            lo = lo.min(p.x);
            hi = hi.max(p.x);
        }
        points += pts.len();
        series.push(Series {
            label: format!("{} / true", fitted.label()),
            style: Style::Observed,
            color: bound.color(),
            marker: Marker::ALL[series.len() % Marker::ALL.len()],
            points: pts,
        });
    }
    if series.is_empty() {
        return None;
    }
    series.extend(criterion_lines(
        [("5 % criterion, low", 0.95), ("5 % criterion, high", 1.05)],
        (lo, hi),
    ));
    Some(fitted_over_true(
        format!(
            "Q-based methods on the fitted workload over the same method on the true one ({points} values)"
        ),
        "method on the true workload (FN per arrival)",
        series,
    ))
}

/// The two grey lines of a fitted-over-true criterion, (label, ratio) each, across the
/// chart's x range.
fn criterion_lines(lines: [(&str, f64); 2], (lo, hi): (f64, f64)) -> Vec<Series> {
    lines
        .into_iter()
        .map(|(label, y)| Series {
            label: label.into(),
            style: Style::Approx,
            color: "#7f7f7f",
            marker: Marker::Circle,
            points: [lo, hi]
                .map(|x| Point {
                    x,
                    y,
                    interval: None,
                })
                .to_vec(),
        })
        .collect()
}

/// A fitted-against-true chart: the ratio over the value on the true workload.
fn fitted_over_true(title: String, x_label: &str, series: Vec<Series>) -> Chart {
    Chart {
        title,
        x: AxisSpec {
            label: x_label.into(),
            scale: Scale::Log10,
            integer: false,
        },
        y: AxisSpec {
            label: "fitted / true".into(),
            scale: Scale::Linear,
            integer: false,
        },
        series,
    }
}

/// The points of `bound` over the true-workload renewal bound, against the latter, in
/// its order.
fn over_true_bound(rows: &[&Row], bound: Bound) -> Vec<Point> {
    let mut points: Vec<Point> = rows
        .iter()
        .filter_map(|r| {
            let t = r.value(Bound::of(Method::Renewal))?;
            Some(Point {
                x: t,
                y: r.value(bound)? / t,
                interval: None,
            })
        })
        .collect();
    points.sort_by(|a, b| a.x.total_cmp(&b.x));
    points
}

/// Synthetic sources with `fit`: the renewal bound from the fitted workload over the
/// bound from the true one, against the true bound, for every point (the fit's
/// validation, docs/FIT.md), with the 3 % band of its criterion.
fn fitted_vs_true(rows: &[Row]) -> Option<Chart> {
    let pairs: Vec<&Row> = rows
        .iter()
        .filter(|r| !r.fitted_workload && r.value(Bound::fitted(Method::Renewal)).is_some())
        .filter(|r| r.value(Bound::of(Method::Renewal)).is_some_and(|t| t > 0.0))
        .collect();
    if pairs.is_empty() {
        return None;
    }
    let mut phases: Vec<u8> = pairs.iter().map(|r| r.phases).collect();
    phases.sort_unstable();
    phases.dedup();
    let (lo, hi) = pairs
        .iter()
        .filter_map(|r| r.value(Bound::of(Method::Renewal)))
        .fold((f64::INFINITY, 0.0f64), |(l, h), x| (l.min(x), h.max(x)));
    let mut series = criterion_lines(
        [("3 % criterion, low", 0.97), ("3 % criterion, high", 1.03)],
        (lo, hi),
    );
    for (i, &ph) in phases.iter().enumerate() {
        let of_phase: Vec<&Row> = pairs.iter().copied().filter(|r| r.phases == ph).collect();
        let marker = Marker::ALL[i % Marker::ALL.len()];
        for (what, bound) in [
            ("fitted point estimate", Bound::fitted(Method::Renewal)),
            ("conservative end", Bound::conservative()),
        ] {
            series.push(Series {
                label: format!("{what} / true, {ph}-phase"),
                style: Style::Observed,
                color: bound.color(),
                marker,
                points: over_true_bound(&of_phase, bound),
            });
        }
    }
    Some(fitted_over_true(
        format!(
            "renewal bound from the fitted workload over the bound from the true one ({} points)",
            pairs.len()
        ),
        "renewal bound, true workload (FN per arrival)",
        series,
    ))
}
