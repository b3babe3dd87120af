//! `rbf fit` as one library call: the workload fitted from a trace, the workload file
//! and rank table written whole ([`run`]), and the JSON the command prints
//! ([`FitRun::output`]). The command line and the Python package parse their arguments
//! into a [`FitRequest`] and print what comes back.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{table, Fit, FitOptions, FitSummary, Fitter};
use rbf_data::ingest::{series, IngestSummary, MessageSource};
use rbf_foundations::error::Result;
use rbf_foundations::output_file::{check_outputs, is_stdio, same_file};

/// What `rbf fit` is asked: the fit's settings and the files to write. Built by
/// [`FitRequest::new`], which checks every output before any trace is opened.
#[derive(Clone, Debug)]
pub struct FitRequest {
    options: FitOptions,
    workload: Option<PathBuf>,
    table: Option<PathBuf>,
}

impl FitRequest {
    /// The fit of the trace `trace` names, writing the workload file `workload` and the
    /// rank table `table` when given (`-`: stdout). Errors, in this order: a table
    /// format the name does not tell, an output that cannot be written or is an input
    /// (or the other output), invalid fit settings.
    pub fn new(
        options: FitOptions,
        trace: &[PathBuf],
        workload: Option<&Path>,
        table: Option<&Path>,
    ) -> Result<Self> {
        if let (Some(w), Some(t)) = (workload, table) {
            refuse_one_file_for_both(w, t)?;
        }
        if let Some(t) = table.filter(|t| !is_stdio(t)) {
            table::TableFormat::from_path(t)?;
        }
        let outputs: Vec<&Path> = workload.iter().chain(&table).copied().collect();
        let inputs = series::expand(trace)?;
        let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
        check_outputs(&outputs, &inputs)?;
        options.validate()?;
        Ok(FitRequest {
            options,
            workload: workload.map(Path::to_path_buf),
            table: table.map(Path::to_path_buf),
        })
    }

    /// Whether an output goes to stdout: the summary must then not be mixed into it.
    pub fn writes_stdout(&self) -> bool {
        self.workload.iter().chain(&self.table).any(|p| is_stdio(p))
    }
}

/// Refuses a workload file and a rank table that are one file (one path, two
/// spellings of it, a symbolic or hard link): the second written would replace the first.
fn refuse_one_file_for_both(workload: &Path, table: &Path) -> Result<()> {
    if is_stdio(workload) || is_stdio(table) {
        return Ok(());
    }
    if same_file(workload, table) {
        return Err(super::FitError::OneFileForBoth {
            workload: workload.to_path_buf(),
            table: table.to_path_buf(),
        }
        .into());
    }
    Ok(())
}

/// What [`run`] fitted.
pub struct FitRun {
    pub fit: Fit,
}

/// Fits the workload of `source` and writes the request's files, each whole or not at
/// all. `on_read` sees the trace's ingest summary once it is read (the command line
/// prints its notes there), `on_written` each file once written (what, where); a trace
/// that gave no message is an error.
pub fn run(
    request: &FitRequest,
    source: &mut dyn MessageSource,
    on_read: impl FnOnce(&IngestSummary),
    mut on_written: impl FnMut(&str, &Path),
) -> Result<FitRun> {
    let mut fitter = Fitter::new(request.options)?;
    fitter.run(&mut *source);
    on_read(source.summary());
    source.summary().require_data()?;
    let fit = fitter.finish()?;
    // A rejected fit's files hold the closest member of a family the trace rejects.
    let rejected = fit.q_check.as_ref().is_some_and(|c| !c.fits);
    let what = |name: &str| {
        if rejected {
            format!("{name} of a rejected fit")
        } else {
            name.to_string()
        }
    };
    if let Some(path) = &request.workload {
        fit.workload()?.save(path)?;
        on_written(&what("workload"), path);
    }
    if let Some(path) = &request.table {
        table::write_rank_table(&fit, path)?;
        on_written(&what("rank table"), path);
    }
    Ok(FitRun { fit })
}

/// The JSON `rbf fit --json` prints: the fit's summary, then the trace's.
#[derive(Serialize)]
pub struct FitOutput<'a> {
    #[serde(flatten)]
    fit: &'a FitSummary,
    ingest: &'a IngestSummary,
}

impl FitRun {
    /// The JSON record of this run; `ingest` is the trace's summary.
    pub fn output<'a>(&'a self, ingest: &'a IngestSummary) -> FitOutput<'a> {
        FitOutput {
            fit: &self.fit.summary,
            ingest,
        }
    }
}
