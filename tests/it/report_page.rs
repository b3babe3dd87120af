//! report.html in a real browser: headless Chromium loads the page `rbf merge` writes
//! (byte for byte the unsharded run's) and must see no console message (errors,
//! refused fetches: the page's policy allows none), every plot drawn with a non-zero
//! size, a sortable table, and nothing wider than a 1280-pixel window (wide tables
//! scroll in their own box). A screenshot at 1280 px is kept in
//! `target/report-page-1280.png` for people to look at.
//!
//! The browser: `$RBF_CHROMIUM`, else `chromium`, `chromium-browser`, `google-chrome`
//! or `google-chrome-stable` on the PATH. `.ci/run` installs Debian's `chromium` where
//! it is missing. Without a browser this test FAILS, saying how to get one; set
//! `RBF_BROWSER_CHECK=skip` to run the other tests without it knowingly (.ci/run then
//! prints a warning that the check was skipped).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cli::{ok, rbf};
use crate::scratch::Scratch;

const CONFIG: &str = r#"
name = "report page"
description = "A real capture series and a synthetic workload, for the browser check."
output = "out/whole"
seeds = [1]
measures = ["observed", "fp-model", "renewal", "markov-lower", "drop-pins"]

[[trace]]
name = "nDPI mix <packets> & co"
path = "traces/ndpi"
warmup = 2000

[[synthetic]]
name = "zipf(500, 1) p_r=0.9"
distinct = 500
zipf = 1.0
p_repeat = 0.9
arrivals = 40000
fit = true

[grid]
memory = [2048, 4096]
hashes = [4]
target_fp = [1e-3]
phases = [1, 2]
"#;

/// Window width the page must fit.
const WIDTH: u32 = 1280;

/// Collects what goes wrong while the page loads, and once it has loaded (and its
/// sort ran on two clicks) writes its measurements as JSON into `#rbf-probe`.
const PROBE: &str = r##"<script>
(function () {
  var errors = [];
  window.addEventListener("error", function (e) {
    errors.push("error: " + (e.message || (e.target && e.target.outerHTML || "").slice(0, 120)));
  }, true);
  document.addEventListener("securitypolicyviolation", function (e) {
    errors.push("refused by the page's policy: " + e.blockedURI + " (" + e.violatedDirective + ")");
  });
  window.addEventListener("load", function () {
    var d = document.documentElement;
    var plots = Array.prototype.map.call(document.querySelectorAll("figure svg"), function (svg) {
      var r = svg.getBoundingClientRect();
      var drawn = function (sel) {
        return Array.prototype.filter.call(svg.querySelectorAll(sel), function (e) {
          var b = e.getBBox();
          return b.width > 0 || b.height > 0;
        }).length;
      };
      return {
        width: r.width, height: r.height, right: r.right,
        texts: svg.querySelectorAll("text").length, drawn_texts: drawn("text"),
        marks: svg.querySelectorAll("polyline, circle, line").length,
        drawn_marks: drawn("polyline, circle, line")
      };
    });
    var boxes = Array.prototype.map.call(document.querySelectorAll(".scroll"), function (box) {
      return { right: box.getBoundingClientRect().right, inner: box.scrollWidth, outer: box.clientWidth };
    });
    var table = document.querySelector("#results table");
    var first = function () { return table.tBodies[0].rows[0].cells[0].textContent; };
    var before = first();
    table.tHead.rows[0].cells[0].click();
    table.tHead.rows[0].cells[0].click();
    var probe = {
      errors: errors,
      plots: plots,
      boxes: boxes,
      scroll_width: d.scrollWidth,
      client_width: d.clientWidth,
      inner_width: window.innerWidth,
      height: d.scrollHeight,
      rows: table.tBodies[0].rows.length,
      first_row_before_sort: before,
      first_row_after_sort: first()
    };
    var pre = document.createElement("pre");
    pre.id = "rbf-probe";
    pre.textContent = JSON.stringify(probe);
    document.body.appendChild(pre);
  });
})();
</script>"##;

