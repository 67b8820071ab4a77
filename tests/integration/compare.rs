//! `compare` refuses files with nothing in common.

use crate::util::numabench;

/// run.json's records of one probe alone, as that command's own file.
fn only(probe: &str, path: &std::path::Path) {
    let run = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/cases/run.json");
    let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(run).unwrap()).unwrap();
    doc["records"]
        .as_array_mut()
        .unwrap()
        .retain(|r| r["probe"] == probe);
    assert!(!doc["records"].as_array().unwrap().is_empty(), "no {probe}");
    std::fs::write(path, serde_json::to_vec(&doc).unwrap()).unwrap();
}

#[test]
fn files_that_share_no_figure_are_refused_naming_what_each_holds() {
    let dir = tempfile::tempdir().unwrap();
    let (c2c, lat) = (dir.path().join("c2c.json"), dir.path().join("lat.json"));
    only("c2c", &c2c);
    only("latency", &lat);
    let out = numabench()
        .arg("compare")
        .arg(&c2c)
        .arg(&lat)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("share no figure to compare"), "{err}");
    assert!(err.contains("c2c.json holds c2c ("), "{err}");
    assert!(err.contains("lat.json holds latency ("), "{err}");
    // The same file twice compares, lower-is-better ns under its header.
    let out = numabench()
        .arg("compare")
        .arg(&lat)
        .arg(&lat)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("[ Lower numbers are better. ]"), "{text}");
    assert!(!text.contains("[ Higher numbers are better. ]"), "{text}");
}
