//! The topology reader against captured and constructed machines. Each
//! fixture's expected.json states the facts independently of the reader.

use crate::util::*;
use serde_json::Value;

/// An id array from JSON in the kernel's list syntax, for comparison with the
/// expected facts.
fn as_list(v: &Value) -> String {
    let ids: Vec<usize> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as usize)
        .collect();
    let mut out = Vec::<String>::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        out.push(if j > i {
            format!("{}-{}", ids[i], ids[j])
        } else {
            ids[i].to_string()
        });
        i = j + 1;
    }
    out.join(",")
}

fn check_machine(dir: &std::path::Path) {
    let name = dir.file_name().unwrap().to_string_lossy().to_string();
    let want: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let got = topo_json(dir);
    let ctx = |what: &str| format!("{name}: {what}");

    assert_eq!(got["hostname"], want["hostname"], "{}", ctx("hostname"));
    assert_eq!(got["kernel"], want["kernel"], "{}", ctx("kernel"));
    assert_eq!(got["cpu_model"], want["cpu_model"], "{}", ctx("cpu_model"));
    assert_eq!(
        as_list(&got["cpus_online"]),
        want["cpus_online"],
        "{}",
        ctx("cpus_online")
    );
    let cpus = got["cpus"].as_array().unwrap();
    assert_eq!(
        cpus.len(),
        as_list_len(&want["cpus_online"]),
        "{}",
        ctx("cpu count")
    );
    assert_eq!(
        as_list(&got["allowed"]["cpus"]),
        want["allowed_cpus"],
        "{}",
        ctx("allowed cpus")
    );
    assert_eq!(
        as_list(&got["allowed"]["nodes"]),
        want["allowed_nodes"],
        "{}",
        ctx("allowed nodes")
    );
    assert_eq!(got["thp"]["enabled"], want["thp_enabled"], "{}", ctx("thp"));
    assert_eq!(
        got["thp"]["defrag"],
        want["thp_defrag"],
        "{}",
        ctx("thp defrag")
    );
    assert_eq!(
        got["numa_balancing"],
        want["numa_balancing"],
        "{}",
        ctx("balancing")
    );

    // Derived counts, checked through the human view's summary line.
    let text = topo_text(dir);
    let summary = format!(
        "{} package{}, {} cores, {} CPUs online",
        want["packages"],
        if want["packages"] == 1 { "" } else { "s" },
        want["cores"],
        cpus.len()
    );
    assert!(
        text.contains(&summary),
        "{}\n{text}",
        ctx(&format!("summary '{summary}'"))
    );
    let tpc = want["threads_per_core"].as_u64().unwrap();
    let tpc_text = if tpc == 1 {
        "(1 thread per core)".to_string()
    } else {
        format!("({tpc} threads per core)")
    };
    assert!(text.contains(&tpc_text), "{}", ctx("threads per core"));

    let want_nodes = want["nodes"].as_array().unwrap();
    let got_nodes = got["nodes"].as_array().unwrap();
    assert_eq!(got_nodes.len(), want_nodes.len(), "{}", ctx("node count"));
    for (g, w) in got_nodes.iter().zip(want_nodes) {
        let id = w["id"].clone();
        let nctx = |what: &str| ctx(&format!("node {id} {what}"));
        assert_eq!(g["id"], id, "{}", nctx("id"));
        assert_eq!(as_list(&g["cpus"]), w["cpus"], "{}", nctx("cpus"));
        for key in [
            "mem_total_bytes",
            "mem_free_bytes",
            "distances",
            "has_cpu",
            "has_memory",
            "hugepages",
            "tier",
        ] {
            assert_eq!(g[key], w[key], "{}", nctx(key));
        }
        match (&g["hmat"], &w["hmat"]) {
            (Value::Null, Value::Null) => {}
            (gh, wh) => {
                assert_eq!(
                    as_list(&gh["initiators"]),
                    wh["initiators"],
                    "{}",
                    nctx("hmat initiators")
                );
                for key in [
                    "read_bandwidth_mb_s",
                    "write_bandwidth_mb_s",
                    "read_latency_ns",
                    "write_latency_ns",
                ] {
                    assert_eq!(gh[key], wh[key], "{}", nctx(key));
                }
            }
        }
        // Every CPU of the node says it belongs to it.
        for c in cpus.iter().filter(|c| c["node"] == id) {
            let cid = c["id"].as_u64().unwrap() as usize;
            assert!(
                as_list_ids(&w["cpus"]).contains(&cid),
                "{}",
                nctx(&format!("cpu {cid}"))
            );
        }
    }

    let cpu0 = cpus.iter().find(|c| c["id"] == 0).unwrap();
    assert_eq!(
        as_list(&cpu0["smt_siblings"]),
        want["smt_siblings_of_cpu0"],
        "{}",
        ctx("cpu0 siblings")
    );
    let caches: Vec<Value> = got["caches"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["cpus"].as_array().unwrap().contains(&Value::from(0)))
        .map(|c| {
            serde_json::json!({"level": c["level"], "type": c["type"], "size_bytes": c["size_bytes"],
                               "shared_cpu_list": as_list(&c["cpus"])})
        })
        .collect();
    assert_eq!(
        Value::Array(caches),
        want["caches_of_cpu0"],
        "{}",
        ctx("caches of cpu0")
    );

    let accel: Vec<Value> = got["accelerators"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            serde_json::json!({"pci_address": a["pci_address"], "vendor": a["vendor"], "class": a["class"],
                               "numa_node": a["numa_node"], "link_speed_gt_s": a["link_speed_gt_s"],
                               "link_width": a["link_width"]})
        })
        .collect();
    assert_eq!(
        Value::Array(accel),
        want["accelerators"],
        "{}",
        ctx("accelerators")
    );
}

