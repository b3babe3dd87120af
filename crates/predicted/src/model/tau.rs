//! Bit-count transitions of one insertion (FP paper §IV-C1, eqs. 4-14).
//!
//! tau_k(i, j) is the probability that inserting a message the filter has not recorded
//! takes an array of M bits from i set bits to j. The FP paper folds the recycle into
//! the table (transitions to state 0, or to states 1..k when retaining: eqs. 5, 9-10,
//! 12, 14). Here rows are kept *raw*: the distribution of j over i..=i+k with no
//! recycle applied, and each model applies its own recycle rule. The folded tables
//! follow exactly: tau(i, 0) (eq. 5) is the raw mass above sigma, and the retaining
//! rows (eqs. 10, 14) are that mass times the row of the empty filter.
//!
//! A row depends only on its own start state i (the recursion over hashes, eq. 4 for
//! colliding and eq. 11 for distinct hashes, never changes i), so one row costs O(k^2)
//! time and O(k) memory and rows can be produced on demand; [`TauTable`] stores rows
//! 0..=n when a model needs random access: (n+1)(k+1) doubles, O(sigma k).

use rbf_data::filter::Hashing;

/// Raw transition rows for an array of `m` bits and `k` hashes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transitions {
    pub m: u64,
    pub k: u32,
    pub hashing: Hashing,
}

impl Transitions {
    pub fn new(m: u64, k: u32, hashing: Hashing) -> Self {
        assert!(m >= 1 && k >= 1);
        assert!(hashing == Hashing::Colliding || u64::from(k) <= m);
        Transitions { m, k, hashing }
    }

    /// Writes row i into `out[0..=k]`: `out[d]` = P(i set bits -> i + d set bits).
    /// Entries with i + d > m are 0.
    ///
    /// Hash h either lands on a set bit (i + d set so far, minus, for distinct hashing,
    /// the h - 1 this message already chose: eq. 11) or on an unset one (eq. 4). The
    /// loops carry no guards: a factor can only be <= 0 where the probability it
    /// multiplies is exactly 0 (fewer new bits than distinct hashing allows, or more
    /// set bits than m), so the products stay exact zeros.
    pub fn row(&self, i: u64, out: &mut [f64]) {
        let k = self.k as usize;
        assert!(out.len() > k && i <= self.m);
        out[..=k].fill(0.0);
        out[0] = 1.0;
        let m = self.m as f64;
        let base = i as f64;
        for h in 1..=k {
            let (chosen, pool) = match self.hashing {
                Hashing::Colliding => (0.0, m),
                Hashing::Distinct => ((h - 1) as f64, m - (h - 1) as f64),
            };
            let inv = 1.0 / pool;
            // d ascending, carrying the previous hash's out[d - 1] in `prev`; the
            // factors move by one bit per d.
            let mut prev = 0.0;
            let mut stay = base - chosen;
            let mut grow = m - base + 1.0;
            for p in out[..=h].iter_mut() {
                let cur = *p;
                *p = (cur * stay.max(0.0) + prev * grow.max(0.0)) * inv;
                prev = cur;
                stay += 1.0;
                grow -= 1.0;
            }
        }
    }

    /// Probability that an unrecorded message finds all its bits set among i (FP paper
    /// eq. 17 as corrected in docs/MODEL.md): (i/M)^k for colliding hashes,
    /// C(i,k)/C(M,k) for distinct hashes. Equals row(i)[0].
    pub fn all_set(&self, i: u64) -> f64 {
        let m = self.m as f64;
        match self.hashing {
            Hashing::Colliding => (i as f64 / m).powi(self.k as i32),
            Hashing::Distinct => {
                let mut p = 1.0;
                for h in 0..u64::from(self.k) {
                    if i < h + 1 {
                        return 0.0;
                    }
                    p *= (i - h) as f64 / (m - h as f64);
                }
                p
            }
        }
    }
}

/// Raw rows 0..=n stored for random access.
#[derive(Clone, Debug)]
pub struct TauTable {
    pub transitions: Transitions,
    n: u64,
    stride: usize,
    rows: Vec<f64>,
}

impl TauTable {
    /// Rows for start states 0..=n (n <= m).
    pub fn new(transitions: Transitions, n: u64) -> Self {
        let n = n.min(transitions.m);
        let stride = transitions.k as usize + 1;
        let mut rows = vec![0.0; (n as usize + 1) * stride];
        for (i, row) in rows.chunks_exact_mut(stride).enumerate() {
            transitions.row(i as u64, row);
        }
        TauTable {
            transitions,
            n,
            stride,
            rows,
        }
    }

    /// Largest start state stored.
    pub fn n(&self) -> u64 {
        self.n
    }

    /// Row i: `row(i)[d]` = P(i -> i + d).
    #[inline]
    pub fn row(&self, i: u64) -> &[f64] {
        let s = i as usize * self.stride;
        &self.rows[s..s + self.stride]
    }

