//! `numabench sweep` end to end on this machine, with small sizes so the
//! tests stay quick. Speed is checked by scripts/bench-peers, not here.

use crate::util::*;
use serde_json::Value;

fn sweep_csv(args: &[&str]) -> Vec<std::collections::HashMap<String, String>> {
    let text =
        String::from_utf8(stdout_of(["sweep"].iter().chain(args).chain(&["--csv"]))).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_string)
        .collect();
    lines
        .map(|l| {
            header
                .iter()
                .cloned()
                .zip(l.split(',').map(str::to_string))
                .collect()
        })
        .collect()
}

fn num(row: &std::collections::HashMap<String, String>, key: &str) -> f64 {
    row[key]
        .parse()
        .unwrap_or_else(|_| panic!("{key}={}", row[key]))
}

#[test]
fn csv_has_sc_membench_columns_then_our_own() {
    let text = String::from_utf8(stdout_of([
        "sweep",
        "--op",
        "read",
        "-s",
        "64K",
        "--threads",
        "1",
        "-r",
        "1",
        "--csv",
    ]))
    .unwrap();
    assert_eq!(
        text.lines().next().unwrap(),
        "size_kb,operation,bandwidth_mb_s,latency_ns,latency_stddev_ns,latency_samples,threads,iterations,elapsed_s,\
         variant,bytes_per_element,stream_bandwidth_mb_s,placement_verified_pct,huge_pct"
    );
}

#[test]
fn copy_and_triad_are_reported_in_both_conventions() {
    let rows = sweep_csv(&[
        "--op",
        "read",
        "--op",
        "copy",
        "--op",
        "triad",
        "-s",
        "256K",
        "--threads",
        "1",
        "-r",
        "2",
    ]);
    assert_eq!(rows.len(), 3);
    for r in &rows {
        let (lm, stream) = (num(r, "bandwidth_mb_s"), num(r, "stream_bandwidth_mb_s"));
        assert!(lm > 0.0, "{r:?}");
        // STREAM counts every byte read and written; sc-membench/lmbench
        // count one array.
        let (factor, bytes) = match r["operation"].as_str() {
            "read" => (1.0, 8.0),
            "copy" => (2.0, 16.0),
            "triad" => (3.0, 24.0),
            other => panic!("{other}"),
        };
        assert!((stream / lm - factor).abs() < 0.01, "{r:?}");
        assert_eq!(num(r, "bytes_per_element"), bytes);
        assert_eq!(num(r, "size_kb"), 256.0);
        assert_eq!(num(r, "placement_verified_pct"), 100.0, "{r:?}");
    }
}

#[test]
fn latency_reports_median_spread_and_samples() {
    let rows = sweep_csv(&["--op", "latency", "-s", "16K", "-s", "65536K"]);
    assert_eq!(rows.len(), 2);
    let (small, big) = (&rows[0], &rows[1]);
    for r in [small, big] {
        let n = num(r, "latency_samples");
        assert!((7.0..=21.0).contains(&n), "{r:?}");
        assert_eq!(num(r, "bandwidth_mb_s"), 0.0);
        assert_eq!(r["threads"], "1");
    }
    // 16 KiB sits in L1, 64 MiB far beyond L3 here: the chase must see it.
    assert!(
        num(big, "latency_ns") > 5.0 * num(small, "latency_ns"),
        "{small:?} {big:?}"
    );
}

#[test]
fn json_keeps_every_sample_and_the_placement() {
    let doc: Value = serde_json::from_slice(&stdout_of([
        "sweep",
        "--op",
        "write",
        "-s",
        "128K",
        "--threads",
        "2",
        "-r",
        "4",
        "--json",
    ]))
    .unwrap();
    assert_eq!(doc["schema"], 1);
    let rec = &doc["records"][0];
    assert_eq!(rec["probe"], "sweep");
    assert_eq!(
        rec["samples"]["bandwidth_mb_s"].as_array().unwrap().len(),
        4
    );
    assert_eq!(rec["metrics"]["bandwidth_mb_s"]["better"], "higher");
    let best = rec["metrics"]["bandwidth_mb_s"]["value"].as_f64().unwrap();
    let max = rec["samples"]["bandwidth_mb_s"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!(
        (best - max).abs() < 1e-6 * best,
        "best-of-N must be the best sample"
    );
    assert_eq!(rec["placement"]["cpus_seen"].as_array().unwrap().len(), 2);
    assert_eq!(rec["placement"]["on_target_pct"], 100.0);
    let variant = rec["params"]["variant"].as_str().unwrap();
    assert!(
        variant.ends_with(rec["params"]["isa"].as_str().unwrap()),
        "{variant}"
    );
    assert_eq!(rec["params"]["stores"], "regular");
}

#[test]
fn forced_kernel_variant_is_named_in_the_output() {
    let rows = sweep_csv(&[
        "--kernel-variant",
        "copy_portable",
        "-s",
        "64K",
        "--threads",
        "1",
        "-r",
        "1",
    ]);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["variant"], "copy_portable");
    assert_eq!(rows[0]["operation"], "copy");
}

