//! The map of the house, checked. The layers are crates (crates/, and the root package
//! for the command line): a crate can only name the crates it depends on, so the
//! compiler refuses an import up the pipeline. What the compiler cannot see is checked
//! here: `cargo metadata`'s dependency graph follows the levels of docs/ARCHITECTURE.md's
//! `crates` block (the one place the order is written down), each crate's root declares
//! exactly the modules that block lists for it and nothing else, functions stay short,
//! the command line stays thin, and the paths the documents name exist.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The source folders: each crate's src/ (crates/*/src) and the root package's src/.
fn source_roots() -> Vec<PathBuf> {
    let mut roots = vec![root().join("src")];
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root().join("crates"))
        .expect("crates/ readable")
        .flatten()
        .map(|e| e.path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    crates.sort();
    roots.extend(crates);
    roots
}

/// Every .rs file of every source folder.
fn all_sources() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for r in source_roots() {
        walk(&r, &mut files);
    }
    files.sort();
    files
}

/// A file's path from the repository's root, with forward slashes.
fn rel(f: &Path) -> String {
    f.strip_prefix(root())
        .expect("under the repository")
        .to_string_lossy()
        .replace('\\', "/")
}

/// One line of the `crates` block: the level, the package and the modules its root
/// declares (none listed for a package whose root is not a module tree).
struct Layer {
    level: u32,
    package: String,
    modules: BTreeSet<String>,
}

