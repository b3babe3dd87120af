//! `rbf ingest`: not implemented yet (being written on another branch).

use rbf::{Error, Result};

#[derive(clap::Args, Debug)]
pub struct IngestArgs {}

pub fn run(_: IngestArgs) -> Result<()> {
    Err(Error::invalid("`rbf ingest` is not implemented yet"))
}
