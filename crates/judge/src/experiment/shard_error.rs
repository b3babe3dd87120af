//! Why `rbf merge` refuses a set of shard results: every refusal names the shards
//! and the point or count at fault, because a partial or mixed table would look
//! like the results of one run and is worse than none.

use rbf_foundations::error::Kind;

/// Shard results that cannot be merged into the results of one whole grid.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    /// Nothing to merge: a merge of no file would write an empty run.
    #[error("merge needs at least one results.json")]
    NoResults,

    /// Two shards come from different runs (name, measures, config or inputs):
    /// their rows do not measure the same thing. `differences` lists each as
    /// "what: this vs that".
    #[error(
        "cannot merge shards of different runs: {first} (`{first_name}`) and {label} (`{name}`) differ in {}",
        .differences.join("; ")
    )]
    DifferentRuns {
        first: String,
        first_name: String,
        label: String,
        name: String,
        differences: Vec<String>,
    },

    /// A row numbered beyond the grid the shards claim: the file was edited or
    /// comes from another grid.
    #[error("point {point} is outside the grid of {total} points")]
    OutsideGrid { point: usize, total: usize },

    /// Two shards hold the same point: which of the two rows is right cannot be told.
    #[error("point {point} appears in more than one shard")]
    InTwoShards { point: usize },

    /// The shards together do not cover the grid: a shard was left out.
    #[error("{missing} of {total} points are missing: merge the results of every shard")]
    MissingPoints { missing: usize, total: usize },

    /// A file whose shard numbers are not a shard (`I/N` with `0 <= I < N`).
    #[error("{label}: shard {index} of {count} is not a shard (expected I/N with 0 <= I < N)")]
    NotAShard {
        label: String,
        index: usize,
        count: usize,
    },

    /// A row that shard `index/count` does not compute: the file was edited or mixed.
    #[error("{label}: point {point} does not belong to shard {index}/{count}")]
    NotOfItsShard {
        label: String,
        point: usize,
        index: usize,
        count: usize,
    },

    /// A row holding a value no run computes (a rate outside [0, 1], a negative
    /// count, an interval not around its value); `why` names the column.
    #[error("{label}: point {point} (`{source_name}`): {why}")]
    RowOutOfRange {
        label: String,
        point: usize,
        source_name: String,
        why: String,
    },

    /// Two shards of different N: they split different grids, or one run was split
    /// twice in different ways.
    #[error(
        "{first} is shard {first_index}/{first_count} but {label} is shard {index}/{count}: the shards of one run share N"
    )]
    DifferentCounts {
        first: String,
        first_index: usize,
        first_count: usize,
        label: String,
        index: usize,
        count: usize,
    },

    /// The same shard given twice (`first` and `label`): its points would be counted
    /// twice.
    #[error("shard {index}/{count} is given twice: {first} and {label}")]
    GivenTwice {
        index: usize,
        count: usize,
        first: String,
        label: String,
    },

    /// The results' point count disagrees with the grid of the config they carry
    /// (`grid` is None when that grid is too large to count).
    #[error(
        "the results say {claimed} points, but their config's grid has {}",
        .grid.map_or_else(|| "too many".to_string(), |n| n.to_string())
    )]
    GridSize { claimed: usize, grid: Option<usize> },

    /// A row whose source and filter are not those the carried config's grid puts at
    /// its point: the rows were renumbered or come from another config.
    #[error(
        "point {point} says source `{source_name}`, M = {memory}, k = {hashes}, but the config's grid has source `{grid_source}`, M = {grid_memory}, k = {grid_hashes} there"
    )]
    NotTheGrid {
        point: usize,
        source_name: String,
        memory: u64,
        hashes: u32,
        grid_source: String,
        grid_memory: u64,
        grid_hashes: u32,
    },
}

rbf_foundations::layer_error!(ShardError => Kind::Request);

#[cfg(test)]
mod tests {
    use super::*;
    use rbf_foundations::error::{exit_status, Error};

    /// The messages are those `rbf merge` printed before they had a kind, and the
    /// kind comes back out of the workspace's error.
    #[test]
    fn refusals_read_as_before_and_come_back_typed() {
        let cases: [(ShardError, &str); 4] = [
            (
                ShardError::DifferentRuns {
                    first: "a.json".into(),
                    first_name: "e".into(),
                    label: "b.json".into(),
                    name: "f".into(),
                    differences: vec!["name: `e` vs `f`".into(), "seeds: [1] vs [2]".into()],
                },
                "cannot merge shards of different runs: a.json (`e`) and b.json (`f`) differ in name: `e` vs `f`; seeds: [1] vs [2]",
            ),
            (
                ShardError::GridSize {
                    claimed: 7,
                    grid: None,
                },
                "the results say 7 points, but their config's grid has too many",
            ),
            (
                ShardError::GivenTwice {
                    index: 1,
                    count: 4,
                    first: "a".into(),
                    label: "b".into(),
                },
                "shard 1/4 is given twice: a and b",
            ),
            (
                ShardError::NotTheGrid {
                    point: 3,
                    source_name: "s".into(),
                    memory: 1000,
                    hashes: 2,
                    grid_source: "t".into(),
                    grid_memory: 2000,
                    grid_hashes: 3,
                },
                "point 3 says source `s`, M = 1000, k = 2, but the config's grid has source `t`, M = 2000, k = 3 there",
            ),
        ];
        for (shard, text) in cases {
            let e = Error::from(shard);
            assert_eq!(e.to_string(), text);
            assert_eq!(e.exit_status(), exit_status::USAGE);
            assert!(e.layer::<ShardError>().is_some());
        }
    }
}
