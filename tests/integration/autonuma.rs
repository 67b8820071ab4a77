//! `numabench autonuma`: bad input, and short real runs on this machine
//! (memory per node over time, all of it on the start node, the
//! convergence rule on one node, charts, CSV, the report's marker).

use crate::util::*;
use serde_json::Value;
use std::time::{Duration, Instant};

fn topo() -> Value {
    topo_json(std::path::Path::new("/"))
}

/// The CPUs this process may use, as numabench counts them.
fn nr_cpus() -> usize {
    topo()["allowed"]["cpus"].as_array().unwrap().len()
}

fn nodes_with_cpus() -> usize {
    topo()["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["cpus"].as_array().is_some_and(|c| !c.is_empty()))
        .count()
}

fn bad(args: &[&str], needle: &str) {
    rejects(&[&["autonuma"], args].concat(), needle);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    bad(&["numa03"], "'numa03' is not a test");
    bad(&["--runs", "0"], "from 1 to 1000");
    bad(&["--loops", "0"], "'0' is not a whole number");
    bad(&["--loops", "3", "--secs", "2"], "--secs");
    bad(&["--interval", "0"], "from 0.01 to 60");
    bad(&["--interval", "nan"], "'nan'");
    bad(&["--converged-within", "0"], "above 0");
    bad(&["--converged-within", "101"], "up to 100");
    bad(&["--mem", "0"], "from 1 to");
    bad(&["--sample-pages", "8"], "from 16 to 16777216");
    bad(&["--exact", "--sample-pages", "100"], "--sample-pages");
    bad(&["numa02", "--mem", "1073741824"], "free on node 0");
    bad(&["numa03"], "numa01_PER_NODE");
    bad(&["--threads", "0"], "from 1 to 4096");
    bad(&["--threads", "x"], "'x' is not a whole number");
}

#[test]
fn bad_output_paths_leave_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/dir");
    let save = missing.join("a.json");
    bad(
        &[
            "numa02",
            "--mem",
            "1",
            "--loops",
            "1",
            "--save",
            save.to_str().unwrap(),
        ],
        "does not exist",
    );
    bad(
        &[
            "numa02",
            "--mem",
            "1",
            "--loops",
            "1",
            "--out",
            missing.to_str().unwrap(),
        ],
        "does not exist",
    );
    let file = dir.path().join("plain");
    std::fs::write(&file, "x").unwrap();
    bad(
        &[
            "numa02",
            "--mem",
            "1",
            "--loops",
            "1",
            "--out",
            file.to_str().unwrap(),
        ],
        "not a directory",
    );
    assert!(!dir.path().join("no").exists());
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "only the plain file: {left:?}");
}

/// MiB a look may count beyond the data: thread stacks and allocator
/// memory, up to a 2 MiB huge page per thread where the system backs
/// everything with huge pages, and 1 MiB for the rest.
fn slack(processes: usize, threads: usize) -> f64 {
    (processes * (threads + 1)) as f64 * 2.0 + 1.0
}

fn record<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no record {name} in {doc}"))
}

fn series<'a>(rec: &'a Value, name: &str) -> &'a Value {
    rec["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no series {name} in {rec}"))
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