/// docs/ARCHITECTURE.md's `crates` block, lowest level first.
fn layers() -> Vec<Layer> {
    let page = std::fs::read_to_string(root().join("docs/ARCHITECTURE.md")).expect("the page");
    let block = page
        .split("```crates\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("docs/ARCHITECTURE.md has a ```crates block");
    block
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut w = l.split_whitespace();
            let level = w
                .next()
                .and_then(|x| x.parse().ok())
                .expect("a level first");
            let package = w.next().expect("a package").to_string();
            let modules = w.take_while(|m| *m != "--").map(str::to_string).collect();
            Layer {
                level,
                package,
                modules,
            }
        })
        .collect()
}

/// The workspace's packages and, for each, the workspace packages it depends on
/// (normal and build dependencies; a crate's tests may reach further), from `cargo
/// metadata`.
fn workspace_graph() -> BTreeMap<String, (PathBuf, BTreeSet<String>)> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata JSON");
    let packages = meta["packages"].as_array().expect("packages");
    let names: BTreeSet<String> = packages
        .iter()
        .filter_map(|p| p["name"].as_str().map(str::to_string))
        .collect();
    packages
        .iter()
        .map(|p| {
            let name = p["name"].as_str().expect("name").to_string();
            let manifest = PathBuf::from(p["manifest_path"].as_str().expect("manifest"));
            let deps = p["dependencies"]
                .as_array()
                .expect("dependencies")
                .iter()
                .filter(|d| d["kind"].as_str() != Some("dev"))
                .filter_map(|d| d["name"].as_str())
                .filter(|d| names.contains(*d))
                .map(str::to_string)
                .collect();
            (name, (manifest, deps))
        })
        .collect()
}

/// Every workspace package is on the page and every package on the page is in the
/// workspace; each depends only on packages of a lower level: data flows one way, and
/// siblings (observed and predicted) do not name each other.
#[test]
fn the_crates_depend_only_down_the_levels() {
    let layers = layers();
    let graph = workspace_graph();
    let level: BTreeMap<&str, u32> = layers
        .iter()
        .map(|l| (l.package.as_str(), l.level))
        .collect();
    let listed: BTreeSet<&str> = level.keys().copied().collect();
    let members: BTreeSet<&str> = graph.keys().map(String::as_str).collect();
    assert_eq!(
        listed, members,
        "docs/ARCHITECTURE.md's crates block and the workspace's packages differ"
    );
    let mut up = Vec::new();
    for (name, (_, deps)) in &graph {
        for d in deps {
            if level[d.as_str()] >= level[name.as_str()] {
                up.push(format!(
                    "{name} (level {}) depends on {d} (level {})",
                    level[name.as_str()],
                    level[d.as_str()]
                ));
            }
        }
    }
    assert!(
        up.is_empty(),
        "dependencies that do not point down the levels:\n{}",
        up.join("\n")
    );
    let levels: Vec<u32> = layers.iter().map(|l| l.level).collect();
    assert!(
        levels.windows(2).all(|w| w[0] <= w[1]),
        "the crates block is lowest level first: {levels:?}"
    );
}

/// A crate's root (lib.rs) only says what the crate is and declares its modules, the
/// ones the page lists for it, no more and no fewer: the code is in the modules, and a
/// module's path says where it lives (`rbf_observed::replay`, no re-export hub).
#[test]
fn each_crate_root_declares_the_modules_the_page_lists() {
    let graph = workspace_graph();
    let mut bad = Vec::new();
    for layer in layers().iter().filter(|l| !l.modules.is_empty()) {
        let (manifest, _) = &graph[&layer.package];
        let lib = manifest.parent().expect("a folder").join("src/lib.rs");
        let text = std::fs::read_to_string(&lib).expect("a crate root");
        let mut declared = BTreeSet::new();
        for line in strip(&text)
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
        {
            match line
                .strip_prefix("pub mod ")
                .and_then(|m| m.strip_suffix(';'))
            {
                Some(m) => {
                    declared.insert(m.trim().to_string());
                }
                None => bad.push(format!("{}: {line}", rel(&lib))),
            }
        }
        if declared != layer.modules {
            bad.push(format!(
                "{}: declares {declared:?}, the page lists {:?}",
                rel(&lib),
                layer.modules
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "crate roots that do more than declare the listed modules:\n{}",
        bad.join("\n")
    );
}

/// Source without comments, string and character literals (each replaced by a space,
/// so that words on either side stay apart and braces inside them do not count).
fn strip(src: &str) -> String {
    let b: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && (i == 0 || !(b[i - 1].is_alphanumeric() || b[i - 1] == '_'))
        {
            // Raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (0..hashes).all(|h| b.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            i = j;
            out.push(' ');
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push(' ');
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{..}'), or a lifetime ('a).
            if next == Some('\\') {
                let mut j = i + 2;
                while j < b.len() && b[j] != '\'' {
                    j += 1;
                }
                i = j + 1;
                out.push(' ');
            } else if b.get(i + 2) == Some(&'\'') {
                i += 3;
                out.push(' ');
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Word-bounded occurrences of `word` in `s`.
fn words<'a>(s: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    s.match_indices(word).map(|(i, _)| i).filter(move |&i| {
        let before = s[..i].chars().next_back();
        let after = s[i + word.len()..].chars().next();
        let id = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !id(before) && !id(after)
    })
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("src readable").flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn walk_md(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("docs readable").flatten() {
        let p = e.path();
        if p.is_dir() {
            walk_md(&p, out);
        } else if p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
}

/// The documents the code cites are in the repository: `docs/*.md` paths exist, and the
/// reading notes outside it (MODEL-NOTES.md) are cited through docs/MODEL.md instead.
#[test]
fn cited_documents_exist() {
    let files = all_sources();
    let mut missing = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("source readable");
        assert!(
            !text.contains("MODEL-NOTES"),
            "{} cites MODEL-NOTES.md, which is not in the repository: cite docs/MODEL.md",
            f.display()
        );
        for (i, _) in text.match_indices("docs/") {
            let rest = &text[i..];
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || "/._-".contains(c)))
                .unwrap_or(rest.len());
            let path = rest[..end].trim_end_matches('.');
            if path.ends_with(".md") && !root().join(path).exists() {
                missing.push(format!("{}: {path}", f.display()));
            }
        }
    }
    assert!(missing.is_empty(), "cited documents missing: {missing:?}");
}

/// One line's code for counting braces: string and character literals emptied and a
/// trailing `//` comment cut (a lifetime's quote stays, it opens no literal).
fn code_of_line(line: &str) -> String {
    let b: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            '"' => {
                i += 1;
                while i < b.len() && b[i] != '"' {
                    i += if b[i] == '\\' { 2 } else { 1 };
                }
                out.push_str("\"\"");
            }
            '/' if b.get(i + 1) == Some(&'/') => break,
            '\'' if b.get(i + 2) == Some(&'\'') => {
                i += 2;
                out.push_str("''");
            }
            '\'' if b.get(i + 1) == Some(&'\\') && b.get(i + 3) == Some(&'\'') => {
                i += 3;
                out.push_str("''");
            }
            c => out.push(c),
        }
        i += 1;
    }
    out
}

