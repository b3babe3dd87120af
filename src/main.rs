use std::process::ExitCode;

mod cli;

fn main() -> ExitCode {
    // First: the signal mask it sets must be inherited by every thread started later.
    rbf::signals::install();
    quiet_broken_pipe();
    let args = cli::parse();
    let mut stdout = std::io::stdout();
    let result = cli::run(args, &mut rbf::args::io::Io::terminal(&mut stdout));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Not eprintln!: after SIGHUP the terminal may be gone, and a failed write
            // must not turn a clean stop into a panic.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "error: {e}");
            ExitCode::from(e.exit_status())
        }
    }
}

/// `rbf ... | head`: when the reader goes away, end quietly the way coreutils do
/// (killed by SIGPIPE, status 141 in the shell) instead of panicking in `println!`.
/// Files being written are temporary until committed, so nothing half-written stays
/// under an output's name.
fn quiet_broken_pipe() {
    #[cfg(target_os = "linux")]
    // SAFETY: restoring the default action of a signal before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
