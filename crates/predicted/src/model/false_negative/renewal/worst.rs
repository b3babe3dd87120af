//! The renewal bound over a whole interval of p_r (the conservative end of a fit).
//!
//! One computation with [`super::cycle::Draws`] over [low, high] bounds the ratio for
//! every p_r in the interval (one phase), but loosely when the interval is wide: at
//! p_r = 1 every bit-setting arrival is a non-repeat, at p_r = low many arrivals set
//! bits, and the coupled process has both. A bound over each piece of a partition is a
//! bound over the piece, so the largest over the pieces bounds the whole interval; the
//! piece with the largest bound is halved until that bound is within [`TOLERANCE`] of
//! the largest exact value found where a piece was cut (the true worst case lies
//! between the two), or the work limit is reached; the gap is reported. Near p_r = 1
//! the coupling is loosest (a bit-setting arrival is a non-repeat with probability
//! rho = p_r U / eta, which is 1 at p_r = 1 for any U > 0), so a wide interval reaching
//! 1 needs narrow pieces there. Intervals as narrow as a long trace gives take one
//! computation plus the check at the middle.
//!
//! Cost: with a measured reuse profile, the computations whose p_r or interval starts
//! at the same x step the same bit process ([`super::lanes`]): the cut at x, the upper
//! half [x, b] and the halves that will later start at x are followed on one process,
//! so each step of the search runs one new process (the cut's) where it ran three
//! computations. Every value is the one its own computation gives (same bits), and
//! the search reads them, counts them and keeps their truncated mass exactly where it
//! did.

use super::RenewalOptions;
use crate::model::false_negative::FnModel;
use rayon::prelude::*;
use rbf_foundations::error::Result;

/// Relative gap at which the partition stops.
pub const TOLERANCE: f64 = 1e-2;
/// Renewal computations at most.
const MAX_COMPUTATIONS: usize = 64;
/// Pieces narrower than this are not split.
const MIN_WIDTH: f64 = 1e-6;

/// What one computation of the search gives: its upper bound, a value at most the
/// exact engine's (the same as `upper` from the exact engine, V- from a certified
/// one) and the mass still running at its stop.
#[derive(Clone, Copy, Debug)]
struct Value {
    upper: f64,
    lower: f64,
    truncated: f64,
}

/// The renewal bound over an interval of p_r.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct WorstCase {
    /// At or above the renewal bound at every p_r of the interval (one phase).
    pub fn_upper: f64,
    /// The largest renewal bound at a single p_r found (the lower end of its certified
    /// interval when a certified engine computed it): the worst case over the interval
    /// lies in [attained, fn_upper].
    pub attained: f64,
    /// Where it was found.
    pub p_repeat: f64,
    pub pieces: usize,
    pub computations: usize,
    /// The largest probability of a still-running cycle at the engine's stop over the
    /// computations ([`crate::model::false_negative::FnModel::renewal_guarantee_truncated`]).
    pub truncated_mass: f64,
}

