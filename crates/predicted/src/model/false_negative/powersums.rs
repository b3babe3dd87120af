//! Power sums of Q after l draws with replacement, at any l, in time independent of D:
//! S(l) = sum_j (1 - q_j)^l (so that E[X](l) = D - S(l) is eq. 10's expected distinct
//! count) and F(l) = sum_j q_j (1 - q_j)^l (eq. 6; f^a of eq. 11 at l = l*(i)).
//!
//! Both are sums of exponentials exp(-l r_j) with rates r_j = -ln(1 - q_j). For l in
//! the epoch [2^e, 2^(e+1)), write t = l / 2^(e+1) in [1/2, 1) and group the rates into
//! bins of width 2 / 2^(e+1) around centres r0, so that u_j = 2^(e+1) (r_j - r0) lies in
//! [-1, 1]. Then exp(-l r_j) = exp(-l r0) exp(-t u_j), and the Taylor series of
//! exp(-t u_j) in t, truncated after [`TERMS`] terms, is off by at most
//! sum_{m >= TERMS} 1/m! < 1e-17 of the rank's term (|t u_j| <= 1); rounding in the
//! polynomial (terms of both signs, at most e times the result) stays near 1e-15. A bin therefore
//! costs one exponential and a polynomial in t whose coefficients, the moments
//! sum_j (-u_j)^m / m! (and the same weighted by q_j), are computed once per epoch.
//!
//! Ranks with r_j 2^e > [`CUT`] are left out of the epoch: each of their terms is below
//! e^-CUT < 1e-18 for every l of the epoch, so S is off by less than D * 1e-18 and F by
//! less than 1e-18. Rates up to CUT / 2^e in bins of width 2^-e make at most CUT + 1
//! bins, whatever D: an evaluation costs about 45 exponentials and 1600 multiply-adds,
//! where the direct sums cost O(D). This is what lets drop-pins and the
//! with-replacement estimate follow millions of draws over Q of 10^5-10^6 messages.
//!
//! Building an epoch's bins still visits every live rank ([`TERMS`] multiply-adds each),
//! which at D = 10^7 cost seconds per method (a dozen epochs of 10^7 ranks). The dense
//! tail of a large Q is therefore gathered once into groups: runs of at least
//! [`TERMS`] ranks whose rates lie within [`GROUP_WIDTH`] of each other, with their own
//! moments about their centre c. A group's share of a bin's moments is then exact
//! algebra, not an approximation: with x_j = beta + a_j, beta = 2^(e+1) (r0 - c) and
//! a_j = 2^(e+1) (c - r_j), x_j^m / m! = sum_k a_j^k / k! beta^(m-k) / (m-k)!, so the
//! bin takes sum_k 2^((e+1)k) mu_k beta^(m-k) / (m-k)! from the group's moments mu_k
//! (TERMS^2 operations per group and epoch instead of TERMS per rank). A bin takes whole
//! groups only where the group's whole span fits its width, so |x_j| <= 1 still holds
//! for every rank and the error bound above is unchanged; above epoch [`GROUP_EPOCH`]
//! (l >= 2^25) the bins are narrower than a group and take the ranks one by one. A
//! Zipf Q of 10^7 ranks makes about 2 000 groups and singles.

/// Taylor terms per bin: sum_{m >= 19} 1/m! < 1e-17.
const TERMS: usize = 19;
/// Rates (times the epoch's smallest l) beyond which a rank is left out: e^-41.5 < 1e-18.
const CUT: f64 = 41.5;

/// Groups span at most this much rate (2^-24): they fit whole in the bins of every
/// epoch up to [`GROUP_EPOCH`].
const GROUP_WIDTH: f64 = 1.0 / (1u64 << 24) as f64;
/// The last epoch whose bins (width 2^-e) can hold a group whole.
const GROUP_EPOCH: usize = 24;

/// Sorts `v` by increasing `rate`. Q comes most popular first, so the rates usually
/// arrive in decreasing order: reversing them saves a sort of D elements (a second at
/// D = 10^7).
fn by_increasing_rate<T>(v: &mut [T], rate: impl Fn(&T) -> f64) {
    if v.is_sorted_by(|a, b| rate(a) >= rate(b)) {
        v.reverse();
    } else {
        v.sort_by(|a, b| rate(a).total_cmp(&rate(b)));
    }
}

/// One bin of rates: exp(-l r0) times the two polynomials in t.
struct Bin {
    r0: f64,
    s: [f64; TERMS],
    f: [f64; TERMS],
}

