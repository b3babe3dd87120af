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

use super::RenewalOptions;
use crate::error::Result;
use crate::model::false_negative::FnModel;

/// Relative gap at which the partition stops.
pub const TOLERANCE: f64 = 1e-2;
/// Renewal computations at most.
const MAX_COMPUTATIONS: usize = 64;
/// Pieces narrower than this are not split.
const MIN_WIDTH: f64 = 1e-6;

/// The renewal bound over an interval of p_r.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct WorstCase {
    /// At or above the renewal bound at every p_r of the interval (one phase).
    pub fn_upper: f64,
    /// The largest renewal bound at a single p_r found: the worst case over the
    /// interval lies in [attained, fn_upper].
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
    // Every computation below differs from the others in p_r or its interval only:
    // the per-insertion sums are built once, before the first.
    let mut model = model.clone();
    model.share_renewal_bits(options)?;
    let model = &model;
    // Each computation's bound and truncated mass; the computations of one step are
    // independent and run on rayon's threads, and every decision below reads their
    // values in a fixed order, so the result does not depend on the thread count.
    let run = |m: &FnModel| -> Result<(f64, f64)> {
        let r = m.renewal(options)?;
        Ok((r.fn_upper, r.truncated_mass))
    };
    let over = |a: f64, b: f64| -> Result<(f64, f64)> {
        let mut m = model.clone();
        m.p_r_interval = Some((a, b));
        run(&m)
    };
    let at = |p: f64| -> Result<(f64, f64)> {
        let mut m = model.clone();
        m.p_r_interval = None;
        m.p_r = p;
        run(&m)
    };
    // The cut at p and the upper half over [p, b] on one bit process where they share
    // it (`FnModel::renewal_pair`: the same bits as computed apart), else side by side.
    let pair = |p: f64, b: f64| -> Result<Option<[(f64, f64); 2]>> {
        let mut cut = model.clone();
        cut.p_r_interval = None;
        cut.p_r = p;
        let mut upper = model.clone();
        upper.p_r_interval = Some((p, b));
        Ok(cut
            .renewal_pair(&upper, options)?
            .map(|rs| rs.map(|r| (r.fn_upper, r.truncated_mass))))
    };
    let split = |p: f64, b: f64| -> Result<((f64, f64), (f64, f64))> {
        if let Some([cut, upper]) = pair(p, b)? {
            return Ok((cut, upper));
        }
        let (cut, upper) = rayon::join(|| at(p), || over(p, b));
        let upper = upper?;
        Ok((cut?, upper))
    };
    let mut truncated = 0.0f64;
    let mut kept = |r: (f64, f64)| {
        truncated = truncated.max(r.1);
        r.0
    };
    let mid = (low + high) / 2.0;
    // The middle, and with it the upper half that the first step would compute (kept
    // aside: it counts only if that step is taken).
    let first = || -> Result<((f64, f64), Option<(f64, f64)>)> {
        Ok(match pair(mid, high)? {
            Some([cut, upper]) => (cut, Some(upper)),
            None => (at(mid)?, None),
        })
    };
    let (whole, middle) = rayon::join(|| over(low, high), first);
    let mut pieces = vec![(low, high, kept(whole?))];
    let (middle, upper) = middle?;
    let (mut attained, mut p_repeat) = (kept(middle), mid);
    // The first cut is the middle itself: its value is known (the same computation,
    // the same bits), and the first step computes the two halves alone (the upper one
    // too where it came with the middle).
    let mut known_cut = Some((mid, middle, upper));
    let (mut computations, mut extra) = (1, 1);
    loop {
        let (i, &(a, b, u)) = pieces
            .iter()
            .enumerate()
            .max_by(|x, y| x.1 .2.total_cmp(&y.1 .2))
            .expect("at least one piece");
        if u <= attained * (1.0 + TOLERANCE)
            || b - a <= MIN_WIDTH
            || computations + extra + 3 > MAX_COMPUTATIONS
        {
            break;
        }
        let m = (a + b) / 2.0;
        // The two halves' bounds, and the exact bound where the worst piece was cut.
        let known = known_cut.take().filter(|k| k.0 == m);
        let (left, right, cut) = match known {
            Some((_, v, Some(upper))) if b == high => (over(a, m), Ok(upper), Ok(v)),
            Some((_, v, _)) => {
                let (left, right) = rayon::join(|| over(a, m), || over(m, b));
                (left, right, Ok(v))
            }
            None => {
                let (left, split) = rayon::join(|| over(a, m), || split(m, b));
                let left = left?;
                let (cut, right) = split?;
                (Ok(left), Ok(right), Ok(cut))
            }
        };
        let (left, right, v) = (kept(left?), kept(right?), kept(cut?));
        computations += 2;
        pieces.splice(i..=i, [(a, m, left), (m, b, right)]);
        extra += 1;
        if v > attained {
            attained = v;
            p_repeat = m;
        }
    }
    Ok(WorstCase {
        fn_upper: pieces.iter().map(|p| p.2).fold(f64::NEG_INFINITY, f64::max),
        attained,
        p_repeat,
        pieces: pieces.len(),
        computations: computations + extra,
        truncated_mass: truncated,
    })
}

