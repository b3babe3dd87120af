//! The FN paper's workload model (§3.1): D previously seen messages ranked by
//! popularity Q = {q_i}, a repeat probability p_r, and a placement distribution
//! zeta = {zeta_i} (the paper also writes d_i) for the rank at which a new message
//! enters Q. `rbf synth` draws traces from it, `rbf fit` estimates it from a trace and
//! the FN models take it as input, so it has one serialised form: a JSON workload file.

pub mod probabilities;
pub mod ranks;
pub mod reuse;
pub mod spec;
pub mod transform;

use std::path::Path;

use serde::{Deserialize, Serialize};

pub use probabilities::Probabilities;
use rbf_foundations::error::{Error, Problem, Result};
pub use reuse::{Between, ReuseProfile};
pub use spec::WorkloadSpec;

/// Popularity of the D previously seen messages, most popular first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Popularity {
    /// q_i proportional to (i + 1)^-alpha for i = 0..distinct (alpha = 0 is uniform).
    Zipf { distinct: usize, alpha: f64 },
    /// q_i proportional to (i + 1)^-alpha with an exponent alpha per decade of rank:
    /// `exponents[k]` where 10^k <= i + 1 < 10^(k+1) (the last one also beyond), the
    /// pieces joined continuously; one exponent is Zipf. What `rbf fit` writes.
    PiecewiseZipf {
        distinct: usize,
        exponents: Vec<f64>,
    },
    /// Explicit probabilities; normalised on use, must be non-increasing.
    Explicit(Vec<f64>),
}

impl Popularity {
    /// ln q up to a constant at (continuous) rank r for a piecewise-Zipf popularity.
    pub fn piecewise_log_weight(exponents: &[f64], r: f64) -> f64 {
        let u = (r + 1.0).ln();
        let decade = std::f64::consts::LN_10;
        let last = exponents.len().saturating_sub(1);
        let k = ((u / decade) as usize).min(last);
        let base: f64 = exponents[..k].iter().map(|a| -a * decade).sum();
        base - exponents.get(k).copied().unwrap_or(0.0) * (u - k as f64 * decade)
    }

    /// The piecewise-Zipf weights of ranks 0..distinct relative to rank 0's (so none
    /// overflows): exp(log weight(i) - log weight(0)), what Q is built from.
    ///
    /// A logarithm and an exponential per rank cost about half a second at D = 10^7,
    /// so ranks go by blocks inside a decade (one exponent a): the block's first rank
    /// n0 (= i + 1) gets the exact value, the others n0 + j its value times
    /// (1 + j / n0)^-a, a binomial series in t = j / n0 cut where the rest is below 2^-56
    /// (relative; `piecewise_weights_are_the_log_exp_ones` measures the drift: a few
    /// ulps). Where the series would be long (small ranks, large exponents) the block
    /// is computed rank by rank as before.
    pub fn piecewise_weights(distinct: usize, exponents: &[f64]) -> Vec<f64> {
        let mut w = Vec::with_capacity(distinct);
        let mut blocks = PiecewiseBlocks::new(distinct, exponents);
        while blocks.next_block(&mut w) {}
        w
    }
}

/// [`Popularity::piecewise_weights`] block by block (at most [`PIECEWISE_BLOCK`] ranks
/// at a time), so that a caller can go over millions of ranks without holding them
/// ([`ranks`]): the same values to the bit.
pub struct PiecewiseBlocks<'e> {
    exponents: &'e [f64],
    distinct: usize,
    /// Ranks made so far.
    made: usize,
    top: f64,
    decade: usize,
    decade_end: usize,
    coefficients: [f64; BINOMIAL_TERMS],
}

impl<'e> PiecewiseBlocks<'e> {
    pub fn new(distinct: usize, exponents: &'e [f64]) -> Self {
        PiecewiseBlocks {
            exponents,
            distinct,
            made: 0,
            top: Popularity::piecewise_log_weight(exponents, 0.0),
            decade: 0,
            decade_end: 10,
            coefficients: [0.0; BINOMIAL_TERMS],
        }
    }

