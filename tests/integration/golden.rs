//! Golden outputs: what each command printed for a results document it
//! saved (captured by tests/golden/capture), rendered again from that
//! document alone. A view that needs anything but the document, or a
//! change to any output byte, fails here.

use crate::util::*;
use std::path::{Path, PathBuf};

fn cases() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/cases")
}

/// The first line where `got` and `want` differ, for a readable failure.
fn first_difference(got: &str, want: &str) -> String {
    for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        if g != w {
            return format!("line {}:\n  got:  {g:?}\n  want: {w:?}", i + 1);
        }
    }
    format!(
        "lengths differ: got {} lines, want {} lines",
        got.lines().count(),
        want.lines().count()
    )
}

fn assert_same(what: &str, got: &[u8], want_file: &Path) {
    let want = std::fs::read(want_file).unwrap();
    if got != want.as_slice() {
        let (g, w) = (String::from_utf8_lossy(got), String::from_utf8_lossy(&want));
        panic!(
            "{what} differs from {}: {}",
            want_file.display(),
            first_difference(&g, &w)
        );
    }
}

/// `numabench report --format FORMAT NAME.FORMAT.doc.json` prints what the
/// command printed when it saved that document.
fn rendered_as_printed(name: &str, format: &str) {
    let dir = cases();
    let doc = dir.join(format!("{name}.{format}.doc.json"));
    let out = stdout_of([
        std::ffi::OsStr::new("report"),
        "--format".as_ref(),
        format.as_ref(),
        doc.as_os_str(),
    ]);
    assert_same(
        &format!("report --format {format} of {name}"),
        &out,
        &dir.join(format!("{name}.{format}")),
    );
}

/// Probes whose views draw every format from the document.
const RENDERED: &[(&str, &[&str])] = &[
    ("sweep", &["text", "csv", "json", "markdown", "latex"]),
    ("sweep-all", &["text", "csv", "json", "markdown", "latex"]),
    ("sweep-limited", &["text", "csv", "markdown", "latex"]),
    ("matrix", &["text", "csv", "json", "markdown", "latex"]),
    (
        "matrix-percore",
        &["text", "csv", "json", "markdown", "latex"],
    ),
    (
        "matrix-percore-runs",
        &["text", "csv", "json", "markdown", "latex"],
    ),
    ("mem", &["json", "csv", "markdown", "latex"]),
    ("mem-conv", &["json", "csv", "markdown", "latex"]),
    ("sched", &["text", "csv", "json", "markdown", "latex"]),
    ("autonuma", &["text", "csv", "json", "markdown", "latex"]),
    ("model", &["json"]),
    ("model-theta", &["json"]),
    ("model-validate", &["json"]),
    ("pcie", &["text", "csv", "json", "markdown", "latex"]),
    ("pcie-nophi", &["text", "csv"]),
    ("pcie-per-size", &["text", "markdown"]),
    ("pcie-4node", &["text", "markdown"]),
    (
        "pcie-two-node",
        &["text", "csv", "markdown", "latex", "html"],
    ),
    ("c2c", &["text", "csv", "json", "markdown", "latex"]),
    ("c2c-4node", &["text", "markdown"]),
    ("latency", &["text", "csv", "json", "markdown", "latex"]),
    ("mlp", &["text", "csv", "json", "markdown", "latex"]),
    ("loaded", &["text", "csv", "json", "markdown", "latex"]),
    ("peak", &["text", "csv", "json", "markdown", "latex"]),
];

#[test]
fn every_command_output_renders_from_its_document_alone() {
    for (name, formats) in RENDERED {
        for f in *formats {
            rendered_as_printed(name, f);
        }
    }
}

#[test]
fn model_of_a_matrix_file_is_unchanged() {
    let dir = cases();
    let doc = dir.join("matrix.json.doc.json");
    for (name, extra) in [("model", &[][..]), ("model-theta", &["--theta", "1"][..])] {
        for (format, flag) in [("text", None), ("json", Some("--json"))] {
            let mut args: Vec<std::ffi::OsString> = vec!["model".into(), doc.clone().into()];
            args.extend(extra.iter().map(|a| a.into()));
            args.extend(flag.map(|f| f.into()));
            let out = numabench().args(&args).current_dir(&dir).output().unwrap();
            assert_eq!(out.status.code(), Some(0));
            if format == "json" {
                // The document is new (times, command line); its records
                // are what is pinned.
                let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
                let want: serde_json::Value = serde_json::from_slice(
                    &std::fs::read(dir.join(format!("{name}.json"))).unwrap(),
                )
                .unwrap();
                assert_eq!(got["records"], want["records"], "{name} --json records");
            } else {
                assert_same(
                    &format!("{name} text"),
                    &out.stdout,
                    &dir.join(format!("{name}.{format}")),
                );
            }
        }
    }
}