fn as_list_ids(v: &Value) -> Vec<usize> {
    let text = v.as_str().unwrap();
    if text.is_empty() {
        return Vec::new();
    }
    text.split(',')
        .flat_map(|part| match part.split_once('-') {
            Some((a, b)) => (a.parse::<usize>().unwrap()..=b.parse().unwrap()).collect::<Vec<_>>(),
            None => vec![part.parse().unwrap()],
        })
        .collect()
}

fn as_list_len(v: &Value) -> usize {
    as_list_ids(v).len()
}

#[test]
fn every_fixture_machine_reads_as_expected() {
    let machines = fixture_machines();
    assert!(machines.len() >= 2, "fixtures missing: {machines:?}");
    for dir in machines {
        check_machine(&dir);
    }
}

/// Each quirk of a real machine's tree reads as the clean machine it was
/// made from (tests/fixtures/sysfs/README.md lists what each one changes).
mod quirks {
    use super::check_machine;
    use crate::util::{fixture, topo_json, topo_text};

    #[test]
    fn nul_bytes_after_the_newline() {
        check_machine(&fixture("quirk-nul-bytes"));
    }

    #[test]
    fn an_empty_has_cpu_loses_to_the_cpulists() {
        let dir = fixture("quirk-empty-has-cpu");
        check_machine(&dir);
        assert!(!topo_text(&dir).contains("memory only"));
    }

    #[test]
    fn bitmaps_where_the_list_files_are_missing() {
        check_machine(&fixture("quirk-masks-only"));
    }

    #[test]
    fn smt_from_core_ids_without_sibling_files() {
        check_machine(&fixture("quirk-no-sibling-files"));
    }

    #[test]
    fn package_ids_past_16_bits() {
        let dir = fixture("quirk-wide-package-ids");
        check_machine(&dir);
        let t = topo_json(&dir);
        assert!(
            t["cpus"]
                .as_array()
                .unwrap()
                .iter()
                .all(|c| c["package"].as_u64() >= Some(65535))
        );
    }

    #[test]
    fn per_cpu_online_files_without_cpu_online() {
        check_machine(&fixture("quirk-no-cpu-online"));
    }

    #[test]
    fn empty_per_cpu_online_files_mean_online() {
        check_machine(&fixture("quirk-empty-cpu-online"));
    }

    #[test]
    fn node_meminfo_without_memfree_is_unknown_free_memory_with_a_note() {
        let dir = fixture("quirk-no-memfree");
        check_machine(&dir);
        let text = topo_text(&dir);
        assert!(text.contains("has no MemFree line"), "{text}");
        assert!(text.contains("unknown"), "{text}");
    }

