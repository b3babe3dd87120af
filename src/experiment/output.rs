//! What a run leaves behind: `results.csv` and `results.parquet` (a polars
//! DataFrame), `results.json` (the rows plus what `rbf merge` needs), SVG plots and a
//! Markdown report that links them. Nothing here depends on timing or thread count.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use polars::prelude::*;

use super::plots;
use super::results::{Results, SourceInfo, RESULTS_FORMAT};
use super::row::Row;
use super::tables;
use crate::compare::{Bound, BoundVerdict, Regime};
use crate::error::{Error, Result};
use crate::output_file;

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
    let err = |e: PolarsError| Error::invalid(format!("cannot build the results table: {e}"));
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
        "fitted_workload" => col(rows, |r| r.fitted_workload),
    )
    .map_err(err)?;
    // Every bound of the one list: its value, range (the Q-based methods), standing,
    // and for bounds (not approximations) the verdict in the steady-state or the
    // transient column and how far the observed point is beyond it.
    for b in Bound::ALL {
        let get = |r: &Row| r.model(b).cloned();
        let mut cols = vec![Column::new(
            b.value_key().into(),
            col(rows, |r| get(r).map(|m| m.value)),
        )];
        if b.reads_q() {
            let key = b.key();
            cols.push(Column::new(
                format!("{key}_low").into(),
                col(rows, |r| get(r).and_then(|m| m.range).map(|x| x.low)),
            ));
            cols.push(Column::new(
                format!("{key}_high").into(),
                col(rows, |r| get(r).and_then(|m| m.range).map(|x| x.high)),
            ));
        }
        cols.push(Column::new(
            format!("{}_standing", b.key()).into(),
            col(rows, |r| get(r).map(|m| m.standing.token().to_string())),
        ));
        if b.judged() {
            for regime in [Regime::Steady, Regime::Transient] {
                let name = match regime {
                    Regime::Steady => "steady",
                    Regime::Transient => "transient",
                };
                cols.push(Column::new(
                    format!("{}_verdict_{name}", b.key()).into(),
                    col(rows, |r| verdict(get(r).and_then(|m| m.verdict_in(regime)))),
                ));
            }
            cols.push(Column::new(
                format!("{}_excess", b.key()).into(),
                col(rows, |r| get(r).and_then(|m| m.excess)),
            ));
        }
        df.hstack_mut(&cols).map_err(err)?;
    }
    df.hstack_mut(&[Column::new("notes".into(), col(rows, tables::notes_text))])
        .map_err(err)?;
    Ok(df)
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
        output_file::discard_dir(&stage);
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
    let text = crate::ingest::input::read_text(path)?;
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
    let summary = tables::summary(&results.rows);
    if !summary.is_empty() {
        s.push_str("## Bounds against observed FN\n\n");
        for line in &summary {
            let _ = writeln!(s, "- {line}");
        }
        s.push('\n');
    }
    if !plots.is_empty() {
        s.push_str(
            "## Plots\n\nObserved (exact replay): points with their intervals as error bars. \
             Proven bounds: solid lines. Everything else is dashed and its legend says why: \
             \"(fitted model)\", \"(checked)\", \"(not proven)\", \"(not judged)\", \
             \"(approx.)\". Zeros are drawn on the axis floor marked 0.\n\n",
        );
        for p in plots {
            let rel = p.strip_prefix(dir).unwrap_or(p);
            let _ = writeln!(s, "![{0}]({0})\n", rel.display());
        }
    }
    s.push_str("## Results\n\nEvery column is in [results.csv](results.csv).\n\n```text\n");
    s.push_str(&tables::narrow(results, true));
    s.push_str("```\n\n");
    sources(&mut s, results);
    s.push_str(MEANING);
    s
}

