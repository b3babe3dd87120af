//! Q, D and the placement fitted by minimum distance on exactly predicted observables.
//!
//! Why not the ranks themselves: under top or uniform placement every new message
//! pushes the ranks below it down, so a message's popularity changes with its age and
//! no window of counts sees the ranking (docs/FIT.md measured how far sorted window
//! counts land from the truth). What the model does predict exactly, for any (Q, zeta,
//! p_r), are the laws of three statistics of the repeats (the reuse distance, the age
//! since first sight and the distance to the second-last arrival), through recursions
//! of the form of eq. (24) ([`rbf_data::workload::transform`]); a trace gives their
//! transforms L(tau) with batch-means errors ([`super::observables`]).
//!
//! The family: Q piecewise Zipf, one exponent per decade of rank, up to D (a real
//! number while fitting); the placement a mixture of the top rank, the bottom rank and
//! [`SEGMENTS`] equal segments. It holds every workload of the FN paper's validation
//! (Zipf Q; top, bottom, uniform and segment placements) and smooth popularity curves
//! besides. p_r is measured directly (repeats over arrivals) and held.
//!
//! The estimate minimises the sum of squared standardised residuals over every
//! (statistic, tau) with Levenberg-Marquardt ([`super::least_squares`]), from a start
//! at each placement shape. The largest standardised residual then tests the fit
//! ([`QFitCheck`]): the model reproduces the trace when it is within the Student-t
//! quantile of level 1 - 0.01 / (2 x residuals) (a family-wise 99 % test over all of
//! them). Identifiability: the fit is repeated with D held at multiples of the
//! estimate; every D whose fit also passes the test is one the trace cannot rule out,
//! and those workloads are the check's alternatives.

use super::adequacy::QFitCheck;
use super::least_squares::Problem;
use super::observables::{Measured, Observable, HORIZON};
use rayon::prelude::*;
use rbf_data::workload::transform::{transforms, RankRuns};
use rbf_data::workload::{Placement, Popularity, Workload};
use rbf_foundations::stats::student_t_quantile;

/// Equal segments of the ranking in the placement family.
pub const SEGMENTS: usize = 4;
/// How finely the family is cut into runs of ranks: ranks below `exact` are a run each,
/// beyond that runs are about 1/`share` of their rank wide.
#[derive(Clone, Copy, Debug)]
struct Resolution {
    exact: f64,
    share: f64,
}

/// What the test and the reported numbers use: at D = 10^5 (Zipf, uniform and top
/// placement) the transforms are within 4e-7 of the rank-by-rank recursion with exact
/// per-rank q (`tests::resolution_error`), far below a trace's noise.
const FINE: Resolution = Resolution {
    exact: 256.0,
    share: 200.0,
};
/// What the search uses, 5 times cheaper (within 1.3e-5 there); a few fine
/// iterations then polish the result.
const COARSE: Resolution = Resolution {
    exact: 64.0,
    share: 32.0,
};
/// How closely a transform is computed, on either side: the trace's reads each 1 %
/// histogram bucket (0.54 % wide) at its middle, off by at most
/// (0.0054)^2 / 24 * max_u u^2 e^-u = 6.6e-7 per value, and the model's runs of ranks are
/// within 1e-6 of the rank-by-rank recursion (`tests::resolutions_stay_close_to_the_rank_by_rank_recursion`).
/// It is added to every standard error: where nearly every repeat has the same value
/// (tau = 1 on a flat Q of 10^5 ranks, se 1e-11) a gap of 1e-8 is arithmetic, not
/// evidence, and would otherwise reject the true workload.
const ACCURACY: f64 = 2e-6;

/// Placement logits (log weights relative to the last segment's) lie within
/// +-MAX_LOGIT: a weight of e^-25 of another is zero for every trace.
const MAX_LOGIT: f64 = 25.0;
/// Largest exponent per decade.
const MAX_EXPONENT: f64 = 6.0;
/// Family-wise level of the goodness-of-fit test.
pub const LEVEL: f64 = 0.99;
/// Scales tau per factor of 10.
const TAUS_PER_DECADE: f64 = 5.0;
/// The search for the range of D stops halving its last step at a factor of 2^(1/32)
/// or after this many halvings (from a first step of sqrt(2), four reach 2^(1/32)). At
/// 2^(1/8) the bracket was wider than the gap between the fit and the true D (cell 39
/// of `examples/fit_level.rs`: 9 842 and 10 000), so no member between them was met.
const RESOLUTION: f64 = std::f64::consts::LN_2 / 32.0;
const MAX_BISECTIONS: usize = 4;
/// Coarse steps of a held refit from its neighbour, and from a profile start (D is held
/// and the start is close; 25 from the profile start found the same members on cell 39
/// of `examples/fit_level.rs` but for one, at 1.2 times the CPU on a.csv).
const HELD_ITERATIONS: usize = 15;
const HELD_RESTART_ITERATIONS: usize = 15;
/// Largest D tried, as a multiple of the distinct keys seen.
const D_CEILING: f64 = 64.0;

/// Step of the profile's grid of D (ln D): a factor 2^(1/4). The trace pins D down to
/// +-15 % in the well-identified cells, so a coarser grid can miss the basin.
const D_GRID: f64 = std::f64::consts::LN_2 / 4.0;
/// Levenberg-Marquardt starts only from the shapes whose best profile point is within
/// this factor of the best one's sum of squares.
const SHAPE_SKIP: f64 = 10.0;
/// The profile's single Zipf exponent lies in [0, this].
const MAX_ZIPF_START: f64 = 3.0;

