//! Memory limits of the process, not the node: a memory cgroup (Slurm's
//! `ConstrainRAMSpace`, systemd's `MemoryMax`) and `ulimit -v`. Sizes given
//! by the user are refused before mapping, naming the limit; sizes numabench
//! picks itself shrink to fit and say so; nothing is OOM-killed.

use crate::cgroup::Cgroup;
use crate::util::{numabench, only_run_folder};
use std::path::Path;
use std::process::Output;

/// A memory cgroup of `bytes`, without swap where the machine can say so.
fn cgroup(bytes: u64) -> Option<Cgroup> {
    let b = bytes.to_string();
    let cg = Cgroup::new("memory", &[("memory.limit_in_bytes", &b)])?;
    // A limit that swaps is slow, not a limit.
    let _ = cg.set("memory.memsw.limit_in_bytes", &b);
    Some(cg)
}

/// numabench with `args` inside `cg`, in `cwd`.
fn run_in(cg: &Cgroup, cwd: &Path, args: &[&str]) -> Output {
    let bin = numabench().get_program().to_owned();
    cg.command(Path::new(&bin))
        .current_dir(cwd)
        .env_remove("NUMABENCH_SYSFS_ROOT")
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_size_larger_than_the_cgroup_is_refused_naming_the_cgroup() {
    let Some(cg) = cgroup(512 << 20) else { return };
    for args in [
        &["latency", "-s", "1G", "--save", "l.json"][..],
        &["matrix", "--no-saturated", "-s", "2G", "--save", "m.json"][..],
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = run_in(&cg, dir.path(), args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("memory cgroup /numabench-test-"), "{err}");
        assert!(err.contains("of 512 MiB"), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}

#[test]
fn topo_names_the_cgroup_limit() {
    let Some(cg) = cgroup(300 << 20) else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(&cg, dir.path(), &["topo"]);
    let t = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let line = t
        .lines()
        .find(|l| l.starts_with("memory limit"))
        .unwrap_or("");
    assert!(line.contains("of 300 MiB"), "{t}");
    let json = run_in(&cg, dir.path(), &["topo", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["memory_limit"]["limit_bytes"], 300u64 << 20);
}

/// The audit's case: `run` in a 512 MiB cgroup was OOM-killed after 4 s
/// with nothing saved. Its chase and arrays now shrink to fit, and say so.
#[test]
fn run_in_a_small_cgroup_shrinks_its_buffers_and_keeps_its_results() {
    let Some(cg) = cgroup(512 << 20) else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        &cg,
        dir.path(),
        &["run", "--profile", "quick", "--dir", "runs"],
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}\n{}", text(&out.stdout));
    let (_, doc) = only_run_folder(&dir.path().join("runs"));
    let all = doc["records"].to_string();
    assert!(
        all.contains("latency chase scaled down") && all.contains("memory cgroup"),
        "no note of the cgroup's cut: {all}"
    );
    assert!(all.contains("\"latency_ns\""), "{all}");
}

/// `ulimit -v`: the matrix's chase is sized within the address space left,
/// so the bandwidth measured before it is not lost to a refused mmap.
#[test]
fn run_under_an_address_space_limit_fits_its_chase() {
    let dir = tempfile::tempdir().unwrap();
    let bin = numabench().get_program().to_owned();
    let out = std::process::Command::new("sh")
        .current_dir(dir.path())
        .arg("-c")
        .arg("ulimit -v 600000 && exec \"$0\" \"$@\"")
        .arg(bin)
        .args(["run", "--profile", "quick", "--dir", "runs", "--json"])
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let all = doc["records"].to_string();
    assert!(all.contains("RLIMIT_AS"), "{all}");
    assert!(all.contains("\"latency_ns\"") && all.contains("\"bandwidth_mb_s\""));
}

#[test]
fn latency_without_size_fits_its_default_buffer_to_the_cgroup() {
    let Some(cg) = cgroup(256 << 20) else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        &cg,
        dir.path(),
        &["latency", "--pattern", "page-local", "--json"],
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let all = doc["records"].to_string();
    assert!(
        all.contains("chase buffer scaled down from 1024") && all.contains("memory cgroup"),
        "{all}"
    );
    assert!(all.contains("\"kind\":\"scaled_by_memory_limit\""), "{all}");
    assert_eq!(doc["complete"], true, "a default that fits is no cut");
}

/// Under `ulimit -v`, `fleet report` reads every document, every time: which
/// were read must not depend on which reader thread got memory first.
#[test]
fn fleet_report_under_an_address_space_limit_reads_every_document() {
    let dir = tempfile::tempdir().unwrap();
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/cases/matrix.json.doc.json");
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(golden).unwrap()).unwrap();
    for i in 0..5 {
        doc["host"]["hostname"] = format!("m{i}").into();
        let m = dir.path().join(format!("m{i}"));
        std::fs::create_dir(&m).unwrap();
        std::fs::write(m.join("results.json"), doc.to_string()).unwrap();
    }
    let bin = numabench().get_program().to_owned();
    for _ in 0..3 {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 200000 && exec \"$0\" \"$@\"")
            .arg(&bin)
            .args(["fleet", "report", "--format", "csv"])
            .arg(dir.path())
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(!err.contains("skipped"), "{err}");
        let csv = text(&out.stdout);
        for i in 0..5 {
            assert!(csv.contains(&format!("m{i}")), "m{i} missing: {csv}");
        }
    }
}

/// A document whose parse would not fit under `ulimit -v` is refused in one
/// line before it is read, not aborted on halfway (exit 134).
#[test]
fn a_document_too_large_for_the_address_space_limit_is_refused_first() {
    let dir = tempfile::tempdir().unwrap();
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/cases/peak.json.doc.json");
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(golden).unwrap()).unwrap();
    let seed = doc["records"].as_array().unwrap().clone();
    let mut records = Vec::new();
    for i in 0..4000 {
        for r in &seed {
            let mut r = r.clone();
            r["name"] = format!("{} #{i}", r["name"].as_str().unwrap()).into();
            records.push(r);
        }
    }
    doc["records"] = records.into();
    let file = dir.path().join("big.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    assert!(std::fs::metadata(&file).unwrap().len() > 4 << 20);
    let bin = numabench().get_program().to_owned();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 150000 && exec \"$0\" \"$@\"")
        .arg(&bin)
        .args(["report", "--format", "csv"])
        .arg(&file)
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("RLIMIT_AS") && err.contains("takes up to"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}
