//! The `rbf` command line: a thin layer over the library. The flags are the library's
//! ([`rbf::args`]: every command's options and the shared flag groups, declared once,
//! also read by the Python package); this parses the process's arguments with them
//! and runs the command. The benchmarks and the coverage study are another binary,
//! `rbf-bench` (src/bench), so that this one carries only what a user runs.

use rbf::args::io::Io;
use rbf_foundations::error::Result;

/// The command line: the library's commands.
pub type Cli = rbf::args::Cli;

/// Parses the command line ([`rbf::args::try_parse`]). Usage errors print their
/// message and exit with status 2.
pub fn parse() -> Cli {
    rbf::args::try_parse(std::env::args_os()).unwrap_or_else(|e| rbf::args::usage::exit_with(e))
}

pub fn run(cli: Cli, io: &mut Io) -> Result<()> {
    rbf::args::run(cli, io)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every flag and argument of every command says what it is in `--help`.
    #[test]
    fn every_flag_has_help() {
        let missing = rbf::args::usage::undocumented(&super::Cli::command());
        assert!(missing.is_empty(), "flags without help: {missing:?}");
    }
}
