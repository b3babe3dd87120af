//! Filter settings, shared by the CLI flags and TOML experiment configs.

use serde::{Deserialize, Serialize};

use rbf_foundations::error::{Error, Problem, Result};

/// How a message's k bit positions are drawn (FP paper §II-A1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Hashing {
    /// k independent positions; two may coincide (sampling with replacement).
    #[default]
    Colliding,
    /// k distinct positions (sampling without replacement); "non-colliding".
    #[serde(alias = "non-colliding")]
    Distinct,
}

impl Hashing {
    pub fn name(self) -> &'static str {
        match self {
            Hashing::Colliding => "colliding",
            Hashing::Distinct => "distinct",
        }
    }
}

/// Whether a filter's hash positions stay fixed or are drawn anew at every recycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Positions {
    /// Every message keeps its positions for the filter's life: a deployed filter.
    #[default]
    Fixed,
    /// An array that is cleared draws new positions for its next cycle (a new salt
    /// per cycle), so that cycles are independent draws of the positions: the process
    /// the models describe, which average over hash positions (FN paper §5; FP paper
    /// §III). A long replay of it estimates the hash-averaged rates directly
    /// (docs/coverage/README.md).
    PerCycle,
}

impl Positions {
    pub fn is_fixed(&self) -> bool {
        *self == Positions::Fixed
    }

    pub fn name(self) -> &'static str {
        match self {
            Positions::Fixed => "fixed",
            Positions::PerCycle => "per-cycle",
        }
    }
}

/// When the filter recycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// sigma-bounded: recycle when more than `sigma` bits are set after an insertion.
    Sigma(u64),
    /// N-bounded: recycle when more than N bit-setting insertions have been made in the
    /// cycle, i.e. the filter holds at most N messages that set bits. The check is the
    /// same "threshold exceeded after an insertion" rule as for sigma, so retaining and
    /// non-retaining mean the same thing for both triggers.
    MaxInserts(u64),
}

/// A recycling Bloom filter's configuration.
///
/// In TOML:
/// ```toml
/// memory = 1048576      # M, bits in total (a two-phase filter has two halves of M/2)
/// hashes = 4            # k
/// sigma = 524288        # or: max_inserts = 100000 (exactly one of the two)
/// phases = 1            # 1 or 2
/// hashing = "colliding" # or "distinct"
/// retaining = true
/// copy_over = true      # two-phase only
/// independent_halves = false
/// seed = 0
/// positions = "fixed"  # or "per-cycle"
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilterConfig {
    /// M: total memory in bits.
    pub memory: u64,
    /// k: hash positions per message.
    pub hashes: u32,
    /// sigma: recycle when more than sigma bits are set (per half for two-phase).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sigma: Option<u64>,
    /// N: recycle after more than N bit-setting insertions (per half for two-phase).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_inserts: Option<u64>,
    /// 1 (one filter of M bits) or 2 (active and frozen halves of M/2 bits).
    #[serde(default = "one")]
    pub phases: u8,
    #[serde(default)]
    pub hashing: Hashing,
    /// Retaining: the message whose insertion triggered a recycle is inserted into the
    /// emptied filter as the first message of the new cycle (FP paper §IV-B).
    #[serde(default = "yes")]
    pub retaining: bool,
    /// Two-phase copy-over: a message found only in the frozen half is also inserted
    /// into the active half (FN paper §3.2).
    #[serde(default = "yes")]
    pub copy_over: bool,
    /// Two-phase: the halves use independent hash positions (FN paper appendix G.1)
    /// instead of the same positions in both halves.
    #[serde(default)]
    pub independent_halves: bool,
    /// Seed of the bit-position hashing.
    #[serde(default)]
    pub seed: u64,
    /// Fixed positions (a deployed filter) or new positions at every recycle; absent:
    /// the command's default ([`FilterConfig::positions_or`]): fixed for a replay of
    /// the filter, per-cycle where observed rates are judged against the models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub positions: Option<Positions>,
}

fn one() -> u8 {
    1
}
fn yes() -> bool {
    true
}

