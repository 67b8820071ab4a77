//! `numabench peak` end to end on this (one-node) machine with a small
//! working set and short runs: what is recorded and how it is shown, never
//! speed (scripts/bench-peers does that); several nodes and interleaving
//! are in vm.rs.

use crate::util::*;
use serde_json::Value;

const SHORT: [&str; 6] = ["--size", "16M", "--min-run-ms", "5", "--tries", "2"];

fn peak_json(extra: &[&str]) -> Value {
    let args: Vec<&str> = ["peak", "--json"]
        .iter()
        .chain(&SHORT)
        .chain(extra)
        .copied()
        .collect();
    serde_json::from_slice(&stdout_of(args)).unwrap()
}

fn of_kind<'a>(doc: &'a Value, kind: &str) -> Vec<&'a Value> {
    doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["params"]["kind"] == kind)
        .collect()
}

/// Whether this CPU has numabench's non-temporal kernels (AVX2 and up;
/// none on Arm).
fn has_nt_kernels() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("avx2");
    #[cfg(not(target_arch = "x86_64"))]
    return false;
}

fn mb_s(r: &Value) -> f64 {
    r["metrics"]["bandwidth_mb_s"]["value"].as_f64().unwrap()
}

#[test]
fn every_mix_and_store_kind_is_measured_verified_and_the_best_named() {
    let doc = peak_json(&["--mix", "read,1:1,write", "--threads", "1"]);
    let mixes = of_kind(&doc, "mix");
    let nt = has_nt_kernels();
    // Each mix twice where streaming loads and stores exist (read's
    // non-temporal kernel streams its loads), once elsewhere.
    assert_eq!(mixes.len(), if nt { 6 } else { 3 }, "{doc}");
    for r in &mixes {
        assert!(mb_s(r) > 0.0, "{r}");
        assert_eq!(r["params"]["threads"], 1);
        assert_eq!(r["params"]["target"], "0");
        assert_eq!(r["placement"]["on_target_pct"], 100.0, "{r}");
        let (reads, writes) = match r["params"]["mix"].as_str().unwrap() {
            "read" => (1, 0),
            "1:1" => (1, 1),
            "write" => (0, 1),
            other => panic!("mix {other} was not asked for"),
        };
        assert_eq!(r["params"]["read_streams"], reads);
        assert_eq!(r["params"]["write_streams"], writes);
        assert_eq!(r["params"]["bytes_per_element"], 8 * (reads + writes));
        assert_eq!(r["samples"]["bandwidth_mb_s"].as_array().unwrap().len(), 2);
    }
    // Read is measured in one pass and in several streams; one record per
    // load kind stays, naming the kernel that won, and a note says so.
    for r in mixes.iter().filter(|r| r["params"]["mix"] == "read") {
        let v = r["params"]["variant"].as_str().unwrap();
        assert!(v.starts_with("read_"), "{r}");
    }
    assert!(
        mixes
            .iter()
            .flat_map(|r| r["notes"].as_array().into_iter().flatten())
            .any(|n| n.as_str().unwrap().contains("read_s8_")),
        "{doc}"
    );
    let best = of_kind(&doc, "best");
    assert_eq!(best.len(), 1, "one CPU node, one target, one thread count");
    let top = mixes.iter().map(|r| mb_s(r)).fold(0.0, f64::max);
    assert_eq!(mb_s(best[0]), top);
    let winner = mixes.iter().find(|r| mb_s(r) == top).unwrap();
    for key in ["mix", "store", "variant"] {
        assert_eq!(best[0]["params"][key], winner["params"][key]);
    }
    assert_eq!(doc["complete"], true);
}

#[test]
fn text_names_the_best_and_shows_a_table_per_target() {
    let args: Vec<&str> = ["peak"]
        .iter()
        .chain(&SHORT)
        .chain(&["--mix", "triad", "--store", "regular"])
        .copied()
        .collect();
    let text = String::from_utf8(stdout_of(args)).unwrap();
    assert!(text.contains("CPU node 0 -> memory node 0, MB/s"), "{text}");
    assert!(
        text.contains("best with 1 thread(s): triad with regular stores"),
        "{text}"
    );
    assert!(!text.contains("1t non-temporal"), "{text}");
}

#[test]
fn bad_options_are_refused_before_measuring() {
    rejects(&["peak", "--mix", "4:1"], &["--mix 4:1", "3:1"]);
    rejects(&["peak", "--store", "fast"], &["--store fast", "regular"]);
    rejects(&["peak", "--threads", "0"], &["--threads 0", "1,all"]);
    rejects(&["peak", "--tries", "0"], "--tries");
    rejects(&["peak", "--min-run-ms", "0"], "--min-run-ms 0");
    rejects(&["peak", "--cpu-nodes", "7"], "--cpu-nodes");
    rejects(&["peak", "--size", "100T"], "--size");
}

/// Four emulated nodes, one CPU each: every CPU node reaches every memory
/// node and interleaved memory, every team's pages verified where they were
/// meant to be, and a best named for each.
#[test]
fn four_nodes_every_target_measured_and_verified() {
    let g = crate::vm::guest(
        &["--preset", "4n"],
        &[(
            "json",
            "numabench peak --mix read,1:1 --store regular --threads all --size 8M -r 1 --min-run-ms 5 --json",
        )],
    );
    assert_eq!(g.text("json.rc"), "0", "{}", g.text("json"));
    let doc = g.json("json");
    let mixes = of_kind(&doc, "mix");
    let mut seen = Vec::new();
    for r in &mixes {
        let c = r["params"]["cpu_node"].as_u64().unwrap();
        let target = r["params"]["target"].as_str().unwrap().to_string();
        let pages = r["placement"]["pages_by_node"].as_object().unwrap();
        assert_eq!(r["placement"]["on_target_pct"], 100.0, "{r}");
        assert_eq!(r["placement"]["cpus_seen"], serde_json::json!([c]), "{r}");
        if target == "interleave" {
            // 2 MiB chunks round robin: every node holds some of them.
            assert_eq!(pages.len(), 4, "{r}");
        } else {
            assert_eq!(pages.keys().collect::<Vec<_>>(), [&target], "{r}");
            assert_eq!(r["params"]["mem_node"].to_string(), target);
        }
        assert!(mb_s(r) > 0.0, "{r}");
        seen.push((c, target, r["params"]["mix"].as_str().unwrap().to_string()));
    }
    let targets = ["0", "1", "2", "3", "interleave"];
    for c in 0..4u64 {
        for t in targets {
            for mix in ["read", "1:1"] {
                assert!(
                    seen.contains(&(c, t.to_string(), mix.to_string())),
                    "{c}->{t} {mix} missing"
                );
            }
        }
    }
    assert_eq!(of_kind(&doc, "best").len(), 4 * targets.len());
    assert_eq!(doc["complete"], true);
}

#[test]
fn read_with_streaming_loads_is_named_by_its_loads() {
    if !has_nt_kernels() {
        return;
    }
    let args: Vec<&str> = ["peak"]
        .iter()
        .chain(&SHORT)
        .chain(&["--mix", "read", "--store", "nt"])
        .copied()
        .collect();
    let text = String::from_utf8(stdout_of(args)).unwrap();
    assert!(
        text.contains("best with 1 thread(s): read with non-temporal loads")
            && text.contains("_nt_"),
        "{text}"
    );
    assert!(!text.contains("read with non-temporal stores"), "{text}");
}
