//! How a program built on these types ends, shared by the `rbf` and `rbf-bench`
//! binaries: a usage error in one line (the parsers themselves are [`super::numbers`]'),
//! and a command's error as `error: ...` with the exit status of its kind.

use std::process::ExitCode;

/// Ends the process on a command-line error: a bad value is one line naming the flag
/// and what is allowed (a very long value is not echoed in full); help, version and
/// other usage errors are clap's own.
pub fn exit_with(e: clap::Error) -> ! {
    if let Some(line) = super::numbers::bad_value(&e) {
        rbf_foundations::errln!("error: {line}");
        std::process::exit(2);
    }
    use clap::error::ErrorKind;
    use std::io::IsTerminal;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion)
        && !std::io::stdout().is_terminal()
    {
        // clap ignores a failed write: a full stdout must be an error, not silence (a
        // terminal keeps clap's own, styled, output).
        if let Err(w) = rbf_foundations::console::out(&e.render().to_string()) {
            rbf_foundations::errln!("error: {w}");
            std::process::exit(i32::from(w.exit_status()));
        }
        std::process::exit(0);
    }
    e.exit()
}

/// The process's exit status for a command's result; an error is printed first.
pub fn exit_code(result: rbf_foundations::error::Result<()>) -> ExitCode {
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

/// Every flag, argument and subcommand of `cmd` (recursively) that says nothing in
/// `--help`, as `PATH --flag` or `PATH sub (no about)`: the binaries' tests require
/// none, for their own commands as for the library's.
pub fn undocumented(cmd: &clap::Command) -> Vec<String> {
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
    walk(cmd, cmd.get_name(), &mut missing);
    missing
}