/// A pure placement shape of the profile: top rank, bottom rank, segment weights.
struct Shape {
    top: f64,
    bottom: f64,
    segments: [f64; SEGMENTS],
}

/// Top, uniform, bottom: the papers' placements.
const SHAPES: [Shape; 3] = [
    Shape {
        top: 1.0,
        bottom: 0.0,
        segments: [0.0; SEGMENTS],
    },
    Shape {
        top: 0.0,
        bottom: 0.0,
        segments: [1.0 / SEGMENTS as f64; SEGMENTS],
    },
    Shape {
        top: 0.0,
        bottom: 1.0,
        segments: [0.0; SEGMENTS],
    },
];

/// A weight the LM start gives a placement component the shape lacks (relative to the
/// shape's own): small enough to leave the profile's statistics in place, large enough
/// that the component has a gradient.
const START_FLOOR: f64 = 1e-4;

impl Shape {
    fn member(&self, distinct: f64, alpha: f64, k: usize) -> Family {
        Family {
            exponents: vec![alpha; k],
            distinct,
            top: self.top,
            bottom: self.bottom,
            segments: self.segments,
        }
    }

    /// The placement logits of [`family`] (relative to the last segment's weight), each
    /// weight at least `floor`.
    fn logits(&self, floor: f64) -> Vec<f64> {
        let floor = |w: f64| w.max(floor);
        let last = floor(self.segments[SEGMENTS - 1]);
        [self.top, self.bottom]
            .into_iter()
            .chain(self.segments[..SEGMENTS - 1].iter().copied())
            .map(|w| (floor(w) / last).ln().clamp(-MAX_LOGIT, MAX_LOGIT))
            .collect()
    }
}

/// The profile's exponent is found to this share of its interval (0.03 for [0, 3]: the
/// LM that follows refines it).
const GOLDEN_TOLERANCE: f64 = 1e-2;

/// The minimum of a function on [lo, hi] by golden-section search to
/// [`GOLDEN_TOLERANCE`] of the interval, and the value there.
fn golden_section(lo: f64, hi: f64, f: impl Fn(f64) -> f64) -> (f64, f64) {
    let g = (5f64.sqrt() - 1.0) / 2.0;
    let (mut a, mut b) = (lo, hi);
    let mut c = b - g * (b - a);
    let mut d = a + g * (b - a);
    let (mut fc, mut fd) = (f(c), f(d));
    while b - a > GOLDEN_TOLERANCE * (hi - lo) {
        if fc < fd {
            (b, d, fd) = (d, c, fc);
            c = b - g * (b - a);
            fc = f(c);
        } else {
            (a, c, fc) = (c, d, fd);
            d = a + g * (b - a);
            fd = f(d);
        }
    }
    if fc < fd {
        (c, fc)
    } else {
        (d, fd)
    }
}

/// A member of the family.
#[derive(Clone, Debug, PartialEq)]
pub struct Family {
    /// Exponent of Q per decade of rank.
    pub exponents: Vec<f64>,
    /// D, real while fitting.
    pub distinct: f64,
    /// Placement weights (summing to 1): top rank, bottom rank, segments.
    pub top: f64,
    pub bottom: f64,
    pub segments: [f64; SEGMENTS],
}

/// Parameter vector: exponents, ln D, then the placement logits of the top rank, the
/// bottom rank and the first SEGMENTS - 1 segments (log weights relative to the last
/// segment's: a softmax, so no weight dominates the scale of the others' steps).
fn family(theta: &[f64], k: usize) -> Family {
    let rel: Vec<f64> = theta[k + 1..].iter().map(|l| l.exp()).collect();
    let total = 1.0 + rel.iter().sum::<f64>();
    let mut segments = [0.0; SEGMENTS];
    for (s, v) in segments.iter_mut().zip(&rel[2..]) {
        *s = v / total;
    }
    segments[SEGMENTS - 1] = 1.0 / total;
    Family {
        exponents: theta[..k].to_vec(),
        distinct: theta[k].exp(),
        top: rel[0] / total,
        bottom: rel[1] / total,
        segments,
    }
}

impl Family {
    /// The family in runs of ranks for [`transforms`]: exact ranks first, then runs a
    /// fraction of their rank wide that never straddle a segment boundary; the last
    /// rank (where the bottom weight sits) is a run of its own and the one before it
    /// may be a fraction of a rank.
    pub fn runs(&self) -> RankRuns {
        self.runs_at(FINE)
    }

    fn runs_at(&self, res: Resolution) -> RankRuns {
        let d = self.distinct.max(1.0);
        let seg_len = d / SEGMENTS as f64;
        let mut cuts: Vec<f64> = (1..SEGMENTS).map(|g| g as f64 * seg_len).collect();
        if d >= 2.0 {
            cuts.push(d - 1.0);
        }
        cuts.push(d);
        let mut runs = RankRuns::default();
        let mut r = 0.0f64;
        let mut logw = Vec::new();
        while r < d - 1e-9 {
            let w = if r < res.exact {
                1.0
            } else {
                (r / res.share).floor().max(1.0)
            };
            let next_cut = cuts.iter().copied().find(|c| *c > r + 1e-9).unwrap_or(d);
            let end = (r + w).min(next_cut);
            let width = end - r;
            let mid = r + (width - 1.0).max(0.0) / 2.0;
            logw.push(Popularity::piecewise_log_weight(&self.exponents, mid));
            let seg = ((mid / seg_len) as usize).min(SEGMENTS - 1);
            let mut zeta = self.segments[seg] / seg_len;
            if r == 0.0 {
                zeta += self.top / width;
            }
            if end >= d - 1e-9 {
                zeta += self.bottom / width;
            }
            runs.push(width, 0.0, zeta);
            r = end;
        }
        let top = logw.first().copied().unwrap_or(0.0);
        let mut total = 0.0;
        for (q, (l, w)) in runs.q.iter_mut().zip(logw.iter().zip(&runs.width)) {
            *q = (l - top).exp();
            total += *q * w;
        }
        runs.q.iter_mut().for_each(|q| *q /= total);
        runs
    }

