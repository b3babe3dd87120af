//! `rbf-bench ingest`: parsing throughput of the readers, on one core, from memory
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

use super::{measure, Measurement};

use clap::{Args, ValueEnum};

use rbf_data::ingest::packet::capture::{CaptureOptions, PcapSource};
use rbf_data::ingest::packet::key::KeySpec;
use rbf_data::ingest::rbfs::{RbfsReader, RbfsWriter};
use rbf_data::ingest::text::{JediParser, TextSource};
use rbf_data::ingest::{input, IngestSummary, MessageSource};
use rbf_data::message::{KeyHasher, Message, Timestamp};
use rbf_foundations::error::{Error, Problem, Result};
use rbf_foundations::progress::Progress;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Which {
    All,
    Pcap,
    Jedi,
    Rbfs,
}

/// Trace parsing throughput (targets: pcap 10 M packets/s, JEDI 500 MB/s, .rbfs 100 M messages/s).
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
    /// Timed runs of each reader (the median and the best are reported).
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

/// Runs `f` `repeats` times through the shared [`measure`], keeping its last result.
fn timed<T>(repeats: u32, mut f: impl FnMut() -> Result<T>) -> Result<(Measurement, T)> {
    let mut last = None;
    let m = measure(repeats, || {
        last = Some(f()?);
        Ok(())
    })?;
    let last = last.ok_or_else(|| Error::Internal("no repeat ran"))?;
    Ok((m, last))
}

/// Flags of a reader `--which` leaves out would be silently ignored.
fn check_applicable(a: &IngestBench) -> Result<()> {
    let d: IngestBench = rbf::args::defaults();
    let given = [
        (
            a.capture != d.capture || a.pcap_passes != d.pcap_passes,
            Which::Pcap,
            "--capture and --pcap-passes",
        ),
        (a.jedi_mb != d.jedi_mb, Which::Jedi, "--jedi-mb"),
        (
            a.rbfs_messages != d.rbfs_messages,
            Which::Rbfs,
            "--rbfs-messages",
        ),
    ];
    for (set, which, flags) in given {
        if set && !matches!(a.which, Which::All) && a.which != which {
            let name = |w: Which| w.to_possible_value().map(|v| v.get_name().to_string());
            return Err(Error::setting(
                "which",
                Problem::Conflict(
                    format!(
                        "{flags} apply to --which {} (or all), not to --which {}",
                        name(which).unwrap_or_default(),
                        name(a.which).unwrap_or_default()
                    )
                    .into(),
                ),
            ));
        }
    }
    Ok(())
}

pub fn run(a: IngestBench) -> Result<()> {
    check_applicable(&a)?;
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
        hasher: KeyHasher::default(),
        keep_keys: false,
    };
    // Each repeat reads the capture `passes` times so that a repeat lasts long enough
    // to time (the zeek capture takes milliseconds).
    let passes = a.pcap_passes.max(1);
    let (m, (packets, distinct, summary)) = timed(a.repeats, || {
        let mut seen = HashSet::new();
        let mut n = 0u64;
        let mut summary = None;
        let progress = Progress::new("pcap passes", f64::from(passes), "passes");
        for pass in 0..passes {
            progress.step(f64::from(pass))?;
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
        let summary = summary.ok_or_else(|| Error::Internal("no pass ran"))?;
        Ok((n / u64::from(passes), seen.len(), summary))
    })?;
    rbf_foundations::outln!(
        "pcap: {} ({:.1} MB in memory): {} packets -> {packets} 5-tuple messages, {distinct} distinct; skipped: {}",
        a.capture.display(),
        data.len() as f64 / 1e6,
        summary.records,
        if summary.skipped.is_empty() {
            "none".to_string()
        } else {
            summary
                .skipped
                .iter()
                .map(|(reason, n)| format!("{n} {reason}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    );
    rbf_foundations::outln!(
        "pcap ({passes} passes per repeat): {}",
        m.throughput((summary.records * u64::from(passes)) as f64, "packets")
    );
    Ok(())
}

fn jedi(a: &IngestBench) -> Result<()> {
    rbf_foundations::resources::check_memory(
        &format!("a synthetic JEDI log of {} MB in memory", a.jedi_mb),
        a.jedi_mb as f64 * 1e6,
    )?;
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
    let (m, (n, summary)) = timed(a.repeats, || {
        let reader = BufReader::with_capacity(1 << 20, Cursor::new(Arc::clone(&log)));
        let mut src = TextSource::new(
            PathBuf::from("synthetic.jedi"),
            Box::new(reader),
            JediParser::default(),
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
    rbf_foundations::outln!(
        "jedi: synthetic log of {:.1} MB, {lines} lines -> {n} messages ({} malformed)",
        log.len() as f64 / 1e6,
        summary.malformed
    );
    rbf_foundations::outln!("jedi: {}", m.throughput(log.len() as f64, "bytes"));
    rbf_foundations::outln!("jedi: {}", m.throughput(n as f64, "lines"));
    Ok(())
}

fn rbfs(a: &IngestBench) -> Result<()> {
    // Keys and times of random streams compress to about 9 bytes per message; the
    // file is read back into memory.
    let bytes = a.rbfs_messages as f64 * 9.0;
    rbf_foundations::resources::check_disk(
        "the benchmark's .rbfs file",
        &std::env::temp_dir(),
        bytes,
    )?;
    rbf_foundations::resources::check_memory("the benchmark's .rbfs file in memory", bytes)?;
    let dir = std::env::temp_dir().join(format!("rbf-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let path = dir.join("bench.rbfs");
    let hasher = KeyHasher::default();
    let mut rng = SplitMix64::new(11);
    let t = Instant::now();
    let mut w = RbfsWriter::create(&path, hasher)?;
    let mut time = 1_700_000_000_000_000_000u64;
    let progress = Progress::new(
        "writing the .rbfs stream",
        a.rbfs_messages as f64,
        "messages",
    );
    for i in 0..a.rbfs_messages {
        if i % (1 << 20) == 0 {
            progress.step(i as f64)?;
        }
        time += rng.next_u64() % 50_000;
        let key = hasher.hash(&(rng.next_u64() % 10_000_000).to_le_bytes());
        w.push(Message::at(key, Timestamp::from_nanos(time)))?;
    }
    w.finish(&IngestSummary::default())?;
    let bytes = std::fs::metadata(&path)
        .map_err(|e| Error::io(&path, e))?
        .len();
    rbf_foundations::outln!(
        "rbfs: wrote {} messages with times ({:.1} MB, {:.2} bytes/message) in {:.2} s",
        a.rbfs_messages,
        bytes as f64 / 1e6,
        bytes as f64 / a.rbfs_messages as f64,
        t.elapsed().as_secs_f64()
    );
    let file: Arc<[u8]> = std::fs::read(&path)
        .map_err(|e| Error::io(&path, e))?
        .into();
    let (m, n) = timed(a.repeats, || {
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
    rbf_foundations::outln!("rbfs (blocks): {}", m.throughput(n as f64, "messages"));
    let (m, n) = timed(a.repeats, || {
        let src = rbf_data::ingest::rbfs::RbfsSource::open(
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
    rbf_foundations::outln!(
        "rbfs (iterator via Box<dyn MessageSource>): {}",
        m.throughput(n as f64, "messages")
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
