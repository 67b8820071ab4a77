//! `numabench loaded` end to end on this machine with small buffers and a
//! short curve: what is recorded and shown, never speed (scripts/bench-peers
//! compares it with multiload); the multi-node behaviour is in vm.rs.

use crate::util::*;
use serde_json::Value;

const SMALL: [&str; 4] = ["--size", "16M", "--injector-size", "8M"];

/// `loaded` on small buffers with `extra`, delays 0 and 2000 ns unless
/// `extra` names them.
fn run(extra: &[&str]) -> String {
    let delays: &[&str] = if extra.contains(&"--delays") {
        &[]
    } else {
        &["--delays", "0,2000"]
    };
    let args: Vec<&str> = ["loaded"]
        .iter()
        .chain(&SMALL)
        .chain(delays)
        .chain(extra)
        .copied()
        .collect();
    String::from_utf8(stdout_of(args)).unwrap()
}

fn kind<'a>(doc: &'a Value, k: &str) -> Vec<&'a Value> {
    doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["params"]["kind"] == k)
        .collect()
}

#[test]
fn a_short_curve_records_idle_and_each_delay_pinned_and_verified() {
    let doc: Value = serde_json::from_str(&run(&["--json"])).unwrap();
    assert_eq!(doc["complete"], true);
    let points = kind(&doc, "point");
    // Idle first, then from the longest delay to none.
    let delays: Vec<Option<u64>> = points
        .iter()
        .map(|p| p["params"]["delay_ns"].as_u64())
        .collect();
    assert_eq!(delays, [None, Some(2000), Some(0)]);
    for p in &points {
        let lat = p["metrics"]["latency_ns"]["value"].as_f64().unwrap();
        assert!(lat > 0.0, "{p}");
        assert!(!p["samples"]["latency_ns"].as_array().unwrap().is_empty());
        let place = &p["placement"];
        assert_eq!(place["on_target_pct"], 100.0, "{p}");
        let cpus = place["cpus_seen"].as_array().unwrap();
        assert_eq!(
            cpus[0], p["params"]["cpu"],
            "the chase ran where it was put"
        );
        let bw = p["metrics"]["bandwidth_mb_s"]["value"].as_f64().unwrap();
        if p["params"]["delay_ns"].is_null() {
            assert_eq!(bw, 0.0, "parked injectors move nothing");
            assert_eq!(cpus.len(), 1);
        } else {
            assert!(bw > 0.0, "{p}");
            assert!(cpus.len() >= 2, "the injectors' CPUs are listed: {p}");
        }
    }
    let knee = kind(&doc, "knee");
    assert_eq!(knee.len(), 1);
    assert!(
        knee[0]["metrics"]["idle_latency_ns"]["value"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert_eq!(knee[0]["series"][0]["x"].as_array().unwrap().len(), 3);
}

#[test]
fn text_csv_and_html_show_the_curve() {
    let text = run(&["--traffic", "copy"]);
    assert!(text.contains("loaded latency by node pair"), "{text}");
    assert!(text.contains("idle"), "{text}");
    assert!(text.contains("copy with kernel copy_"), "{text}");
    let csv = run(&["--csv", "--delays", "0"]);
    let mut lines = csv.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("cpu_node,mem_node,delay_ns")
    );
    let rows: Vec<&str> = lines.filter(|l| !l.starts_with('#')).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    let html = run(&["--html", "--delays", "0"]);
    assert!(html.contains("<svg"), "a chart is drawn");
    assert!(html.contains("Loaded latency"));
}

#[test]
fn bad_options_are_refused_before_measuring() {
    rejects(&["loaded", "--delays", "0,x"], &["--delays", "'x'"]);
    rejects(&["loaded", "--delays", "2000000000"], "--delays");
    rejects(
        &["loaded", "--traffic", "triad"],
        &["--traffic", "read, copy or copy-nt"],
    );
    rejects(&["loaded", "--pairs", "some"], "--pairs");
    rejects(&["loaded", "--time-limit", "-1"], "--time-limit");
    rejects(&["loaded", "--injectors", "0"], "--injectors 0");
    // More injectors than the node has CPUs free: refused, not run with fewer.
    rejects(
        &["loaded", "--injectors", "100000"],
        &["--injectors 100000", "or fewer"],
    );
    rejects(&["loaded", "--size", "1K"], "--size");
    rejects(&["loaded", "--mem-nodes", "7"], "--mem-nodes 7");
    rejects(&["loaded", "--injector-node", "9"], "--injector-node 9");
    rejects(&["loaded", "--size", "100T"], &["--size", "free"]);
    rejects(
        &["loaded", "--kernel-variant", "read_sse9"],
        &[
            "--kernel-variant read_sse9",
            "no such kernel",
            "--list-kernels",
        ],
    );
    rejects(
        &["loaded", "--kernel-variant", "write_portable"],
        &["write_portable", "--traffic read", "read_portable"],
    );
    rejects(
        &[
            "loaded",
            "--traffic",
            "copy-nt",
            "--kernel-variant",
            "copy_portable",
        ],
        &["copy_portable", "regular stores", "--traffic copy-nt"],
    );
}

#[test]
fn a_kernel_asked_for_by_name_injects_and_is_recorded() {
    let doc: Value = serde_json::from_str(&run(&[
        "--json",
        "--traffic",
        "copy",
        "--kernel-variant",
        "copy_portable",
        "--delays",
        "0",
    ]))
    .unwrap();
    let points = kind(&doc, "point");
    assert_eq!(points.len(), 2, "idle and full load");
    for r in points.iter().chain(&kind(&doc, "knee")) {
        assert_eq!(r["params"]["kernel"], "copy_portable", "{r}");
    }
    let full = points[1]["metrics"]["bandwidth_mb_s"]["value"].as_f64();
    assert!(full.unwrap() > 0.0, "{}", points[1]);
    let text = run(&["--kernel-variant", "read_portable", "--delays", "0"]);
    assert!(text.contains("read with kernel read_portable"), "{text}");
    assert!(
        !text.contains("injector kernel"),
        "no trial for a given kernel: {text}"
    );
}

#[test]
fn without_a_kernel_the_fastest_in_a_trial_injects_and_the_note_says_so() {
    let list = String::from_utf8(stdout_of(["sweep", "--list-kernels"])).unwrap();
    for mix in ["read", "copy"] {
        // The mix's kernels this CPU runs: its op, regular loads or stores.
        let here = list
            .lines()
            .filter_map(|l| l.split_whitespace().next().filter(|_| l.ends_with("yes")))
            .filter(|k| k.starts_with(&format!("{mix}_")) && !k.contains("_nt"))
            .count();
        assert!(here >= 1, "{list}");
        let doc: Value =
            serde_json::from_str(&run(&["--json", "--traffic", mix, "--delays", "0"])).unwrap();
        let points = kind(&doc, "point");
        let kernel = points[0]["params"]["kernel"].as_str().unwrap();
        assert!(kernel.starts_with(mix), "{kernel}");
        let notes: Vec<&str> = points
            .iter()
            .flat_map(|p| p["notes"].as_array().into_iter().flatten())
            .filter_map(Value::as_str)
            .filter(|n| n.starts_with("injector kernel"))
            .collect();
        if here == 1 {
            // One kernel (a copy on a CPU without AVX2): nothing to try.
            assert!(notes.is_empty(), "{notes:?}");
            continue;
        }
        assert_eq!(notes.len(), 1, "one trial note per curve: {notes:?}");
        let note = notes[0];
        assert!(
            note.starts_with(&format!(
                "injector kernel {kernel}: the widest of those within"
            )),
            "the pick is the kernel recorded: {note}"
        );
        // Every rival is named with its rate.
        let (_, rivals) = note.split_once("MB/s; ").unwrap();
        let rivals: Vec<&str> = rivals.strip_suffix(')').unwrap().split(", ").collect();
        assert_eq!(rivals.len(), here - 1, "{note}");
        for r in rivals {
            let (name, rate) = r.rsplit_once(' ').unwrap();
            assert!(name.starts_with(mix) && name != kernel, "{note}");
            assert!(rate.parse::<f64>().unwrap() > 0.0, "{note}");
        }
    }
}
