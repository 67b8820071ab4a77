//! `numabench matrix` end to end on this (one-node) machine, with small
//! sizes so each run takes well under a second. They check what is
//! recorded and how it is shown, never speed (scripts/bench-peers does
//! that); the multi-node behaviour is in vm.rs.

use crate::util::*;
use serde_json::Value;
use std::collections::BTreeSet;

/// Small sizes: a cell takes a fraction of a second.
const SMALL: [&str; 4] = ["--size", "16M", "--latency-size", "16M"];

fn matrix_out(extra: &[&str]) -> String {
    // --latency-size is refused where no latency is measured.
    let no_latency = extra
        .iter()
        .any(|a| ["--no-latency", "--per-core"].contains(a));
    let small = if no_latency { &SMALL[..2] } else { &SMALL[..] };
    let args: Vec<&str> = ["matrix"]
        .iter()
        .chain(small)
        .chain(extra)
        .copied()
        .collect();
    String::from_utf8(stdout_of(args)).unwrap()
}

fn records<'a>(doc: &'a Value, kind: &str) -> Vec<&'a Value> {
    doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["params"]["kind"] == kind)
        .collect()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn metric(rec: &Value, key: &str) -> f64 {
    rec["metrics"][key]["value"]
        .as_f64()
        .unwrap_or_else(|| panic!("no metric {key}: {rec}"))
}

/// Every page of the record on `node`, and the placement verified.
fn assert_all_pages_on(rec: &Value, node: u64) {
    let p = &rec["placement"];
    assert_eq!(p["on_target_pct"], 100.0, "{rec}");
    let by_node = p["pages_by_node"].as_object().unwrap();
    assert_eq!(
        by_node.keys().collect::<Vec<_>>(),
        [&node.to_string()],
        "{rec}"
    );
    assert!(by_node[&node.to_string()].as_u64().unwrap() > 0, "{rec}");
}

/// The kernel's list syntax ("0-3,8") as numbers.
fn parse_list(text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for piece in text.trim().split(',').filter(|p| !p.is_empty()) {
        match piece.split_once('-') {
            Some((a, b)) => out.extend(a.parse::<usize>().unwrap()..=b.parse().unwrap()),
            None => out.push(piece.parse().unwrap()),
        }
    }
    out
}

/// Physical cores of node 0 this process may use, read from sysfs and
/// /proc directly (not through numabench): one sibling list per core.
fn usable_cores_of_node0() -> BTreeSet<String> {
    let read = |p: &str| std::fs::read_to_string(p).unwrap();
    let status = read("/proc/self/status");
    let allowed = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map(parse_list)
        .unwrap();
    parse_list(&read("/sys/devices/system/node/node0/cpulist"))
        .into_iter()
        .filter(|c| allowed.contains(c))
        .map(|c| {
            read(&format!(
                "/sys/devices/system/cpu/cpu{c}/topology/thread_siblings_list"
            ))
            .trim()
            .to_string()
        })
        .collect()
}

