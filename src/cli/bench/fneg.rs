//! `rbf bench fn`: not implemented yet (being written on another branch).

use rbf::{Error, Result};

#[derive(clap::Args, Debug)]
pub struct FnBench {}

pub fn run(_: FnBench) -> Result<()> {
    Err(Error::invalid("`rbf bench fn` is not implemented yet"))
}
