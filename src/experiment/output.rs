//! What a run leaves behind: `results.csv` and `results.parquet` (a polars
//! DataFrame), `results.json` (the rows plus what `rbf merge` needs), SVG plots and a
//! Markdown report that links them. Nothing here depends on timing or thread count.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use polars::prelude::*;
use serde::{Deserialize, Serialize};

use super::grid::Shard;
use super::plots;
use super::row::Row;
use super::row::{BoundColumns, JUDGED_BOUNDS};
use crate::error::{Error, Result};
use crate::output_file;
use crate::report::verdict::{percent, BoundVerdict, Side};
use crate::report::{sci, sci_or_dash, Notes, Table};

/// `results.json`: the rows and where they came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Results {
    pub format: String,
    pub name: String,
    pub description: String,
    /// Points in the whole grid (a shard holds only some of them).
    pub total_points: usize,
    pub shard: Shard,
    pub measures: Vec<String>,
    pub rows: Vec<Row>,
}

pub const RESULTS_FORMAT: &str = "rbf-experiment/2";

/// The files written, for the caller to print.
#[derive(Clone, Debug)]
pub struct Written {
    pub dir: PathBuf,
    pub csv: PathBuf,
    pub parquet: PathBuf,
    pub json: PathBuf,
    pub report: PathBuf,
    pub plots: Vec<PathBuf>,
}

fn frame(rows: &[Row]) -> Result<DataFrame> {
    fn col<T>(rows: &[Row], f: impl Fn(&Row) -> T) -> Vec<T> {
        rows.iter().map(f).collect()
    }
    fn verdict(v: Option<BoundVerdict>) -> Option<String> {
        v.map(|v| v.to_string().to_lowercase())
    }
    let mut df = df!(
        "point" => col(rows, |r| r.point as u64),
        "source" => col(rows, |r| r.source.clone()),
        "memory" => col(rows, |r| r.memory),
        "hashes" => col(rows, |r| r.hashes),
        "sigma" => col(rows, |r| r.sigma),
        "max_inserts" => col(rows, |r| r.max_inserts),
        "sigma_fraction" => col(rows, |r| r.sigma_fraction),
        "target_fp" => col(rows, |r| r.target_fp),
        "phases" => col(rows, |r| u32::from(r.phases)),
        "hashing" => col(rows, |r| r.hashing.clone()),
        "retaining" => col(rows, |r| r.retaining),
        "copy_over" => col(rows, |r| r.copy_over),
        "independent_halves" => col(rows, |r| r.independent_halves),
        "seeds" => col(rows, |r| r.seeds as u64),
        "arrivals" => col(rows, |r| r.arrivals),
        "cycles" => col(rows, |r| r.cycles),
        "observed_fp" => col(rows, |r| r.observed_fp),
        "observed_fp_count_instance" => col(rows, |r| r.observed_fp_count_instance),
        "observed_fp_count_instance_low" => col(rows, |r| r.observed_fp_count_instance_low),
        "observed_fp_count_instance_high" => col(rows, |r| r.observed_fp_count_instance_high),
        "observed_fn" => col(rows, |r| r.observed_fn),
        "observed_fn_low" => col(rows, |r| r.observed_fn_low),
        "observed_fn_high" => col(rows, |r| r.observed_fn_high),
        "fp_model" => col(rows, |r| r.fp_model),
        "capacity_sigma" => col(rows, |r| r.capacity_sigma),
        "capacity_worst_case" => col(rows, |r| r.capacity_worst_case),
        "capacity_ratio" => col(rows, |r| r.capacity_ratio),
        "fn_renewal_upper" => col(rows, |r| r.fn_renewal_upper),
        "fn_renewal_fitted" => col(rows, |r| r.fn_renewal_fitted),
        "fn_renewal_conservative" => col(rows, |r| r.fn_renewal_conservative),
        "fn_markov_lower" => col(rows, |r| r.fn_markov_lower),
        "fn_markov_swr" => col(rows, |r| r.fn_markov_swr),
        "fn_markov_uniform" => col(rows, |r| r.fn_markov_uniform),
        "fn_markov_biuniform" => col(rows, |r| r.fn_markov_biuniform),
        "fn_drop_pins" => col(rows, |r| r.fn_drop_pins),
        "fn_markov_disabling" => col(rows, |r| r.fn_markov_disabling),
        "fitted_workload" => col(rows, |r| r.fitted_workload),
        "renewal_guaranteed" => col(rows, |r| r.renewal_guaranteed),
        "markov_guaranteed" => col(rows, |r| r.markov_guaranteed),
    )
    .map_err(|e| Error::invalid(format!("cannot build the results table: {e}")))?;
    // Each judged bound: its verdict in the steady-state or the transient column, and
    // how far the observed point is beyond it.
    for b in &JUDGED_BOUNDS {
        let name = b.column;
        let more = df!(
            format!("{name}_verdict_steady").as_str() => col(rows, |r| verdict((b.verdict)(r).steady)),
            format!("{name}_verdict_transient").as_str() => col(rows, |r| verdict((b.verdict)(r).transient)),
            format!("{name}_excess").as_str() => col(rows, |r| (b.verdict)(r).excess),
        )
        .map_err(|e| Error::invalid(format!("cannot build the results table: {e}")))?;
        df = df
            .hstack(more.columns())
            .map_err(|e| Error::invalid(format!("cannot build the results table: {e}")))?;
    }
    let notes = df!("notes" => col(rows, Row::notes_text))
        .map_err(|e| Error::invalid(format!("cannot build the results table: {e}")))?;
    df.hstack(notes.columns())
        .map_err(|e| Error::invalid(format!("cannot build the results table: {e}")))
}