/// The renewal bound of `model` at its p_r, or over its whole `p_r_interval`.
pub fn renewal_worst_case(model: &FnModel, options: RenewalOptions) -> Result<WorstCase> {
    let Some((low, high)) = model.p_r_interval.filter(|(l, h)| h > l) else {
        return at_point(model, options);
    };
    // A certified engine's computations share no bit process: the search runs them
    // apart. (Its upper ends bound the exact engine's values from above, so the
    // pieces' bounds stay bounds; its lower ends are the attained values, so the
    // reported gap stays honest.)
    if let Some(t) = model.renewal_tolerance(options) {
        let options = RenewalOptions {
            tolerance: Some(t),
            ..options
        };
        return apart(model, options, (low, high));
    }
    // Every computation below differs from the others in p_r or its interval only:
    // the per-insertion sums are built once, before the first.
    let mut model = model.clone();
    model.share_renewal_bits(options)?;
    let model = &model;
    // Each computation's bound and truncated mass, by what it computes: a pure
    // function of the run (the same model and options), so a value found early is the
    // value the run would give later. The computations of one step are independent
    // and run on rayon's threads, and every decision below reads their values in a
    // fixed order, so the result does not depend on the thread count.
    let mut found: Found = Vec::new();
    let mid = (low + high) / 2.0;
    // The whole interval with the halves that will start at `low`, and the middle
    // with the upper half and the halves that will start there: two bit processes.
    let (whole, middle) = rayon::join(
        || one_process(model, options, Run::Over(low, high), low, mid),
        || one_process(model, options, Run::At(mid), mid, high),
    );
    let (whole, middle) = (whole?, middle?);
    let (whole_value, middle_value) = (whole[0].1, middle[0].1);
    found.extend(whole.into_iter().chain(middle));
    let mut search = Partition::new(low, high, whole_value, middle_value);
    while let Some((i, a, b)) = search.next_cut() {
        let m = (a + b) / 2.0;
        // The two halves' bounds, and the exact bound where the worst piece was cut:
        // from the processes run so far, else the cut's process (with the upper half
        // and the halves that will start at m) beside the lower half's.
        let known =
            |r: Run, found: &[(Run, Value)]| found.iter().find(|(k, _)| k.same(r)).map(|&(_, v)| v);
        let (left, cut) = (known(Run::Over(a, m), &found), known(Run::At(m), &found));
        let lower = || one_process(model, options, Run::Over(a, m), a, (a + m) / 2.0);
        let upper = || one_process(model, options, Run::At(m), m, b);
        // A step that needs one process leaves a thread free: it computes ahead the cut
        // of the piece that is next in line (the second largest bound now), which the
        // search usually makes soon (the loose pieces are halved breadth first). Only
        // the time changes: every value is the one its run gives whenever it is run.
        // (On one thread the work ahead would only be work.)
        let ahead = (rayon::current_num_threads() > 1)
            .then(|| search.runner_up(i))
            .flatten()
            .map(|(a2, b2)| ((a2 + b2) / 2.0, b2))
            .filter(|&(m2, _)| known(Run::At(m2), &found).is_none());
        let beside = |one: &(dyn Fn() -> Result<Found> + Sync)| match ahead {
            Some((m2, b2)) => rayon::join(one, || one_process(model, options, Run::At(m2), m2, b2)),
            None => (one(), Ok(Vec::new())),
        };
        let (new_left, new_cut, early) = match (left, cut) {
            (Some(_), Some(_)) => (Ok(Vec::new()), Ok(Vec::new()), Ok(Vec::new())),
            (Some(_), None) => {
                let (c, e) = beside(&upper);
                (Ok(Vec::new()), c, e)
            }
            (None, Some(_)) => {
                let (l, e) = beside(&lower);
                (l, Ok(Vec::new()), e)
            }
            (None, None) => {
                let (l, c) = rayon::join(lower, upper);
                (l, c, Ok(Vec::new()))
            }
        };
        found.extend(new_left?);
        found.extend(new_cut?);
        // A failed computation ahead is not this step's: the search meets it again,
        // in its own turn, if it gets there.
        found.extend(early.unwrap_or_default());
        let right = match known(Run::Over(m, b), &found) {
            Some(v) => v,
            None => {
                let r = alone(model, options, Run::Over(m, b))?;
                found.push((Run::Over(m, b), r));
                r
            }
        };
        let left = known(Run::Over(a, m), &found).expect("the lower half was computed");
        let cut = known(Run::At(m), &found).expect("the cut was computed");
        search.cut(i, (a, b), left, right, cut);
    }
    Ok(search.finish())
}

/// The search's state: the pieces of [low, high] with their bounds, the largest exact
/// value found where a piece was cut, the work done and the largest truncated mass.
/// The search and its reference in the tests (every cut computed on its own) share it
/// and differ only in how they obtain each value.
struct Partition {
    /// (a, b, bound over [a, b]).
    pieces: Vec<(f64, f64, f64)>,
    attained: f64,
    p_repeat: f64,
    computations: usize,
    extra: usize,
    truncated: f64,
}

impl Partition {
    /// The whole interval's value and its middle's.
    fn new(low: f64, high: f64, whole: Value, middle: Value) -> Partition {
        Partition {
            pieces: vec![(low, high, whole.upper)],
            attained: middle.lower,
            p_repeat: (low + high) / 2.0,
            computations: 1,
            extra: 1,
            truncated: whole.truncated.max(middle.truncated),
        }
    }

    /// The piece to halve next, the one with the largest bound (its index and ends);
    /// None once that bound is within [`TOLERANCE`] of the attained value, the piece is
    /// narrower than [`MIN_WIDTH`] or the next step would pass [`MAX_COMPUTATIONS`].
    fn next_cut(&self) -> Option<(usize, f64, f64)> {
        let (i, a, b) = self.largest(None).expect("at least one piece");
        let done = !self.worth_cutting(i) || self.computations + self.extra + 3 > MAX_COMPUTATIONS;
        (!done).then_some((i, a, b))
    }

