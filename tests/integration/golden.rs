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
    ("sweep", &["json"]),
    ("sweep-all", &["json"]),
    ("matrix", &["text", "csv", "json", "markdown", "latex"]),
    (
        "matrix-percore",
        &["text", "csv", "json", "markdown", "latex"],
    ),
    ("mem", &["json"]),
    ("mem-conv", &["json"]),
    ("sched", &["json"]),
    ("autonuma", &["json"]),
    ("model", &["json"]),
    ("model-theta", &["json"]),
    ("model-validate", &["json"]),
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
