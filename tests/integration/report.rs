//! `numabench report` rendered in headless Chromium, and `numabench
//! compare` on runs with a planted change.

use crate::util::{numabench, stdout_of};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn chromium() -> &'static str {
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        if Command::new(name).arg("--version").output().is_ok() {
            return name;
        }
    }
    panic!("no Chromium found: run scripts/prereqs --vm as root (Debian package chromium)");
}

/// Renders `url` in headless Chromium into `png`.
fn render(url: &str, png: &Path) {
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1200,1600",
            &format!("--screenshot={}", png.display()),
            url,
        ])
        .output()
        .expect("cannot run chromium");
    assert!(out.status.success(), "chromium failed: {out:?}");
}

/// Listens, before anything else on the page loads, for failed loads and
/// console errors, and after load writes what it found into the page.
const CHECKER_HEAD: &str = "<script>window.__errors=[];\
window.addEventListener('error',function(e){var t=e.target;\
window.__errors.push('load '+(t&&(t.src||t.href)||e.message));},true);\
var __ce=console.error;console.error=function(){window.__errors.push('console '+Array.from(arguments).join(' '));__ce.apply(console,arguments);};\
</script>";
const CHECKER_TAIL: &str = "<script>window.addEventListener('load',function(){\
var bad=Array.from(document.images).filter(function(i){return !i.complete||i.naturalWidth===0;}).length;\
var svgs=Array.from(document.querySelectorAll('svg'));\
var empty=svgs.filter(function(s){var r=s.getBoundingClientRect();return r.width<10||r.height<10;}).length;\
var p=document.createElement('pre');p.id='numabench-check';\
p.textContent='broken='+bad+' svgs='+svgs.length+' empty='+empty+' errors='+window.__errors.length+' '+window.__errors.join(';');\
document.body.appendChild(p);});</script>";

/// The DOM of `page` after its scripts ran, as headless Chromium dumps it.
pub(crate) fn dump_dom(page: &Path) -> String {
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=3000",
            "--dump-dom",
        ])
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("cannot run chromium");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What the checker found in `page` (a copy with the checker injected).
pub(crate) struct Check {
    pub(crate) broken_images: usize,
    pub(crate) svgs: usize,
    pub(crate) empty_svgs: usize,
    pub(crate) errors: usize,
    pub(crate) raw: String,
}

pub(crate) fn check_page(page: &Path, dir: &Path) -> Check {
    let html = std::fs::read_to_string(page).unwrap();
    let probed = html
        .replacen("<head>", &format!("<head>{CHECKER_HEAD}"), 1)
        .replacen("</body>", &format!("{CHECKER_TAIL}</body>"), 1);
    let copy = dir.join("checked.html");
    std::fs::write(&copy, probed).unwrap();
    let dom = dump_dom(&copy);
    let start = dom
        .find("<pre id=\"numabench-check\">")
        .unwrap_or_else(|| panic!("the checker did not run:\n{dom}"));
    let raw = dom[start..].lines().next().unwrap_or("").to_string();
    let field = |k: &str| -> usize {
        raw.split([' ', '>', '<'])
            .find_map(|w| w.strip_prefix(&format!("{k}=")))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {k} in {raw}"))
    };
    Check {
        broken_images: field("broken"),
        svgs: field("svgs"),
        empty_svgs: field("empty"),
        errors: field("errors"),
        raw: raw.clone(),
    }
}

fn png_ok(png: &Path) {
    let bytes = std::fs::read(png).unwrap_or_else(|e| panic!("{}: {e}", png.display()));
    assert!(
        bytes.starts_with(b"\x89PNG"),
        "{} is not a PNG",
        png.display()
    );
    assert!(bytes.len() > 5_000, "{} looks blank", png.display());
}

fn results(dir: &Path) -> (PathBuf, PathBuf) {
    let m = dir.join("matrix.json");
    let s = dir.join("sweep.json");
    stdout_of([
        "matrix",
        "--size",
        "16M",
        "--latency-size",
        "16M",
        "-r",
        "1",
        "--save",
        m.to_str().unwrap(),
    ]);
    stdout_of([
        "sweep",
        "-s",
        "64K",
        "-s",
        "1024K",
        "-s",
        "8192K",
        "-r",
        "1",
        "--save",
        s.to_str().unwrap(),
    ]);
    (m, s)
}

