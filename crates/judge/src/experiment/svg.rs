//! A small SVG chart for "bound vs observed" plots, no plotting dependency.
//!
//! What a reviewer expects of a figure, and how it is done here:
//! - observations are points with their confidence intervals as error bars (no line:
//!   the points are measurements, not a curve); proven bounds are solid lines;
//!   approximations, estimates and bounds not proven for the case are dashed and their
//!   label ends in "(approx.)" ([`Style`]);
//! - geometric sizes get a log-2 axis ticked at powers of two, other wide ranges a
//!   log-10 axis, integer quantities integer ticks ([`Scale`], [`AxisSpec::integer`]);
//! - axis ranges are fitted to the data; on a log axis, zeros (and values more than
//!   [`LOG_SPAN`] decades below the largest) are drawn on a floor band under the axis,
//!   labelled "0" (or "<" the axis bottom), so they stay visible instead of vanishing;
//! - the legend sits right of the plot on a canvas widened to hold its longest label,
//!   so it is never clipped.

use std::fmt::Write;

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Measured: markers with error bars, no connecting line.
    Observed,
    /// A bound proven for every point of the series: solid line.
    Proven,
    /// An approximation, an estimate, or a bound not proven here: dashed line, and the
    /// label says "(approx.)".
    Approx,
}

/// Marker shapes, one per filter variant sharing a chart (1-phase, 2-phase, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Square,
    Triangle,
    Diamond,
}

impl Marker {
    pub const ALL: [Marker; 4] = [
        Marker::Circle,
        Marker::Square,
        Marker::Triangle,
        Marker::Diamond,
    ];
}

/// One measured or modelled value, with its interval when it has one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub interval: Option<(f64, f64)>,
}

/// One series of a chart.
#[derive(Clone, Debug)]
pub struct Series {
    pub label: String,
    pub style: Style,
    /// The measure's colour: the same measure has the same colour in every chart.
    pub color: &'static str,
    pub marker: Marker,
    pub points: Vec<Point>,
}

/// How an axis maps values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    Linear,
    Log10,
    /// Ticks at powers of two: memory sizes doubling along the grid.
    Log2,
}

#[derive(Clone, Debug)]
pub struct AxisSpec {
    pub label: String,
    pub scale: Scale,
    /// The quantity is an integer (k, N, sigma): ticks only at integers.
    pub integer: bool,
}

#[derive(Clone, Debug)]
pub struct Chart {
    pub title: String,
    pub x: AxisSpec,
    pub y: AxisSpec,
    pub series: Vec<Series>,
}

/// Line spacing of a wrapped title (14 px text: line height 1.4 em).
const TITLE_LINE: f64 = 20.0;

/// A log axis spans at most this many decades below its largest value; smaller
/// positive values are drawn on the floor band with the zeros.
pub const LOG_SPAN: f64 = 6.0;

const PLOT_W: f64 = 460.0;
const PLOT_H: f64 = 320.0;
const LEFT: f64 = 78.0;
const TOP: f64 = 44.0;
const BOTTOM: f64 = 56.0;
/// The floor band's distance below the plot area.
const FLOOR_GAP: f64 = 24.0;
const FONT: f64 = 12.0;
const LEGEND_ROW: f64 = 18.0;
const LEGEND_PAD: f64 = 10.0;
/// Legend sample glyph width, and the gap before its text.
const SAMPLE: f64 = 28.0;

/// A conservative width estimate of `text` at `size` px in a sans-serif font (DejaVu
/// Sans, the widest common default, averages about 0.6 em); superscripts are smaller,
/// but counting them at full size errs on the safe side.
pub fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * 0.62 * size
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A tick label: plain text, or a base with a superscript exponent.
#[derive(Clone, Debug, PartialEq)]
enum Label {
    Plain(String),
    Power(u32, i64),
}

impl Label {
    fn svg(&self) -> String {
        match self {
            Label::Plain(s) => escape(s),
            Label::Power(b, e) => format!(
                r#"{b}<tspan dy="-5" font-size="9">{}</tspan>"#,
                e.to_string().replace('-', "\u{2212}")
            ),
        }
    }
}

/// An axis fitted to its data: a range in transformed units and its ticks.
struct Axis {
    scale: Scale,
    lo: f64,
    hi: f64,
    ticks: Vec<(f64, Label)>,
}

fn transform(scale: Scale, v: f64) -> f64 {
    match scale {
        Scale::Linear => v,
        Scale::Log10 => v.log10(),
        Scale::Log2 => v.log2(),
    }
}

