//! `numabench pcie` without a GPU: the absent-driver path as a user meets
//! it, bad input, and the whole measuring path run against a stand-in
//! driver library (tests/fixtures/fakecuda.c, compiled here with `cc`;
//! those tests are skipped without a C compiler) that copies with
//! `memcpy`, times with the monotonic clock and refuses copies from host
//! memory that is not registered. The stand-in checks how the CUDA API is
//! called (order, pinning, release of everything); it says nothing about
//! real PCIe figures.

use crate::util::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Runs `numabench pcie ARGS` with the driver library `lib` (a path that
/// does not exist means no driver) and extra environment.
fn pcie(lib: &Path, env: &[(&str, &str)], args: &[&str]) -> std::process::Output {
    let mut cmd = numabench();
    cmd.arg("pcie").args(args).env("NUMABENCH_LIBCUDA", lib);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn no_driver() -> PathBuf {
    PathBuf::from("/nonexistent/libcuda.so.1")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

#[test]
fn without_a_driver_it_says_so_and_exits_0() {
    let out = pcie(&no_driver(), &[], &[]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert_eq!(
        text(&out.stderr),
        "numabench pcie: no CUDA driver (/nonexistent/libcuda.so.1 not found); nothing to measure\n"
    );
}

#[test]
fn the_default_library_is_libcuda_so_1() {
    // On a machine without a GPU driver (this one), the default path; one
    // with a GPU measures a single small size.
    let out = numabench()
        .args(["pcie", "--sizes", "4K", "-r", "1"])
        .env_remove("NUMABENCH_LIBCUDA")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    if err.contains("no CUDA driver") {
        assert_eq!(
            err,
            "numabench pcie: no CUDA driver (libcuda.so.1 not found); nothing to measure\n"
        );
    }
}

#[test]
fn without_a_driver_json_is_an_empty_document_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("pcie.json");
    let out = pcie(
        &no_driver(),
        &[],
        &["--json", "--save", save.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stderr).lines().count(), 1);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["tool"], "numabench");
    assert_eq!(doc["schema"], 1);
    assert_eq!(doc["complete"], true);
    assert_eq!(doc["records"].as_array().unwrap().len(), 0);
    let note = doc["notes"][0].as_str().unwrap();
    assert!(note.contains("no CUDA driver"), "{note}");
    let saved: Value = serde_json::from_slice(&std::fs::read(&save).unwrap()).unwrap();
    assert_eq!(saved["notes"], doc["notes"]);
    // numabench reads it back as a results document.
    let rendered = stdout_of(["report", save.to_str().unwrap()]);
    assert!(!rendered.is_empty());
}

#[test]
fn without_a_driver_csv_is_the_header() {
    let out = pcie(&no_driver(), &[], &["--csv"]);
    assert_eq!(out.status.code(), Some(0));
    let csv = text(&out.stdout);
    assert_eq!(csv.lines().count(), 1);
    assert!(csv.starts_with("gpu,gpu_name,pci_bus_id,"), "{csv}");
}

/// Bad input: exit 2, one line, nothing on stdout, even without a driver.
fn rejects(args: &[&str], must_mention: &[&str]) {
    let out = pcie(&no_driver(), &[], args);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("numabench: error: "), "{args:?}: {err}");
    for w in must_mention {
        assert!(err.contains(w), "{args:?}: '{w}' missing from {err}");
    }
}

#[test]
fn bad_input_exits_2_with_one_line() {
    rejects(&["--gpu", "x"], &["'x'", "--gpu"]);
    rejects(&["--sizes", "0"], &["--sizes 0", "out of range"]);
    rejects(&["--sizes", "64M-1K"], &["runs backwards"]);
    rejects(&["--sizes", "1Q"], &["unknown unit"]);
    rejects(&["--tries", "0"], &["--tries 0"]);
    rejects(
        &["--mem-nodes", "9"],
        &["--mem-nodes 9", "node 9 does not exist"],
    );
    rejects(&["--mem-nodes", "x"], &["--mem-nodes x"]);
    rejects(
        &["--cpu-nodes", "9"],
        &["--cpu-nodes 9", "node 9 does not exist"],
    );
    rejects(
        &["--cpu-nodes", "0", "--no-pairs"],
        &["--cpu-nodes", "--no-pairs"],
    );
    rejects(&["--phi=-5"], &["--phi -5", "MB/s from 1 to"]);
    rejects(&["--tolerance", "200"], &["--tolerance 200"]);
    rejects(&["--json", "--csv"], &["--csv"]);
    rejects(
        &["--save", "/nonexistent/dir/p.json"],
        &["--save /nonexistent/dir/p.json", "does not exist"],
    );
}

#[test]
fn a_library_that_is_not_a_cuda_driver_is_an_error() {
    let out = pcie(Path::new("libc.so.6"), &[], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "numabench: error: libc.so.6 has no cuInit (not a CUDA driver library, or one too old)\n"
    );
}

/// The stand-in driver. Environment: FAKE_CUDA_DEVICES (count, default
/// 1), FAKE_CUDA_INIT (cuInit's result), FAKE_CUDA_FAIL (a function that
/// returns out-of-memory), FAKE_CUDA_LOG (a file every call is logged to).
const FAKE_DRIVER: &str = include_str!("../fixtures/fakecuda.c");

/// The stand-in library, built once; `None` without a C compiler.
pub(crate) fn fake_driver() -> Option<&'static Path> {
    static LIB: OnceLock<Option<PathBuf>> = OnceLock::new();
    LIB.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("pcie-fake-cuda-{}", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        let src = dir.join("fakecuda.c");
        let lib = dir.join("libfakecuda.so");
        std::fs::write(&src, FAKE_DRIVER).ok()?;
        let status = std::process::Command::new("cc")
            .args(["-shared", "-fPIC", "-O1", "-Wall", "-o"])
            .arg(&lib)
            .arg(&src)
            .status();
        match status {
            Ok(s) if s.success() => Some(lib),
            Ok(s) => panic!("the stand-in driver does not compile: {s}"),
            Err(e) => {
                eprintln!("skipped: no C compiler for the stand-in driver ({e})");
                None
            }
        }
    })
    .as_deref()
}