/// Largest M accepted (bits): 128 GiB of filter, beyond any trace this tool replays.
pub const MAX_MEMORY: u64 = 1 << 40;

/// Largest k accepted; positions live in a fixed stack buffer of this size.
pub const MAX_HASHES: u32 = 64;

impl FilterConfig {
    /// A one-phase, sigma-bounded, colliding, retaining filter.
    pub fn sigma_bounded(memory: u64, hashes: u32, sigma: u64) -> Self {
        FilterConfig {
            memory,
            hashes,
            sigma: Some(sigma),
            max_inserts: None,
            phases: 1,
            hashing: Hashing::Colliding,
            retaining: true,
            copy_over: true,
            independent_halves: false,
            seed: 0,
            positions: None,
        }
    }

    /// The positions asked for, else `default`.
    pub fn positions_or(&self, default: Positions) -> Positions {
        self.positions.unwrap_or(default)
    }

    /// Bits in one filter array: M for one phase, M/2 for each half of two.
    pub fn half_memory(&self) -> u64 {
        if self.phases == 2 {
            self.memory / 2
        } else {
            self.memory
        }
    }

    pub fn trigger(&self) -> Result<Trigger> {
        match (self.sigma, self.max_inserts) {
            (Some(s), None) => Ok(Trigger::Sigma(s)),
            (None, Some(n)) => Ok(Trigger::MaxInserts(n)),
            (Some(_), Some(_)) => Err(Error::setting(
                "sigma",
                Problem::Conflict("give either sigma or max_inserts, not both".into()),
            )),
            (None, None) => Err(Error::setting(
                "sigma",
                Problem::Missing("a recycle trigger is required: sigma (set bits) or max_inserts (bit-setting insertions)"),
            )),
        }
    }

    /// Checks every field; errors name the key and the allowed values. The checks of
    /// single values are also public ([`FilterConfig::check_memory`], ...), so that an
    /// experiment grid refuses a value exactly as the command line does.
    pub fn validate(&self) -> Result<()> {
        self.validate_shape()?;
        let half = self.half_memory();
        match self.trigger()? {
            Trigger::Sigma(s) if s >= half => {
                return Err(Error::setting(
                    "sigma",
                    // "; found": the value ends a sentence that names another number.
                    Problem::rule(format!(
                        "must be below the bits per filter array ({half}), or the filter never recycles; found {s}"
                    )),
                ));
            }
            Trigger::MaxInserts(n) => FilterConfig::check_max_inserts(n)?,
            _ => {}
        }
        Ok(())
    }

    /// Checks everything but the recycle trigger (memory, k, phases, hashing): what a
    /// filter whose sigma is yet to be chosen must already satisfy
    /// (`rbf_predicted::model::false_positive::sigma_for_target`).
    pub fn validate_shape(&self) -> Result<()> {
        FilterConfig::check_phases(self.phases)?;
        FilterConfig::check_memory(self.memory)?;
        if self.phases == 2 && (self.memory < 2 || !self.memory.is_multiple_of(2)) {
            return Err(Error::setting(
                "memory",
                Problem::range(
                    "a two-phase filter splits memory into two equal halves: it must be even",
                    self.memory,
                ),
            ));
        }
        if self.phases == 2
            && !self.independent_halves
            && self.positions == Some(Positions::PerCycle)
        {
            // Each half draws its positions when it is cleared, so the halves never
            // share them: the filter would silently become one with independent halves.
            return Err(Error::setting(
                "positions",
                Problem::Conflict(
                    "per-cycle positions give each half its own positions when it is cleared, so \
                     the halves cannot share them: use independent halves (independent_halves = \
                     true, --independent-halves) or positions = \"fixed\""
                        .into(),
                ),
            ));
        }
        let half = self.half_memory();
        FilterConfig::check_hashes(self.hashes)?;
        if self.hashing == Hashing::Distinct && u64::from(self.hashes) > half {
            return Err(Error::setting(
                "hashes",
                Problem::range(
                    format!("distinct hashing needs k <= {half} (bits per filter array)"),
                    self.hashes,
                ),
            ));
        }
        Ok(())
    }

