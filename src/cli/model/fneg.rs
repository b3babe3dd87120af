//! `rbf model fn`: not implemented yet (being written on another branch).

use rbf::{Error, Result};

#[derive(clap::Args, Debug)]
pub struct FnArgs {}

pub fn run(_: FnArgs) -> Result<()> {
    Err(Error::invalid("`rbf model fn` is not implemented yet"))
}
