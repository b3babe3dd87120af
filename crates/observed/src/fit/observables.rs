//! The three repeat statistics of [`rbf_data::workload::transform`] measured on a trace:
//! the reuse distance d, the age a (arrivals since the key's first sight) and the
//! distance d2 to the arrival before the previous one, each as the transform
//! L(tau) = E[1 - e^(-x / tau)] over the measured repeats, with its standard error.
//!
//! Each repeat records its three values in log-linear histograms (the buckets of
//! [`super::reuse`]: exact below 1024, then under 1 % wide), one set per batch of
//! consecutive arrivals, so memory is fixed however long the trace is; the transform
//! reads each bucket at its middle (a relative error far below the noise). Batches are
//! kept as the reuse profile keeps them (32 to 64, merged pairwise, but starting at
//! [`FIRST_BATCH`] arrivals so that short traces have batches too), and the standard
//! error is that of a ratio of sums over groups of consecutive batches at least
//! [`SPAN`] tau long (batch means with batches longer than the statistic's memory).
//!
//! Censoring: a key first seen in the warm-up, or before the trace began, has an
//! unknown age, and one seen once before has an unknown d2; both are recorded as
//! infinite. The truth is at least the arrivals since the start of the measured part,
//! so L(tau) is read only from batches that start at least [`HORIZON`] tau arrivals
//! into it, where the error is below e^-10 per such repeat. The same rule keeps the
//! reuse distance (whose truth is never longer than the trace) from being cut short at
//! large tau, where the trace has not run long enough.

use serde::Serialize;

use super::reuse::{bucket, bucket_low, close_batch};

/// Arrivals in a first batch.
pub const FIRST_BATCH: u64 = 256;
/// Batches used for L(tau) start this many tau into the measured arrivals.
pub const HORIZON: f64 = 10.0;
/// Batches are grouped into runs at least this many tau long for the error.
pub const SPAN: f64 = 2.0;
/// Fewest eligible batches for a standard error.
pub const MIN_BATCHES: usize = 8;

/// Which statistic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Observable {
    /// The reuse distance d (the renewal bound's reuse profile).
    Reuse,
    /// The age a since the key's first sight.
    Age,
    /// The distance d2 to the arrival before the previous one.
    Second,
}

impl Observable {
    pub const ALL: [Observable; 3] = [Observable::Reuse, Observable::Age, Observable::Second];

    pub fn name(self) -> &'static str {
        match self {
            Observable::Reuse => "reuse distance",
            Observable::Age => "age since first sight",
            Observable::Second => "distance to the second-last arrival",
        }
    }

    /// The token JSON writes (kebab-case, as serde names it).
    pub fn token(self) -> &'static str {
        match self {
            Observable::Reuse => "reuse",
            Observable::Age => "age",
            Observable::Second => "second",
        }
    }

    /// A word for tables: "reuse", "age", "2nd-last".
    pub fn short(self) -> &'static str {
        match self {
            Observable::Reuse => "reuse",
            Observable::Age => "age",
            Observable::Second => "2nd-last",
        }
    }
}

#[derive(Clone, Debug, Default)]
struct Batch {
    /// Measured index of the batch's first arrival.
    start: u64,
    arrivals: u64,
    repeats: u64,
    hist: [Vec<u64>; 3],
    infinite: [u64; 3],
}

impl Batch {
    fn absorb(&mut self, other: &Batch) {
        self.arrivals += other.arrivals;
        self.repeats += other.repeats;
        for k in 0..3 {
            let (a, b) = (&mut self.hist[k], &other.hist[k]);
            if a.len() < b.len() {
                a.resize(b.len(), 0);
            }
            a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
            self.infinite[k] += other.infinite[k];
        }
    }

    /// The sum of 1 - e^(-x / tau) over the batch's repeats for one statistic.
    fn transform_sum(&self, k: usize, tau: f64) -> f64 {
        let mut sum = self.infinite[k] as f64;
        for (b, &c) in self.hist[k].iter().enumerate() {
            if c != 0 {
                sum += c as f64 * -(-middle(b) / tau).exp_m1();
            }
        }
        sum
    }
}

/// The middle of histogram bucket b.
fn middle(b: usize) -> f64 {
    let lo = bucket_low(b.max(1)) as f64;
    let hi = bucket_low(b.max(1) + 1) as f64;
    (lo + hi - 1.0) / 2.0
}

/// The three statistics of the measured repeats, batch by batch.
#[derive(Clone, Debug)]
pub struct ObservableCounts {
    batch_len: u64,
    done: Vec<Batch>,
    current: Batch,
}

impl Default for ObservableCounts {
    fn default() -> Self {
        ObservableCounts {
            batch_len: FIRST_BATCH,
            done: Vec::new(),
            current: Batch::default(),
        }
    }
}

/// One repeat's values (None: infinite or unknown, see the module notes).
#[derive(Clone, Copy, Debug)]
pub struct RepeatValues {
    pub reuse: u64,
    pub age: Option<u64>,
    pub second: Option<u64>,
}