fn write_text(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|e| Error::io(path, e))
}

/// What [`write`] puts in an output directory. A directory that holds anything else
/// is not ours to replace.
const OURS: [&str; 5] = [
    "results.csv",
    "results.parquet",
    "results.json",
    "report.md",
    "plots",
];

/// Checks, before any work, that `dir` can take a run's outputs: its parent can be
/// written, it holds no input, and it holds nothing but outputs of an earlier run
/// (the directory is replaced as a whole, so a user's other files must not be there).
pub fn check_dir(dir: &Path, inputs: &[&Path]) -> Result<()> {
    output_file::check_output_dir(dir, inputs)?;
    if holds_only_ours(dir)? {
        crate::progress::note(&format!(
            "{} holds an earlier run's outputs; they will be replaced once the new ones are complete",
            dir.display()
        ));
    }
    Ok(())
}

/// Whether `dir` holds outputs of an earlier run; an error when it holds anything
/// else.
fn holds_only_ours(dir: &Path) -> Result<bool> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(false);
    };
    let mut earlier = false;
    for e in entries {
        let e = e.map_err(|e| Error::io(dir, e))?;
        let name = e.file_name().to_string_lossy().into_owned();
        let foreign = if name == "plots" {
            std::fs::read_dir(e.path())
                .map_err(|err| Error::io(e.path(), err))?
                .flatten()
                .find(|p| p.path().extension().is_none_or(|x| x != "svg"))
                .map(|p| format!("plots/{}", p.file_name().to_string_lossy()))
        } else {
            (!OURS.contains(&name.as_str())).then_some(name)
        };
        if let Some(f) = foreign {
            return Err(Error::invalid(format!(
                "refusing to write {}: it holds `{f}`, which rbf did not write, and an output directory is replaced as a whole; choose a new or empty directory",
                dir.display()
            )));
        }
        earlier = true;
    }
    Ok(earlier)
}