    /// The workload this member describes, with D rounded to whole messages.
    pub fn workload(&self, p_repeat: f64) -> Workload {
        let distinct = (self.distinct.round() as usize).max(1);
        let mut w = Workload::zipf(distinct, 1.0, p_repeat, Placement::Uniform);
        w.popularity = Popularity::PiecewiseZipf {
            distinct,
            exponents: self.exponents.clone(),
        };
        w.placement = if distinct >= SEGMENTS {
            Placement::Mixture {
                top: self.top,
                bottom: self.bottom,
                segments: self.segments.to_vec(),
            }
        } else {
            // Fewer ranks than segments: each segment's weight on the rank it starts at.
            let mut z = vec![0.0; distinct];
            z[0] += self.top;
            z[distinct - 1] += self.bottom;
            for (g, w) in self.segments.iter().enumerate() {
                z[g * distinct / SEGMENTS] += w;
            }
            Placement::Explicit(z)
        };
        w
    }
}

/// The measured points the fit uses: (statistic, tau index, mean, standard error,
/// batches behind it).
struct Target {
    taus: Vec<f64>,
    points: Vec<(usize, usize, f64, f64, usize)>,
}

impl Target {
    fn new(measured: &Measured) -> Target {
        let mut points = Vec::new();
        for (k, values) in measured.values.iter().enumerate() {
            for (j, v) in values.iter().enumerate() {
                let Some(v) = v else { continue };
                // A statistic that is the same in every batch (ages with p_r = 1 are
                // all infinite) carries no information and no noise.
                if v.se > 0.0 {
                    points.push((k, j, v.mean, v.se.hypot(ACCURACY), v.batches));
                }
            }
        }
        // Only the scales with a point are computed (a short trace has few).
        let mut used: Vec<usize> = points.iter().map(|p| p.1).collect();
        used.sort_unstable();
        used.dedup();
        for p in &mut points {
            p.1 = used.binary_search(&p.1).unwrap_or(0);
        }
        Target {
            taus: used.iter().map(|&j| measured.taus[j]).collect(),
            points,
        }
    }

    /// Standardised residuals of a family member.
    fn residuals(&self, f: &Family, p_r: f64, res: Resolution) -> Vec<f64> {
        let t = transforms(&f.runs_at(res), p_r, &self.taus);
        let model = [&t.reuse, &t.age, &t.second];
        self.points
            .iter()
            .map(|&(k, j, mean, se, _)| (model[k][j] - mean) / se)
            .collect()
    }

    /// The largest residual a 99 % family-wise test allows at each point (a Student t
    /// quantile with the point's own degrees of freedom, Bonferroni over the points).
    fn critical(&self) -> Vec<f64> {
        let n = self.points.len().max(1) as f64;
        self.points
            .iter()
            .map(|p| student_t_quantile(1.0 - (1.0 - LEVEL) / (2.0 * n), (p.4.max(2) - 1) as f64))
            .collect()
    }

    /// The goodness-of-fit check of a member: the point whose residual is largest
    /// relative to what the test allows there.
    fn check(&self, f: &Family, p_r: f64) -> QFitCheck {
        let r = self.residuals(f, p_r, FINE);
        let critical = self.critical();
        let (worst, ratio) = r
            .iter()
            .zip(&critical)
            .map(|(v, c)| v.abs() / c)
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap_or((0, 0.0));
        let (k, j, _, se, _) = self
            .points
            .get(worst)
            .copied()
            .unwrap_or((0, 0, 0.0, 0.0, 2));
        let c = critical.get(worst).copied().unwrap_or(0.0);
        QFitCheck {
            gap: ratio * c * se,
            noise: c * se,
            fits: ratio.is_finite() && ratio <= 1.0,
            observable: Observable::ALL[k],
            tau: self.taus.get(j).copied().unwrap_or(0.0),
            distinct_range: None,
            untested: None,
            alternatives: Vec::new(),
        }
    }
}

/// The scales tau at which to compare: 1 to the measured length over [`HORIZON`].
pub fn scales(measured_arrivals: u64) -> Vec<f64> {
    let top = (measured_arrivals as f64 / HORIZON).max(1.0);
    let steps = (top.log10() * TAUS_PER_DECADE).floor() as usize;
    (0..=steps)
        .map(|i| 10f64.powf(i as f64 / TAUS_PER_DECADE))
        .collect()
}

/// The goodness-of-fit test of any member of the family against a trace's measured
/// transforms (the fit's own test, for a workload known some other way: the true one of
/// a synthetic trace, say).
pub fn test_member(measured: &Measured, p_r: f64, member: &Family) -> QFitCheck {
    Target::new(measured).check(member, p_r)
}

impl Family {
    /// Zipf(D, alpha) with uniform placement, as a member of the family.
    pub fn zipf_uniform(distinct: f64, alpha: f64) -> Family {
        Family {
            exponents: vec![alpha],
            distinct,
            top: 0.0,
            bottom: 0.0,
            segments: [1.0 / SEGMENTS as f64; SEGMENTS],
        }
    }
}