    /// Appends the next block's weights to `w`; false once every rank is made.
    pub fn next_block(&mut self, w: &mut Vec<f64>) -> bool {
        if self.made >= self.distinct {
            return false;
        }
        let exponents = self.exponents;
        let top = self.top;
        let exact = |i: usize| (Popularity::piecewise_log_weight(exponents, i as f64) - top).exp();
        let n0 = self.made + 1;
        while n0 >= self.decade_end && self.decade + 1 < exponents.len() {
            self.decade += 1;
            self.decade_end = self.decade_end.saturating_mul(10);
        }
        // The last exponent holds beyond its decade: no edge to stop at.
        let edge = if self.decade + 1 < exponents.len() {
            self.decade_end
        } else {
            usize::MAX
        };
        let end = (n0 + PIECEWISE_BLOCK).min(edge).min(self.distinct + 1);
        let t_max = (end - 1 - n0) as f64 / n0 as f64;
        match binomial_series(exponents[self.decade], t_max, &mut self.coefficients) {
            Some(terms) => {
                let (c, first, inv) = (&self.coefficients[..terms], exact(n0 - 1), 1.0 / n0 as f64);
                w.extend((0..end - n0).map(|j| first * horner(c, j as f64 * inv)));
            }
            None => w.extend((n0 - 1..end - 1).map(exact)),
        }
        self.made = end - 1;
        true
    }
}

/// Ranks per block of [`Popularity::piecewise_weights`]: one exponential per block.
const PIECEWISE_BLOCK: usize = 64;
/// The longest binomial series [`Popularity::piecewise_weights`] sums; a block that
/// would need more is computed rank by rank.
const BINOMIAL_TERMS: usize = 12;

/// The coefficients C(-a, k) of (1 + t)^-a = sum_k C(-a, k) t^k into `c`, as many as
/// make the rest below 2^-56 for every t in [0, t_max]; None when more than `c` holds.
/// Each term over the one before is t (a + k) / (k + 1) <= rho = t max(a, 1); with
/// rho <= 1/2 the rest from a term on is at most twice that term (cut below 2^-57).
fn binomial_series(a: f64, t_max: f64, c: &mut [f64]) -> Option<usize> {
    let rho = t_max * a.max(1.0);
    if rho.is_nan() || rho > 0.5 {
        return None;
    }
    let (mut coefficient, mut power) = (1.0_f64, 1.0_f64);
    for (k, slot) in c.iter_mut().enumerate() {
        if (coefficient * power).abs() < f64::EPSILON / 32.0 {
            return Some(k);
        }
        *slot = coefficient;
        coefficient *= (-a - k as f64) / (k + 1) as f64;
        power *= t_max;
    }
    None
}

/// c[0] + c[1] t + c[2] t^2 + ..., by Horner's rule.
fn horner(c: &[f64], t: f64) -> f64 {
    c.iter().rev().fold(0.0, |p, &ck| p * t + ck)
}

/// Where a new message enters the popularity ranking.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Every rank equally likely.
    Uniform,
    /// Always the most popular rank (a new message is immediately the hottest).
    Top,
    /// Always the least popular rank (it replaces the message evicted from rank D).
    Bottom,
    /// zeta_i for i = 0..D, normalised on use.
    Explicit(Vec<f64>),
    /// Relative weights of equal segments of the ranking, most popular segment first:
    /// [8, 4, 2, 1] puts 8/15 of new messages, spread evenly, in the top quarter of the
    /// ranks. An explicit vector whose shape does not depend on D.
    Segments(Vec<f64>),
    /// Relative weights of the top rank, the bottom rank and equal segments of the
    /// ranking (as [`Placement::Segments`]): a mixture of the three shapes above, what
    /// `rbf fit` writes.
    Mixture {
        top: f64,
        bottom: f64,
        segments: Vec<f64>,
    },
}

/// The numbers of `list`, comma-separated (`written` is the whole placement, for the
/// message).
fn weights(written: &str, list: &str, what: &str) -> Result<Vec<f64>> {
    list.split(',')
        .map(|x| x.trim().parse::<f64>())
        .collect::<std::result::Result<Vec<f64>, _>>()
        .map_err(|e| {
            Error::setting(
                "placement",
                Problem::Unreadable(format!("`{written}`: {what} ({e}); allowed: uniform, top, bottom, segments:W1,W2,... (e.g. segments:8,4,2,1), or w0,w1,... (one weight per rank)")),
            )
        })
}