/// The headless browser, or None.
fn browser() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("RBF_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ]
    .iter()
    .flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name)))
    .find(|p| p.is_file())
}

/// Runs the browser on `page` with `args`; (stdout, the page's console lines). A
/// browser that hangs is killed after a minute.
/// The window is [`WIDTH`] by `height` pixels.
fn chromium(
    exe: &Path,
    page: &Path,
    height: u32,
    arg: &str,
    profile: &Path,
) -> (String, Vec<String>) {
    let mut child = Command::new(exe)
        .args([
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            &format!("--user-data-dir={}", profile.display()),
            &format!("--window-size={WIDTH},{height}"),
            arg,
        ])
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", exe.display()));
    let start = Instant::now();
    // Read both pipes on threads so a chatty browser cannot block on a full pipe.
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut s);
        s
    });
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{} did not finish within 60 s on {}",
                exe.display(),
                page.display()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let stdout = out.join().expect("stdout reader");
    let stderr = err.join().expect("stderr reader");
    // "[...:INFO:CONSOLE:12] "message", source: file:///... (12)": every console
    // message of the page, whatever its level.
    let console = stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    (stdout, console)
}

/// Width and height of a PNG, from its header.
fn png_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if bytes.len() < 24 || &bytes[..8] != b"\x89PNG\r\n\x1a\n" {
        return None;
    }
    let word = |i: usize| u32::from_be_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    Some((word(16), word(20)))
}

