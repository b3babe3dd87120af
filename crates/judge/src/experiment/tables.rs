//! A run's results for people: the table that fits a terminal (and the report), the
//! wide one with every column, and the verdict summary. Every bound column, mark and
//! summary line comes from the judged records ([`crate::compare::Record`]) through
//! [`crate::report::verdicts`], in [`Bound::ALL`] order.

use super::results::Results;
use super::row::Row;
use crate::compare::{Bound, Record, Regime, Standing};
use crate::report::verdicts::{self, mark, MARKS};
use crate::report::{sci, sci_or_dash, wrap, Table, WIDTH};
use rbf_predicted::model::false_negative::Claim;

/// The records of a row whose standing needs its reason said: checked, not proven
/// (approximations aside: never proven, and their claim says so) and not judged.
/// Proven and fitted-model bounds need none: the standing says it.
fn weak(r: &Row) -> impl Iterator<Item = &Record> {
    r.models.iter().filter(|m| match m.standing {
        Standing::Proven | Standing::ThisTrace | Standing::FittedModel => false,
        Standing::NotProven => m.claim != Claim::Approximation,
        Standing::Checked | Standing::NotJudged => true,
    })
}

/// The reasons behind a row's weaker standings, as notes: "markov-lower (not proven):
/// eq. 5 is argued ...".
pub fn bound_notes(r: &Row) -> Vec<String> {
    weak(r)
        .map(|m| format!("{} ({}): {}", m.bound.name(), m.standing, m.note))
        .collect()
}

/// The notes column of the CSV: the row's notes, then each bound's reason where its
/// standing is checked, not proven (approximations aside) or not judged.
pub fn notes_text(r: &Row) -> String {
    let mut notes = r.notes.clone();
    notes.extend(bound_notes(r));
    notes.join("; ")
}

/// One line per bound (see [`verdicts::summary`]).
pub fn summary(results: &Results) -> Vec<String> {
    let records: Vec<(usize, &crate::compare::Record)> = results
        .rows
        .iter()
        .flat_map(|r| r.models.iter().map(move |m| (r.point, m)))
        .collect();
    verdicts::summary(&records, results.confidence)
}

/// "3, 5-8, 12": point numbers with runs collapsed.
fn points(ps: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ps.len() {
        let mut j = i;
        while j + 1 < ps.len() && ps[j + 1] == ps[j] + 1 {
            j += 1;
        }
        out.push(if j > i + 1 {
            format!("{}-{}", ps[i], ps[j])
        } else if j == i + 1 {
            format!("{}, {}", ps[i], ps[j])
        } else {
            ps[i].to_string()
        });
        i = j + 1;
    }
    out.join(", ")
}

fn sigma_cell(r: &Row) -> String {
    r.sigma
        .map(|s| s.to_string())
        .or(r.max_inserts.map(|n| format!("N={n}")))
        .unwrap_or_else(|| "-".into())
}

type Cell = fn(&Row) -> String;
type Has = fn(&Row) -> bool;

/// The table that fits [`WIDTH`] columns: one row per point, grouped by source (a
/// title line each), settings that vary as columns and those that do not above; the
/// observed rates, the FP model, and as many bounds as fit, each value followed by its
/// verdict mark; then each note once with the points it concerns, what reading the
/// sources met (one line each), and what the columns and marks mean. With `markdown`
/// the marks' legend is left to the report's own section.
pub fn narrow(results: &Results, markdown: bool) -> String {
    let rows = &results.rows;
    let mut out = String::new();
    if rows.is_empty() {
        return out;
    }
    let (columns, fixed) = base_columns(rows);
    let (shown, left_out) = bounds_that_fit(rows, &columns);
    let groups = by_source(rows);
    if !fixed.is_empty() {
        out.push_str(&wrap(
            &format!("all points: {}", fixed.join(", ")),
            WIDTH,
            "    ",
        ));
    }
    out.push_str(&body(results, &groups, &columns, &shown));
    for n in &notes(results, &groups) {
        out.push_str(&wrap(&n.render(rows.len()), WIDTH, "    "));
    }
    for line in read_lines(results) {
        out.push_str(&wrap(&line, WIDTH, "    "));
    }
    if !left_out.is_empty() {
        let names: Vec<&str> = left_out.iter().map(|b| b.name()).collect();
        out.push_str(&wrap(
            &format!(
                "not shown for width (rbf run --wide, results.csv): {}",
                names.join(", ")
            ),
            WIDTH,
            "    ",
        ));
    }
    out.push_str(&wrap(&legend(&shown, markdown), WIDTH, "    "));
    out
}