/// Tick step for a linear range: 1, 2 or 5 times a power of ten, about six ticks.
fn nice_step(range: f64, integer: bool) -> f64 {
    let raw = (range / 6.0).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    if integer {
        step.max(1.0).round()
    } else {
        step
    }
}

/// m * 10^d as a short decimal ("0.0005", "300") or, far from 1, as "5e-7".
fn decimal(m: f64, d: i64) -> Label {
    if (-4..=4).contains(&d) {
        let digits = (-d).max(0) as usize;
        Label::Plain(format!("{:.digits$}", m * 10f64.powi(d as i32)))
    } else {
        Label::Plain(format!("{m}e{d}"))
    }
}

fn linear_label(x: f64, step: f64) -> Label {
    // -0.0 would print as "-0".
    let x = if x == 0.0 { 0.0 } else { x };
    let a = x.abs();
    if a != 0.0 && !(1e-3..1e6).contains(&a) {
        Label::Plain(format!("{x:.1e}").replace(".0e", "e"))
    } else {
        let digits = (-step.log10().floor()).max(0.0) as usize;
        Label::Plain(format!("{x:.digits$}"))
    }
}

/// A linear axis's ticks from `lo` to `hi` (padded), at a nice step.
fn linear_ticks(lo: f64, hi: f64, integer: bool) -> (f64, f64, Vec<(f64, Label)>) {
    let mut ticks = Vec::new();
    let step = nice_step(hi - lo, integer);
    let mut x = (lo / step).ceil() * step;
    while x <= hi + step * 1e-9 {
        ticks.push((x, linear_label(x, step)));
        x += step;
    }
    (lo, hi, ticks)
}

/// A log axis's ticks at powers of its base between the exponents `lo` and `hi`
/// (padded), at most about eight.
fn log_ticks(scale: Scale, lo: f64, hi: f64) -> (f64, f64, Vec<(f64, Label)>) {
    let mut ticks = Vec::new();
    let base = if scale == Scale::Log2 { 2.0 } else { 10.0 };
    let first = lo.ceil() as i64;
    let last = hi.floor() as i64;
    let count = (last - first + 1).max(0);
    let every = ((count as f64) / 8.0).ceil().max(1.0) as i64;
    let mut e = first;
    while e <= last {
        ticks.push((f64::powi(base, e as i32), Label::Power(base as u32, e)));
        e += every;
    }
    // A log-10 axis spanning less than about two decades also gets ticks
    // between the powers of ten (2 and 5, or every integer multiple when
    // that is still too few), all labelled as decimals for consistency.
    if scale == Scale::Log10 && count < 2 {
        ticks = decade_ticks(lo, hi);
    }
    (lo, hi, ticks)
}

/// Ticks at 1, 2 and 5 times the powers of ten in [10^lo, 10^hi], or at every integer
/// multiple when those are fewer than three.
fn decade_ticks(lo: f64, hi: f64) -> Vec<(f64, Label)> {
    let mut ticks = Vec::new();
    for multiples in [&[2.0, 5.0][..], &[2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]] {
        ticks.clear();
        for d in (lo.floor() as i64)..=(hi.ceil() as i64) {
            for m in std::iter::once(&1.0).chain(multiples) {
                let v = m * 10f64.powi(d as i32);
                let t = v.log10();
                if t >= lo && t <= hi {
                    ticks.push((v, decimal(*m, d)));
                }
            }
        }
        if ticks.len() >= 3 {
            break;
        }
    }
    ticks
}

impl Axis {
    /// The axis for `values` (finite; on log scales only those in range are passed).
    fn fit(spec: &AxisSpec, values: &[f64]) -> Option<Axis> {
        let (lo, hi) = values
            .iter()
            .map(|&v| transform(spec.scale, v))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
                (l.min(v), h.max(v))
            });
        if !lo.is_finite() {
            return None;
        }
        let span = hi - lo;
        let pad = if span > 0.0 {
            0.05 * span
        } else {
            match spec.scale {
                Scale::Linear if lo == 0.0 => 1.0,
                Scale::Linear => 0.1 * lo.abs(),
                _ => 0.5,
            }
        };
        let (lo, hi, ticks) = match spec.scale {
            Scale::Linear => linear_ticks(lo - pad, hi + pad, spec.integer),
            Scale::Log2 | Scale::Log10 => {
                log_ticks(spec.scale, lo - pad.max(0.15), hi + pad.max(0.15))
            }
        };
        Some(Axis {
            scale: spec.scale,
            lo,
            hi,
            ticks,
        })
    }

    /// Position in [0, 1] of `v`, None when it is below or outside a log axis's range.
    fn pos(&self, v: f64) -> Option<f64> {
        if !v.is_finite() || (self.scale != Scale::Linear && v <= 0.0) {
            return None;
        }
        let t = (transform(self.scale, v) - self.lo) / (self.hi - self.lo);
        (t >= -1e-9).then_some(t)
    }
}

