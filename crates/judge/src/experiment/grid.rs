//! The grid: the cross product of the config's axes, in one fixed order, so that a
//! point's index means the same thing in every run and every shard.

use serde::{Deserialize, Serialize};

use super::config::{ExperimentConfig, GridConfig};
use rbf_data::filter::{FilterConfig, Hashing};
use rbf_foundations::error::{Error, Problem, Result};

/// How a point's recycle threshold is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SigmaRule {
    Sigma(u64),
    /// A fraction of the bits per array.
    Fraction(f64),
    /// The largest sigma whose FP-model average FP meets the target.
    TargetFp(f64),
    MaxInserts(u64),
}

/// One filter configuration on one source (all seeds).
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub index: usize,
    /// Index into the experiment's sources (traces first, then synthetic).
    pub source: usize,
    pub memory: u64,
    pub hashes: u32,
    pub rule: SigmaRule,
    pub phases: u8,
    pub hashing: Hashing,
    pub retaining: bool,
    pub copy_over: bool,
    pub independent_halves: bool,
}

impl Point {
    /// The filter with the rule applied where no model is needed (`TargetFp` is
    /// resolved by the runner, which has the FP model at hand).
    pub fn filter(&self, sigma: Option<u64>, seed: u64) -> FilterConfig {
        let mut f = FilterConfig::sigma_bounded(self.memory, self.hashes, 0);
        f.phases = self.phases;
        f.hashing = self.hashing;
        f.retaining = self.retaining;
        f.copy_over = self.copy_over;
        f.independent_halves = self.independent_halves;
        f.seed = seed;
        match self.rule {
            SigmaRule::MaxInserts(n) => {
                f.sigma = None;
                f.max_inserts = Some(n);
            }
            SigmaRule::Sigma(s) => f.sigma = Some(s),
            SigmaRule::Fraction(x) => {
                f.sigma = Some((x * f.half_memory() as f64).round() as u64);
            }
            SigmaRule::TargetFp(_) => f.sigma = sigma,
        }
        f
    }
}

fn rules(g: &GridConfig) -> Vec<SigmaRule> {
    let mut r: Vec<SigmaRule> = g.sigma.iter().map(|&s| SigmaRule::Sigma(s)).collect();
    r.extend(g.sigma_fraction.iter().map(|&x| SigmaRule::Fraction(x)));
    r.extend(g.target_fp.iter().map(|&x| SigmaRule::TargetFp(x)));
    r.extend(g.max_inserts.iter().map(|&n| SigmaRule::MaxInserts(n)));
    r
}

/// Every point of the experiment, sources outermost, in config order. Copy-over and
/// independent halves only vary for two-phase filters (a one-phase filter has no
/// halves), so one-phase points are not repeated over them.
pub fn expand(config: &ExperimentConfig) -> Vec<Point> {
    let g = &config.grid;
    // A models-only config has one pseudo-source (see `Source::all`).
    let sources = (config.traces.len() + config.synthetic.len()).max(1);
    let mut out = Vec::new();
    for source in 0..sources {
        // Memory in bits, or bits per message of this (synthetic) source's D.
        let memories: Vec<u64> = if g.bits_per_distinct.is_empty() {
            g.memory.clone()
        } else {
            let d = source
                .checked_sub(config.traces.len())
                .and_then(|i| config.synthetic.get(i))
                .map_or(1, |s| s.distinct);
            g.bits_per_distinct
                .iter()
                .map(|x| (x * d as f64).round().max(1.0) as u64)
                .collect()
        };
        for &memory in &memories {
            for &hashes in &g.hashes {
                for rule in rules(g) {
                    for &phases in &g.phases {
                        for &hashing in &g.hashing {
                            for &retaining in &g.retaining {
                                let halves: Vec<(bool, bool)> = if phases == 2 {
                                    g.copy_over
                                        .iter()
                                        .flat_map(|&c| {
                                            g.independent_halves.iter().map(move |&i| (c, i))
                                        })
                                        .collect()
                                } else {
                                    vec![(true, false)]
                                };
                                for (copy_over, independent_halves) in halves {
                                    out.push(Point {
                                        index: out.len(),
                                        source,
                                        memory,
                                        hashes,
                                        rule,
                                        phases,
                                        hashing,
                                        retaining,
                                        copy_over,
                                        independent_halves,
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

/// Points of the grid, counted without building it; `None` when the count does not
/// fit in a `usize` (a config with absurdly long axes).
pub fn count(config: &ExperimentConfig) -> Option<usize> {
    let g = &config.grid;
    let sources = (config.traces.len() + config.synthetic.len()).max(1);
    let memories = g.memory.len().max(g.bits_per_distinct.len());
    let halves = g.copy_over.len().checked_mul(g.independent_halves.len())?;
    let variants = g.phases.iter().try_fold(0usize, |n, &p| {
        n.checked_add(if p == 2 { halves } else { 1 })
    })?;
    [
        memories,
        g.hashes.len(),
        rules(g).len(),
        variants,
        g.hashing.len(),
        g.retaining.len(),
    ]
    .iter()
    .try_fold(sources, |n, &x| n.checked_mul(x))
}

/// A deterministic slice of the grid: shard `index` of `count` (0-based, as in a
/// Kubernetes indexed Job; a Slurm array 1..=N passes `$((SLURM_ARRAY_TASK_ID-1))`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// Parses `I/N`.
    pub fn parse(s: &str) -> Result<Shard> {
        let bad = || {
            Error::setting(
                "shard",
                Problem::range("expected I/N with 0 <= I < N (e.g. 0/4)", format!("`{s}`")),
            )
        };
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// Round-robin, so that each shard gets a mix of cheap and expensive points
    /// (cost grows along the memory axis).
    pub fn contains(&self, point: &Point) -> bool {
        point.index % self.count == self.index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_agrees_with_the_expansion() {
        let text = r#"
name = "c"
[[synthetic]]
distinct = [100, 200]
zipf = 1.0
p_repeat = 0.9
arrivals = 1000
[grid]
memory = [1000, 2000, 4000]
hashes = [2, 3]
sigma_fraction = [0.3, 0.5]
phases = [1, 2]
copy_over = [true, false]
independent_halves = [false, true]
retaining = [true, false]
"#;
        let c = ExperimentConfig::parse(text, std::path::Path::new("c.toml")).unwrap();
        assert_eq!(count(&c), Some(expand(&c).len()));
        assert_eq!(expand(&c).len(), 2 * 3 * 2 * 2 * (1 + 4) * 2);
    }

    #[test]
    fn shard_parsing() {
        assert_eq!(Shard::parse("1/4").ok(), Some(Shard { index: 1, count: 4 }));
        assert!(Shard::parse("4/4").is_err());
        assert!(Shard::parse("x").is_err());
        assert!(Shard::parse("0/0").is_err());
    }
}
