//! What a run leaves behind: `results.csv` and `results.parquet` (a polars
//! DataFrame), `results.json` (the rows plus what `rbf merge` needs), SVG plots, a
//! Markdown report that links them and `report.html`, one self-contained page with the
//! same texts, every table and the plots inline ([`super::page`]). Both reports are
//! built from the same pieces (summary lines, tables, notes, [`super::texts`]).
//! Nothing here depends on timing or thread count.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use polars::prelude::*;

use super::plots;
use super::results::{Results, RESULTS_FORMAT};
use super::results_error::ResultsError;
use super::row::Row;
use super::tables;
use super::texts::{extent, source_sections, Plot, FILES, MEANING, PLOTS_LEGEND};
use crate::compare::{Bound, BoundVerdict, Regime};
use rbf_foundations::error::{Error, Result};
use rbf_foundations::output_file;

/// The files written, for the caller to print.
#[derive(Clone, Debug)]
pub struct Written {
    pub dir: PathBuf,
    pub csv: PathBuf,
    pub parquet: PathBuf,
    pub json: PathBuf,
    pub report: PathBuf,
    /// report.html: the report as one self-contained page.
    pub html: PathBuf,
    pub plots: Vec<PathBuf>,
}

fn col<T>(rows: &[Row], f: impl Fn(&Row) -> T) -> Vec<T> {
    rows.iter().map(f).collect()
}

