//! Memory admission: every command that maps memory refuses, before mapping,
//! what the target nodes cannot hold, and admits the largest size that fits.

use crate::util::{numabench, rejects, stdout_of};

/// Four times this machine's memory: more than any node holds.
fn too_much() -> u64 {
    let topo: serde_json::Value = serde_json::from_slice(&stdout_of(["topo", "--json"])).unwrap();
    let total = topo["system_mem_total_bytes"].as_u64().unwrap();
    total * 4
}

#[test]
fn mem_refuses_more_than_the_free_memory_before_mapping() {
    // The audit's case: 2 x 14.6 GiB on a 24 GiB machine, here scaled to
    // whatever this machine has.
    let mib = (too_much() >> 20) / 2;
    let p = mib.to_string();
    rejects(
        &["mem", "-q", "-p", "2", "-t", "1", "-P", &p, "-l", "1"],
        &["-P", "2 processes", "free on this machine", "GiB"],
    );
    // Thread and global memory count too.
    let t = (mib / 2).to_string();
    rejects(
        &[
            "mem", "-q", "-p", "1", "-t", "4", "-T", &t, "-G", "1", "-l", "1",
        ],
        &["-G 1 MB", "-T", "4 threads", "free on"],
    );
}

#[test]
fn matrix_model_and_place_refuse_sizes_the_node_cannot_hold() {
    let big = format!("{}B", too_much());
    let cases: [(&[&str], &[&str]); 6] = [
        (
            &[
                "matrix",
                "--no-saturated",
                "--no-latency",
                "-r",
                "1",
                "-s",
                &big,
            ],
            &["--size", "free on node"],
        ),
        (
            &[
                "matrix",
                "--no-saturated",
                "-r",
                "1",
                "-s",
                "16M",
                "--latency-size",
                &big,
            ],
            &["--latency-size", "free on node"],
        ),
        (
            &["model", "--validate", "-s", &big],
            &["--size", "free on node"],
        ),
        (
            &["place", "--size", &big],
            &["--size", "free on this machine"],
        ),
        (
            &["place", "--size", &big, "--policy", "bind:0"],
            &["--size", "free on node 0"],
        ),
        (
            &[
                "sched",
                "2",
                "--elements",
                &(too_much() / 40).min(1 << 32).to_string(),
            ],
            &["2 tasks", "free on"],
        ),
    ];
    for (args, mentions) in cases {
        rejects(args, mentions);
    }
}

#[test]
fn a_size_given_is_measured_as_given_not_scaled_down() {
    // Before admission, -s was silently cut to half the node's free memory;
    // now a size that fits is used as it is.
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("m.json");
    let out = numabench()
        .args([
            "matrix",
            "--no-saturated",
            "--no-latency",
            "-r",
            "1",
            "-s",
            "24M",
        ])
        .arg("--save")
        .arg(&save)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&save).unwrap()).unwrap();
    let rec = doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["params"]["size_bytes"].is_u64())
        .expect("a bandwidth record");
    // Triad streams three arrays: each is a third of the working set.
    assert_eq!(
        rec["params"]["size_bytes"].as_u64().unwrap(),
        (24 << 20) / 3
    );
}

#[test]
fn mem_help_says_numabench_adds_the_check() {
    let help = String::from_utf8(stdout_of(["mem", "--help"])).unwrap();
    assert!(
        help.contains("numabench adds one check perf does not make"),
        "{help}"
    );
    assert!(help.contains("90% of the free memory"), "{help}");
}