/// Writes every output of `results` to `dir`. They are written to a new directory
/// beside it that then takes its place, so `dir` holds either the previous complete
/// outputs or these, never a mix (see [`output_file::replace_dir`]).
pub fn write(results: &Results, dir: &Path) -> Result<Written> {
    holds_only_ours(dir)?;
    let stage = output_file::temp_dir_for(dir, "new")?;
    let written = write_into(results, &stage, dir).and_then(|w| {
        output_file::replace_dir(&stage, dir)?;
        Ok(w)
    });
    if written.is_err() {
        let _ = std::fs::remove_dir_all(&stage);
    }
    written
}

/// Writes the outputs into `stage`; the paths returned are where they will be in `dir`.
fn write_into(results: &Results, stage: &Path, dir: &Path) -> Result<Written> {
    std::fs::create_dir_all(stage.join("plots")).map_err(|e| Error::io(stage, e))?;
    let mut df = frame(&results.rows)?;
    output_file::frame::write_csv(&df, &stage.join("results.csv"))?;
    output_file::frame::write_parquet(&mut df, &stage.join("results.parquet"))?;
    let text = serde_json::to_string_pretty(results)
        .map_err(|e| Error::invalid(format!("cannot serialise results: {e}")))?;
    write_text(&stage.join("results.json"), &text)?;
    let mut plot_paths = Vec::new();
    for (stem, chart) in plots::charts(&results.rows) {
        if let Some(svg) = chart.render() {
            let name = format!("{stem}.svg");
            write_text(&stage.join("plots").join(&name), &svg)?;
            plot_paths.push(dir.join("plots").join(name));
        }
    }
    write_text(
        &stage.join("report.md"),
        &markdown(results, &plot_paths, dir),
    )?;
    Ok(Written {
        dir: dir.to_path_buf(),
        csv: dir.join("results.csv"),
        parquet: dir.join("results.parquet"),
        json: dir.join("results.json"),
        report: dir.join("report.md"),
        plots: plot_paths,
    })
}

/// Reads a `results.json` written by [`write`] (a run's or a shard's).
pub fn read(path: &Path) -> Result<Results> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let r: Results = serde_json::from_str(&text)
        .map_err(|e| Error::invalid(format!("{}: not an rbf results file: {e}", path.display())))?;
    if r.format != RESULTS_FORMAT {
        return Err(Error::invalid(format!(
            "{}: format `{}`, expected `{RESULTS_FORMAT}`",
            path.display(),
            r.format
        )));
    }
    Ok(r)
}

fn verdict(v: Option<BoundVerdict>) -> String {
    v.map_or(String::new(), |v| v.to_string())
}

/// What the narrow table's columns hold, printed once under it.
const UNITS: &str = "M in bits; sigma: set bits per array before a recycle (N=: insertions); \
obs FP: observed count-instance FP rate (FP paper); FP model: f_sigma (f_a for N-bounded); \
obs FN: false negatives per arrival; renewal: the FN paper's renewal upper bound; steady / \
transient: the bound against the observed FN interval (holds = the whole interval is at or \
below it, VIOLATED = the whole interval is above it, undecided = it straddles the bound), in \
the column of the replay's regime (transient: fewer than 10 recycles per replay); fitted, \
conserv.: the renewal bound on the workload fitted from the trace (point estimate, where it \
differs from renewal) and at the conservative end of the fit (verdicts: summary, --wide, CSV)";

fn sigma_cell(r: &Row) -> String {
    r.sigma
        .map(|s| s.to_string())
        .or(r.max_inserts.map(|n| format!("N={n}")))
        .unwrap_or_else(|| "-".into())
}

