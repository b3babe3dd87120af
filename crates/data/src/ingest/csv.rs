//! Generic delimited request logs, described by a column spec in the style of cache
//! simulators' CSV readers (libCacheSim's `obj-id-col`, `time-col`, `delimiter`,
//! `has-header`): 1-based key and time columns, a one-byte delimiter, an optional
//! header line. A field may be quoted as RFC 4180 says (`"cdn.example,/obj231"`, a `""`
//! inside for a quote): the quotes are not part of the key, so `"k231"` and `k231` are one
//! key. A quoted field must close on its line: one that spans lines is refused by line.

use serde::{Deserialize, Serialize};

use super::options::Format;
use super::text::{parse_seconds, parse_u64, LineParser};
use crate::message::Timestamp;
use rbf_foundations::error::{Error, Problem, Result};

/// Unit of a numeric time column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
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
            return Err(Error::setting(
                "csv-delimiter",
                Problem::Unreadable(format!("expected one ASCII character or one of tab, space, comma, semicolon, pipe; found {s:?}")),
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
    /// A quoted key with `""` in it, unescaped.
    key_buf: Vec<u8>,
}

/// One field of a line: its bytes (inside the quotes when quoted) and whether a `""`
/// in them stands for one quote.
struct Field<'a> {
    bytes: &'a [u8],
    quoted: bool,
    escaped: bool,
}

/// Splits the first field off `rest` (RFC 4180): the field and what follows its
/// delimiter, or `None` at the end of the line.
fn next_field(
    rest: &[u8],
    delimiter: u8,
    col: usize,
) -> std::result::Result<(Field<'_>, Option<&[u8]>), String> {
    if rest.first() != Some(&b'"') {
        return Ok(match memchr::memchr(delimiter, rest) {
            Some(i) => (
                Field {
                    bytes: &rest[..i],
                    quoted: false,
                    escaped: false,
                },
                Some(&rest[i + 1..]),
            ),
            None => (
                Field {
                    bytes: rest,
                    quoted: false,
                    escaped: false,
                },
                None,
            ),
        });
    }
    let body = &rest[1..];
    let mut at = 0;
    let mut escaped = false;
    loop {
        let Some(q) = memchr::memchr(b'"', &body[at..]) else {
            return Err(format!(
                "the quoted field in column {col} does not close on its line (a quoted field spanning lines is not read)"
            ));
        };
        let q = at + q;
        if body.get(q + 1) == Some(&b'"') {
            escaped = true;
            at = q + 2;
            continue;
        }
        let field = Field {
            bytes: &body[..q],
            quoted: true,
            escaped,
        };
        let after = &body[q + 1..];
        return match after.first() {
            None => Ok((field, None)),
            Some(&d) if d == delimiter => Ok((field, Some(&after[1..]))),
            Some(_) if after.trim_ascii().is_empty() => Ok((field, None)),
            Some(_) => Err(format!(
                "text after the closing quote of column {col} (expected the delimiter {:?})",
                char::from(delimiter)
            )),
        };
    }
}

impl CsvParser {
    pub fn new(spec: CsvSpec) -> Result<Self> {
        if spec.key_column == 0 {
            return Err(Error::setting(
                "csv-key-column",
                Problem::rule("columns are numbered from 1"),
            ));
        }
        if spec.time_column == Some(0) {
            return Err(Error::setting(
                "csv-time-column",
                Problem::rule("columns are numbered from 1"),
            ));
        }
        if spec.time_column == Some(spec.key_column) {
            return Err(Error::setting(
                "csv-time-column",
                Problem::Conflict(format!("is the key column ({}) too", spec.key_column).into()),
            ));
        }
        let needed = spec.key_column.max(spec.time_column.unwrap_or(0));
        Ok(CsvParser {
            spec,
            needed,
            key_buf: Vec::new(),
        })
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
        let mut key: Option<Field<'a>> = None;
        let mut time_field: Option<&[u8]> = None;
        let mut rest = line;
        for col in 1..=self.needed {
            let (field, next) = next_field(rest, self.spec.delimiter, col)?;
            if Some(col) == self.spec.time_column {
                time_field = Some(field.bytes);
            }
            if col == self.spec.key_column {
                key = Some(field);
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
        let key: &[u8] = match key {
            None => &[],
            Some(Field {
                bytes,
                quoted: false,
                ..
            }) => bytes.trim_ascii(),
            Some(Field {
                bytes,
                escaped: false,
                ..
            }) => bytes,
            Some(Field { bytes, .. }) => {
                self.key_buf.clear();
                let mut i = 0;
                while i < bytes.len() {
                    self.key_buf.push(bytes[i]);
                    i += if bytes[i] == b'"' { 2 } else { 1 };
                }
                &self.key_buf
            }
        };
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

    fn format(&self) -> Format {
        Format::Csv
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
    fn quoted_fields_follow_rfc_4180() {
        let mut p = CsvParser::new(CsvSpec {
            key_column: 2,
            time_column: Some(3),
            ..Default::default()
        })
        .expect("valid");
        let mut key = |line: &[u8]| {
            p.parse(line, 1)
                .map(|r| r.map(|(k, t)| (String::from_utf8_lossy(k).into_owned(), t.nanos())))
        };
        assert_eq!(
            key(b"x,\"cdn.example,/obj231\",\"2\""),
            Ok(Some(("cdn.example,/obj231".into(), Some(2_000_000_000))))
        );
        assert_eq!(key(b"x,\"k231\",1"), key(b"x,k231,1"));
        assert_eq!(
            key(b"\"a,b\",\"say \"\"hi\"\"\",1"),
            Ok(Some(("say \"hi\"".into(), Some(1_000_000_000))))
        );
        let open = key(b"x,\"spans\nlines").expect_err("refused");
        assert!(open.contains("column 2 does not close"), "{open}");
        let after = key(b"x,\"k\"z,1").expect_err("refused");
        assert!(
            after.contains("after the closing quote of column 2"),
            "{after}"
        );
        assert!(key(b"x,\"\",1").is_err(), "an empty quoted key");
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
