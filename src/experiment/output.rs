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
use crate::error::{Error, Result};
use crate::output_file;
use crate::report::{self, Table};

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

pub const RESULTS_FORMAT: &str = "rbf-experiment/1";

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
    df!(
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
        "renewal_guaranteed" => col(rows, |r| r.renewal_guaranteed),
        "renewal_holds" => col(rows, |r| r.renewal_holds),
        "conservative_holds" => col(rows, |r| r.conservative_holds),
        "lower_holds" => col(rows, |r| r.lower_holds),
        "notes" => col(rows, |r| r.notes.clone()),
    )
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
    report::frame::write_csv(&df, &stage.join("results.csv"))?;
    report::frame::write_parquet(&mut df, &stage.join("results.parquet"))?;
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

fn sci(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{v:.3e}"))
}

fn flag(x: Option<bool>) -> &'static str {
    match x {
        Some(true) => "yes",
        Some(false) => "NO",
        None => "-",
    }
}

/// The columns of the terminal and Markdown tables (the CSV has all of them). The
/// fitted-workload renewal columns appear only when some row has them.
fn summary_table(rows: &[Row]) -> Table {
    let fitted = rows
        .iter()
        .any(|r| r.fn_renewal_fitted.is_some() && r.fn_renewal_fitted != r.fn_renewal_upper);
    let conservative = rows.iter().any(|r| r.fn_renewal_conservative.is_some());
    let mut header = vec![
        "#",
        "source",
        "M",
        "k",
        "sigma",
        "variant",
        "obs FP (ci)",
        "FP model",
        "obs FN",
        "renewal",
        "holds",
    ];
    if fitted {
        header.push("renewal (fitted)");
    }
    if conservative {
        header.extend(["renewal (conservative)", "holds"]);
    }
    header.extend(["drop-pins", "markov-lower"]);
    let mut t = Table::new(header);
    for r in rows {
        let mut extra = Vec::new();
        if fitted {
            extra.push(sci(r.fn_renewal_fitted));
        }
        if conservative {
            extra.push(sci(r.fn_renewal_conservative));
            extra.push(flag(r.conservative_holds).to_string());
        }
        let cells = [
            r.point.to_string(),
            r.source.clone(),
            r.memory.to_string(),
            r.hashes.to_string(),
            r.sigma
                .map(|s| s.to_string())
                .or(r.max_inserts.map(|n| format!("N={n}")))
                .unwrap_or_else(|| "-".into()),
            r.variant(),
            sci(r.observed_fp_count_instance),
            sci(r.fp_model),
            sci(r.observed_fn),
            sci(r.fn_renewal_upper),
            flag(r.renewal_holds).to_string(),
        ];
        t.row(
            cells
                .into_iter()
                .chain(extra)
                .chain([sci(r.fn_drop_pins), sci(r.fn_markov_lower)]),
        );
    }
    t
}

/// The readable terminal table.
pub fn terminal(results: &Results) -> String {
    let mut s = summary_table(&results.rows).render();
    let noted = results.rows.iter().filter(|r| !r.notes.is_empty()).count();
    if noted > 0 {
        let _ = writeln!(
            s,
            "{noted} of {} rows carry notes (caveats, unproven bounds, errors): see the `notes` column and report.md",
            results.rows.len()
        );
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
    let violations: Vec<&Row> = results
        .rows
        .iter()
        .filter(|r| r.renewal_holds == Some(false))
        .collect();
    if results.rows.iter().any(|r| r.renewal_holds.is_some()) {
        let _ = writeln!(
            s,
            "**Renewal upper bound vs observed FN:** holds at {} of {} points{}.\n",
            results
                .rows
                .iter()
                .filter(|r| r.renewal_holds == Some(true))
                .count(),
            results
                .rows
                .iter()
                .filter(|r| r.renewal_holds.is_some())
                .count(),
            if violations.is_empty() {
                String::new()
            } else {
                format!(
                    "; below the observed interval at points {}",
                    violations
                        .iter()
                        .map(|r| r.point.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        );
    }
    let conservative: Vec<&Row> = results
        .rows
        .iter()
        .filter(|r| r.conservative_holds.is_some())
        .collect();
    if !conservative.is_empty() {
        let _ = writeln!(
            s,
            "**Renewal bound at the conservative end of the fit vs observed FN:** holds at {} of {} points.\n",
            conservative
                .iter()
                .filter(|r| r.conservative_holds == Some(true))
                .count(),
            conservative.len()
        );
    }
    if !plots.is_empty() {
        s.push_str(
            "## Plots\n\nSolid lines are observed (exact replay), dashed lines are models.\n\n",
        );
        for p in plots {
            let rel = p.strip_prefix(dir).unwrap_or(p);
            let _ = writeln!(s, "![{0}]({0})\n", rel.display());
        }
    }
    s.push_str("## Results\n\n```text\n");
    s.push_str(&summary_table(&results.rows).render());
    s.push_str("```\n\n");
    let noted: Vec<&Row> = results
        .rows
        .iter()
        .filter(|r| !r.notes.is_empty())
        .collect();
    if !noted.is_empty() {
        s.push_str("## Notes\n\n");
        for r in noted {
            let _ = writeln!(s, "- point {}: {}", r.point, r.notes);
        }
        s.push('\n');
    }
    s.push_str(MEANING);
    s
}

const MEANING: &str = "## What the numbers mean\n\n\
- **obs FP (ci)**: observed FP paper count-instance rate: arrivals that are first in their cycle \
(new or non-repeat) classified as repeat, over such arrivals. `observed_fp` in the CSV is the FN \
paper's FP: false positives (new messages classified repeat) over all arrivals.\n\
- **FP model**: the FP paper's average FP rate f_sigma (one phase, or f_sigma^2 for two phases) \
or f_a for N-bounded filters; an estimate, not a bound.\n\
- **obs FN**: false negatives (non-repeats classified new) over all arrivals, mean over seeds; \
`observed_fn_low/high` is a t-interval over seeds (batch means over cycles with one seed).\n\
- **renewal**: the FN paper's renewal upper bound (§5), proven for the paper's arrival model \
(stationary Q, p_r, placement); `renewal_guaranteed` says whether it is proven for the variant, \
`holds` whether it is at or above the observed interval. On real traces the model is fitted, \
so the bound is guaranteed for the fitted model, not for the trace.\n\
- **renewal (fitted)**, **renewal (conservative)**: the renewal bound on the workload fitted from \
the trace (its reuse profile and p_r, docs/FIT.md), at the point estimate and at the conservative \
end of the fit's uncertainty (the profile's upper 99 % band, the worst p_r of its interval). On \
synthetic sources with `fit = true` they sit next to the bound on the true workload (`renewal`).\n\
- **markov-lower / swr / uniform / bi-uniform**: Markov-chain estimates (§4); they are bounds \
only under the conditions the notes state (e.g. not for p_r < 1).\n\
- **drop-pins**: a fast approximation (eqs. 10-11), no bound.\n\
- **capacity**: messages per cycle a filter of M bits holds at the target FP under the sigma-bounded \
model and under classic worst-case sizing (FP paper eq. 1); the ratio shows how much worst-case \
sizing under-uses memory.\n";
