//! How the command line ends on a usage error (the parsers themselves are the library's,
//! [`rbf::args::numbers`]).

/// Ends the process on a command-line error: a bad value is one line naming the flag
/// and what is allowed (a very long value is not echoed in full); help, version and
/// other usage errors are clap's own.
pub fn exit_with(e: clap::Error) -> ! {
    if let Some(line) = rbf::args::numbers::bad_value(&e) {
        rbf::errln!("error: {line}");
        std::process::exit(2);
    }
    use clap::error::ErrorKind;
    use std::io::IsTerminal;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion)
        && !std::io::stdout().is_terminal()
    {
        // clap ignores a failed write: a full stdout must be an error, not silence (a
        // terminal keeps clap's own, styled, output).
        if let Err(w) = rbf::console::out(&e.render().to_string()) {
            rbf::errln!("error: {w}");
            std::process::exit(i32::from(w.exit_status()));
        }
        std::process::exit(0);
    }
    e.exit()
}