    /// tau(i, j) raw; 0 outside i..=i+k.
    #[inline]
    pub fn get(&self, i: u64, j: u64) -> f64 {
        if j < i || j - i > u64::from(self.transitions.k) {
            0.0
        } else {
            self.row(i)[(j - i) as usize]
        }
    }

    /// Probability that inserting at i ends above `sigma` (the recycle mass, FP eq. 5).
    pub fn above(&self, i: u64, sigma: u64) -> f64 {
        let r = self.row(i);
        r.iter()
            .enumerate()
            .filter(|(d, _)| i + *d as u64 > sigma)
            .map(|(_, p)| p)
            .sum()
    }
}

/// The paper's folded transition table for one of the four variants (FP paper eqs. 4-14):
/// states 0..=sigma (plus, when retaining with sigma < k, the states above sigma that the
/// retained insertion alone can reach), with each raw row's recycle mass (insertions
/// that end above sigma) sent to state 0 (non-retaining, eqs. 5, 12) or spread over the
/// empty filter's row (retaining: eq. 10 for colliding, eq. 14 for distinct hashes,
/// whose empty-filter row is all at k, eq. 13).
///
/// Our trigger is "more than sigma bits set after a bit-setting insertion", so an
/// insertion that sets no bit never recycles, even from a state above sigma.
/// Memory is the underlying [`TauTable`]: O(sigma k).
#[derive(Clone, Debug)]
pub struct FoldedTable {
    raw: TauTable,
    sigma: u64,
    retaining: bool,
    top: u64,
}

impl FoldedTable {
    pub fn new(transitions: Transitions, sigma: u64, retaining: bool) -> Self {
        let top = if retaining {
            sigma.max(u64::from(transitions.k)).min(transitions.m)
        } else {
            sigma.min(transitions.m)
        };
        FoldedTable {
            raw: TauTable::new(transitions, top),
            sigma,
            retaining,
            top,
        }
    }

    /// Largest state of the chain.
    pub fn top(&self) -> u64 {
        self.top
    }

    /// Probability that one insertion at state i recycles the filter.
    pub fn recycle(&self, i: u64) -> f64 {
        let r = self.raw.row(i);
        (1..r.len())
            .filter(|d| i + *d as u64 > self.sigma)
            .map(|d| r[d])
            .sum()
    }

    /// Folded tau(i, j) for 0 <= i, j <= top.
    pub fn get(&self, i: u64, j: u64) -> f64 {
        let stay_or_grow = if j == i || (j > i && j <= self.sigma) {
            self.raw.get(i, j)
        } else {
            0.0
        };
        let restart = if self.retaining {
            self.raw.get(0, j)
        } else if j == 0 {
            1.0
        } else {
            0.0
        };
        stay_or_grow + self.recycle(i) * restart
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute(m: u64, k: u32, i: u64, hashing: Hashing) -> Vec<f64> {
        // Exact enumeration: bits 0..i set; enumerate all hash outcomes.
        let mut out = vec![0.0; k as usize + 1];
        let mut total = 0.0;
        let kk = k as usize;
        let mut idx = vec![0u64; kk];
        loop {
            let ok = hashing == Hashing::Colliding || {
                let mut s = idx.clone();
                s.sort_unstable();
                s.windows(2).all(|w| w[0] != w[1])
            };
            if ok {
                let mut set: std::collections::HashSet<u64> = (0..i).collect();
                for &b in &idx {
                    set.insert(b);
                }
                out[set.len() - i as usize] += 1.0;
                total += 1.0;
            }
            let mut p = 0;
            loop {
                if p == kk {
                    return out.into_iter().map(|x| x / total).collect();
                }
                idx[p] += 1;
                if idx[p] < m {
                    break;
                }
                idx[p] = 0;
                p += 1;
            }
        }
    }

    #[test]
    fn rows_match_enumeration() {
        for hashing in [Hashing::Colliding, Hashing::Distinct] {
            for k in 1..=3u32 {
                for i in 0..=6u64 {
                    let t = Transitions::new(6, k, hashing);
                    let mut row = vec![0.0; k as usize + 1];
                    t.row(i, &mut row);
                    let b = brute(6, k, i, hashing);
                    for d in 0..=k as usize {
                        assert!(
                            (row[d] - b[d]).abs() < 1e-12,
                            "{hashing:?} k={k} i={i} d={d}: {row:?} vs {b:?}"
                        );
                    }
                    assert!((row[0] - t.all_set(i)).abs() < 1e-12);
                }
            }
        }
    }

    #[test]
    fn rows_sum_to_one_at_scale() {
        for hashing in [Hashing::Colliding, Hashing::Distinct] {
            let t = Transitions::new(1 << 26, 32, hashing);
            let mut row = vec![0.0; 33];
            for i in [0u64, 1, 1000, 1 << 25, (1 << 26) - 32, (1 << 26) - 1] {
                t.row(i, &mut row);
                let s: f64 = row.iter().sum();
                assert!(
                    (s - 1.0).abs() < 1e-9 && row.iter().all(|p| *p >= 0.0 && p.is_finite()),
                    "{hashing:?} i={i} sum={s}"
                );
            }
        }
    }
}
