//! `numabench mem`: perf's output shape, real processes and threads, no
//! child left behind (normal end and SIGINT), bad input.

use crate::util::*;
use serde_json::Value;
use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// perf's quiet metric lines: ` NAME (padded to 30) VALUE(15.3), UNIT, METRIC`.
fn quiet_metrics(text: &str) -> Vec<(String, f64, String, String)> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let rest = l.strip_prefix(' ')?;
            let (name, tail) = rest.split_at(rest.len().min(30));
            let mut parts = tail.split(',');
            let value: f64 = parts.next()?.trim().parse().ok()?;
            let unit = parts.next()?.split_whitespace().next()?.to_string();
            let metric = parts.next();
            // The unit keeps its comma in perf's format: "secs," then metric.
            let (unit, metric) = match metric {
                Some(m) => (format!("{unit},"), m.trim().to_string()),
                None => return None,
            };
            Some((name.trim().to_string(), value, unit, metric))
        })
        .collect()
}

/// PIDs the run printed with -d (` # process  0: PID 1234`).
fn child_pids(text: &str) -> Vec<i32> {
    text.split("PID ")
        .skip(1)
        .filter_map(|s| {
            s.split(|c: char| !c.is_ascii_digit())
                .next()
                .and_then(|n| n.parse().ok())
        })
        .collect()
}

/// Processes whose parent is `ppid`.
fn children_of(ppid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue;
        };
        let parent = status
            .lines()
            .find_map(|l| l.strip_prefix("PPid:"))
            .and_then(|v| v.trim().parse::<i32>().ok());
        if parent == Some(ppid) {
            out.push(pid);
        }
    }
    out
}

/// True while `pid` exists and is one of this run's tasks (its name is
/// "process N", as numabench names its children).
fn task_alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|c| c.starts_with("process ") || c.starts_with("thread "))
        .unwrap_or(false)
}

