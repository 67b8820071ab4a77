//! Interruption: SIGINT/SIGTERM and killed workers keep what was measured,
//! marked incomplete, and leave no process, shared memory or temp file behind.

use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn start(args: &[&str], dir: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_numabench"))
        .args(args)
        .current_dir(dir)
        .env_remove("NUMABENCH_SYSFS_ROOT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until `pid` catches SIGINT (its handler is in place, so the work
/// has begun): a signal sent then tests the handling, not the start-up.
fn wait_until_caught(pid: u32) {
    let until = Instant::now() + Duration::from_secs(30);
    while Instant::now() < until {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let caught = status
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
            .unwrap_or(0);
        if caught & (1 << (libc::SIGINT - 1)) != 0 {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("process {pid} never caught SIGINT");
}

/// The children of `pid`, from /proc.
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
    {
        let path = task.unwrap().path().join("children");
        let text = std::fs::read_to_string(path).unwrap_or_default();
        out.extend(
            text.split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok()),
        );
    }
    out
}

fn wait_for_child(pid: u32) -> u32 {
    let until = Instant::now() + Duration::from_secs(30);
    while Instant::now() < until {
        if let Some(&c) = children(pid).first() {
            // Let it get to work.
            std::thread::sleep(Duration::from_millis(500));
            return c;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("process {pid} started no worker");
}

fn kill(pid: u32, sig: i32) {
    // SAFETY: kill has no memory effect in this process.
    assert_eq!(unsafe { libc::kill(pid as i32, sig) }, 0);
}

struct Ended {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn finish(child: Child) -> Ended {
    let out = child.wait_with_output().unwrap();
    Ended {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into(),
        stderr: String::from_utf8_lossy(&out.stderr).into(),
    }
}

fn doc(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Every note of every record, in one string.
fn notes(doc: &Value) -> String {
    doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["notes"].as_array().cloned().unwrap_or_default())
        .map(|n| n.as_str().unwrap_or_default().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Nothing but `keep` in `dir`: no temp file, no partial output.
fn only(dir: &Path, keep: &[&str]) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, keep, "unexpected files in {}", dir.display());
}

fn interrupted_with(args: &[&str], sig: i32) -> (Ended, Value, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut argv = args.to_vec();
    argv.extend(["--save", "r.json"]);
    let child = start(&argv, dir.path());
    wait_until_caught(child.id());
    std::thread::sleep(Duration::from_millis(300));
    kill(child.id(), sig);
    let end = finish(child);
    assert_eq!(end.code, Some(128 + sig), "{args:?}: {}", end.stderr);
    only(dir.path(), &["r.json"]);
    let d = doc(&dir.path().join("r.json"));
    assert_eq!(d["complete"], false, "{args:?}");
    let n = notes(&d);
    assert!(n.contains("interrupted by"), "{args:?}: {n}");
    (end, d, dir)
}

#[test]
fn sweep_keeps_what_it_measured_on_sigint() {
    let (end, d, _dir) = interrupted_with(
        &["sweep", "--op", "read", "-r", "3", "--table"],
        libc::SIGINT,
    );
    assert!(
        end.stdout.starts_with("INTERRUPTED by SIGINT"),
        "{}",
        end.stdout
    );
    assert!(notes(&d).contains("were not measured"), "{}", notes(&d));
    // Peaks and averages over the sizes measured would describe another sweep.
    assert!(
        end.stdout.contains("no summary: the sweep was stopped"),
        "{}",
        end.stdout
    );
    assert!(!end.stdout.contains("weighted avg"), "{}", end.stdout);
}

#[test]
fn matrix_keeps_what_it_measured_on_sigterm() {
    let (end, _, _dir) = interrupted_with(
        &["matrix", "--size", "256M", "--latency-size", "256M"],
        libc::SIGTERM,
    );
    assert!(
        end.stdout.starts_with("INTERRUPTED by SIGTERM"),
        "{}",
        end.stdout
    );
}

#[test]
fn latency_and_peak_keep_what_they_measured_on_sigint() {
    // Text: the stop line opens what a person reads.
    let (end, d, _dir) = interrupted_with(&["latency", "-s", "1G"], libc::SIGINT);
    assert!(
        end.stdout.starts_with("INTERRUPTED by SIGINT"),
        "{}",
        end.stdout
    );
    let kept = format!(
        "{} record(s) measured before the stop",
        d["records"].as_array().unwrap().len()
    );
    assert!(end.stdout.contains(&kept), "{}", end.stdout);
    // JSON: stdout stays the document, the stop line goes to stderr.
    let (end, d, _dir) = interrupted_with(&["peak", "--json"], libc::SIGINT);
    let shown: Value = serde_json::from_str(&end.stdout).unwrap();
    assert_eq!(shown["complete"], false);
    assert_eq!(shown["records"], d["records"]);
    assert!(
        end.stderr.contains("INTERRUPTED by SIGINT"),
        "{}",
        end.stderr
    );
}

#[test]
fn model_validate_keeps_the_pure_placements_on_sigint() {
    let (end, d, _dir) = interrupted_with(&["model", "--validate", "-s", "512M"], libc::SIGINT);
    assert!(
        end.stdout.starts_with("INTERRUPTED by SIGINT"),
        "{}",
        end.stdout
    );
    assert!(
        end.stdout.contains("no prediction checked"),
        "{}",
        end.stdout
    );
    // No record claims a prediction error from a run that did not happen.
    for r in d["records"].as_array().unwrap() {
        assert!(r["metrics"].get("error_linear_pct").is_none(), "{r}");
    }
}

#[test]
fn run_keeps_a_results_folder_marked_incomplete() {
    let dir = tempfile::tempdir().unwrap();
    let child = start(&["run", "--dir", "out"], dir.path());
    wait_until_caught(child.id());
    std::thread::sleep(Duration::from_millis(300));
    kill(child.id(), libc::SIGINT);
    let end = finish(child);
    assert_eq!(end.code, Some(130), "{}", end.stderr);
    assert!(
        end.stdout.starts_with("INTERRUPTED by SIGINT"),
        "{}",
        end.stdout
    );
    let folders: Vec<_> = std::fs::read_dir(dir.path().join("out")).unwrap().collect();
    assert_eq!(folders.len(), 1);
    let folder = folders.into_iter().next().unwrap().unwrap().path();
    let d = doc(&folder.join("results.json"));
    assert_eq!(d["complete"], false);
    assert!(folder.join("report.html").is_file());
}

#[test]
fn a_second_signal_ends_at_once_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let child = start(
        &["sweep", "--op", "read", "-r", "3", "--save", "r.json"],
        dir.path(),
    );
    wait_until_caught(child.id());
    kill(child.id(), libc::SIGINT);
    kill(child.id(), libc::SIGINT);
    let t = Instant::now();
    let end = finish(child);
    assert_eq!(end.code, Some(130), "{}", end.stderr);
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "took {:?}",
        t.elapsed()
    );
    // Either the document was written before the second signal or nothing
    // was; never a temp file.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| n == "r.json"), "{names:?}");
}

/// A worker SIGKILLed: exit 1 naming it, partial results saved and marked.
fn worker_killed(args: &[&str], marker: &str) {
    let dir = tempfile::tempdir().unwrap();
    let mut argv = args.to_vec();
    argv.extend(["--save", "r.json"]);
    let child = start(&argv, dir.path());
    let worker = wait_for_child(child.id());
    kill(worker, libc::SIGKILL);
    let end = finish(child);
    assert_eq!(end.code, Some(1), "{args:?}: {}", end.stderr);
    let last = end.stderr.lines().last().unwrap_or_default();
    assert!(last.contains("killed by signal 9"), "{args:?}: {last}");
    assert!(
        last.contains("saved, marked incomplete"),
        "{args:?}: {last}"
    );
    only(dir.path(), &["r.json"]);
    let d = doc(&dir.path().join("r.json"));
    assert_eq!(d["complete"], false, "{args:?}");
    assert!(!d["records"].as_array().unwrap().is_empty());
    assert!(end.stdout.contains(marker), "{args:?}: {}", end.stdout);
}

#[test]
fn a_killed_mem_worker_keeps_the_partial_run() {
    worker_killed(
        &["mem", "-p", "2", "-t", "1", "-P", "64", "-s", "20"],
        "FAILED",
    );
}

#[test]
fn a_killed_sched_task_keeps_the_partial_run() {
    worker_killed(
        &[
            "sched",
            "2",
            "--elements",
            "2000000",
            "--passes",
            "1000",
            "--no-burst",
        ],
        "FAILED",
    );
}

#[test]
fn a_killed_autonuma_worker_is_never_averaged() {
    worker_killed(
        &[
            "autonuma", "numa02", "--mem", "64", "--loops", "2000", "--runs", "2",
        ],
        "1 FAILED",
    );
}

#[test]
fn autonuma_marks_an_interrupted_run_and_leaves_it_out_of_the_average() {
    let dir = tempfile::tempdir().unwrap();
    let child = start(
        &[
            "autonuma", "numa02", "--mem", "64", "--loops", "2000", "--runs", "2",
        ],
        dir.path(),
    );
    wait_for_child(child.id());
    kill(child.id(), libc::SIGINT);
    let end = finish(child);
    assert_eq!(end.code, Some(130), "{}", end.stderr);
    assert!(end.stdout.contains("1 INTERRUPTED"), "{}", end.stdout);
    assert!(
        end.stdout.contains("no whole run, no average"),
        "{}",
        end.stdout
    );
    assert!(end.stdout.contains("0 (1 partial)"), "{}", end.stdout);
}
