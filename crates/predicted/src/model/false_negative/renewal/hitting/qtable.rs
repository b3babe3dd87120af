//! U from Q where no rank shifts (p_r = 1, or new messages entering at the last rank):
//! U_j = F(j - 1), F(n) = sum_i q_i (1 - kappa_i)^n (docs/RENEWAL-TOLERANCE.md, point 3),
//! tabulated by [`PowerSums`] on a grid of about 2 x 10^4 points up to the most arrivals
//! the exact engine follows, and bounded between them by F's convexity (each term is
//! convex in n): the chord between two grid points lies above F, and the tangent at the
//! cell's first point, whose slope is at least the chord's of the cell before, lies
//! below. Both err to second order in the cell's width, so a grid of relative width
//! 1e-3 brackets F to about 1e-6 of its value; the hitting-time engine then reads the
//! bounds as it reads a reuse profile's.

use crate::model::false_negative::powersums::PowerSums;

/// Relative width of the grid's cells (beyond its first [`DENSE`] points, one apart).
const RATIO: f64 = 1e-3;
const DENSE: u64 = 1024;
/// The power sums' error, relative (about 1e-13 measured, see `powersums`), and
/// absolute (ranks left out weigh below 1e-18 in all).
const SUMS_REL: f64 = 2e-12;
const SUMS_ABS: f64 = 1e-17;

/// F on a grid, with the exact engine's rounding margin.
pub struct Table {
    grid: Vec<u64>,
    f: Vec<f64>,
    /// The exact engine's relative rounding of U (its recursion over every arrival
    /// and rank), applied on top of the bounds of F.
    margin: f64,
}

impl Table {
    /// F at every grid point up to `last` (the kill chances `kill`, weights `q`), with
    /// the exact engine's relative rounding `margin`.
    pub fn new(kill: &[f64], q: &[f64], last: u64, margin: f64) -> Table {
        let mut sums = PowerSums::with_kills(kill, q);
        let mut grid = Vec::new();
        let mut g = 0u64;
        loop {
            grid.push(g);
            if g >= last {
                break;
            }
            let step = if g < DENSE {
                1
            } else {
                ((g as f64 * RATIO) as u64).max(1)
            };
            g = g.saturating_add(step);
        }
        let f = grid.iter().map(|&g| sums.at(g).1).collect();
        Table { grid, f, margin }
    }

    fn f_up(&self, k: usize) -> f64 {
        self.f[k] * (1.0 + SUMS_REL) + SUMS_ABS
    }

    fn f_low(&self, k: usize) -> f64 {
        (self.f[k] * (1.0 - SUMS_REL) - SUMS_ABS).max(0.0)
    }

    /// (upper, lower) bounds of the exact engine's U_{n+1}, with `cell` a guess of n's
    /// cell (updated; fast when the n asked grow slowly).
    pub fn bounds(&self, n: u64, cell: &mut usize) -> (f64, f64) {
        let last = self.grid.len() - 1;
        if n >= self.grid[last] {
            // Past the grid: F is non-increasing, and the exact engine stops before.
            *cell = last;
            let up = self.f_up(last) * (1.0 + self.margin);
            return (up, 0.0);
        }
        let mut k = (*cell).min(last - 1);
        if self.grid[k] > n || self.grid[(k + 8).min(last)] <= n {
            k = self.grid.partition_point(|&g| g <= n) - 1;
        } else {
            while self.grid[k + 1] <= n {
                k += 1;
            }
        }
        *cell = k;
        let (g0, g1) = (self.grid[k], self.grid[k + 1]);
        let x = (n - g0) as f64;
        let chord = self.f_up(k) + (self.f_up(k + 1) - self.f_up(k)) * x / (g1 - g0) as f64;
        let mut low = self.f_low(if x == 0.0 { k } else { k + 1 });
        if k > 0 {
            let slope = (self.f_low(k) - self.f_up(k - 1)) / (g0 - self.grid[k - 1]) as f64;
            low = low.max(self.f_low(k) + slope * x);
        }
        let up = chord.min(self.f_up(k)) * (1.0 + self.margin);
        (up, (low * (1.0 - self.margin)).max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bounds hold F's direct sums at every n up to 3 x 10^5 and are tight: their
    /// gap is second order in the cells' width h, within 4 h^2 max F'' over the two
    /// cells before n (F'' falls with n) plus the sums' margins.
    #[test]
    fn the_table_brackets_the_direct_sums() {
        let d = 2000;
        let h: f64 = (1..=d).map(|i| 1.0 / i as f64).sum();
        let q: Vec<f64> = (1..=d).map(|i| 1.0 / (i as f64 * h)).collect();
        let kill: Vec<f64> = q.iter().map(|&x| 0.9 * x).collect();
        let table = Table::new(&kill, &q, 400_000, 0.0);
        let mut cell = 0;
        for n in (0..300_000u64).step_by(37).chain([1, 2, 1023, 1024, 1025]) {
            let f: f64 = q
                .iter()
                .zip(&kill)
                .map(|(&qi, &ki)| qi * (1.0 - ki).powf(n as f64))
                .sum();
            let (up, low) = table.bounds(n, &mut cell);
            assert!(
                low <= f * (1.0 + 1e-12) && f <= up * (1.0 + 1e-12),
                "{n}: {low} {f} {up}"
            );
            let h = if n < DENSE {
                1.0
            } else {
                RATIO * n as f64 + 1.0
            };
            let before = (n as f64 - 2.0 * h).max(0.0);
            let curvature: f64 = q
                .iter()
                .zip(&kill)
                .map(|(&qi, &ki)| qi * (1.0 - ki).ln().powi(2) * (1.0 - ki).powf(before))
                .sum();
            let gap = 4.0 * h * h * curvature + 8.0 * SUMS_REL * f + 4.0 * SUMS_ABS;
            assert!(up - low <= gap, "{n}: {low} {f} {up}, gap {gap}");
        }
    }
}