    /// The ends of the piece with the largest bound other than piece `i`, when the
    /// search would cut it were it the largest.
    fn runner_up(&self, i: usize) -> Option<(f64, f64)> {
        self.largest(Some(i))
            .filter(|&(j, _, _)| self.worth_cutting(j))
            .map(|(_, a, b)| (a, b))
    }

    /// The piece with the largest bound (its index and ends), `except` left out.
    fn largest(&self, except: Option<usize>) -> Option<(usize, f64, f64)> {
        self.pieces
            .iter()
            .enumerate()
            .filter(|&(j, _)| Some(j) != except)
            .max_by(|x, y| x.1 .2.total_cmp(&y.1 .2))
            .map(|(j, &(a, b, _))| (j, a, b))
    }

    /// Whether piece `j`'s bound is above the attained value's tolerance and the piece
    /// wider than [`MIN_WIDTH`].
    fn worth_cutting(&self, j: usize) -> bool {
        let (a, b, u) = self.pieces[j];
        u > self.attained * (1.0 + TOLERANCE) && b - a > MIN_WIDTH
    }

    /// Piece `i`, [a, b], halved: the halves' values and the value at the cut.
    fn cut(&mut self, i: usize, (a, b): (f64, f64), left: Value, right: Value, at: Value) {
        let m = (a + b) / 2.0;
        for r in [left, right, at] {
            self.truncated = self.truncated.max(r.truncated);
        }
        self.computations += 2;
        self.pieces
            .splice(i..=i, [(a, m, left.upper), (m, b, right.upper)]);
        self.extra += 1;
        if at.lower > self.attained {
            self.attained = at.lower;
            self.p_repeat = m;
        }
    }

    /// The single piece, still whole, split at `ends` (its own ends first and last)
    /// into pieces with these values.
    fn split_even(&mut self, ends: &[f64], values: &[Value]) {
        self.pieces = ends
            .windows(2)
            .zip(values)
            .map(|(e, v)| (e[0], e[1], v.upper))
            .collect();
        for v in values {
            self.truncated = self.truncated.max(v.truncated);
        }
        self.computations += values.len();
    }

    /// The ends of the (at most) `n` pieces with the largest bounds, largest first.
    fn loosest(&self, n: usize) -> impl Iterator<Item = (f64, f64)> {
        let mut order: Vec<&(f64, f64, f64)> = self.pieces.iter().collect();
        order.sort_by(|x, y| y.2.total_cmp(&x.2));
        order
            .into_iter()
            .take(n)
            .map(|&(a, b, _)| (a, b))
            .collect::<Vec<_>>()
            .into_iter()
    }

    /// The value at p_r = `p`, computed apart from a cut.
    fn attain(&mut self, p: f64, v: Value) {
        self.truncated = self.truncated.max(v.truncated);
        self.extra += 1;
        if v.lower > self.attained {
            self.attained = v.lower;
            self.p_repeat = p;
        }
    }

    fn finish(self) -> WorstCase {
        WorstCase {
            fn_upper: self
                .pieces
                .iter()
                .map(|p| p.2)
                .fold(f64::NEG_INFINITY, f64::max),
            attained: self.attained,
            p_repeat: self.p_repeat,
            pieces: self.pieces.len(),
            computations: self.computations + self.extra,
            truncated_mass: self.truncated,
        }
    }
}

/// How many halves that start at a cut (or at the interval's bottom) are followed
/// with it, in advance (each costs a few operations per arrival beside the bit
/// process's thousands); a deeper half is computed on its own.
const HALVES_AHEAD: usize = 10;

/// The computations of one bit process: each run with its value.
type Found = Vec<(Run, Value)>;

/// A renewal computation of the search: the bound at p_r, or over [a, b].
#[derive(Clone, Copy, Debug)]
enum Run {
    At(f64),
    Over(f64, f64),
}

impl Run {
    fn same(self, other: Run) -> bool {
        match (self, other) {
            (Run::At(x), Run::At(y)) => x.to_bits() == y.to_bits(),
            (Run::Over(a, b), Run::Over(c, d)) => {
                a.to_bits() == c.to_bits() && b.to_bits() == d.to_bits()
            }
            _ => false,
        }
    }

    fn model(self, model: &FnModel) -> FnModel {
        let mut m = model.clone();
        match self {
            Run::At(p) => {
                m.p_r_interval = None;
                m.p_r = p;
            }
            Run::Over(a, b) => m.p_r_interval = Some((a, b)),
        }
        m
    }
}

