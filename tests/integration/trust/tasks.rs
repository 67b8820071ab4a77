//! A task limit (a pids cgroup: systemd's TasksMax, a container, a batch
//! job): a thread that cannot start ends the run with exit 1 and one line
//! naming the limit, never a panic or a hang, and what was measured before
//! is kept.

use crate::cgroup::Cgroup;
use assert_cmd::cargo::cargo_bin;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Longer than any run below takes; a run still going then hangs.
const HANG: Duration = Duration::from_secs(60);

/// Runs `cmd`, killed after [`HANG`]; `None` where it had to be.
fn run_bounded(mut cmd: Command) -> Option<Output> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Drained as the run goes, so a full pipe never stalls it.
    let out = child.stdout.take().unwrap();
    let err = child.stderr.take().unwrap();
    let read = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let (out, err) = (read(Box::new(out)), read(Box::new(err)));
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(Output {
                status,
                stdout: out.join().unwrap(),
                stderr: err.join().unwrap(),
            });
        }
        if started.elapsed() > HANG {
            child.kill().unwrap();
            child.wait().unwrap();
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_task_limit_ends_every_measuring_command_with_exit_1_naming_it() {
    let Some(group) = Cgroup::new("pids", &[("pids.max", "1")]) else {
        return;
    };
    let bin = cargo_bin("numabench");
    let tmp = tempfile::tempdir().unwrap();
    let fleet = tmp.path().join("fleet");
    std::fs::create_dir(&fleet).unwrap();
    let cases: [&[&str]; 9] = [
        &["matrix", "-s", "1M", "-t", "5"],
        &["sweep", "-s", "64K", "-t", "5"],
        &["mlp", "-s", "1M", "-n", "1,2", "-t", "5"],
        &["latency", "-s", "1M", "-t", "5"],
        &["model", "--validate", "-s", "1M"],
        &["peak", "-s", "1M", "-t", "5"],
        &[
            "loaded",
            "-s",
            "1M",
            "--injector-size",
            "2M",
            "-d",
            "0",
            "-t",
            "5",
        ],
        // The audit's hang: one side started, its partner refused.
        &["c2c", "--samples", "5", "-i", "5", "-t", "5"],
        &["run", "--profile", "quick", "--dir"],
    ];
    for max in ["1", "2", "3"] {
        group.set("pids.max", max).unwrap();
        for args in cases {
            let mut cmd = group.command(&bin);
            cmd.args(args);
            if args[0] == "run" {
                cmd.arg(tmp.path().join(format!("run{max}")));
            }
            check_under_limit(cmd, max, args, "cannot start thread");
        }
        // Reading documents needs no thread: read on the one there is.
        let mut cmd = group.command(&bin);
        cmd.args(["fleet", "report"]).arg(&fleet);
        let out = run_bounded(cmd).expect("fleet report hung");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{err}");
        assert_ne!(out.status.code(), Some(101), "{err}");
    }
}

#[test]
fn what_was_measured_before_a_thread_was_refused_is_saved() {
    // Two tasks: the process and one thread, so peak's one-thread runs
    // are measured and its all-CPU runs are refused.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 {
        eprintln!("note: one CPU, peak never needs a second thread: skipped");
        return;
    }
    let Some(group) = Cgroup::new("pids", &[("pids.max", "2")]) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let saved = tmp.path().join("peak.json");
    let mut cmd = group.command(&cargo_bin("numabench"));
    cmd.args(["peak", "-s", "1M", "-t", "20", "--save"])
        .arg(&saved);
    let out = run_bounded(cmd).expect("peak hung");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("pids.max 2 in cgroup"), "{err}");
    assert!(err.contains("saved, marked incomplete"), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    assert_eq!(doc["complete"], false);
    let records = doc["records"].as_array().unwrap();
    assert!(records.len() > 1, "{records:?}");
    let last = records.last().unwrap()["notes"].to_string();
    assert!(last.contains("cannot start thread"), "{last}");
}

#[test]
fn a_task_limit_ends_every_forking_command_with_one_line_naming_it() {
    let Some(group) = Cgroup::new("pids", &[("pids.max", "1")]) else {
        return;
    };
    let bin = cargo_bin("numabench");
    let cases: [&[&str]; 5] = [
        &["mem", "-p", "2", "-t", "2", "-T", "10", "-s", "1"],
        &["sched", "2"],
        &["sched", "4"],
        &["autonuma", "numa01", "--secs", "1"],
        &["autonuma", "numa02", "--secs", "1"],
    ];
    for max in ["1", "2", "3"] {
        group.set("pids.max", max).unwrap();
        for args in cases {
            let mut cmd = group.command(&bin);
            cmd.args(args);
            check_under_limit(cmd, max, args, "cannot start");
        }
    }
}

/// Runs `cmd` (numabench `args` inside a cgroup of `pids.max` = `max`):
/// it ends in time without a panic, exit 1 where not even one more task
/// may start (else 0 or 1), and a failure is one error line saying `what`
/// and naming the limit.
fn check_under_limit(cmd: std::process::Command, max: &str, args: &[&str], what: &str) {
    let Some(out) = run_bounded(cmd) else {
        panic!("pids.max {max}: {args:?} still ran after {HANG:?}");
    };
    let err = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code();
    assert!(!err.contains("panicked"), "pids.max {max}: {args:?}: {err}");
    // The process itself is one task: at 1 nothing more can start.
    let allowed: &[i32] = if max == "1" { &[1] } else { &[0, 1] };
    assert!(
        code.is_some_and(|c| allowed.contains(&c)),
        "pids.max {max}: {args:?} exited {code:?}: {err}"
    );
    if code == Some(1) {
        let named = format!("pids.max {max} in cgroup");
        assert!(
            err.contains(what) && err.contains(&named),
            "pids.max {max}: {args:?}: {err}"
        );
        // Not one line per refused process or thread.
        assert_eq!(
            err.lines()
                .filter(|l| l.contains("numabench: error"))
                .count(),
            1,
            "pids.max {max}: {args:?}: {err}"
        );
    }
}