/// A finished minimum-distance fit.
#[derive(Clone, Debug)]
pub struct MinDistanceFit {
    pub family: Family,
    /// Sum of squared standardised residuals, and how many there are.
    pub chi2: f64,
    pub points: usize,
    pub check: QFitCheck,
}

/// What the fit starts from.
#[derive(Clone, Copy, Debug)]
pub struct Hints {
    /// A first guess of D (keys drawn again, say).
    pub distinct: f64,
    /// Distinct keys seen: D is searched up to [`D_CEILING`] times it.
    pub keys: f64,
}

/// A point of the profile: (sum of squares, shape index, ln D, fitted Zipf exponent).
type ProfilePoint = (f64, usize, f64, f64);

/// Whether the fit's debugging lines are printed (`RBF_DEBUG_FIT` set).
fn debugging() -> bool {
    std::env::var_os("RBF_DEBUG_FIT").is_some()
}

/// Fits the family to the measured transforms at repeat probability `p_r`; None when
/// there is nothing to fit (no scale has enough batches).
pub fn fit(measured: &Measured, p_r: f64, hints: Hints) -> Option<MinDistanceFit> {
    let target = Target::new(measured);
    if target.points.is_empty() {
        return None;
    }
    let search = Search::new(&target, p_r, hints);
    let profile = search.profile();
    let starts = search.shape_fits(&profile);
    let (_, theta) = starts.iter().min_by(|a, b| a.0.total_cmp(&b.0))?.clone();
    let clock = std::time::Instant::now();
    let (chi2, theta, fam, mut check) = search.polished(&theta, &profile);
    if debugging() {
        search.print_residuals(&fam);
    }
    if check.fits {
        search.identify(&theta, &fam, &starts, &mut check);
    }
    if debugging() {
        rbf_foundations::errln!("polish and range: {:?}", clock.elapsed());
    }
    Some(MinDistanceFit {
        family: fam,
        chi2,
        points: target.points.len(),
        check,
    })
}

