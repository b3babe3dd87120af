//! The plots checked the way a reader sees them: every text and the legend box lie
//! inside the canvas, no two texts overlap, the legend does not cover the plot area.
//! Text extents are estimated independently of the renderer (0.6 em per character, the
//! average of DejaVu Sans; superscripts at their own size), so a label the renderer
//! places too tightly shows up here.

use std::path::Path;

use crate::scratch::Scratch;

use rbf_judge::experiment::{self, output, ExperimentConfig, RunOptions};

#[derive(Debug, Clone, Copy)]
struct Rect {
    x0: f64,
    y0: f64,
    x1: f64,
    y1: f64,
}

impl Rect {
    fn overlaps(&self, o: &Rect) -> bool {
        // One pixel of slack: touching is not overlapping.
        self.x0 < o.x1 - 1.0 && o.x0 < self.x1 - 1.0 && self.y0 < o.y1 - 1.0 && o.y0 < self.y1 - 1.0
    }

    fn inside(&self, w: f64, h: f64) -> bool {
        self.x0 >= 0.0 && self.y0 >= 0.0 && self.x1 <= w && self.y1 <= h
    }
}

fn attr(tag: &str, name: &str) -> Option<f64> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    tag[start..].split('"').next()?.parse().ok()
}

/// Text content with tags removed, and the width of superscripts (9 px) separately.
fn text_extent(inner: &str, size: f64) -> f64 {
    let mut width = 0.0;
    let mut rest = inner;
    while let Some(open) = rest.find("<tspan") {
        width += rest[..open].chars().count() as f64 * 0.6 * size;
        let after = &rest[open..];
        let body_start = after.find('>').map_or(after.len(), |i| i + 1);
        let body_end = after.find("</tspan>").unwrap_or(after.len());
        width += after[body_start..body_end].chars().count() as f64 * 0.6 * 9.0;
        rest = after.get(body_end + "</tspan>".len()..).unwrap_or("");
    }
    let plain = rest
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    width + plain.chars().count() as f64 * 0.6 * size
}

/// Checks one SVG; returns what is wrong.
pub fn check(svg: &str) -> Result<(), String> {
    let head = svg.split('>').next().ok_or("no svg element")?;
    let (w, h) = (
        attr(head, "width").ok_or("no width")?,
        attr(head, "height").ok_or("no height")?,
    );
    let mut texts = Vec::new();
    for part in svg.split("<text").skip(1) {
        let tag_end = part.find('>').ok_or("unclosed text")?;
        let tag = &part[..tag_end];
        let inner = &part[tag_end + 1..part.find("</text>").ok_or("no </text>")?];
        if tag.contains("rotate(") {
            continue; // the y-axis label, checked by position below
        }
        let size = attr(tag, "font-size").unwrap_or(12.0);
        let (x, y) = (
            attr(tag, "x").ok_or("text without x")?,
            attr(tag, "y").ok_or("text without y")?,
        );
        let width = text_extent(inner, size);
        let x0 = if tag.contains("text-anchor=\"middle\"") {
            x - width / 2.0
        } else if tag.contains("text-anchor=\"end\"") {
            x - width
        } else {
            x
        };
        let r = Rect {
            x0,
            y0: y - 0.8 * size - 5.0, // superscripts rise 5 px
            x1: x0 + width,
            y1: y + 0.25 * size,
        };
        if !r.inside(w, h) {
            return Err(format!("text `{inner}` at {r:?} leaves the {w}x{h} canvas"));
        }
        texts.push((inner.to_string(), r));
    }
    for (i, (a, ra)) in texts.iter().enumerate() {
        for (b, rb) in &texts[i + 1..] {
            if ra.overlaps(rb) {
                return Err(format!("texts `{a}` {ra:?} and `{b}` {rb:?} overlap"));
            }
        }
    }
    let legend = svg
        .split("<rect class=\"legend\"")
        .nth(1)
        .ok_or("no legend box")?;
    let l = Rect {
        x0: attr(legend, "x").ok_or("legend x")?,
        y0: attr(legend, "y").ok_or("legend y")?,
        x1: attr(legend, "x").unwrap_or(0.0) + attr(legend, "width").ok_or("legend width")?,
        y1: attr(legend, "y").unwrap_or(0.0) + attr(legend, "height").ok_or("legend height")?,
    };
    if !l.inside(w, h) {
        return Err(format!("legend {l:?} leaves the {w}x{h} canvas"));
    }
    // The plot area is the first rect with a stroke after the background.
    let plot = svg
        .split("<rect x=")
        .nth(1)
        .map(|p| format!(" x={p}"))
        .ok_or("no plot area")?;
    let p = Rect {
        x0: attr(&plot, "x").ok_or("plot x")?,
        y0: attr(&plot, "y").ok_or("plot y")?,
        x1: attr(&plot, "x").unwrap_or(0.0) + attr(&plot, "width").ok_or("plot width")?,
        y1: attr(&plot, "y").unwrap_or(0.0) + attr(&plot, "height").ok_or("plot height")?,
    };
    if l.overlaps(&p) {
        return Err(format!("legend {l:?} covers the plot area {p:?}"));
    }
    for (t, r) in &texts {
        if r.overlaps(&l) && !(r.x0 >= l.x0 && r.x1 <= l.x1 + 1.0) {
            return Err(format!("text `{t}` {r:?} crosses the legend box {l:?}"));
        }
    }
    Ok(())
}

