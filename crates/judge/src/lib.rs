//! Observed next to predicted: the judge, and everything that shows its records.
//!
//! * `compare`: the judge: models next to observations, one record per bound.
//! * `size`: the smallest filter for FP and FN targets, confirmed by replay.
//! * `report`: text tables and judged records in words, the same in every command.
//! * `experiment`: config-driven grids, observed next to predicted, tables and plots.

pub mod compare;
pub mod experiment;
pub mod report;
pub mod size;
