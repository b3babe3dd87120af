//! `rbf model fp`: not implemented yet (being written on another branch).

use rbf::{Error, Result};

#[derive(clap::Args, Debug)]
pub struct FpArgs {}

pub fn run(_: FpArgs) -> Result<()> {
    Err(Error::invalid("`rbf model fp` is not implemented yet"))
}