/// `first`, and on its bit process (`FnModel::renewal_lanes`) the intervals that
/// start at `x` (first's p_r or bottom) and end at `top`, then at each midpoint of x
/// and the last end (the search's `(a + b) / 2`): the halves the search makes from
/// x. `first`'s value always (computed apart if it cannot lend its process), the
/// others' where they share it.
fn one_process(
    model: &FnModel,
    options: RenewalOptions,
    first: Run,
    x: f64,
    top: f64,
) -> Result<Found> {
    let mut runs = vec![first];
    let mut end = top;
    for _ in 0..HALVES_AHEAD {
        runs.push(Run::Over(x, end));
        end = (x + end) / 2.0;
    }
    let models: Vec<FnModel> = runs.iter().map(|r| r.model(model)).collect();
    let results = models[0].renewal_lanes(&models[1..], options)?;
    let mut out = Vec::with_capacity(runs.len());
    for (i, (run, r)) in runs.into_iter().zip(results).enumerate() {
        match r {
            Some(r) => out.push((run, Value::of(&r))),
            None if i == 0 => out.push((run, alone(model, options, run)?)),
            None => {}
        }
    }
    Ok(out)
}

/// One computation on its own.
fn alone(model: &FnModel, options: RenewalOptions, run: Run) -> Result<Value> {
    Ok(Value::of(&run.model(model).renewal(options)?))
}

impl Value {
    fn of(r: &super::RenewalResult) -> Value {
        Value {
            upper: r.fn_upper,
            lower: r.fn_lower,
            truncated: r.truncated_mass,
        }
    }
}

/// Equal pieces the first split of [`apart`] makes at most.
const EVEN_PIECES: usize = 32;

/// The search with every computation run on its own (a tolerance is set: no bit
/// process to share), the computations of a step side by side.
///
/// Halving from the whole interval computes every level of the tree down to the
/// pieces that meet the tolerance, about three times the computations of those
/// pieces. The looseness of a bound over a piece grows about linearly with its width
/// (the coupling's two ends part linearly), so the whole interval's gap over its
/// middle's value gives the number of equal pieces that would about close it: they
/// are computed at once, then the values at the middles of the two loosest, and the
/// halving goes on from there. Only the work changes: every bound is a bound over
/// its piece whatever the partition.
fn apart(model: &FnModel, options: RenewalOptions, (low, high): (f64, f64)) -> Result<WorstCase> {
    // The hitting-time engine's fields depend on the filter alone: built once for
    // every computation (three hitting laws, each an FFT).
    let mut model = model.clone();
    model.share_hitting_fields();
    let model = &model;
    let run = |r: Run| alone(model, options, r);
    let all = |runs: &[Run]| -> Result<Vec<Value>> { runs.par_iter().map(|&r| run(r)).collect() };
    let first = all(&[Run::Over(low, high), Run::At((low + high) / 2.0)])?;
    let mut search = Partition::new(low, high, first[0], first[1]);
    let gap = first[0].upper / first[1].lower - 1.0;
    if gap > TOLERANCE {
        let n = ((1.1 * gap / TOLERANCE).ceil() as usize).clamp(2, EVEN_PIECES);
        let ends = even(low, high, n);
        let runs: Vec<Run> = ends.windows(2).map(|e| Run::Over(e[0], e[1])).collect();
        search.split_even(&ends, &all(&runs)?);
        let middles: Vec<Run> = search
            .loosest(2)
            .map(|(a, b)| Run::At((a + b) / 2.0))
            .collect();
        for (r, v) in middles.iter().zip(all(&middles)?) {
            if let Run::At(p) = *r {
                search.attain(p, v);
            }
        }
    }
    while let Some((i, a, b)) = search.next_cut() {
        let m = (a + b) / 2.0;
        let v = all(&[Run::Over(a, m), Run::Over(m, b), Run::At(m)])?;
        search.cut(i, (a, b), v[0], v[1], v[2]);
    }
    Ok(search.finish())
}

/// The ends of `n` equal pieces of [low, high], low and high exactly.
fn even(low: f64, high: f64, n: usize) -> Vec<f64> {
    let w = (high - low) / n as f64;
    (0..=n)
        .map(|i| if i == n { high } else { low + w * i as f64 })
        .collect()
}

