//! The insertion-count decomposition of the renewal model's bit process (see
//! [`super::renewal`]): whether arrival j sets bits (probability eta_j) does not depend
//! on the bit count, so the number N_j of insertions after j arrivals is a
//! Poisson-binomial variable independent of which bits those insertions set, and every
//! per-arrival sum the model needs is sum_n P(N_j = n) x(n) for a per-insertion sum
//! x(n) computed once.
//!
//! Each arrival updates the law of N_j on its window and takes the four sums in one
//! fused pass ([`step_and_sums`]). The window drops cells below `tiny`; each sum then
//! misses at most the dropped mass, which the renewal bound's window term covers.

use crate::model::false_negative::bitdist::{trim_window, Summary};
use rbf_foundations::simd::{sum_lanes, with_avx2, Simd};

/// P(N_j = n) on a window of n and the per-insertion sums it weighs.
#[derive(Clone)]
pub struct Decomposed {
    /// Per insertion count n: the sums of psi(., n), one array per field (alive,
    /// alive_cap, sets_cap, lucky).
    fields: [Vec<f64>; 4],
    /// P(N = n) on the window lo..=hi; zero outside it.
    pn: Vec<f64>,
    lo: usize,
    hi: usize,
    /// The four sums for the current law.
    sums: [f64; 4],
    tiny: f64,
    simd: Simd,
    pub dropped_n: f64,
    pub dropped_psi: f64,
    pub frozen_lucky: f64,
    /// alive_cap(n) >= alive(n) at every n followed: the computed alive_cap sum is
    /// then at least the computed alive sum (same lanes and order, and fused
    /// multiply-adds of non-negative terms are monotone).
    cap_bounded: bool,
    /// See [`Decomposed::set_cap_floor`].
    cap_floor: Option<f64>,
}

impl Decomposed {
    /// `per_n[n]`: the sums after n insertions, followed until their mass is below
    /// `tiny`; `dropped`: mass the per-insertion recursion dropped.
    pub fn from_per_n(per_n: Vec<Summary>, dropped: f64, frozen_lucky: f64, tiny: f64) -> Self {
        let mut d = Decomposed::open(&per_n, tiny);
        d.close(dropped, frozen_lucky);
        d
    }

    /// The law of N at its start (all mass at 0) with the first per-insertion sums
    /// `per_n` (at least one); more come with [`Decomposed::extend`], and
    /// [`Decomposed::close`] adds the dropped masses once they are all known. The
    /// whole sequence at once ([`Decomposed::from_per_n`]) and the same sequence in
    /// pieces step through the same values.
    pub fn open(per_n: &[Summary], tiny: f64) -> Self {
        let mut d = Decomposed {
            fields: Default::default(),
            pn: Vec::new(),
            lo: 0,
            hi: 0,
            sums: [0.0; 4],
            tiny,
            simd: Simd::detect(),
            dropped_n: 0.0,
            dropped_psi: 0.0,
            frozen_lucky: 0.0,
            cap_bounded: true,
            cap_floor: None,
        };
        d.extend(per_n);
        d.pn[0] = 1.0;
        d.sums = [0, 1, 2, 3].map(|f| d.fields[f][0]);
        d
    }

    /// Appends per-insertion sums (the next insertion counts).
    pub fn extend(&mut self, per_n: &[Summary]) {
        let pick: [fn(&Summary) -> f64; 4] =
            [|s| s.alive, |s| s.alive_cap, |s| s.sets_cap, |s| s.lucky];
        for (field, f) in self.fields.iter_mut().zip(pick) {
            field.extend(per_n.iter().map(f));
        }
        self.cap_bounded &= per_n.iter().all(|s| s.alive_cap >= s.alive);
        self.pn.resize(self.fields[0].len(), 0.0);
    }

    /// Insertion counts with sums so far.
    pub fn counts(&self) -> usize {
        self.fields[0].len()
    }

    /// The highest insertion count on the law's window.
    pub fn top(&self) -> usize {
        self.hi
    }

    /// The last sums are in: `dropped` is the mass the per-insertion recursion
    /// dropped, to which the tail beyond the last count followed is added (every sum
    /// there is below its alive_cap < tiny).
    pub fn close(&mut self, dropped: f64, frozen_lucky: f64) {
        let tail = self.fields[1].last().copied().unwrap_or(0.0);
        self.dropped_psi = dropped + tail;
        self.frozen_lucky = frozen_lucky;
    }