/// Four bins side by side, coefficient by coefficient, so that [`PowerSums::at`]
/// evaluates their polynomials in one vector each: one bin's Horner steps wait on each
/// other, four bins' do not (markov-swr evaluates the sums at every state, 126 540 at
/// 2^20 bits, and drop-pins about twice per state). Each lane does one bin's
/// arithmetic in the same order, so the sums have the same bits.
struct Quad {
    /// Bins in use (1-4); the other lanes hold zeros and are not added.
    used: usize,
    r0: [f64; 4],
    /// Coefficient m of the four bins' S polynomials, then of their F polynomials.
    c: [[f64; 8]; TERMS],
}

impl Quad {
    fn of(bins: &[Bin]) -> Vec<Quad> {
        bins.chunks(4)
            .map(|four| {
                let mut q = Quad {
                    used: four.len(),
                    r0: [0.0; 4],
                    c: [[0.0; 8]; TERMS],
                };
                for (j, b) in four.iter().enumerate() {
                    q.r0[j] = b.r0;
                    for m in 0..TERMS {
                        q.c[m][j] = b.s[m];
                        q.c[m][4 + j] = b.f[m];
                    }
                }
                q
            })
            .collect()
    }
}

/// (S, F) at l = `lf` over an epoch's bins, `t` = l / 2^(e+1): each bin's
/// polynomials by Horner's rule, scaled by exp(-l r0) and added in bin order. The
/// Horner steps of up to [`INTERLEAVED`] quads are taken side by side: one quad's steps
/// wait on each other, different quads' do not.
#[inline(always)]
fn sum_quads(quads: &[Quad], lf: f64, t: f64) -> (f64, f64) {
    let (mut s, mut f) = (0.0, 0.0);
    for group in quads.chunks(INTERLEAVED) {
        let mut p = [[0.0f64; 8]; INTERLEAVED];
        for m in (0..TERMS).rev() {
            for (pq, q) in p.iter_mut().zip(group) {
                for (x, &k) in pq.iter_mut().zip(&q.c[m]) {
                    *x = *x * t + k;
                }
            }
        }
        for (pq, q) in p.iter().zip(group) {
            for j in 0..q.used {
                let scale = (-lf * q.r0[j]).exp();
                s += scale * pq[j];
                f += scale * pq[4 + j];
            }
        }
    }
    (s, f)
}

/// Quads whose polynomials [`sum_quads`] evaluates side by side: an epoch has at most
/// CUT + 1 = 42 bins, 11 quads.
const INTERLEAVED: usize = 12;

/// Consecutive ranks (by rate) `start..end` within [`GROUP_WIDTH`] of each other, and
/// their moments about their centre c: s[k] = sum_j (c - r_j)^k / k!, f[k] the same
/// weighted by the ranks' weights.
#[derive(Debug)]
struct Group {
    start: usize,
    end: usize,
    lo: f64,
    hi: f64,
    s: [f64; TERMS],
    f: [f64; TERMS],
}

impl Group {
    fn centre(&self) -> f64 {
        (self.lo + self.hi) / 2.0
    }
}

/// The part of [`PowerSums`] that depends on Q alone: its rates by increasing rate and
/// their groups. Drop-pins and markov-swr ask for the sums of the same Q; a model builds
/// this once for both ([`crate::model::false_negative::FnModel`]), which at D = 7 x 10^6 was
/// 0.1-0.2 s of each method's time (a logarithm per rank, a vector of D pairs, the
/// groups' moments).
#[derive(Debug)]
pub struct Rates {
    d: usize,
    total: f64,
    /// (r_j, q_j) with finite rate (q_j < 1), by increasing rate.
    ranks: Vec<(f64, f64)>,
    /// How many ranks each entry of `ranks` stands for (a run of ranks of one rate,
    /// [`Rates::of_runs`]); empty: one each.
    counts: Vec<f64>,
    /// The groups of ranks, by increasing rate, built when an epoch first needs them.
    groups: std::sync::OnceLock<Vec<Group>>,
}

impl Rates {
    /// The rates for base_j = 1 - kill_j and weight_j ([`PowerSums::with_kills`]).
    pub fn new(kill: &[f64], weight: &[f64]) -> Rates {
        let mut ranks: Vec<(f64, f64)> = kill
            .iter()
            .zip(weight)
            .filter(|&(&x, _)| x < 1.0)
            .map(|(&x, &w)| (-(-x).ln_1p(), w))
            .collect();
        by_increasing_rate(&mut ranks, |r| r.0);
        Rates {
            d: kill.len(),
            total: weight.iter().sum(),
            ranks,
            counts: Vec::new(),
            groups: std::sync::OnceLock::new(),
        }
    }

