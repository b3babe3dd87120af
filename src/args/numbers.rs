//! Numbers on the command line, parsed the same way for every flag: whole numbers may
//! be written `1000000`, `1e6` or `2^20`; a negative, fractional, non-finite or
//! too-large value gets one plain sentence naming what is allowed. Negative values
//! reach the parser (so `--zipf -0.1` is a range error, not an unknown flag `-0`).
//!
//! [`plain_numbers`] installs these parsers on every numeric flag of the command tree
//! by the flag's value type, so a new flag gets them without saying so.

use std::any::TypeId;

use clap::builder::ValueParser;
use clap::{Arg, Command};

/// Gives every numeric flag of `cmd` and its subcommands the parsers of this module.
pub fn plain_numbers(cmd: Command) -> Command {
    cmd.mut_args(numeric_arg).mut_subcommands(plain_numbers)
}

/// Flags whose allowed values are a narrower range than their type's: the range's
/// ends, said in the flag's error instead of the type's largest value.
fn range_of(id: &str) -> Option<(u64, u64)> {
    match id {
        "hash_seeds" => Some((1, u64::from(rbf_observed::replay::MAX_HASH_SEEDS))),
        _ => None,
    }
}

/// A whole number in `lo..=hi`.
fn in_range(s: &str, lo: u64, hi: u64) -> Result<u64, String> {
    let range = || format!("allowed range is {lo}-{hi}");
    match whole(s, hi) {
        Ok(v) if v >= lo => Ok(v),
        Ok(_) => Err(range()),
        Err(e) if e.contains("too large") => Err(range()),
        Err(e) => Err(e),
    }
}

fn numeric_arg(arg: Arg) -> Arg {
    let t = arg.get_value_parser().type_id();
    let range = range_of(arg.get_id().as_str());
    let parser: Option<ValueParser> =
        if let (Some((lo, hi)), true) = (range, t == TypeId::of::<u32>()) {
            Some(ValueParser::new(move |s: &str| {
                in_range(s, lo, hi).map(|v| v as u32)
            }))
        } else if t == TypeId::of::<u64>() {
            Some(ValueParser::new(|s: &str| whole(s, u64::MAX)))
        } else if t == TypeId::of::<usize>() {
            Some(ValueParser::new(|s: &str| {
                whole(s, usize::MAX as u64).map(|v| v as usize)
            }))
        } else if t == TypeId::of::<u32>() {
            Some(ValueParser::new(|s: &str| {
                whole(s, u64::from(u32::MAX)).map(|v| v as u32)
            }))
        } else if t == TypeId::of::<u8>() {
            Some(ValueParser::new(|s: &str| {
                whole(s, u64::from(u8::MAX)).map(|v| v as u8)
            }))
        } else if t == TypeId::of::<f64>() {
            Some(ValueParser::new(real))
        } else {
            None
        };
    match parser {
        Some(p) => arg.value_parser(p).allow_negative_numbers(true),
        None => arg,
    }
}

/// The one line the command line prints (after "error: ") for a bad value: the flag as the
/// user wrote it, why the value is refused and the value; None for other errors.
pub fn bad_value(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::ValueValidation {
        return None;
    }
    let text = |k| match e.get(k) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    let why = std::error::Error::source(e).map(ToString::to_string)?;
    let flag = text(ContextKind::InvalidArg)?;
    let value = text(ContextKind::InvalidValue)?;
    // The flag without the value placeholder.
    let flag = flag.split_whitespace().next().unwrap_or(&flag).to_string();
    Some(format!("{flag}: {why} (found {})", shown(&value)))
}

/// A number too long to repeat in a message is described by its length.
fn shown(s: &str) -> String {
    if s.len() > 24 {
        format!("a number of {} characters", s.len())
    } else {
        format!("`{s}`")
    }
}

use rbf_foundations::numbers::{real, whole};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_numbers() {
        assert_eq!(whole("1000", u64::MAX), Ok(1000));
        assert_eq!(whole("1e6", u64::MAX), Ok(1_000_000));
        assert_eq!(whole("2^20", u64::MAX), Ok(1 << 20));
        assert_eq!(whole("18446744073709551615", u64::MAX), Ok(u64::MAX));
        assert!(whole("-1", u64::MAX).unwrap_err().contains("negative"));
        assert!(whole("-0.1", u64::MAX).unwrap_err().contains("negative"));
        assert!(whole("1.5", u64::MAX).unwrap_err().contains("whole"));
        assert!(whole("NaN", u64::MAX).unwrap_err().contains("NaN"));
        assert!(whole("inf", u64::MAX).unwrap_err().contains("too large"));
        assert!(whole("1e308", u64::MAX).unwrap_err().contains("too large"));
        assert!(whole("2^64", u64::MAX).unwrap_err().contains("too large"));
        assert!(whole("300", 255).unwrap_err().contains("at most 255"));
        let long = "9".repeat(300);
        let e = whole(&long, u64::MAX).unwrap_err();
        assert!(e.contains("too large") && e.len() < 80, "{e}");
        assert_eq!(shown(&long), "a number of 300 characters");
        assert!(whole("ten", u64::MAX).unwrap_err().contains("expected"));
    }

    #[test]
    fn narrower_ranges_are_said() {
        assert_eq!(in_range("2^6", 1, 64), Ok(64));
        for v in ["2^32", "65", "0", "1e300"] {
            assert_eq!(
                in_range(v, 1, 64),
                Err("allowed range is 1-64".into()),
                "{v}"
            );
        }
        assert!(in_range("x", 1, 64).unwrap_err().contains("expected"));
    }

    #[test]
    fn reals() {
        assert_eq!(real("-0.1"), Ok(-0.1));
        assert_eq!(real("1e-300"), Ok(1e-300));
        assert!(real("nan").is_err());
        assert!(real("-inf").is_err());
        assert!(real("0.5x").is_err());
    }
}