/// Checks every SVG in `dir`.
pub fn check_dir(dir: &Path) {
    let mut n = 0;
    for e in std::fs::read_dir(dir).expect("plot dir") {
        let p = e.expect("entry").path();
        if p.extension().is_some_and(|x| x == "svg") {
            let svg = std::fs::read_to_string(&p).expect("svg");
            if let Err(e) = check(&svg) {
                panic!("{}: {e}", p.display());
            }
            n += 1;
        }
    }
    assert!(n > 0, "no SVG in {}", dir.display());
}

/// The main job's plots at full size: geometric memory on a log-2 axis, observed
/// points with error bars, zeros on the floor marked 0, approximations labelled.
#[test]
fn quickstart_plots_read_well() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/quickstart.toml");
    let config = ExperimentConfig::load(&path).expect("quickstart parses");
    let results = experiment::run(&config, RunOptions::default()).expect("runs");
    let out = Scratch::new("svg-quickstart");
    let w = output::write(&results, &out).expect("written");
    check_dir(&out.join("plots"));
    let read = |stem: &str| {
        let p = w
            .plots
            .iter()
            .find(|p| p.to_string_lossy().contains(stem))
            .unwrap_or_else(|| panic!("no plot {stem}"));
        std::fs::read_to_string(p).expect("svg")
    };
    let fn_plot = read("01-fn-vs-memory");
    for power in ["11", "12", "14"] {
        assert!(
            fn_plot.contains(&format!(
                ">2<tspan dy=\"-5\" font-size=\"9\">{power}</tspan>"
            )),
            "log-2 tick 2^{power}"
        );
    }
    assert!(
        fn_plot.contains("drop-pins, fitted (approx.)"),
        "approximation labelled"
    );
    assert!(
        fn_plot.contains("stroke-dasharray=\"7 4\""),
        "approximations dashed"
    );
    // Error bars: a vertical stroke with caps per observed point.
    assert!(
        fn_plot.matches(" h6 M").count() >= 6,
        "error bars on observed points"
    );
    // The nDPI packet series has points with no false positive at all: drawn on the
    // floor, marked 0.
    let zeros = read("02-fp-vs-memory");
    assert!(zeros.contains(">0</text>"), "zero floor labelled");
    // The synthetic workload's renewal bound is proven for one phase: a solid line.
    let synthetic = read("04-fn-vs-memory");
    assert!(synthetic.contains("renewal upper bound, 1-phase"));
    assert!(synthetic.contains("renewal upper bound (not proven), 2-phase"));
}