#[test]
fn json_records_every_kind_with_samples_and_verified_placement() {
    let doc: Value = serde_json::from_str(&matrix_out(&["-r", "2", "--json"])).unwrap();
    assert_eq!(doc["tool"], "numabench");
    assert_eq!(doc["complete"], true);

    let single = records(&doc, "bandwidth_1t");
    let saturated = records(&doc, "bandwidth_saturated");
    let latency = records(&doc, "latency");
    assert_eq!(
        (single.len(), saturated.len(), latency.len()),
        (1, 1, 1),
        "{doc}"
    );
    for rec in single.iter().chain(&saturated).chain(&latency) {
        assert_eq!(rec["probe"], "matrix", "{rec}");
        assert_eq!(rec["params"]["cpu_node"], 0, "{rec}");
        assert_eq!(rec["params"]["mem_node"], 0, "{rec}");
        assert_all_pages_on(rec, 0);
    }

    for rec in single.iter().chain(&saturated) {
        let samples = floats(&rec["samples"]["bandwidth_mb_s"]);
        // -r 2: both timed runs kept, the best reported.
        assert_eq!(samples.len(), 2, "{rec}");
        let best = metric(rec, "bandwidth_mb_s");
        assert!(best > 0.0, "{rec}");
        assert_eq!(best, samples.iter().copied().fold(0.0, f64::max), "{rec}");
        assert_eq!(rec["metrics"]["bandwidth_mb_s"]["unit"], "MB/s");
        assert_eq!(rec["metrics"]["bandwidth_mb_s"]["better"], "higher");
        assert_eq!(rec["params"]["kernel"], "triad", "{rec}");
    }
    assert_eq!(single[0]["params"]["threads"], 1);

    // The scaling curve: 1, 2, 3, ... threads; its first step is the
    // single-thread measurement and the record's figure is its best step.
    let sat = saturated[0];
    let scaling = sat["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "scaling")
        .unwrap_or_else(|| panic!("no scaling series: {sat}"));
    let x = floats(&scaling["x"]);
    let y = floats(&scaling["lines"][0]["y"]);
    assert_eq!(x.first(), Some(&1.0), "{scaling}");
    assert!(x.windows(2).all(|w| w[1] == w[0] + 1.0), "{scaling}");
    assert_eq!(x.len(), y.len(), "{scaling}");
    assert!(
        x.len()
            <= parse_list(
                &std::fs::read_to_string("/sys/devices/system/node/node0/cpulist").unwrap()
            )
            .len()
    );
    assert_eq!(y[0], metric(single[0], "bandwidth_mb_s"), "{doc}");
    let peak = y.iter().copied().fold(0.0, f64::max);
    assert_eq!(metric(sat, "bandwidth_mb_s"), peak, "{sat}");
    let at = y.iter().position(|v| *v == peak).unwrap();
    assert_eq!(sat["params"]["threads"].as_f64(), Some(x[at]), "{sat}");
    assert_eq!(
        sat["placement"]["cpus_seen"].as_array().unwrap().len() as f64,
        x[at],
        "one CPU per thread: {sat}"
    );

    let lat = latency[0];
    let ns = floats(&lat["samples"]["latency_ns"]);
    assert!(!ns.is_empty(), "{lat}");
    let median = metric(lat, "latency_ns");
    assert!(median > 0.0, "{lat}");
    // The reported figure is the median of the kept samples.
    let (below, above) = (
        ns.iter().filter(|v| **v < median).count(),
        ns.iter().filter(|v| **v > median).count(),
    );
    assert!(
        2 * below <= ns.len() && 2 * above <= ns.len(),
        "not the median: {lat}"
    );
    assert_eq!(lat["params"]["size_bytes"], 16 << 20, "{lat}");
    assert_eq!(lat["metrics"]["latency_ns"]["better"], "lower");
}

#[test]
fn csv_has_one_line_per_cell_and_numeric_fields() {
    let text = matrix_out(&["-r", "1", "--no-peak", "--csv"]);
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "cpu_node,mem_node,bandwidth_1t_mb_s,pct_of_local,bandwidth_saturated_mb_s,\
         saturated_threads,latency_ns,latency_cv_pct,slit_distance,placement_verified_pct"
    );
    let rows: Vec<Vec<f64>> = lines
        .map(|l| {
            l.split(',')
                .map(|f| f.parse().unwrap_or_else(|_| panic!("'{f}' in {l}")))
                .collect()
        })
        .collect();
    // One node here: one cell.
    assert_eq!(rows.len(), 1, "{text}");
    let r = &rows[0];
    assert_eq!(r.len(), 10, "{text}");
    assert_eq!((r[0], r[1]), (0.0, 0.0));
    assert!(r[2] > 0.0 && r[4] > 0.0 && r[6] > 0.0, "{text}");
    assert_eq!(r[3], 100.0, "the local cell is 100% of itself: {text}");
    assert!(r[5] >= 1.0 && r[5].fract() == 0.0, "{text}");
    assert_eq!(r[8], 10.0, "SLIT of a node to itself: {text}");
    assert_eq!(r[9], 100.0, "{text}");
}

