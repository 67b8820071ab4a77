//! Multi-node behaviour on real kernels: each test boots a QEMU guest with
//! emulated NUMA nodes (scripts/numa-vm), runs numabench there and checks
//! what the guest kernel reports. They check behaviour, never speed.
//!
//! One guest boot per topology; the commands of a test run in one shell
//! script and print their outputs between `@@name` marker lines.

use serde_json::Value;
use std::collections::BTreeMap;
use std::process::Command;
use std::sync::Mutex;

/// Guests share the host's cores; running them one at a time keeps each
/// well inside its timeout.
static ONE_GUEST_AT_A_TIME: Mutex<()> = Mutex::new(());

struct Guest {
    sections: BTreeMap<String, String>,
    raw: String,
}

impl Guest {
    fn text(&self, name: &str) -> &str {
        self.sections
            .get(name)
            .unwrap_or_else(|| panic!("no section {name} in guest output:\n{}", self.raw))
    }

    fn json(&self, name: &str) -> Value {
        serde_json::from_str(self.text(name))
            .unwrap_or_else(|e| panic!("section {name} is not JSON ({e}):\n{}", self.text(name)))
    }
}

/// Boots a guest with `vm_args`, runs each (name, shell command) pair and
/// collects every command's output (stdout and stderr) and exit code.
fn guest(vm_args: &[&str], steps: &[(&str, &str)]) -> Guest {
    let _lock = ONE_GUEST_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let mut script = String::new();
    for (name, cmd) in steps {
        script.push_str(&format!("echo @@{name}; {cmd} 2>&1; echo \"@@rc $?\"\n"));
    }
    let root = env!("CARGO_MANIFEST_DIR");
    let boot = || {
        Command::new(format!("{root}/scripts/numa-vm"))
            .args(vm_args)
            .args([
                "--binary",
                env!("CARGO_BIN_EXE_numabench"),
                "--timeout",
                "180",
                "--",
                "sh",
                "-c",
                &script,
            ])
            .output()
            .expect("cannot run scripts/numa-vm")
    };
    // Every guest here finishes in well under a minute. A timeout (124) is
    // retried once: an emulated guest once stalled past its limit and the
    // stall did not recur; a real hang in numabench would stall the second
    // boot too and still fail.
    let mut out = boot();
    if out.status.code() == Some(124) {
        eprintln!("scripts/numa-vm {vm_args:?} timed out; booting once more");
        out = boot();
    }
    let raw = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "scripts/numa-vm {vm_args:?} failed ({:?}):\n{raw}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let mut sections = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut body = String::new();
    for line in raw.lines() {
        if let Some(name) = line.strip_prefix("@@rc ") {
            if let Some(n) = current.take() {
                sections.insert(format!("{n}.rc"), name.trim().to_string());
                sections.insert(n, std::mem::take(&mut body));
            }
        } else if let Some(name) = line.strip_prefix("@@") {
            current = Some(name.to_string());
            body.clear();
        } else if current.is_some() {
            body.push_str(line);
            body.push('\n');
        }
    }
    Guest { sections, raw }
}

