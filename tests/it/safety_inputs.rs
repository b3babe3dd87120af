//! Compressed and binary inputs: a `pzstd` file (it starts with a skippable
//! frame) is read like any zstd file; a `zstd --long=31` stream (a 2 GiB window) is
//! read, and one needing more than zstd allows is refused saying what it needs; a
//! text format forced onto binary data (`--format jedi` on an xz file) is refused
//! instead of being parsed into thousands of malformed lines.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::cli::{json_of, rbf, stderr};
use crate::scratch::Scratch;

/// (arrivals, false negatives) of a replay of `file`, with extra flags.
fn replay(dir: &Path, file: &str, extra: &[&str]) -> (u64, u64) {
    let mut args = vec![
        "replay", file, "-m", "3000", "-k", "3", "--sigma", "900", "--json",
    ];
    args.extend(extra);
    let v = json_of(&rbf(dir, &args));
    (
        v["arrivals"].as_u64().expect("arrivals"),
        v["false_negatives"].as_u64().expect("false negatives"),
    )
}

/// A zstd frame of `data` written as a stream (the frame header then holds a window
/// descriptor, as `zstd` writes it for a pipe).
fn frame(data: &[u8]) -> Vec<u8> {
    let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

#[test]
fn pzstd_and_long_window_files_are_read() {
    let dir = Scratch::new("safe-zstd");
    let out = rbf(
        &dir,
        &[
            "synth",
            "--distinct",
            "500",
            "--p-repeat",
            "0.9",
            "--arrivals",
            "40000",
            "-o",
            "t.csv",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read(dir.join("t.csv")).unwrap();
    let plain = replay(&dir, "t.csv", &[]);
    // pzstd: the text cut in two frames, each after a skippable frame holding its
    // compressed size.
    let cut = text[..text.len() / 2]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    let mut pz = Vec::new();
    for part in [&text[..cut], &text[cut..]] {
        let f = frame(part);
        pz.extend([0x50, 0x2A, 0x4D, 0x18]);
        pz.extend(4u32.to_le_bytes());
        pz.extend((f.len() as u32).to_le_bytes());
        pz.extend(f);
    }
    std::fs::write(dir.join("pz.csv.zst"), &pz).unwrap();
    assert_eq!(replay(&dir, "pz.csv.zst", &[]), plain);
    assert_eq!(replay(&dir, "pz.csv.zst", &["--format", "jedi"]), plain);
    // zstd --long=31 on a pipe: a frame declaring a 2 GiB window.
    let mut long = frame(&text);
    assert_eq!(long[4] & 0x20, 0, "the frame has a window descriptor");
    long[5] = 21 << 3;
    std::fs::write(dir.join("long.csv.zst"), &long).unwrap();
    let enough = rbf_foundations::resources::available_memory().is_none_or(|a| a > 3 << 30);
    if enough {
        assert_eq!(replay(&dir, "long.csv.zst", &[]), plain);
    }
    // A window beyond zstd's largest: refused up front, saying what it needs.
    long[5] = 22 << 3;
    std::fs::write(dir.join("huge.csv.zst"), &long).unwrap();
    let out = rbf(
        &dir,
        &[
            "replay",
            "huge.csv.zst",
            "-m",
            "3000",
            "-k",
            "3",
            "--sigma",
            "900",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("window of 4.0 GiB") && stderr(&out).contains("zstd --long"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn binary_data_is_not_read_as_text() {
    let dir = Scratch::new("safe-binary");
    // Pseudo-random bytes (xorshift), as compressed data looks.
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let noise: Vec<u8> = (0..20_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let mut xz = vec![0xFD, b'7', b'z', b'X', b'Z', 0x00];
    xz.extend(&noise);
    std::fs::write(dir.join("t.csv.xz"), &xz).unwrap();
    std::fs::write(dir.join("noise.bin"), &noise).unwrap();
    for (file, says) in [("t.csv.xz", "xz-compressed"), ("noise.bin", "binary data")] {
        for format in ["jedi", "lines", "csv"] {
            let out = rbf(
                &dir,
                &[
                    "replay", file, "--format", format, "-m", "3000", "-k", "3", "--sigma", "900",
                ],
            );
            assert_eq!(
                out.status.code(),
                Some(1),
                "{file} {format}: {}",
                stderr(&out)
            );
            assert!(
                stderr(&out).contains(says),
                "{file} {format}: {}",
                stderr(&out)
            );
            assert!(stderr(&out).len() < 500, "{}", stderr(&out));
        }
    }
    // A text trace with a few damaged bytes is still read, its bad lines counted.
    let mut text: Vec<u8> = (0..2000u32)
        .flat_map(|i| format!("{i},{},1\n", i % 97).into_bytes())
        .collect();
    text[100] = 0;
    text[200] = 0xFF;
    std::fs::write(dir.join("damaged.csv"), &text).unwrap();
    let (arrivals, _) = replay(&dir, "damaged.csv", &["--format", "jedi"]);
    assert!(arrivals >= 1990, "{arrivals}");
}

/// What `stream` gives, chunk by chunk, read by a thread of its own.
pub fn chunks(
    mut stream: impl std::io::Read + Send + 'static,
) -> std::sync::mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stream.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    rx
}

/// Text from `rx` until `wanted` appears or `within` passes.
pub fn read_until(
    rx: &std::sync::mpsc::Receiver<Vec<u8>>,
    wanted: &str,
    within: std::time::Duration,
) -> String {
    let deadline = std::time::Instant::now() + within;
    let mut seen = String::new();
    while !seen.contains(wanted) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(b) => seen.push_str(&String::from_utf8_lossy(&b)),
            Err(_) => break,
        }
    }
    seen
}

/// An input of unknown length that gives nothing for a while is not silent: a
/// heartbeat says what has been read (here: nothing, so far) and for how long, on a
/// terminal (a pseudo-terminal here) and in a log alike.
#[test]
fn a_stalled_pipe_gets_a_heartbeat() {
    use std::time::Duration;
    let dir = Scratch::new("safe-heartbeat");
    let args = [
        "replay", "-", "--format", "jedi", "-m", "3000", "-k", "3", "--sigma", "900",
    ];
    // A log: stderr is a pipe.
    let mut child = crate::cli::spawn(&dir, args, Stdio::piped());
    let err = chunks(child.stderr.take().unwrap());
    let said = read_until(&err, "waiting for data", Duration::from_secs(6));
    assert!(
        said.contains("reading <stdin>: waiting for data"),
        "{said:?}"
    );
    let mut input = child.stdin.take().unwrap();
    input.write_all(b"0,1,1\n1,2,1\n").unwrap();
    drop(input);
    assert!(child.wait().unwrap().success());
    // A terminal: stderr is a pseudo-terminal.
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two descriptors into the integers we own.
    let opened = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    if opened != 0 {
        return; // no pseudo-terminals here
    }
    use std::os::fd::FromRawFd;
    // SAFETY: both descriptors were just opened and are owned here.
    let (master, slave) = unsafe {
        (
            std::fs::File::from_raw_fd(master),
            std::fs::File::from_raw_fd(slave),
        )
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_rbf"))
        .args(args)
        .current_dir(&*dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::from(slave))
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(b"0,1,1\n").unwrap();
    let out = chunks(master);
    let said = read_until(&out, "reading <stdin>: 6 bytes", Duration::from_secs(6));
    assert!(said.contains("reading <stdin>: 6 bytes ("), "{said:?}");
    drop(input);
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_timeout_too_long_is_called_too_long() {
    let dir = Scratch::new("safe-timeout");
    let out = rbf(
        &dir,
        &[
            "replay",
            "x.pcap",
            "--flows",
            "--inactive-timeout",
            "18446744073709551615s",
            "-m",
            "3000",
            "-k",
            "3",
            "--sigma",
            "900",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("too long") && !err.contains("positive"),
        "{err}"
    );
}