#[test]
fn text_markdown_and_latex_views() {
    let text = matrix_out(&["-r", "1"]);
    assert!(text.contains("% of the row's local"), "{text}");
    assert!(text.contains("bandwidth classes"), "{text}");
    assert!(text.contains("(100%)"), "the local cell: {text}");
    let slit: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("SLIT distance"))
        .take(3)
        .collect();
    assert_eq!(slit.len(), 3, "{text}");
    assert_eq!(slit[2].split_whitespace().collect::<Vec<_>>(), ["0", "10"]);

    let md = matrix_out(&["-r", "1", "--markdown"]);
    assert!(md.starts_with("# numabench matrix"), "{md}");
    assert!(md.contains("|:--|--:|"), "{md}");
    let at = md
        .find("## SLIT distance")
        .unwrap_or_else(|| panic!("{md}"));
    assert!(
        md[at..].contains("|:--|--:|\n| 0 | 10 |\n"),
        "{}",
        &md[at..]
    );
    // Every table row has as many cells as its header.
    for block in md.split("\n\n").filter(|b| b.contains("|:--")) {
        let cells: Vec<usize> = block
            .lines()
            .map(|l| l.matches('|').count() - l.matches("\\|").count())
            .collect();
        assert!(cells.windows(2).all(|w| w[0] == w[1]), "{block}");
    }

    let tex = matrix_out(&["-r", "1", "--latex"]);
    assert!(tex.starts_with("\\documentclass"), "{tex}");
    assert!(tex.trim_end().ends_with("\\end{document}"), "{tex}");
    for env in ["document", "tabular", "itemize"] {
        let (b, e) = (
            tex.matches(&format!("\\begin{{{env}}}")).count(),
            tex.matches(&format!("\\end{{{env}}}")).count(),
        );
        assert_eq!(b, e, "{env} unbalanced: {tex}");
        assert!(b >= 1, "no {env}: {tex}");
    }
    assert!(tex.contains("SLIT distance"), "{tex}");
    // LaTeX specials are escaped: the corner cell and the percentages.
    assert!(tex.contains("cpu\\textbackslash{}mem"), "{tex}");
    assert!(tex.contains("(100\\%)"), "{tex}");
    assert!(!tex.contains("(100%)"), "unescaped %: {tex}");
}

#[test]
fn saved_matrix_feeds_the_model() {
    let tmp = tempfile::tempdir().unwrap();
    let saved = tmp.path().join("m.json");
    let printed: Value = serde_json::from_str(&matrix_out(&[
        "-r",
        "1",
        "--no-saturated",
        "--no-latency",
        "--json",
        "--save",
        saved.to_str().unwrap(),
    ]))
    .unwrap();
    let file: Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    assert_eq!(file, printed, "--save writes what --json prints");
    assert!(records(&file, "bandwidth_saturated").is_empty());
    assert!(records(&file, "latency").is_empty());
    let mb_s = metric(records(&file, "bandwidth_1t")[0], "bandwidth_mb_s");

    let out = String::from_utf8(stdout_of([
        "model",
        saved.to_str().unwrap(),
        "--theta",
        "1",
        "--peak",
        "20000",
    ]))
    .unwrap();
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("D = 1.0000"))
        .unwrap_or_else(|| panic!("no D line: {out}"));
    // D = 1.0000 x ALPHA = D
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(&words[..4], ["D", "=", "1.0000", "x"], "{line}");
    assert_eq!(words[4], format!("{:.4}", mb_s / 20000.0), "{line}");
    assert_eq!(words[6], words[4], "one class, theta 1: D = alpha_0");
    assert!(
        out.contains("Gamma = 20000 MB/s, as given with --peak"),
        "{out}"
    );
}

/// The rows of a per-core table (after its `cpu ...` header), split on
/// whitespace.
fn per_core_table(text: &str) -> Vec<Vec<&str>> {
    text.lines()
        .skip_while(|l| !l.starts_with("cpu "))
        .skip(1)
        .take_while(|l| !l.starts_with("  "))
        .map(|l| l.split_whitespace().collect())
        .collect()
}