impl Placement {
    /// `uniform`, `top`, `bottom`, `segments:W1,W2,...` or `w0,w1,...`, the weights
    /// checked as [`Probabilities::from_weights`] checks them.
    pub fn parse(name: &str) -> Result<Placement> {
        match name {
            "uniform" => Ok(Placement::Uniform),
            "top" => Ok(Placement::Top),
            "bottom" => Ok(Placement::Bottom),
            other => match other.strip_prefix("segments:") {
                Some(list) => {
                    let p = Placement::Segments(weights(other, list, "segment weights must be numbers")?);
                    p.validate(p.min_distinct())?;
                    Ok(p)
                }
                // w0,w1,...: one weight per rank (a single number is one rank).
                None if other.contains(',') || other.trim().parse::<f64>().is_ok() => {
                    let w = weights(other, other, "not a comma-separated list of weights")?;
                    Probabilities::from_weights("placement", &w)?;
                    Ok(Placement::Explicit(w))
                }
                None => Err(Error::setting(
                    "placement",
                    Problem::Unknown {
                        what: "placement",
                        found: other.to_string(),
                        allowed: "uniform, top, bottom, segments:W1,W2,... (relative weights of equal rank segments, most popular first), w0,w1,... (one weight per rank), or an explicit vector in a workload file".into(),
                    },
                )),
            },
        }
    }

    /// The fewest ranks the placement can describe (one per segment).
    fn min_distinct(&self) -> usize {
        match self {
            Placement::Segments(w) => w.len().max(1),
            _ => 1,
        }
    }

    /// The placement for people: "uniform", "top", "bottom", or "explicit over D ranks".
    pub fn describe(&self) -> String {
        match self {
            Placement::Uniform => "uniform".into(),
            Placement::Top => "top".into(),
            Placement::Bottom => "bottom".into(),
            Placement::Explicit(v) => format!("explicit zeta over {} ranks", v.len()),
            Placement::Mixture {
                top,
                bottom,
                segments,
            } => {
                let total = top + bottom + segments.iter().sum::<f64>();
                format!(
                    "mixture: top {:.3}, bottom {:.3}, {} segm. {:.3}",
                    top / total,
                    bottom / total,
                    segments.len(),
                    segments.iter().sum::<f64>() / total
                )
            }
            Placement::Segments(w) => format!(
                "segments:{}",
                w.iter()
                    .map(|x| short_number(*x))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        }
    }

    /// Checks the placement against D without building its D probabilities: the
    /// weights go through [`Probabilities::from_weights`], as when they are built.
    pub fn validate(&self, distinct: usize) -> Result<()> {
        if distinct == 0 {
            return Err(Error::setting(
                "placement",
                Problem::rule("needs at least one rank (D >= 1)"),
            ));
        }
        match self {
            Placement::Uniform | Placement::Top | Placement::Bottom => Ok(()),
            Placement::Explicit(v) => {
                if v.len() != distinct {
                    // The placement's length and the popularity's D exclude each other.
                    return Err(Error::setting(
                        "placement",
                        Problem::Conflict(
                            format!(
                                "explicit placement has {} entries but the popularity has {distinct}",
                                v.len()
                            )
                            .into(),
                        ),
                    ));
                }
                Probabilities::from_weights("placement", v).map(drop)
            }
            Placement::Mixture {
                top,
                bottom,
                segments,
            } => {
                Probabilities::from_weights(
                    "placement",
                    &mixture_weights(*top, *bottom, segments),
                )?;
                segments_fit(segments.len(), distinct)
            }
            Placement::Segments(w) => {
                Probabilities::from_weights("placement", w)?;
                segments_fit(w.len(), distinct)
            }
        }
    }

    /// The placement probabilities zeta_0..zeta_{D-1} (D >= 1), through the one
    /// validating constructor ([`Probabilities`]).
    pub fn probabilities(&self, distinct: usize) -> Result<Probabilities> {
        self.validate(distinct)?;
        Workload::check_size(distinct)?;
        match self {
            Placement::Uniform => Probabilities::uniform("placement", distinct),
            Placement::Top => Probabilities::point("placement", distinct, 0),
            Placement::Bottom => Probabilities::point("placement", distinct, distinct - 1),
            Placement::Explicit(v) => Probabilities::from_weights("placement", v),
            Placement::Segments(w) => {
                let w = Probabilities::from_weights("placement", w)?;
                Probabilities::from_weight_vec("placement", spread_segments(&w, distinct))
            }
            Placement::Mixture {
                top,
                bottom,
                segments,
            } => {
                let w = Probabilities::from_weights(
                    "placement",
                    &mixture_weights(*top, *bottom, segments),
                )?;
                let mut z = spread_segments(&w[2..], distinct);
                z[0] += w[0];
                z[distinct - 1] += w[1];
                Probabilities::from_weight_vec("placement", z)
            }
        }
    }
}

/// A mixture's weights in one list: top, bottom, then the segments.
fn mixture_weights(top: f64, bottom: f64, segments: &[f64]) -> Vec<f64> {
    let mut all = vec![top, bottom];
    all.extend(segments);
    all
}

/// Equal rank segments need at least one rank each.
fn segments_fit(segments: usize, distinct: usize) -> Result<()> {
    if segments > distinct {
        // More segments than the popularity's D ranks: the two exclude each other.
        return Err(Error::setting(
            "placement",
            Problem::Conflict(
                format!("{segments} segments need at least as many ranks, but D = {distinct}")
                    .into(),
            ),
        ));
    }
    Ok(())
}

/// Weights of equal rank segments spread evenly over their ranks (at least one rank
/// per segment, checked by the caller).
fn spread_segments(w: &[f64], distinct: usize) -> Vec<f64> {
    let k = w.len();
    let mut z = vec![0.0; distinct];
    for (j, wj) in w.iter().enumerate() {
        let (lo, hi) = (j * distinct / k, (j + 1) * distinct / k);
        z[lo..hi]
            .iter_mut()
            .for_each(|x| *x = wj / (hi - lo) as f64);
    }
    z
}

/// A number as a person would write it: `0.5`, `8`, but `1e308` rather than 309 digits.
pub fn short_number(x: f64) -> String {
    if x != 0.0 && x.is_finite() && !(1e-4..1e15).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        x.to_string()
    }
}

