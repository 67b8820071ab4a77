//! `--plan` as a user runs it: what `run` and each per-pair command would
//! measure on a captured or generated machine, with estimates, measuring
//! nothing; a budget that cannot be kept refused before anything starts.

use crate::synthetic::Shape;
use crate::util::*;

fn plan_of(args: &[&str]) -> String {
    String::from_utf8(stdout_of(args)).unwrap()
}

/// Seconds in "about 2 min 17 s" (the first such phrase of `line`).
fn about_s(line: &str) -> f64 {
    let rest = &line[line.find("about ").expect(line) + 6..];
    let words: Vec<&str> = rest.split_whitespace().collect();
    let mut s = 0.0;
    for pair in words.chunks(2) {
        let Ok(v) = pair[0].parse::<f64>() else { break };
        let unit = pair.get(1).map_or("", |u| u.trim_end_matches(','));
        s += v * match unit {
            "h" => 3600.0,
            "min" => 60.0,
            "s" => 1.0,
            _ => break,
        };
    }
    s
}

#[test]
fn run_plans_every_captured_machine_within_the_default_budget() {
    for dir in fixture_machines() {
        let root = dir.to_str().unwrap();
        let out = plan_of(&["run", "--plan", "--sysfs-root", root]);
        let first = out.lines().next().unwrap();
        assert!(first.contains("nothing measured yet"), "{root}: {out}");
        assert!(
            about_s(first) > 0.0 && about_s(first) <= 15.0 * 60.0,
            "{root}: {first}"
        );
        // Each step with its share and what it measures.
        assert_eq!(out.matches("%)").count(), 7, "{root}: {out}");
        assert_eq!(out.matches("measures ").count(), 7, "{root}: {out}");
    }
}

#[test]
fn a_generated_32_node_machine_is_planned_by_class_within_the_default_budget() {
    let dir = tempfile::tempdir().unwrap();
    Shape::thirty_two_nodes().write(dir.path()).unwrap();
    let root = dir.path().to_str().unwrap();
    let out = plan_of(&["run", "--plan", "--sysfs-root", root]);
    let first = out.lines().next().unwrap();
    assert!(
        first.contains("32 node(s) with memory, 1024 CPU(s)"),
        "{out}"
    );
    assert!(about_s(first) <= 15.0 * 60.0, "{first}");
    assert!(out.contains("--sample-above"), "{out}");
    assert!(
        out.contains("measures 1024 cell(s): 32 CPU node(s) x 32 memory node(s)"),
        "{out}"
    );
    assert!(out.contains("32 x chase of 1 GiB"), "{out}");
    // Without a budget, every figure as the profile has it: longer.
    let all = plan_of(&["run", "--plan", "--budget", "none", "--sysfs-root", root]);
    let whole = about_s(all.lines().next().unwrap());
    assert!(whole > about_s(first), "{all}");
    assert!(!all.contains("trimmed to fit"), "{all}");
    // --all-pairs reaches the per-pair parts.
    let every = plan_of(&[
        "run",
        "--plan",
        "--all-pairs",
        "--budget",
        "none",
        "--sysfs-root",
        root,
    ]);
    assert!(every.contains("measures 1024 pair(s)"), "{every}");
}

#[test]
fn a_budget_trims_the_run_and_one_it_cannot_keep_is_refused_before_it_starts() {
    let root = fixture("big-16node");
    let root = root.to_str().unwrap();
    let full = plan_of(&["run", "--plan", "--budget", "none", "--sysfs-root", root]);
    let trimmed = plan_of(&["run", "--plan", "--budget", "6m", "--sysfs-root", root]);
    assert!(trimmed.contains("trimmed to fit the budget"), "{trimmed}");
    let t = about_s(trimmed.lines().next().unwrap());
    assert!(
        t <= 360.0 && t < about_s(full.lines().next().unwrap()),
        "{trimmed}"
    );
    rejects(
        &["run", "--plan", "--budget", "10s", "--sysfs-root", root],
        "cannot fit a budget of 10 s",
    );
    rejects(&["run", "--budget", "soon"], "--budget 'soon'");
}

#[test]
fn each_per_pair_command_plans_on_a_captured_machine() {
    let root = fixture("amd-4node");
    let root = root.to_str().unwrap();
    for cmd in ["matrix", "latency", "mlp", "loaded", "peak", "c2c"] {
        let out = plan_of(&[cmd, "--plan", "--sysfs-root", root]);
        assert!(
            out.starts_with(&format!("numabench {cmd} on opteron4n: about ")),
            "{cmd}: {out}"
        );
        assert!(out.contains("measures "), "{cmd}: {out}");
    }
    let m = plan_of(&["matrix", "--plan", "--sysfs-root", root]);
    assert!(
        m.contains("measures 16 cell(s)") && m.contains("4 x chase of 1 GiB"),
        "{m}"
    );
    // A captured machine is only ever planned, never measured.
    rejects(
        &["latency", "--sysfs-root", root],
        "--sysfs-root goes with --plan",
    );
}