#[test]
fn per_core_lists_every_physical_core_with_spread_and_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let saved = tmp.path().join("pc.json");
    let text = matrix_out(&[
        "-r",
        "1",
        "--per-core",
        "0",
        "--save",
        saved.to_str().unwrap(),
    ]);
    let doc: Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    let cores = usable_cores_of_node0();

    // The table: header, then one row per core.
    let table = per_core_table(&text);
    assert_eq!(table.len(), cores.len(), "{text}");
    let mut seen = BTreeSet::new();
    for row in &table {
        assert_eq!(row.len(), 3, "{text}");
        let cpu = row[0];
        let siblings = std::fs::read_to_string(format!(
            "/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list"
        ))
        .unwrap();
        assert!(
            seen.insert(siblings.trim().to_string()),
            "two rows on one core: {text}"
        );
        assert!(row[1].parse::<f64>().unwrap() > 0.0, "{text}");
        assert!(row[2].ends_with('%'), "{text}");
    }
    assert_eq!(seen, cores);

    // The same run's records: one per core, plus the summary computed
    // from them.
    let per_core = records(&doc, "bandwidth_per_core");
    assert_eq!(per_core.len(), cores.len(), "{doc}");
    let values: Vec<f64> = per_core
        .iter()
        .map(|r| metric(r, "bandwidth_mb_s"))
        .collect();
    for (row, v) in table.iter().zip(&values) {
        assert_eq!(row[1], format!("{v:.0}"), "{text}");
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let summary = records(&doc, "per_core_summary")[0];
    assert!((metric(summary, "bandwidth_mb_s") - mean).abs() < 1e-6 * mean);
    assert_eq!(summary["params"]["cores"], values.len());
    if values.len() >= 2 {
        let sd = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        assert!((metric(summary, "stddev_mb_s") - sd).abs() < 1e-6 * mean.max(1.0));
        let (lo, hi) = (
            metric(summary, "ci95_low_mb_s"),
            metric(summary, "ci95_high_mb_s"),
        );
        assert!(lo <= mean && mean <= hi, "{summary}");
        assert!((hi - mean - (mean - lo)).abs() < 1e-6 * mean, "symmetric");
        if values.len() == 2 {
            // Student's t for one degree of freedom.
            let half = 12.706 * sd / 2f64.sqrt();
            assert!((hi - mean - half).abs() < 1e-6 * mean, "{summary}");
        }
    }
    let max_dev = values
        .iter()
        .map(|v| (v - mean).abs() / mean * 100.0)
        .fold(0.0, f64::max);
    assert_eq!(summary["params"]["equivalent"], max_dev <= 5.0, "{summary}");

    let stats = text
        .lines()
        .find(|l| l.trim_start().starts_with("mean "))
        .unwrap_or_else(|| panic!("no mean line: {text}"));
    assert!(stats.contains(&format!("mean {mean:.0} MB/s")), "{stats}");
    assert!(stats.contains("standard deviation"), "{stats}");
    assert!(stats.contains("95% confidence interval ("), "{stats}");
    let verdict = text
        .lines()
        .find(|l| l.trim_start().starts_with("verdict: "))
        .unwrap_or_else(|| panic!("no verdict: {text}"));
    let equivalent = !verdict.contains("NOT equivalent");
    assert_eq!(equivalent, max_dev <= 5.0, "{verdict}");
    // No matrix sections for a per-core run.
    assert!(!text.contains("SLIT distance"), "{text}");
}