/// One bound of the one list: its value, range (the Q-based methods), standing, and
/// for bounds (not approximations) the verdict in the steady-state or the transient
/// column and how far the observed point is beyond it.
fn bound_columns(rows: &[Row], b: Bound) -> Vec<Column> {
    let verdict = |v: Option<BoundVerdict>| v.map(|v| v.to_string().to_lowercase());
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
    if b.gets_verdict() {
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
    cols
}

fn frame(rows: &[Row]) -> Result<DataFrame> {
    let err = |e: PolarsError| Error::encode("build the results table", e);
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
    for b in Bound::ALL {
        df.hstack_mut(&bound_columns(rows, b)).map_err(err)?;
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
const OURS: [&str; 6] = [
    "results.csv",
    "results.parquet",
    "results.json",
    "report.md",
    "report.html",
    "plots",
];

/// Checks, before any work, that `dir` can take a run's outputs: its parent can be
/// written, it holds no input, and it holds nothing but outputs of an earlier run
/// (the directory is replaced as a whole, so a user's other files must not be there).
pub fn check_dir(dir: &Path, inputs: &[&Path]) -> Result<()> {
    output_file::check_output_dir(dir, inputs)?;
    if holds_only_ours(dir)? {
        rbf_foundations::progress::note(&format!(
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
            return Err(Error::output(
                dir,
                format!("it holds `{f}`, which rbf did not write, and an output directory is replaced as a whole; choose a new or empty directory"),
            ));
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
    let text =
        serde_json::to_string_pretty(results).map_err(|e| Error::encode("serialise results", e))?;
    write_text(&stage.join("results.json"), &text)?;
    let plots: Vec<Plot> = plots::charts(&results.rows)
        .into_iter()
        .filter_map(|(stem, chart)| {
            Some(Plot {
                path: format!("plots/{stem}.svg"),
                svg: chart.render()?,
            })
        })
        .collect();
    for p in &plots {
        write_text(&stage.join(&p.path), &p.svg)?;
    }
    write_text(&stage.join("report.md"), &markdown(results, &plots))?;
    write_text(
        &stage.join("report.html"),
        &super::page::html(results, &plots),
    )?;
    Ok(Written {
        dir: dir.to_path_buf(),
        csv: dir.join("results.csv"),
        parquet: dir.join("results.parquet"),
        json: dir.join("results.json"),
        report: dir.join("report.md"),
        html: dir.join("report.html"),
        plots: plots.iter().map(|p| dir.join(&p.path)).collect(),
    })
}

/// Reads a `results.json` written by [`write`] (a run's or a shard's).
pub fn read(path: &Path) -> Result<Results> {
    let text = rbf_data::ingest::input::read_text(path)?;
    let r: Results = serde_json::from_str(&text).map_err(|e| ResultsError::NotResults {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    if r.format != RESULTS_FORMAT {
        return Err(ResultsError::OtherFormat {
            path: path.to_path_buf(),
            found: r.format,
            expected: RESULTS_FORMAT,
        }
        .into());
    }
    Ok(r)
}

fn markdown(results: &Results, plots: &[Plot]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# {}\n", no_html(&results.name));
    if !results.description.is_empty() {
        let _ = writeln!(s, "{}\n", no_html(results.description.trim()));
    }
    let files: Vec<String> = FILES.iter().map(|(f, _)| format!("[{f}]({f})")).collect();
    let _ = writeln!(
        s,
        "{}\n\nFiles: {}; this report as one page, plots inline: [report.html](report.html).\n",
        extent(results),
        files.join(", ")
    );
    let summary = tables::summary(results);
    if !summary.is_empty() {
        s.push_str("## Bounds against observed FN\n\n");
        for line in &summary {
            let _ = writeln!(s, "- {}", no_html(line));
        }
        s.push('\n');
    }
    if !plots.is_empty() {
        let _ = writeln!(s, "## Plots\n\n{PLOTS_LEGEND}\n");
        for p in plots {
            let _ = writeln!(s, "![{0}]({0})\n", p.path);
        }
    }
    s.push_str("## Results\n\nEvery column is in [results.csv](results.csv).\n\n```text\n");
    s.push_str(&tables::narrow(results, true));
    s.push_str("```\n\n");
    sources(&mut s, results);
    s.push_str(MEANING);
    s
}

/// User text (a name, a description, file names in notes) as Markdown that shows it:
/// a `<` that would open raw HTML (a tag, or a `<!--` comment that hides the rest of
/// the file) is written `&lt;`; any other `<` (`FP <= 1e-3`) is left as it reads.
fn no_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let opens = chars
            .peek()
            .is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '!' | '/' | '?'));
        if c == '<' && opens {
            out.push_str("&lt;");
        } else {
            out.push(c);
        }
    }
    out
}

/// The sources and, per file, what reading them met.
fn sources(s: &mut String, results: &Results) {
    let read = source_sections(results);
    if read.is_empty() {
        return;
    }
    s.push_str("## Sources\n\n");
    for src in read {
        let _ = writeln!(s, "### {}\n", no_html(src.name));
        for l in &src.lines {
            let _ = writeln!(s, "- {}", no_html(l));
        }
        if !src.per_file.is_empty() {
            s.push_str("\nPer file:\n\n");
            for w in &src.per_file {
                let _ = writeln!(s, "- {}", no_html(w));
            }
        }
        s.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::judge::misfit_note;
    use crate::compare::{Range, Record, Standing};
    use rbf_observed::fit::adequacy::QFitCheck;
    use rbf_predicted::model::false_negative::Claim;
    use rbf_predicted::model::false_negative::Method;

    #[test]
    fn user_text_cannot_open_html_in_markdown() {
        assert_eq!(no_html("a <!-- b"), "a &lt;!-- b");
        assert_eq!(no_html("<script> x </b>"), "&lt;script> x &lt;/b>");
        assert_eq!(no_html("FP <= 1e-3, p < 1, <"), "FP <= 1e-3, p < 1, <");
    }

    /// Two points of a fitted workload whose Q failed its test: a renewal bound judged
    /// as a fitted model and a Markov lower bound not judged, its note the misfit label.
    fn misfit_results(label: &str) -> Results {
        let models = misfit_models(label);
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
                models: models.clone(),
                ..Row::default()
            })
            .collect();
        Results {
            format: RESULTS_FORMAT.into(),
            name: "t".into(),
            description: String::new(),
            total_points: 2,
            shard: crate::experiment::Shard::ALL,
            measures: vec![],
            confidence: 0.99,
            config: None,
            fingerprint: None,
            sources: vec![],
            rows,
        }
    }

    /// The two judged bounds of each point: a fitted-model renewal bound, and a Markov
    /// lower bound not judged, its note the misfit label.
    fn misfit_models(label: &str) -> Vec<Record> {
        vec![
            Record {
                bound: Bound::of(Method::Renewal),
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
                bound: Bound::of(Method::MarkovLower),
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
        ]
    }

    /// The QFitCheck label reaches every output the same way: the terminal and report
    /// tables, the summary, JSON, CSV/Parquet and the plots' legends.
    #[test]
    fn a_not_judged_bound_says_so_everywhere() {
        let label = misfit_note(&QFitCheck::tested(0.031, 0.004, Vec::new()));
        let results = misfit_results(&label);
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
        let summary = tables::summary(&results).join("\n");
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
        let md = markdown(&results, &[]);
        assert!(flat(&md).contains(&label), "{md}");
        let page = super::super::page::html(&results, &[]);
        assert!(flat(&page).contains(&label), "{page}");
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
