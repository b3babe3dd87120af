//! `rbf bench ingest`: parsing throughput of the readers, on one core, from memory
//! (so that the disk is not what is measured). Figures go to docs/PERFORMANCE.md.
//!
//! * `pcap`: a capture -> 5-tuple messages (plus a HashSet of distinct keys, so the
//!   keys are used), packets/s. Default capture: the zeek echo-connections trace.
//! * `jedi`: a synthetic JEDI request log, MB/s of text.
//! * `rbfs`: reading an `.rbfs` stream written from synthetic messages, messages/s,
//!   through the block API and through the per-message iterator.

use std::collections::HashSet;
use std::io::{BufReader, Cursor, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use clap::{Args, ValueEnum};

use rbf::ingest::packet::capture::{CaptureOptions, PcapSource};
use rbf::ingest::packet::key::KeySpec;
use rbf::ingest::rbfs::{RbfsReader, RbfsWriter};
use rbf::ingest::text::{JediParser, TextSource};
use rbf::ingest::{input, IngestSummary, MessageSource};
use rbf::message::{KeyHasher, Message, Timestamp};
use rbf::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Which {
    All,
    Pcap,
    Jedi,
    Rbfs,
}

/// Trace parsing throughput (issue targets: pcap 10 M packets/s, JEDI 500 MB/s, .rbfs 100 M messages/s).
#[derive(Args, Debug)]
pub struct IngestBench {
    /// Which reader to measure.
    #[arg(long, value_enum, default_value_t = Which::All)]
    which: Which,
    /// Capture for the pcap benchmark.
    #[arg(long, default_value = "tests/data/zeek_echo-connections.pcap.zst")]
    capture: PathBuf,
    /// Passes over the capture per timed repeat.
    #[arg(long, default_value_t = 20)]
    pcap_passes: u32,
    /// Size of the synthetic JEDI log in MB.
    #[arg(long, default_value_t = 200)]
    jedi_mb: usize,
    /// Messages in the synthetic .rbfs stream.
    #[arg(long, default_value_t = 20_000_000)]
    rbfs_messages: u64,
    #[arg(long, default_value_t = 5)]
    repeats: u32,
}

/// SplitMix64: enough randomness for benchmark inputs, fixed seeds for repeatability.
struct SplitMix64(u64);

impl SplitMix64 {
    fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// On-CPU time of this thread in seconds (`CLOCK_THREAD_CPUTIME_ID`), so that a figure
/// means "one core" even when other processes share the machine; `None` where the
/// clock is unavailable (the figures are then wall time).
#[cfg(target_os = "linux")]
fn thread_cpu_seconds() -> Option<f64> {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: clock_gettime writes one timespec (two 64-bit fields on 64-bit Linux,
    // which is what this cfg covers together with the pointer-width check below).
    let rc = if cfg!(target_pointer_width = "64") {
        unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) }
    } else {
        -1
    };
    (rc == 0).then_some(ts.sec as f64 + ts.nsec as f64 * 1e-9)
}

#[cfg(not(target_os = "linux"))]
fn thread_cpu_seconds() -> Option<f64> {
    None
}

/// Runs `f` `repeats` times; returns (median, best) seconds of on-CPU time (wall time
/// where that is unavailable) and the last result.
fn measure<T>(repeats: u32, mut f: impl FnMut() -> Result<T>) -> Result<(f64, f64, T)> {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..repeats.max(1) {
        let (t, c) = (Instant::now(), thread_cpu_seconds());
        let r = f()?;
        let wall = t.elapsed().as_secs_f64();
        let cpu = c.and_then(|c0| thread_cpu_seconds().map(|c1| c1 - c0));
        times.push(cpu.unwrap_or(wall));
        last = Some(r);
    }
    times.sort_by(f64::total_cmp);
    let last = last.ok_or_else(|| Error::invalid("no repeat ran"))?;
    Ok((times[times.len() / 2], times[0], last))
}

fn report(what: &str, units: f64, unit: &str, median: f64, best: f64) {
    println!(
        "{what}: {} median {median:.3} s, best {best:.3} s -> {:.1} {unit}/s (median), {:.1} {unit}/s (best)",
        if thread_cpu_seconds().is_some() {
            "on-CPU time"
        } else {
            "wall time"
        },
        units / median,
        units / best
    );
}

pub fn run(a: IngestBench) -> Result<()> {
    if matches!(a.which, Which::All | Which::Pcap) {
        pcap(&a)?;
    }
    if matches!(a.which, Which::All | Which::Jedi) {
        jedi(&a)?;
    }
    if matches!(a.which, Which::All | Which::Rbfs) {
        rbfs(&a)?;
    }
    Ok(())
}

fn pcap(a: &IngestBench) -> Result<()> {
    let data: Arc<[u8]> = input::read_all(&a.capture)?.into();
    let options = CaptureOptions {
        key: KeySpec::default(),
        flows: None,
        hasher: KeyHasher::default(),
        keep_keys: false,
    };
    // Each repeat reads the capture `passes` times so that a repeat lasts long enough
    // to time (the zeek capture takes milliseconds).
    let passes = a.pcap_passes.max(1);
    let (median, best, (packets, distinct, summary)) = measure(a.repeats, || {
        let mut seen = HashSet::new();
        let mut n = 0u64;
        let mut summary = None;
        for _ in 0..passes {
            let mut src = PcapSource::new(
                a.capture.clone(),
                Box::new(Cursor::new(Arc::clone(&data))),
                options,
            )?;
            for m in &mut src {
                seen.insert(m.key);
                n += 1;
            }
            summary = Some(src.summary().clone());
        }
        let summary = summary.ok_or_else(|| Error::invalid("no pass ran"))?;
        Ok((n / u64::from(passes), seen.len(), summary))
    })?;
    println!(
        "pcap: {} ({:.1} MB in memory): {} packets -> {packets} 5-tuple messages, {distinct} distinct; skipped {:?}",
        a.capture.display(),
        data.len() as f64 / 1e6,
        summary.records,
        summary.skipped
    );
    report(
        &format!("pcap ({passes} passes per repeat)"),
        (summary.records * u64::from(passes)) as f64 / 1e6,
        "M packets",
        median,
        best,
    );
    Ok(())
}

fn jedi(a: &IngestBench) -> Result<()> {
    let mut rng = SplitMix64::new(7);
    let mut log = Vec::with_capacity(a.jedi_mb << 20);
    let mut t = 0u64;
    let mut lines = 0u64;
    while log.len() < a.jedi_mb * 1_000_000 {
        t += rng.next_u64() % 3;
        let id = rng.next_u64() % 5_000_000;
        let size = 100 + rng.next_u64() % 100_000;
        let _ = writeln!(log, "{t},{id},{size}");
        lines += 1;
    }
    let log: Arc<[u8]> = log.into();
    let (median, best, (n, summary)) = measure(a.repeats, || {
        let reader = BufReader::with_capacity(1 << 20, Cursor::new(Arc::clone(&log)));
        let mut src = TextSource::new(
            PathBuf::from("synthetic.jedi"),
            Box::new(reader),
            JediParser,
            KeyHasher::default(),
            false,
        );
        let mut x = 0u64;
        let mut n = 0u64;
        for m in &mut src {
            x ^= m.key;
            n += 1;
        }
        std::hint::black_box(x);
        Ok((n, src.summary().clone()))
    })?;
    println!(
        "jedi: synthetic log of {:.1} MB, {lines} lines -> {n} messages ({} malformed)",
        log.len() as f64 / 1e6,
        summary.malformed
    );
    report("jedi", log.len() as f64 / 1e6, "MB", median, best);
    report("jedi", n as f64 / 1e6, "M lines", median, best);
    Ok(())
}

fn rbfs(a: &IngestBench) -> Result<()> {
    let dir = std::env::temp_dir().join(format!("rbf-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let path = dir.join("bench.rbfs");
    let hasher = KeyHasher::default();
    let mut rng = SplitMix64::new(11);
    let t = Instant::now();
    let mut w = RbfsWriter::create(&path, hasher)?;
    let mut time = 1_700_000_000_000_000_000u64;
    for _ in 0..a.rbfs_messages {
        time += rng.next_u64() % 50_000;
        let key = hasher.hash(&(rng.next_u64() % 10_000_000).to_le_bytes());
        w.push(Message::at(key, Timestamp::from_nanos(time)))?;
    }
    w.finish(&IngestSummary::default())?;
    let bytes = std::fs::metadata(&path)
        .map_err(|e| Error::io(&path, e))?
        .len();
    println!(
        "rbfs: wrote {} messages with times ({:.1} MB, {:.2} bytes/message) in {:.2} s",
        a.rbfs_messages,
        bytes as f64 / 1e6,
        bytes as f64 / a.rbfs_messages as f64,
        t.elapsed().as_secs_f64()
    );
    let file: Arc<[u8]> = std::fs::read(&path)
        .map_err(|e| Error::io(&path, e))?
        .into();
    let (median, best, n) = measure(a.repeats, || {
        let mut r = RbfsReader::new(path.clone(), Box::new(Cursor::new(Arc::clone(&file))))?;
        let mut n = 0u64;
        let mut x = 0u64;
        while let Some(b) = r.next_block() {
            n += b.len() as u64;
            x ^= b.iter().fold(0, |acc, m| acc ^ m.key);
        }
        std::hint::black_box(x);
        Ok(n)
    })?;
    report("rbfs (blocks)", n as f64 / 1e6, "M messages", median, best);
    let (median, best, n) = measure(a.repeats, || {
        let src = rbf::ingest::rbfs::RbfsSource::open(
            path.clone(),
            Box::new(Cursor::new(Arc::clone(&file))),
            hasher,
        )?;
        let mut boxed: Box<dyn MessageSource> = Box::new(src);
        let mut n = 0u64;
        let mut x = 0u64;
        for m in &mut boxed {
            n += 1;
            x ^= m.key;
        }
        std::hint::black_box(x);
        Ok(n)
    })?;
    report(
        "rbfs (iterator via Box<dyn MessageSource>)",
        n as f64 / 1e6,
        "M messages",
        median,
        best,
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