    /// The first insertion count at which the sigma + k process holds less than
    /// `eps` (the number of counts followed when it never does).
    pub fn insertions_to(&self, eps: f64) -> usize {
        self.fields[1].partition_point(|&x| x >= eps)
    }

    /// With `Some(floor)`, the next steps may leave out the alive_cap sum (a sixth of a
    /// step's arithmetic) where the alive sum is at least `floor`: alive_cap is then
    /// reported as the alive sum, below the sum itself (which is at least the alive
    /// one) but, like it, not below `floor`. For a caller that only asks whether
    /// alive_cap < floor: the answer is the same, and where it can be yes the sum is
    /// computed as without a floor (same bits). None: every sum, always.
    pub fn set_cap_floor(&mut self, floor: Option<f64>) {
        self.cap_floor = floor;
    }

    pub fn summary(&self) -> Summary {
        let [alive, alive_cap, sets_cap, lucky] = self.sums;
        Summary {
            alive,
            alive_cap,
            sets_cap,
            lucky,
        }
    }

    /// One arrival: an insertion with probability eta, so P(N = n) becomes
    /// (1 - eta) P(N = n) + eta P(N = n - 1) on the window (plus one cell above it).
    pub fn step(&mut self, eta: f64) {
        let last = self.pn.len() - 1;
        let top = (self.hi + 1).min(last);
        if self.hi == last {
            // Mass moving past the last n followed leaves (its sums are below tiny).
            self.dropped_n += eta * self.pn[last] * self.tiny;
        }
        let lo = self.lo;
        let x = [0, 1, 2, 3].map(|f| &self.fields[f][lo..=top]);
        // The cell below the window is 0 (cells leaving the window are zeroed), and
        // so is the one above it, at `top` when the window grows.
        let p = &mut self.pn[lo..=top];
        // Sums arriving in pieces are checked as they come: every cell this step sums
        // is already in (the caller extends before stepping).
        let floor = self.cap_floor.filter(|_| self.cap_bounded);
        self.sums = match floor {
            None => step_and_sums(self.simd, p, 1.0 - eta, eta, x),
            Some(floor) => {
                let [alive, sets_cap, lucky] =
                    step_and_sums(self.simd, p, 1.0 - eta, eta, [x[0], x[2], x[3]]);
                // Before the trim: the cells the kernel summed, in its order.
                let alive_cap = if alive < floor {
                    lane_dot(p, x[1])
                } else {
                    alive
                };
                [alive, alive_cap, sets_cap, lucky]
            }
        };
        self.hi = top;
        self.dropped_n += trim_window(&mut self.pn, &mut self.lo, &mut self.hi, self.tiny);
    }
}

/// p_n <- keep p_n + eta p_{n-1} for every cell of `p` (the cell below the first is 0),
/// in place from the last cell to the first, and sum_n p_n x_f(n) of the new law for
/// the four fields.
///
/// Order of the sums, the same at every vector level (fused multiply-adds throughout,
/// so the same bits): with r = len mod 8, cell n >= r goes to lane (n - r) mod 8 of
/// its field, cells descending; the cells below r are summed apart; the lanes are
/// then added in order and the apart sum last.
pub fn step_and_sums<const F: usize>(
    simd: Simd,
    p: &mut [f64],
    keep: f64,
    eta: f64,
    x: [&[f64]; F],
) -> [f64; F] {
    assert!(
        x.iter().all(|f| f.len() >= p.len()),
        "field shorter than the window"
    );
    #[cfg(target_arch = "x86_64")]
    if simd == Simd::Avx512 {
        // SAFETY: `simd` comes from `Simd::detect`; the lengths were checked above.
        return unsafe { step_and_sums_avx512(p, keep, eta, x) };
    }
    with_avx2(simd >= Simd::Avx2, || {
        step_and_sums_portable(p, keep, eta, x)
    })
}

