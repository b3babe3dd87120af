//! `report.html`: a run's report as one self-contained page for a browser. It holds
//! what report.md says, from the same pieces (the summary lines of [`tables`], and
//! [`texts`]: the plots' legend, the sources, what the numbers mean), plus what a Markdown file cannot: the table with
//! every column ([`tables::wide_table`], the `--wide` table; sortable when JavaScript
//! runs), the plots inline (the SVG files' own text), and the config that produced the
//! run. Nothing is fetched: the page's Content-Security-Policy allows no source but
//! itself, so a reader's browser (and the tests' headless Chromium) would refuse a
//! fetch. It fits a 1280-pixel window: wide tables and code scroll in their own boxes.

use std::fmt::Write as _;

use super::results::Results;
use super::tables;
use super::texts::{self, Plot};
use crate::compare::BoundVerdict;
use crate::report::html::{blocks, escape, inline};

/// Inline scripts and styles only; no network, no other file.
const POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

const STYLE: &str = r#"
:root { color-scheme: light; }
body { margin: 0; color: #1b1b1b; background: #fff;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 8px 24px 48px; }
h1 { font-size: 1.7em; margin: .5em 0 .2em; }
h2 { font-size: 1.3em; margin: 1.8em 0 .6em; border-bottom: 1px solid #ddd; padding-bottom: .2em; }
h3 { font-size: 1.05em; margin: 1.2em 0 .3em; }
p, li, dd { overflow-wrap: anywhere; }
nav { font-size: .95em; }
nav a { margin-right: 1em; }
.verdicts li { margin: .3em 0; }
.plots { display: flex; flex-wrap: wrap; gap: 20px; }
figure { margin: 0; flex: 0 1 auto; max-width: 100%; }
figure svg { display: block; max-width: 100%; height: auto; }
figcaption { font-size: .85em; color: #555; }
.scroll { overflow-x: auto; max-width: 100%; border: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 13px; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 8px; white-space: nowrap; border-bottom: 1px solid #eee; }
th { background: #f3f3f3; user-select: none; }
th.n, td.n { text-align: right; }
th.t, td.t { text-align: left; }
th[aria-sort="ascending"]::after { content: " \25B2"; }
th[aria-sort="descending"]::after { content: " \25BC"; }
tbody tr:nth-child(even) { background: #fafafa; }
/* The point number stays in view while the table scrolls sideways. */
th:first-child, td:first-child { position: sticky; left: 0; background: #fff; }
th:first-child { background: #f3f3f3; }
tbody tr:nth-child(even) td:first-child { background: #fafafa; }
td.holds { color: #156b2a; }
td.violated { color: #b00020; font-weight: 600; }
td.undecided { color: #7a5f00; }
td.not-judged { color: #666; font-style: italic; }
ol.notes { font-size: .9em; }
pre { overflow-x: auto; background: #f6f6f6; padding: 12px; font-size: 13px; }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
footer { color: #666; font-size: .85em; margin-top: 3em; }
"#;

/// Click a heading of the results table to sort by it (numbers as numbers, "-" and
/// text after them); without JavaScript the table stays in grid order.
const SORT: &str = r##"
document.querySelectorAll("#results table").forEach(function (table) {
  var heads = table.tHead.rows[0].cells;
  Array.prototype.forEach.call(heads, function (th, col) {
    th.title = "sort by this column";
    th.style.cursor = "pointer";
    th.addEventListener("click", function () {
      var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
      var key = function (row) {
        var text = row.cells[col] ? row.cells[col].textContent : "";
        var x = parseFloat(text);
        return isNaN(x) ? [1, text] : [0, x];
      };
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x[0] !== y[0]) { return x[0] - y[0]; }
        return (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0) * dir;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
"##;

/// A verdict cell's CSS class, from the words [`crate::report::verdicts::verdict_cell`]
/// writes.
fn verdict_class(cell: &str) -> Option<&'static str> {
    let verdicts = [
        (BoundVerdict::Holds, "holds"),
        (BoundVerdict::Violated, "violated"),
        (BoundVerdict::Undecided, "undecided"),
    ];
    if cell == "not judged" {
        return Some("not-judged");
    }
    verdicts
        .into_iter()
        .find(|(v, _)| cell.starts_with(&v.to_string()))
        .map(|(_, class)| class)
}

/// The page for `results`, with `plots` (as written beside it) inline.
pub fn html(results: &Results, plots: &[Plot]) -> String {
    let mut s = String::new();
    let title = escape(&results.name);
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{POLICY}\">\n\
         <meta name=\"generator\" content=\"rbf {}\">\n\
         <title>{title}: rbf report</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n\
         <h1>{title}</h1>\n",
        env!("CARGO_PKG_VERSION")
    );
    if !results.description.is_empty() {
        let _ = writeln!(s, "<p>{}</p>", escape(results.description.trim()));
    }
    let _ = writeln!(s, "<p>{}</p>", escape(&texts::extent(results)));
    let summary = tables::summary(results);
    nav(&mut s, results, plots, &summary);
    verdicts_section(&mut s, &summary);
    plots_section(&mut s, plots);
    results_section(&mut s, results);
    sources_section(&mut s, results);
    s.push_str("<section id=\"meaning\">\n");
    s.push_str(&blocks(texts::MEANING));
    s.push_str("</section>\n");
    config_section(&mut s, results);
    files_section(&mut s);
    let _ = write!(
        s,
        "<footer>Written by rbf {}.</footer>\n</main>\n<script>{SORT}</script>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION")
    );
    s
}

/// Links to the sections the page has.
fn nav(s: &mut String, results: &Results, plots: &[Plot], summary: &[String]) {
    let sections = [
        ("verdicts", "Verdicts", !summary.is_empty()),
        ("plots", "Plots", !plots.is_empty()),
        ("results", "Results", !results.rows.is_empty()),
        ("sources", "Sources", !results.sources.is_empty()),
        ("meaning", "What the numbers mean", true),
        ("config", "Config", true),
        ("files", "Files", true),
    ];
    s.push_str("<nav>");
    for (id, name, shown) in sections {
        if shown {
            let _ = write!(s, "<a href=\"#{id}\">{name}</a>");
        }
    }
    s.push_str("</nav>\n");
}

fn verdicts_section(s: &mut String, summary: &[String]) {
    if summary.is_empty() {
        return;
    }
    s.push_str(
        "<section id=\"verdicts\">\n<h2>Bounds against observed FN</h2>\n<ul class=\"verdicts\">\n",
    );
    for line in summary {
        let _ = writeln!(s, "<li>{}</li>", escape(line));
    }
    s.push_str("</ul>\n</section>\n");
}

fn plots_section(s: &mut String, plots: &[Plot]) {
    if plots.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "<section id=\"plots\">\n<h2>Plots</h2>\n<p>{}</p>\n<div class=\"plots\">",
        escape(texts::PLOTS_LEGEND)
    );
    for p in plots {
        // The file's own SVG: no ids or styles that could clash with the page's.
        let svg = p.svg.trim();
        let path = escape(&p.path);
        let _ = writeln!(
            s,
            "<figure>\n{svg}\n<figcaption><a href=\"{path}\">{path}</a></figcaption>\n</figure>"
        );
    }
    s.push_str("</div>\n</section>\n");
}

fn results_section(s: &mut String, results: &Results) {
    if results.rows.is_empty() {
        return;
    }
    s.push_str(
        "<section id=\"results\">\n<h2>Results</h2>\n<p>Every column, one row per grid point \
         (the table of <code>rbf run --wide</code>); click a heading to sort. Numbered notes \
         are under the table. The same numbers, unrounded, are in results.csv.</p>\n",
    );
    s.push_str(&tables::wide_table(&results.rows).html(verdict_class));
    s.push_str("</section>\n");
}

/// Each source: what the models ran on and what reading it met, per file in a fold.
fn sources_section(s: &mut String, results: &Results) {
    if results.sources.is_empty() {
        return;
    }
    let sources = texts::source_sections(results);
    s.push_str("<section id=\"sources\">\n<h2>Sources</h2>\n");
    for src in &results.sources {
        let _ = writeln!(s, "<h3>{}</h3>", escape(&src.name));
        let read = sources.iter().find(|x| x.name == src.name);
        let mut lines: Vec<&str> = match read {
            Some(r) => r.lines.clone(),
            None => src.notes.iter().map(String::as_str).collect(),
        };
        // The workload in a few words, unless a note already starts with it.
        if let Some(w) = src.workload.as_deref() {
            if !lines.iter().any(|l| l.starts_with(w.trim_end_matches(')'))) {
                lines.insert(0, w);
            }
        }
        let lines: Vec<String> = lines.into_iter().map(escape).collect();
        if !lines.is_empty() {
            let _ = writeln!(s, "<ul>\n<li>{}</li>\n</ul>", lines.join("</li>\n<li>"));
        }
        if let Some(r) = read.filter(|r| !r.per_file.is_empty()) {
            let _ = writeln!(
                s,
                "<details><summary>Per file ({} lines)</summary>\n<ul>",
                r.per_file.len()
            );
            for w in &r.per_file {
                let _ = writeln!(s, "<li>{}</li>", escape(w));
            }
            s.push_str("</ul>\n</details>\n");
        }
    }
    s.push_str("</section>\n");
}

fn config_section(s: &mut String, results: &Results) {
    s.push_str("<section id=\"config\">\n<h2>Config</h2>\n");
    match &results.config {
        Some(c) => {
            s.push_str(
                "<p>The experiment file as rbf read it: defaults filled in, paths as resolved \
                 from the config file's directory (relative to where rbf ran).</p>\n",
            );
            let _ = writeln!(s, "<pre>{}</pre>", escape(c.trim_end()));
        }
        None => s.push_str(
            "<p>Not recorded: these results were written by an rbf that did not keep its \
             config in results.json.</p>\n",
        ),
    }
    s.push_str("</section>\n");
}

fn files_section(s: &mut String) {
    s.push_str("<section id=\"files\">\n<h2>Files</h2>\n<ul>\n");
    for (file, what) in texts::FILES {
        let _ = writeln!(
            s,
            "<li><a href=\"{file}\">{file}</a>: {}</li>",
            inline(what)
        );
    }
    s.push_str(
        "<li><a href=\"report.md\">report.md</a>: this report in Markdown, linking the plots</li>\n\
         <li>plots/: the plots above, as SVG files</li>\n</ul>\n</section>\n",
    );
}
