//! What this machine can serve: memory, disk space and cores. Requests are checked
//! against them before anything is allocated or computed, so an impossible request
//! gets one plain line ("needs 137 GiB, 23 GiB available", exit status 2) instead of
//! an allocation abort, a capacity-overflow panic or hours of swapping.

use std::path::Path;

use crate::error::{Error, Problem, Result};

/// Requests below this are not checked: they fit on any machine rbf runs on, and
/// reading the memory counters on every small allocation would cost more than it saves.
const UNCHECKED_BYTES: f64 = (64u64 << 20) as f64;

/// Memory this process can still take (bytes): the kernel's MemAvailable, lowered to
/// the cgroup limit when one is set. `None` where neither can be read.
pub fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("MemAvailable:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map(|kb| kb.saturating_mul(1024))
    });
    let cgroup = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .map(|limit| {
            let used = std::fs::read_to_string("/sys/fs/cgroup/memory.current")
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .unwrap_or(0);
            limit.saturating_sub(used)
        });
    match (meminfo, cgroup) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// "137 GiB", "1.5 MiB", "12 bytes"; astronomically large values in powers of ten.
pub fn bytes_text(bytes: f64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if !bytes.is_finite() || bytes >= 1024f64.powi(7) {
        return format!("{bytes:.1e} bytes");
    }
    if bytes < 1024.0 {
        return format!("{bytes:.0} bytes");
    }
    let mut v = bytes;
    let mut unit = "bytes";
    for u in UNITS {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = u;
    }
    if v < 10.0 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.0} {unit}")
    }
}

/// Refuses `what` when it needs more memory than is available.
/// `bytes` is a float so that estimates of absurd requests cannot overflow.
pub fn check_memory(what: &str, bytes: f64) -> Result<()> {
    if bytes.is_finite() && bytes < UNCHECKED_BYTES {
        return Ok(());
    }
    match available_memory() {
        Some(avail) if bytes > avail as f64 => Err(Error::Resource(format!(
            "{what} needs {}, {} available",
            bytes_text(bytes),
            bytes_text(avail as f64)
        ))),
        // Unknown availability: only the impossible is refused (more than any
        // 64-bit machine can address).
        None if bytes.is_nan() || bytes >= 2f64.powi(63) => Err(Error::Resource(format!(
            "{what} needs {}, more than any machine has",
            bytes_text(bytes)
        ))),
        _ => Ok(()),
    }
}

/// Free space for an unprivileged writer in the file system holding `dir`.
#[cfg(target_os = "linux")]
pub fn available_disk(dir: &Path) -> Option<u64> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let c = CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs writes into the zeroed struct we own; the path is NUL-terminated.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return None;
    }
    Some((s.f_bavail as u64).saturating_mul(s.f_frsize as u64))
}

#[cfg(not(target_os = "linux"))]
pub fn available_disk(_: &Path) -> Option<u64> {
    None
}

/// Refuses writing an output of `bytes` into `dir` when the disk cannot hold it. Free
/// space is read whatever the size (one statvfs call): an output of 50 MB is refused
/// on a disk with 10 MB free as surely as one of 50 TB.
pub fn check_disk(what: &str, dir: &Path, bytes: f64) -> Result<()> {
    disk_verdict(what, dir, bytes, available_disk(dir))
}

fn disk_verdict(what: &str, dir: &Path, bytes: f64, available: Option<u64>) -> Result<()> {
    match available {
        Some(avail) if bytes.is_nan() || bytes > avail as f64 => Err(Error::Resource(format!(
            "{what} needs {} of disk, {} available in {}",
            bytes_text(bytes),
            bytes_text(avail as f64),
            dir.display()
        ))),
        _ => Ok(()),
    }
}

/// Cores this process may use.
pub fn available_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// A worker-thread request, capped at the cores available (more threads than cores
/// only adds switching; results never depend on the count), with a note when capped.
pub fn cap_threads(requested: usize) -> Result<usize> {
    if requested == 0 {
        return Err(Error::setting(
            "threads",
            Problem::rule("must be at least 1"),
        ));
    }
    let cores = available_threads();
    if requested > cores {
        crate::console::note(&format!(
            "--threads {requested} is more than the {cores} core(s) available; using {cores}"
        ));
        return Ok(cores);
    }
    Ok(requested)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_naturally() {
        assert_eq!(bytes_text(12.0), "12 bytes");
        assert_eq!(bytes_text(1536.0), "1.5 KiB");
        assert_eq!(bytes_text(137.0 * 1024f64.powi(3)), "137 GiB");
        assert!(bytes_text(1e300).contains("e300"));
    }

    #[test]
    fn impossible_requests_are_refused() {
        let e = check_memory("a filter of 2^70 bits", 2f64.powi(67)).unwrap_err();
        assert!(matches!(e, Error::Resource(_)));
        assert!(e.to_string().contains("needs 128 EiB"), "{e}");
        check_memory("a small table", 1e3).unwrap();
        assert!(cap_threads(0).is_err());
        assert_eq!(cap_threads(1).unwrap(), 1);
        assert_eq!(cap_threads(1 << 20).unwrap(), available_threads());
    }

    #[test]
    fn small_outputs_are_checked_against_the_disk_too() {
        let dir = Path::new("out");
        let e = disk_verdict("a trace", dir, 60e6, Some(10 << 20)).unwrap_err();
        assert!(
            e.to_string()
                .contains("a trace needs 57 MiB of disk, 10 MiB available in out"),
            "{e}"
        );
        disk_verdict("a trace", dir, 60e6, Some(100 << 20)).unwrap();
        disk_verdict("a trace", dir, f64::NAN, Some(1)).unwrap_err();
        disk_verdict("a trace", dir, 1e30, None).unwrap();
    }
}
