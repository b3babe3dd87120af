//! `rbf bench fp`: not implemented yet (being written on another branch).

use rbf::{Error, Result};

#[derive(clap::Args, Debug)]
pub struct FpBench {}

pub fn run(_: FpBench) -> Result<()> {
    Err(Error::invalid("`rbf bench fp` is not implemented yet"))
}