/// The terminal and Markdown tables: one block per source and filter variant (phase
/// count first, then hashing, retaining, ...), columns that fit [`crate::report::WIDTH`], notes once at the end. The wide
/// form ([`wide_table`]) and the CSV have every column.
pub fn narrow_tables(rows: &[Row]) -> String {
    let mut notes = Notes::default();
    let mut groups: Vec<(String, Vec<&Row>)> = Vec::new();
    for r in rows {
        let title = format!("{} ({})", r.source, r.variant());
        match groups.iter_mut().find(|(t, _)| *t == title) {
            Some((_, g)) => g.push(r),
            None => groups.push((title, vec![r])),
        }
    }
    let mut out = String::new();
    for (title, members) in &groups {
        let fitted = members.iter().any(|r| r.fitted_workload);
        // Notes every row of the block shares go on its title line.
        let common: Vec<&String> = members[0]
            .notes
            .iter()
            .filter(|n| members.iter().all(|r| r.notes.contains(n)))
            .collect();
        // Settings shared by the whole block go on its title line too.
        type Cell = fn(&Row) -> String;
        let settings: [(&str, &str, Cell); 3] = [
            ("M", "M", |r| r.memory.to_string()),
            ("k", "k", |r| r.hashes.to_string()),
            ("sigma", "sigma", sigma_cell),
        ];
        let constant = |f: Cell| members.iter().all(|r| f(r) == f(members[0]));
        let mut line = title.clone();
        for (_, short, f) in settings {
            if members.len() > 1 && constant(f) {
                line.push_str(&format!(", {short}={}", f(members[0])));
            }
        }
        if fitted {
            line.push_str(": FN models on the workload fitted from the trace");
        }
        if !common.is_empty() {
            line.push_str(&format!("; notes {}", notes.refs(&common)));
        }
        out.push_str(&crate::report::wrap(&line, crate::report::WIDTH, "    "));
        let shown: Vec<(&str, Cell)> = settings
            .iter()
            .filter(|(_, _, f)| members.len() == 1 || !constant(*f))
            .map(|&(h, _, f)| (h, f))
            .collect();
        let mut measures: Vec<(&str, Cell)> = vec![
            ("obs FP", |r| sci_or_dash(r.observed_fp_count_instance)),
            ("FP model", |r| sci_or_dash(r.fp_model)),
            ("obs FN", |r| sci_or_dash(r.observed_fn)),
            ("renewal", |r| sci_or_dash(r.fn_renewal_upper)),
            ("steady", |r| verdict(r.renewal_verdict.steady)),
            ("transient", |r| verdict(r.renewal_verdict.transient)),
        ];
        // The fitted workload's renewal bound next to the true one (synthetic sources
        // with `fit`), and the conservative end of the fit, when the block has them.
        if members
            .iter()
            .any(|r| r.fn_renewal_fitted.is_some() && r.fn_renewal_fitted != r.fn_renewal_upper)
        {
            measures.push(("fitted", |r| sci_or_dash(r.fn_renewal_fitted)));
        }
        // Its verdicts are in the summary under the table and in --wide / the CSV.
        if members.iter().any(|r| r.fn_renewal_conservative.is_some()) {
            measures.push(("conserv.", |r| sci_or_dash(r.fn_renewal_conservative)));
        }
        let header = std::iter::once("#")
            .chain(shown.iter().map(|c| c.0))
            .chain(measures.iter().map(|c| c.0))
            .chain(["notes"]);
        let last = shown.len() + measures.len();
        let mut t = Table::new(header).left_aligned(&[last - 1, last, last + 1]);
        for r in members {
            let cells = std::iter::once(r.point.to_string())
                .chain(shown.iter().map(|c| c.1(r)))
                .chain(measures.iter().map(|c| c.1(r)))
                .chain([notes.refs(r.notes.iter().filter(|n| !common.contains(n)))]);
            t.row(cells.collect::<Vec<_>>());
        }
        out.push_str(&t.render());
        out.push('\n');
    }
    out.push_str(&crate::report::wrap(
        &format!("columns: {UNITS}"),
        crate::report::WIDTH,
        "    ",
    ));
    out.push_str(&notes.render());
    out
}

