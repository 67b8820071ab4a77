//! Bad input: one line `numabench: error: ...` naming the value and what is
//! allowed, exit code 2, nothing written.

use crate::util::*;

#[test]
fn missing_root_override() {
    rejects(
        &["topo", "--sysfs-root", "/no/such/dir"],
        &["/no/such/dir", "not a directory"],
    );
}

#[test]
fn root_override_that_is_not_a_capture() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_str().unwrap().to_string();
    rejects(&["topo", "--sysfs-root", &dir], &[&dir, "numabench gather"]);
}

#[test]
fn root_override_from_the_environment() {
    let out = numabench()
        .env("NUMABENCH_SYSFS_ROOT", "/no/such/root")
        .arg("topo")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("/no/such/root") && err.contains("NUMABENCH_SYSFS_ROOT"),
        "{err}"
    );
}

#[test]
fn unknown_flag_and_command() {
    rejects(&["topo", "--bogus"], &["--bogus"]);
    rejects(&["frobnicate"], &["frobnicate"]);
}

#[test]
fn unknown_node_cpu_and_malformed_lists() {
    rejects(
        &["place", "--policy", "bind:7"],
        &["node 7 does not exist", "nodes: 0"],
    );
    rejects(&["place", "--policy", "interleave:0,9"], &["node 9"]);
    rejects(
        &["place", "--cpu", "4095"],
        &["CPU 4095 is not online", "online CPUs:"],
    );
    rejects(&["place", "--cpu-node", "5"], &["node 5 does not exist"]);
    rejects(&["place", "--policy", "bind:1-"], &["'1-'", "0-3,8,10-11"]);
    rejects(&["place", "--policy", "bind:3-1"], &["backwards"]);
    rejects(
        &["place", "--policy", "preferred:0,1"],
        &["exactly one node"],
    );
    rejects(
        &["place", "--policy", "sideways:0"],
        &["sideways", "bind:LIST"],
    );
    rejects(&["place", "--size", "12Q"], &["12Q", "K, M, G"]);
    rejects(&["place", "--pages", "huge"], &["huge", "hugetlb"]);
    rejects(&["place", "--cpu", "x"], &["'x'"]);
}

#[test]
fn cpus_outside_the_affinity_mask_are_refused() {
    // taskset narrows Cpus_allowed_list, as a cpuset would.
    let out = std::process::Command::new("taskset")
        .args(["-c", "1"])
        .arg(env!("CARGO_BIN_EXE_numabench"))
        .args(["place", "--cpu", "0"])
        .env_remove("NUMABENCH_SYSFS_ROOT")
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(
        err.trim(),
        "numabench: error: --cpu 0: CPU 0 is outside this process's cpuset (allowed CPUs: 1)"
    );
}

#[test]
fn bad_matrix_input() {
    // Each with --save: a refused run must not leave a results file.
    let save = ["--save", "m.json"];
    let cases: [(&[&str], &[&str]); 16] = [
        (
            &["--kernel", "bogus"],
            &["--kernel bogus", "sweep --list-kernels"],
        ),
        (
            &["--size", "10x"],
            &["'10x' for '--size <SIZE>'", "K, M, G"],
        ),
        (&["--size", "100K"], &["--size 100K", "at least 1M"]),
        (
            &["--latency-size", "512K"],
            &["--latency-size 512K", "at least 1M"],
        ),
        (&["--tries", "0"], &["--tries 0"]),
        (
            &["--per-core", "7"],
            &["--per-core 7", "node 7 does not exist"],
        ),
        (
            &["--per-core", "0:9"],
            &["--per-core 0:9:", "node 9 does not exist"],
        ),
        (&["--per-core", "x"], &["--per-core x", "NODE:MEM"]),
        (&["--runs", "5"], &["--runs 5", "add --per-core"]),
        (
            &["--per-core", "0", "--runs", "0"],
            &["--runs", "'0' is not a whole number from 1 to 1000"],
        ),
        (
            &["--per-core", "0", "--runs", "1"],
            &["--runs 1", "a standard deviation needs two"],
        ),
        (
            &["--per-core", "0", "--runs", "1001"],
            &["--runs", "'1001' is not a whole number from 1 to 1000"],
        ),
        (
            &["--cpu-nodes", "5"],
            &["--cpu-nodes 5", "node 5 does not exist"],
        ),
        (&["--mem-nodes", "x"], &["--mem-nodes x", "'x'"]),
        (&["--peak", "-1"], &["'-1'"]),
        (&["--peak=-1"], &["--peak -1", "MB/s from 1 to"]),
    ];
    for (args, words) in cases {
        let mut all = vec!["matrix"];
        all.extend(args);
        all.extend(save);
        rejects(&all, words);
    }
    rejects(
        &["matrix", "--save", "/nonexistent/dir/f.json"],
        &["--save /nonexistent/dir/f.json", "does not exist"],
    );
    assert!(!std::path::Path::new("/nonexistent/dir/f.json").exists());
}
