use std::process::ExitCode;

mod cli;

/// Whether descriptor 1 was open when the process started, looked at before the Rust
/// runtime opens /dev/null on a closed standard stream (after which a shell's `>&-`
/// cannot be told from `>/dev/null`).
#[cfg(target_os = "linux")]
static STDOUT_OPEN_AT_START: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(true);

#[cfg(target_os = "linux")]
extern "C" fn look_at_stdout() {
    // SAFETY: fcntl on descriptor 1 only.
    if unsafe { libc::fcntl(1, libc::F_GETFD) } == -1 {
        STDOUT_OPEN_AT_START.store(false, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Run by the loader before `main` and before the runtime's own start-up.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static LOOK_AT_STDOUT: extern "C" fn() = look_at_stdout;

fn main() -> ExitCode {
    #[cfg(target_os = "linux")]
    rbf_foundations::console::set_stdout_closed(
        !STDOUT_OPEN_AT_START.load(std::sync::atomic::Ordering::Relaxed),
    );
    // First: the signal mask it sets must be inherited by every thread started later.
    rbf_foundations::signals::install();
    rbf_foundations::signals::quiet_broken_pipe();
    let args = cli::parse();
    let mut stdout: Box<dyn std::io::Write + Send> = if rbf_foundations::console::stdout_closed() {
        Box::new(rbf_foundations::console::ClosedStdout)
    } else {
        Box::new(std::io::stdout())
    };
    let result = cli::run(args, &mut rbf::args::io::Io::terminal(&mut *stdout));
    rbf::args::usage::exit_code(result)
}
