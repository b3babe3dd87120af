//! Numbers as users write them, one parser for the command line's flags and the
//! experiment file's values: whole numbers may be written `1000000`, `1e6` or `2^20`
//! (in TOML, `2^20` is a string: `"2^20"`); a negative, fractional, non-finite or
//! too-large value gets one plain sentence naming what is allowed.

use std::marker::PhantomData;

use serde::de::{Deserializer, SeqAccess, Visitor};

const WHOLE: &str = "expected a whole number such as 1000, 1e6 or 2^20";

/// A whole number in `0..=max`: decimal digits, scientific notation that names a
/// whole number (`1e6`, `2.5e3`), or a power of two (`2^20`).
pub fn whole(s: &str, max: u64) -> Result<u64, String> {
    let t = s.trim().replace('_', "");
    let too_large = || format!("too large: at most {max}");
    if let Some((base, exp)) = t.split_once('^') {
        let (Ok(b), Ok(e)) = (base.parse::<u64>(), exp.parse::<u32>()) else {
            return Err(WHOLE.into());
        };
        return b.checked_pow(e).filter(|&v| v <= max).ok_or_else(too_large);
    }
    if t.bytes().all(|b| b.is_ascii_digit()) && !t.is_empty() {
        return t
            .parse::<u64>()
            .ok()
            .filter(|&v| v <= max)
            .ok_or_else(too_large);
    }
    let Ok(x) = t.parse::<f64>() else {
        return Err(WHOLE.into());
    };
    if x.is_nan() {
        return Err("NaN is not a number: expected a whole number".into());
    }
    if x < 0.0 {
        return Err(format!("must not be negative; allowed: 0 to {max}"));
    }
    if x.is_infinite() || x > max as f64 {
        return Err(too_large());
    }
    if x.fract() != 0.0 {
        return Err("must be a whole number".into());
    }
    // Exact for the integers an f64 spells in scientific notation, up to 2^53.
    if x > 9_007_199_254_740_992.0 {
        return Err("too large to be exact in this notation: write it out in digits".into());
    }
    Ok(x as u64)
}

/// A finite real number (range checks, e.g. probabilities in (0, 1), are the
/// library's, and name the setting).
pub fn real(s: &str) -> Result<f64, String> {
    let t = s.trim();
    match t.parse::<f64>() {
        Ok(x) if x.is_nan() => Err("NaN is not a number".into()),
        Ok(x) if x.is_infinite() => Err("must be finite".into()),
        Ok(x) => Ok(x),
        Err(_) => Err("expected a number such as 0.5 or 1e-3".into()),
    }
}

/// An unsigned integer type a config value can be ([`whole_list`]).
pub trait Whole: Sized {
    const MAX: u64;
    fn from_u64(v: u64) -> Self;
}

macro_rules! whole_type {
    ($($t:ty),*) => {$(
        impl Whole for $t {
            const MAX: u64 = <$t>::MAX as u64;
            fn from_u64(v: u64) -> Self {
                v as $t
            }
        }
    )*};
}
whole_type!(u8, u32, u64, usize);

/// One whole number of a config: a TOML integer, a float that names a whole number
/// (`1e4`) or a string in the command line's spellings (`"2^14"`), all by [`whole`].
struct WholeValue<T>(PhantomData<T>);

impl<T: Whole> Visitor<'_> for WholeValue<T> {
    type Value = T;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a whole number such as 1000, 1e6 or \"2^20\"")
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<T, E> {
        self.visit_str(&v.to_string())
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<T, E> {
        self.visit_str(&v.to_string())
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<T, E> {
        // Debug keeps every digit (1e4 is "10000.0"), which `whole` reads back exactly.
        self.visit_str(&format!("{v:?}"))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<T, E> {
        whole(v, T::MAX).map(T::from_u64).map_err(E::custom)
    }
}

/// One real number of a config: a TOML number or a string such as `"1e-3"`, by [`real`].
struct RealValue;

impl Visitor<'_> for RealValue {
    type Value = f64;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a number such as 0.5 or 1e-3")
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<f64, E> {
        Ok(v as f64)
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<f64, E> {
        Ok(v as f64)
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<f64, E> {
        self.visit_str(&format!("{v:?}"))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<f64, E> {
        real(v).map_err(E::custom)
    }
}

/// A list of values read by `item` (each element through `deserialize_any`).
struct ListOf<V>(V);

impl<'de, V: Visitor<'de> + Clone> Visitor<'de> for ListOf<V> {
    type Value = Vec<V::Value>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of numbers")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(Element(self.0.clone()))? {
            out.push(v);
        }
        Ok(out)
    }
}

struct Element<V>(V);

impl<'de, V: Visitor<'de>> serde::de::DeserializeSeed<'de> for Element<V> {
    type Value = V::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        d.deserialize_any(self.0)
    }
}

impl<T> Clone for WholeValue<T> {
    fn clone(&self) -> Self {
        WholeValue(PhantomData)
    }
}

impl Clone for RealValue {
    fn clone(&self) -> Self {
        RealValue
    }
}

/// `#[serde(deserialize_with = "crate::numbers::whole_list")]`: a list of whole numbers
/// in any of the command line's spellings.
pub fn whole_list<'de, D: Deserializer<'de>, T: Whole>(d: D) -> Result<Vec<T>, D::Error> {
    d.deserialize_seq(ListOf(WholeValue::<T>(PhantomData)))
}

/// `#[serde(deserialize_with = "crate::numbers::real_list")]`: a list of real numbers,
/// as numbers or strings.
pub fn real_list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
    d.deserialize_seq(ListOf(RealValue))
}
