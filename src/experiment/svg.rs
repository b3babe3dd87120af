//! A small SVG line chart: enough for "bound vs observed" plots, no plotting
//! dependency. Log axes skip non-positive values (a zero FN cannot be drawn on a
//! log scale; the table still has it).

use std::fmt::Write;

/// One line of a chart.
#[derive(Clone, Debug)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// Dashed lines mark models, solid lines observations.
    pub dashed: bool,
}

#[derive(Clone, Debug)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub log_y: bool,
    pub series: Vec<Series>,
}

const W: f64 = 720.0;
const H: f64 = 440.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 230.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;
const COLORS: [&str; 10] = [
    "#000000", "#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
    "#17becf", "#7f7f7f",
];

/// An axis: data range mapped to pixels, optionally in log10.
struct Axis {
    log: bool,
    lo: f64,
    hi: f64,
}

impl Axis {
    fn new(values: impl Iterator<Item = f64>, log: bool) -> Option<Axis> {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values.filter(|v| v.is_finite() && (!log || *v > 0.0)) {
            let v = if log { v.log10() } else { v };
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if !lo.is_finite() {
            return None;
        }
        if log {
            lo = lo.floor();
            hi = hi.ceil().max(lo + 1.0);
        } else if hi - lo < 1e-300 {
            let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
            lo -= pad;
            hi += pad;
        }
        Some(Axis { log, lo, hi })
    }

    fn value(&self, v: f64) -> Option<f64> {
        if !v.is_finite() || (self.log && v <= 0.0) {
            return None;
        }
        let t = if self.log { v.log10() } else { v };
        Some((t - self.lo) / (self.hi - self.lo))
    }

    /// Tick positions (data units) and labels.
    fn ticks(&self) -> Vec<(f64, String)> {
        if self.log {
            let step = ((self.hi - self.lo) / 8.0).ceil().max(1.0);
            let mut t = Vec::new();
            let mut e = self.lo;
            while e <= self.hi + 1e-9 {
                t.push((10f64.powf(e), format!("1e{}", e as i64)));
                e += step;
            }
            t
        } else {
            let raw = (self.hi - self.lo) / 6.0;
            let mag = 10f64.powf(raw.log10().floor());
            let step = [1.0, 2.0, 5.0, 10.0]
                .iter()
                .map(|m| m * mag)
                .find(|s| *s >= raw)
                .unwrap_or(10.0 * mag);
            let mut t = Vec::new();
            let mut x = (self.lo / step).ceil() * step;
            while x <= self.hi + step * 1e-9 {
                t.push((x, short(x)));
                x += step;
            }
            t
        }
    }
}

fn short(x: f64) -> String {
    let a = x.abs();
    if a != 0.0 && !(1e-3..1e6).contains(&a) {
        format!("{x:.0e}")
    } else if a >= 1000.0 || x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{}", (x * 1e4).round() / 1e4)
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

impl Chart {
    /// The chart as an SVG document, or None when there is nothing drawable.
    pub fn render(&self) -> Option<String> {
        let all = || self.series.iter().flat_map(|s| s.points.iter());
        let xa = Axis::new(all().map(|p| p.0), self.log_x)?;
        let ya = Axis::new(all().map(|p| p.1), self.log_y)?;
        let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
        let px = |x: f64| xa.value(x).map(|t| LEFT + t * pw);
        let py = |y: f64| ya.value(y).map(|t| TOP + (1.0 - t) * ph);
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
        let _ = writeln!(
            s,
            r#"<text x="{}" y="22" text-anchor="middle" font-size="14">{}</text>"#,
            LEFT + pw / 2.0,
            escape(&self.title)
        );
        let _ = writeln!(
            s,
            r##"<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>"##
        );
        for (v, label) in xa.ticks() {
            if let Some(x) = px(v) {
                let _ = writeln!(
                    s,
                    r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{}" stroke="#ddd"/><text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"##,
                    TOP + ph,
                    TOP + ph + 16.0,
                    escape(&label)
                );
            }
        }
        for (v, label) in ya.ticks() {
            if let Some(y) = py(v) {
                let _ = writeln!(
                    s,
                    r##"<line x1="{LEFT}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
                    LEFT + pw,
                    LEFT - 6.0,
                    y + 4.0,
                    escape(&label)
                );
            }
        }
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            LEFT + pw / 2.0,
            H - 18.0,
            escape(&self.x_label)
        );
        let _ = writeln!(
            s,
            r#"<text transform="translate(18 {}) rotate(-90)" text-anchor="middle">{}</text>"#,
            TOP + ph / 2.0,
            escape(&self.y_label)
        );
        for (i, series) in self.series.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let dash = if series.dashed {
                r#" stroke-dasharray="6 4""#
            } else {
                ""
            };
            let pts: Vec<(f64, f64)> = series
                .points
                .iter()
                .filter_map(|&(x, y)| Some((px(x)?, py(y)?)))
                .collect();
            if pts.len() > 1 {
                let path: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
                let _ = writeln!(
                    s,
                    r#"<polyline fill="none" stroke="{color}" stroke-width="1.8"{dash} points="{}"/>"#,
                    path.join(" ")
                );
            }
            for (x, y) in &pts {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{x:.1}" cy="{y:.1}" r="3" fill="{color}"/>"#
                );
            }
            let ly = TOP + 10.0 + 18.0 * i as f64;
            let lx = W - RIGHT + 14.0;
            let _ = writeln!(
                s,
                r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{color}" stroke-width="1.8"{dash}/><text x="{}" y="{}">{}</text>"#,
                lx + 24.0,
                lx + 30.0,
                ly + 4.0,
                escape(&series.label)
            );
        }
        s.push_str("</svg>\n");
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axis_skips_zeros_and_draws_the_rest() {
        let c = Chart {
            title: "t <&>".into(),
            x_label: "M".into(),
            y_label: "FN".into(),
            log_x: true,
            log_y: true,
            series: vec![Series {
                label: "observed".into(),
                points: vec![(1000.0, 0.0), (2000.0, 1e-3), (4000.0, 1e-4)],
                dashed: false,
            }],
        };
        let svg = c.render().expect("drawable");
        assert_eq!(svg.matches("<circle").count(), 2);
        assert!(svg.contains("t &lt;&amp;&gt;"));
        let empty = Chart {
            series: vec![Series {
                label: "zeros".into(),
                points: vec![(1.0, 0.0)],
                dashed: false,
            }],
            ..c
        };
        assert!(empty.render().is_none());
    }
}