impl ObservableCounts {
    /// One measured arrival (measured index `m`); `repeat` for an arrival of a key seen
    /// before.
    #[inline]
    pub fn record(&mut self, m: u64, repeat: Option<RepeatValues>) {
        let c = &mut self.current;
        if c.arrivals == 0 {
            c.start = m;
        }
        c.arrivals += 1;
        if let Some(v) = repeat {
            c.repeats += 1;
            for (k, x) in [Some(v.reuse), v.age, v.second].into_iter().enumerate() {
                match x {
                    Some(x) => {
                        let b = bucket(x.max(1));
                        let h = &mut c.hist[k];
                        if b >= h.len() {
                            h.resize(b + 1, 0);
                        }
                        h[b] += 1;
                    }
                    None => c.infinite[k] += 1,
                }
            }
        }
        if self.current.arrivals == self.batch_len {
            close_batch(
                &mut self.done,
                &mut self.current,
                &mut self.batch_len,
                Batch::absorb,
            );
        }
    }

    /// Measured arrivals so far.
    pub fn arrivals(&self) -> u64 {
        self.done.iter().map(|b| b.arrivals).sum::<u64>() + self.current.arrivals
    }

    /// The transforms at each tau, where enough batches start late enough.
    pub fn estimate(&self, taus: &[f64]) -> Measured {
        let batches: Vec<&Batch> = self
            .done
            .iter()
            .chain((self.current.arrivals > 0).then_some(&self.current))
            .collect();
        let mut out = Measured {
            taus: taus.to_vec(),
            values: [Vec::new(), Vec::new(), Vec::new()],
        };
        for (k, values) in out.values.iter_mut().enumerate() {
            for &tau in taus {
                // Groups of consecutive batches at least SPAN tau long: a statistic at
                // time scale tau stays correlated over about tau arrivals, and batch
                // means need batches longer than that.
                let mut pairs: Vec<(f64, f64)> = Vec::new();
                let mut span = 0u64;
                for b in batches.iter().filter(|b| b.start as f64 >= HORIZON * tau) {
                    let (y, x) = (b.transform_sum(k, tau), b.repeats as f64);
                    match pairs.last_mut() {
                        Some(last) if (span as f64) < SPAN * tau => {
                            last.0 += y;
                            last.1 += x;
                            span += b.arrivals;
                        }
                        _ => {
                            pairs.push((y, x));
                            span = b.arrivals;
                        }
                    }
                }
                // A short last group joins the one before it.
                if (span as f64) < SPAN * tau && pairs.len() > 1 {
                    if let Some(last) = pairs.pop() {
                        if let Some(prev) = pairs.last_mut() {
                            prev.0 += last.0;
                            prev.1 += last.1;
                        }
                    }
                }
                pairs.retain(|p| p.1 > 0.0);
                values.push(ratio_with_error(&pairs));
            }
        }
        out
    }
}

/// A transform's estimate at one tau.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Point {
    pub mean: f64,
    /// Standard error by batch means.
    pub se: f64,
    /// Batches behind it.
    pub batches: usize,
}

/// sum y / sum x over batches, with the delta-method standard error of a ratio of
/// batch sums; None with fewer than [`MIN_BATCHES`] batches.
fn ratio_with_error(pairs: &[(f64, f64)]) -> Option<Point> {
    let n = pairs.len();
    if n < MIN_BATCHES {
        return None;
    }
    let (sy, sx) = pairs
        .iter()
        .fold((0.0, 0.0), |(a, b), (y, x)| (a + y, b + x));
    if sx <= 0.0 {
        return None;
    }
    let r = sy / sx;
    let ss: f64 = pairs.iter().map(|(y, x)| (y - r * x).powi(2)).sum();
    let nf = n as f64;
    let se = (nf / (nf - 1.0) * ss).sqrt() / sx;
    Some(Point {
        mean: r,
        se,
        batches: n,
    })
}

/// The measured transforms: `values[k][j]` for [`Observable::ALL`]`[k]` at `taus[j]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    pub taus: Vec<f64>,
    pub values: [Vec<Option<Point>>; 3],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometric_distances_give_their_transform() {
        // Reuse distances geometric with parameter p: E[1 - e^(-d/tau)] =
        // 1 - p e^(-1/tau) / (1 - (1 - p) e^(-1/tau)).
        let p = 0.02;
        let mut rng = rbf_data::synth::Rng::seed(3);
        let mut c = ObservableCounts::default();
        for m in 0..2_000_000u64 {
            let mut d = 1;
            while !rng.chance(p) {
                d += 1;
            }
            c.record(
                m,
                Some(RepeatValues {
                    reuse: d,
                    age: None,
                    second: Some(d + 1),
                }),
            );
        }
        let taus = [1.0, 10.0, 50.0, 300.0];
        let est = c.estimate(&taus);
        for (j, &tau) in taus.iter().enumerate() {
            let z = (-1.0f64 / tau).exp();
            let want = 1.0 - p * z / (1.0 - (1.0 - p) * z);
            let got = est.values[0][j].unwrap();
            assert!(
                (got.mean - want).abs() < 4.0 * got.se + 1e-4,
                "tau {tau}: {got:?} vs {want}"
            );
            assert!(got.se > 0.0 && got.se < 1e-3);
            assert_eq!(est.values[1][j].unwrap().mean, 1.0);
        }
    }
}
