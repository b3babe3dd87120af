//! The fitted Q and zeta as a polars DataFrame, written to CSV or Parquet.
//!
//! One row per rank: `rank`, `q` (Q-hat) and `zeta` (zeta-hat).

use std::path::Path;

use polars::prelude::*;

use super::Fit;
use rbf_foundations::error::{Error, Problem, Result};
use rbf_foundations::output_file::frame;

/// Output formats of the rank table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableFormat {
    Csv,
    Parquet,
}

impl TableFormat {
    /// From the file name: `.parquet` or `.csv`.
    pub fn from_path(path: &Path) -> Result<TableFormat> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("parquet") => Ok(TableFormat::Parquet),
            Some("csv") => Ok(TableFormat::Csv),
            // The rule is the name's ending; the sentence names the file first.
            _ => Err(Error::setting(
                "table",
                Problem::rule(format!(
                    "cannot tell the table format of {}: the name must end in .csv or .parquet",
                    path.display()
                )),
            )),
        }
    }
}

/// The rank table of a fit.
pub fn rank_frame(fit: &Fit) -> Result<DataFrame> {
    let ranks: Vec<u64> = (0..fit.q.len() as u64).collect();
    df!(
        "rank" => ranks,
        "q" => fit.q.as_slice(),
        "zeta" => fit.zeta.as_slice(),
    )
    .map_err(|e| Error::encode("build the rank table", e))
}

/// Writes the rank table to `path` (format from its extension; `-`: CSV on stdout).
pub fn write_rank_table(fit: &Fit, path: &Path) -> Result<()> {
    let format = if rbf_foundations::output_file::is_stdio(path) {
        TableFormat::Csv
    } else {
        TableFormat::from_path(path)?
    };
    let mut df = rank_frame(fit)?;
    match format {
        TableFormat::Csv => frame::write_csv(&df, path),
        TableFormat::Parquet => frame::write_parquet(&mut df, path),
    }
}
