//! `numabench c2c` on this machine: every pair of the allowed CPUs
//! measured with verified pinning, in every format; bad input refused.

use crate::util::*;
use serde_json::Value;

fn allowed_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[test]
fn every_pair_is_measured_and_pinned() {
    if allowed_cpus() < 2 {
        eprintln!("skipped: core-to-core latency needs two CPUs");
        return;
    }
    let out = stdout_of([
        "c2c",
        "-i",
        "20",
        "--samples",
        "5",
        "--variant",
        "all",
        "--json",
    ]);
    let doc: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(doc["complete"], true);
    let recs = doc["records"].as_array().unwrap();
    let n = allowed_cpus().min(64);
    let variants = recs
        .iter()
        .map(|r| r["params"]["variant"].as_str().unwrap())
        .collect::<std::collections::BTreeSet<_>>();
    assert!(
        variants.contains("cas") && variants.contains("store"),
        "{variants:?}"
    );
    // The ping-pong variants once per pair, the read variants both ways.
    let ways: usize = variants
        .iter()
        .map(|v| if v.ends_with("-read") { 2 } else { 1 })
        .sum();
    assert_eq!(recs.len(), ways * n * (n - 1) / 2);
    let reads_both_ways = |v: &str| {
        recs.iter().any(|r| {
            r["params"]["variant"] == v
                && r["params"]["cpu"].as_u64() > r["params"]["peer_cpu"].as_u64()
        })
    };
    assert!(reads_both_ways("modified-read") && !reads_both_ways("cas"));
    for r in recs {
        assert_eq!(r["params"]["pinning_verified"], true, "{r}");
        assert_eq!(r["samples"]["latency_ns"].as_array().unwrap().len(), 5);
        let median = r["metrics"]["latency_ns"]["value"].as_f64().unwrap();
        assert!(median > 0.0 && median < 1e6, "{r}");
        // The CPUs the two threads were seen on, lower first.
        let seen = &r["placement"]["cpus_seen"];
        let (a, b) = (
            r["params"]["cpu"].as_u64(),
            r["params"]["peer_cpu"].as_u64(),
        );
        assert_eq!(seen[0].as_u64(), a.min(b), "{r}");
        assert_eq!(seen[1].as_u64(), a.max(b), "{r}");
    }
}

#[test]
fn text_csv_and_html_show_the_tables() {
    if allowed_cpus() < 2 {
        return;
    }
    let text = String::from_utf8(stdout_of([
        "c2c",
        "-i",
        "20",
        "--samples",
        "3",
        "--format",
        "text",
    ]))
    .unwrap();
    for want in [
        "cas: one-way latency by class (ns)",
        "cas: node x node, median of the pair medians (ns)",
        "cas: CPU x CPU, median of each pair (ns)",
        "clean-read: every pair (ns)",
    ] {
        assert!(text.contains(want), "{want}:\n{text}");
    }
    let csv = String::from_utf8(stdout_of(["c2c", "-i", "20", "--samples", "3", "--csv"])).unwrap();
    assert!(csv.starts_with("variant,cpu,peer_cpu,cpu_node,peer_node,class,mem_node,latency_ns,"));
    let html =
        String::from_utf8(stdout_of(["c2c", "-i", "20", "--samples", "3", "--html"])).unwrap();
    assert!(html.contains("Core-to-core latency") && html.contains("title=\"100%\""));
}

#[test]
fn bad_input_is_refused() {
    rejects(
        &["c2c", "--variant", "pingpong"],
        &["--variant pingpong", "clean-read"],
    );
    rejects(&["c2c", "--cpus", "0"], &["at least two CPUs"]);
    rejects(&["c2c", "--cpus", "0,4095"], &["CPU 4095"]);
    rejects(&["c2c", "--samples", "0"], &["--samples 0", "1 to 100000"]);
    rejects(&["c2c", "-i", "0"], &["--iterations 0"]);
    rejects(&["c2c", "--per-group", "0"], &["--per-group 0"]);
    rejects(
        &["c2c", "--line-home", "owner"],
        &["--line-home owner", "cpu, peer"],
    );
    rejects(
        &["c2c", "--line-home", "4095"],
        &["node 4095 does not exist"],
    );
}