/// The name of the function a line starts (`pub(crate) const unsafe fn name`...).
fn fn_name(line: &str) -> Option<&str> {
    let mut s = line.trim_start();
    let after = |s: &'_ str, word: &str| -> Option<usize> {
        let rest = s.strip_prefix(word)?;
        rest.starts_with(char::is_whitespace).then_some(word.len())
    };
    if let Some(rest) = s.strip_prefix("pub(") {
        s = rest[rest.find(')')? + 1..].trim_start();
    } else if let Some(n) = after(s, "pub") {
        s = s[n..].trim_start();
    }
    for word in ["const", "async", "unsafe"] {
        if let Some(n) = after(s, word) {
            s = s[n..].trim_start();
        }
    }
    if let Some(rest) = s.strip_prefix("extern \"") {
        s = rest[rest.find('"')? + 1..].trim_start();
    }
    let rest = s[after(s, "fn")?..].trim_start();
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// Every function with a body in `src`, nested ones too, as (name, first line,
/// lines from its `fn` line to its closing brace).
fn functions(src: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<String> = src.lines().map(code_of_line).collect();
    let mut out = Vec::new();
    for (i, line) in src.lines().enumerate() {
        let Some(name) = fn_name(line) else { continue };
        let (mut depth, mut started) = (0i64, false);
        for (j, code) in lines.iter().enumerate().skip(i) {
            for c in code.chars() {
                match c {
                    '{' => (depth, started) = (depth + 1, true),
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            if started && depth <= 0 {
                out.push((name.to_string(), i + 1, j - i + 1));
                break;
            }
            // A declaration without a body (a trait's method).
            if !started && code.trim_end().ends_with(';') {
                break;
            }
        }
    }
    out
}

/// Small functions: at most 30 of the sources' functions run over 60 lines (from
/// `fn` to the closing brace, comments included), and none that renders text, tables,
/// plots or pages (report/, the experiment's tables, plots, SVG and page, the coverage
/// summary) over 80: a long one is cut into named steps.
#[test]
fn functions_stay_short() {
    let files = all_sources();
    const RENDERING: [&str; 5] = [
        "crates/judge/src/experiment/tables.rs",
        "crates/judge/src/experiment/plots.rs",
        "crates/judge/src/experiment/svg.rs",
        "crates/judge/src/experiment/page.rs",
        "crates/study/src/coverage/summary.rs",
    ];
    // A move must not leave the stricter limit checking nothing.
    for r in RENDERING.iter().chain(&["crates/judge/src/report/mod.rs"]) {
        assert!(root().join(r).exists(), "{r} moved: update RENDERING");
    }
    let rendering =
        |rel: &str| rel.starts_with("crates/judge/src/report/") || RENDERING.contains(&rel);
    let (mut long, mut long_rendering) = (Vec::new(), Vec::new());
    for f in &files {
        let rel = rel(f);
        let text = std::fs::read_to_string(f).expect("source readable");
        for (name, line, n) in functions(&text) {
            let at = format!("{rel}:{line} {name} ({n} lines)");
            if n > 80 && rendering(&rel) {
                long_rendering.push(at.clone());
            }
            if n > 60 {
                long.push(at);
            }
        }
    }
    assert!(
        long.len() <= 30,
        "{} functions over 60 lines (at most 30):\n{}",
        long.len(),
        long.join("\n")
    );
    assert!(
        long_rendering.is_empty(),
        "rendering functions over 80 lines:\n{}",
        long_rendering.join("\n")
    );
}

#[test]
fn the_length_counter_counts_braces_in_code_only() {
    let src = "pub(crate) fn a() {\n    let s = \"}\"; // }\n    let c = '{';\n}\n\
               fn decl();\n\
               pub fn b<'a>(x: &'a str) {\n    if x.is_empty() {\n        fn inner() {}\n    }\n}\n\
               let fn_like = 1;\n";
    let got: Vec<(String, usize, usize)> = functions(src);
    let want = [("a", 1, 4), ("b", 6, 5), ("inner", 8, 1)];
    assert_eq!(
        got,
        want.map(|(n, l, c)| (n.to_string(), l, c)).to_vec(),
        "{got:?}"
    );
}

/// The command line is flag parsing, one library call and printing, so its
/// share of the code stays small: src/cli/ and src/args/ (the flags, dispatch and printing
/// the binary shares with the Python package) under 4 % of the sources' lines (crates/*/src and src/) (`wc -l`: every
/// line counted), the benchmarks' binary (src/bench/) left out of both counts.
#[test]
fn the_command_line_stays_under_4_percent_of_the_code() {
    let src = root().join("src");
    let files = all_sources();
    let bench = src.join("bench");
    assert!(
        bench.join("main.rs").exists(),
        "rbf-bench moved: update this test"
    );
    let (mut cli, mut all) = (0usize, 0usize);
    for f in files.iter().filter(|f| !f.starts_with(&bench)) {
        let lines = std::fs::read_to_string(f)
            .expect("source readable")
            .lines()
            .count();
        all += lines;
        // The command line is the binary's layer (src/cli) and the flags, dispatch
        // and printing it shares with the Python package (src/args): both count.
        if f.starts_with(src.join("cli")) || f.starts_with(src.join("args")) {
            cli += lines;
        }
    }
    let share = cli as f64 / all as f64;
    assert!(
        share < 0.04,
        "src/cli/ and src/args/ (bench left out) are {cli} of {all} lines, {:.2} %: at most 4 %; move what is not flag parsing or printing into the library",
        share * 100.0
    );
}

/// Errors are kinds a caller can match (a setting's `Problem`, a layer's enum, `Internal`,
/// ...), not sentences: at most 30 sites in the code (comments aside) build a free
/// `Problem::Other` sentence, each a message for a person rather than a category.
#[test]
fn errors_are_kinds_with_few_free_sentences() {
    let mut files = all_sources();
    walk(&root().join("python").join("src"), &mut files);
    let mut sites = Vec::new();
    for f in &files {
        let code = strip(&std::fs::read_to_string(f).expect("source readable"));
        for (i, line) in code.lines().enumerate() {
            if line.contains("Problem::Other(") {
                sites.push(format!("{}:{}", rel(f), i + 1));
            }
        }
    }
    assert!(
        sites.len() <= 30,
        "{} sites build a free-text Problem::Other (at most 30): give them a kind\n{}",
        sites.len(),
        sites.join("\n")
    );
}

/// The study harnesses are out of the binary users run. The `rbf` binary's
/// sources (src/main.rs, src/cli/) name neither the benchmarks nor the coverage study
/// (comments aside), its help lists no `bench`, and `rbf-bench` runs them.
#[test]
fn the_study_harnesses_are_not_in_the_rbf_binary() {
    let src = root().join("src");
    let mut files = vec![src.join("main.rs")];
    walk(&src.join("cli"), &mut files);
    let mut named = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("source readable");
        let code = strip(&text);
        for word in ["bench", "coverage", "study"] {
            if words(&code, word).next().is_some() {
                named.push(format!("{}: {word}", f.display()));
            }
        }
    }
    assert!(
        named.is_empty(),
        "the rbf binary names a study harness: {named:?}"
    );
    let help = |bin: &str| {
        let out = std::process::Command::new(bin)
            .arg("--help")
            .output()
            .expect("the binary runs");
        assert!(out.status.success(), "{bin} --help");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let commands = |text: &str| -> Vec<String> {
        let list = text.split("Commands:").nth(1).unwrap_or("");
        let list = list.split("Options:").next().unwrap_or("");
        list.lines()
            .filter_map(|l| l.split_whitespace().next())
            .map(str::to_string)
            .collect()
    };
    let rbf = commands(&help(env!("CARGO_BIN_EXE_rbf")));
    assert!(rbf.contains(&"replay".to_string()), "{rbf:?}");
    assert!(!rbf.contains(&"bench".to_string()), "{rbf:?}");
    let bench = commands(&help(env!("CARGO_BIN_EXE_rbf-bench")));
    for b in [
        "replay",
        "fp",
        "fn",
        "ingest",
        "fit",
        "experiment",
        "coverage",
    ] {
        assert!(
            bench.contains(&b.to_string()),
            "rbf-bench lists no {b}: {bench:?}"
        );
    }
}

/// Every source path the documents name (`crates/observed/src/replay/truth.rs`,
/// `python/src/keys.rs`, `crates/predicted/src/model/`, `src/cli/`) exists, so a move cannot leave a
/// reader looking for a file that is gone: docs/, README.md and the sources' comments.
#[test]
fn named_source_paths_exist() {
    let mut texts = vec![root().join("README.md")];
    walk_md(&root().join("docs"), &mut texts);
    // The dated log keeps the paths as they were when each entry was written.
    let history = root().join("docs").join("history");
    texts.retain(|f| !f.starts_with(&history));
    texts.extend(all_sources());
    let mut missing = Vec::new();
    for f in &texts {
        let text = std::fs::read_to_string(f).expect("readable");
        for path in source_paths(&text) {
            if !root().join(&path).exists() {
                missing.push(format!("{}: {path}", f.display()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "source paths named that do not exist:\n{}",
        missing.join("\n")
    );
}

/// The paths in `text` that start with `src/`, `python/src/` or `crates/` (and hold `src/`) (a word of path
/// characters) and end in `.rs` or `/`.
fn source_paths(text: &str) -> Vec<String> {
    let is_path = |c: char| c.is_alphanumeric() || "_./-".contains(c);
    let mut out = Vec::new();
    for (i, _) in text.match_indices("src/") {
        let start = text[..i]
            .char_indices()
            .rev()
            .take_while(|&(_, c)| is_path(c))
            .last()
            .map_or(i, |(j, _)| j);
        let end = text[i..]
            .find(|c: char| !is_path(c))
            .map_or(text.len(), |e| i + e);
        let path = text[start..end].trim_end_matches('.');
        let from_root = path.starts_with("src/")
            || path.starts_with("python/src/")
            || path.starts_with("crates/");
        if from_root && (path.ends_with(".rs") || path.ends_with('/')) {
            out.push(path.to_string());
        }
    }
    out.sort();
    out.dedup();
    out
}

#[test]
fn the_path_finder_reads_paths_in_prose() {
    let text = "see `crates/observed/src/replay/truth.rs`, python/src/keys.rs. and (src/cli/) \
                but not target/src/x.rs nor src/x";
    assert_eq!(
        source_paths(text),
        [
            "crates/observed/src/replay/truth.rs",
            "python/src/keys.rs",
            "src/cli/"
        ]
    );
}