/// The y values a series contributes: points and interval ends.
fn y_values(series: &[Series]) -> Vec<f64> {
    let mut v = Vec::new();
    for s in series {
        for p in &s.points {
            v.push(p.y);
            if let Some((lo, hi)) = p.interval {
                v.extend([lo, hi]);
            }
        }
    }
    v.retain(|y| y.is_finite());
    v
}

fn marker_svg(out: &mut String, m: Marker, x: f64, y: f64, r: f64, color: &str, filled: bool) {
    let fill = if filled { color } else { "white" };
    let style = format!(r#"fill="{fill}" stroke="{color}" stroke-width="1.4""#);
    let _ = match m {
        Marker::Circle => writeln!(out, r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r}" {style}/>"#),
        Marker::Square => writeln!(
            out,
            r#"<rect x="{:.1}" y="{:.1}" width="{}" height="{}" {style}/>"#,
            x - r,
            y - r,
            2.0 * r,
            2.0 * r
        ),
        Marker::Triangle => writeln!(
            out,
            r#"<polygon points="{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}" {style}/>"#,
            x,
            y - 1.2 * r,
            x - 1.1 * r,
            y + 0.8 * r,
            x + 1.1 * r,
            y + 0.8 * r
        ),
        Marker::Diamond => writeln!(
            out,
            r#"<polygon points="{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}" {style}/>"#,
            x,
            y - 1.3 * r,
            x + 1.3 * r,
            y,
            x,
            y + 1.3 * r,
            x - 1.3 * r,
            y
        ),
    };
}

fn dash(style: Style) -> &'static str {
    match style {
        Style::Approx => r#" stroke-dasharray="7 4""#,
        _ => "",
    }
}

/// The y axis, and the floor band's label when some values go on it. Log axes: the
/// range covers the positive values within [`LOG_SPAN`] decades of the largest;
/// everything below (zeros included) goes on the floor band.
fn y_axis(spec: &AxisSpec, ys: &[f64]) -> Option<(Axis, Option<String>)> {
    if spec.scale == Scale::Linear {
        return Some((Axis::fit(spec, ys)?, None));
    }
    let top = ys.iter().copied().fold(0.0f64, f64::max);
    let cut = top * 10f64.powf(-LOG_SPAN);
    let shown: Vec<f64> = ys
        .iter()
        .copied()
        .filter(|y| *y > 0.0 && *y >= cut)
        .collect();
    let below: Vec<f64> = ys
        .iter()
        .copied()
        .filter(|y| *y < cut || *y <= 0.0)
        .collect();
    let axis = match Axis::fit(spec, &shown) {
        Some(a) => a,
        // Nothing above the floor: no decades to invent, the floor says it all.
        None => Axis {
            ticks: Vec::new(),
            ..Axis::fit(spec, &[0.1, 1.0])?
        },
    };
    let label = if below.is_empty() {
        None
    } else if below.iter().all(|y| *y == 0.0) {
        Some("0".to_string())
    } else {
        // Every value on the floor is below `cut`, so below this power of ten.
        Some(format!("< 1e{}", cut.log10().ceil() as i64))
    };
    Some((axis, label))
}

/// Where everything goes on the canvas: the axes, the wrapped title, the plot area's
/// top, the floor band and the legend box.
struct Layout {
    xa: Axis,
    ya: Axis,
    floor_label: Option<String>,
    floor_h: f64,
    title_lines: Vec<String>,
    top: f64,
    legend_x: f64,
    legend_w: f64,
    legend_h: f64,
    width: f64,
    height: f64,
}

