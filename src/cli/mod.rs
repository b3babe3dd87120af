//! The `rbf` command line: a thin layer over the library. The flags are the library's
//! ([`rbf::args`]: every command's options and the shared flag groups, declared once,
//! also read by the Python package); this parses the process's arguments with them,
//! adds the built-in benchmarks (`bench`) and runs the command.

mod bench;
mod numbers;

use clap::Subcommand;

use rbf::args::io::Io;
use rbf::Result;

/// The command line: the library's commands and `bench`.
pub type Cli = rbf::args::Cli<Command>;

#[derive(Subcommand, Debug)]
pub enum Command {
    #[command(flatten)]
    Library(rbf::args::Command),
    /// Run a built-in benchmark and print its measurements.
    Bench(bench::BenchArgs),
}

/// Parses the command line ([`rbf::args::try_parse`]). Usage errors print their
/// message and exit with status 2.
pub fn parse() -> Cli {
    rbf::args::try_parse(std::env::args_os()).unwrap_or_else(|e| numbers::exit_with(e))
}

pub fn run(cli: Cli, io: &mut Io) -> Result<()> {
    rbf::progress::set_quiet(cli.quiet);
    match cli.command {
        Command::Library(c) => c.run(io),
        Command::Bench(a) => bench::run(a),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every flag and argument of every command says what it is in `--help`.
    #[test]
    fn every_flag_has_help() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if id != "help" && id != "version" && arg.get_help().is_none() {
                    missing.push(format!("{path} --{id}"));
                }
            }
            for sub in cmd.get_subcommands() {
                if sub.get_about().is_none() {
                    missing.push(format!("{path} {} (no about)", sub.get_name()));
                }
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(&super::Cli::command(), "rbf", &mut missing);
        assert!(missing.is_empty(), "flags without help: {missing:?}");
    }

    /// The binary's commands are the library's (those the Python package runs), with the
    /// same flags, defaults and help, and then `bench`.
    #[test]
    fn the_binary_runs_the_library_commands_then_bench() {
        let mut lib = rbf::args::Cli::<rbf::args::Command>::command();
        let mut bin = super::Cli::command();
        lib.build();
        bin.build();
        let names = |c: &clap::Command| -> Vec<String> {
            c.get_subcommands().map(|s| s.get_name().into()).collect()
        };
        let mut want = names(&lib);
        want.insert(want.len() - 1, "bench".into()); // before clap's own `help`
        assert_eq!(names(&bin), want);
        // clap's `help` lists the commands, so the binary's names `bench` too.
        for sub in lib.get_subcommands_mut().filter(|s| s.get_name() != "help") {
            let name = sub.get_name().to_string();
            let theirs = bin.find_subcommand_mut(&name).map(|b| b.render_long_help());
            let ours = sub.render_long_help();
            assert_eq!(
                theirs.map(|h| h.to_string()),
                Some(ours.to_string()),
                "{name}"
            );
        }
    }
}
