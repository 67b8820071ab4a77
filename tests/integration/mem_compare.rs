//! `numabench mem` results as perf's result mails compare them (one table
//! per metric, no % from a base of 0), perf's banner line, and where the
//! memory is over time.

use crate::util::*;
use serde_json::{Value, json};
use std::path::Path;

/// A short `mem` run with -c -m saved to `path`: one process, so it is
/// converged at the first look and -m stops it there.
fn mem_run(path: &Path) {
    stdout_of([
        "mem",
        "-p",
        "1",
        "-t",
        "1",
        "-P",
        "16",
        "-s",
        "5",
        "-c",
        "-m",
        "-q",
        "--save",
        path.to_str().unwrap(),
    ]);
}

/// Sets the counter of migrated pages of the file's first record.
fn set_migrated(path: &Path, pages: f64) {
    let mut doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    doc["records"][0]["metrics"]["numa_pages_migrated"] =
        json!({"value": pages, "unit": "count", "better": "lower"});
    std::fs::write(path, doc.to_string()).unwrap();
}

fn line_of<'a>(text: &'a str, table: &str, unit: &str) -> &'a str {
    let from = text
        .find(&format!(" {table}\n"))
        .unwrap_or_else(|| panic!("no {table} table:\n{text}"));
    text[from..]
        .lines()
        .find(|l| l.starts_with(" main ") && l.ends_with(unit))
        .unwrap_or_else(|| panic!("no main row in {table}:\n{text}"))
}

#[test]
fn compare_of_two_mem_runs_by_metric_has_the_mails_tables() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    mem_run(&a);
    mem_run(&b);
    // 0 -> 32,787 migrated pages: no percentage exists.
    set_migrated(&a, 0.0);
    set_migrated(&b, 32787.0);
    let args = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = ["compare", a.to_str().unwrap(), b.to_str().unwrap()]
            .iter()
            .map(|s| s.to_string())
            .collect();
        v.extend(
            [
                "--labels",
                "v3.7,numa-u-v3",
                "--metric",
                "convergence_latency_s",
                "--metric",
                "total_speed_gb_s",
                "--metric",
                "spread_runtime_pct",
                "--metric",
                "numa_pages_migrated",
            ]
            .iter()
            .chain(extra)
            .map(|s| s.to_string()),
        );
        v
    };
    let text = String::from_utf8(stdout_of(args(&[]))).unwrap();
    // The tables in the order asked for.
    let at = |t: &str| text.find(&format!(" {t}\n")).unwrap();
    assert!(
        at("convergence_latency_s") < at("total_speed_gb_s"),
        "{text}"
    );
    assert!(at("total_speed_gb_s") < at("numa_pages_migrated"), "{text}");
    assert!(text.contains("[test unit]"), "{text}");
    // Seconds without a change column, as the mails' convergence table.
    let conv = line_of(&text, "convergence_latency_s", "secs");
    assert!(!conv.contains('%') && !conv.contains("new"), "{conv}");
    assert_eq!(conv.matches('|').count(), 2, "one column per file: {conv}");
    // GB/sec with the change against the base.
    let speed = line_of(&text, "total_speed_gb_s", "GB/sec");
    assert!(speed.contains("%"), "{speed}");
    // The spread is percent, without a change.
    let spread = line_of(&text, "spread_runtime_pct", "%");
    assert_eq!(
        spread.matches('%').count(),
        3,
        "two figures and the unit: {spread}"
    );
    let migrated = line_of(&text, "numa_pages_migrated", "count");
    assert!(migrated.contains("32787: new |"), "{migrated}");
    assert!(
        !text.contains("-0.0%") && !migrated.contains("+0.0%"),
        "{text}"
    );

    // Other formats: the named metrics alone, the zero base without a %.
    let csv = String::from_utf8(stdout_of(args(&["--csv"]))).unwrap();
    assert_eq!(csv.lines().count(), 5, "{csv}");
    let row = csv
        .lines()
        .find(|l| l.contains(",numa_pages_migrated,"))
        .unwrap();
    assert!(row.ends_with(",0,32787,,"), "{row}");

    // A metric no record has is one line and exit 2.
    rejects(
        &[
            "compare",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--metric",
            "total_speed",
        ],
        &["--metric total_speed", "total_speed_gb_s"],
    );
}

#[test]
fn mem_banner_perf_prints_perfs_first_line() {
    let text = String::from_utf8(stdout_of([
        "mem", "-p", "1", "-t", "1", "-P", "16", "-l", "1", "--banner", "perf",
    ]))
    .unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "# Running 'numa/mem' benchmark:", "{text}");
    assert_eq!(lines[1], "");
    assert!(lines[2].starts_with(" # Running main, \""), "{text}");
    // perf's own, where perf is installed.
    if let Ok(out) = std::process::Command::new("perf")
        .args([
            "bench", "numa", "mem", "-p", "1", "-t", "1", "-P", "16", "-l", "1",
        ])
        .output()
        && out.status.success()
    {
        let perf = String::from_utf8_lossy(&out.stdout);
        let perf_lines: Vec<&str> = perf.lines().collect();
        assert_eq!(perf_lines[..2], lines[..2], "{perf}");
        assert!(perf_lines[2].starts_with(" # Running main, \""), "{perf}");
    }
    let plain = String::from_utf8(stdout_of([
        "mem", "-p", "1", "-t", "1", "-P", "16", "-l", "1",
    ]))
    .unwrap();
    assert!(!plain.contains("'numa/mem'"), "{plain}");
    rejects(
        &["mem", "-p", "1", "-t", "1", "-P", "16", "--banner", "gnu"],
        "--banner",
    );
}

#[test]
fn mem_memory_per_node_is_printed_and_kept_as_a_series() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("m.json");
    let text = String::from_utf8(stdout_of([
        "mem",
        "-p",
        "1",
        "-t",
        "2",
        "-P",
        "32",
        "-s",
        "2",
        "-c",
        "--memory-per-node",
        "--save",
        saved.to_str().unwrap(),
    ]))
    .unwrap();
    let head = text
        .find(" # memory per node once a second, MiB/tasks")
        .unwrap_or_else(|| panic!("{text}"));
    let looks: Vec<&str> = text[head..]
        .lines()
        .skip(2)
        .take_while(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            t.len() > 3 && t[0] == "#" && t[1].parse::<f64>().is_ok() && t[2] == "s"
        })
        .collect();
    assert!(looks.len() >= 2, "a look a second for 2 s: {text}");
    // The 32 MiB of the process, on the nodes together, and two tasks.
    for l in &looks {
        let cells: Vec<(u64, u64)> = l
            .split_whitespace()
            .filter_map(|c| c.split_once('/'))
            .map(|(m, t)| (m.parse().unwrap(), t.parse().unwrap()))
            .collect();
        let mib: u64 = cells.iter().map(|c| c.0).sum();
        let tasks: u64 = cells.iter().map(|c| c.1).sum();
        assert!((30..=33).contains(&mib), "{l}");
        assert_eq!(tasks, 2, "{l}");
    }
    assert!(text.contains(" # convergence: CPU side "), "{text}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    let rec = &doc["records"][0];
    let series = rec["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "memory_per_node")
        .unwrap_or_else(|| panic!("{rec}"));
    assert_eq!(series["y_unit"], "MiB");
    assert_eq!(series["x"].as_array().unwrap().len(), looks.len());
    assert!(
        rec["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("memory per node: ")),
        "{rec}"
    );
}