#[test]
fn report_renders_in_chromium_without_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (m, s) = results(dir.path());
    let html = dir.path().join("report.html");
    stdout_of([
        "report",
        m.to_str().unwrap(),
        s.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.len() < 2_000_000, "report is {} bytes", text.len());
    // Self-contained: nothing fetched from anywhere.
    // (The SVG namespace URI names, it does not fetch.)
    // One script, the table sorter, and nothing else.
    assert_eq!(text.matches("<script").count(), 1, "one script only");
    assert!(text.contains("<script>document.querySelectorAll('table')"));
    for bad in [
        "<img",
        "<link",
        "src=\"http",
        "href=\"http",
        "url(",
        "@import",
    ] {
        assert!(!text.contains(bad), "report contains {bad}");
    }
    let svgs = text.matches("<svg").count();
    assert!(svgs >= 3, "sweep and scaling charts");
    let check = check_page(&html, dir.path());
    assert_eq!(check.errors, 0, "{}", check.raw);
    assert_eq!(check.broken_images, 0, "{}", check.raw);
    assert_eq!(check.svgs, svgs, "{}", check.raw);
    assert_eq!(check.empty_svgs, 0, "every chart is drawn: {}", check.raw);
    // One screenshot per part: a copy of the report showing only that part.
    let parts: Vec<&str> = text
        .match_indices("<div class=\"part\" id=\"")
        .map(|(i, m)| {
            let rest = &text[i + m.len()..];
            &rest[..rest.find('"').unwrap()]
        })
        .collect();
    for id in [
        "topology-matrix",
        "matrix-matrix",
        "sweep-sweep",
        "topology-sweep",
    ] {
        assert!(parts.contains(&id), "no part {id} in {parts:?}");
    }
    let mut sizes = Vec::new();
    for id in &parts {
        let only = text.replacen(
            "</style>",
            &format!(".part{{display:none}}#{id}{{display:block}}</style>"),
            1,
        );
        let page = dir.path().join(format!("{id}.html"));
        std::fs::write(&page, only).unwrap();
        let png = dir.path().join(format!("{id}.png"));
        render(&format!("file://{}", page.display()), &png);
        png_ok(&png);
        sizes.push(std::fs::metadata(&png).unwrap().len());
    }
    // Different parts make different pictures.
    sizes.sort_unstable();
    sizes.dedup();
    assert_eq!(sizes.len(), parts.len(), "two parts rendered the same");
}

#[test]
fn the_error_check_sees_a_broken_image() {
    // The check above must be able to fail: a page with a missing image
    // logs a failed load.
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("broken.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><head></head><body><p>x</p><img src=\"missing.png\"></body></html>",
    )
    .unwrap();
    let check = check_page(&page, dir.path());
    assert_eq!(check.broken_images, 1, "{}", check.raw);
    assert_eq!(check.errors, 1, "{}", check.raw);
}

#[test]
fn hostile_hostname_does_not_inject_markup() {
    let dir = tempfile::tempdir().unwrap();
    let (m, _) = results(dir.path());
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&m).unwrap()).unwrap();
    doc["host"]["hostname"] = "<script>alert(1)</script><b>x".into();
    doc["records"][0]["name"] = "\"><img src=x>".into();
    let crafted = dir.path().join("crafted.json");
    std::fs::write(&crafted, doc.to_string()).unwrap();
    let html = String::from_utf8(stdout_of(["report", crafted.to_str().unwrap()])).unwrap();
    assert!(!html.contains("<script>alert"));
    assert!(!html.contains("<b>x"));
    assert!(!html.contains("<img src=x>"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;&lt;b&gt;x"));
}

/// A sweep results file with one record's figures scaled by `factor`.
fn planted(src: &Path, dst: &Path, name: &str, factor: f64) {
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(src).unwrap()).unwrap();
    for r in doc["records"].as_array_mut().unwrap() {
        if r["name"] == name {
            let m = r["metrics"]["bandwidth_mb_s"]["value"].as_f64().unwrap();
            r["metrics"]["bandwidth_mb_s"]["value"] = (m * factor).into();
            let s: Vec<f64> = r["samples"]["bandwidth_mb_s"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap() * factor)
                .collect();
            r["samples"]["bandwidth_mb_s"] = s.into();
        }
    }
    std::fs::write(dst, doc.to_string()).unwrap();
}

