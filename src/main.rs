use std::process::ExitCode;

mod cli;

fn main() -> ExitCode {
    // First: the signal mask it sets must be inherited by every thread started later.
    rbf::signals::install();
    rbf::signals::quiet_broken_pipe();
    let args = cli::parse();
    let mut stdout = std::io::stdout();
    let result = cli::run(args, &mut rbf::args::io::Io::terminal(&mut stdout));
    rbf::args::usage::exit_code(result)
}
