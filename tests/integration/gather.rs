//! `gather` archives exactly what the reader uses: replaying an archive gives
//! the same topology.

use crate::util::*;

#[test]
fn gather_of_a_fixture_replays_identically() {
    for dir in fixture_machines() {
        let tmp = tempfile::tempdir().unwrap();
        let archive = tmp.path().join("m.tar.gz");
        numabench()
            .args(["gather", "-o"])
            .arg(&archive)
            .arg("--sysfs-root")
            .arg(&dir)
            .assert()
            .success();
        let out = tmp.path().join("m");
        std::fs::create_dir(&out).unwrap();
        let status = std::process::Command::new("tar")
            .arg("xzf")
            .arg(&archive)
            .arg("-C")
            .arg(&out)
            .status()
            .unwrap();
        assert!(status.success());
        assert_eq!(topo_json(&out), topo_json(&dir), "{}", dir.display());
    }
}

#[test]
fn gather_of_this_machine_replays() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("live.tgz");
    numabench()
        .args(["gather", "-o"])
        .arg(&archive)
        .assert()
        .success();
    let out = tmp.path().join("m");
    std::fs::create_dir(&out).unwrap();
    assert!(
        std::process::Command::new("tar")
            .arg("xzf")
            .arg(&archive)
            .arg("-C")
            .arg(&out)
            .status()
            .unwrap()
            .success()
    );
    let live = topo_json(std::path::Path::new("/"));
    let replay = topo_json(&out);
    // Free memory moves between the two reads; everything else must match.
    for key in [
        "cpus",
        "caches",
        "allowed",
        "thp",
        "numa_balancing",
        "accelerators",
        "hostname",
        "kernel",
    ] {
        assert_eq!(live[key], replay[key], "{key}");
    }
    assert_eq!(
        live["nodes"].as_array().unwrap().len(),
        replay["nodes"].as_array().unwrap().len()
    );
    for (a, b) in live["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .zip(replay["nodes"].as_array().unwrap())
    {
        assert_eq!(a["cpus"], b["cpus"]);
        assert_eq!(a["distances"], b["distances"]);
        assert_eq!(a["mem_total_bytes"], b["mem_total_bytes"]);
    }
}

#[test]
fn gather_refuses_a_bad_name_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = numabench()
        .current_dir(tmp.path())
        .args(["gather", "-o", "m.zip"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("numabench: error: -o m.zip"), "{err}");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}