#[test]
fn compare_finds_a_planted_change() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.json");
    stdout_of([
        "sweep",
        "--op",
        "read",
        "--op",
        "copy",
        "-s",
        "256K",
        "-r",
        "5",
        "--save",
        base.to_str().unwrap(),
    ]);
    let other = dir.path().join("other.json");
    planted(&base, &other, "read 256K", 0.1);
    let out = numabench()
        .args(["compare", base.to_str().unwrap(), other.to_str().unwrap()])
        .args(["--labels", "kernelA,kernelB"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("kernelA") && text.contains("kernelB"),
        "{text}"
    );
    let read = text
        .lines()
        .find(|l| l.contains("read 256K bandwidth_mb_s"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        read.contains("-90.0% "),
        "a tenth of the bandwidth is -90% and not noise: {read}"
    );
    let copy = text
        .lines()
        .find(|l| l.contains("copy 256K bandwidth_mb_s"))
        .unwrap();
    assert!(
        copy.contains("+0.0%~"),
        "an unchanged figure is within noise: {copy}"
    );
    let csv = String::from_utf8(stdout_of([
        "compare",
        base.to_str().unwrap(),
        other.to_str().unwrap(),
        "--csv",
    ]))
    .unwrap();
    let row = csv
        .lines()
        .find(|l| l.contains(",read 256K,bandwidth_mb_s,"))
        .unwrap();
    assert!(row.ends_with(",-90.000,false"), "{row}");
    let json: Value = serde_json::from_slice(&stdout_of([
        "compare",
        base.to_str().unwrap(),
        other.to_str().unwrap(),
        "--json",
    ]))
    .unwrap();
    assert_eq!(json["labels"][0], "base");
    let md = String::from_utf8(stdout_of([
        "compare",
        base.to_str().unwrap(),
        other.to_str().unwrap(),
        "--markdown",
    ]))
    .unwrap();
    assert!(md.contains("| read 256K | bandwidth_mb_s |"), "{md}");
}

#[test]
fn compare_and_report_refuse_bad_files_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"tool\":\"numabench\",\"schema\":1,").unwrap();
    for args in [
        vec!["compare", bad.to_str().unwrap(), bad.to_str().unwrap()],
        vec!["report", bad.to_str().unwrap()],
        vec!["compare", "/nonexistent.json", bad.to_str().unwrap()],
    ] {
        let out = numabench().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("numabench: error:"), "{err}");
        assert!(out.stdout.is_empty());
    }
}

/// Clicks the heading of a table's second column, once and twice, and
/// writes the first column's order after each into the page.
const SORT_PROBE: &str = "<script>window.addEventListener('load',function(){\
var t=Array.from(document.querySelectorAll('table')).find(function(t){return t.rows.length>=4&&t.rows[0].cells.length>=2;});\
var col=function(){return Array.from(t.rows).slice(1).map(function(r){return r.cells[1].textContent;}).join(',');};\
var th=t.rows[0].cells[1];th.click();var up=col();th.click();var down=col();\
var p=document.createElement('pre');p.id='numabench-sort';p.textContent='up='+up+' down='+down;\
document.body.appendChild(p);});</script>";

#[test]
fn a_table_sorts_by_a_clicked_column() {
    let dir = tempfile::tempdir().unwrap();
    let (_, s) = results(dir.path());
    let html = dir.path().join("report.html");
    stdout_of(["report", s.to_str().unwrap(), "-o", html.to_str().unwrap()]);
    let page = std::fs::read_to_string(&html).unwrap().replacen(
        "</body>",
        &format!("{SORT_PROBE}</body>"),
        1,
    );
    let copy = dir.path().join("sort.html");
    std::fs::write(&copy, page).unwrap();
    let dom = dump_dom(&copy);
    let line = dom
        .split("<pre id=\"numabench-sort\">")
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .unwrap_or_else(|| panic!("the sort probe did not run:\n{dom}"));
    // The first such table is the topology's caches; column 1 is a size.
    let bytes = |cell: &str| -> Option<f64> {
        let (n, unit) = cell.trim().split_once(' ')?;
        let scale = match unit {
            "B" => 1.0,
            "KiB" => 1024.0,
            "MiB" => 1048576.0,
            "GiB" => 1073741824.0,
            _ => return None,
        };
        Some(n.parse::<f64>().ok()? * scale)
    };
    let (up, down) = line
        .strip_prefix("up=")
        .and_then(|l| l.split_once(" down="))
        .unwrap_or_else(|| panic!("{line}"));
    let list = |v: &str| -> Vec<f64> { v.split(',').filter_map(bytes).collect() };
    let (up, down) = (list(up), list(down));
    assert!(up.len() >= 3, "{line}");
    assert!(up.windows(2).all(|w| w[0] <= w[1]), "ascending: {line}");
    assert!(down.windows(2).all(|w| w[0] >= w[1]), "descending: {line}");
}