#[inline(always)]
fn step_and_sums_portable<const F: usize>(
    p: &mut [f64],
    keep: f64,
    eta: f64,
    x: [&[f64]; F],
) -> [f64; F] {
    let r = p.len() % 8;
    let mut lanes = [[0.0f64; 8]; F];
    let mut apart = [0.0f64; F];
    for n in (0..p.len()).rev() {
        let below = if n > 0 { p[n - 1] } else { 0.0 };
        let v = keep.mul_add(p[n], eta * below);
        p[n] = v;
        for f in 0..F {
            let acc = if n >= r {
                &mut lanes[f][(n - r) % 8]
            } else {
                &mut apart[f]
            };
            *acc = x[f][n].mul_add(v, *acc);
        }
    }
    finish(&lanes, &apart)
}

/// sum_n p_n x(n) in [`step_and_sums`]'s order (the same bits as its sum of that
/// field over the same cells).
fn lane_dot(p: &[f64], x: &[f64]) -> f64 {
    let r = p.len() % 8;
    let mut lanes = [[0.0f64; 8]; 1];
    let mut apart = [0.0f64; 1];
    for n in (0..p.len()).rev() {
        let acc = if n >= r {
            &mut lanes[0][(n - r) % 8]
        } else {
            &mut apart[0]
        };
        *acc = x[n].mul_add(p[n], *acc);
    }
    finish(&lanes, &apart)[0]
}

/// Per field: its lanes in order, then the cells summed apart.
fn finish<const F: usize>(lanes: &[[f64; 8]; F], apart: &[f64; F]) -> [f64; F] {
    std::array::from_fn(|f| sum_lanes(&lanes[f]) + apart[f])
}