fn params<'v>(doc: &'v Value, kind: &str) -> Vec<&'v Value> {
    doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["probe"] == "pcie" && r["params"]["kind"] == kind)
        .collect()
}

#[test]
fn the_measuring_path_against_a_stand_in_driver() {
    let Some(lib) = fake_driver() else { return };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let out = pcie(
        lib,
        &[("FAKE_CUDA_LOG", log.to_str().unwrap())],
        &["--sizes", "4K,64K", "--tries", "3", "--json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc.get("notes").is_none());
    let nodes = doc["host"]["topology"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["has_memory"] == true)
        .count();

    let gpus = params(&doc, "gpu");
    assert_eq!(gpus.len(), 1);
    let g = &gpus[0];
    assert_eq!(g["params"]["gpu_name"], "Fake GPU 0");
    assert_eq!(g["params"]["pci_bus_id"], "0000:FE:00.7");
    // No such PCI device here: no node, no link, no Phi.
    assert_eq!(g["params"]["gpu_node"], Value::Null);
    assert!(g["metrics"].as_object().unwrap().is_empty());
    let notes = g["notes"].to_string();
    assert!(
        notes.contains("not in sysfs") && notes.contains("--phi"),
        "{notes}"
    );

    let sizes = params(&doc, "size");
    assert_eq!(sizes.len(), 2 * 2 * nodes);
    for r in &sizes {
        let p = &r["params"];
        assert!(p["direction"] == "download" || p["direction"] == "readback");
        assert!(p["size_bytes"] == 4096 || p["size_bytes"] == 65536);
        assert_eq!(p["tries"], 3);
        let samples = r["samples"]["bandwidth_mb_s"].as_array().unwrap();
        assert!(!samples.is_empty() && samples.len() <= 3);
        let best = r["metrics"]["bandwidth_mb_s"]["value"].as_f64().unwrap();
        let max = samples
            .iter()
            .map(|s| s.as_f64().unwrap())
            .fold(0.0, f64::max);
        assert_eq!(best, max);
        assert_eq!(r["metrics"]["bandwidth_mb_s"]["unit"], "MB/s");
        // The host buffer was on its node and the thread on its CPU.
        let pl = &r["placement"];
        assert_eq!(pl["on_target_pct"], 100.0, "{pl}");
        assert_eq!(pl["cpus_seen"][0], p["cpu"]);
    }
    let best = params(&doc, "best");
    assert_eq!(best.len(), 2 * nodes);
    assert!(best.iter().all(|r| r["params"]["class"].is_u64()));
    assert!(best.iter().all(|r| r["metrics"].get("alpha_p").is_none()));

    // Every registration, allocation, event and the context released,
    // host memory unregistered before the context went.
    let calls = std::fs::read_to_string(&log).unwrap();
    let count = |c: &str| calls.lines().filter(|l| l.starts_with(c)).count();
    assert_eq!(count("cuMemHostRegister_v2"), nodes, "{calls}");
    assert_eq!(count("cuMemHostUnregister"), nodes, "{calls}");
    assert_eq!(count("cuMemAlloc_v2"), 1);
    assert_eq!(count("cuMemFree_v2"), 1);
    assert_eq!(count("cuCtxCreate_v2"), 1);
    assert!(
        calls.contains("cuCtxDestroy_v2 regs=0 allocs=0 events=0"),
        "{calls}"
    );
}

#[test]
fn the_stand_in_run_as_a_table_and_csv_with_phi() {
    let Some(lib) = fake_driver() else { return };
    let args = ["--sizes", "64K", "-r", "2", "--phi", "12800"];
    let out = pcie(lib, &[], &args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    assert!(
        t.contains("GPU 0: Fake GPU 0 (0000:FE:00.7), attached to an unknown node"),
        "{t}"
    );
    assert!(t.contains("Phi = 12800 MB/s, as given with --phi"), "{t}");
    assert!(t.contains("download classes: class 0:"), "{t}");
    assert!(t.contains("alpha_p"), "{t}");

    let mut csv_args = args.to_vec();
    csv_args.push("--csv");
    let out = pcie(lib, &[], &csv_args);
    assert_eq!(out.status.code(), Some(0));
    let csv = text(&out.stdout);
    let best: Vec<&str> = csv.lines().filter(|l| l.contains(",best,")).collect();
    assert!(!best.is_empty(), "{csv}");
    for l in best {
        let cols: Vec<&str> = l.split(',').collect();
        assert_eq!(cols.len(), 14, "{l}");
        assert_eq!(cols[11], "12800.0", "{l}");
        assert!(cols[12].parse::<f64>().unwrap() > 0.0, "{l}");
    }
}

#[test]
fn the_stand_in_reports_no_device_cleanly() {
    let Some(lib) = fake_driver() else { return };
    for env in [("FAKE_CUDA_INIT", "100"), ("FAKE_CUDA_DEVICES", "0")] {
        let out = pcie(lib, &[env], &["--json"]);
        assert_eq!(out.status.code(), Some(0), "{env:?}");
        let err = text(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("numabench pcie: the CUDA driver (") && err.contains("finds no GPU"),
            "{err}"
        );
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["records"].as_array().unwrap().len(), 0);
        assert!(doc["notes"][0].as_str().unwrap().contains("finds no GPU"));
    }
    let out = pcie(lib, &[("FAKE_CUDA_INIT", "100")], &[]);
    assert!(
        text(&out.stderr)
            .contains("cuInit failed: no CUDA-capable device is detected (CUDA error 100)"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn the_stand_in_turns_cuda_errors_into_one_line() {
    let Some(lib) = fake_driver() else { return };
    let cases = [
        (
            ("FAKE_CUDA_INIT", "999"),
            "cuInit failed: unknown error (CUDA error 999)",
        ),
        (
            ("FAKE_CUDA_FAIL", "cuMemAlloc_v2"),
            "GPU 0 (0000:FE:00.7): cuMemAlloc_v2 failed: out of memory (CUDA error 2)",
        ),
        (
            ("FAKE_CUDA_FAIL", "cuMemHostRegister_v2"),
            "GPU 0 (0000:FE:00.7): memory node 0: cuMemHostRegister_v2 failed: out of memory (CUDA error 2)",
        ),
        (
            ("FAKE_CUDA_FAIL", "cuCtxCreate_v2"),
            "cuCtxCreate_v2 failed: out of memory (CUDA error 2)",
        ),
    ];
    for (env, want) in cases {
        let out = pcie(
            lib,
            &[env],
            &["--sizes", "4K", "-r", "1", "--mem-nodes", "0"],
        );
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{env:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("numabench: error: "), "{err}");
        assert!(err.contains(want), "{env:?}: {err}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn the_stand_in_checks_gpu_ordinals() {
    let Some(lib) = fake_driver() else { return };
    let out = pcie(lib, &[("FAKE_CUDA_DEVICES", "2")], &["--gpu", "3"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "numabench: error: --gpu 3: GPU 3 does not exist (CUDA devices: 0-1)\n"
    );
    let out = pcie(
        lib,
        &[("FAKE_CUDA_DEVICES", "2")],
        &["--gpu", "1", "--sizes", "4K", "-r", "1", "--json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let gpus = params(&doc, "gpu");
    assert_eq!(gpus.len(), 1);
    assert_eq!(gpus[0]["params"]["gpu"], 1);
    assert_eq!(gpus[0]["params"]["pci_bus_id"], "0000:FE:01.7");
}

#[test]
fn every_format_of_a_stand_in_run() {
    let Some(lib) = fake_driver() else { return };
    for (flag, starts) in [
        ("--markdown", "# numabench pcie: "),
        ("--latex", "\\documentclass{article}"),
        ("--html", "<!DOCTYPE html>"),
    ] {
        let out = pcie(lib, &[], &["--sizes", "4K", "-r", "1", flag]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let t = text(&out.stdout);
        assert!(t.starts_with(starts), "{flag}: {t}");
        assert!(t.contains("Fake GPU 0"), "{flag}: {t}");
    }
    let out = pcie(lib, &[], &["--per-size", "--format", "json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("leave --per-size out"));
}
