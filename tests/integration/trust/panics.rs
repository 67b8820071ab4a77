//! No panic on any input: overflowing durations, extreme values in results
//! files, conflicting or ignored options.

use crate::util::{numabench, rejects};
use proptest::prelude::*;
use serde_json::Value;
use std::path::Path;

/// A small real sweep document (two sizes, read and latency) saved by the
/// binary itself, parsed.
fn sweep_document(dir: &Path) -> Value {
    let path = dir.join("sweep.json");
    let out = numabench()
        .args([
            "sweep", "--op", "read", "--op", "latency", "-s", "16K", "-s", "32K",
        ])
        .args(["-r", "1", "--threads", "1", "--json", "--save"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

/// A small real matrix document (one cell), parsed.
fn matrix_document(dir: &Path) -> Value {
    let path = dir.join("matrix.json");
    let out = numabench()
        .args([
            "matrix",
            "--no-saturated",
            "--no-latency",
            "-r",
            "1",
            "-s",
            "1M",
        ])
        .args(["--json", "--save"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

/// Sets every metric value and sample of every record to `value`, with
/// alternating signs when `alternate` is set.
fn set_all(doc: &mut Value, value: f64, alternate: bool) {
    for (i, rec) in doc["records"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .enumerate()
    {
        let v = if alternate && i % 2 == 1 {
            -value
        } else {
            value
        };
        for m in rec["metrics"].as_object_mut().unwrap().values_mut() {
            m["value"] = v.into();
        }
        if let Some(samples) = rec["samples"].as_object_mut() {
            for s in samples.values_mut() {
                *s = vec![v, v / 2.0].into();
            }
        }
    }
}

/// Every numeric attribute an SVG chart or a heatmap carries parses as a
/// finite number, and no percentage is infinite or NaN.
fn assert_finite_drawing(html: &str) {
    for bad in ["NaN", "inf%", "\"inf", "-inf"] {
        assert!(!html.contains(bad), "'{bad}' in the report");
    }
    for attr in [
        " x=\"",
        " y=\"",
        " x1=\"",
        " y1=\"",
        " x2=\"",
        " y2=\"",
        " cx=\"",
        " cy=\"",
        " points=\"",
    ] {
        for (at, _) in html.match_indices(attr) {
            let rest = &html[at + attr.len()..];
            let value = &rest[..rest.find('"').unwrap()];
            for num in value.split([' ', ',']).filter(|n| !n.is_empty()) {
                let v: f64 = num
                    .parse()
                    .unwrap_or_else(|_| panic!("{attr}{value}: '{num}' is not a number"));
                assert!(v.is_finite(), "{attr}{value}");
            }
        }
    }
}

fn report_of(dir: &Path, doc: &Value, name: &str) -> String {
    match report_or_refusal(dir, doc, name) {
        Ok(html) => html,
        Err(err) => panic!("{name}: refused: {err}"),
    }
}

/// The report of `doc`, or the one line a refused file gets (exit 2).
fn report_or_refusal(dir: &Path, doc: &Value, name: &str) -> Result<String, String> {
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, serde_json::to_vec(doc).unwrap()).unwrap();
    let html = dir.join(format!("{name}.html"));
    let out = numabench()
        .arg("report")
        .arg(&path)
        .arg("-o")
        .arg(&html)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!err.contains("panicked"), "{name}: {err}");
    if out.status.code() == Some(2) {
        assert!(
            !html.exists(),
            "{name}: a refused file left {}",
            html.display()
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{name}: {err}");
        return Err(err);
    }
    assert_eq!(out.status.code(), Some(0), "{name}: {err}");
    Ok(std::fs::read_to_string(html).unwrap())
}

/// Whether a results file may give `value` as metric `key`: no figure past
/// 1e18, and no latency or bandwidth below 0.
fn admissible(key: &str, value: f64) -> bool {
    value.abs() <= 1e18 && (value >= 0.0 || !["latency_ns", "bandwidth_mb_s"].contains(&key))
}

/// Whether every metric of `doc` is admissible.
fn all_admissible(doc: &Value) -> bool {
    doc["records"].as_array().unwrap().iter().all(|rec| {
        rec["metrics"]
            .as_object()
            .unwrap()
            .iter()
            .all(|(key, m)| admissible(key, m["value"].as_f64().unwrap()))
    })
}

/// The report of `doc` if its figures are admissible (with finite
/// drawing); otherwise the refusal, which names the figure.
fn drawn_or_refused(dir: &Path, doc: &Value, name: &str) -> Option<String> {
    match report_or_refusal(dir, doc, name) {
        Ok(html) => {
            assert!(
                all_admissible(doc),
                "{name}: a figure out of range was drawn"
            );
            assert_finite_drawing(&html);
            Some(html)
        }
        Err(err) => {
            assert!(!all_admissible(doc), "{name}: refused: {err}");
            assert!(
                err.contains("larger than any measurement") || err.contains("below 0"),
                "{name}: {err}"
            );
            None
        }
    }
}

// Item 4: a time limit past Duration's range panicked in sweep and matrix;
// NaN, infinite and negative limits are bad input naming the range.
#[test]
fn time_limits_out_of_range_are_refused_with_the_range() {
    // "-inf" reads as a flag after -t; written with = it reaches the parser.
    let limits = [
        "-t 1e30",
        "-t NaN",
        "-t inf",
        "-t -1",
        "-t 604801",
        "-t 1s",
        "--time-limit=-inf",
    ];
    for limit in limits {
        let limit: Vec<&str> = limit.split(' ').collect();
        for cmd in [
            &[
                "sweep",
                "--op",
                "read",
                "-r",
                "1",
                "-s",
                "16K",
                "--threads",
                "1",
            ][..],
            &["matrix", "-r", "1"][..],
        ] {
            rejects(
                &[cmd, &limit].concat(),
                &["--time-limit", "from 0 to 604800"],
            );
        }
    }
    for (cmd, flag, t, range) in [
        ("sched", "--interval-ms", "1e30", "from 1 to 1000"),
        ("sched", "--burst-at", "NaN", "from 0 to 86400"),
        ("autonuma", "--interval", "inf", "from 0.01 to 60"),
    ] {
        let mut args = vec![cmd];
        if cmd == "sched" {
            args.push("2");
        }
        args.extend([flag, t]);
        rejects(&args, &[flag, range]);
    }
}

#[test]
fn a_time_limit_in_range_still_measures() {
    let out = numabench()
        .args([
            "sweep",
            "--op",
            "read",
            "-r",
            "1",
            "-s",
            "16K",
            "--threads",
            "1",
            "-t",
            "600",
            "--csv",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = String::from_utf8(out.stdout).unwrap();
    assert!(csv.lines().nth(1).unwrap().starts_with("16,read,"), "{csv}");
}

// Item 8: `sweep -s 1.5` measured 4 KiB without saying so.
#[test]
fn sweep_sizes_are_whole_kib_from_one_page() {
    for s in ["1.5", "1.5K", "1", "3K", "4095B", "0", "x", "1e3"] {
        rejects(
            &["sweep", "--op", "read", "-r", "1", "--buffer-kib", s],
            &[format!("--buffer-kib {s}").as_str(), "whole KiB from 4"],
        );
    }
    let out = numabench()
        .args([
            "sweep",
            "--op",
            "read",
            "-r",
            "1",
            "--threads",
            "1",
            "-s",
            "4.5M",
            "--buffer-kib",
            "4",
            "--csv",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = String::from_utf8(out.stdout).unwrap();
    let sizes: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(sizes, ["4608", "4"], "{csv}");
}

#[test]
fn sizes_that_are_not_whole_bytes_or_too_small_are_refused() {
    rejects(
        &["place", "-s", "1.5B"],
        &["--size", "whole number of bytes"],
    );
    rejects(&["matrix", "-s", "64K"], &["--size 64K", "at least 1M"]);
    rejects(
        &["matrix", "--latency-size", "0.3M"],
        &["--latency-size", "whole number of bytes"],
    );
    rejects(
        &["pcie", "--sizes", "1K,1.1K"],
        &["--sizes", "whole number of bytes"],
    );
}

// Item 8: options that were silently ignored or in conflict.
#[test]
fn conflicting_sweep_options_say_how_to_ask() {
    rejects(
        &["sweep", "--op", "read", "--kernel-variant", "copy_avx2"],
        &["--kernel-variant copy_avx2", "add --op copy"],
    );
    rejects(
        &["sweep", "--op", "read", "--kernel-variant", "copy_portable"],
        &["--kernel-variant copy_portable", "add --op copy"],
    );
    rejects(
        &[
            "sweep",
            "--kernel-variant",
            "read_portable",
            "--kernel-variant",
            "read_avx2",
        ],
        &["read_portable", "read_avx2", "one per operation"],
    );
    rejects(
        &["sweep", "-a", "--threads", "1"],
        &["-a", "--threads 1", "drop -a"],
    );
    rejects(
        &["sweep", "-f", "-s", "16K"],
        &["-f", "-s 16K", "give one of them"],
    );
}

#[test]
fn options_the_chosen_mode_would_ignore_are_refused() {
    rejects(
        &["sweep", "--op", "latency", "--threads", "2"],
        &["--threads 2", "--op latency alone"],
    );
    rejects(
        &["sweep", "--op", "latency", "-a"],
        &["-a", "--op latency alone"],
    );
    rejects(
        &["sweep", "--list-kernels", "--op", "read"],
        &["--list-kernels"],
    );
    for flag in [
        &["--cpu-nodes", "0"][..],
        &["--mem-nodes", "0"],
        &["--latency-size", "1G"],
        &["--no-latency"],
    ] {
        rejects(
            &[&["matrix", "--per-core", "0"][..], flag].concat(),
            &[flag[0], "--per-core"],
        );
    }
    rejects(
        &["matrix", "--no-latency", "--latency-size", "1G"],
        &["--latency-size", "--no-latency"],
    );
    rejects(
        &["matrix", "--json", "--peak", "20000"],
        &["--peak", "--json", "model"],
    );
    rejects(&["pcie", "--per-size", "--json"], &["--per-size", "--json"]);
}

#[test]
fn a_forced_kernel_for_the_measured_operation_is_used() {
    let out = numabench()
        .args(["sweep", "--op", "read", "--kernel-variant", "read_portable"])
        .args([
            "--kernel-variant",
            "read_portable",
            "-r",
            "1",
            "--threads",
            "1",
            "-s",
            "16K",
            "--csv",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .contains(",read_portable,")
    );
}

#[test]
fn model_options_for_validate_need_validate() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("m.json");
    std::fs::write(
        &results,
        serde_json::to_vec(&matrix_document(dir.path())).unwrap(),
    )
    .unwrap();
    let f = results.to_str().unwrap();
    rejects(
        &["model", f, "--weights", "1:1"],
        &["--weights", "--validate"],
    );
    rejects(
        &["model", f, "--mem-nodes", "0"],
        &["--mem-nodes", "--validate"],
    );
    rejects(&["model", f, "-s", "64M"], &["--size", "--validate"]);
    rejects(&["model", "--validate", f], &["--validate", "results file"]);
    rejects(
        &["model", f, "--cpu-node", "0"],
        &["--cpu-node 0", "--theta"],
    );
    rejects(
        &["model", "--validate", "--peak", "1000"],
        &["--peak", "--validate"],
    );
    rejects(
        &["model", "--validate", "--weights", "4294967295"],
        &["--weights", "from 0 to 1000"],
    );
}

#[test]
fn place_refuses_a_huge_page_size_the_kernel_lacks() {
    let sizes: Vec<String> = std::fs::read_dir("/sys/kernel/mm/hugepages")
        .map(|d| {
            d.map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect()
        })
        .unwrap_or_default();
    assert!(!sizes.contains(&"hugepages-2097152kB".to_string()));
    rejects(
        &["place", "--pages", "hugetlb:2G", "-s", "4K"],
        &["--pages hugetlb:2G", "2 GiB"],
    );
    rejects(
        &["place", "--pages", "hugetlb:4K", "-s", "4K"],
        &["--pages hugetlb:4K", "thp"],
    );
}

// Item 4: a bandwidth of 5e-324 made report's axis ticks overflow a
// capacity; +-1e308 drew NaN coordinates and "inf%" in the heatmap. Figures
// past 1e18, or below 0 in a latency or bandwidth, are now refused.
#[test]
fn extreme_values_in_results_draw_finite_reports_or_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = sweep_document(dir.path());
    let mut drawn = 0;
    for (i, (v, alternate)) in [
        (5e-324, false),
        (5e-324, true),
        (1e18, false),
        (1e17, true),
        (1e308, false),
        (1e308, true),
        (f64::MAX, true),
        (-f64::MAX, false),
        (1e-300, false),
        (1e-300, true),
    ]
    .into_iter()
    .enumerate()
    {
        let mut doc = sweep.clone();
        set_all(&mut doc, v, alternate);
        if let Some(html) = drawn_or_refused(dir.path(), &doc, &format!("sweep{i}")) {
            assert!(html.contains("<svg"), "{v}: no chart");
            drawn += 1;
        }
    }
    assert_eq!(drawn, 3, "5e-324, 1e18 and 1e-300 are drawn");
    // A heatmap whose cells are 1e18 and 1e-300, 1e318 of each other.
    let mut matrix = matrix_document(dir.path());
    let records = matrix["records"].as_array_mut().unwrap();
    let mut remote = records[0].clone();
    remote["name"] = "bandwidth_1t 0->1".into();
    remote["params"]["mem_node"] = 1.into();
    remote["metrics"]["bandwidth_mb_s"]["value"] = 1e18.into();
    records[0]["metrics"]["bandwidth_mb_s"]["value"] = 1e-300.into();
    records.push(remote);
    let html = report_of(dir.path(), &matrix, "heat");
    assert!(html.contains("<table"), "no heatmap");
    assert_finite_drawing(&html);
}

#[test]
fn numbers_past_f64_in_a_results_file_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let text = serde_json::to_string(&sweep_document(dir.path())).unwrap();
    let at = text.find("\"value\":").unwrap() + "\"value\":".len();
    let end = at + text[at..].find([',', '}']).unwrap();
    let damaged = format!("{}1e400{}", &text[..at], &text[end..]);
    let path = dir.path().join("big.json");
    std::fs::write(&path, damaged).unwrap();
    let out = numabench().arg("report").arg(&path).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("big.json") && !err.contains("panicked"),
        "{err}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Any metric value a JSON file can hold gives a report with finite
    /// coordinates, or, for a figure no measurement gives, one line and
    /// exit 2; never a panic.
    #[test]
    fn any_finite_values_draw_a_finite_report_or_are_refused(
        values in proptest::collection::vec(
            prop_oneof![
                0.0..=1e18f64,
                proptest::num::f64::POSITIVE,
                proptest::num::f64::NORMAL,
                proptest::num::f64::SUBNORMAL,
                Just(0.0),
                Just(1e18),
                Just(f64::MAX),
                Just(-f64::MAX),
            ],
            1..6,
        ),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut doc = SWEEP.with(|d| d.clone());
        for (i, rec) in doc["records"].as_array_mut().unwrap().iter_mut().enumerate() {
            let v = values[i % values.len()];
            for m in rec["metrics"].as_object_mut().unwrap().values_mut() {
                m["value"] = v.into();
            }
            rec["params"]["size_bytes"] = (v.abs().min(1e18) as u64).into();
        }
        drawn_or_refused(dir.path(), &doc, "p");
    }
}

thread_local! {
    /// One real sweep document per test thread, reused by the cases.
    static SWEEP: Value = sweep_document(tempfile::tempdir().unwrap().path());
}

// Item 4, huge try counts: `-r 18446744073709551615` overflowed a capacity.
#[test]
fn try_counts_past_the_cap_are_refused() {
    rejects(
        &[
            "sweep",
            "--op",
            "read",
            "-s",
            "16K",
            "-r",
            "18446744073709551615",
        ],
        &["-r 18446744073709551615", "1 to 1000"],
    );
    rejects(
        &["matrix", "--tries", "1001"],
        &["--tries 1001", "1 to 1000"],
    );
    rejects(&["pcie", "--tries", "5000"], &["--tries 5000", "1 to 1000"]);
}

/// Copies a fixture tree (files and links) into `to`.
fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path()).unwrap(), &target).unwrap();
        } else if kind.is_dir() {
            std::fs::create_dir(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The sysfs and procfs files whose values the topology parses: lists,
/// sizes, meminfo lines, distances, counts and link speeds.
const VALUE_FILES: &[&str] = &[
    "sys/devices/system/cpu/online",
    "sys/devices/system/cpu/possible",
    "sys/devices/system/node/online",
    "sys/devices/system/node/has_memory",
    "sys/devices/system/node/node0/cpulist",
    "sys/devices/system/node/node0/meminfo",
    "sys/devices/system/node/node0/distance",
    "sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages",
    "sys/devices/system/cpu/cpu1/cache/index0/size",
    "sys/devices/system/cpu/cpu1/cache/index3/shared_cpu_list",
    "sys/devices/system/cpu/cpu1/topology/core_id",
    "sys/devices/virtual/memory_tiering/memory_tier4/nodelist",
    "sys/bus/pci/devices/0000:3b:00.0/current_link_speed",
    "sys/bus/pci/devices/0000:3b:00.0/numa_node",
    "proc/meminfo",
    "proc/self/status",
];

/// Values shaped like what those files hold, and bytes that are not.
fn sysfs_value() -> impl Strategy<Value = String> {
    prop_oneof![
        // Lists; ids stay small, the size of a CPU count is another matter.
        "[0-9]{1,3}(-[0-9]{1,3})?(:[0-9]{1,2}/[0-9]{1,2})?(,[0-9]{1,3}(-[0-9]{1,3})?){0,3}\n?",
        // Sizes and counts, up to past u64.
        "-?[0-9]{1,22}[KMG]?\n?",
        // meminfo lines; kB figures whose bytes fit in 64 bits.
        "(Node 0 )?(MemTotal|MemFree):[ ]{1,8}-?[0-9]{0,16}( kB)?\n",
        // Distances and link speeds.
        "([0-9]{1,4} ){0,3}[0-9]{1,12}\n",
        "(-?[0-9.]{1,8}|NaN|inf|-inf|Unknown) GT/s( PCIe)?\n",
        "\\PC{0,32}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    /// Any value in a file the topology parses gives a topology (which
    /// then renders) or an error, never a panic.
    #[test]
    fn any_sysfs_value_is_a_topology_or_an_error(
        file in proptest::sample::select(VALUE_FILES),
        value in sysfs_value(),
    ) {
        SYSFS.with(|root| {
            let path = root.path().join(file);
            let original = std::fs::read(&path).unwrap();
            std::fs::write(&path, &value).unwrap();
            let result = numabench::topology::read_topology(
                &numabench::topology::SysfsRoot::new(root.path()),
            );
            std::fs::write(&path, original).unwrap();
            if let Ok(topo) = result {
                let _ = numabench::output::topo_text::render(&topo);
            }
        });
    }
}

thread_local! {
    /// A writable copy of the two-node capture per test thread.
    static SYSFS: tempfile::TempDir = {
        let dir = tempfile::tempdir().unwrap();
        copy_tree(&crate::util::fixture("two-node"), dir.path());
        dir
    };
}

#[test]
fn a_time_limit_too_small_to_measure_is_refused_not_read_as_no_limit() {
    for t in ["1e-400", "1e-9", "0.0001"] {
        crate::util::rejects(
            &[
                "sweep",
                "--op",
                "read",
                "-s",
                "16K",
                "-r",
                "1",
                "--threads",
                "1",
                "-t",
                t,
            ],
            "at least 0.001",
        );
        crate::util::rejects(
            &[
                "matrix",
                "--no-saturated",
                "--no-latency",
                "-r",
                "1",
                "-s",
                "1M",
                "-t",
                t,
            ],
            "at least 0.001",
        );
    }
}
