//! `numabench sched`: a real short run (every task a row summing to 100%,
//! the burst's messages all delivered, no process left behind), SIGINT in
//! the middle of the burst, the HTML report, bad input.

use crate::util::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Read;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// Every process below `root`: pid -> (parent pid, name).
fn descendants(root: i32) -> BTreeMap<i32, (i32, String)> {
    let mut all = BTreeMap::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue;
        };
        let field = |k: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(k))
                .map(|v| v.trim().to_string())
        };
        if let (Some(ppid), Some(name)) =
            (field("PPid:").and_then(|v| v.parse().ok()), field("Name:"))
        {
            all.insert(pid, (ppid, name));
        }
    }
    let mut out = BTreeMap::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for (pid, (ppid, name)) in &all {
            if *ppid == p && !out.contains_key(pid) {
                out.insert(*pid, (*ppid, name.clone()));
                frontier.push(*pid);
            }
        }
    }
    out
}

/// True while `pid` still exists under the same name (a zombie counts:
/// nobody reaped it).
fn still_there(pid: i32, name: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == name)
}

/// A numabench process that is killed and reaped if the test fails
/// before it ended (its tasks then die with it).
struct Spawned(Child);

impl Drop for Spawned {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

fn spawn(args: &[&str]) -> Spawned {
    Spawned(
        std::process::Command::new(env!("CARGO_BIN_EXE_numabench"))
            .args(args)
            .env_remove("NUMABENCH_SYSFS_ROOT")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    )
}

fn read_all(r: Option<impl Read>) -> String {
    let mut s = String::new();
    r.unwrap().read_to_string(&mut s).unwrap();
    s
}

/// The residency rows of the text table: task number -> (cells).
fn table_rows(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut lines = text.lines().skip_while(|l| !l.starts_with("Task "));
    let header: Vec<String> = lines
        .next()
        .unwrap_or_else(|| panic!("no table header in:\n{text}"))
        .split_whitespace()
        .map(String::from)
        .collect();
    let rows = lines
        .take_while(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect();
    (header, rows)
}

/// Node ids with CPUs, from `numabench topo --json`.
fn cpu_nodes() -> Vec<u64> {
    let topo: Value = serde_json::from_slice(&stdout_of(["topo", "--json"])).unwrap();
    topo["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["cpus"].as_array().is_some_and(|c| !c.is_empty()))
        .map(|n| n["id"].as_u64().unwrap())
        .collect()
}

#[test]
fn short_run_has_a_row_per_task_shares_summing_to_100_and_leaves_no_process() {
    let tmp = tempfile::tempdir().unwrap();
    let save = tmp.path().join("sched.json");
    let mut run = spawn(&[
        "sched",
        "2",
        "--elements",
        "100000",
        "--passes",
        "60",
        "--burst-at",
        "0",
        "--burst-groups",
        "1",
        "--json",
        "--save",
        save.to_str().unwrap(),
    ]);
    let child = &mut run.0;
    let root = child.id() as i32;
    // Every process of the run that could be seen while it ran.
    let mut seen = BTreeMap::new();
    let status = loop {
        seen.extend(descendants(root));
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let stdout = read_all(child.stdout.take());
    let stderr = read_all(child.stderr.take());
    assert!(status.success(), "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["complete"], true);
    let records = doc["records"].as_array().unwrap();
    let tasks: Vec<&Value> = records
        .iter()
        .filter(|r| r["name"].as_str().unwrap().starts_with("task "))
        .collect();
    assert_eq!(tasks.len(), 2, "{stdout}");
    let nodes = cpu_nodes();
    for t in &tasks {
        assert_eq!(t["probe"], "sched");
        let pct = t["params"]["time_pct_by_node"].as_object().unwrap();
        let keys: Vec<u64> = pct.keys().map(|k| k.parse().unwrap()).collect();
        assert_eq!(keys, nodes, "{t}");
        let sum: f64 = pct.values().map(|v| v.as_f64().unwrap()).sum();
        assert!((sum - 100.0).abs() <= 0.5, "shares sum to {sum}: {t}");
        assert!(nodes.contains(&t["params"]["start_node"].as_u64().unwrap()));
        assert!(nodes.contains(&t["params"]["most_time_node"].as_u64().unwrap()));
        let pages: u64 = t["placement"]["pages_by_node"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum();
        // 100000 x 20 bytes of arrays, every page located.
        assert!(pages >= 2_000_000 / 4096, "{t}");
    }
    // CPU time comes in clock ticks: a task of a few tens of ms may be
    // charged none, the two together some.
    let user: f64 = tasks
        .iter()
        .map(|t| t["metrics"]["user_time_s"]["value"].as_f64().unwrap())
        .sum();
    assert!(user > 0.0, "{tasks:?}");
    let s = records.iter().find(|r| r["name"] == "summary").unwrap();
    // The burst really moved every message between its processes.
    assert_eq!(s["params"]["burst"], "ran", "{s}");
    assert_eq!(s["params"]["burst_processes"], 40);
    assert_eq!(s["params"]["burst_messages_expected"], 20 * 20 * 100);
    assert_eq!(s["params"]["burst_messages_sent"], 20 * 20 * 100);
    assert_eq!(s["params"]["burst_messages_received"], 20 * 20 * 100);
    assert_eq!(s["params"]["burst_complete"], true);
    let m = |k: &str| s["metrics"][k]["value"].as_f64().unwrap();
    assert!(m("burst_s") > 0.0 && m("elapsed_s") > 0.0);
    assert!(
        (m("elapsed_minus_burst_s") - (m("elapsed_s") - m("burst_within_tasks_s"))).abs() < 1e-9
    );
    let total: f64 = tasks
        .iter()
        .map(|t| t["metrics"]["user_time_s"]["value"].as_f64().unwrap())
        .sum();
    assert!((m("total_user_time_s") - total).abs() < 1e-6);
    assert!(m("sampler_overhead_pct") > 0.0 && m("sampler_overhead_pct") < 100.0);
    // The table went to stderr: a row per task, a column per node.
    let (header, rows) = table_rows(&stderr);
    let node_cols: Vec<String> = nodes.iter().map(|n| format!("node{n:02}")).collect();
    assert_eq!(header[1..=nodes.len()], node_cols[..], "{stderr}");
    assert_eq!(rows.len(), 2, "{stderr}");
    for row in &rows {
        let sum: f64 = row[1..=nodes.len()]
            .iter()
            .map(|c| c.parse::<f64>().unwrap())
            .sum();
        assert!((sum - 100.0).abs() <= 0.5, "{row:?}");
    }
    for k in [
        "AverageUserTime",
        "ElapsedTime (E)",
        "BurstTime (H)",
        "E - H",
    ] {
        assert!(stderr.contains(k), "{k} missing:\n{stderr}");
    }
    // The saved file is the printed document.
    let saved: Value = serde_json::from_slice(&std::fs::read(&save).unwrap()).unwrap();
    assert_eq!(saved["records"], doc["records"]);
    // The tasks and the burst's leader were children of the run, and no
    // process of the run is left (a freshly forked one may have been seen
    // under its parent's name).
    for pid in tasks
        .iter()
        .map(|t| &t["params"]["pid"])
        .chain([&s["params"]["burst_pid"]])
    {
        let pid = pid.as_i64().unwrap() as i32;
        assert_eq!(seen.get(&pid).map(|x| x.0), Some(root), "{pid}: {seen:?}");
    }
    assert!(seen.len() > 3, "no burst process was seen: {seen:?}");
    for (pid, (_, name)) in &seen {
        assert!(!still_there(*pid, name), "{name} ({pid}) outlived the run");
    }
    // The report draws the residency table.
    let html = String::from_utf8(stdout_of(["report".as_ref(), save.as_os_str()])).unwrap();
    assert!(html.contains("<th>iSched</th>") && html.contains("<th>MSched</th>"));
    assert!(html.contains("runnable tasks per node"));
}

#[test]
fn tasks_that_finish_before_the_burst_time_say_there_was_no_burst() {
    let out = numabench()
        .args([
            "sched",
            "1",
            "--elements",
            "10000",
            "--passes",
            "2",
            "--burst-at",
            "60",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_, rows) = table_rows(&text);
    assert_eq!(rows.len(), 1, "{text}");
    assert!(text.contains("no burst: every task finished"), "{text}");
    assert!(text.contains("not reached"), "{text}");
}

#[test]
fn sigint_during_the_burst_stops_and_reaps_everything_and_exits_130() {
    let tmp = tempfile::tempdir().unwrap();
    let save = tmp.path().join("partial.json");
    let mut run = spawn(&[
        "sched",
        "2",
        "--elements",
        "1000000",
        "--passes",
        "100000",
        "--burst-at",
        "0.2",
        "--burst-groups",
        "20",
        "--save",
        save.to_str().unwrap(),
    ]);
    let child = &mut run.0;
    let root = child.id() as i32;
    let t = Instant::now();
    // Wait until the burst's processes are there.
    let snapshot = loop {
        let d = descendants(root);
        if d.values()
            .any(|(_, n)| n == "sched sender" || n == "sched receiver")
        {
            break d;
        }
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "no burst process appeared: {d:?}"
        );
        assert!(child.try_wait().unwrap().is_none(), "ended early");
        std::thread::sleep(Duration::from_millis(5));
    };
    // Two tasks and the burst's leader, and the burst's processes below it.
    let direct: Vec<i32> = snapshot
        .iter()
        .filter(|(_, (ppid, _))| *ppid == root)
        .map(|(pid, _)| *pid)
        .collect();
    assert_eq!(direct.len(), 3, "{snapshot:?}");
    assert!(snapshot.len() > 3, "{snapshot:?}");
    // SAFETY: sending SIGINT to the child this test spawned.
    assert_eq!(unsafe { libc::kill(root, libc::SIGINT) }, 0);
    let t = Instant::now();
    let status = child.wait().unwrap();
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "took {:?}",
        t.elapsed()
    );
    let text = read_all(child.stdout.take());
    assert_eq!(status.code(), Some(130), "{text}");
    assert!(text.contains("INTERRUPTED by signal 2"), "{text}");
    for (pid, (_, name)) in &snapshot {
        assert!(!still_there(*pid, name), "{name} ({pid}) survived SIGINT");
    }
    let doc: Value = serde_json::from_slice(&std::fs::read(&save).unwrap()).unwrap();
    assert_eq!(doc["complete"], false);
    let s = doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "summary")
        .unwrap();
    assert_eq!(s["params"]["interrupted_by_signal"], 2);
    assert_eq!(s["params"]["burst_complete"], false);
    // The leader stopped its processes itself: nothing needed SIGKILL.
    let notes = s["notes"].to_string();
    assert!(!notes.contains("was killed"), "{notes}");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    rejects(&["sched", "0"], "'0' is not a whole number from 1 to 4096");
    rejects(&["sched", "two"], "'two' is not a whole number");
    rejects(&["sched"], "NTASKS");
    rejects(&["sched", "2", "--elements", "0"], "--elements");
    rejects(&["sched", "2", "--elements", "1e6"], "'1e6'");
    rejects(&["sched", "2", "--passes", "0"], "--passes");
    rejects(&["sched", "2", "--interval-ms", "0"], "from 1 to 1000");
    rejects(&["sched", "2", "--burst-groups", "0"], "--burst-groups");
    rejects(&["sched", "4,x"], "'x' is not a whole number");
    rejects(&["sched", "4", "--series"], "--series");
    rejects(
        &["sched", "2", "--no-burst", "--burst-pipe"],
        "--burst-pipe",
    );
    rejects(
        &["sched", "--series", "--elements", "4294967296"],
        "not even 4 tasks fit",
    );
    rejects(
        &["sched", "2", "--burst-at", "soon"],
        "'soon' is not a number",
    );
    rejects(
        &["sched", "2", "--no-burst", "--burst-groups", "3"],
        "--no-burst",
    );
    rejects(&["sched", "4096", "--elements", "4294967296"], "free");
    rejects(
        &["sched", "1", "--save", "no/such/dir/s.json"],
        "does not exist",
    );
}

/// The summary record of a run in `doc` (`name`: "summary", "N=4 summary").
fn summary<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {doc}"))
}

#[test]
fn defaults_put_the_arrays_beyond_the_cache_and_the_burst_within_the_run() {
    // The largest last-level cache instance this machine lists.
    let topo: Value = serde_json::from_slice(&stdout_of(["topo", "--json"])).unwrap();
    let caches = topo["caches"].as_array().unwrap();
    let level = caches.iter().filter_map(|c| c["level"].as_u64()).max();
    let llc = caches
        .iter()
        .filter(|c| c["level"].as_u64() == level && c["type"] != "Instruction")
        .filter_map(|c| c["size_bytes"].as_u64())
        .max();
    // A burst 1 s in: the passes aim at about 3 s of run.
    let out = numabench()
        .args([
            "sched",
            "2",
            "--burst-at",
            "1",
            "--burst-groups",
            "1",
            "--json",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = summary(&doc, "summary");
    let p = &s["params"];
    let bytes = p["size_bytes"].as_u64().unwrap();
    match llc {
        Some(l) => {
            assert_eq!(p["llc_bytes"], l, "{p}");
            assert!(bytes > l, "{bytes} bytes per task, cache {l}: {p}");
            assert_eq!(bytes, p["size_elements"].as_u64().unwrap() * 20);
        }
        None => assert_eq!(p["size_elements"], 1_000_000),
    }
    assert_eq!(p["target_run_s"], 3.0);
    assert!(p["pass_s"].as_f64().unwrap() > 0.0, "{p}");
    // The tasks were still at work when the burst's processes went.
    assert_eq!(p["burst"], "ran", "{s}");
    let go = p["burst_go_at_s"].as_f64().unwrap();
    let e = s["metrics"]["elapsed_s"]["value"].as_f64().unwrap();
    assert!(go < e, "burst at {go} s, tasks done at {e} s");
    // The chosen values are stated under the title.
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[1].starts_with("size: "), "{text}");
    assert!(lines[1].ends_with("(--elements overrides)"), "{text}");
    assert!(lines[2].starts_with("passes: "), "{text}");
    assert!(lines[2].contains("aimed at 3 s"), "{text}");
}

#[test]
fn a_list_of_counts_ends_with_the_series_table() {
    let out = numabench()
        .args([
            "sched",
            "1,2",
            "--elements",
            "20000",
            "--passes",
            "3",
            "--no-burst",
        ])
        .arg("--json")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    for n in [1, 2] {
        let s = summary(&doc, &format!("N={n} summary"));
        assert_eq!(s["params"]["tasks"], n);
        assert_eq!(s["params"]["passes"], 3, "given, not chosen");
        assert!(s["params"].get("passes_basis").is_none(), "{s}");
    }
    assert_eq!(
        text.lines().filter(|l| l.starts_with("Task ")).count(),
        2,
        "{text}"
    );
    let series = text.split("numa_test series").nth(1).expect(&text);
    let rows: Vec<Vec<&str>> = series
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.first().is_some_and(|c| c.parse::<u32>().is_ok()))
        .collect();
    assert_eq!(rows.len(), 2, "{series}");
    assert_eq!((rows[0][0], rows[1][0]), ("1", "2"));
    assert_eq!(rows[1].last(), Some(&"whole"), "{series}");
    // The saved document gives the same text.
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("s.json");
    std::fs::write(&f, &out.stdout).unwrap();
    let again = stdout_of(["report", "--format", "text", f.to_str().unwrap()]);
    let again = String::from_utf8(again).unwrap();
    assert!(again.contains(series.lines().nth(2).unwrap()), "{again}");
}

#[test]
fn the_pipe_burst_moves_every_message() {
    let out = numabench()
        .args(["sched", "2", "--elements", "100000", "--passes", "30"])
        .args([
            "--burst-at",
            "0",
            "--burst-groups",
            "1",
            "--burst-pipe",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let p = &summary(&doc, "summary")["params"];
    assert_eq!(p["burst_transport"], "pipe");
    assert_eq!(p["burst"], "ran");
    assert_eq!(p["burst_processes"], 40);
    assert_eq!(p["burst_messages_received"], 20 * 20 * 100);
    assert_eq!(p["burst_complete"], true);
}

#[test]
fn sigint_in_a_series_keeps_the_partial_run_out_of_every_average() {
    let mut run = spawn(&[
        "sched",
        "1,2",
        "--elements",
        "1000000",
        "--passes",
        "100000",
        "--no-burst",
    ]);
    let child = &mut run.0;
    let root = child.id() as i32;
    let t = Instant::now();
    while !descendants(root)
        .values()
        .any(|(_, n)| n.starts_with("sched task"))
    {
        assert!(t.elapsed() < Duration::from_secs(30), "no task appeared");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: sending SIGINT to the child this test spawned.
    assert_eq!(unsafe { libc::kill(root, libc::SIGINT) }, 0);
    let status = child.wait().unwrap();
    let text = read_all(child.stdout.take());
    assert_eq!(status.code(), Some(130), "{text}");
    assert!(text.contains("INTERRUPTED by signal 2"), "{text}");
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("AverageUserTime -"), "{text}");
    // The series stopped at the cut run, shown without figures.
    let series = text.split("numa_test series").nth(1).expect(&text);
    assert!(
        series.contains("partial: 0 of 1 tasks finished"),
        "{series}"
    );
    assert!(
        !series.lines().any(|l| l.trim_start().starts_with("2 ")),
        "{series}"
    );
}
