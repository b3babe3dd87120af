//! Tables as polars DataFrames, written as CSV (RFC 4180) or Parquet.
//!
//! The CSV writer is ours: polars' CSV support would add its whole I/O stack to the
//! build for a few hundred rows. Fields are quoted only when they hold the delimiter,
//! a quote, or a line break (quotes doubled inside); floats use Rust's shortest
//! round-trip form (an exponent for very small or large values), nulls are empty fields.

use std::io::Write;
use std::path::Path;

use polars::prelude::*;

use crate::error::{Error, Result};
use crate::output_file::{self, OutputFile};

fn frame_error(path: &Path, e: PolarsError) -> Error {
    Error::io(
        path,
        std::io::Error::other(format!("cannot write the table: {e}")),
    )
}

/// One CSV field, quoted when it needs to be.
pub fn csv_field(field: &str) -> std::borrow::Cow<'_, str> {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\"")).into()
    } else {
        field.into()
    }
}

fn cell(v: &AnyValue) -> String {
    match v {
        AnyValue::Null => String::new(),
        AnyValue::Boolean(b) => b.to_string(),
        AnyValue::String(s) => s.to_string(),
        AnyValue::StringOwned(s) => s.to_string(),
        AnyValue::UInt8(x) => x.to_string(),
        AnyValue::UInt16(x) => x.to_string(),
        AnyValue::UInt32(x) => x.to_string(),
        AnyValue::UInt64(x) => x.to_string(),
        AnyValue::Int8(x) => x.to_string(),
        AnyValue::Int16(x) => x.to_string(),
        AnyValue::Int32(x) => x.to_string(),
        AnyValue::Int64(x) => x.to_string(),
        // Debug: shortest round-trip digits, with an exponent for very small or large
        // values (Display would spell 1e-300 with 300 zeros).
        AnyValue::Float32(x) => format!("{x:?}"),
        AnyValue::Float64(x) => format!("{x:?}"),
        other => other.to_string(),
    }
}

/// Writes `df` as CSV with a header line to `out`.
pub fn write_csv_to<W: Write>(df: &DataFrame, out: W) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(out);
    let columns = df.columns();
    let header: Vec<String> = columns
        .iter()
        .map(|c| csv_field(c.name().as_str()).into_owned())
        .collect();
    writeln!(out, "{}", header.join(","))?;
    for i in 0..df.height() {
        let mut line = String::new();
        for (j, c) in columns.iter().enumerate() {
            if j > 0 {
                line.push(',');
            }
            let v = c.get(i).map_err(std::io::Error::other)?;
            line.push_str(&csv_field(&cell(&v)));
        }
        writeln!(out, "{line}")?;
    }
    out.flush()
}

/// Writes `df` as CSV to `path` (`-`: stdout), whole or not at all.
pub fn write_csv(df: &DataFrame, path: &Path) -> Result<()> {
    output_file::write_with(path, |out| write_csv_to(df, out))
}

/// Writes `df` as Parquet to `path` (`-`: stdout), whole or not at all.
pub fn write_parquet(df: &mut DataFrame, path: &Path) -> Result<()> {
    let mut out = OutputFile::create(path)?;
    ParquetWriter::new(&mut out)
        .finish(df)
        .map_err(|e| frame_error(path, e))?;
    out.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_what_needs_it() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("two\nlines"), "\"two\nlines\"");
    }

    #[test]
    fn frame_to_csv() {
        let df = df!(
            "n" => [1u64, 2],
            "x" => [0.5f64, 1e-12],
            "note" => ["", "a, \"b\""],
            "ok" => [Some(true), None],
        )
        .unwrap();
        let mut out = Vec::new();
        write_csv_to(&df, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "n,x,note,ok\n1,0.5,,true\n2,1e-12,\"a, \"\"b\"\"\",\n"
        );
    }
}
