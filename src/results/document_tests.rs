use super::*;
use serde_json::json;

fn fixture_topology() -> Topology {
    crate::topology::fixture("local-1node")
}

fn sample() -> Document {
    let mut doc = Document::new(&fixture_topology());
    let mut rec = Record::new("matrix", "triad 0->0")
        .param("cpu_node", 0)
        .param("mem_node", 0)
        .metric("bandwidth_mb_s", 12_345.6, "MB/s", Better::Higher);
    rec.samples
        .insert("bandwidth_mb_s".into(), vec![12_000.0, 12_345.6]);
    rec.placement = Some(Placement {
        pages_by_node: [("0".to_string(), 512)].into(),
        on_target_pct: Some(100.0),
        huge_pct: 0.0,
        cpus_seen: vec![1],
    });
    doc.records.push(rec);
    doc.finish();
    doc
}

#[test]
fn a_partly_unreadable_newer_file_keeps_what_it_can() {
    let mut v: Value = serde_json::from_slice(&sample().to_json().unwrap()).unwrap();
    v["schema"] = 7.into();
    let good = v["records"][0].clone();
    let mut bad = good.clone();
    bad["name"] = "changed".into();
    bad["metrics"]["bandwidth_mb_s"] = "now a string".into();
    v["records"] = vec![good, bad].into();
    v["host"]["topology"]["nodes"] = "now a string".into();
    let loaded = Document::from_json(&v.to_string()).unwrap();
    assert_eq!(loaded.document.records.len(), 1);
    assert_eq!(loaded.document.records[0].name, "triad 0->0");
    assert_eq!(loaded.document.host.hostname, sample().host.hostname);
    let w = loaded.warnings.join("\n");
    assert!(w.contains("schema 7 is newer"), "{w}");
    assert!(w.contains("record 2 (changed) cannot be read"), "{w}");
    assert!(w.contains("host description cannot be read"), "{w}");
    // Without a records list there is nothing to read.
    v.as_object_mut().unwrap().remove("records");
    let err = Document::from_json(&v.to_string()).unwrap_err();
    assert!(
        format!("{err:#}").contains("no \"records\" list"),
        "{err:#}"
    );
}

#[test]
fn a_metric_that_is_not_finite_is_left_out_and_the_record_reads_back() {
    let rec = Record::new("mem", "x")
        .metric("runtime_ns", f64::INFINITY, "ns", Better::Lower)
        .metric("gb_s", f64::NAN, "GB/s", Better::Higher)
        .metric("ok", 1.5, "s", Better::Lower);
    assert_eq!(rec.metrics.keys().collect::<Vec<_>>(), ["ok"]);
    let json = serde_json::to_vec(&rec).unwrap();
    let back: Record = serde_json::from_slice(&json).unwrap();
    assert_eq!(back.metrics.len(), 1);
}

#[test]
fn node_and_cpu_ids_in_records_are_held_to_what_linux_allows() {
    let with = |key: &str, id: u64| {
        let mut v: Value = serde_json::from_slice(&sample().to_json().unwrap()).unwrap();
        v["records"][0]["params"][key] = id.into();
        Document::from_json(&v.to_string())
    };
    assert!(with("mem_node", 1023).is_ok());
    assert!(with("peer_cpu", 8191).is_ok());
    for (key, id, says) in [
        (
            "mem_node",
            1024,
            "mem_node 1024, past the largest node id Linux allows (1023)",
        ),
        ("cpu_node", 5_000_000, "cpu_node 5000000"),
        (
            "peer_cpu",
            8192,
            "past the largest CPU id Linux allows (8191)",
        ),
        ("gpu_node", u64::MAX, "gpu_node 18446744073709551615"),
    ] {
        let err = format!("{:#}", with(key, id).unwrap_err());
        assert!(err.contains(says), "{err}");
        assert!(err.contains("triad 0->0"), "{err}");
    }
}

#[test]
fn ids_counts_and_sizes_of_another_type_are_refused_not_dropped() {
    let with = |key: &str, value: Value| {
        let mut v: Value = serde_json::from_slice(&sample().to_json().unwrap()).unwrap();
        v["records"][0]["params"][key] = value;
        Document::from_json(&v.to_string())
    };
    for (key, value, shown) in [
        ("cpu", json!(-1), "cpu = -1"),
        ("cpu_node", json!("0"), "cpu_node = \"0\""),
        ("mem_node", Value::Null, "mem_node = null"),
        ("threads", json!(1e300), "threads = 1e+300"),
        ("size_bytes", json!(1.5), "size_bytes = 1.5"),
    ] {
        let err = format!("{:#}", with(key, value).unwrap_err());
        assert!(err.contains(shown), "{err}");
        assert!(err.contains("triad 0->0"), "{err}");
    }
    let mut v: Value = serde_json::from_slice(&sample().to_json().unwrap()).unwrap();
    v["records"][0]["params"] = json!({});
    let err = format!("{:#}", Document::from_json(&v.to_string()).unwrap_err());
    assert!(err.contains("no params"), "{err}");
    assert!(with("threads", json!(4)).is_ok());
    assert!(with("gpu_node", Value::Null).is_ok());
}