    /// The rates of Q held as runs of ranks ([`super::qruns::QRuns`]): each run one
    /// entry, its ranks at the run's mean q, weighing the run's total q and counting
    /// its width in S. The sums are then those of the run's means (an approximation of
    /// the ranks' own, second order in the runs' tolerance).
    pub fn of_runs(runs: &super::qruns::QRuns) -> Rates {
        let mut entries: Vec<(f64, f64, f64)> = runs
            .means()
            .zip(&runs.q_sum)
            .filter(|&((q, _), _)| q < 1.0)
            .map(|((q, w), &sum)| (-(-q).ln_1p(), sum, w))
            .collect();
        by_increasing_rate(&mut entries, |e| e.0);
        Rates {
            d: runs.distinct(),
            total: runs.q_sum.iter().sum(),
            ranks: entries.iter().map(|&(r, q, _)| (r, q)).collect(),
            counts: entries.iter().map(|&(_, _, c)| c).collect(),
            groups: std::sync::OnceLock::new(),
        }
    }

    /// Ranks that entry j stands for.
    fn count(&self, j: usize) -> f64 {
        self.counts.get(j).copied().unwrap_or(1.0)
    }

    /// Messages (D), including those with rate infinity.
    pub fn distinct(&self) -> usize {
        self.d
    }
}

/// S(l) and F(l) for one Q.
pub struct PowerSums {
    rates: std::sync::Arc<Rates>,
    /// Bins per epoch e, four by four, built when first needed.
    epochs: Vec<Option<Vec<Quad>>>,
    /// Whether [`sum_quads`] runs compiled for AVX2 (the same bits either way).
    wide: bool,
}

/// A unit a bin takes whole: one rank or one group.
#[derive(Clone, Copy)]
enum Unit {
    Rank(usize),
    Group(usize),
}

impl PowerSums {
    pub fn new(q: &[f64]) -> Self {
        PowerSums::with_kills(q, q)
    }

    /// The sums for base_j = 1 - kill_j and weight_j in place of 1 - q_j and q_j:
    /// S(l) = sum_j (1 - kill_j)^l and F(l) = sum_j weight_j (1 - kill_j)^l (the
    /// renewal model's U_l when no message changes rank, see `renewal`). The rates
    /// -ln(1 - kill_j) come from `ln_1p`, accurate for small kills.
    pub fn with_kills(kill: &[f64], weight: &[f64]) -> Self {
        PowerSums::from_rates(std::sync::Arc::new(Rates::new(kill, weight)))
    }

    /// Messages (D), including those with rate infinity.
    pub fn distinct(&self) -> usize {
        self.rates.d
    }

    /// The sums of rates built before (and shared).
    pub fn from_rates(rates: std::sync::Arc<Rates>) -> Self {
        PowerSums {
            rates,
            epochs: Vec::new(),
            wide: rbf_foundations::simd::Simd::detect() >= rbf_foundations::simd::Simd::Avx2,
        }
    }

    /// Gathers runs of at least [`TERMS`] ranks within [`GROUP_WIDTH`] into groups
    /// (shorter runs cost less rank by rank than a group's translation).
    fn build_groups(rates: &Rates) -> Vec<Group> {
        let ranks = &rates.ranks;
        let mut groups = Vec::new();
        let mut start = 0;
        while start < ranks.len() {
            let lo = ranks[start].0;
            let end = start + ranks[start..].partition_point(|&(r, _)| r <= lo + GROUP_WIDTH);
            if end - start >= TERMS {
                let hi = ranks[end - 1].0;
                let c = (lo + hi) / 2.0;
                let mut g = Group {
                    start,
                    end,
                    lo,
                    hi,
                    s: [0.0; TERMS],
                    f: [0.0; TERMS],
                };
                // 1/(m + 1): multiplications, not divisions, over the D ranks.
                let inv: [f64; TERMS] = std::array::from_fn(|m| 1.0 / (m + 1) as f64);
                // Summed by blocks: a running sum over a group of 10^5 ranks would lose
                // 1e-12 of its value, the blocks keep the rounding near 1e-14.
                for b0 in (start..end).step_by(256) {
                    let (mut s, mut f) = ([0.0; TERMS], [0.0; TERMS]);
                    for j in b0..(b0 + 256).min(end) {
                        let ((r, q), n) = (ranks[j], rates.count(j));
                        let x = c - r;
                        let mut term = 1.0;
                        for m in 0..TERMS {
                            s[m] += n * term;
                            f[m] += q * term;
                            term *= x * inv[m];
                        }
                    }
                    for m in 0..TERMS {
                        g.s[m] += s[m];
                        g.f[m] += f[m];
                    }
                }
                groups.push(g);
            }
            start = end;
        }
        groups
    }