#[test]
fn a_short_numa02_run_sees_all_its_memory_on_the_start_node() {
    if nodes_with_cpus() != 1 {
        eprintln!("skipped: the start-node assertions are for a one-node machine");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("charts");
    let save = dir.path().join("a.json");
    let out = numabench()
        .args(["autonuma", "numa02", "--mem", "16", "--loops", "3000"])
        .args(["--interval", "0.02", "--out", out_dir.to_str().unwrap()])
        .args(["--save", save.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("numa02: P = 1 process(es)"), "{text}");
    assert!(text.contains("(lower is better)"), "{text}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        doc,
        serde_json::from_slice::<Value>(&std::fs::read(&save).unwrap()).unwrap()
    );
    assert_eq!(doc["complete"], true);
    let rec = record(&doc, "numa02 run 1");
    let threads = nr_cpus();
    assert_eq!(rec["params"]["threads"], threads as u64);
    assert_eq!(rec["params"]["processes"], 1);
    // 16 MiB and the threads' stacks are fewer pages than numa_maps walks
    // for the cost of a sample: every look walks it.
    let p = &rec["params"];
    assert_eq!(p["look_method"], "sampled");
    assert_eq!(p["sample_pages"], 4096);
    assert_eq!(
        (&p["sampled_looks"], &p["exact_looks"]),
        (&0.into(), &p["looks"]),
        "{p}"
    );
    assert!(p.get("sample_stride_max").is_none(), "{p}");
    // The engine's -0 left no policy of its own on the memory.
    assert_eq!(p["policies_seen"], serde_json::json!(["default"]), "{p}");

    let mem = series(rec, "memory_per_node");
    let x = floats(&mem["x"]);
    assert!(x.len() >= 2, "too few looks to judge: {mem}");
    assert!(x[0] < 0.5, "the first look is at the release: {x:?}");
    assert!(x.windows(2).all(|w| w[1] > w[0]), "{x:?}");
    let lines = mem["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 1, "one node, one line: {mem}");
    assert_eq!(lines[0]["label"], "node 0");
    // Every look finds the whole 16 MiB on node 0, plus a little stack and
    // allocator memory.
    for y in floats(&lines[0]["y"]) {
        assert!(
            (16.0..=16.0 + slack(1, threads)).contains(&y),
            "{y} MiB at a look: {mem}"
        );
    }
    let thr = series(rec, "threads_per_node");
    for y in floats(&thr["lines"][0]["y"]) {
        assert_eq!(y, threads as f64, "{thr}");
    }
    // One node holds all of its share from the first look: converged there.
    assert_eq!(
        rec["metrics"]["convergence_s"]["value"].as_f64(),
        Some(x[0])
    );
    assert_eq!(rec["params"]["final_share_pct"]["0"], 100.0);
    let overhead = rec["metrics"]["sampling_overhead_pct"]["value"]
        .as_f64()
        .unwrap();
    assert!(overhead > 0.0 && overhead < 100.0, "{overhead}");
    assert_eq!(rec["params"]["loops_min"], 3000);

    let svg = std::fs::read_to_string(out_dir.join("numa02-run1.svg")).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("converged"),
        "{svg}"
    );
    assert_eq!(svg.matches("<polyline").count(), 1);
    let csv = std::fs::read_to_string(out_dir.join("numa02-run1.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(
        rows[0],
        "time_s,node0_mib,node0_threads,cores_with_two_threads"
    );
    assert_eq!(rows.len(), x.len() + 1);

    // The report draws the chart with the convergence marker.
    let html = stdout_of(["report", save.to_str().unwrap()]);
    let html = String::from_utf8(html).unwrap();
    assert!(html.contains("numa02 run 1: memory_per_node"), "no chart");
    assert!(html.contains(">converged "), "no marker");
}

/// Mean MiB over the looks of a run's memory series, and the looks.
fn mean_mib(rec: &Value) -> (f64, usize) {
    let y = floats(&series(rec, "memory_per_node")["lines"][0]["y"]);
    (y.iter().sum::<f64>() / y.len() as f64, y.len())
}

#[test]
fn sampled_looks_see_what_exact_looks_see() {
    if nodes_with_cpus() != 1 {
        eprintln!("skipped: the start-node assertions are for a one-node machine");
        return;
    }
    let run = |extra: &[&str]| -> Value {
        let out = numabench()
            .args(["autonuma", "numa02", "--mem", "128", "--loops", "150"])
            .args(["--interval", "0.02", "--json"])
            .args(extra)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{text}");
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        record(&doc, "numa02 run 1").clone()
    };
    // 128 MiB is 32768 pages and more, over 4 x 1024: the looks sample,
    // each of 1024 queried pages standing for 32 or more.
    let sampled = run(&["--sample-pages", "1024"]);
    let exact = run(&["--exact"]);
    let p = &sampled["params"];
    assert_eq!(p["look_method"], "sampled");
    assert_eq!(
        (&p["sampled_looks"], &p["exact_looks"]),
        (&p["looks"], &0.into()),
        "{p}"
    );
    // Sampled looks read no policies, so they claim none.
    assert!(p.get("policies_seen").is_none(), "{p}");
    assert!(p["sampled_pages_max"].as_u64().unwrap() <= 1024 + 64, "{p}");
    assert!(p["sample_stride_max"].as_u64().unwrap() >= 32, "{p}");
    assert!(
        sampled["notes"].to_string().contains("estimated"),
        "{sampled}"
    );
    let p = &exact["params"];
    assert_eq!(p["look_method"], "exact");
    assert!(p.get("sample_pages").is_none(), "{p}");
    assert_eq!(p["exact_looks"], p["looks"], "{p}");
    // The engine's -0 left no policy of its own on the memory.
    assert_eq!(p["policies_seen"], serde_json::json!(["default"]), "{p}");
    // Both see the 128 MiB: the data areas are counted exactly by either
    // (a sample of a mapping all on one node is exact), the edges of the
    // areas and the thread stacks are estimated.
    let threads = nr_cpus();
    let (s, s_looks) = mean_mib(&sampled);
    let (e, e_looks) = mean_mib(&exact);
    assert!(s_looks >= 2 && e_looks >= 2, "{s_looks} {e_looks}");
    for mib in [s, e] {
        assert!(
            (127.0..=128.0 + slack(1, threads) + 1.0).contains(&mib),
            "sampled {s} MiB, exact {e} MiB"
        );
    }
    assert!((s - e).abs() <= 2.0, "sampled {s} MiB, exact {e} MiB");
}

#[test]
fn process_memory_of_two_processes_and_repeated_runs() {
    if nodes_with_cpus() != 1 {
        eprintln!("skipped: the start-node assertions are for a one-node machine");
        return;
    }
    let out = numabench()
        .args(["autonuma", "numa01", "--mem", "8", "--loops", "2000"])
        .args(["--interval", "0.02", "--runs", "2", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    for run in 1..=2 {
        let rec = record(&doc, &format!("numa01 run {run}"));
        assert_eq!(rec["params"]["memory"], "process");
        let mem = series(rec, "memory_per_node");
        // Two processes of 8 MiB each.
        let threads = rec["params"]["threads"].as_u64().unwrap() as usize;
        for y in floats(&mem["lines"][0]["y"]) {
            assert!(
                (16.0..=16.0 + slack(2, threads)).contains(&y),
                "{y} MiB: {mem}"
            );
        }
    }
    let sum = record(&doc, "numa01");
    let times = floats(&sum["samples"]["runtime_s"]);
    assert_eq!(times.len(), 2);
    let mean = (times[0] + times[1]) / 2.0;
    assert!((sum["metrics"]["runtime_s"]["value"].as_f64().unwrap() - mean).abs() < 1e-9);
    assert_eq!(sum["params"]["converged_runs"], 2);
}

#[test]
fn smt_test_records_cores_carrying_two_threads() {
    let out = numabench()
        .args(["autonuma", "numa02_SMT", "--mem", "4", "--loops", "500"])
        .args(["--interval", "0.02", "--no-baselines", "--json"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("cores carrying two of the test's threads"),
        "{text}"
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rec = record(&doc, "numa02_SMT run 1");
    assert_eq!(rec["params"]["threads"], (nr_cpus() / 2).max(1) as u64);
    let cores = series(rec, "cores_with_two_threads");
    let x = floats(&cores["x"]);
    let y = floats(&cores["lines"][0]["y"]);
    assert_eq!(x.len(), y.len());
    let max = y.iter().copied().fold(0.0, f64::max);
    assert_eq!(
        rec["metrics"]["cores_with_two_threads_max"]["value"].as_f64(),
        Some(max)
    );
}

#[test]
fn sigint_stops_the_run_and_keeps_a_partial_document() {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("p.json");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_numabench"))
        .args([
            "autonuma",
            "numa02",
            "--mem",
            "8",
            "--secs",
            "60",
            "--interval",
            "0.1",
            "--no-baselines",
        ])
        .args(["--save", save.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let pid = child.id().to_string();
    assert!(
        std::process::Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "did not stop on SIGINT"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(130));
    let doc: Value = serde_json::from_slice(&std::fs::read(&save).unwrap()).unwrap();
    assert_eq!(doc["complete"], false);
    let rec = record(&doc, "numa02 run 1");
    let notes = rec["notes"].to_string();
    assert!(notes.contains("interrupted"), "{notes}");
    assert!(rec["metrics"]["runtime_s"]["value"].as_f64().unwrap() < 30.0);
}

fn nodes_with_memory() -> usize {
    topo()["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["mem_total_bytes"].as_u64().is_some_and(|b| b > 0))
        .count()
}

#[test]
fn threads_set_t_for_the_test_and_the_text_says_so() {
    let out = numabench()
        .args(["autonuma", "numa02", "--threads", "1", "--mem", "4"])
        // Long enough (about 0.3 s) for looks at 20 ms on a loaded machine.
        .args([
            "--loops",
            "1000",
            "--interval",
            "0.02",
            "--no-baselines",
            "--json",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("numa02: P = 1 process(es) x T = 1 thread(s)"),
        "{text}"
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rec = record(&doc, "numa02 run 1");
    assert_eq!(rec["params"]["threads"], 1);
    // The whole 4 MiB is the one thread's part.
    assert_eq!(rec["params"]["size_bytes"], 4 << 20);
    let notes = rec["notes"].to_string();
    if nr_cpus() != 1 {
        assert!(notes.contains("as given by --threads"), "{notes}");
    }
    let thr = series(rec, "threads_per_node");
    let total: f64 = thr["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| floats(&l["y"])[0])
        .sum();
    assert_eq!(total, 1.0, "{thr}");
}

#[test]
fn per_node_runs_a_process_per_node_with_its_share_of_the_cpus() {
    let out = numabench()
        .args([
            "autonuma",
            "numa01_PER_NODE",
            "--mem",
            "4",
            "--loops",
            "500",
        ])
        .args(["--interval", "0.02", "--no-baselines", "--json"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rec = record(&doc, "numa01_PER_NODE run 1");
    let nodes = nodes_with_cpus();
    assert_eq!(rec["params"]["processes"], nodes as u64);
    assert_eq!(rec["params"]["threads"], (nr_cpus() / nodes).max(1) as u64);
    assert_eq!(rec["params"]["memory"], "process");
    assert!(text.contains("numa01_PER_NODE: P = "), "{text}");
}

#[test]
fn one_node_says_plainly_that_the_baselines_are_not_meaningful() {
    if nodes_with_memory() != 1 {
        eprintln!("skipped: for a machine with one memory node (the VM tests run the baselines)");
        return;
    }
    let out = numabench()
        .args(["autonuma", "numa02", "--mem", "4", "--loops", "500"])
        .args(["--interval", "0.02", "--json"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("no HARD_BIND / INVERSE_BIND baselines: one node with memory"),
        "{text}"
    );
    assert!(!text.contains("of the way from inverse"), "{text}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["numa02 run 1", "numa02"], "no baseline ran");
    assert!(
        record(&doc, "numa02")["metrics"]
            .get("position_pct")
            .is_none()
    );
}