#[test]
fn per_core_runs_give_each_core_its_mean_spread_and_interval() {
    let tmp = tempfile::tempdir().unwrap();
    let saved = tmp.path().join("runs.json");
    let text = matrix_out(&[
        "-r",
        "1",
        "--per-core",
        "0",
        "--runs",
        "3",
        "--save",
        saved.to_str().unwrap(),
    ]);
    let doc: Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    let cores = usable_cores_of_node0();
    assert!(
        text.contains("to memory node 0, 3 runs per core, MB/s"),
        "{text}"
    );
    let table = per_core_table(&text);
    assert_eq!(table.len(), cores.len(), "{text}");
    let per_core = records(&doc, "bandwidth_per_core");
    assert_eq!(per_core.len(), cores.len(), "{doc}");
    let mut means = Vec::new();
    for (row, rec) in table.iter().zip(&per_core) {
        // cpu, node, runs, mean, stddev (pct), (low; high), min, max, vs mean
        assert_eq!(row.len(), 11, "{text}");
        assert_eq!((row[1], row[2]), ("0", "3"), "{text}");
        assert_eq!(rec["params"]["runs"], 3, "{rec}");
        let runs = floats(&rec["samples"]["bandwidth_mb_s"]);
        assert_eq!(runs.len(), 3, "{rec}");
        let mean = runs.iter().sum::<f64>() / 3.0;
        let sd = (runs.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
        assert!((metric(rec, "bandwidth_mb_s") - mean).abs() < 1e-6 * mean);
        assert!((metric(rec, "stddev_mb_s") - sd).abs() < 1e-6 * mean);
        // Student's t for two degrees of freedom.
        let half = 4.303 * sd / 3f64.sqrt();
        assert!((metric(rec, "ci95_high_mb_s") - mean - half).abs() < 1e-6 * mean);
        assert!((mean - metric(rec, "ci95_low_mb_s") - half).abs() < 1e-6 * mean);
        let min = runs.iter().copied().fold(f64::INFINITY, f64::min);
        let max = runs.iter().copied().fold(0.0, f64::max);
        assert_eq!(metric(rec, "min_mb_s"), min);
        assert_eq!(metric(rec, "max_mb_s"), max);
        assert_eq!(row[3], format!("{mean:.0}"), "{text}");
        assert_eq!(row[5], format!("({:.2}%)", 100.0 * sd / mean), "{text}");
        assert_eq!(row[6], format!("({:.1};", mean - half), "{text}");
        assert_eq!(
            (row[8], row[9]),
            (&*format!("{min:.0}"), &*format!("{max:.0}"))
        );
        assert_all_pages_on(rec, 0);
        means.push(mean);
    }
    // Today's statistics across the cores, over the cores' means.
    let summary = records(&doc, "per_core_summary")[0];
    assert_eq!(summary["params"]["runs"], 3);
    let mean = means.iter().sum::<f64>() / means.len() as f64;
    assert!((metric(summary, "bandwidth_mb_s") - mean).abs() < 1e-6 * mean);
    let across = text
        .lines()
        .find(|l| l.trim_start().starts_with("across the cores' means: mean "))
        .unwrap_or_else(|| panic!("no summary line: {text}"));
    assert!(across.contains(&format!("mean {mean:.0} MB/s")), "{across}");
    assert!(text.contains("t(0.975, runs - 1)"), "{text}");
    // No verdict where a core's own mean is known less closely than the
    // 5% bound.
    let widest = per_core
        .iter()
        .map(|r| {
            let hw = metric(r, "ci95_high_mb_s") - metric(r, "bandwidth_mb_s");
            100.0 * hw / metric(r, "bandwidth_mb_s")
        })
        .fold(0.0, f64::max);
    assert!(
        (metric(summary, "widest_ci95_pct") - widest).abs() < 1e-6,
        "{summary}"
    );
    let verdict = text
        .lines()
        .find(|l| l.trim_start().starts_with("verdict: "))
        .unwrap_or_else(|| panic!("no verdict: {text}"));
    let equivalent = &summary["params"]["equivalent"];
    if widest > 5.0 {
        assert!(equivalent.is_null(), "{summary}");
        assert!(
            verdict.contains("verdict: cannot tell: a core's mean is known only to -/+"),
            "{verdict}"
        );
    } else {
        assert!(equivalent.is_boolean(), "{summary}");
        assert!(!verdict.contains("cannot tell"), "{verdict}");
    }

    // The CSV of the saved run: a line per core with its spread.
    let csv = String::from_utf8(stdout_of([
        "report",
        "--format",
        "csv",
        saved.to_str().unwrap(),
    ]))
    .unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some(
            "cpu,cpu_node,mem_node,runs,bandwidth_mb_s,stddev_mb_s,ci95_low_mb_s,ci95_high_mb_s,min_mb_s,max_mb_s"
        ),
        "{csv}"
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), cores.len(), "{csv}");
    assert!(
        rows.iter()
            .all(|r| r[1] == "0" && r[2] == "0" && r[3] == "3"),
        "{csv}"
    );
}