/// [`step_and_sums_portable`] with AVX-512: eight cells per register, the cell below
/// each lane from the register below (`valignq`), loaded before anything is stored.
///
/// # Safety
/// The CPU must support AVX-512F; every field is at least as long as `p`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn step_and_sums_avx512<const F: usize>(
    p: &mut [f64],
    keep: f64,
    eta: f64,
    x: [&[f64]; F],
) -> [f64; F] {
    use std::arch::x86_64::*;
    let len = p.len();
    let r = len % 8;
    let pp = p.as_mut_ptr();
    let xp = x.map(|f| f.as_ptr());
    let (k, e) = (_mm512_set1_pd(keep), _mm512_set1_pd(eta));
    let mut s = [_mm512_setzero_pd(); F];
    let mut base = len;
    if base >= 8 + r {
        let mut hi = _mm512_loadu_pd(pp.add(base - 8));
        while base >= 8 + r {
            base -= 8;
            let under = if base >= 8 {
                _mm512_loadu_pd(pp.add(base - 8))
            } else if base > 0 {
                _mm512_set1_pd(*pp.add(base - 1))
            } else {
                _mm512_setzero_pd()
            };
            let below = _mm512_castsi512_pd(_mm512_alignr_epi64(
                _mm512_castpd_si512(hi),
                _mm512_castpd_si512(under),
                7,
            ));
            let v = _mm512_fmadd_pd(k, hi, _mm512_mul_pd(e, below));
            _mm512_storeu_pd(pp.add(base), v);
            for f in 0..F {
                s[f] = _mm512_fmadd_pd(_mm512_loadu_pd(xp[f].add(base)), v, s[f]);
            }
            hi = under;
        }
    }
    let mut lanes = [[0.0f64; 8]; F];
    for f in 0..F {
        _mm512_storeu_pd(lanes[f].as_mut_ptr(), s[f]);
    }
    let mut apart = [0.0f64; F];
    for n in (0..r).rev() {
        let below = if n > 0 { *pp.add(n - 1) } else { 0.0 };
        let v = keep.mul_add(*pp.add(n), eta * below);
        *pp.add(n) = v;
        for f in 0..F {
            apart[f] = (*xp[f].add(n)).mul_add(v, apart[f]);
        }
    }
    finish(&lanes, &apart)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rbf_foundations::simd::same_bits;

    #[test]
    fn every_level_gives_the_same_bits_and_the_plain_update() {
        for len in [1usize, 5, 8, 9, 16, 23, 64, 71] {
            let x: Vec<Vec<f64>> = (0..4)
                .map(|f| {
                    (0..len)
                        .map(|n| 1.0 / (n as f64 + f as f64 + 1.0))
                        .collect()
                })
                .collect();
            let xs = [0, 1, 2, 3].map(|f| x[f].as_slice());
            let start: Vec<f64> = (0..len).map(|n| ((n * 7 + 3) % 11) as f64 / 11.0).collect();
            let runs: Vec<(Vec<f64>, [f64; 4])> = Simd::available()
                .into_iter()
                .map(|level| {
                    let mut p = start.clone();
                    let sums = step_and_sums(level, &mut p, 0.7, 0.3, xs);
                    (p, sums)
                })
                .collect();
            for (p, sums) in &runs[1..] {
                assert!(same_bits(p, &runs[0].0));
                assert!(same_bits(sums, &runs[0].1));
            }
            let want: Vec<f64> = (0..len)
                .map(|n| 0.7 * start[n] + 0.3 * if n > 0 { start[n - 1] } else { 0.0 })
                .collect();
            assert!(want
                .iter()
                .zip(&runs[0].0)
                .all(|(a, b)| (a - b).abs() < 1e-15));
            for f in 0..4 {
                let dot: f64 = want.iter().zip(&x[f]).map(|(a, b)| a * b).sum();
                assert!((dot - runs[0].1[f]).abs() < 1e-13, "len {len} field {f}");
            }
        }
    }

    /// Per-insertion sums of a cycle-like shape: alive falls from 1 to 0 around
    /// insertion `mid`, alive_cap `lag` insertions later.
    fn shaped(len: usize, mid: f64, width: f64, lag: f64) -> Vec<Summary> {
        let fall = |n: f64| 1.0 / (1.0 + ((n - mid) / width).exp());
        (0..len)
            .map(|n| {
                let n = n as f64;
                Summary {
                    alive: fall(n),
                    alive_cap: fall(n - lag),
                    sets_cap: fall(n - lag) * (0.3 + 0.5 * n / len as f64),
                    lucky: fall(n) * 0.01 * (1.0 + (n / 7.0).sin().abs()),
                }
            })
            .collect()
    }

    /// A step with a cap floor gives the same alive, sets_cap and lucky sums as one
    /// without, the same answer to alive_cap < floor, and the same alive_cap bits
    /// wherever alive is below the floor; over windows from a few cells to thousands,
    /// eta from 0.01 to 1, trims of every size, floors from 1e-3 to 1e-12.
    #[test]
    fn the_cap_floor_changes_no_answer_and_no_bits() {
        let (mut below, mut above) = (0usize, 0usize);
        for (len, mid, width, lag) in [
            (400usize, 150.0, 12.0, 20.0),
            (3000, 1200.0, 80.0, 150.0),
            (60, 20.0, 2.0, 4.0),
            (9000, 5000.0, 300.0, 40.0),
        ] {
            for (floor, tiny) in [(1e-3, 1e-30), (1e-10, 1e-30), (1e-12, 1e-20)] {
                let per_n = shaped(len, mid, width, lag);
                let mut exact = Decomposed::from_per_n(per_n.clone(), 0.0, 0.0, tiny);
                let mut lazy = Decomposed::from_per_n(per_n, 0.0, 0.0, tiny);
                assert!(lazy.cap_bounded);
                for j in 0..200_000usize {
                    let eta = [0.01, 0.02, 0.5, 1.0, 0.3][j % 5] * (1.0 - (j % 13) as f64 * 0.01);
                    lazy.set_cap_floor(Some(floor));
                    exact.step(eta);
                    lazy.step(eta);
                    let (e, l) = (exact.summary(), lazy.summary());
                    let same = |a: f64, b: f64| a.to_bits() == b.to_bits();
                    assert!(same(e.alive, l.alive) && same(e.sets_cap, l.sets_cap));
                    assert!(same(e.lucky, l.lucky), "len {len} step {j}");
                    assert_eq!(
                        e.alive_cap < floor,
                        l.alive_cap < floor,
                        "len {len} step {j}"
                    );
                    if l.alive < floor {
                        assert!(same(e.alive_cap, l.alive_cap), "len {len} step {j}");
                        below += 1;
                    } else {
                        above += 1;
                    }
                    assert!(same(exact.dropped_n, lazy.dropped_n));
                    if e.alive_cap < 1e-300 {
                        break;
                    }
                }
            }
        }
        assert!(below > 1000 && above > 1000, "{below} / {above}");
    }
}