/// Every judged column, one row per point (`rbf run --wide`); wider than a terminal.
pub fn wide_table(rows: &[Row]) -> String {
    let mut t = Table::new([
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
        "renewal",
        "steady",
        "transient",
        "fitted",
        "conservative",
        "steady",
        "transient",
        "markov-lower",
        "steady",
        "transient",
        "drop-pins",
        "notes",
    ])
    .left_aligned(&[1, 5, 13, 14, 17, 18, 20, 21, 23]);
    let iv = |lo: Option<f64>, hi: Option<f64>| match (lo, hi) {
        (Some(l), Some(h)) => format!("[{}, {}]", sci(l), sci(h)),
        _ => "-".into(),
    };
    for r in rows {
        let refs = t.note_refs(&r.notes);
        t.row([
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
            sci_or_dash(r.fn_renewal_upper),
            verdict(r.renewal_verdict.steady),
            verdict(r.renewal_verdict.transient),
            sci_or_dash(r.fn_renewal_fitted),
            sci_or_dash(r.fn_renewal_conservative),
            verdict(r.renewal_conservative_verdict.steady),
            verdict(r.renewal_conservative_verdict.transient),
            sci_or_dash(r.fn_markov_lower),
            verdict(r.markov_lower_verdict.steady),
            verdict(r.markov_lower_verdict.transient),
            sci_or_dash(r.fn_drop_pins),
            refs,
        ]);
    }
    let mut s = t.render();
    s.push_str(&crate::report::wrap(
        &format!("columns: {UNITS}"),
        usize::MAX,
        "",
    ));
    s
}

/// One line per judged bound and regime: how many points hold, are undecided, are
/// violated, and where the observed point lies beyond the bound (by how much).
pub fn verdict_summary(rows: &[Row]) -> String {
    let mut out = String::new();
    for b in &JUDGED_BOUNDS {
        let (name, get, proven) = (b.name, b.verdict, b.proven);
        for (regime, pick) in [
            (
                "steady state",
                (|c: &BoundColumns| c.steady) as fn(&BoundColumns) -> _,
            ),
            ("transient", |c: &BoundColumns| c.transient),
        ] {
            let judged: Vec<(&Row, BoundVerdict)> = rows
                .iter()
                .filter_map(|r| Some((r, pick(get(r))?)))
                .collect();
            if judged.is_empty() {
                continue;
            }
            let count = |v: BoundVerdict| judged.iter().filter(|(_, x)| *x == v).count();
            let dir = match b.side {
                Side::AtMost => "above",
                Side::AtLeast => "below",
            };
            let beyond: Vec<String> = judged
                .iter()
                .filter_map(|(r, _)| {
                    let e = get(r).excess?;
                    Some(format!("{} ({} {dir})", r.point, percent(e)))
                })
                .collect();
            let n = judged.len();
            let _ = write!(
                out,
                "{name}, {regime}: holds at {}, undecided at {}, VIOLATED at {} of {n} point{}",
                count(BoundVerdict::Holds),
                count(BoundVerdict::Undecided),
                count(BoundVerdict::Violated),
                if n == 1 { "" } else { "s" }
            );
            let unproven = judged
                .iter()
                .filter(|(r, _)| proven(r) == Some(false) || r.fitted_workload)
                .count();
            if unproven > 0 {
                let _ = write!(out, " (not a proven bound at {unproven} of them)");
            }
            if beyond.is_empty() {
                out.push_str(".\n");
            } else {
                let _ = writeln!(
                    out,
                    "; observed point beyond the bound at {}.",
                    beyond.join(", ")
                );
            }
        }
    }
    out
}

/// The terminal output of a run: the narrow tables (or the wide one) and the verdicts.
pub fn terminal(results: &Results, wide: bool) -> String {
    let mut s = if wide {
        wide_table(&results.rows)
    } else {
        narrow_tables(&results.rows)
    };
    let summary = verdict_summary(&results.rows);
    if !summary.is_empty() {
        s.push('\n');
        for line in summary.lines() {
            s.push_str(&crate::report::wrap(line, crate::report::WIDTH, "    "));
        }
    }
    s
}