impl<'a> Search<'a> {
    /// The problem for `target`: k exponents (up to the decade of 8 times the first
    /// guess of D; the last one also holds beyond it), ln D up to [`D_CEILING`] times
    /// the keys seen, the placement logits.
    fn new(target: &'a Target, p_r: f64, hints: Hints) -> Search<'a> {
        let d_hi = (hints.keys.max(hints.distinct) * D_CEILING).max(4.0);
        let k = (((hints.distinct.max(10.0) * 8.0).log10().ceil()) as usize).clamp(1, 7);
        let mut lower = vec![0.0; k];
        let mut upper = vec![MAX_EXPONENT; k];
        lower.push(0.0);
        upper.push(d_hi.ln());
        lower.extend([-MAX_LOGIT; 1 + SEGMENTS]);
        upper.extend([MAX_LOGIT; 1 + SEGMENTS]);
        Search {
            target,
            p_r,
            k,
            lower,
            upper,
        }
    }

    /// The largest ln D searched.
    fn ln_d_max(&self) -> f64 {
        self.upper[self.k]
    }

    /// The profile's best single Zipf exponent for `shape` at ln D = `d` (golden-section
    /// search on the coarse cut).
    fn profile_point(&self, shape: usize, d: f64) -> ProfilePoint {
        let (alpha, chi2) = golden_section(0.0, MAX_ZIPF_START, |alpha| {
            let f = SHAPES[shape].member(d.exp(), alpha, self.k);
            self.target
                .residuals(&f, self.p_r, COARSE)
                .iter()
                .map(|v| v * v)
                .sum()
        });
        (chi2, shape, d, alpha)
    }

    /// The starts: a profile over (placement shape, D) with Q a single Zipf whose
    /// exponent is fitted at each point (a one-dimensional search, cheap and without
    /// local minima that matter): a coarse grid of D (factors of 2), then the fine grid
    /// ([`D_GRID`]) around each shape's two best coarse points. Why not LM from a few
    /// fixed starts: the surface has deep local minima at a wrong D with a compensating
    /// tail and placement (a D four times too large with the new messages in the top
    /// segment), which the fits of traces drawn from the model itself fell into about
    /// half the time.
    fn profile(&self) -> Vec<ProfilePoint> {
        let clock = std::time::Instant::now();
        let top = self.ln_d_max();
        let at = |points: &[(usize, f64)]| -> Vec<ProfilePoint> {
            points
                .par_iter()
                .map(|&(s, d)| self.profile_point(s, d))
                .collect()
        };
        let coarse: Vec<f64> = (0..)
            .map(|i| i as f64 * std::f64::consts::LN_2)
            .take_while(|d| *d <= top)
            .collect();
        let first: Vec<(usize, f64)> = (0..SHAPES.len())
            .flat_map(|s| coarse.iter().map(move |&d| (s, d)))
            .collect();
        let mut profile = at(&first);
        let mut finer = Vec::new();
        for s in 0..SHAPES.len() {
            let mut mine: Vec<&ProfilePoint> = profile.iter().filter(|p| p.1 == s).collect();
            mine.sort_by(|a, b| a.0.total_cmp(&b.0));
            for p in mine.iter().take(2) {
                for step in [-3.0, -2.0, -1.0, 1.0, 2.0, 3.0] {
                    let d = p.2 + step * D_GRID;
                    if (0.0..=top).contains(&d) && !finer.contains(&(s, d)) {
                        finer.push((s, d));
                    }
                }
            }
        }
        profile.extend(at(&finer));
        if debugging() {
            rbf_foundations::errln!("profile: {} points, {:?}", profile.len(), clock.elapsed());
        }
        profile
    }

    /// Levenberg-Marquardt with every parameter free from the best profile point of
    /// each shape within [`SHAPE_SKIP`] of the best: (sum of squares, parameters) per
    /// shape fitted.
    fn shape_fits(&self, profile: &[ProfilePoint]) -> Vec<(f64, Vec<f64>)> {
        let clock = std::time::Instant::now();
        let k = self.k;
        let profile_best = profile.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
        // Each shape's fit is its own (a job on rayon's threads), collected in the
        // shapes' order: the same starts on any number of threads.
        let fit_shape = |(s, shape): (usize, &Shape)| -> Option<(f64, Vec<f64>)> {
            let &(c0, _, d, alpha) = profile
                .iter()
                .filter(|p| p.1 == s)
                .min_by(|a, b| a.0.total_cmp(&b.0))?;
            // A shape whose best profile point is far worse than another's is not a start
            // worth the full fit (half of the fit's time went to such starts).
            if c0 > SHAPE_SKIP * profile_best {
                return None;
            }
            let mut x0 = vec![alpha; k];
            x0.push(d);
            x0.extend(shape.logits(START_FLOOR));
            // Q and the placement first, D held: set free at once, D wanders off to where a
            // steep tail mimics a smaller D while Q's head is still wrong (bottom placement
            // with many new messages ended at 5 D that way).
            let held = self.run(&x0, Some(k), COARSE, 10);
            let s = self.run(&held.x, None, COARSE, 40);
            if debugging() {
                rbf_foundations::errln!(
                    "shape {s:?}: profile D {:.0} alpha {alpha:.3} chi2 {c0:.1}; LM chi2 {:.1} after {} iterations: {:?}",
                    d.exp(),
                    s.chi2,
                    s.iterations,
                    family(&s.x, k)
                );
            }
            Some((s.chi2, s.x))
        };
        let starts: Vec<(f64, Vec<f64>)> = SHAPES
            .par_iter()
            .enumerate()
            .with_max_len(1)
            .filter_map(fit_shape)
            .collect();
        if debugging() {
            rbf_foundations::errln!("LM: {:?}", clock.elapsed());
        }
        starts
    }

    /// The best start polished on the fine cut and tested; where it fails, the
    /// [`rescue`]'s fit when that passes or is closer: (sum of squares, parameters,
    /// member, its test).
    fn polished(
        &self,
        theta: &[f64],
        profile: &[ProfilePoint],
    ) -> (f64, Vec<f64>, Family, QFitCheck) {
        let polished = self.run(theta, None, FINE, 15);
        let fam = family(&polished.x, self.k);
        let check = self.target.check(&fam, self.p_r);
        if !check.fits {
            if let Some((c, x, f, passed)) = rescue(self, profile) {
                if passed.fits || c < polished.chi2 {
                    return (c, x, f, passed);
                }
            }
        }
        (polished.chi2, polished.x, fam, check)
    }

    /// Every standardised residual of `fam` and the test's critical value (debugging).
    fn print_residuals(&self, fam: &Family) {
        let target = self.target;
        let r = target.residuals(fam, self.p_r, FINE);
        for (v, &(o, j, mean, se, _)) in r.iter().zip(&target.points) {
            rbf_foundations::errln!(
                "{:?} tau {:.1}: measured {mean:.6} se {se:.2e} residual {v:.2}",
                Observable::ALL[o],
                target.taus[j]
            );
        }
        rbf_foundations::errln!("critical {:?}", target.critical().first());
    }

    /// What the trace identifies around the estimate `theta` (`fam`): the range of D
    /// ([`Search::d_side`] each way) and the alternatives, picked by [`spanning`] from
    /// every member met on the way that passes, the other shapes' fits that pass
    /// (`starts`) and the edge members ([`edge_members`]).
    fn identify(
        &self,
        theta: &[f64],
        fam: &Family,
        starts: &[(f64, Vec<f64>)],
        check: &mut QFitCheck,
    ) {
        let ((low, below), (high, above)) =
            rayon::join(|| self.d_side(theta, -1.0), || self.d_side(theta, 1.0));
        let others = other_shapes_passing(self, starts, theta);
        let edges = edge_members(self, theta);
        // The farthest fits each way are alternatives whatever the probe says.
        let keep: Vec<usize> = [below.len(), below.len() + above.len()]
            .into_iter()
            .zip([below.len(), above.len()])
            .filter(|(_, n)| *n > 0)
            .map(|(end, _)| end - 1)
            .collect();
        let candidates: Vec<Family> = below
            .iter()
            .chain(&above)
            .chain(&others)
            .chain(&edges)
            .cloned()
            .collect();
        check.alternatives.extend(
            spanning(fam, &candidates, &keep, self.p_r)
                .into_iter()
                .map(|a| a.workload(self.p_r)),
        );
        check.distinct_range = Some((low.exp().round() as usize, high.exp().round() as usize));
    }

    /// D the trace cannot tell from the estimate, one way (`dir` -1: down, 1: up):
    /// refit with D held at steps of a factor sqrt(2), 2, 4, 16, ... until the test
    /// fails, then halve the last step down to [`RESOLUTION`] (at most
    /// [`MAX_BISECTIONS`] times). Returns the bracket's outer end in ln D, the nearest D
    /// found to fail (or the search's limit: the range holds every D the trace allows,
    /// up to the resolution), and the passing members met, farthest last.
    fn d_side(&self, theta: &[f64], dir: f64) -> (f64, Vec<Family>) {
        let k = self.k;
        let top = self.ln_d_max();
        let mut step = dir * std::f64::consts::LN_2 / 2.0;
        let (mut pass, mut x_pass, mut met) = (theta[k], theta.to_vec(), Vec::new());
        let mut fail = None;
        loop {
            let d = (pass + step).clamp(0.0, top);
            if d == pass {
                break;
            }
            let (x, alt, fits) = self.held(&x_pass, d, false);
            if !fits {
                fail = Some(d);
                break;
            }
            (pass, x_pass) = (d, x);
            met.push(alt);
            // Steps double: a trace that says little about D is crossed in a few.
            step *= 2.0;
        }
        let Some(mut fail) = fail else {
            return (if dir < 0.0 { 0.0 } else { top }, met);
        };
        for _ in 0..MAX_BISECTIONS {
            if (fail - pass).abs() <= RESOLUTION {
                break;
            }
            let mid = (pass + fail) / 2.0;
            let (x, alt, fits) = self.held(&x_pass, mid, true);
            if fits {
                (pass, x_pass) = (mid, x);
                met.push(alt);
            } else {
                fail = mid;
            }
        }
        (fail, met)
    }

    /// The member with ln D held at `d`, refitted: (parameters, member, whether it
    /// passes the test). Warm-started from the neighbouring fit `x` (a few coarse steps
    /// suffice; the test itself is made at the fine resolution); where that fails and
    /// `restart` is set, from the best profile start at `d` too (the shape whose single
    /// Zipf fits best there): a refit from the neighbour can fail where a member passes,
    /// and the range's ends are where the refits fail (cell 39 of
    /// `examples/fit_level.rs`: the true D failed that way, just above the printed
    /// range). The bisection sets it; the doubling steps outward do not, as a restart at
    /// each costs more than the whole range search otherwise does.
    fn held(&self, x: &[f64], d: f64, restart: bool) -> (Vec<f64>, Family, bool) {
        let mut x0 = x.to_vec();
        x0[self.k] = d;
        let warm = self.held_from(&x0, HELD_ITERATIONS);
        if warm.2 || !restart {
            return warm;
        }
        let points: Vec<ProfilePoint> = (0..SHAPES.len())
            .into_par_iter()
            .map(|s| self.profile_point(s, d))
            .collect();
        // Ties: the first shape, so the choice is the same on any number of threads.
        let Some(&(_, s, _, alpha)) = points.iter().min_by(|a, b| a.0.total_cmp(&b.0)) else {
            return warm;
        };
        let mut x0 = vec![alpha; self.k];
        x0.push(d);
        x0.extend(SHAPES[s].logits(START_FLOOR));
        let again = self.held_from(&x0, HELD_RESTART_ITERATIONS);
        if again.2 {
            again
        } else {
            warm
        }
    }

    /// A refit from `x0` with D held, `iterations` coarse steps, tested on the fine cut.
    fn held_from(&self, x0: &[f64], iterations: usize) -> (Vec<f64>, Family, bool) {
        let x = self.run(x0, Some(self.k), COARSE, iterations).x;
        let alt = family(&x, self.k);
        let fits = self.target.check(&alt, self.p_r).fits;
        (x, alt, fits)
    }
}

/// The weights the rescue starts give the placement components a shape lacks: the
/// usual [`START_FLOOR`] of 1e-4 puts 1e-4 of the new messages elsewhere, which on
/// 10^7 arrivals under bottom placement made the start 10^3 times worse than the
/// profile point it came from and Levenberg-Marquardt stopped there.
const RESCUE_FLOORS: [f64; 2] = [1e-7, 1e-10];
/// How many of the rescue's best coarse fits are polished and tested.
const RESCUE_POLISHED: usize = 2;

/// When the fit fails its test: Levenberg-Marquardt again from every shape's best
/// profile point (the shapes skipped before included), with the placement components
/// the shape lacks at each of [`RESCUE_FLOORS`]. Returns the first of the
/// [`RESCUE_POLISHED`] best that passes once polished, else the best of them: (sum of
/// squares, parameters, member, its test). Only traces whose fit fails pay for it.
fn rescue(search: &Search, profile: &[ProfilePoint]) -> Option<(f64, Vec<f64>, Family, QFitCheck)> {
    let k = search.k;
    let starts: Vec<Vec<f64>> = (0..SHAPES.len())
        .filter_map(|s| {
            profile
                .iter()
                .filter(|p| p.1 == s)
                .min_by(|a, b| a.0.total_cmp(&b.0))
        })
        .flat_map(|&(_, s, d, alpha)| {
            RESCUE_FLOORS.iter().map(move |&floor| {
                let mut x0 = vec![alpha; k];
                x0.push(d);
                x0.extend(SHAPES[s].logits(floor));
                x0
            })
        })
        .collect();
    let mut runs: Vec<(f64, Vec<f64>)> = starts
        .par_iter()
        .map(|x0| {
            let held = search.run(x0, Some(k), COARSE, 10);
            let free = search.run(&held.x, None, COARSE, 40);
            (free.chi2, free.x)
        })
        .collect();
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut best: Option<(f64, Vec<f64>, Family, QFitCheck)> = None;
    for (_, x) in runs.into_iter().take(RESCUE_POLISHED) {
        let polished = search.run(&x, None, FINE, 15);
        let f = family(&polished.x, k);
        let check = search.target.check(&f, search.p_r);
        if check.fits {
            return Some((polished.chi2, polished.x, f, check));
        }
        if best.as_ref().is_none_or(|b| polished.chi2 < b.0) {
            best = Some((polished.chi2, polished.x, f, check));
        }
    }
    best
}

/// Fine iterations that polish another shape's fit before it is tested.
const OTHER_POLISH: usize = 8;

/// The fits from the other placement shapes (not `theta`, the estimate) that pass the
/// test, polished on the fine cut when they do not pass as they are: members the trace
/// allows with another placement, and so another head of Q.
fn other_shapes_passing(search: &Search, starts: &[(f64, Vec<f64>)], theta: &[f64]) -> Vec<Family> {
    let passes = |f: &Family| search.target.check(f, search.p_r).fits;
    starts
        .par_iter()
        .filter(|(_, x)| x.as_slice() != theta)
        .filter_map(|(_, x)| {
            let f = family(x, search.k);
            if passes(&f) {
                return Some(f);
            }
            let f = family(&search.run(x, None, FINE, OTHER_POLISH).x, search.k);
            passes(&f).then_some(f)
        })
        .collect()
}

/// The walk along a profile direction starts at this many units (a sum of squares
/// larger by its square) and doubles up to [`EDGE_DOUBLINGS`] times, then halves the
/// last step [`EDGE_BISECTIONS`] times.
const EDGE_START: f64 = 2.0;
const EDGE_DOUBLINGS: usize = 6;
const EDGE_BISECTIONS: usize = 2;

/// Scales (factors of 10 from 1) at which the reuse distance's transform steers
/// [`edge_members`]: it is the chance that a repeat comes back after more than about
/// tau arrivals, which with the new messages is the chance that the next arrival is new
/// to a filter's cycle of tau arrivals, what the Markov methods are built on.
const STEER_DECADES: usize = 8;

/// Gradients in the parameters of the reuse distance's transform at the
/// [`STEER_DECADES`] scales (forward differences on the coarse cut).
fn probe_gradients(search: &Search, theta: &[f64]) -> Vec<Vec<f64>> {
    let taus: Vec<f64> = (0..STEER_DECADES).map(|i| 10f64.powi(i as i32)).collect();
    let reuse =
        |x: &[f64]| transforms(&family(x, search.k).runs_at(COARSE), search.p_r, &taus).reuse;
    let base = reuse(theta);
    let columns: Vec<Vec<f64>> = (0..theta.len())
        .into_par_iter()
        .map(|i| {
            let h = 1e-5 * theta[i].abs().max(1.0);
            let h = if theta[i] + h > search.upper[i] {
                -h
            } else {
                h
            };
            let mut x = theta.to_vec();
            x[i] += h;
            reuse(&x)
                .iter()
                .zip(&base)
                .map(|(a, b)| (a - b) / h)
                .collect()
        })
        .collect();
    (0..taus.len())
        .map(|j| columns.iter().map(|c| c[j]).collect())
        .collect()
}

/// Members at the edge of what the test allows around the estimate `theta`, one each
/// way along every parameter's linearised profile (the others following it) and along
/// the direction in which the reuse distance's transform at each scale of
/// [`probe_gradients`] changes fastest: where D
/// is not identified, neither is the shape of Q's tail nor the placement, and the
/// members of the range search in D alone left the true workload's methods outside
/// their range in 22 % of cases. Each is tested on the fine cut.
fn edge_members(search: &Search, theta: &[f64]) -> Vec<Family> {
    let f = |x: &[f64]| {
        search
            .target
            .residuals(&family(x, search.k), search.p_r, COARSE)
    };
    let mut gradients: Vec<Vec<f64>> = (0..theta.len())
        .map(|i| {
            (0..theta.len())
                .map(|j| f64::from(u8::from(i == j)))
                .collect()
        })
        .collect();
    gradients.extend(probe_gradients(search, theta));
    let directions = Problem {
        residuals: &f,
        lower: search.lower.clone(),
        upper: search.upper.clone(),
        free: vec![true; theta.len()],
    }
    .directions(theta, &gradients);
    let at = |d: &[f64], t: f64| -> Family {
        let x: Vec<f64> = theta
            .iter()
            .zip(d)
            .zip(search.lower.iter().zip(&search.upper))
            .map(|((x, d), (lo, hi))| (x + t * d).clamp(*lo, *hi))
            .collect();
        family(&x, search.k)
    };
    let passes = |m: &Family| search.target.check(m, search.p_r).fits;
    let walks: Vec<(&Vec<f64>, f64)> = directions
        .iter()
        .flat_map(|d| [(d, 1.0), (d, -1.0)])
        .collect();
    walks
        .par_iter()
        .filter_map(|&(d, sign)| walk_to_edge(|t| at(d, sign * t), passes))
        .collect()
}

/// The last member found to pass along one walk (`at(t)`, t > 0): steps from
/// [`EDGE_START`] doubling up to [`EDGE_DOUBLINGS`] times until one fails, then the last
/// step halved [`EDGE_BISECTIONS`] times; None when the first step fails.
fn walk_to_edge(at: impl Fn(f64) -> Family, passes: impl Fn(&Family) -> bool) -> Option<Family> {
    let (mut pass, mut fail, mut found) = (0.0, None, None);
    let mut t = EDGE_START;
    for _ in 0..=EDGE_DOUBLINGS {
        let m = at(t);
        if !passes(&m) {
            fail = Some(t);
            break;
        }
        (pass, found) = (t, Some(m));
        t *= 2.0;
    }
    if let Some(mut fail) = fail {
        for _ in 0..EDGE_BISECTIONS {
            let mid = (pass + fail) / 2.0;
            let m = at(mid);
            if passes(&m) {
                (pass, found) = (mid, Some(m));
            } else {
                fail = mid;
            }
        }
    }
    found
}

/// The most alternatives [`spanning`] picks (each costs `rbf compare` an evaluation of
/// every Q-based method): the farthest fits in D, then those extreme at the most
/// probe points.
const MAX_ALTERNATIVES: usize = 8;

/// Scales of the probe [`spanning`] compares members at: factors of sqrt(10) from 1 to
/// this many times the largest D among them (beyond a few D every transform is flat).
const PROBE_REACH: f64 = 10.0;

/// The alternatives: of the passing `candidates`, those at `keep` (the farthest in D)
/// and every one that is the most extreme, beyond the fit, in a transform of the reuse
/// distance, the age or the second distance at some scale. Why these: each Q-based
/// method is a functional of Q and the placement (the chance that the next arrival is
/// new to the filter's cycle, sums over Q's head), and the transforms at scales from 1
/// to beyond D are the filter-independent functionals that summarise them; evaluating
/// every method on every candidate would make `rbf compare` that many times slower.
/// Differences below [`ACCURACY`] are arithmetic and choose nothing.
fn spanning(fit: &Family, candidates: &[Family], keep: &[usize], p_r: f64) -> Vec<Family> {
    let reach = candidates
        .iter()
        .map(|c| c.distinct)
        .fold(fit.distinct, f64::max)
        * PROBE_REACH;
    let steps = (2.0 * reach.max(1.0).log10()).ceil() as usize;
    let taus: Vec<f64> = (0..=steps).map(|i| 10f64.powf(i as f64 / 2.0)).collect();
    let probe = |f: &Family| {
        let t = transforms(&f.runs_at(COARSE), p_r, &taus);
        [t.reuse, t.age, t.second].concat()
    };
    let mine = probe(fit);
    let theirs: Vec<Vec<f64>> = candidates.par_iter().map(probe).collect();
    // How many probe points each candidate is the most extreme at.
    let mut votes = vec![0usize; candidates.len()];
    for (j, own) in mine.iter().enumerate() {
        let values = theirs.iter().map(|v| v[j]).enumerate();
        let high = values.clone().max_by(|a, b| a.1.total_cmp(&b.1));
        let low = values.min_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((c, _)) = high.filter(|(_, v)| *v > own + ACCURACY) {
            votes[c] += 1;
        }
        if let Some((c, _)) = low.filter(|(_, v)| *v < own - ACCURACY) {
            votes[c] += 1;
        }
    }
    let mut ranked: Vec<usize> = (0..candidates.len()).filter(|c| votes[*c] > 0).collect();
    // Most votes first; ties by index, so the choice is deterministic.
    ranked.sort_by_key(|&c| (std::cmp::Reverse(votes[c]), c));
    let mut chosen: Vec<usize> = keep.to_vec();
    for c in ranked {
        if chosen.len() >= MAX_ALTERNATIVES {
            break;
        }
        if !chosen.contains(&c) {
            chosen.push(c);
        }
    }
    chosen.sort_unstable();
    chosen
        .into_iter()
        .filter_map(|c| candidates.get(c).cloned())
        .collect()
}

/// The least-squares problem of one fit, at a resolution, with D free or held.
struct Search<'a> {
    target: &'a Target,
    p_r: f64,
    k: usize,
    lower: Vec<f64>,
    upper: Vec<f64>,
}

