//! Filter flags shared by every command that builds a filter.

use std::path::PathBuf;

use clap::Args;

use rbf_data::filter::{FilterConfig, Hashing, Positions};
use rbf_foundations::error::{Error, Problem, Result};

#[derive(Args, Debug, Clone)]
pub struct FilterArgs {
    /// TOML file with filter settings (the keys of a `[filter]` table); flags override it.
    #[arg(long, value_name = "FILE")]
    pub filter_config: Option<PathBuf>,
    /// M: total memory in bits (two-phase: two halves of M/2).
    #[arg(long, short = 'm')]
    pub memory: Option<u64>,
    /// k: hash positions per message.
    #[arg(long, short = 'k')]
    pub hashes: Option<u32>,
    /// Recycle when more than SIGMA bits are set (per half for two-phase).
    #[arg(long, conflicts_with = "max_inserts")]
    pub sigma: Option<u64>,
    /// Recycle after more than N bit-setting insertions (per half for two-phase).
    #[arg(long, value_name = "N")]
    pub max_inserts: Option<u64>,
    /// 1 or 2 phases.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=2))]
    pub phases: Option<u8>,
    /// Bit positions: colliding (with replacement) or distinct (without).
    #[arg(long, value_enum)]
    pub hashing: Option<HashingArg>,
    /// Insert the message that triggered a recycle into the emptied filter (default).
    #[arg(long, conflicts_with = "non_retaining")]
    pub retaining: bool,
    /// Drop the message that triggered a recycle.
    #[arg(long)]
    pub non_retaining: bool,
    /// Two-phase: also insert into the active half a message found only in the frozen one (default).
    #[arg(long, conflicts_with = "no_copy_over")]
    pub copy_over: bool,
    /// Two-phase: leave the active half alone for messages found in the frozen one.
    #[arg(long)]
    pub no_copy_over: bool,
    /// Two-phase: the halves draw independent bit positions.
    #[arg(long)]
    pub independent_halves: bool,
    /// Seed of the bit-position hashing.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Hash positions: `fixed` for the filter's life (a deployed filter, the default),
    /// or `per-cycle`: drawn anew whenever an array is cleared, the process the models
    /// describe (averaged over hash positions), whose intervals cover the models'
    /// rates where a few popular messages make fixed filters' rates depend on their
    /// positions (docs/coverage/README.md).
    #[arg(long, value_enum)]
    pub positions: Option<PositionsArg>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum PositionsArg {
    Fixed,
    PerCycle,
}

impl From<PositionsArg> for Positions {
    fn from(p: PositionsArg) -> Positions {
        match p {
            PositionsArg::Fixed => Positions::Fixed,
            PositionsArg::PerCycle => Positions::PerCycle,
        }
    }
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum HashingArg {
    Colliding,
    Distinct,
}

impl From<HashingArg> for Hashing {
    fn from(h: HashingArg) -> Self {
        match h {
            HashingArg::Colliding => Hashing::Colliding,
            HashingArg::Distinct => Hashing::Distinct,
        }
    }
}

#[derive(serde::Deserialize)]
struct FilterFile {
    filter: FilterConfig,
}

impl FilterArgs {
    /// The filter, validated.
    pub fn config(&self) -> Result<FilterConfig> {
        let c = self.shape()?;
        c.validate()?;
        Ok(c)
    }

    /// The filter as given, not yet validated: without --sigma or --max-inserts it has
    /// no recycle trigger, for a command that chooses sigma itself (`--target-fp`).
    pub fn shape(&self) -> Result<FilterConfig> {
        let mut c = self.base()?;
        self.override_size(&mut c);
        self.override_variant(&mut c);
        if c.phases == 1 {
            let two_phase_flag = [
                (self.copy_over, "--copy-over"),
                (self.no_copy_over, "--no-copy-over"),
                (self.independent_halves, "--independent-halves"),
            ]
            .into_iter()
            .find(|(given, _)| *given);
            if let Some((_, flag)) = two_phase_flag {
                return Err(Error::setting(
                    "phases",
                    Problem::Conflict(
                        format!("{flag} applies to two-phase filters only (--phases 2)").into(),
                    ),
                ));
            }
        }
        Ok(c)
    }

    /// The filter of --filter-config, or one of --memory and --hashes with no trigger
    /// yet.
    fn base(&self) -> Result<FilterConfig> {
        match &self.filter_config {
            Some(path) => {
                let text = rbf_data::ingest::input::read_text(path)?;
                let f: FilterFile = toml::from_str(&text).map_err(|e| {
                    Error::setting(
                        "filter",
                        Problem::Unreadable(format!(
                            "{}: {}",
                            path.display(),
                            rbf_foundations::error::clip_lines(&e.to_string())
                        )),
                    )
                })?;
                Ok(f.filter)
            }
            None => {
                let memory = self.memory.ok_or_else(|| {
                    Error::setting(
                        "memory",
                        Problem::Missing("--memory M is required (or --filter-config)"),
                    )
                })?;
                let hashes = self.hashes.ok_or_else(|| {
                    Error::setting(
                        "hashes",
                        Problem::Missing("--hashes K is required (or --filter-config)"),
                    )
                })?;
                let mut c = FilterConfig::sigma_bounded(memory, hashes, 0);
                c.sigma = None;
                Ok(c)
            }
        }
    }

    /// The flags that override a filter file's memory, k, trigger and phases (the last
    /// trigger given replaces the file's).
    fn override_size(&self, c: &mut FilterConfig) {
        if let Some(m) = self.memory {
            c.memory = m;
        }
        if let Some(k) = self.hashes {
            c.hashes = k;
        }
        if let Some(s) = self.sigma {
            c.sigma = Some(s);
            c.max_inserts = None;
        }
        if let Some(n) = self.max_inserts {
            c.max_inserts = Some(n);
            c.sigma = None;
        }
        if let Some(p) = self.phases {
            c.phases = p;
        }
    }

    /// The flags that override a filter file's hashing, retaining, two-phase options,
    /// seed and positions.
    fn override_variant(&self, c: &mut FilterConfig) {
        if let Some(h) = self.hashing {
            c.hashing = h.into();
        }
        if self.retaining {
            c.retaining = true;
        }
        if self.non_retaining {
            c.retaining = false;
        }
        if self.copy_over {
            c.copy_over = true;
        }
        if self.no_copy_over {
            c.copy_over = false;
        }
        if self.independent_halves {
            c.independent_halves = true;
        }
        if let Some(s) = self.seed {
            c.seed = s;
        }
        if let Some(p) = self.positions {
            c.positions = Some(p.into());
        }
    }
}