impl Layout {
    fn new(chart: &Chart) -> Option<Layout> {
        let xs: Vec<f64> = chart
            .series
            .iter()
            .flat_map(|s| s.points.iter())
            .map(|p| p.x)
            .filter(|x| x.is_finite() && (chart.x.scale == Scale::Linear || *x > 0.0))
            .collect();
        let xa = Axis::fit(&chart.x, &xs)?;
        let ys = y_values(&chart.series);
        if ys.is_empty() {
            return None;
        }
        let (ya, floor_label) = y_axis(&chart.y, &ys)?;
        let floor_h = if floor_label.is_some() {
            FLOOR_GAP
        } else {
            0.0
        };
        // Title: wrapped to the plot's width.
        let title_lines = wrap_title(&chart.title, PLOT_W + 60.0);
        let top = TOP + TITLE_LINE * (title_lines.len() as f64 - 1.0);
        let legend_w = chart
            .series
            .iter()
            .map(|s| text_width(&s.label, FONT))
            .fold(0.0, f64::max)
            + SAMPLE
            + 2.0 * LEGEND_PAD
            + 6.0;
        let legend_h = chart.series.len() as f64 * LEGEND_ROW + 2.0 * LEGEND_PAD - 4.0;
        let legend_x = LEFT + PLOT_W + 16.0;
        Some(Layout {
            width: (legend_x + legend_w + 12.0).ceil(),
            height: (top + (PLOT_H + floor_h).max(legend_h) + BOTTOM).ceil(),
            xa,
            ya,
            floor_label,
            floor_h,
            title_lines,
            top,
            legend_x,
            legend_w,
            legend_h,
        })
    }

    fn floor_y(&self) -> f64 {
        self.top + PLOT_H + self.floor_h
    }

    fn px(&self, x: f64) -> Option<f64> {
        self.xa.pos(x).map(|t| LEFT + t * PLOT_W)
    }

    /// Values off the bottom of the y axis (zeros on a log axis) go on the floor band.
    fn py(&self, y: f64) -> f64 {
        match self.ya.pos(y) {
            Some(t) if t >= 0.0 => self.top + (1.0 - t.min(1.0)) * PLOT_H,
            _ => self.floor_y(),
        }
    }
}

impl Chart {
    /// The chart as an SVG document, or None when it has no finite point.
    pub fn render(&self) -> Option<String> {
        let l = Layout::new(self)?;
        let (width, height) = (l.width, l.height);
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="{FONT}">"#
        );
        let _ = writeln!(
            s,
            r#"<rect width="{width}" height="{height}" fill="white"/>"#
        );
        self.draw_frame(&mut s, &l);
        self.draw_series(&mut s, &l);
        self.draw_legend(&mut s, &l);
        s.push_str("</svg>\n");
        Some(s)
    }

    /// Title, plot area, grid lines and tick labels, the floor band, axis labels.
    fn draw_frame(&self, s: &mut String, l: &Layout) {
        let (top, floor_y) = (l.top, l.floor_y());
        for (i, line) in l.title_lines.iter().enumerate() {
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="14">{}</text>"#,
                LEFT + PLOT_W / 2.0,
                22.0 + TITLE_LINE * i as f64,
                escape(line)
            );
        }
        let _ = writeln!(
            s,
            r##"<rect x="{LEFT}" y="{top}" width="{PLOT_W}" height="{PLOT_H}" fill="none" stroke="#444"/>"##
        );
        draw_grid(s, l);
        if l.ya.ticks.is_empty() {
            let _ = writeln!(
                s,
                r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#555">every value is {}</text>"##,
                LEFT + PLOT_W / 2.0,
                top + PLOT_H / 2.0,
                escape(l.floor_label.as_deref().unwrap_or("0"))
            );
        }
        if let Some(label) = &l.floor_label {
            draw_floor(s, l, label);
        }
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            LEFT + PLOT_W / 2.0,
            floor_y + 42.0,
            escape(&self.x.label)
        );
        let _ = writeln!(
            s,
            r#"<text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
            top + PLOT_H / 2.0,
            escape(&self.y.label)
        );
    }

    /// Models first, observations on top; observed series sharing x values are spread
    /// a few pixels apart so their error bars do not hide each other.
    fn draw_series(&self, s: &mut String, l: &Layout) {
        let observed: Vec<usize> = (0..self.series.len())
            .filter(|&i| self.series[i].style == Style::Observed)
            .collect();
        let mut order: Vec<usize> = (0..self.series.len())
            .filter(|i| !observed.contains(i))
            .collect();
        order.extend(&observed);
        for i in order {
            let dodge = match observed.iter().position(|&o| o == i) {
                Some(j) if observed.len() > 1 => {
                    (j as f64 - (observed.len() - 1) as f64 / 2.0) * 5.0
                }
                _ => 0.0,
            };
            draw_one_series(s, l, &self.series[i], dodge);
        }
    }

    /// The legend, right of the plot area, boxed.
    fn draw_legend(&self, s: &mut String, l: &Layout) {
        let (legend_x, top, legend_w, legend_h) = (l.legend_x, l.top, l.legend_w, l.legend_h);
        let _ = writeln!(
            s,
            r##"<rect class="legend" x="{legend_x:.1}" y="{top:.1}" width="{legend_w:.1}" height="{legend_h:.1}" fill="white" stroke="#bbb"/>"##
        );
        for (i, series) in self.series.iter().enumerate() {
            let ly = top + LEGEND_PAD + 5.0 + LEGEND_ROW * i as f64;
            let lx = legend_x + LEGEND_PAD;
            match series.style {
                Style::Observed => {
                    let _ = writeln!(
                        s,
                        r#"<path d="M{:.1},{:.1} v12 M{:.1},{:.1} h6 M{:.1},{:.1} h6" stroke="{}" stroke-width="1.2"/>"#,
                        lx + 11.0,
                        ly - 6.0,
                        lx + 8.0,
                        ly - 6.0,
                        lx + 8.0,
                        ly + 6.0,
                        series.color
                    );
                }
                _ => {
                    let _ = writeln!(
                        s,
                        r#"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{}" stroke-width="1.8"{}/>"#,
                        lx + 22.0,
                        series.color,
                        dash(series.style)
                    );
                }
            }
            let filled = series.style != Style::Approx;
            marker_svg(s, series.marker, lx + 11.0, ly, 3.0, series.color, filled);
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
                lx + SAMPLE,
                ly + 4.0,
                escape(&series.label)
            );
        }
    }
}

