//! `numabench tier`: bad input, the one line a machine that cannot tier
//! gets, and a document a tiering guest saved (scripts/numa-vm --preset
//! tier: all three tests with their baselines) drawn in every format.

use crate::util::*;
use std::path::PathBuf;

fn vm_doc() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tier/vm-all.json")
}

fn report(format: &str) -> String {
    let out = numabench()
        .args(["report", "--format", format])
        .arg(vm_doc())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    rejects(
        &["tier", "bogus"],
        &["bogus", "promotion, demotion, oversize"][..],
    );
    rejects(&["tier", "--secs", "0"], "--secs");
    rejects(&["tier", "--hot", "0"], "--hot");
    rejects(&["tier", "--interval", "0.001"], "--interval");
    rejects(&["tier", "--sample-pages", "8"], "--sample-pages");
}

#[test]
fn a_machine_without_a_lower_tier_gets_one_line_and_exit_2() {
    let topo = topo_json(std::path::Path::new("/"));
    let tiers = topo["memory_tiers"].as_array().map_or(0, |t| t.len());
    if tiers >= 2 {
        eprintln!("skipped: this machine has {tiers} memory tiers");
        return;
    }
    rejects(
        &["tier", "--secs", "1", "--save", "t.json"],
        &["tier: this ", "tiering needs memory in a lower tier"][..],
    );
}

#[test]
fn the_guests_document_draws_tables_marks_and_charts() {
    let text = report("text");
    assert!(text.contains("fast: node 0 (memory tier 4), slow: node 1 (memory tier 70)"));
    for test in ["promotion: ", "demotion: ", "oversize: "] {
        assert!(text.contains(test), "{test} missing:\n{text}");
    }
    // The promotion test's row: the hot set fast, its 90% moment, the cold
    // set slow.
    let row = text
        .lines()
        .skip_while(|l| !l.starts_with("promotion: "))
        .find(|l| l.starts_with("test "))
        .unwrap();
    assert!(row.contains("100.0%") && row.contains("1.0 s"), "{row}");
    // Demotion never reached 90% in its 6 s: said as such.
    let row = text
        .lines()
        .skip_while(|l| !l.starts_with("demotion: "))
        .find(|l| l.starts_with("test "))
        .unwrap();
    assert!(row.contains("never"), "{row}");
    assert!(text.contains("position: ") && text.contains("no position: "));
    assert!(text.contains("scan_delay_ms=100"), "the guest's settings");

    let html = report("html");
    assert!(html.contains("Memory tiering"));
    // Three charts per test: memory per tier, migrations, throughput.
    assert_eq!(html.matches("<svg").count(), 9);
    assert!(html.contains("90% of hot set fast at 1.0 s"));
    // The mark on the memory and migration charts of the two tests that
    // reached it (promotion, oversize), none on demotion's.
    assert_eq!(html.matches("90% of hot set fast at ").count(), 4);

    let csv = report("csv");
    assert!(csv.lines().any(|l| l.contains("pgdemote_kswapd")), "{csv}");
    for f in ["markdown", "latex", "json"] {
        assert!(!report(f).is_empty());
    }
}
