//! `rbf bench ingest`: not implemented yet (being written on another branch).

use rbf::{Error, Result};

#[derive(clap::Args, Debug)]
pub struct IngestBench {}

pub fn run(_: IngestBench) -> Result<()> {
    Err(Error::invalid("`rbf bench ingest` is not implemented yet"))
}