#[test]
fn arrays_share_the_working_set_and_match_the_sweep_kernel() {
    // --size is every array together: triad has three, so 48M gives
    // 16 MiB arrays (the division rounded down to whole pages).
    let doc: Value = serde_json::from_str(
        &String::from_utf8(stdout_of([
            "matrix",
            "--size",
            "48M",
            "-r",
            "1",
            "--no-saturated",
            "--no-latency",
            "--json",
        ]))
        .unwrap(),
    )
    .unwrap();
    let rec = records(&doc, "bandwidth_1t")[0];
    let array = (48usize << 20) / 3 / 4096 * 4096;
    assert_eq!(rec["params"]["size_bytes"], array, "{rec}");

    // The sweep at the same per-thread array size picks the same triad
    // variant: both measure with one kernel.
    let sweep = String::from_utf8(stdout_of([
        "sweep",
        "--op",
        "triad",
        "--buffer-kib",
        &(array / 1024).to_string(),
        "--threads",
        "1",
        "-r",
        "1",
        "--csv",
    ]))
    .unwrap();
    let mut lines = sweep.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |k: &str| row[header.iter().position(|h| *h == k).unwrap()];
    assert_eq!(col("size_kb"), (array / 1024).to_string());
    assert_eq!(rec["params"]["variant"], col("variant"), "{sweep}");
    assert!(col("stream_bandwidth_mb_s").parse::<f64>().unwrap() > 0.0);

    // Other kernels divide by their own array count.
    for (kernel, arrays, variant) in [
        ("read", 1, None),
        ("copy", 2, None),
        ("triad_portable", 3, Some("triad_portable")),
    ] {
        let doc: Value = serde_json::from_str(
            &String::from_utf8(stdout_of([
                "matrix",
                "--kernel",
                kernel,
                "--size",
                "12M",
                "-r",
                "1",
                "--no-saturated",
                "--no-latency",
                "--json",
            ]))
            .unwrap(),
        )
        .unwrap();
        let rec = records(&doc, "bandwidth_1t")[0];
        assert_eq!(
            rec["params"]["size_bytes"],
            (12usize << 20) / arrays / 4096 * 4096,
            "{kernel}: {rec}"
        );
        let name = rec["params"]["variant"].as_str().unwrap();
        let op = rec["params"]["kernel"].as_str().unwrap();
        assert!(name.starts_with(op), "{kernel}: {rec}");
        if let Some(v) = variant {
            assert_eq!(name, v);
        } else {
            assert_eq!(op, kernel);
        }
    }
}

#[test]
fn the_class_rule_is_recorded_with_the_matrix() {
    let out = matrix_out(&[
        "--no-saturated",
        "--no-latency",
        "-r",
        "1",
        "--tolerance",
        "5",
        "--merge-close-classes",
        "--json",
    ]);
    let doc: Value = serde_json::from_str(&out).unwrap();
    let rule = records(&doc, "class_rule");
    assert_eq!(rule.len(), 1, "{out}");
    assert_eq!(rule[0]["params"]["tolerance_pct"], 5.0, "{out}");
    assert_eq!(rule[0]["params"]["merge_close"], true, "{out}");
    // The text of the same document names the rule it records.
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("m.json");
    std::fs::write(&f, &out).unwrap();
    let text = String::from_utf8(stdout_of([
        "report",
        f.to_str().unwrap(),
        "--format",
        "text",
    ]))
    .unwrap();
    assert!(
        text.contains("(5.0% tolerance)") && text.contains("then adjacent classes merged"),
        "{text}"
    );
    rejects(
        &["matrix", "--per-core", "0", "--tolerance", "5"],
        &["--tolerance", "--per-core"],
    );
    rejects(
        &["matrix", "--tolerance", "150"],
        &["--tolerance 150", "0 to 100"],
    );
}
