//! `numabench latency` and `numabench mlp`, and the chase pattern options of
//! sweep and matrix: bad input is one line and exit 2 before anything is
//! measured; small real runs give a record per cell with its pattern, page
//! kind and verified placement.

use crate::util::*;
use serde_json::Value;

#[test]
fn chase_options_that_cannot_be_measured_are_refused() {
    rejects(
        &["latency", "--pattern", "random"],
        &["--pattern", "'random'", "page-local"],
    );
    rejects(
        &["latency", "--window", "100"],
        &["--window 100", "multiple of 256"],
    );
    rejects(
        &["latency", "--stride", "64"],
        &["--stride 64", "--pattern stride"],
    );
    rejects(
        &["latency", "--pattern", "stride", "--stride", "12"],
        &["--stride 12", "multiple of 8"],
    );
    rejects(&["latency", "--pages", "huge"], &["--pages", "huge"]);
    rejects(&["latency", "-s", "100T"], &["--size 100T", "free"]);
    rejects(&["latency", "-s", "4K"], &["--size 4K"]);
    rejects(&["latency", "--mem-nodes", "7"], &["--mem-nodes", "7"]);
    rejects(&["mlp", "-n", "1,17"], &["--chases 17", "1 to 16"]);
    rejects(&["mlp", "--pairs", "near"], &["--pairs near", "local-far"]);
    rejects(
        &["mlp", "--pattern", "stride", "--stride", "64"],
        &["--stride 64", "256"],
    );
    rejects(
        &["sweep", "--op", "latency", "--pattern", "zigzag"],
        &["--pattern", "'zigzag'"],
    );
    rejects(
        &["matrix", "--stride", "128"],
        &["--stride", "--pattern stride"],
    );
    rejects(
        &["matrix", "--latency-pages", "huge"],
        &["--latency-pages", "'huge'", "hugetlb"],
    );
}

fn records(args: &[&str]) -> Vec<Value> {
    let doc: Value = serde_json::from_slice(&stdout_of(args)).unwrap();
    assert_eq!(doc["complete"], true);
    doc["records"].as_array().unwrap().clone()
}

#[test]
fn latency_names_pattern_and_pages_of_every_cell() {
    let recs = records(&[
        "latency",
        "-s",
        "2M",
        "--pages",
        "base",
        "--pattern",
        "page-local,stride",
        "--stride",
        "64,512",
        "--window",
        "64K",
        "--json",
    ]);
    let nodes = recs
        .iter()
        .map(|r| r["params"]["mem_node"].clone())
        .collect::<Vec<_>>();
    let pairs = nodes.len() / 3;
    assert_eq!(recs.len(), 3 * pairs, "page-local and two strides per pair");
    let mut kinds: Vec<String> = recs
        .iter()
        .map(|r| {
            let p = &r["params"];
            assert_eq!(p["pages_asked"], "base");
            assert_eq!(p["page_size"], "base");
            assert_eq!(r["placement"]["on_target_pct"], 100.0, "{r}");
            assert!(r["metrics"]["latency_ns"]["value"].as_f64().unwrap() > 0.0);
            assert!(r["samples"]["latency_ns"].as_array().unwrap().len() >= 7);
            match p["pattern"].as_str().unwrap() {
                "page-local" => {
                    assert_eq!(p["window_bytes"], 65536);
                    assert_eq!(p["spacing_bytes"], 256);
                    "page-local".to_string()
                }
                "stride" => format!("stride:{}", p["stride_bytes"]),
                other => panic!("pattern {other}"),
            }
        })
        .collect();
    kinds.sort();
    kinds.dedup();
    assert_eq!(kinds, ["page-local", "stride:512", "stride:64"]);
}

#[test]
fn mlp_gives_every_chase_count_with_one_as_the_reference() {
    let recs = records(&["mlp", "-s", "8M", "-n", "2,4", "--pages", "base", "--json"]);
    let counts: Vec<u64> = recs
        .iter()
        .map(|r| r["params"]["chases"].as_u64().unwrap())
        .collect();
    assert_eq!(&counts[..3], [1, 2, 4], "1 is measured though not asked");
    let m = |r: &Value, k: &str| r["metrics"][k]["value"].as_f64().unwrap();
    assert_eq!(m(&recs[0], "concurrency"), 1.0);
    for r in &recs {
        let n = r["params"]["chases"].as_f64().unwrap();
        let ns = m(r, "ns_per_access");
        assert!((m(r, "chase_latency_ns") - n * ns).abs() < 1e-6 * n * ns);
        let in_flight = m(&recs[0], "ns_per_access") / ns;
        match r["metrics"]["concurrency"]["value"].as_f64() {
            Some(c) => assert!((c - in_flight).abs() < 1e-9 && c <= n, "{r}"),
            // More in flight than chases is never shown, only said.
            None => assert!(
                in_flight > n && r["notes"].to_string().contains("in flight not shown"),
                "{r}"
            ),
        }
        assert_eq!(r["params"]["pattern"], "page-local");
        assert_eq!(r["placement"]["on_target_pct"], 100.0, "{r}");
    }
}

#[test]
fn mlp_stride_chases_step_the_stride_asked() {
    let recs = records(&[
        "mlp",
        "-s",
        "8M",
        "-n",
        "2",
        "--pages",
        "base",
        "--pattern",
        "stride",
        "--stride",
        "4K",
        "--json",
    ]);
    assert_eq!(recs.len(), 2 * (recs.len() / 2), "chases 1 and 2 per pair");
    for r in &recs {
        assert_eq!(r["params"]["pattern"], "stride", "{r}");
        assert_eq!(r["params"]["stride_bytes"], 4096, "{r}");
        assert_eq!(r["params"]["spacing_bytes"], 4096, "{r}");
    }
}

#[test]
fn matrix_latency_takes_the_pages_asked() {
    let recs = records(&[
        "matrix",
        "--no-peak",
        "--no-saturated",
        "-s",
        "16M",
        "--latency-size",
        "16M",
        "--latency-pages",
        "base",
        "--pattern",
        "page-local",
        "--json",
    ]);
    let lat: Vec<&Value> = recs
        .iter()
        .filter(|r| r["params"]["kind"] == "latency")
        .collect();
    assert!(!lat.is_empty());
    for r in lat {
        assert_eq!(r["params"]["page_size"], "base", "{r}");
        assert_eq!(r["params"]["pattern"], "page-local", "{r}");
    }
}

#[test]
fn sweep_latency_records_carry_the_pattern() {
    let recs = records(&[
        "sweep",
        "--op",
        "latency",
        "-s",
        "1M",
        "--pattern",
        "page-local",
        "--json",
    ]);
    assert_eq!(recs[0]["params"]["pattern"], "page-local");
    assert_eq!(recs[0]["params"]["window_bytes"], 262144);
    let recs = records(&["sweep", "--op", "latency", "-s", "1M", "--json"]);
    assert_eq!(recs[0]["params"]["pattern"], "full-random");
    assert_eq!(recs[0]["params"]["spacing_bytes"], 64);
}