    /// M: 1 to 2^40 bits.
    pub fn check_memory(memory: u64) -> Result<()> {
        if memory == 0 || memory > MAX_MEMORY {
            return Err(Error::setting(
                "memory",
                Problem::range("must be between 1 and 2^40 bits", memory),
            ));
        }
        Ok(())
    }

    /// k: 1 to [`MAX_HASHES`].
    pub fn check_hashes(hashes: u32) -> Result<()> {
        if hashes == 0 || hashes > MAX_HASHES {
            return Err(Error::setting(
                "hashes",
                Problem::range(format!("allowed range is 1..={MAX_HASHES}"), hashes),
            ));
        }
        Ok(())
    }

    /// 1 or 2 phases.
    pub fn check_phases(phases: u8) -> Result<()> {
        if phases != 1 && phases != 2 {
            return Err(Error::setting(
                "phases",
                Problem::range("allowed values are 1 and 2", phases),
            ));
        }
        Ok(())
    }

    /// N: at least 1 insertion.
    pub fn check_max_inserts(n: u64) -> Result<()> {
        if n == 0 {
            return Err(Error::setting(
                "max_inserts",
                Problem::range("must be at least 1", n),
            ));
        }
        Ok(())
    }

    /// A short human-readable description, e.g. "1-phase M=1024 k=4 sigma=512 colliding retaining".
    pub fn describe(&self) -> String {
        let trigger = match self.trigger() {
            Ok(Trigger::Sigma(s)) => format!("sigma={s}"),
            Ok(Trigger::MaxInserts(n)) => format!("N={n}"),
            Err(_) => "no-trigger".into(),
        };
        let mut s = format!(
            "{}-phase M={} k={} {} {} {}",
            self.phases,
            self.memory,
            self.hashes,
            trigger,
            self.hashing.name(),
            if self.retaining {
                "retaining"
            } else {
                "non-retaining"
            }
        );
        if self.phases == 2 {
            s.push_str(if self.copy_over {
                " copy-over"
            } else {
                " no-copy-over"
            });
            if self.independent_halves {
                s.push_str(" independent-halves");
            }
        }
        if self.positions == Some(Positions::PerCycle) {
            s.push_str(" per-cycle-positions");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_round_trip_and_defaults() {
        let c: FilterConfig = toml::from_str("memory = 1000\nhashes = 3\nsigma = 400\n").unwrap();
        assert_eq!(c, FilterConfig::sigma_bounded(1000, 3, 400));
        c.validate().unwrap();
        let text = toml::to_string(&c).unwrap();
        assert_eq!(toml::from_str::<FilterConfig>(&text).unwrap(), c);
        let d: FilterConfig = toml::from_str(
            "memory = 1000\nhashes = 3\nmax_inserts = 50\nphases = 2\nhashing = \"non-colliding\"\nretaining = false\n",
        )
        .unwrap();
        assert_eq!(d.hashing, Hashing::Distinct);
        assert_eq!(d.trigger().unwrap(), Trigger::MaxInserts(50));
        d.validate().unwrap();
    }

    #[test]
    fn bad_configs_name_the_key() {
        let e = toml::from_str::<FilterConfig>("memory = 10\nhashes = 3\nsigmaa = 4\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("sigmaa") && e.contains("expected one of"), "{e}");
        let e =
            toml::from_str::<FilterConfig>("memory = 10\nhashes = 3\nsigma = 4\nhashing = \"x\"\n")
                .unwrap_err()
                .to_string();
        assert!(e.contains("colliding") && e.contains("distinct"), "{e}");
        let mut c = FilterConfig::sigma_bounded(100, 3, 100);
        assert!(c.validate().unwrap_err().to_string().contains("`sigma`"));
        c.sigma = Some(10);
        c.phases = 3;
        assert!(c.validate().unwrap_err().to_string().contains("`phases`"));
        c.phases = 2;
        c.memory = 101;
        assert!(c.validate().unwrap_err().to_string().contains("`memory`"));
        c.memory = 100;
        c.max_inserts = Some(3);
        assert!(c.validate().unwrap_err().to_string().contains("not both"));
    }
}