/// The point number, the settings that vary (sigma always), the measures present; and
/// the settings that do not vary, as "name = value".
fn base_columns(rows: &[Row]) -> (Vec<(String, Cell)>, Vec<String>) {
    let varies = |f: Cell| rows.iter().any(|r| f(r) != f(&rows[0]));
    let settings: [(&str, &str, Cell); 4] = [
        ("ph", "phases", |r| r.phases.to_string()),
        ("M", "M", |r| r.memory.to_string()),
        ("k", "k", |r| r.hashes.to_string()),
        ("sigma", "sigma", sigma_cell),
    ];
    let mut fixed = Vec::new();
    let mut columns: Vec<(String, Cell)> = vec![("#".into(), |r| r.point.to_string())];
    for (head, long, f) in settings {
        if varies(f) || head == "sigma" {
            columns.push((head.into(), f));
        } else {
            fixed.push(format!("{long} = {}", f(&rows[0])));
        }
    }
    let measures: [(&str, Cell, Has); 3] = [
        (
            "obs FP",
            |r| sci_or_dash(r.observed_fp_count_instance),
            |r| r.observed_fp_count_instance.is_some(),
        ),
        (
            "FP model",
            |r| sci_or_dash(r.fp_model),
            |r| r.fp_model.is_some(),
        ),
        (
            "obs FN",
            |r| sci_or_dash(r.observed_fn),
            |r| r.observed_fn.is_some(),
        ),
    ];
    for (head, f, has) in measures {
        if rows.iter().any(has) {
            columns.push((head.into(), f));
        }
    }
    (columns, fixed)
}

/// The bounds present, in the list's order, split into those shown (each added while
/// the table still fits [`WIDTH`]) and those left out.
fn bounds_that_fit(rows: &[Row], columns: &[(String, Cell)]) -> (Vec<Bound>, Vec<Bound>) {
    let present: Vec<Bound> = Bound::ALL
        .into_iter()
        .filter(|b| rows.iter().any(|r| r.model(*b).is_some()))
        .collect();
    let width = |cols: &[(String, Cell)], bounds: &[Bound]| -> usize {
        let w = |head: &str, cell: &dyn Fn(&Row) -> String| {
            rows.iter()
                .map(|r| cell(r).chars().count())
                .chain([head.chars().count()])
                .max()
                .unwrap_or(0)
        };
        let n = cols.len() + bounds.len();
        cols.iter().map(|(h, f)| w(h, f)).sum::<usize>()
            + bounds
                .iter()
                .map(|b| w(b.short(), &|r: &Row| bound_cell(r, *b)))
                .sum::<usize>()
            + 2 * n.saturating_sub(1)
    };
    let mut shown: Vec<Bound> = Vec::new();
    for b in &present {
        let mut more = shown.clone();
        more.push(*b);
        if width(columns, &more) <= WIDTH {
            shown = more;
        }
    }
    let left_out = present
        .iter()
        .copied()
        .filter(|b| !shown.contains(b))
        .collect();
    (shown, left_out)
}

/// Rows grouped by source, in the order sources first appear.
fn by_source(rows: &[Row]) -> Vec<(&str, Vec<&Row>)> {
    let mut groups: Vec<(&str, Vec<&Row>)> = Vec::new();
    for r in rows {
        match groups.iter_mut().find(|(s, _)| *s == r.source) {
            Some((_, g)) => g.push(r),
            None => groups.push((&r.source, vec![r])),
        }
    }
    groups
}