#[test]
fn quiet_two_by_two_run_has_perfs_nine_metrics_and_leaves_no_child() {
    let out = numabench()
        .args([
            "mem", "-p", "2", "-t", "2", "-P", "8", "-l", "3", "-q", "-d",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.starts_with("\n # Running main, \"numabench mem -p 2 -t 2"),
        "{text}"
    );
    let m = quiet_metrics(&text);
    let names: Vec<&str> = m.iter().map(|x| x.3.as_str()).collect();
    assert_eq!(
        names,
        [
            "runtime-max/thread",
            "runtime-min/thread",
            "runtime-avg/thread",
            "spread-runtime/thread",
            "data/thread",
            "data-total",
            "runtime/byte/thread",
            "thread-speed",
            "total-speed"
        ],
        "{text}"
    );
    assert!(m.iter().all(|x| x.0 == "main,"), "{m:?}");
    let v = |name: &str| m.iter().find(|x| x.3 == name).unwrap().1;
    let units: Vec<&str> = m.iter().map(|x| x.2.as_str()).collect();
    assert_eq!(units[0], "secs,");
    assert_eq!(units[3], "%,");
    assert_eq!(units[8], "GB/sec,");
    // 3 loops x 8 MiB per task, 4 tasks.
    assert!(
        (v("data/thread") - 3.0 * 8.0 * 1048576.0 / 1e9).abs() < 0.001,
        "{text}"
    );
    assert!(
        (v("data-total") - 4.0 * 3.0 * 8.0 * 1048576.0 / 1e9).abs() < 0.001,
        "{text}"
    );
    let (max, min, avg) = (
        v("runtime-max/thread"),
        v("runtime-min/thread"),
        v("runtime-avg/thread"),
    );
    assert!(
        max > 0.0 && min >= 0.0 && min <= avg + 0.001 && avg <= max + 0.001,
        "{text}"
    );
    assert!((0.0..=50.0).contains(&v("spread-runtime/thread")), "{text}");
    assert!(v("total-speed") > 0.0);
    // total-speed = data-total / runtime-max, from the printed figures: both
    // are rounded to 3 decimals, which for a run of a few ms is several
    // percent of the runtime, so the check allows for that rounding.
    let half = 0.0005;
    let (data, speed) = (v("data-total"), v("total-speed"));
    let (lo, hi) = ((data - half) / (max + half), (data + half) / (max - half));
    assert!(
        (0.99 * lo - 0.002..=1.01 * hi + 0.002).contains(&speed),
        "total-speed {speed} vs data/time {lo}..{hi}"
    );
    // Two real processes were forked, and both are gone.
    let pids = child_pids(&text);
    assert_eq!(pids.len(), 2, "{text}");
    for pid in pids {
        assert!(!task_alive(pid), "child {pid} outlived the run");
    }
}

#[test]
fn json_record_has_canonical_params_and_metrics() {
    let tmp = tempfile::tempdir().unwrap();
    let save = tmp.path().join("mem.json");
    let out = numabench()
        .args([
            "mem", "-p", "1", "-t", "2", "-T", "2", "-G", "1", "-l", "2", "--json", "--save",
        ])
        .arg(&save)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let saved: Value = serde_json::from_slice(&std::fs::read(&save).unwrap()).unwrap();
    assert_eq!(doc["records"], saved["records"]);
    assert_eq!(doc["complete"], true);
    let r = &doc["records"][0];
    assert_eq!(r["probe"], "mem");
    assert_eq!(r["params"]["processes"], 1);
    assert_eq!(r["params"]["threads"], 2);
    assert_eq!(r["params"]["thread_bytes"], 2 << 20);
    assert_eq!(r["params"]["global_bytes"], 1 << 20);
    assert_eq!(r["params"]["size_bytes"], (1 << 20) + 2 * (2 << 20));
    assert_eq!(r["params"]["loops"], 2);
    assert_eq!(r["params"]["access"], "read+write");
    let m = &r["metrics"];
    assert_eq!(m["total_speed_gb_s"]["unit"], "GB/s");
    assert_eq!(m["total_speed_gb_s"]["better"], "higher");
    assert_eq!(m["runtime_max_s"]["better"], "lower");
    assert!(m["data_total_gb"]["value"].as_f64().unwrap() > 0.0);
    for k in [
        "runtime_min_s",
        "runtime_avg_s",
        "spread_runtime_pct",
        "thread_speed_gb_s",
        "user_time_s",
        "system_time_s",
    ] {
        assert!(m[k]["value"].is_number(), "{k}: {r}");
    }
    // Every area's pages were located: global + two thread areas.
    let areas = r["params"]["memory_placement"].as_array().unwrap();
    assert_eq!(areas.len(), 3, "{r}");
    assert!(
        r["placement"]["pages_by_node"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum::<u64>()
            > 0
    );
    // perf's text went to stderr.
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("GB/sec total speed"), "{err}");
}

#[test]
fn sigint_stops_reaps_and_reports_partial_results() {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_numabench"))
        .args(["mem", "-p", "4", "-t", "1", "-P", "16", "-s", "30", "-d"])
        .env_remove("NUMABENCH_SYSFS_ROOT")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let me = child.id() as i32;
    std::thread::sleep(Duration::from_secs(1));
    // The run is under way with its four processes.
    let kids = children_of(me);
    assert_eq!(kids.len(), 4, "children of {me}: {kids:?}");
    // SAFETY: sending SIGINT to the child we spawned.
    assert_eq!(unsafe { libc::kill(me, libc::SIGINT) }, 0);
    let t = Instant::now();
    let status = child.wait().unwrap();
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "took {:?} to stop",
        t.elapsed()
    );
    let mut text = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    assert_eq!(status.code(), Some(130), "{text}");
    assert!(text.contains("INTERRUPTED by signal 2"), "{text}");
    assert!(text.contains("GB/sec total speed"), "{text}");
    let pids = child_pids(&text);
    assert_eq!(pids.len(), 4, "{text}");
    assert_eq!(
        {
            let mut k = kids.clone();
            k.sort();
            k
        },
        {
            let mut p = pids.clone();
            p.sort();
            p
        }
    );
    for pid in pids {
        assert!(!task_alive(pid), "child {pid} survived SIGINT");
    }
    assert!(children_of(me).is_empty());
}