#[test]
fn figures_no_measurement_gives_are_refused_naming_the_record() {
    let with = |key: &str, value: f64| {
        let mut v: Value = serde_json::from_slice(&sample().to_json().unwrap()).unwrap();
        let m = v["records"][0]["metrics"]["bandwidth_mb_s"].clone();
        let metrics = v["records"][0]["metrics"].as_object_mut().unwrap();
        metrics.remove("bandwidth_mb_s");
        metrics.insert(key.into(), m);
        metrics[key]["value"] = value.into();
        Document::from_json(&v.to_string())
    };
    assert!(with("bandwidth_mb_s", 0.0).is_ok());
    assert!(with("bandwidth_mb_s", 9.9e17).is_ok());
    // A derived figure may go below 0: the low end of an interval.
    assert!(with("ci95_low_mb_s", -16.3).is_ok());
    for (key, value, says) in [
        ("bandwidth_mb_s", -5.0, "bandwidth_mb_s = -5 MB/s, below 0"),
        ("latency_ns", -0.5, "below 0, which a measured latency"),
        ("latency_ns", -5e-324, "latency_ns = -5e-324 MB/s"),
        (
            "bandwidth_mb_s",
            1e308,
            "= 1e308 MB/s, larger than any measurement",
        ),
        (
            "ci95_low_mb_s",
            -1e300,
            "= -1e300 MB/s, larger than any measurement",
        ),
        // A name from the file is escaped like the record's.
        ("x\u{1b}[2Jy", 1e300, "gives x\\x1b[2Jy = 1e300 MB/s"),
    ] {
        let err = format!("{:#}", with(key, value).unwrap_err());
        assert!(err.contains(says), "{err}");
        assert!(err.contains("triad 0->0"), "{err}");
    }
}

#[test]
fn round_trips_through_json() {
    let doc = sample();
    let loaded =
        Document::from_json(std::str::from_utf8(&doc.to_json().unwrap()).unwrap()).unwrap();
    assert_eq!(loaded.document, doc);
    assert!(loaded.warnings.is_empty());
}

#[test]
fn top_level_keys_are_the_documented_ones() {
    let value: Value = serde_json::from_slice(&sample().to_json().unwrap()).unwrap();
    for key in [
        "schema", "tool", "version", "command", "started", "finished", "host", "records",
    ] {
        assert!(value.get(key).is_some(), "{key}");
    }
    assert_eq!(value["schema"], 1);
    let rec = &value["records"][0];
    assert_eq!(rec["metrics"]["bandwidth_mb_s"]["better"], "higher");
    assert_eq!(rec["placement"]["pages_by_node"]["0"], 512);
}

#[test]
fn newer_schema_is_read_with_a_warning() {
    let mut value: Value = serde_json::from_slice(&sample().to_json().unwrap()).unwrap();
    value["schema"] = 2.into();
    value["something_new"] = "x".into();
    value["records"][0]["new_field"] = 1.into();
    let loaded = Document::from_json(&value.to_string()).unwrap();
    assert_eq!(loaded.document.records.len(), 1);
    assert!(
        loaded.warnings[0].contains("schema 2 is newer"),
        "{:?}",
        loaded.warnings
    );
}

#[test]
fn damaged_files_give_reasons_not_panics() {
    let cases = [
        ("", "not valid JSON"),
        ("[1,2]", "not an object"),
        ("{\"schema\":1}", "\"tool\""),
        ("{\"tool\":\"numabench\"}", "\"schema\""),
        (
            "{\"tool\":\"numabench\",\"schema\":1,\"records\":5}",
            "does not match",
        ),
    ];
    for (text, reason) in cases {
        let err = format!("{:#}", Document::from_json(text).unwrap_err());
        assert!(err.contains(reason), "{text}: {err}");
    }
    let full = String::from_utf8(sample().to_json().unwrap()).unwrap();
    for cut in [1, full.len() / 3, full.len() - 3] {
        assert!(Document::from_json(&full[..cut]).is_err());
    }
}

#[test]
fn save_and_load_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.json");
    let doc = sample();
    doc.save(&path).unwrap();
    assert_eq!(Document::load(&path).unwrap().document, doc);
    let missing = format!(
        "{:#}",
        Document::load(&dir.path().join("nope.json")).unwrap_err()
    );
    assert!(missing.contains("nope.json"), "{missing}");
}
