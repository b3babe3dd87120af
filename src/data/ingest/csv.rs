//! Generic delimited request logs, described by a column spec in the style of cache
//! simulators' CSV readers (libCacheSim's `obj-id-col`, `time-col`, `delimiter`,
//! `has-header`): 1-based key and time columns, a one-byte delimiter, an optional
//! header line. Fields are not quoted (as in those simulators' traces).

use serde::{Deserialize, Serialize};

use super::text::{parse_seconds, parse_u64, LineParser};
use crate::error::{Error, Result};
use crate::message::Timestamp;

/// Unit of a numeric time column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum TimeUnit {
    /// Seconds (a decimal fraction is allowed).
    #[default]
    S,
    Ms,
    Us,
    Ns,
}

/// Which columns of a delimited file hold what.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CsvSpec {
    /// 1-based column of the key (object id, URL, address).
    pub key_column: usize,
    /// 1-based column of the timestamp, if any.
    pub time_column: Option<usize>,
    pub time_unit: TimeUnit,
    pub delimiter: u8,
    /// The first line names the columns.
    pub header: bool,
}

impl Default for CsvSpec {
    fn default() -> Self {
        CsvSpec {
            key_column: 1,
            time_column: None,
            time_unit: TimeUnit::S,
            delimiter: b',',
            header: false,
        }
    }
}

/// Parses a delimiter setting: one ASCII character, or `tab`, `space`, `comma`, `semicolon`, `pipe`.
pub fn parse_delimiter(s: &str) -> Result<u8> {
    let d = match s {
        "tab" | "\\t" => b'\t',
        "space" => b' ',
        "comma" => b',',
        "semicolon" => b';',
        "pipe" => b'|',
        s if s.len() == 1 && s.is_ascii() && s != "\n" && s != "\r" => s.as_bytes()[0],
        _ => {
            return Err(Error::config(
                "csv-delimiter",
                format!("expected one ASCII character or one of tab, space, comma, semicolon, pipe; found {s:?}"),
            ))
        }
    };
    Ok(d)
}

/// The [`LineParser`] for a [`CsvSpec`].
pub struct CsvParser {
    spec: CsvSpec,
    /// Columns needed: fields past the last one are not split.
    needed: usize,
}

impl CsvParser {
    pub fn new(spec: CsvSpec) -> Result<Self> {
        if spec.key_column == 0 {
            return Err(Error::config(
                "csv-key-column",
                "columns are numbered from 1",
            ));
        }
        if spec.time_column == Some(0) {
            return Err(Error::config(
                "csv-time-column",
                "columns are numbered from 1",
            ));
        }
        if spec.time_column == Some(spec.key_column) {
            return Err(Error::config(
                "csv-time-column",
                format!("is the key column ({}) too", spec.key_column),
            ));
        }
        let needed = spec.key_column.max(spec.time_column.unwrap_or(0));
        Ok(CsvParser { spec, needed })
    }

    fn time(&self, field: &[u8]) -> Option<Timestamp> {
        let field = field.trim_ascii();
        match self.spec.time_unit {
            TimeUnit::S => parse_seconds(field),
            unit => {
                let v = parse_u64(field)?;
                let ns = match unit {
                    TimeUnit::Ms => v.checked_mul(1_000_000)?,
                    TimeUnit::Us => v.checked_mul(1_000)?,
                    _ => v,
                };
                Some(Timestamp::from_nanos(ns))
            }
        }
    }
}

impl LineParser for CsvParser {
    fn parse<'a>(
        &'a mut self,
        line: &'a [u8],
        line_no: u64,
    ) -> Result<Option<(&'a [u8], Timestamp)>, String> {
        if (self.spec.header && line_no == 1) || line.trim_ascii().is_empty() {
            return Ok(None);
        }
        let mut key: Option<&[u8]> = None;
        let mut time_field: Option<&[u8]> = None;
        let mut rest = line;
        for col in 1..=self.needed {
            let (field, next) = match memchr::memchr(self.spec.delimiter, rest) {
                Some(i) => (&rest[..i], Some(&rest[i + 1..])),
                None => (rest, None),
            };
            if col == self.spec.key_column {
                key = Some(field);
            }
            if Some(col) == self.spec.time_column {
                time_field = Some(field);
            }
            match next {
                Some(n) => rest = n,
                None if col < self.needed => {
                    return Err(format!(
                        "expected at least {} columns, found {col}",
                        self.needed
                    ))
                }
                None => {}
            }
        }
        let key = key.map(<[u8]>::trim_ascii).unwrap_or_default();
        if key.is_empty() {
            return Err(format!("empty key in column {}", self.spec.key_column));
        }
        let time = match time_field {
            None => Timestamp::NONE,
            Some(f) => self.time(f).ok_or_else(|| {
                format!(
                    "time column {} is not a non-negative number of {:?}",
                    self.spec.time_column.unwrap_or(0),
                    self.spec.time_unit
                )
            })?,
        };
        Ok(Some((key, time)))
    }

    fn name(&self) -> &'static str {
        "csv"
    }

    fn skip_reason(&self, line_no: u64) -> &'static str {
        if self.spec.header && line_no == 1 {
            "header line"
        } else {
            "blank or comment line"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_header_and_units() {
        let mut p = CsvParser::new(CsvSpec {
            key_column: 3,
            time_column: Some(1),
            time_unit: TimeUnit::Ms,
            delimiter: b'\t',
            header: true,
        })
        .expect("valid");
        assert_eq!(p.parse(b"time\tsize\tkey", 1), Ok(None));
        let (k, t) = p
            .parse(b"1500\t10\tobj-7\textra", 2)
            .expect("ok")
            .expect("record");
        assert_eq!((k, t.nanos()), (&b"obj-7"[..], Some(1_500_000_000)));
        assert!(p.parse(b"1500\t10", 3).is_err());
        assert!(p.parse(b"x\t10\tk", 4).is_err());
    }

    #[test]
    fn bad_specs_name_the_key() {
        let e = CsvParser::new(CsvSpec {
            key_column: 0,
            ..Default::default()
        })
        .err()
        .map(|e| e.to_string());
        assert!(e.is_some_and(|e| e.contains("csv-key-column")));
        assert!(parse_delimiter("ab").is_err());
        assert_eq!(parse_delimiter("tab").ok(), Some(b'\t'));
    }
}
