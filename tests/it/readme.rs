//! README.md as a user runs it: every ```` ```sh ```` block (blocks marked
//! ```` ```sh untested ```` build, install or run the whole suite, and are left out) runs
//! command by command, in order, in a scratch directory holding a copy of `configs/` and
//! the shipped `traces/`, with the freshly built `rbf` first on the PATH. Each command must
//! exit 0 and, unless it asks for JSON or the wide table, print lines of at most 100
//! columns. A ```` ```text ```` block right after a `sh` block is the last command's
//! output, compared with what it prints now (elapsed times masked);
//! `RBF_UPDATE_README=1 cargo test --release readme` rewrites those samples instead.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::scratch::Scratch;

const WIDTH: usize = 100;

/// A fenced block: its info string, its lines, and the line range of its body.
struct Block {
    info: String,
    body: Vec<String>,
    /// Line indices (0-based) of the first body line and of the closing fence.
    start: usize,
    end: usize,
}

fn blocks(text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if let Some(info) = lines[i].strip_prefix("```") {
            let start = i + 1;
            let mut end = start;
            while end < lines.len() && lines[end] != "```" {
                end += 1;
            }
            out.push(Block {
                info: info.trim().to_string(),
                body: lines[start..end.min(lines.len())]
                    .iter()
                    .map(|l| l.to_string())
                    .collect(),
                start,
                end,
            });
            i = end + 1;
        } else {
            i += 1;
        }
    }
    out
}

/// The commands of a shell block: comments and blank lines dropped, `\` continuations
/// joined.
fn commands(body: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in body {
        let t = line.trim();
        if current.is_empty() && (t.is_empty() || t.starts_with('#')) {
            continue;
        }
        match t.strip_suffix('\\') {
            Some(head) => {
                current.push_str(head.trim_end());
                current.push(' ');
            }
            None => {
                current.push_str(t);
                out.push(std::mem::take(&mut current));
            }
        }
    }
    out
}

/// Elapsed times vary from run to run: "time: 3.1 s (...)" and "finished in 0.7 s;".
fn mask(text: &str) -> String {
    text.lines()
        .map(|l| {
            let seconds = |rest: &str| {
                let n = rest
                    .find(" s")
                    .filter(|&i| rest[..i].chars().all(|c| c.is_ascii_digit() || c == '.'));
                n.map(|i| rest[i..].to_string())
            };
            for prefix in ["time: ", "finished in "] {
                if let Some(rest) = l.strip_prefix(prefix) {
                    if let Some(tail) = seconds(rest) {
                        return format!("{prefix}<seconds>{tail}");
                    }
                }
            }
            l.to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read dir") {
        let p = e.expect("entry").path();
        let target = to.join(p.file_name().expect("name"));
        if p.is_dir() {
            copy_dir(&p, &target);
        } else {
            std::fs::copy(&p, &target).expect("copy");
        }
    }
}

fn run(dir: &Path, path_env: &str, command: &str) -> (String, String) {
    let out = Command::new("bash")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .env("PATH", path_env)
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "README command failed ({}): {command}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    (stdout, stderr)
}

#[test]
fn readme_commands_run_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme_path = root.join("README.md");
    let readme = std::fs::read_to_string(&readme_path).expect("README.md");
    let dir = Scratch::new("readme");
    copy_dir(&root.join("configs"), &dir.join("configs"));
    std::os::unix::fs::symlink(root.join("traces"), dir.join("traces")).expect("link traces");
    let bin: PathBuf = PathBuf::from(env!("CARGO_BIN_EXE_rbf"));
    let path_env = format!(
        "{}:{}",
        bin.parent().expect("bin dir").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let update = std::env::var_os("RBF_UPDATE_README").is_some();
    let all = blocks(&readme);
    let mut lines: Vec<String> = readme.lines().map(String::from).collect();
    let mut replacements: Vec<(usize, usize, String)> = Vec::new();
    let mut mismatches = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut ran = 0;
    for (i, b) in all.iter().enumerate() {
        if b.info != "sh" {
            continue;
        }
        let mut last = String::new();
        for c in commands(&b.body) {
            let (stdout, _) = run(&dir, &path_env, &c);
            ran += 1;
            if let Some(sub) = c.split_whitespace().skip_while(|w| *w != "rbf").nth(1) {
                seen.insert(sub.to_string());
            }
            if !c.contains("--json") && !c.contains("--wide") {
                for l in stdout.lines() {
                    assert!(
                        l.chars().count() <= WIDTH,
                        "`{c}` prints a line wider than {WIDTH} columns:\n{l}"
                    );
                }
            }
            last = stdout;
        }
        if let Some(next) = all
            .get(i + 1)
            .filter(|n| n.info == "text" && n.start == b.end + 2)
        {
            let want = mask(&next.body.join("\n"));
            let got = mask(last.trim_end());
            if update {
                replacements.push((next.start, next.end, last.trim_end().to_string()));
            } else if want != got {
                mismatches.push(format!(
                    "README sample after line {} is stale; it prints now:\n{}",
                    b.start,
                    last.trim_end()
                ));
            }
        }
    }
    // The README's figure is the main job's FN plot for the CDN log, as rendered now.
    let figure = root.join("docs/img/quickstart-fn-vs-memory.svg");
    let rendered = dir.join("out/quickstart/plots/01-fn-vs-memory.svg");
    let now = std::fs::read_to_string(&rendered).expect("the main job's FN plot");
    if update {
        std::fs::write(&figure, &now).expect("figure rewritten");
    } else if std::fs::read_to_string(&figure).ok().as_deref() != Some(now.as_str()) {
        mismatches.push(format!("{} is stale", figure.display()));
    }
    if update {
        for (start, end, text) in replacements.into_iter().rev() {
            lines.splice(start..end, text.lines().map(String::from));
        }
        std::fs::write(&readme_path, lines.join("\n") + "\n").expect("README rewritten");
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n\n"));
    // Every subcommand is shown at least once (the benchmarks, rbf-bench, are
    // documented in its --help and docs/PERFORMANCE.md).
    for sub in [
        "synth", "replay", "ingest", "model", "fit", "compare", "run", "merge", "size",
    ] {
        assert!(seen.contains(sub), "no README example runs `rbf {sub}`");
    }
    assert!(ran >= 20, "only {ran} README commands ran");
}

#[test]
fn blocks_and_commands_parse() {
    let text = "a\n```sh\n# c\nrbf x \\\n    --y 1\nrbf z\n```\n```text\nout\n```\n";
    let b = blocks(text);
    assert_eq!(b.len(), 2);
    assert_eq!(commands(&b[0].body), ["rbf x --y 1", "rbf z"]);
    assert_eq!(b[1].start, b[0].end + 2);
    assert_eq!(
        mask("time: 3.1 s (search)\nfinished in 12.0 s; outputs"),
        "time: <seconds> s (search)\nfinished in <seconds> s; outputs"
    );
}
