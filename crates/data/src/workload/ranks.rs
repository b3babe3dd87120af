//! Q and zeta of a workload rank by rank, in blocks, without holding all D of them: the
//! same values to the bit as [`Workload::repeat_distribution`] and
//! [`Workload::placement_distribution`] (the same weights, scaled and summed in the same
//! order), for the shapes `rbf fit` writes and the papers' placements. What lets a
//! fit's alternative of tens of millions of ranks be held as runs of ranks (the FN
//! models' `QRuns`) instead of several vectors of D values.

use super::probabilities::{zipf_weights_from, Probabilities};
use super::{mixture_weights, Placement, Popularity, Workload};
use rbf_foundations::error::Result;

/// Ranks handed over per call.
pub const BLOCK: usize = 4096;

/// Neumaier's compensated sum fed in pieces: the bits of
/// [`super::probabilities::compensated_sum`] over the whole sequence.
#[derive(Clone, Copy, Default)]
struct Compensated {
    sum: f64,
    c: f64,
}

impl Compensated {
    fn add(&mut self, x: f64) {
        let t = self.sum + x;
        if self.sum.abs() >= x.abs() {
            self.c += (self.sum - t) + x;
        } else {
            self.c += (x - t) + self.sum;
        }
        self.sum = t;
    }

    fn total(self) -> f64 {
        self.sum + self.c
    }
}

/// The popularity's weights (before normalising), block by block.
enum Weights<'w> {
    Zipf {
        distinct: usize,
        alpha: f64,
        made: usize,
    },
    Piecewise(super::PiecewiseBlocks<'w>),
}

impl<'w> Weights<'w> {
    fn of(p: &'w Popularity) -> Option<Self> {
        match p {
            Popularity::Zipf { distinct, alpha } => Some(Weights::Zipf {
                distinct: *distinct,
                alpha: *alpha,
                made: 0,
            }),
            Popularity::PiecewiseZipf {
                distinct,
                exponents,
            } => Some(Weights::Piecewise(super::PiecewiseBlocks::new(
                *distinct, exponents,
            ))),
            Popularity::Explicit(_) => None,
        }
    }

    /// Appends the next weights to `w`; false once every rank is made.
    fn next(&mut self, w: &mut Vec<f64>) -> bool {
        match self {
            Weights::Zipf {
                distinct,
                alpha,
                made,
            } => {
                if *made >= *distinct {
                    return false;
                }
                let end = (*made + BLOCK).min(*distinct);
                w.extend(zipf_weights_from(*made..end, *alpha));
                *made = end;
                true
            }
            Weights::Piecewise(blocks) => blocks.next_block(w),
        }
    }
}

/// zeta before normalising, as the placement's construction makes it rank by rank.
enum Zeta {
    /// Already normalised: 1 / D everywhere (no scaling, no sum).
    Uniform(f64),
    /// All the mass on one rank.
    Point(usize),
    /// Equal segments (weights normalised first) plus the top and bottom ranks' extra
    /// weight, then scaled by `max` (when it is not 1) and divided by `total`.
    Spread {
        distinct: usize,
        segments: Vec<f64>,
        top: f64,
        bottom: f64,
        max: f64,
        total: f64,
    },
}

impl Zeta {
    fn of(p: &Placement, distinct: usize) -> Result<Option<Zeta>> {
        let (weights, ends) = match p {
            Placement::Uniform => return Ok(Some(Zeta::Uniform(1.0 / distinct as f64))),
            Placement::Top => return Ok(Some(Zeta::Point(0))),
            Placement::Bottom => return Ok(Some(Zeta::Point(distinct - 1))),
            Placement::Explicit(_) => return Ok(None),
            Placement::Segments(w) => (
                Probabilities::from_weights("placement", w)?.into_vec(),
                false,
            ),
            Placement::Mixture {
                top,
                bottom,
                segments,
            } => (
                Probabilities::from_weights(
                    "placement",
                    &mixture_weights(*top, *bottom, segments),
                )?
                .into_vec(),
                true,
            ),
        };
        let (top, bottom, segments) = if ends {
            (weights[0], weights[1], weights[2..].to_vec())
        } else {
            (0.0, 0.0, weights)
        };
        let mut z = Zeta::Spread {
            distinct,
            segments,
            top,
            bottom,
            max: 1.0,
            total: 1.0,
        };
        // The largest raw value, then the compensated sum of the scaled ones, rank by
        // rank as the normalisation goes over the built vector.
        let mut max = 0.0_f64;
        z.for_each_raw(|_, x| max = max.max(x));
        let mut sum = Compensated::default();
        z.for_each_raw(|_, x| sum.add(if max != 1.0 { x / max } else { x }));
        if let Zeta::Spread {
            max: m, total: t, ..
        } = &mut z
        {
            *m = max;
            *t = sum.total();
        }
        Ok(Some(z))
    }

    /// Every rank's raw value, in rank order (Spread only).
    fn for_each_raw(&self, mut f: impl FnMut(usize, f64)) {
        let Zeta::Spread {
            distinct,
            segments,
            top,
            bottom,
            ..
        } = self
        else {
            return;
        };
        let (d, k) = (*distinct, segments.len());
        for (j, wj) in segments.iter().enumerate() {
            let (lo, hi) = (j * d / k, (j + 1) * d / k);
            let v = wj / (hi - lo) as f64;
            for i in lo..hi {
                let mut x = v;
                if i == 0 {
                    x += top;
                }
                if i == d - 1 {
                    x += bottom;
                }
                f(i, x);
            }
        }
    }