/// A complete workload: popularity, repeat probability and placement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// Always "rbf-workload/1"; lets readers reject other JSON early.
    #[serde(default = "format_tag")]
    pub format: String,
    pub popularity: Popularity,
    pub p_repeat: f64,
    /// An interval [low, high] around `p_repeat` (the conservative end of a fit): the
    /// renewal bound then holds for every p_r in it; the other models use `p_repeat`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_repeat_interval: Option<[f64; 2]>,
    pub placement: Placement,
    /// The reuse-distance survival S(n) measured on a trace ([`reuse`]): when present,
    /// the renewal bound reads its U_j from it instead of following eq. (24) with Q
    /// and zeta (the two agree under the model; a fitted Q and zeta do not pin S down
    /// as precisely as the trace does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reuse: Option<ReuseProfile>,
    /// Free-form provenance (which trace, which estimator, fit statistics).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<serde_json::Value>,
}

fn format_tag() -> String {
    FORMAT_TAG.to_string()
}

pub const FORMAT_TAG: &str = "rbf-workload/1";

/// Memory per rank of D across the pipeline (8-byte Q and zeta, 16-byte alias
/// entries for each, the ranking, a few per-rank model arrays): an estimate within a
/// factor of two, used only to refuse what cannot fit.
const BYTES_PER_RANK: f64 = 96.0;

impl Workload {
    pub fn zipf(distinct: usize, alpha: f64, p_repeat: f64, placement: Placement) -> Self {
        Workload {
            format: format_tag(),
            popularity: Popularity::Zipf { distinct, alpha },
            p_repeat,
            p_repeat_interval: None,
            placement,
            reuse: None,
            provenance: None,
        }
    }

    pub fn explicit(q: Vec<f64>, p_repeat: f64, placement: Placement) -> Self {
        Workload {
            format: format_tag(),
            popularity: Popularity::Explicit(q),
            p_repeat,
            p_repeat_interval: None,
            placement,
            reuse: None,
            provenance: None,
        }
    }

    /// D, the number of previously seen messages.
    pub fn distinct(&self) -> usize {
        match &self.popularity {
            Popularity::Zipf { distinct, .. } | Popularity::PiecewiseZipf { distinct, .. } => {
                *distinct
            }
            Popularity::Explicit(v) => v.len(),
        }
    }

    /// Refuses a D whose per-rank arrays (Q, zeta, the generator's alias tables and
    /// ranking, the FN models' per-rank sums) cannot fit in this machine's memory.
    pub fn check_size(distinct: usize) -> Result<()> {
        rbf_foundations::resources::check_memory(
            &format!("a workload of D = {distinct} messages"),
            distinct as f64 * BYTES_PER_RANK,
        )
    }

    /// Without new arrivals (p_r = 1) at most D k bits are ever set and D messages
    /// inserted: a filter whose trigger lies above that never recycles, its FN rate is
    /// exactly 0, and the FN models' per-insertion recursion, which runs until the
    /// filter recycles, would not end.
    pub fn never_recycles(&self, filter: &crate::filter::FilterConfig) -> bool {
        let d = self.distinct() as u64;
        self.p_repeat >= 1.0
            && match (filter.sigma, filter.max_inserts) {
                (_, Some(n)) => d <= n,
                (Some(s), None) => d.saturating_mul(u64::from(filter.hashes)) <= s,
                (None, None) => false,
            }
    }