    /// (S(l), F(l)), to about 1e-15 relative plus D * 1e-18 (S) and 1e-18 (F) absolute
    /// (the tests check 1e-13 against direct sums, whose own rounding is near that).
    pub fn at(&mut self, l: u64) -> (f64, f64) {
        if l == 0 {
            return (self.rates.d as f64, self.rates.total);
        }
        let e = 63 - l.leading_zeros() as usize;
        if self.epochs.len() <= e {
            self.epochs.resize_with(e + 1, || None);
        }
        if self.epochs[e].is_none() {
            let bins = self.bins(e);
            self.epochs[e] = Some(Quad::of(&bins));
        }
        let quads = self.epochs[e].as_deref().unwrap_or_default();
        let lf = l as f64;
        let t = lf / (2.0f64).powi(e as i32 + 1);
        let (s, f) = rbf_foundations::simd::with_avx2(
            self.wide,
            #[inline(always)]
            || sum_quads(quads, lf, t),
        );
        (s.max(0.0), f.max(0.0))
    }

    /// The bins of epoch e: l in [2^e, 2^(e+1)). Each bin starts at the smallest rate
    /// not yet binned and takes the ranks and whole groups that lie within its width.
    fn bins(&mut self, e: usize) -> Vec<Bin> {
        let lo = (2.0f64).powi(e as i32);
        let width = 1.0 / lo; // 2 / 2^(e+1)
        let scale = 2.0 * lo; // 2^(e+1)
        let ranks = &self.rates.ranks;
        let live = ranks.partition_point(|&(r, _)| r * lo <= CUT);
        let groups: &[Group] = if e <= GROUP_EPOCH {
            self.rates
                .groups
                .get_or_init(|| PowerSums::build_groups(&self.rates))
        } else {
            &[]
        };
        // The units in rate order: whole groups where there are, ranks elsewhere. A
        // group whose first rank is live is taken whole (its other ranks' terms are
        // only more accurate than leaving them out).
        let mut units = Vec::new();
        let (mut p, mut gi) = (0, 0);
        while p < live {
            match groups.get(gi) {
                Some(g) if g.start == p => {
                    units.push(Unit::Group(gi));
                    p = g.end;
                    gi += 1;
                }
                _ => {
                    units.push(Unit::Rank(p));
                    p += 1;
                }
            }
        }
        let span = |u: Unit| match u {
            Unit::Rank(j) => (ranks[j].0, ranks[j].0),
            Unit::Group(g) => (groups[g].lo, groups[g].hi),
        };
        let mut bins = Vec::new();
        let mut start = 0;
        while start < units.len() {
            let first = span(units[start]).0;
            let mut end = start + 1;
            while end < units.len() && span(units[end]).1 <= first + width {
                end += 1;
            }
            let r0 = (first + span(units[end - 1]).1) / 2.0;
            let mut b = Bin {
                r0,
                s: [0.0; TERMS],
                f: [0.0; TERMS],
            };
            for &u in &units[start..end] {
                match u {
                    Unit::Rank(j) => add_rank(&mut b, scale, ranks[j], self.rates.count(j)),
                    Unit::Group(g) => add_group(&mut b, scale, &groups[g]),
                }
            }
            bins.push(b);
            start = end;
        }
        bins
    }
}

/// One rank's terms x^m / m!, x = -2^(e+1) (r - r0), built up term by term (`n`
/// ranks of that rate and total weight `q`: n = 1 but for runs).
fn add_rank(b: &mut Bin, scale: f64, (r, q): (f64, f64), n: f64) {
    let x = -scale * (r - b.r0);
    let mut term = 1.0;
    for m in 0..TERMS {
        b.s[m] += n * term;
        b.f[m] += q * term;
        term *= x / (m + 1) as f64;
    }
}