#[test]
fn table_has_summary_scores_and_the_comparability_warning() {
    let text = String::from_utf8(stdout_of([
        "sweep",
        "-R",
        "-s",
        "64K",
        "--threads",
        "1",
        "-r",
        "1",
        "--op",
        "read",
        "--op",
        "write",
        "--op",
        "copy",
        "--op",
        "latency",
    ]))
    .unwrap();
    assert!(text.contains("RAM latency:"), "{text}");
    assert!(text.contains("scores: bandwidth"), "{text}");
    assert!(
        text.contains("WARNING: scores may not be comparable"),
        "{text}"
    );
    assert!(text.contains("fixed thread count (--threads 1)"), "{text}");
}

#[test]
fn bad_sweep_input_is_refused() {
    for (args, word) in [
        (vec!["sweep", "--threads", "0"], "--threads 0"),
        (vec!["sweep", "--threads", "4096"], "--threads 4096"),
        (vec!["sweep", "--op", "bogus"], "'bogus'"),
        (vec!["sweep", "--kernel-variant", "nope"], "nope"),
        (vec!["sweep", "-s", "abc"], "'abc'"),
        (vec!["sweep", "--buffer-kib", "abc"], "--buffer-kib abc"),
        (vec!["sweep", "-r", "0"], "-r 0"),
    ] {
        let out = numabench().args(&args).output().unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(word), "{args:?}: {err}");
    }
}

#[test]
fn openmp_variables_set_and_place_the_bandwidth_threads() {
    let out = numabench()
        .args(["sweep", "--op", "read", "-s", "64K", "-r", "1", "--json"])
        .env("OMP_NUM_THREADS", "1")
        .env("OMP_PROC_BIND", "close")
        .env("OMP_PLACES", "threads")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rec = &doc["records"][0];
    assert_eq!(rec["params"]["threads"], 1, "{rec}");
    // close over hardware threads: the first CPU this process may use.
    let first = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map(|l| {
            l.trim()
                .split([',', '-'])
                .next()
                .unwrap()
                .parse::<u64>()
                .unwrap()
        })
        .unwrap();
    assert_eq!(
        rec["placement"]["cpus_seen"],
        serde_json::json!([first]),
        "{rec}"
    );
    let warnings = rec["params"]["score_warnings"].to_string();
    assert!(
        warnings.contains("OMP_NUM_THREADS=1, OMP_PROC_BIND=close, OMP_PLACES=threads"),
        "{warnings}"
    );
    // -p wins over OMP_NUM_THREADS, as a command line over the environment.
    let rows_p = {
        let out = numabench()
            .args([
                "sweep",
                "--op",
                "read",
                "-s",
                "64K",
                "-r",
                "1",
                "--threads",
                "1",
                "--csv",
            ])
            .env("OMP_NUM_THREADS", "2")
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(
        rows_p.lines().nth(1).unwrap().split(',').nth(6),
        Some("1"),
        "{rows_p}"
    );
    for (k, v, says) in [
        ("OMP_PROC_BIND", "false", "give spread or close"),
        ("OMP_PLACES", "{0,1}", "threads, cores or sockets"),
        ("OMP_NUM_THREADS", "100000", "use 1 to"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let out = numabench()
            .current_dir(tmp.path())
            .args(["sweep", "--op", "read", "-s", "64K"])
            .env(k, v)
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{k}={v}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!("numabench: error: {k}=")) && err.contains(says),
            "{err}"
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn help_names_the_openmp_variables() {
    let help = String::from_utf8(stdout_of(["sweep", "--help"])).unwrap();
    for v in [
        "OMP_NUM_THREADS",
        "OMP_PROC_BIND=spread|close",
        "OMP_PLACES=threads|cores|sockets",
        "2 GiB",
    ] {
        assert!(help.contains(v), "{v} missing from sweep --help");
    }
}