impl Search<'_> {
    fn run(
        &self,
        x0: &[f64],
        held: Option<usize>,
        res: Resolution,
        iterations: usize,
    ) -> super::least_squares::Solution {
        let f = |theta: &[f64]| self.target.residuals(&family(theta, self.k), self.p_r, res);
        let mut free = vec![true; x0.len()];
        if let Some(h) = held {
            free[h] = false;
        }
        Problem {
            residuals: &f,
            lower: self.lower.clone(),
            upper: self.upper.clone(),
            free,
        }
        .minimize(x0, iterations)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluation_cost() {
        let f = Family {
            exponents: vec![1.0; 7],
            distinct: 1000.0,
            top: 0.0,
            bottom: 0.0,
            segments: [0.25; SEGMENTS],
        };
        let taus = scales(1_000_000);
        let t = std::time::Instant::now();
        for _ in 0..100 {
            std::hint::black_box(transforms(&f.runs(), 0.9, &taus));
        }
        rbf_foundations::errln!(
            "D=1000: {:?} per eval, {} taus",
            t.elapsed() / 100,
            taus.len()
        );
        let f = Family { distinct: 1e6, ..f };
        let runs = f.runs();
        let t = std::time::Instant::now();
        for _ in 0..10 {
            std::hint::black_box(transforms(&f.runs(), 0.9, &taus));
        }
        rbf_foundations::errln!(
            "D=1e6: {:?} per eval, {} runs",
            t.elapsed() / 10,
            runs.width.len()
        );
    }

    #[test]
    fn resolutions_stay_close_to_the_rank_by_rank_recursion() {
        for (top, seg) in [(0.0, [0.25; SEGMENTS]), (1.0, [0.0; SEGMENTS])] {
            let f = Family {
                exponents: vec![1.0; 6],
                distinct: 1e5,
                top,
                bottom: 0.0,
                segments: seg,
            };
            let taus = scales(10_000_000);
            let every_rank = Resolution {
                exact: 1e9,
                share: 1.0,
            };
            let exact = transforms(&f.runs_at(every_rank), 0.9, &taus);
            for (res, tol) in [(FINE, 1e-6), (COARSE, 3e-5)] {
                let t = transforms(&f.runs_at(res), 0.9, &taus);
                for (a, b) in [
                    (&t.reuse, &exact.reuse),
                    (&t.age, &exact.age),
                    (&t.second, &exact.second),
                ] {
                    for (x, y) in a.iter().zip(b) {
                        assert!((x - y).abs() < tol, "{res:?}: {x} vs {y}");
                    }
                }
            }
        }
    }
}