/// The sources and, per file, what reading them met.
fn sources(s: &mut String, results: &Results) {
    let read: Vec<&SourceInfo> = results
        .sources
        .iter()
        .filter(|x| x.ingest.is_some())
        .collect();
    if read.is_empty() {
        return;
    }
    s.push_str("## Sources\n\n");
    for src in read {
        let _ = writeln!(s, "### {}\n", src.name);
        for n in &src.notes {
            let _ = writeln!(s, "- {n}");
        }
        let Some(ingest) = &src.ingest else {
            continue;
        };
        if let Some(d) = &src.ingest_digest {
            let _ = writeln!(s, "- {d}");
        }
        let warnings = ingest.warnings();
        if !warnings.is_empty() {
            s.push_str("\nPer file:\n\n");
            for w in warnings {
                let _ = writeln!(s, "- {w}");
            }
        }
        s.push('\n');
    }
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
- **the bounds** (one column each, `fn_renewal_upper`, `fn_renewal_fitted`, \
`fn_renewal_conservative`, `fn_markov_lower`, ...): **renewal** is the FN paper's renewal upper \
bound (§5) on the source's workload (the true one for synthetic sources, the fitted one for \
traces); **fitted** and **conserv.** are the renewal bound on the workload fitted from the \
trace (its reuse profile and p_r, docs/FIT.md) at the point estimate (synthetic sources with \
`fit = true`) and at the conservative end of the fit's uncertainty (the profile's upper 99 % \
band, the worst p_r of its interval); the **markov** columns are the Markov-chain bounds and \
approximations (§4); **drop-pins** is a fast approximation (eqs. 10-11), never a bound. The \
Q-based methods (Markov, drop-pins) on a fitted workload carry a range (`{key}_low/high`) when \
the trace cannot tell the fitted Q from alternatives, and are judged against the whole range.\n\
- **standing** (`{key}_standing`): *proven* (a theorem of the FN paper covers this number for \
this variant and a workload given as the truth), *fitted-model* (a bound for the model fitted \
from the trace, not a proof for the trace), *checked* (not proven, checked by measurement: the \
two-phase conservative bound, docs/FIT.md), *not-proven* (the notes say why), *not-judged* \
(shown, but the model does not fit this trace: no verdict).\n\
- **verdict** (`{key}_verdict_steady`, `{key}_verdict_transient`; ✓ ✗ ? in the tables): the \
bound against the observed FN interval. *holds*: the whole interval is on the bound's side; \
*violated*: the whole interval is on the other side; *undecided*: the interval straddles the \
bound, or there is no interval. The bounds describe the steady state; a replay with fewer than \
10 recycles per replay measures the transient after the warm-up, so its verdict goes in the \
transient column. `{key}_excess`: how far the observed point is beyond the bound, relative to \
the bound.\n\
- **capacity**: messages per cycle a filter of M bits holds at the target FP under the sigma-bounded \
model and under classic worst-case sizing (FP paper eq. 1); the ratio shows how much worst-case \
sizing under-uses memory.\n";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::judge::misfit_note;
    use crate::compare::{Range, Record, Standing};
    use crate::fit::adequacy::QFitCheck;
    use crate::model::fneg::Claim;

    /// The QFitCheck label reaches every output the same way: the terminal and report
    /// tables, the summary, JSON, CSV/Parquet and the plots' legends.
    #[test]
    fn a_not_judged_bound_says_so_everywhere() {
        let label = misfit_note(&QFitCheck {
            gap: 0.031,
            noise: 0.004,
            fits: false,
            alternatives: Vec::new(),
        });
        let rows: Vec<Row> = (0..2)
            .map(|i| Row {
                point: i,
                source: "trace".into(),
                memory: 4096 << i,
                hashes: 4,
                sigma: Some(1000 << i),
                phases: 1,
                hashing: "colliding".into(),
                seeds: 1,
                cycles: Some(50.0),
                observed_fn: Some(0.1),
                observed_fn_low: Some(0.09),
                observed_fn_high: Some(0.11),
                fitted_workload: true,
                models: vec![
                    Record {
                        bound: Bound::Renewal,
                        value: 0.12,
                        range: None,
                        claim: Claim::UpperBound,
                        standing: Standing::FittedModel,
                        verdict: Some(BoundVerdict::Holds),
                        regime: Some(Regime::Steady),
                        excess: None,
                        note: "renewal bound".into(),
                    },
                    Record {
                        bound: Bound::MarkovLower,
                        value: 0.3,
                        range: Some(Range {
                            low: 0.25,
                            high: 0.35,
                        }),
                        claim: Claim::LowerBound,
                        standing: Standing::NotJudged,
                        verdict: None,
                        regime: None,
                        excess: None,
                        note: format!("{label}; eq. 5"),
                    },
                ],
                ..Row::default()
            })
            .collect();
        let results = Results {
            format: RESULTS_FORMAT.into(),
            name: "t".into(),
            description: String::new(),
            total_points: 2,
            shard: crate::experiment::Shard::ALL,
            measures: vec![],
            sources: vec![],
            rows,
        };
        // Wrapped lines read as one.
        let flat = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
        let narrow = tables::narrow(&results, false);
        assert!(narrow.contains("3.000e-1 n"), "{narrow}");
        assert!(
            flat(&narrow).contains(&format!("[all] markov-lower (not judged): {label}")),
            "{narrow}"
        );
        let wide = tables::wide(&results.rows);
        assert!(wide.contains("not judged"), "{wide}");
        let summary = tables::summary(&results.rows).join("\n");
        assert!(
            summary.contains(&format!("not judged at 2: {label}")),
            "{summary}"
        );
        let json = serde_json::to_string(&results).unwrap();
        assert!(
            json.contains("\"not-judged\"") && json.contains(&label),
            "{json}"
        );
        let df = frame(&results.rows).unwrap();
        let cell = |col: &str| df.column(col).unwrap().get(0).unwrap().to_string();
        assert!(cell("markov_lower_standing").contains("not-judged"));
        assert!(cell("notes").contains(&label));
        assert!(cell("markov_lower_low").contains("0.25"));
        assert!(cell("markov_lower_verdict_steady").contains("null"));
        let md = markdown(&results, &[], Path::new("."));
        assert!(flat(&md).contains(&label), "{md}");
        let legends: Vec<String> = plots::charts(&results.rows)
            .into_iter()
            .flat_map(|(_, c)| c.series.into_iter().map(|s| s.label))
            .collect();
        assert!(
            legends
                .iter()
                .any(|l| l.starts_with("markov lower bound, fitted (not judged)")),
            "{legends:?}"
        );
    }
}