    /// Checks every field, naming the offending key.
    pub fn validate(&self) -> Result<()> {
        if self.format != FORMAT_TAG {
            return Err(Error::setting(
                "format",
                Problem::range(
                    format!("expected \"{FORMAT_TAG}\""),
                    format!("\"{}\"", self.format),
                ),
            ));
        }
        if !(0.0..=1.0).contains(&self.p_repeat) {
            return Err(Error::setting(
                "p_repeat",
                Problem::range("must lie in [0, 1]", self.p_repeat),
            ));
        }
        if let Some([low, high]) = self.p_repeat_interval {
            if !(0.0 <= low && low <= self.p_repeat && self.p_repeat <= high && high <= 1.0) {
                return Err(Error::setting(
                    "p_repeat_interval",
                    Problem::range(
                        format!(
                            "must be [low, high] with 0 <= low <= p_repeat ({}) <= high <= 1",
                            self.p_repeat
                        ),
                        format!("[{low}, {high}]"),
                    ),
                ));
            }
        }
        if self.distinct() == 0 {
            return Err(Error::setting(
                "popularity",
                Problem::rule("needs at least one message (distinct >= 1)"),
            ));
        }
        Workload::check_size(self.distinct())?;
        match &self.popularity {
            // Checked without building D probabilities.
            Popularity::Zipf { alpha, .. } => Probabilities::check_zipf_alpha(*alpha)?,
            Popularity::Explicit(_) => drop(self.repeat_distribution()?),
            Popularity::PiecewiseZipf { exponents, .. } => {
                if exponents.is_empty()
                    || exponents
                        .iter()
                        .any(|a| !a.is_finite() || *a < 0.0 || *a > 64.0)
                {
                    return Err(Error::setting(
                        "popularity.piecewise_zipf.exponents",
                        Problem::range(
                            "needs one or more finite exponents in [0, 64]",
                            format!("{exponents:?}"),
                        ),
                    ));
                }
            }
        }
        self.placement.validate(self.distinct())?;
        if let Some(r) = &self.reuse {
            r.validate()?;
        }
        Ok(())
    }

    /// Q as normalised probabilities, most popular first.
    pub fn repeat_distribution(&self) -> Result<Probabilities> {
        Workload::check_size(self.distinct())?;
        match &self.popularity {
            Popularity::Zipf { distinct, alpha } => Probabilities::zipf(*distinct, *alpha),
            Popularity::PiecewiseZipf {
                distinct,
                exponents,
            } => {
                let w = Popularity::piecewise_weights(*distinct, exponents);
                Probabilities::from_weight_vec("popularity", w)
            }
            Popularity::Explicit(v) => {
                let q = Probabilities::from_weights("popularity", v)?;
                if let Some(i) = q.windows(2).position(|w| w[1] > w[0] * (1.0 + 1e-12)) {
                    // The rule, then the first pair of entries that breaks it.
                    return Err(Error::setting(
                        "popularity",
                        Problem::rule(format!(
                            "explicit probabilities must be non-increasing (ranked by popularity); entry {} ({}) exceeds entry {} ({})",
                            i + 1,
                            q[i + 1],
                            i,
                            q[i]
                        )),
                    ));
                }
                Ok(q)
            }
        }
    }

    /// zeta as normalised probabilities over ranks 0..D.
    pub fn placement_distribution(&self) -> Result<Probabilities> {
        self.placement.probabilities(self.distinct())
    }

    pub fn load(path: &Path) -> Result<Workload> {
        let text = crate::ingest::input::read_text(path)?;
        let w: Workload = serde_json::from_str(&text).map_err(|e| Error::Parse {
            path: path.to_path_buf(),
            line: e.line() as u64,
            message: format!("not a workload file: {e}"),
        })?;
        w.validate().map_err(|e| e.in_file(path))?;
        Ok(w)
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| Error::encode("serialise workload", e))?;
        rbf_foundations::output_file::write_file(path, text.as_bytes())
    }
}