/// The bound at the model's p_r alone (no interval, or an empty one).
fn at_point(model: &FnModel, options: RenewalOptions) -> Result<WorstCase> {
    let mut m = model.clone();
    m.p_r_interval = None;
    let r = m.renewal(options)?;
    Ok(WorstCase {
        fn_upper: r.fn_upper,
        attained: r.fn_upper,
        p_repeat: m.p_r,
        pieces: 1,
        computations: 1,
        truncated_mass: r.truncated_mass,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::FilterConfig;
    use crate::model::false_negative::renewal::RenewalResult;
    use crate::workload::{Placement, Workload};

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
        w.reuse = Some(crate::workload::ReuseProfile {
            n,
            survival,
            between: crate::workload::Between::Step,
        });
        w
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
        let run = |m: &FnModel| m.renewal(options).map(|r| (r.fn_upper, r.truncated_mass));
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
        let mut truncated = 0.0f64;
        let mut kept = |r: (f64, f64)| {
            truncated = truncated.max(r.1);
            r.0
        };
        let mid = (low + high) / 2.0;
        let mut pieces = vec![(low, high, kept(over(low, high)?))];
        let (mut attained, mut p_repeat) = (kept(at(mid)?), mid);
        let (mut computations, mut extra) = (1, 1);
        loop {
            let (i, &(a, b, u)) = pieces
                .iter()
                .enumerate()
                .max_by(|x, y| x.1 .2.total_cmp(&y.1 .2))
                .unwrap();
            if u <= attained * (1.0 + TOLERANCE)
                || b - a <= MIN_WIDTH
                || computations + extra + 3 > MAX_COMPUTATIONS
            {
                break;
            }
            let m = (a + b) / 2.0;
            let (left, right, v) = (kept(over(a, m)?), kept(over(m, b)?), kept(at(m)?));
            computations += 2;
            pieces.splice(i..=i, [(a, m, left), (m, b, right)]);
            extra += 1;
            if v > attained {
                attained = v;
                p_repeat = m;
            }
        }
        Ok(WorstCase {
            fn_upper: pieces.iter().map(|p| p.2).fold(f64::NEG_INFINITY, f64::max),
            attained,
            p_repeat,
            pieces: pieces.len(),
            computations: computations + extra,
            truncated_mass: truncated,
        })
    }

    /// The search with the first cut's value taken from the middle gives the same
    /// result, bit for bit, as the search that computes every cut, on one thread and
    /// on two: one and two phases, intervals narrow and wide, reaching p_r = 1 or not.
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

    /// The cut at p and the upper half over [p, b] followed on one bit process
    /// (`FnModel::renewal_pair`) give the same results, bit for bit, as each computed
    /// alone: sigma- and N-bounded, one and two phases, retaining or not, per-insertion
    /// sums shared or not, two values of tiny, an arrival limit that stops the cycle,
    /// measured profiles that keep U above zero or end at zero (U held), and halves
    /// from 1e-4 wide to reaching p_r = 1. Pairs that cannot share a process (another
    /// bottom, U from Q) are declined.
    #[test]
    fn a_cut_and_its_upper_half_on_one_process_give_the_same_bits() {
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
        for (memory, k, sigma, n, phases, retaining) in [
            (8000u64, 4u32, 2000u64, None, 1u8, true),
            (6000, 3, 1400, None, 2, true),
            (4000, 2, 900, None, 1, false),
            (3000, 3, 0, Some(300u64), 1, true),
        ] {
            let mut filter = FilterConfig::sigma_bounded(memory, k, sigma);
            filter.phases = phases;
            filter.retaining = retaining;
            if n.is_some() {
                filter.sigma = None;
                filter.max_inserts = n;
            }
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
                        let mut upper = model.clone();
                        upper.p_r_interval = Some((p, b));
                        let what = format!("M {memory} phases {phases} [{p}, {b}] tiny {tiny}");
                        let apart = [cut.renewal(options), upper.renewal(options)];
                        match (cut.renewal_pair(&upper, options), apart) {
                            (Ok(Some(both)), [Ok(c), Ok(u)]) => {
                                same(&both[0], &c, &what);
                                same(&both[1], &u, &what);
                                paired += 1;
                            }
                            (Ok(None), _) => declined += 1,
                            (Err(e), [Err(c), _]) => assert_eq!(e.to_string(), c.to_string()),
                            (r, a) => panic!("{what}: {r:?} against {a:?}"),
                        }
                        // Another bottom, or U from Q: not one process.
                        let mut other = upper.clone();
                        other.p_r_interval = Some((p * 0.99, b));
                        assert!(cut.renewal_pair(&other, options).unwrap().is_none());
                        let mut from_q = upper.clone();
                        from_q.reuse = None;
                        let mut cut_q = cut.clone();
                        cut_q.reuse = None;
                        assert!(cut_q.renewal_pair(&from_q, options).unwrap().is_none());
                    }
                }
            }
        }
        assert!(paired >= 80, "{paired} paired, {declined} declined");
    }

    /// Renewal computations on a model whose per-insertion sums were built once
    /// (`FnModel::share_renewal_bits`) give the same bits as computations that build
    /// their own: sigma- and N-bounded, one and two phases, retaining or not, p_r at a
    /// point and over intervals, Q's U and a measured profile's, two values of tiny.
    #[test]
    fn shared_per_insertion_sums_give_the_same_bits() {
        let mut cases = 0;
        for (memory, k, sigma, n, phases, retaining) in [
            (8000u64, 4u32, 2000u64, None, 1u8, true),
            (6000, 3, 1400, None, 2, true),
            (4000, 2, 900, None, 1, false),
            (3000, 3, 0, Some(300u64), 1, true),
        ] {
            let mut filter = FilterConfig::sigma_bounded(memory, k, sigma);
            filter.phases = phases;
            filter.retaining = retaining;
            if n.is_some() {
                filter.sigma = None;
                filter.max_inserts = n;
            }
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
                                        "M {memory} k {k} phases {phases} p_r {p}"
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
