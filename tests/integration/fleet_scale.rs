//! A synthetic fleet of 10,000 two-node machines with four planted
//! findings of different sorts: the report must name exactly those, and its
//! memory must grow with the machines, not with the documents it read.

use super::super::util::{fixture, numabench};
use serde_json::{Value, json};
use std::path::Path;

/// Machines in the fleet.
const MACHINES: usize = 10_000;
/// Folders they are spread over (the first alone is a 2,000-machine fleet).
const FOLDERS: usize = 5;

fn topology(machine: &str) -> Value {
    let out = numabench()
        .args(["topo", "--json", "--sysfs-root"])
        .arg(fixture(machine))
        .output()
        .unwrap();
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A deterministic jitter in [-1, 1) per machine and figure.
fn jitter(i: usize, k: usize) -> f64 {
    let mut x = (i as u64 * 2_654_435_761 + k as u64 * 40_503) % 1_000_003;
    x = x * 48_271 % 1_000_003;
    x as f64 / 500_001.5 - 1.0
}

fn record(kind: &str, c: usize, m: usize, value: f64) -> Value {
    let (metric, unit, better) = if kind == "latency" {
        ("latency_ns", "ns", "lower")
    } else {
        ("bandwidth_mb_s", "MB/s", "higher")
    };
    json!({
        "probe": "matrix",
        "name": format!("{kind} {c}->{m}"),
        "params": {"kind": kind, "cpu_node": c, "mem_node": m, "threads": 1},
        "metrics": {metric: {"value": value, "unit": unit, "better": better}},
        "samples": {metric: [value * 0.995, value, value * 0.998]},
        "placement": {"pages_by_node": {m.to_string(): 4096}, "on_target_pct": 100.0, "huge_pct": 0.0, "cpus_seen": [c]}
    })
}

/// One machine's document; `plant` changes it.
fn document(i: usize, topo: &Value, plant: &dyn Fn(&mut Value)) -> Value {
    let nodes = topo["nodes"].as_array().unwrap().len();
    let mut records = Vec::new();
    for c in 0..nodes {
        for m in 0..nodes {
            let k = c * nodes + m;
            let local = c == m;
            let bw = if local { 12_000.0 } else { 7_000.0 } * (1.0 + 0.01 * jitter(i, k));
            let lat = if local { 95.0 } else { 150.0 } * (1.0 + 0.01 * jitter(i, k + 7));
            records.push(record("bandwidth_1t", c, m, bw));
            records.push(record("bandwidth_saturated", c, m, bw * 3.0));
            records.push(record("latency", c, m, lat));
        }
    }
    let mut v = json!({
        "schema": 1, "tool": "numabench", "version": "0.1.0",
        "command": ["numabench", "run", "--profile", "quick"],
        "started": "2026-11-25T10:00:00Z", "finished": "2026-11-25T10:00:30Z",
        "complete": true,
        "host": {
            "hostname": "node", "kernel": "6.1.0-27-amd64", "cpu_model": "Synthetic EPYC",
            "thp": {"enabled": "always", "defrag": "madvise"}, "numa_balancing": 1,
            "allowed": topo["allowed"].clone(), "topology": topo.clone(),
            "batch_node": format!("m{i:05}")
        },
        "records": records
    });
    plant(&mut v);
    v
}

fn scale_value(v: &mut Value, name: &str, metric: &str, factor: f64) {
    for r in v["records"].as_array_mut().unwrap() {
        if r["name"] == name {
            let x = r["metrics"][metric]["value"].as_f64().unwrap();
            r["metrics"][metric]["value"] = json!(x * factor);
        }
    }
}

/// Writes the fleet; its total size in bytes.
fn write_fleet(dir: &Path) -> u64 {
    let two = topology("two-node");
    let one = topology("local-1node");
    let mut bytes = 0;
    for i in 0..MACHINES {
        let v = match i {
            // A missing memory channel on node 1: half its local bandwidth.
            1000 => document(i, &two, &|v| {
                scale_value(v, "bandwidth_1t 1->1", "bandwidth_mb_s", 0.5)
            }),
            // A BIOS setting: remote latency 30% up.
            2000 => document(i, &two, &|v| {
                scale_value(v, "latency 0->1", "latency_ns", 1.3)
            }),
            // Sub-NUMA clustering off: one node where the others have two.
            3000 => document(i, &one, &|_| {}),
            // A node left on the old kernel.
            4000 => document(i, &two, &|v| v["host"]["kernel"] = json!("5.10.0-9-amd64")),
            _ => document(i, &two, &|_| {}),
        };
        let folder = dir.join(format!("f{}", i * FOLDERS / MACHINES));
        std::fs::create_dir_all(&folder).unwrap();
        let text = serde_json::to_vec(&v).unwrap();
        bytes += text.len() as u64;
        std::fs::write(folder.join(format!("m{i:05}.json")), text).unwrap();
    }
    std::fs::write(dir.join("f0/unrelated.json"), "{\"a\": [1, 2]}").unwrap();
    bytes
}

/// The child's peak resident memory so far, in KiB (`VmHWM`, its own
/// address space's high-water mark; `None` once it has exited). The
/// kernel's `ru_maxrss` would not do: it counts the memory of the test
/// process the child was spawned from.
fn peak_kib(pid: u32) -> Option<i64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs `fleet report --json DIR`; (exit code, report, peak resident KiB,
/// seconds).
fn report(dir: &Path) -> (Option<i32>, Value, i64, f64) {
    let started = std::time::Instant::now();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("numabench"))
        .args(["fleet", "report", "--json"])
        .arg(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        use std::io::Read;
        let mut out = Vec::new();
        let mut stdout = stdout;
        stdout.read_to_end(&mut out).unwrap();
        out
    });
    // The high-water mark only grows: the last look before the exit is the
    // peak (the report is written at the end, through a pipe this test
    // reads, which leaves time for a look after the peak).
    let mut peak = 0;
    while child.try_wait().unwrap().is_none() {
        if let Some(kib) = peak_kib(child.id()) {
            peak = peak.max(kib);
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let status = child.wait().unwrap();
    let secs = started.elapsed().as_secs_f64();
    let out = reader.join().unwrap();
    let v = serde_json::from_slice(&out).unwrap_or_else(|e| panic!("{e}"));
    (status.code(), v, peak, secs)
}

#[test]
fn ten_thousand_documents_with_four_planted_findings() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = write_fleet(dir.path());
    let (code, v, rss_all, secs) = report(dir.path());
    assert_eq!(code, Some(3));
    assert_eq!(
        v["flagged"],
        json!(["m01000", "m02000", "m03000", "m04000"]),
        "{}",
        v["summary"]
    );
    let r = &v["report"];
    assert_eq!(r["machines"].as_array().unwrap().len(), MACHINES);
    let main = &r["kinds"][0];
    assert_eq!(main["machines"].as_array().unwrap().len(), MACHINES - 1);
    let figure = |id: &str| {
        main["figures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == id)
            .unwrap()
            .clone()
    };
    let bw = figure("local_bw_1t_mb_s");
    assert_eq!(bw["outliers"][0]["machine"], "m01000");
    assert_eq!(bw["outliers"][0]["cell"], "1->1");
    let lat = figure("remote_idle_latency_ns");
    assert_eq!(lat["outliers"][0]["machine"], "m02000");
    assert_eq!(main["drift"][0]["setting"], "kernel");
    assert_eq!(
        main["drift"][0]["differing"],
        json!([["m04000", "5.10.0-9-amd64"]])
    );
    assert_eq!(r["kinds"][1]["kind"]["nodes"], 1);
    assert!(r["kinds"][1]["rare_beside"].is_array());
    assert!(
        v["notes"][0].as_str().unwrap().contains("unrelated.json"),
        "{}",
        v["notes"]
    );

    // Memory: the fifth of the fleet alone, against the whole.
    let (_, part, rss_part, _) = report(&dir.path().join("f0"));
    assert_eq!(
        part["report"]["machines"].as_array().unwrap().len(),
        MACHINES / FOLDERS
    );
    let per_machine = (rss_all - rss_part) as f64 * 1024.0 / (MACHINES - MACHINES / FOLDERS) as f64;
    let per_document = bytes as f64 / MACHINES as f64;
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!(
            "fleet report: {MACHINES} documents ({:.0} MB) in {secs:.2} s, peak {} MiB; {} machines: {} MiB; {per_machine:.0} bytes per added machine, documents {per_document:.0} bytes each\n",
            bytes as f64 / 1e6,
            rss_all / 1024,
            MACHINES / FOLDERS,
            rss_part / 1024
        )
        .as_bytes(),
    );
    // What grows is a row per machine, under the document it came from:
    // keeping each parsed document would take many times its text. (Half
    // a document was the bound once; it measured 5575-5650 bytes against
    // 5621, so allocator noise alone failed it.)
    assert!(
        per_machine < per_document,
        "{per_machine} vs {per_document}"
    );
}

/// Clicks the first column of figures in the machines table twice and
/// prints the column after each click.
const SORT_PROBE: &str = "<script>window.addEventListener('load',function(){\
var t=Array.from(document.querySelectorAll('table')).find(function(t){return t.rows.length>10&&t.rows[0].cells[0].textContent==='machine';});\
var col=function(){return Array.from(t.rows).slice(1).map(function(r){return r.cells[1].textContent;}).join(',');};\
var th=t.rows[0].cells[1];th.click();var up=col();th.click();var down=col();\
var p=document.createElement('pre');p.id='fleet-sort';p.textContent='up='+up+' down='+down;\
document.body.appendChild(p);});</script>";

#[test]
fn the_html_page_charts_names_the_outlier_and_sorts() {
    let dir = tempfile::tempdir().unwrap();
    let two = topology("two-node");
    let fleet = dir.path().join("fleet");
    std::fs::create_dir_all(&fleet).unwrap();
    for i in 0..30 {
        let v = document(i, &two, &|v| {
            if i == 7 {
                scale_value(v, "bandwidth_1t 0->0", "bandwidth_mb_s", 0.5);
            }
        });
        std::fs::write(
            fleet.join(format!("m{i}.json")),
            serde_json::to_vec(&v).unwrap(),
        )
        .unwrap();
    }
    let page = dir.path().join("fleet.html");
    let out = numabench()
        .args(["fleet", "report", "-o"])
        .arg(&page)
        .arg(&fleet)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let html = std::fs::read_to_string(&page).unwrap();
    // The outlier is named on its figure's chart, in red.
    assert!(
        html.contains("fill=\"#d62728\" text-anchor=\"start\">m00007 ")
            || html.contains("fill=\"#d62728\" text-anchor=\"end\">m00007 "),
        "no named outlier on a chart"
    );
    let check = super::super::report::check_page(&page, dir.path());
    assert_eq!(check.errors, 0, "{}", check.raw);
    assert_eq!(check.empty_svgs, 0, "{}", check.raw);
    // One histogram per figure the machines have: 9 of them.
    assert_eq!(check.svgs, 9, "{}", check.raw);
    let probed = html.replacen("</body>", &format!("{SORT_PROBE}</body>"), 1);
    let copy = dir.path().join("sort.html");
    std::fs::write(&copy, probed).unwrap();
    let dom = super::super::report::dump_dom(&copy);
    let line = dom
        .split("<pre id=\"fleet-sort\">")
        .nth(1)
        .and_then(|r| r.split("</pre>").next())
        .unwrap_or_else(|| panic!("the sort probe did not run"));
    let (up, down) = line
        .strip_prefix("up=")
        .and_then(|l| l.split_once(" down="))
        .unwrap();
    let nums = |s: &str| -> Vec<f64> { s.split(',').map(|x| x.parse().unwrap()).collect() };
    let (up, down) = (nums(up), nums(down));
    assert_eq!(up.len(), 30);
    assert!(up.windows(2).all(|w| w[0] <= w[1]), "{up:?}");
    assert!(down.windows(2).all(|w| w[0] >= w[1]), "{down:?}");
    // The halved machine sorts first.
    assert!(up[0] < 7_000.0, "{up:?}");
}

#[test]
fn compare_finds_a_fleet_wide_change_and_the_machine_that_moved() {
    let dir = tempfile::tempdir().unwrap();
    let two = topology("two-node");
    let (before, after) = (dir.path().join("before"), dir.path().join("after"));
    for d in [&before, &after] {
        std::fs::create_dir_all(d).unwrap();
    }
    for i in 0..30 {
        let b = document(i, &two, &|_| {});
        // After a kernel update: every machine's remote latency 10% up,
        // and m00005 lost a fifth of its local bandwidth.
        let a = document(i, &two, &|v| {
            for c in ["latency 0->1", "latency 1->0"] {
                scale_value(v, c, "latency_ns", 1.1);
            }
            if i == 5 {
                for c in ["bandwidth_1t 0->0", "bandwidth_1t 1->1"] {
                    scale_value(v, c, "bandwidth_mb_s", 0.8);
                }
            }
        });
        std::fs::write(
            before.join(format!("m{i}.json")),
            serde_json::to_vec(&b).unwrap(),
        )
        .unwrap();
        std::fs::write(
            after.join(format!("m{i}.json")),
            serde_json::to_vec(&a).unwrap(),
        )
        .unwrap();
    }
    let out = numabench()
        .args(["fleet", "compare", "--json"])
        .args([&before, &after])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let fleet = v["comparison"]["fleet"].as_array().unwrap();
    let row = |id: &str| fleet.iter().find(|f| f["figure"] == id).unwrap().clone();
    let lat = row("remote_idle_latency_ns");
    assert_eq!(lat["machines"], 30);
    assert!(
        (lat["median_change_pct"].as_f64().unwrap() + 10.0).abs() < 0.01,
        "{lat}"
    );
    assert_eq!(lat["within_noise"], false);
    assert_eq!(lat["worse_count"], 30);
    let bw = row("local_bw_1t_mb_s");
    assert_eq!(bw["within_noise"], true, "{bw}");
    assert_eq!(bw["worse_count"], 1);
    let text = numabench()
        .args(["fleet", "compare"])
        .args([&before, &after])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("m00005") && l.contains("local_bw_1t_mb_s"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("-20.0%"), "{line}");
}