/// The table: header and rule, then each source's title line above its rows.
fn body(
    results: &Results,
    groups: &[(&str, Vec<&Row>)],
    columns: &[(String, Cell)],
    shown: &[Bound],
) -> String {
    let header: Vec<String> = columns
        .iter()
        .map(|c| c.0.clone())
        .chain(shown.iter().map(|b| b.short().to_string()))
        .collect();
    let mut t = Table::new(header);
    let mut titles: Vec<(usize, String)> = Vec::new();
    let mut line = 0;
    for (name, members) in groups {
        let workload = results
            .sources
            .iter()
            .find(|s| s.name == *name)
            .and_then(|s| s.workload.as_deref());
        let title = match workload {
            Some(w) => format!("{name}: {w}"),
            None => name.to_string(),
        };
        titles.push((line, title));
        for r in members {
            let cells: Vec<String> = columns
                .iter()
                .map(|c| c.1(r))
                .chain(shown.iter().map(|b| bound_cell(r, *b)))
                .collect();
            t.row(cells);
            line += 1;
        }
    }
    // Interleave the title lines with the rendered rows (after the header and rule).
    let rendered = t.render();
    let mut lines = rendered.lines();
    let mut out = String::new();
    for _ in 0..2 {
        if let Some(l) = lines.next() {
            out.push_str(l);
            out.push('\n');
        }
    }
    for (i, l) in lines.enumerate() {
        for (_, title) in titles.iter().filter(|(at, _)| *at == i) {
            out.push_str(&wrap(title, WIDTH, "    "));
        }
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// Each note once, with the points it concerns; the same reason for several bounds
/// once, naming them. A source's own notes (said with its title) are left out.
fn notes(results: &Results, groups: &[(&str, Vec<&Row>)]) -> Vec<Note> {
    let mut notes: Vec<Note> = Vec::new();
    for (name, members) in groups {
        let skip: Vec<String> = results
            .sources
            .iter()
            .find(|s| s.name == *name)
            .map_or_else(Vec::new, |s| s.notes.clone());
        for r in members {
            for n in r.notes.iter().filter(|n| !skip.contains(n)) {
                Note::add(&mut notes, None, n, r.point);
            }
            for m in weak(r) {
                Note::add(&mut notes, Some((m.bound, m.standing)), &m.note, r.point);
            }
        }
    }
    notes
}

/// What reading the sources met, one line per source (sources that read the same
/// files and met the same things share it).
fn read_lines(results: &Results) -> Vec<String> {
    let mut read: Vec<(Vec<&str>, &str)> = Vec::new();
    for s in &results.sources {
        if let Some(d) = &s.ingest_digest {
            match read.iter_mut().find(|(_, x)| *x == d.as_str()) {
                Some((names, _)) => names.push(&s.name),
                None => read.push((vec![&s.name], d)),
            }
        }
    }
    read.into_iter()
        .map(|(names, d)| format!("read {}: {d}", names.join(", ")))
        .collect()
}

/// What the columns (and, outside markdown, the marks) mean.
fn legend(shown: &[Bound], markdown: bool) -> String {
    let mut legend = String::from(
        "columns: M in bits; sigma: set bits per array at a recycle (N=: insertions); obs FP: \
         count-instance FP; FP model: f_sigma (f_a if N-bounded); obs FN, bounds: FN per arrival",
    );
    for b in shown {
        if b.short() != b.name() {
            legend.push_str(&format!("; {}: {}", b.short(), b.label()));
        }
    }
    if !markdown {
        legend.push_str(&format!("; {MARKS}"));
    }
    legend
}

/// A note under the narrow table: its text, the bounds and standing it explains (for
/// a bound's reason), and the points it concerns.
struct Note {
    bounds: Vec<Bound>,
    standing: Option<Standing>,
    text: String,
    points: Vec<usize>,
}

impl Note {
    fn add(notes: &mut Vec<Note>, bound: Option<(Bound, Standing)>, text: &str, point: usize) {
        let standing = bound.map(|b| b.1);
        let n = match notes
            .iter_mut()
            .position(|n| n.text == text && n.standing == standing)
        {
            Some(i) => &mut notes[i],
            None => {
                notes.push(Note {
                    bounds: Vec::new(),
                    standing,
                    text: text.to_string(),
                    points: Vec::new(),
                });
                notes.last_mut().expect("just pushed")
            }
        };
        if let Some((b, _)) = bound {
            if !n.bounds.contains(&b) {
                n.bounds.push(b);
                n.bounds.sort_unstable();
            }
        }
        if !n.points.contains(&point) {
            n.points.push(point);
            n.points.sort_unstable();
        }
    }

    /// "[#1, 3, 5] renewal, renewal-conservative (not proven): eqs. 27-28 ..."
    fn render(&self, rows: usize) -> String {
        let at = if self.points.len() == rows {
            "all".to_string()
        } else {
            format!("#{}", points(&self.points))
        };
        match self.standing {
            Some(s) => {
                let names: Vec<&str> = self.bounds.iter().map(|b| b.name()).collect();
                format!("[{at}] {} ({s}): {}", names.join(", "), self.text)
            }
            None => format!("[{at}] {}", self.text),
        }
    }
}

/// A bound's value and verdict mark, or "-".
fn bound_cell(r: &Row, b: Bound) -> String {
    r.model(b)
        .map_or("-".into(), |m| format!("{}{}", sci(m.value), mark(m)))
}

/// Every column, one row per point (`rbf run --wide`); wider than a terminal.
pub fn wide(rows: &[Row]) -> String {
    wide_table(rows).render()
}

/// The table of [`wide`], for any renderer (text, or HTML in report.html).
pub fn wide_table(rows: &[Row]) -> Table {
    let present: Vec<Bound> = Bound::ALL
        .into_iter()
        .filter(|b| rows.iter().any(|r| r.model(*b).is_some()))
        .collect();
    let mut t = wide_header(&present);
    for r in rows {
        let notes: Vec<String> = r.notes.iter().cloned().chain(bound_notes(r)).collect();
        let refs = t.note_refs(&notes);
        let mut cells = wide_point_cells(r);
        for b in &present {
            cells.extend(wide_bound_cells(r, *b));
        }
        cells.push(refs);
        t.row(cells);
    }
    t
}

/// The wide table's columns: the point, the observations, three per bound `present`,
/// the notes; text columns left-aligned.
fn wide_header(present: &[Bound]) -> Table {
    let mut header: Vec<String> = [
        "#",
        "source",
        "M (bits)",
        "k",
        "sigma",
        "variant",
        "cycles/replay",
        "obs FP (count-instance)",
        "interval",
        "FP model",
        "obs FN (per arrival)",
        "interval",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for b in present {
        header.push(b.name().to_string());
        header.push("standing".into());
        header.push("verdict".into());
    }
    header.push("notes".into());
    let left: Vec<usize> = [1, 5]
        .into_iter()
        .chain((0..present.len()).flat_map(|i| [13 + 3 * i, 14 + 3 * i]))
        .chain([header.len() - 1])
        .collect();
    Table::new(header).left_aligned(&left)
}

/// A point's cells up to its bounds: the filter, the observations and the FP model.
fn wide_point_cells(r: &Row) -> Vec<String> {
    let iv = |lo: Option<f64>, hi: Option<f64>| match (lo, hi) {
        (Some(l), Some(h)) => format!("[{}, {}]", sci(l), sci(h)),
        _ => "-".into(),
    };
    vec![
        r.point.to_string(),
        r.source.clone(),
        r.memory.to_string(),
        r.hashes.to_string(),
        sigma_cell(r),
        r.variant(),
        r.cycles.map_or("-".into(), |c| format!("{c:.1}")),
        sci_or_dash(r.observed_fp_count_instance),
        iv(
            r.observed_fp_count_instance_low,
            r.observed_fp_count_instance_high,
        ),
        sci_or_dash(r.fp_model),
        sci_or_dash(r.observed_fn),
        iv(r.observed_fn_low, r.observed_fn_high),
    ]
}

/// A bound's three cells (value, standing, verdict), or a dash where not computed.
fn wide_bound_cells(r: &Row, b: Bound) -> [String; 3] {
    match r.model(b) {
        Some(m) => {
            let mut v = verdicts::verdict_cell(m);
            if m.regime == Some(Regime::Transient) {
                v.push_str(" (transient)");
            }
            [verdicts::value_cell(m), m.standing.to_string(), v]
        }
        None => ["-".to_string(), String::new(), String::new()],
    }
}

/// The terminal output of a run: the table (narrow, or `wide`) and the summary.
pub fn terminal(results: &Results, wide_table: bool) -> String {
    let mut s = if wide_table {
        wide(&results.rows)
    } else {
        narrow(results, false)
    };
    let summary = summary(results);
    if !summary.is_empty() {
        s.push('\n');
        for line in summary {
            s.push_str(&wrap(&line, WIDTH, "    "));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn point_lists_collapse_runs() {
        assert_eq!(points(&[0, 1, 2, 3, 5, 7, 8]), "0-3, 5, 7, 8");
        assert_eq!(points(&[4]), "4");
    }
}