/// The bound at the model's p_r alone (no interval, or an empty one).
fn at_point(model: &FnModel, options: RenewalOptions) -> Result<WorstCase> {
    let mut m = model.clone();
    m.p_r_interval = None;
    let r = m.renewal(options)?;
    Ok(WorstCase {
        fn_upper: r.fn_upper,
        attained: r.fn_lower,
        p_repeat: m.p_r,
        pieces: 1,
        computations: 1,
        truncated_mass: r.truncated_mass,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::false_negative::renewal::RenewalResult;
    use rbf_data::filter::FilterConfig;
    use rbf_data::workload::{Placement, Workload};

    /// A workload with a measured-style reuse profile (U does not depend on p_r): S(n)
    /// of Zipf(1000, 1) draws, sum_i q_i (1 - q_i)^n.
    fn profiled(p_r: f64) -> Workload {
        let mut w = Workload::zipf(1000, 1.0, p_r, Placement::Uniform);
        let q = w.repeat_distribution().unwrap();
        let n: Vec<u64> = (0..4000)
            .map(|i| i * i / 8)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let survival = n
            .iter()
            .map(|&n| {
                q.iter()
                    .map(|qi| qi * (1.0 - qi).powi(n as i32))
                    .sum::<f64>()
                    .min(1.0)
            })
            .collect();
        w.reuse = Some(rbf_data::workload::ReuseProfile {
            n,
            survival,
            between: rbf_data::workload::Between::Step,
        });
        w
    }

    /// With a certified engine (a tolerance asked; by default from
    /// [`super::super::CERTIFIED_FROM`] bits) the search runs its computations apart,
    /// from an even split: its bound is above the exact engine's value at every p_r of
    /// a grid over the interval, its attained value below the largest of them, and the
    /// gap within the tolerance; an interval reaching p_r = 1 too (the loosest coupling).
    #[test]
    fn the_search_on_the_certified_engine_bounds_every_p_r_and_is_close() {
        let filter = FilterConfig::sigma_bounded(1 << 14, 4, 4000);
        let exact = RenewalOptions {
            tolerance: Some(0.0),
            ..RenewalOptions::default()
        };
        let certified = RenewalOptions {
            tolerance: Some(1e-3),
            ..RenewalOptions::default()
        };
        for (low, high) in [(0.85, 0.95), (0.9, 1.0), (0.5, 0.52)] {
            let mut w = profiled((low + high) / 2.0);
            w.p_repeat_interval = Some([low, high]);
            let model =
                FnModel::new(&filter, &w, crate::model::false_negative::DEFAULT_EPS).unwrap();
            assert_eq!(model.renewal_tolerance(certified), Some(1e-3));
            let worst = renewal_worst_case(&model, certified).unwrap();
            let mut largest: f64 = 0.0;
            for i in 0..=20 {
                let mut m = model.clone();
                m.p_r_interval = None;
                m.p_r = low + (high - low) * f64::from(i) / 20.0;
                let v = m.renewal(exact).unwrap().fn_upper;
                largest = largest.max(v);
                assert!(
                    v <= worst.fn_upper,
                    "[{low}, {high}] p_r {}: {v} > {worst:?}",
                    m.p_r
                );
            }
            assert!(
                worst.attained <= largest,
                "[{low}, {high}]: {worst:?} vs {largest}"
            );
            // The gap is the search's tolerance when it stopped within its work limit
            // (which an interval reaching p_r = 1 may exhaust: then a few percent).
            let gap = if worst.computations + 3 > MAX_COMPUTATIONS {
                0.05
            } else {
                TOLERANCE
            };
            assert!(
                worst.fn_upper <= worst.attained * (1.0 + gap),
                "[{low}, {high}]: {worst:?}"
            );
        }
        // The default picks the certified engine from 2^19 bits only.
        let w = profiled(0.9);
        for (m, certified) in [(1u64 << 18, false), (1 << 19, true)] {
            let f = FilterConfig::sigma_bounded(m, 4, m / 4);
            let model = FnModel::new(&f, &w, crate::model::false_negative::DEFAULT_EPS).unwrap();
            assert_eq!(
                model.renewal_tolerance(RenewalOptions::default()).is_some(),
                certified,
                "{m} bits"
            );
            assert_eq!(model.renewal_tolerance(exact), None);
        }
    }

    /// The hitting-time engine on fields built once (`FnModel::share_hitting_fields`)
    /// gives the same bits as on its own; a clone with another filter builds its own.
    #[test]
    fn shared_hitting_fields_give_the_same_bits() {
        let filter = FilterConfig::sigma_bounded(1 << 14, 4, 4000);
        let certified = RenewalOptions {
            tolerance: Some(1e-3),
            ..RenewalOptions::default()
        };
        let mut w = profiled(0.9);
        w.p_repeat_interval = Some([0.85, 0.95]);
        let plain = FnModel::new(&filter, &w, crate::model::false_negative::DEFAULT_EPS).unwrap();
        let mut shared = plain.clone();
        shared.share_hitting_fields();
        for p in [None, Some((0.85, 0.9))] {
            let (mut a, mut b) = (plain.clone(), shared.clone());
            a.p_r_interval = p;
            b.p_r_interval = p;
            let (a, b) = (a.renewal(certified).unwrap(), b.renewal(certified).unwrap());
            assert_eq!(a.mode, super::super::RenewalMode::Certified);
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
        }
        let other = FilterConfig::sigma_bounded(1 << 14, 4, 4100);
        let mut b = FnModel::new(&other, &w, crate::model::false_negative::DEFAULT_EPS).unwrap();
        let a = b.renewal(certified).unwrap();
        b.hitting_fields = shared.hitting_fields.clone();
        assert_eq!(
            format!("{a:?}"),
            format!("{:?}", b.renewal(certified).unwrap())
        );
    }

    #[test]
    fn the_worst_case_bounds_every_p_r_in_the_interval_and_is_close() {
        let filter = FilterConfig::sigma_bounded(8000, 4, 2000);
        let mut w = profiled(0.9);
        w.p_repeat_interval = Some([0.8, 1.0]);
        let model = FnModel::new(&filter, &w, crate::model::false_negative::DEFAULT_EPS).unwrap();
        let worst = renewal_worst_case(&model, RenewalOptions::default()).unwrap();
        let mut largest: f64 = 0.0;
        for i in 0..=20 {
            let mut m = model.clone();
            m.p_r_interval = None;
            m.p_r = 0.8 + 0.01 * i as f64;
            let v = m.renewal(RenewalOptions::default()).unwrap().fn_upper;
            largest = largest.max(v);
            assert!(
                v <= worst.fn_upper * (1.0 + 1e-12),
                "p_r {}: {v} > {}",
                m.p_r,
                worst.fn_upper
            );
        }
        // The worst case found at a single p_r is as large as the grid's largest, nearly.
        assert!(
            worst.attained <= worst.fn_upper && worst.attained >= largest * 0.999,
            "{worst:?} vs {largest}"
        );
        // One computation over the whole interval is far looser.
        let mut one = model.clone();
        one.p_r_interval = Some((0.8, 1.0));
        let loose = one.renewal(RenewalOptions::default()).unwrap().fn_upper;
        assert!(loose > worst.fn_upper, "{loose} vs {worst:?}");
        // A wide interval reaching p_r = 1 leaves a gap of a few percent within the
        // work limit (measured: 3.4 %).
        assert!(worst.fn_upper <= worst.attained * 1.05, "{worst:?}");
        // An interval as narrow as a long trace's: one computation over it, the check
        // at its middle, and a gap within the tolerance.
        let mut narrow = model.clone();
        narrow.p_r_interval = Some((0.898, 0.902));
        let n = renewal_worst_case(&narrow, RenewalOptions::default()).unwrap();
        assert!(
            n.computations <= 5 && n.fn_upper <= n.attained * (1.0 + TOLERANCE),
            "{n:?}"
        );
    }

    /// The search as it was before the first cut reused the middle's value: every
    /// step computes its cut.
    fn every_cut_computed(model: &FnModel, options: RenewalOptions) -> Result<WorstCase> {
        let Some((low, high)) = model.p_r_interval.filter(|(l, h)| h > l) else {
            return at_point(model, options);
        };
        let run = |m: &FnModel| m.renewal(options).map(|r| Value::of(&r));
        let over = |a: f64, b: f64| {
            let mut m = model.clone();
            m.p_r_interval = Some((a, b));
            run(&m)
        };
        let at = |p: f64| {
            let mut m = model.clone();
            m.p_r_interval = None;
            m.p_r = p;
            run(&m)
        };
        let mid = (low + high) / 2.0;
        let mut search = Partition::new(low, high, over(low, high)?, at(mid)?);
        while let Some((i, a, b)) = search.next_cut() {
            let m = (a + b) / 2.0;
            search.cut(i, (a, b), over(a, m)?, over(m, b)?, at(m)?);
        }
        Ok(search.finish())
    }

    /// The search with the first cut's value taken from the middle and the values
    /// of one bit process per bottom of p_r (`one_process`) gives the same result,
    /// bit for bit, as the search that computes every cut and half on its own, on one
    /// thread and on two: one and two phases, intervals narrow and wide, reaching p_r = 1 or not.
    #[test]
    fn the_first_cut_reused_changes_no_bit() {
        let mut cases = 0;
        for (memory, k, sigma, phases) in [(8000u64, 4u32, 2000u64, 1u8), (6000, 3, 1400, 2)] {
            let mut filter = FilterConfig::sigma_bounded(memory, k, sigma);
            filter.phases = phases;
            for (p_r, low, high) in [
                (0.5, 0.45, 0.55),
                (0.9, 0.8, 1.0),
                (0.9, 0.898, 0.902),
                (0.97, 0.9, 0.99),
                (0.99, 0.985, 1.0),
            ] {
                let mut w = profiled(p_r);
                w.p_repeat_interval = Some([low, high]);
                let model =
                    FnModel::new(&filter, &w, crate::model::false_negative::DEFAULT_EPS).unwrap();
                let options = RenewalOptions::default();
                let reference = every_cut_computed(&model, options);
                for threads in [1, 2] {
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .unwrap();
                    let found = pool.install(|| renewal_worst_case(&model, options));
                    match (&reference, &found) {
                        (Ok(r), Ok(f)) => {
                            assert_eq!(format!("{r:?}"), format!("{f:?}"), "p_r {low}-{high}");
                            assert_eq!(r.fn_upper.to_bits(), f.fn_upper.to_bits());
                            assert_eq!(r.attained.to_bits(), f.attained.to_bits());
                            cases += 1;
                        }
                        (Err(r), Err(f)) => assert_eq!(r.to_string(), f.to_string()),
                        (r, f) => panic!("one errs, the other not: {r:?} / {f:?}"),
                    }
                }
            }
        }
        assert!(cases >= 16, "{cases} cases compared");
    }

    /// The cut at p and intervals [p, b] followed on its bit process
    /// (`FnModel::renewal_lanes`) give the same results, bit for bit, as each computed
    /// alone: sigma- and N-bounded, one and two phases, retaining or not, per-insertion
    /// sums shared or not, two values of tiny, an arrival limit that stops the cycle,
    /// measured profiles that keep U above zero or end at zero (U held), and halves
    /// from 1e-4 wide to reaching p_r = 1, and their halves. Intervals that cannot
    /// share the process (another bottom, U from Q) are declined.
    /// The filters the same-bits tests run: sigma- and N-bounded, one and two phases,
    /// retaining or not.
    fn filter_shapes() -> Vec<FilterConfig> {
        [
            (8000u64, 4u32, 2000u64, None, 1u8, true),
            (6000, 3, 1400, None, 2, true),
            (4000, 2, 900, None, 1, false),
            (3000, 3, 0, Some(300u64), 1, true),
        ]
        .into_iter()
        .map(|(memory, k, sigma, n, phases, retaining)| {
            let mut filter = FilterConfig::sigma_bounded(memory, k, sigma);
            filter.phases = phases;
            filter.retaining = retaining;
            if n.is_some() {
                filter.sigma = None;
                filter.max_inserts = n;
            }
            filter
        })
        .collect()
    }

    #[test]
    fn a_cut_and_the_halves_from_it_on_one_process_give_the_same_bits() {
        let (mut paired, mut declined) = (0, 0);
        let same = |a: &RenewalResult, b: &RenewalResult, what: &str| {
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{what}");
            for (x, y) in [
                (a.fn_upper, b.fn_upper),
                (a.fn_ratio, b.fn_ratio),
                (a.window_term, b.window_term),
                (a.fp_rate, b.fp_rate),
                (a.arrivals_per_cycle, b.arrivals_per_cycle),
                (a.truncated_mass, b.truncated_mass),
            ] {
                assert_eq!(x.to_bits(), y.to_bits(), "{what}");
            }
        };
        for filter in filter_shapes() {
            for (p, b) in [(0.5, 0.55), (0.9, 1.0), (0.97, 0.9701), (0.99, 1.0)] {
                for cut_short in [false, true] {
                    let mut w = profiled(p);
                    if cut_short {
                        // U reaches zero after 600 arrivals.
                        let r = w.reuse.as_mut().unwrap();
                        let keep = r.n.partition_point(|&x| x < 600);
                        r.n.truncate(keep);
                        r.survival.truncate(keep);
                        r.n.push(600);
                        r.survival.push(0.0);
                    }
                    let base = FnModel::new(&filter, &w, crate::model::false_negative::DEFAULT_EPS)
                        .unwrap();
                    for (tiny, max_arrivals, share) in [
                        (1e-30, 1 << 32, true),
                        (1e-20, 1 << 32, false),
                        (1e-30, 700, true),
                    ] {
                        let options = RenewalOptions {
                            tiny,
                            max_arrivals,
                            ..RenewalOptions::default()
                        };
                        let mut model = base.clone();
                        if share {
                            model.share_renewal_bits(options).unwrap();
                        }
                        let mut cut = model.clone();
                        cut.p_r = p;
                        let over = |a: f64, b: f64| {
                            let mut m = model.clone();
                            m.p_r_interval = Some((a, b));
                            m
                        };
                        let mut from_q = over(p, b);
                        from_q.reuse = None;
                        // The upper half and two halves of it, then two that cannot
                        // share the process: another bottom, U from Q.
                        let others = [
                            over(p, b),
                            over(p, (p + b) / 2.0),
                            over(p, (p + (p + b) / 2.0) / 2.0),
                            over(p * 0.99, b),
                            from_q,
                        ];
                        let what = format!("{} [{p}, {b}] tiny {tiny}", filter.describe());
                        let lanes = cut.renewal_lanes(&others, options);
                        let apart: Vec<_> = std::iter::once(&cut)
                            .chain(&others)
                            .map(|m| m.renewal(options))
                            .collect();
                        match lanes {
                            Ok(lanes) => {
                                assert_eq!(lanes.len(), 6);
                                assert!(lanes[4].is_none() && lanes[5].is_none(), "{what}");
                                let first = lanes[0].as_ref().expect("the first lends its process");
                                same(first, apart[0].as_ref().unwrap(), &what);
                                for (l, a) in lanes.iter().zip(&apart).skip(1) {
                                    match l {
                                        Some(l) => {
                                            same(l, a.as_ref().unwrap(), &what);
                                            paired += 1;
                                        }
                                        None => declined += 1,
                                    }
                                }
                            }
                            Err(e) => assert_eq!(
                                e.to_string(),
                                apart[0].as_ref().unwrap_err().to_string()
                            ),
                        }
                        // U from Q: nothing shares the first's process.
                        let mut cut_q = cut.clone();
                        cut_q.reuse = None;
                        let none = cut_q.renewal_lanes(&others[..1], options).unwrap();
                        assert!(none.iter().all(Option::is_none));
                    }
                }
            }
        }
        // 96 settings, three shared halves each.
        assert!(paired >= 250, "{paired} paired, {declined} declined");
    }

    /// Renewal computations on a model whose per-insertion sums were built once
    /// (`FnModel::share_renewal_bits`) give the same bits as computations that build
    /// their own: sigma- and N-bounded, one and two phases, retaining or not, p_r at a
    /// point and over intervals, Q's U and a measured profile's, two values of tiny.
    #[test]
    fn shared_per_insertion_sums_give_the_same_bits() {
        let mut cases = 0;
        for filter in filter_shapes() {
            for p_r in [0.5, 0.9, 0.99] {
                for (profile, interval) in [(false, None), (true, None), (true, Some(0.04))] {
                    let mut w = if profile {
                        profiled(p_r)
                    } else {
                        Workload::zipf(1000, 1.0, p_r, Placement::Uniform)
                    };
                    if let Some(width) = interval {
                        w.p_repeat_interval = Some([p_r - width, (p_r + width).min(1.0)]);
                    }
                    let plain =
                        FnModel::new(&filter, &w, crate::model::false_negative::DEFAULT_EPS)
                            .unwrap();
                    for tiny in [1e-30, 1e-20] {
                        let options = RenewalOptions {
                            tiny,
                            ..RenewalOptions::default()
                        };
                        let mut shared = plain.clone();
                        shared.share_renewal_bits(options).unwrap();
                        // A clone at another p_r, as the worst-case search makes.
                        for p in [p_r, p_r * 0.97] {
                            let (mut a, mut b) = (plain.clone(), shared.clone());
                            a.p_r = p;
                            b.p_r = p;
                            let (a, b) = (a.renewal(options), b.renewal(options));
                            match (a, b) {
                                (Ok(a), Ok(b)) => {
                                    assert_eq!(
                                        format!("{a:?}"),
                                        format!("{b:?}"),
                                        "{} p_r {p}",
                                        filter.describe()
                                    );
                                    assert_eq!(a.fn_upper.to_bits(), b.fn_upper.to_bits());
                                    cases += 1;
                                }
                                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                                (a, b) => panic!("one errs, the other not: {a:?} / {b:?}"),
                            }
                        }
                        // Another tiny than the shared sums': built again, same bits.
                        let other = RenewalOptions {
                            tiny: tiny * 1e-3,
                            ..options
                        };
                        let (a, b) = (plain.renewal(other), shared.renewal(other));
                        if let (Ok(a), Ok(b)) = (a, b) {
                            assert_eq!(format!("{a:?}"), format!("{b:?}"));
                        }
                    }
                }
            }
        }
        assert!(cases >= 100, "{cases} cases compared");
    }
}