fn num(v: &serde_json::Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

#[test]
fn the_report_page_loads_cleanly_in_a_browser_and_fits_1280_px() {
    let Some(exe) = browser() else {
        if std::env::var("RBF_BROWSER_CHECK").as_deref() == Ok("skip") {
            eprintln!("WARNING: report.html browser check SKIPPED (RBF_BROWSER_CHECK=skip)");
            return;
        }
        panic!(
            "headless Chromium not found (looked for $RBF_CHROMIUM, chromium, chromium-browser, \
             google-chrome, google-chrome-stable on the PATH): install it with \
             `apt-get install chromium` (.ci/run does this when it runs as root), or set \
             RBF_BROWSER_CHECK=skip to run the tests without the browser check knowingly"
        );
    };
    let dir = Scratch::new("report-page");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::os::unix::fs::symlink(root.join("traces"), dir.join("traces")).expect("traces link");
    std::fs::write(dir.join("page.toml"), CONFIG).expect("config");

    // The unsharded run, two shards and their merge: the merged page is the same file.
    ok(&rbf(&dir, &["run", "page.toml", "--quiet"]));
    for i in 0..2 {
        let shard = format!("{i}/2");
        let out = format!("out/shard{i}");
        ok(&rbf(
            &dir,
            &["run", "page.toml", "--shard", &shard, "-o", &out, "--quiet"],
        ));
    }
    ok(&rbf(
        &dir,
        &[
            "merge",
            "out/shard0",
            "out/shard1",
            "-o",
            "out/merged",
            "--quiet",
        ],
    ));
    let whole = std::fs::read(dir.join("out/whole/report.html")).expect("report.html");
    let merged_path = dir.join("out/merged/report.html");
    let page =
        String::from_utf8(std::fs::read(&merged_path).expect("merged report.html")).expect("UTF-8");
    assert!(
        whole == page.as_bytes(),
        "the merged report.html differs from the unsharded run's"
    );
    // A rerun replaces an earlier run's outputs, report.html among them, with the same.
    ok(&rbf(&dir, &["run", "page.toml", "--quiet"]));
    assert!(std::fs::read(dir.join("out/whole/report.html")).expect("rerun") == whole);

    // Self-contained: nothing to fetch (the only URL is the SVG namespace), names
    // escaped, the config shown.
    let urls: Vec<&str> = page
        .match_indices("://")
        .filter(|(i, _)| {
            !(page[..*i].ends_with("xmlns=\"http")
                && page[*i..].starts_with("://www.w3.org/2000/svg\""))
        })
        .map(|(i, _)| &page[i.saturating_sub(20)..(i + 40).min(page.len())])
        .collect();
    assert!(urls.is_empty(), "URLs in report.html: {urls:?}");
    assert!(page.contains("nDPI mix &lt;packets&gt; &amp; co"));
    assert!(page.contains("[[synthetic]]") && page.contains("target_fp = [0.001]"));
    let plots = std::fs::read_dir(dir.join("out/merged/plots"))
        .expect("plots")
        .count();
    assert!(plots >= 4, "only {plots} plots");
    assert_eq!(page.matches("<figure>").count(), plots);

    // In the browser, with the probe (a copy of the page: the page itself stays as
    // written).
    let probed = dir.join("probed.html");
    std::fs::write(
        &probed,
        page.replacen("<head>", &format!("<head>\n{PROBE}"), 1),
    )
    .expect("probe copy");
    let (dom, console) = chromium(&exe, &probed, 1000, "--dump-dom", &dir.join("profile-dom"));
    assert!(
        console.is_empty(),
        "console messages:\n{}",
        console.join("\n")
    );
    let json = dom
        .split("<pre id=\"rbf-probe\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .unwrap_or_else(|| panic!("no probe output in the DOM:\n{dom}"))
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let probe: serde_json::Value = serde_json::from_str(&json).expect("probe JSON");
    assert_eq!(probe["errors"], serde_json::json!([]), "{probe}");
    let drawn = probe["plots"].as_array().expect("plots");
    assert_eq!(drawn.len(), plots, "{probe}");
    for p in drawn {
        for key in ["width", "height"] {
            assert!(
                num(p, key) > 100.0,
                "a plot drawn at {key} {}: {probe}",
                p[key]
            );
        }
        // Every text has a size (a font was found) and the marks are drawn.
        assert!(num(p, "texts") >= 5.0, "{p}");
        assert_eq!(num(p, "drawn_texts"), num(p, "texts"), "{p}");
        assert!(num(p, "drawn_marks") >= 3.0, "{p}");
        assert!(
            num(p, "right") <= f64::from(WIDTH),
            "a plot wider than the window: {probe}"
        );
    }
    assert_eq!(num(&probe, "inner_width"), f64::from(WIDTH), "{probe}");
    assert!(
        num(&probe, "scroll_width") <= num(&probe, "client_width"),
        "the page scrolls sideways at {WIDTH} px: {probe}"
    );
    for b in probe["boxes"].as_array().expect("boxes") {
        assert!(num(b, "right") <= f64::from(WIDTH), "{probe}");
    }
    // The results table (8 points) is wider than the window, in its own box.
    assert_eq!(num(&probe, "rows"), 8.0, "{probe}");
    assert!(
        probe["boxes"]
            .as_array()
            .expect("boxes")
            .iter()
            .any(|b| num(b, "inner") > num(b, "outer")),
        "{probe}"
    );
    // Two clicks on "#" sort the points in descending order.
    assert_eq!(probe["first_row_before_sort"], "0", "{probe}");
    assert_eq!(probe["first_row_after_sort"], "7", "{probe}");

    // The page as written, photographed at 1280 px (kept for people to look at).
    let shot = root.join("target/report-page-1280.png");
    let _ = std::fs::remove_file(&shot);
    let arg = format!("--screenshot={}", shot.display());
    let height = (num(&probe, "height") as u32).clamp(1000, 16000);
    let (_, console) = chromium(&exe, &merged_path, height, &arg, &dir.join("profile-shot"));
    assert!(
        console.is_empty(),
        "console messages:\n{}",
        console.join("\n")
    );
    let png = std::fs::read(&shot).expect("the screenshot");
    assert_eq!(png_size(&png).map(|s| s.0), Some(WIDTH));
}
