//! `rbf compare`: not implemented yet (being written on another branch).

use rbf::{Error, Result};

#[derive(clap::Args, Debug)]
pub struct CompareArgs {}

pub fn run(_: CompareArgs) -> Result<()> {
    Err(Error::invalid("`rbf compare` is not implemented yet"))
}
