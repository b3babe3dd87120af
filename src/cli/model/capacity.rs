//! `rbf model capacity`: not implemented yet (being written on another branch).

use rbf::{Error, Result};

#[derive(clap::Args, Debug)]
pub struct CapacityArgs {}

pub fn run(_: CapacityArgs) -> Result<()> {
    Err(Error::invalid(
        "`rbf model capacity` is not implemented yet",
    ))
}