#[test]
fn help_uses_perfs_option_names() {
    let text = String::from_utf8(stdout_of(["mem", "--help"])).unwrap();
    for name in [
        "--nr_proc",
        "--nr_threads",
        "--mb_global",
        "--mb_proc",
        "--mb_proc_locked",
        "--mb_thread",
        "--nr_loops",
        "--nr_secs",
        "--usleep",
        "--data_reads",
        "--data_writes",
        "--data_backwards",
        "--data_zero_memset",
        "--data_rand_walk",
        "--init_zero",
        "--init_random",
        "--init_cpu0",
        "--perturb_secs",
        "--show_details",
        "--all",
        "--thp",
        "--show_convergence",
        "--measure_convergence",
        "--quiet",
        "--serialize-startup",
        "--cpus",
        "--memnodes",
    ] {
        assert!(text.contains(name), "{name} missing from --help");
    }
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    rejects(
        &["mem", "-p", "1", "-t", "1", "-P", "1", "--bogus"],
        "--bogus",
    );
    rejects(&["mem", "-p", "0", "-t", "1", "-P", "1"], "-p/--nr_proc 0");
    rejects(&["mem", "-t", "1", "-P", "1"], "-p/--nr_proc is required");
    rejects(&["mem", "-p", "1", "-t", "1"], "some memory must be given");
    rejects(
        &["mem", "-p", "1", "-t", "1", "-P", "1", "-C", "4095"],
        "CPU 4095",
    );
    rejects(
        &["mem", "-p", "1", "-t", "1", "-P", "1", "-M", "63"],
        "node 63 does not exist",
    );
    rejects(
        &["mem", "-p", "1", "-t", "1", "-P", "1", "-C", "0-"],
        "not a valid token",
    );
    rejects(
        &["mem", "-p", "1", "-t", "1", "-P", "1", "-M", "0,,1"],
        "empty token",
    );
    rejects(&["mem", "-p", "1", "-t", "1", "-P", "2", "-L", "3"], "-L");
    rejects(
        &["mem", "-p", "1", "-t", "1", "-P", "x"],
        "not a number of MB",
    );
    rejects(&["mem", "-a", "-p", "2"], "--all");
    rejects(
        &["mem", "-p", "1", "-t", "1", "-P", "1", "--secs", "2"],
        "--all",
    );
}

#[test]
fn the_suite_list_names_every_test_with_its_arguments_here() {
    let out = String::from_utf8(stdout_of(["mem", "--all", "--list", "--secs", "1"])).unwrap();
    let lines: Vec<(&str, &str)> = out
        .lines()
        .map(|l| {
            l.split_once('\t')
                .unwrap_or_else(|| panic!("no tab in {l:?}"))
        })
        .collect();
    // perf's suite has 45 tests, in its order.
    assert_eq!(lines.len(), 45, "{out}");
    assert_eq!(lines[0].0, "RAM-bw-local");
    let (_, args) = lines[0];
    assert!(
        args.starts_with("-p 1 -t 1 -P ") && args.contains(" -s 1 ") && args.contains("-zZq"),
        "{args}"
    );
    // Every line either runs or says why not; what runs parses as mem's
    // own arguments.
    for (name, what) in &lines {
        if let Some(why) = what.strip_prefix("skipped: ") {
            assert!(!why.is_empty(), "{name}");
        } else {
            assert!(what.contains(" -s 1 "), "{name}: {what}");
        }
    }
    rejects(
        &["mem", "--list", "-p", "1", "-t", "1", "-P", "1"],
        "--list",
    );
}