    #[test]
    fn nodes_listing_the_same_cpus_leave_them_to_the_first() {
        let dir = fixture("quirk-node-copies");
        check_machine(&dir);
        assert!(topo_text(&dir).contains("firmware bug: nodes 0-3 list the same CPUs (0-31)"));
    }

    #[test]
    fn amd_compute_unit_siblings_are_cores() {
        let dir = fixture("quirk-amd-compute-units");
        check_machine(&dir);
        assert!(topo_text(&dir).contains("are the cores of compute units"));
    }

    #[test]
    fn a_distance_row_wider_than_the_online_nodes() {
        let dir = fixture("quirk-offlined-node");
        check_machine(&dir);
        assert!(topo_text(&dir).contains("the online nodes' columns are used"));
    }
}

#[test]
fn local_capture_matches_its_facts() {
    check_machine(&fixture("local-1node"));
}

/// The live topology against /sys and /proc read directly here, without the
/// reader's code.
#[test]
fn live_topology_agrees_with_sys() {
    let topo = topo_json(std::path::Path::new("/"));
    let read = |p: &str| std::fs::read_to_string(p).unwrap().trim().to_string();
    let node_dir = "/sys/devices/system/node";
    let online = read(&format!("{node_dir}/online"));
    let got_nodes = topo["nodes"].as_array().unwrap();
    assert_eq!(got_nodes.len(), as_list_len(&Value::from(online.as_str())));
    for n in got_nodes {
        let id = n["id"].as_u64().unwrap();
        assert_eq!(
            as_list(&n["cpus"]),
            read(&format!("{node_dir}/node{id}/cpulist")),
            "node {id} cpus"
        );
        let distances: Vec<u64> = read(&format!("{node_dir}/node{id}/distance"))
            .split_whitespace()
            .map(|d| d.parse().unwrap())
            .collect();
        assert_eq!(
            n["distances"],
            serde_json::json!(distances),
            "node {id} distances"
        );
        let meminfo = read(&format!("{node_dir}/node{id}/meminfo"));
        let total_kb: u64 = meminfo
            .lines()
            .find(|l| l.contains("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(3))
            .unwrap()
            .parse()
            .unwrap();
        // Memory can be hot-plugged between the two reads; allow 5%.
        let got = n["mem_total_bytes"].as_u64().unwrap() as f64;
        let want = (total_kb * 1024) as f64;
        assert!(
            (got - want).abs() <= 0.05 * want,
            "node {id} MemTotal {got} vs {want}"
        );
    }
    assert_eq!(
        as_list(&topo["cpus_online"]),
        read("/sys/devices/system/cpu/online")
    );
    let status = read("/proc/self/status");
    let field = |k: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(k))
            .unwrap()
            .trim()
            .to_string()
    };
    assert_eq!(
        as_list(&topo["allowed"]["cpus"]),
        field("Cpus_allowed_list:")
    );
    assert_eq!(
        as_list(&topo["allowed"]["nodes"]),
        field("Mems_allowed_list:")
    );
    let thp = read("/sys/kernel/mm/transparent_hugepage/enabled");
    assert!(
        thp.contains(&format!("[{}]", topo["thp"]["enabled"].as_str().unwrap())),
        "{thp}"
    );
    assert_eq!(
        topo["numa_balancing"].as_u64().unwrap().to_string(),
        read("/proc/sys/kernel/numa_balancing")
    );
    assert_eq!(topo["kernel"], read("/proc/sys/kernel/osrelease"));
    // Every cache index of CPU 0 is listed with the size sysfs gives.
    let cache_dir = "/sys/devices/system/cpu/cpu0/cache";
    for entry in std::fs::read_dir(cache_dir).unwrap() {
        let p = entry.unwrap().path();
        if !p
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("index")
        {
            continue;
        }
        let level: u64 = read(&format!("{}/level", p.display())).parse().unwrap();
        let kind = read(&format!("{}/type", p.display()));
        let size_k: u64 = read(&format!("{}/size", p.display()))
            .trim_end_matches('K')
            .parse()
            .unwrap();
        let found = topo["caches"].as_array().unwrap().iter().any(|c| {
            c["level"] == level
                && c["type"] == kind.as_str()
                && c["size_bytes"] == size_k * 1024
                && c["cpus"].as_array().unwrap().contains(&Value::from(0))
        });
        assert!(found, "cache L{level} {kind} {size_k}K of cpu0 missing");
    }
}