/// A group's terms from its moments (the binomial translation of the module's doc):
/// moment m of the bin gains sum_{k <= m} scale^k mu_k beta^(m-k) / (m-k)!.
fn add_group(b: &mut Bin, scale: f64, g: &Group) {
    let beta = scale * (b.r0 - g.centre());
    let mut shift = [0.0; TERMS];
    shift[0] = 1.0;
    for n in 1..TERMS {
        shift[n] = shift[n - 1] * beta / n as f64;
    }
    let mut pow = 1.0;
    for k in 0..TERMS {
        let (ms, mf) = (g.s[k] * pow, g.f[k] * pow);
        for m in k..TERMS {
            b.s[m] += ms * shift[m - k];
            b.f[m] += mf * shift[m - k];
        }
        pow *= scale;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (S, F) from the power sums against the direct sums at l, D = `d`.
    fn assert_agrees((s, f): (f64, f64), (ws, wf): (f64, f64), l: u64, d: f64) {
        assert!(
            (s - ws).abs() <= 1e-13 * ws + d * 1e-18 + 1e-300,
            "S({l}) = {s} vs {ws} (D = {d})"
        );
        assert!(
            (f - wf).abs() <= 1e-13 * wf + 1e-18 + 1e-300,
            "F({l}) = {f} vs {wf} (D = {d})"
        );
    }

    /// The direct sums. (1 - q)^l as exp(l ln(1 - q)) with ln_1p: rounding 1 - q first
    /// would cost l * 1e-16 of relative accuracy.
    fn direct(q: &[f64], l: u64) -> (f64, f64) {
        let pow = |x: f64| {
            if l == 0 {
                1.0
            } else {
                (l as f64 * (-x).ln_1p()).exp()
            }
        };
        let s = q.iter().map(|&x| pow(x)).sum();
        let f = q.iter().map(|&x| x * pow(x)).sum();
        (s, f)
    }

    #[test]
    fn binned_sums_match_the_direct_sums() {
        let mut qs = vec![
            rbf_data::workload::zipf(2000, 1.0),
            rbf_data::workload::zipf(500, 2.0),
            rbf_data::workload::zipf(300, 0.0),
            rbf_data::workload::zipf(5000, 0.6),
        ];
        // Zeros, a certain message and repeated values.
        qs.push(vec![0.0, 0.25, 0.25, 0.0, 0.5]);
        qs.push(vec![1.0, 0.0, 0.0]);
        for q in &qs {
            let mut p = PowerSums::new(q);
            let d = q.len() as f64;
            let mut ls: Vec<u64> = (0..200).collect();
            ls.extend([
                255,
                256,
                257,
                1000,
                4095,
                4096,
                12_345,
                100_000,
                1 << 20,
                3 << 22,
            ]);
            for &l in &ls {
                assert_agrees(p.at(l), direct(q, l), l, d);
            }
        }
    }

    /// [`direct`] with compensated (Neumaier) sums: at D = 10^5 a plain running sum is
    /// itself off by 1e-12 relative, more than the tolerance checked.
    fn direct_compensated(q: &[f64], l: u64) -> (f64, f64) {
        let add = |(sum, c): (f64, f64), x: f64| {
            let t = sum + x;
            let c = if sum.abs() >= x.abs() {
                c + ((sum - t) + x)
            } else {
                c + ((x - t) + sum)
            };
            (t, c)
        };
        let pow = |x: f64| (l as f64 * (-x).ln_1p()).exp();
        let s = q.iter().fold((0.0, 0.0), |acc, &x| add(acc, pow(x)));
        let f = q.iter().fold((0.0, 0.0), |acc, &x| add(acc, x * pow(x)));
        (s.0 + s.1, f.0 + f.1)
    }

    #[test]
    fn grouped_tails_match_the_direct_sums() {
        // Q large enough that its tail gathers into groups (thousands of ranks within
        // 2^-24 of each other), a flat Q (one group) and a Q in increasing order.
        let mut rising = rbf_data::workload::zipf(30_000, 1.1);
        rising.reverse();
        let qs = [
            rbf_data::workload::zipf(200_000, 0.9),
            rbf_data::workload::zipf(100_000, 0.4),
            rbf_data::workload::zipf(60_000, 0.0),
            rising,
        ];
        for q in &qs {
            let mut p = PowerSums::new(q);
            let d = q.len() as f64;
            for l in [
                1,
                2,
                3,
                17,
                64,
                255,
                1000,
                6_000,
                50_000,
                400_000,
                1 << 23,
                1 << 26,
            ] {
                assert_agrees(p.at(l), direct_compensated(q, l), l, d);
            }
            let grouped: usize = p
                .rates
                .groups
                .get()
                .map_or(0, |g| g.iter().map(|g| g.end - g.start).sum());
            assert!(grouped as f64 > d / 2.0, "D = {d}: {grouped} ranks grouped");
        }
    }

    #[test]
    fn evaluation_order_does_not_change_values() {
        let q = rbf_data::workload::zipf(1000, 1.0);
        let mut a = PowerSums::new(&q);
        let mut b = PowerSums::new(&q);
        let ls: Vec<u64> = (0..3000).step_by(7).collect();
        let fwd: Vec<_> = ls.iter().map(|&l| a.at(l)).collect();
        let back: Vec<_> = ls.iter().rev().map(|&l| b.at(l)).collect();
        assert!(fwd.iter().eq(back.iter().rev()));
    }
}