#[test]
fn compare_of_two_files_is_unchanged() {
    let dir = cases();
    for format in ["text", "csv", "json", "markdown"] {
        let mut cmd = numabench();
        cmd.current_dir(&dir)
            .args(["compare", "matrix.text.doc.json", "matrix.json.doc.json"]);
        if format != "text" {
            cmd.arg(format!("--{format}"));
        }
        let out = cmd.output().unwrap();
        assert_same(
            &format!("compare --{format}"),
            &out.stdout,
            &dir.join(format!("compare.{format}")),
        );
    }
}

#[test]
fn the_html_report_is_unchanged() {
    let dir = cases();
    let out = numabench()
        .current_dir(&dir)
        .args([
            "report",
            "matrix.json.doc.json",
            "sweep-all.json.doc.json",
            "mem.json.doc.json",
        ])
        .output()
        .unwrap();
    assert_same("report", &out.stdout, &dir.join("report.html"));
}

/// `numabench model` prints, in text, a few things its records do not
/// keep (and its records are pinned above, so they cannot gain them): how
/// each row's classes were found (`  from node N: k = ...`), and for
/// `--validate` each memory node alone (the table) and the pages found per
/// node. It prints no title line either; a rendered document opens with
/// one. Everything else renders from the document alone, byte for byte.
#[test]
fn model_text_renders_from_its_document_but_for_what_records_do_not_keep() {
    let dir = cases();
    for name in ["model", "model-theta", "model-validate"] {
        let doc = dir.join(format!("{name}.text.doc.json"));
        let out = stdout_of([
            std::ffi::OsStr::new("report"),
            "--format".as_ref(),
            "text".as_ref(),
            doc.as_os_str(),
        ]);
        let got = String::from_utf8(out).unwrap();
        let (title, rest) = got.split_once("\n\n").unwrap();
        assert!(title.starts_with("numabench model: "), "{title}");
        let want = std::fs::read_to_string(dir.join(format!("{name}.text"))).unwrap();
        let mut in_table = false;
        let kept: Vec<&str> = want
            .lines()
            .filter(|l| {
                in_table =
                    l.starts_with("memory node  weight") || (in_table && !l.starts_with("  "));
                let how_classes_were_found = l.starts_with("  from node ") && l.contains(": k = ");
                let pages_found = l.starts_with("  pages found per node in the mixed run: ");
                !(in_table || how_classes_were_found || pages_found)
            })
            .collect();
        let got_lines: Vec<&str> = rest.lines().collect();
        assert_eq!(got_lines, kept, "{name}");
    }
}

/// Multiplies every `latency_ns` figure of the document `v` by `by`.
fn slow_latency(v: &mut serde_json::Value, by: f64) {
    for r in v["records"].as_array_mut().unwrap() {
        if let Some(m) = r.get_mut("metrics").and_then(|m| m.get_mut("latency_ns")) {
            m["value"] = serde_json::json!(m["value"].as_f64().unwrap() * by);
        }
    }
}

/// `fleet report` of two kinds made from the run documents of
/// tests/golden/cases: six one-node machines, p4 with half the bandwidth,
/// and three two-node ones, t2 with every latency half as long again.
#[test]
fn the_fleet_report_of_run_documents_is_unchanged() {
    let dir = cases();
    let fleet = tempfile::tempdir().unwrap();
    let read = |name: &str| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(dir.join(name)).unwrap()).unwrap()
    };
    let machines = [("p", "run.json", 6), ("t", "run-two-node.json", 3)];
    for (prefix, doc, count) in machines {
        for i in 1..=count {
            let mut v = read(doc);
            let name = format!("{prefix}{i}");
            v["host"]["batch_node"] = serde_json::json!(name);
            match name.as_str() {
                "p4" => super::fleet::halve_bandwidth(&mut v),
                "t2" => slow_latency(&mut v, 1.5),
                _ => {}
            }
            let path = fleet.path().join(format!("{name}.json"));
            std::fs::write(path, serde_json::to_vec(&v).unwrap()).unwrap();
        }
    }
    for format in ["text", "csv"] {
        let out = numabench()
            .current_dir(fleet.path())
            .args(["fleet", "report", ".", "--format", format])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "flagged machines");
        assert_same(
            &format!("fleet report --format {format}"),
            &out.stdout,
            &dir.join(format!("fleet-report.{format}")),
        );
    }
}