/// The grid lines and tick labels of both axes.
fn draw_grid(s: &mut String, l: &Layout) {
    let (top, floor_y) = (l.top, l.floor_y());
    for (v, label) in &l.xa.ticks {
        if let Some(x) = l.px(*v) {
            let _ = writeln!(
                s,
                r##"<line x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{:.1}" stroke="#e4e4e4"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                top + PLOT_H,
                floor_y + 18.0,
                label.svg()
            );
        }
    }
    for (v, label) in &l.ya.ticks {
        let y = l.py(*v);
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e4e4e4"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT + PLOT_W,
            LEFT - 6.0,
            y + 4.0,
            label.svg()
        );
    }
}

/// The floor band: a dotted baseline under a break in the y axis.
fn draw_floor(s: &mut String, l: &Layout, label: &str) {
    let floor_y = l.floor_y();
    let _ = writeln!(
        s,
        r##"<line x1="{LEFT}" y1="{floor_y:.1}" x2="{:.1}" y2="{floor_y:.1}" stroke="#888" stroke-dasharray="2 3"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
        LEFT + PLOT_W,
        LEFT - 6.0,
        floor_y + 4.0,
        escape(label)
    );
    let b = l.top + PLOT_H + l.floor_h / 2.0;
    let _ = writeln!(
        s,
        r##"<path d="M{:.1},{:.1} l8,-3 M{:.1},{:.1} l8,-3" stroke="#444"/>"##,
        LEFT - 4.0,
        b - 1.0,
        LEFT - 4.0,
        b + 3.0
    );
}

/// One series: error bars (observed) or a line (models), then its markers, shifted
/// right by `dodge` pixels.
fn draw_one_series(s: &mut String, l: &Layout, series: &Series, dodge: f64) {
    let pts: Vec<(f64, f64, &Point)> = series
        .points
        .iter()
        .filter_map(|p| Some((l.px(p.x)?, l.py(p.y), p)))
        .collect();
    match series.style {
        Style::Observed => {
            for (x, _, p) in &pts {
                if let Some((lo, hi)) = p.interval {
                    let (y0, y1) = (l.py(lo), l.py(hi));
                    let x = x + dodge;
                    let _ = writeln!(
                        s,
                        r#"<path d="M{x:.1},{y0:.1} V{y1:.1} M{:.1},{y0:.1} h6 M{:.1},{y1:.1} h6" stroke="{}" stroke-width="1.2" fill="none"/>"#,
                        x - 3.0,
                        x - 3.0,
                        series.color
                    );
                }
            }
        }
        Style::Proven | Style::Approx if pts.len() > 1 => {
            let path: Vec<String> = pts
                .iter()
                .map(|(x, y, _)| format!("{x:.1},{y:.1}"))
                .collect();
            let _ = writeln!(
                s,
                r#"<polyline fill="none" stroke="{}" stroke-width="1.8"{} points="{}"/>"#,
                series.color,
                dash(series.style),
                path.join(" ")
            );
        }
        _ => {}
    }
    let r = if series.style == Style::Observed {
        3.5
    } else {
        2.8
    };
    let filled = series.style != Style::Approx;
    for (x, y, _) in &pts {
        marker_svg(s, series.marker, x + dodge, *y, r, series.color, filled);
    }
}