    /// zeta at ranks `first..first + n`, appended to `out`.
    fn block(&self, first: usize, n: usize, out: &mut Vec<f64>) {
        match self {
            Zeta::Uniform(x) => out.extend(std::iter::repeat_n(*x, n)),
            Zeta::Point(at) => {
                out.extend((first..first + n).map(|i| if i == *at { 1.0 } else { 0.0 }))
            }
            Zeta::Spread {
                distinct,
                segments,
                top,
                bottom,
                max,
                total,
            } => {
                let (d, k) = (*distinct, segments.len());
                out.extend((first..first + n).map(|i| {
                    // The segment holding rank i: the j with j d / k <= i < (j + 1) d / k.
                    let mut j = (i * k / d).min(k - 1);
                    while j > 0 && i < j * d / k {
                        j -= 1;
                    }
                    while (j + 1) * d / k <= i {
                        j += 1;
                    }
                    let (lo, hi) = (j * d / k, (j + 1) * d / k);
                    let mut x = segments[j] / (hi - lo) as f64;
                    if i == 0 {
                        x += top;
                    }
                    if i == d - 1 {
                        x += bottom;
                    }
                    if *max != 1.0 {
                        x /= max;
                    }
                    x / total
                }));
            }
        }
    }
}

impl Workload {
    /// Calls `f(first, q, zeta)` for consecutive blocks of ranks, `q` and `zeta` the
    /// values of ranks `first..first + q.len()`, the same bits as
    /// [`Workload::repeat_distribution`] and [`Workload::placement_distribution`]. Goes
    /// over the popularity's weights twice (their sum, then the values) and holds one
    /// block. Ok(false), without calling `f`, where the workload is not streamed this
    /// way (explicit vectors, already held, or weights whose largest is not rank 0's
    /// 1): build the vectors instead.
    pub fn for_each_rank_block(&self, mut f: impl FnMut(usize, &[f64], &[f64])) -> Result<bool> {
        // No memory check per rank (Workload::check_size): one block is held.
        self.validate()?;
        let d = self.distinct();
        let (Some(mut weights), Some(zeta)) =
            (Weights::of(&self.popularity), Zeta::of(&self.placement, d)?)
        else {
            return Ok(false);
        };
        let mut w = Vec::with_capacity(BLOCK + 64);
        let (mut max, mut sum) = (0.0_f64, Compensated::default());
        while weights.next(&mut w) {
            for &x in &w {
                max = max.max(x);
                sum.add(x);
            }
            w.clear();
        }
        if max != 1.0 {
            return Ok(false);
        }
        let total = sum.total();
        let mut weights = Weights::of(&self.popularity).expect("streamed above");
        let (mut first, mut z) = (0, Vec::with_capacity(BLOCK + 64));
        loop {
            let more = weights.next(&mut w);
            if w.len() >= BLOCK || (!more && !w.is_empty()) {
                w.iter_mut().for_each(|x| *x /= total);
                zeta.block(first, w.len(), &mut z);
                f(first, &w, &z);
                first += w.len();
                w.clear();
                z.clear();
            }
            if !more {
                return Ok(true);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Placement;

    fn popularities() -> [Popularity; 3] {
        [
            Popularity::Zipf {
                distinct: 10_007,
                alpha: 0.9,
            },
            Popularity::PiecewiseZipf {
                distinct: 123_457,
                exponents: vec![1.1, 0.9, 1.3, 0.7, 1.5, 2.0],
            },
            Popularity::PiecewiseZipf {
                distinct: 8_193,
                exponents: vec![0.4],
            },
        ]
    }

    fn placements() -> [Placement; 6] {
        [
            Placement::Uniform,
            Placement::Top,
            Placement::Bottom,
            Placement::Segments(vec![8.0, 4.0, 2.0, 1.0]),
            Placement::Mixture {
                top: 0.2,
                bottom: 0.3,
                segments: vec![0.0, 0.7, 1e-22, 0.1],
            },
            Placement::Mixture {
                top: 3.0,
                bottom: 0.0,
                segments: vec![1.0, 1.0, 1.0],
            },
        ]
    }

    #[test]
    fn the_blocks_are_the_built_vectors_bit_for_bit() {
        let (popularities, placements) = (popularities(), placements());
        for p in &popularities {
            for z in &placements {
                let w = Workload {
                    popularity: p.clone(),
                    placement: z.clone(),
                    ..Workload::zipf(10, 1.0, 0.9, Placement::Uniform)
                };
                let (q, zeta) = (
                    w.repeat_distribution().unwrap(),
                    w.placement_distribution().unwrap(),
                );
                let (mut sq, mut sz, mut next) = (Vec::new(), Vec::new(), 0);
                let streamed = w
                    .for_each_rank_block(|first, bq, bz| {
                        assert_eq!(first, next);
                        assert_eq!(bq.len(), bz.len());
                        next += bq.len();
                        sq.extend_from_slice(bq);
                        sz.extend_from_slice(bz);
                    })
                    .unwrap();
                assert!(streamed);
                let same = |a: &[f64], b: &[f64]| {
                    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
                };
                assert!(same(&sq, q.as_slice()), "{p:?}, {z:?}: q");
                assert!(same(&sz, zeta.as_slice()), "{p:?}, {z:?}: zeta");
            }
        }
    }

    #[test]
    fn explicit_vectors_are_left_to_the_built_ones() {
        let w = Workload::explicit(vec![0.5, 0.3, 0.2], 0.9, Placement::Uniform);
        assert!(!w
            .for_each_rank_block(|_, _, _| panic!("not streamed"))
            .unwrap());
    }
}
