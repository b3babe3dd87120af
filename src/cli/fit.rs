//! `rbf fit`: not implemented yet (being written on another branch).

use rbf::{Error, Result};

#[derive(clap::Args, Debug)]
pub struct FitArgs {}

pub fn run(_: FitArgs) -> Result<()> {
    Err(Error::invalid("`rbf fit` is not implemented yet"))
}