fn ids(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

fn pages_on(place: &Value, node: &str) -> u64 {
    place["placement"]["pages_by_node"][node]
        .as_u64()
        .unwrap_or(0)
}

#[test]
fn two_nodes_topology_binding_pinning_and_interleave() {
    let g = guest(
        &["--preset", "2n"],
        &[
            ("topo", "numabench topo --json"),
            (
                "bind1",
                "numabench place --policy bind:1 --size 64M --cpu-node 0 --json",
            ),
            ("pin3", "numabench place --cpu 3 --size 4M --json"),
            (
                "interleave",
                "numabench place --policy interleave:0,1 --pages base --size 64M --json",
            ),
            (
                "weighted",
                "numabench place --policy weighted-interleave:0-1 --size 4M",
            ),
            (
                "hugetlb1",
                "echo 8 > /sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages && \
                 numabench place --policy bind:1 --pages hugetlb --size 8M --cpu-node 0 --json",
            ),
            (
                "hugetlb0",
                "numabench place --policy bind:0 --pages hugetlb --size 8M --json",
            ),
            ("bad", "numabench place --policy bind:2"),
        ],
    );
    let topo = g.json("topo");
    let nodes = topo["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 2, "{topo}");
    assert_eq!(ids(&nodes[0]["cpus"]), [0, 1]);
    assert_eq!(ids(&nodes[1]["cpus"]), [2, 3]);
    assert_eq!(ids(&nodes[0]["distances"]), [10, 21]);
    assert_eq!(ids(&nodes[1]["distances"]), [21, 10]);
    assert_eq!(topo["numa_balancing"], 1);

    // Memory bound to node 1 from a thread on node 0 lands on node 1.
    let bind = g.json("bind1");
    assert_eq!(bind["cpu_seen_node"], 0, "{bind}");
    assert_eq!(bind["placement"]["on_target_pct"], 100.0, "{bind}");
    assert_eq!(
        pages_on(&bind, "1"),
        bind["placement"]["pages_total"].as_u64().unwrap()
    );
    assert_eq!(pages_on(&bind, "0"), 0);

    // A thread pinned to a node-1 CPU runs there, and first touch follows it.
    let pin = g.json("pin3");
    assert_eq!(pin["cpu_seen"], 3, "{pin}");
    assert_eq!(pin["cpu_seen_node"], 1, "{pin}");
    assert_eq!(pin["placement"]["on_target_pct"], 100.0, "{pin}");
    assert!(pages_on(&pin, "1") > 0 && pages_on(&pin, "0") == 0, "{pin}");

    // Interleave splits base pages within a few percent of 50/50.
    let il = g.json("interleave");
    let (a, b) = (pages_on(&il, "0") as f64, pages_on(&il, "1") as f64);
    let share = a / (a + b);
    assert!(
        (0.47..=0.53).contains(&share),
        "node 0 got {:.1}% ({il})",
        share * 100.0
    );

    // Explicit huge pages from node 1's pool, bound there; node 0 has no
    // pool, so the same request falls back to THP and says why.
    let h1 = g.json("hugetlb1");
    assert_eq!(h1["pages_used"], "hugetlb:2M", "{h1}");
    assert_eq!(h1["placement"]["huge_pct"], 100.0, "{h1}");
    assert_eq!(h1["placement"]["on_target_pct"], 100.0, "{h1}");
    let h0 = g.json("hugetlb0");
    assert_eq!(h0["pages_used"], "thp", "{h0}");
    assert!(
        h0["fallback"]
            .as_str()
            .is_some_and(|f| f.contains("hugetlb")),
        "{h0}"
    );

    // Weighted interleave needs Linux 6.9; the guest runs 6.1 and says so.
    assert_eq!(g.text("weighted.rc"), "1");
    let w = g.text("weighted");
    assert!(
        w.starts_with("numabench: error:") && w.contains("6.9"),
        "{w}"
    );

    // A node the guest lacks is bad input.
    assert_eq!(g.text("bad.rc"), "2");
    assert!(
        g.text("bad").contains("node 2 does not exist (nodes: 0-1)"),
        "{}",
        g.text("bad")
    );
}

#[test]
fn preferred_falls_back_when_its_node_is_full() {
    // Node 1 has 384 MiB; asking for 640 MiB preferred on node 1 fills it
    // and the rest must come from node 0 instead of failing.
    let g = guest(
        &["--nodes", "2", "--cpus", "2,2", "--mem", "1536,384"],
        &[(
            "preferred",
            "numabench place --policy preferred:1 --pages base --size 640M --cpu-node 0 --json",
        )],
    );
    let p = g.json("preferred");
    let (n0, n1) = (pages_on(&p, "0"), pages_on(&p, "1"));
    let mib = |pages: u64| (pages * 4096) >> 20;
    assert!(
        mib(n1) >= 200,
        "node 1 should be filled first: {} MiB ({p})",
        mib(n1)
    );
    assert!(
        mib(n0) >= 640 - 384,
        "the rest must spill to node 0: {} MiB ({p})",
        mib(n0)
    );
    assert_eq!(
        n0 + n1,
        p["placement"]["pages_total"].as_u64().unwrap(),
        "{p}"
    );
}

#[test]
fn four_nodes_with_three_distance_classes() {
    let g = guest(
        &["--preset", "4n"],
        &[
            ("topo", "numabench topo --json"),
            ("text", "numabench topo"),
        ],
    );
    let topo = g.json("topo");
    let nodes = topo["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 4);
    let rows: Vec<Vec<u64>> = nodes.iter().map(|n| ids(&n["distances"])).collect();
    assert_eq!(
        rows,
        [
            [10, 16, 22, 22],
            [16, 10, 22, 22],
            [22, 22, 10, 16],
            [22, 22, 16, 10]
        ]
    );
    for (i, n) in nodes.iter().enumerate() {
        assert_eq!(ids(&n["cpus"]), [i as u64]);
    }
    let text = g.text("text");
    assert!(text.contains("       0  10  16  22  22"), "{text}");
}

#[test]
fn memory_only_node_is_shown_as_such() {
    let g = guest(
        &["--preset", "memonly"],
        &[
            ("topo", "numabench topo --json"),
            ("text", "numabench topo"),
            ("bind2", "numabench place --policy bind:2 --size 16M --json"),
            ("cpunode2", "numabench place --cpu-node 2"),
        ],
    );
    let topo = g.json("topo");
    let n2 = &topo["nodes"][2];
    assert_eq!(n2["has_cpu"], false, "{n2}");
    assert_eq!(n2["has_memory"], true, "{n2}");
    assert!(ids(&n2["cpus"]).is_empty());
    let row = g
        .text("text")
        .lines()
        .find(|l| l.trim_start().starts_with("2  -"))
        .map(str::to_string);
    assert!(
        row.as_deref().is_some_and(|r| r.contains("memory only")),
        "{}",
        g.text("text")
    );
    // Memory can be bound there; threads cannot run there.
    assert_eq!(g.json("bind2")["placement"]["on_target_pct"], 100.0);
    assert_eq!(g.text("cpunode2.rc"), "2");
    assert!(
        g.text("cpunode2").contains("memory only"),
        "{}",
        g.text("cpunode2")
    );
}

#[test]
fn hmat_figures_appear_in_topo() {
    let g = guest(
        &["--preset", "hmat"],
        &[
            ("topo", "numabench topo --json"),
            ("text", "numabench topo"),
        ],
    );
    let topo = g.json("topo");
    let h0 = &topo["nodes"][0]["hmat"];
    assert_eq!(h0["read_latency_ns"], 100, "{h0}");
    assert_eq!(h0["read_bandwidth_mb_s"], 20000, "{h0}");
    assert_eq!(ids(&h0["initiators"]), [0]);
    let h2 = &topo["nodes"][2]["hmat"];
    assert_eq!(h2["read_latency_ns"], 300, "{h2}");
    assert_eq!(h2["write_bandwidth_mb_s"], 5000, "{h2}");
    let text = g.text("text");
    assert!(text.contains("HMAT node"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == ["2", "0", "5000", "5000", "300", "300"]),
        "{text}"
    );
}

#[test]
fn a_real_cpuset_limits_what_numabench_uses() {
    // A cgroup v2 cpuset with CPUs 2-3 and memory node 1 only.
    let enter = "echo +cpuset > /sys/fs/cgroup/cgroup.subtree_control && mkdir /sys/fs/cgroup/t && \
                 echo 2-3 > /sys/fs/cgroup/t/cpuset.cpus && echo 1 > /sys/fs/cgroup/t/cpuset.mems && \
                 echo $$ > /sys/fs/cgroup/t/cgroup.procs";
    let g = guest(
        &["--preset", "2n"],
        &[
            ("topo", &format!("{enter} && numabench topo --json")),
            (
                "text",
                "cd /sys/fs/cgroup/t && echo $$ > cgroup.procs && numabench topo",
            ),
            (
                "bind0",
                "echo $$ > /sys/fs/cgroup/t/cgroup.procs && numabench place --policy bind:0",
            ),
            (
                "cpu0",
                "echo $$ > /sys/fs/cgroup/t/cgroup.procs && numabench place --cpu 0",
            ),
            (
                "default",
                "echo $$ > /sys/fs/cgroup/t/cgroup.procs && numabench place --size 16M --json",
            ),
        ],
    );
    let topo = g.json("topo");
    assert_eq!(ids(&topo["allowed"]["cpus"]), [2, 3], "{topo}");
    assert_eq!(ids(&topo["allowed"]["nodes"]), [1], "{topo}");
    assert!(
        g.text("text")
            .contains("restricted: CPUs 2-3 of 0-3, nodes 1 of 0-1"),
        "{}",
        g.text("text")
    );
    assert_eq!(g.text("bind0.rc"), "2");
    assert!(
        g.text("bind0")
            .contains("outside this process's cpuset (allowed nodes: 1)"),
        "{}",
        g.text("bind0")
    );
    assert_eq!(g.text("cpu0.rc"), "2");
    assert!(
        g.text("cpu0").contains("allowed CPUs: 2-3"),
        "{}",
        g.text("cpu0")
    );
    let d = g.json("default");
    assert_eq!(d["cpu_seen_node"], 1, "{d}");
    assert_eq!(
        pages_on(&d, "1"),
        d["placement"]["pages_total"].as_u64().unwrap(),
        "{d}"
    );
}

#[test]
fn sweep_binds_each_thread_to_its_own_node() {
    let g = guest(
        &["--preset", "2n"],
        &[(
            "sweep",
            "numabench sweep -o read -o triad -s 1024 -p 4 -r 1 --json",
        )],
    );
    let doc = g.json("sweep");
    for rec in doc["records"].as_array().unwrap() {
        let p = &rec["placement"];
        assert_eq!(p["on_target_pct"], 100.0, "{rec}");
        // Threads on CPUs of both nodes, memory on both nodes.
        let mut cpus = ids(&p["cpus_seen"]);
        cpus.sort();
        assert_eq!(cpus, [0, 1, 2, 3], "{rec}");
        assert!(pages_on(rec, "0") > 0 && pages_on(rec, "1") > 0, "{rec}");
        assert_eq!(pages_on(rec, "0"), pages_on(rec, "1"), "{rec}");
    }
}