/// The title broken into lines no wider than `width` pixels (at 14 px).
fn wrap_title(title: &str, width: f64) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in title.split(' ') {
        let last = lines.last_mut().expect("at least one line");
        if !last.is_empty() && text_width(&format!("{last} {word}"), 14.0) > width {
            lines.push(word.to_string());
        } else {
            if !last.is_empty() {
                last.push(' ');
            }
            last.push_str(word);
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(label: &str, style: Style, points: &[(f64, f64)]) -> Series {
        Series {
            label: label.into(),
            style,
            color: "#000000",
            marker: Marker::Circle,
            points: points
                .iter()
                .map(|&(x, y)| Point {
                    x,
                    y,
                    interval: None,
                })
                .collect(),
        }
    }

    fn chart(x: Scale, y: Scale, series: Vec<Series>) -> Chart {
        Chart {
            title: "t <&>".into(),
            x: AxisSpec {
                label: "M".into(),
                scale: x,
                integer: true,
            },
            y: AxisSpec {
                label: "FN".into(),
                scale: y,
                integer: false,
            },
            series,
        }
    }

    #[test]
    fn zeros_are_drawn_on_the_floor_band_marked_zero() {
        let c = chart(
            Scale::Log2,
            Scale::Log10,
            vec![series(
                "observed",
                Style::Observed,
                &[(4096.0, 0.0), (16384.0, 1e-3), (65536.0, 1e-4)],
            )],
        );
        let svg = c.render().expect("drawable");
        assert_eq!(
            svg.matches("<circle").count(),
            3 + 1,
            "3 points and the legend"
        );
        assert!(svg.contains(">0</text>"), "floor labelled 0");
        assert!(svg.contains("t &lt;&amp;&gt;"));
        // Powers of two on the x axis, no fractional ones.
        assert!(svg.contains(r#">2<tspan dy="-5" font-size="9">12</tspan>"#));
        assert!(svg.contains(r#">2<tspan dy="-5" font-size="9">16</tspan>"#));
        let only_zeros = chart(
            Scale::Linear,
            Scale::Log10,
            vec![series("zeros", Style::Observed, &[(1.0, 0.0), (2.0, 0.0)])],
        );
        let svg = only_zeros.render().expect("zeros are drawn");
        assert!(svg.contains(">0</text>"));
    }

    #[test]
    fn tiny_values_do_not_stretch_the_axis() {
        let c = chart(
            Scale::Log2,
            Scale::Log10,
            vec![series(
                "drop-pins (approx.)",
                Style::Approx,
                &[(4096.0, 0.3), (16384.0, 0.05), (65536.0, 3e-16)],
            )],
        );
        let svg = c.render().expect("drawable");
        assert!(svg.contains("&lt; 1e-"), "floor for the tiny value: {svg}");
        assert!(
            !svg.contains("16</tspan>") || svg.contains(">2<tspan"),
            "{svg}"
        );
        assert!(svg.contains("stroke-dasharray=\"7 4\""));
    }

    #[test]
    fn integer_axes_have_integer_ticks() {
        // A log y axis, so that a fractional label could only be on the x axis.
        let c = chart(
            Scale::Linear,
            Scale::Log10,
            vec![series(
                "a",
                Style::Proven,
                &[(2.0, 1e-3), (3.0, 1e-2), (4.0, 1e-1)],
            )],
        );
        let svg = c.render().expect("drawable");
        for k in ["2", "3", "4"] {
            assert!(svg.contains(&format!(">{k}</text>")), "tick {k}: {svg}");
        }
        assert!(!svg.contains(".5</text>"), "{svg}");
    }

    #[test]
    fn long_legends_widen_the_canvas() {
        let long = "renewal upper bound, fitted workload (approx.) (2-phase)";
        let c = chart(
            Scale::Linear,
            Scale::Linear,
            vec![series(long, Style::Approx, &[(1.0, 1.0), (2.0, 2.0)])],
        );
        let svg = c.render().expect("drawable");
        let w: f64 = svg
            .split("width=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .and_then(|s| s.parse().ok())
            .expect("width");
        assert!(w >= LEFT + PLOT_W + text_width(long, FONT), "{w}");
    }
}