fn markdown(results: &Results, plots: &[PathBuf], dir: &Path) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# {}\n", results.name);
    if !results.description.is_empty() {
        let _ = writeln!(s, "{}\n", results.description.trim());
    }
    let _ = writeln!(
        s,
        "{} of {} grid points (shard {}/{}); measures: {}.\n\nFiles: [results.csv](results.csv), [results.parquet](results.parquet), [results.json](results.json).\n",
        results.rows.len(),
        results.total_points,
        results.shard.index,
        results.shard.count,
        results.measures.join(", ")
    );
    let summary = verdict_summary(&results.rows);
    if !summary.is_empty() {
        s.push_str("## Bounds against observed FN\n\n");
        for line in summary.lines() {
            let _ = writeln!(s, "- {line}");
        }
        s.push('\n');
    }
    if !plots.is_empty() {
        s.push_str(
            "## Plots\n\nObserved (exact replay): points with their intervals as error bars. \
             Proven bounds: solid lines. Approximations, estimates and bounds not proven here: \
             dashed lines, labelled \"(approx.)\". Zeros are drawn on the axis floor marked 0.\n\n",
        );
        for p in plots {
            let rel = p.strip_prefix(dir).unwrap_or(p);
            let _ = writeln!(s, "![{0}]({0})\n", rel.display());
        }
    }
    s.push_str("## Results\n\nEvery column is in [results.csv](results.csv).\n\n```text\n");
    s.push_str(&narrow_tables(&results.rows));
    s.push_str("```\n\n");
    s.push_str(MEANING);
    s
}

const MEANING: &str = "## What the numbers mean\n\n\
- **obs FP**: observed FP paper count-instance rate: arrivals that are first in their cycle \
(new or non-repeat) classified as repeat, over such arrivals. `observed_fp` in the CSV is the FN \
paper's FP: false positives (new messages classified repeat) over all arrivals. Intervals \
(`observed_fp_count_instance_low/high`) are built like the FN interval, clamped to [0, 1].\n\
- **FP model**: the FP paper's average FP rate f_sigma (one phase, or f_sigma^2 for two phases) \
or f_a for N-bounded filters; an estimate, not a bound.\n\
- **obs FN**: false negatives (non-repeats classified new) over all arrivals, mean over seeds; \
`observed_fn_low/high` is a t-interval over seeds (batch means over cycles with one seed), \
clamped to [0, 1].\n\
- **renewal**: the FN paper's renewal upper bound (§5), proven for the paper's arrival model \
(stationary Q, p_r, placement); `renewal_guaranteed` says whether it is proven for the variant. \
On real traces the model is fitted, so the bound is guaranteed for the fitted model, not for \
the trace.\n\
- **steady / transient** (`renewal_verdict_steady`, `renewal_verdict_transient`, and the same \
for `markov_lower`): the bound against the observed FN interval. *holds*: the whole interval \
is on the bound's side; *violated*: the whole interval is on the other side; *undecided*: the \
interval straddles the bound. The bounds describe the steady state; a replay with fewer than \
10 recycles per replay measures the transient after the warm-up, so its verdict goes in the \
transient column. `renewal_excess` / `markov_lower_excess`: how far the observed point is \
beyond the bound, relative to the bound.\n\
- **renewal (fitted)**, **renewal (conservative)**: the renewal bound on the workload fitted from \
the trace (its reuse profile and p_r, docs/FIT.md), at the point estimate and at the conservative \
end of the fit's uncertainty (the profile's upper 99 % band, the worst p_r of its interval), \
judged like the renewal bound (`renewal_conservative_verdict_*`). On synthetic sources with \
`fit = true` they sit next to the bound on the true workload (`renewal`).\n\
- **markov-lower / swr / uniform / bi-uniform**: Markov-chain estimates (§4); they are bounds \
only under the conditions the notes state (e.g. not for p_r < 1).\n\
- **drop-pins**: a fast approximation (eqs. 10-11), no bound.\n\
- **capacity**: messages per cycle a filter of M bits holds at the target FP under the sigma-bounded \
model and under classic worst-case sizing (FP paper eq. 1); the ratio shows how much worst-case \
sizing under-uses memory.\n";