/// Zipf(D, alpha) probabilities q_i = (i+1)^-alpha / H_{D,alpha}, for a finite
/// alpha >= 0 (checked callers go through [`Probabilities::zipf`]).
pub fn zipf(distinct: usize, alpha: f64) -> Vec<f64> {
    let q = probabilities::zipf_weights(distinct, alpha);
    let total = probabilities::compensated_sum(&q);
    q.into_iter().map(|x| x / total).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The construction before blocks: a logarithm and an exponential per rank.
    fn piecewise_by_log_exp(distinct: usize, exponents: &[f64]) -> Vec<f64> {
        let top = Popularity::piecewise_log_weight(exponents, 0.0);
        (0..distinct)
            .map(|i| (Popularity::piecewise_log_weight(exponents, i as f64) - top).exp())
            .collect()
    }

    #[test]
    fn piecewise_weights_are_the_log_exp_ones() {
        let shapes: [&[f64]; 7] = [
            &[0.3],
            &[1.0],
            &[2.0],
            &[0.9, 0.9, 1.2, 0.3, 2.0, 0.7, 1.1],
            &[2.0, 0.3, 1.5, 0.5, 1.9, 0.4, 1.0, 0.6],
            &[0.5, 1.3],
            &[1.7, 0.8, 0.3, 1.4, 0.9, 2.0],
        ];
        let mut worst = 0.0_f64;
        for (s, exponents) in shapes.iter().enumerate() {
            // Sizes off the blocks' and decades' edges as well as on them.
            let distinct = [10_000_000, 8_912_345, 100_001, 1000, 65, 1][s % 6];
            let fast = Popularity::piecewise_weights(distinct, exponents);
            let reference = piecewise_by_log_exp(distinct, exponents);
            assert_eq!(fast.len(), distinct);
            for (i, (f, r)) in fast.iter().zip(&reference).enumerate() {
                let e = (f - r).abs() / r;
                assert!(
                    e < 1e-12,
                    "{exponents:?}, D = {distinct}, rank {i}: {f} vs {r}"
                );
                worst = worst.max(e);
            }
        }
        eprintln!("piecewise weights: largest relative difference {worst:e}");
    }

    #[test]
    fn the_binomial_series_is_cut_where_the_rest_is_negligible() {
        let mut c = [0.0; BINOMIAL_TERMS];
        // (1 + t)^-1 = 1 - t + t^2 - ...; at t_max = 1e-3 six terms leave < 1e-18.
        let terms = binomial_series(1.0, 1e-3, &mut c).unwrap();
        assert_eq!(&c[..3], &[1.0, -1.0, 1.0]);
        assert!((horner(&c[..terms], 1e-3) - 1.0 / 1.001).abs() < 1e-15);
        // A block with t up to 1 or a steep exponent is left to the exact construction.
        assert!(binomial_series(1.0, 1.0, &mut c).is_none());
        assert!(binomial_series(40.0, 0.02, &mut c).is_none());
        assert_eq!(binomial_series(0.7, 0.0, &mut c), Some(1));
    }

    #[test]
    fn zipf_is_normalised_and_decreasing() {
        let q = zipf(1000, 1.0);
        assert!((q.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(q.windows(2).all(|w| w[0] >= w[1]));
        let u = zipf(10, 0.0);
        assert!(u.iter().all(|x| (x - 0.1).abs() < 1e-15));
    }

    #[test]
    fn json_round_trip() {
        let w = Workload::explicit(
            vec![0.5, 0.3, 0.2],
            0.9,
            Placement::Explicit(vec![1.0, 1.0, 2.0]),
        );
        let s = serde_json::to_string(&w).unwrap();
        let back: Workload = serde_json::from_str(&s).unwrap();
        assert_eq!(w, back);
        assert_eq!(
            back.placement_distribution().unwrap().as_slice(),
            [0.25, 0.25, 0.5]
        );
        let z = Workload::zipf(5, 1.0, 1.0, Placement::Top);
        let s = serde_json::to_string(&z).unwrap();
        assert!(s.contains("\"zipf\""), "{s}");
        assert_eq!(serde_json::from_str::<Workload>(&s).unwrap(), z);
    }

    #[test]
    fn validation_names_the_key() {
        let w = Workload::explicit(vec![0.2, 0.8], 0.9, Placement::Uniform);
        let e = w.validate().unwrap_err().to_string();
        assert!(
            e.contains("popularity") && e.contains("non-increasing"),
            "{e}"
        );
        let w = Workload::zipf(3, 1.0, 1.5, Placement::Uniform);
        assert!(w.validate().unwrap_err().to_string().contains("p_repeat"));
        let w = Workload::zipf(3, 1.0, 0.5, Placement::Explicit(vec![1.0]));
        assert!(w.validate().unwrap_err().to_string().contains("placement"));
    }
}
