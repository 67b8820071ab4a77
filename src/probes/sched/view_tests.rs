//! Unit tests of the sched view.

use super::*;
use crate::probes::sched::BurstOutcome;
use crate::probes::sched::records::{records, tests::run};

fn rendered(recs: &[Record]) -> String {
    let refs: Vec<&Record> = recs.iter().collect();
    text(&refs)
}

#[test]
fn the_table_has_a_column_per_node_and_the_marks() {
    let (p, out) = run();
    let text = rendered(&records(&p, &out, "numabench sched 2", None));
    let lines: Vec<&str> = text.lines().collect();
    let header = lines.iter().position(|l| l.starts_with("Task")).unwrap();
    let cols: Vec<&str> = lines[header].split_whitespace().collect();
    assert_eq!(
        cols,
        [
            "Task",
            "node00",
            "node01",
            "iSched",
            "MSched",
            "Mem",
            "UserTime(s)",
            "SysTime(s)"
        ]
    );
    let row1: Vec<&str> = lines[header + 1].split_whitespace().collect();
    assert_eq!(
        row1,
        ["1", "25.0", "75.0", "0", "1", "*", "0", "!", "4.00", "0.02"]
    );
    let row2: Vec<&str> = lines[header + 2].split_whitespace().collect();
    assert_eq!(row2, ["2", "0.0", "100.0", "1", "1", "1", "4.00", "0.02"]);
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for needle in [
        "AverageUserTime 4.00 s",
        "ElapsedTime (E) 8.00 s",
        "TotalUserTime 8.00 s",
        "BurstTime (H) 1.50 s",
        "E - H 6.50 s",
    ] {
        assert!(flat.contains(needle), "{needle} missing:\n{text}");
    }
}

#[test]
fn no_burst_and_interrupted_runs_say_so() {
    let (p, mut out) = run();
    out.burst = BurstOutcome::NotReached;
    out.elapsed_s = 1.0;
    out.interrupted = Some(2);
    out.tasks[1].report = None;
    let text = rendered(&records(&p, &out, "x", None));
    assert!(text.contains("no burst: every task finished"), "{text}");
    assert!(text.contains("INTERRUPTED by signal 2"), "{text}");
    assert!(text.contains("task 2: did not finish"), "{text}");
}

#[test]
fn the_csv_has_a_row_per_task_and_the_totals_as_notes() {
    let (p, out) = run();
    let recs = records(&p, &out, "x", None);
    let refs: Vec<&Record> = recs.iter().collect();
    let c = csv(&refs);
    assert_eq!(
        &c.header[..4],
        ["task", "node0_time_pct", "node1_time_pct", "start_node"]
    );
    assert_eq!(c.rows.len(), 2);
    assert_eq!(&c.rows[0][..7], ["1", "25", "75", "0", "1", "true", "0"]);
    assert!(
        c.notes.contains(&"elapsed_s = 8 s".to_string()),
        "{:?}",
        c.notes
    );
}

#[test]
fn the_report_part_has_the_residency_table_and_the_marked_chart() {
    let (p, out) = run();
    let recs = records(&p, &out, "x", None);
    let refs: Vec<&Record> = recs.iter().collect();
    let doc = Document::new(&crate::topology::fixture("two-node"));
    let blocks = SchedView.blocks(&doc, &refs);
    let Block::Section(table) = &blocks[0] else {
        panic!("no residency table first: {blocks:?}");
    };
    assert!(table.header.iter().any(|h| h == "iSched"));
    assert!(table.rows[0].iter().any(|c| c == "75.0"));
    let charts: Vec<&Chart> = blocks
        .iter()
        .filter_map(|b| match b {
            Block::Chart(c) => Some(c),
            _ => None,
        })
        .collect();
    assert_eq!(charts.len(), 1);
    assert_eq!(charts[0].title, "runnable tasks per node");
    assert_eq!(charts[0].markers[0].x, 3.2);
}

#[test]
fn a_series_ends_with_its_table_and_never_averages_a_partial_run() {
    let (p, out) = run();
    let mut recs = records(&p, &out, "x", Some(&[64][..]));
    let (mut p4, mut cut) = run();
    p4.tasks = 4;
    cut.interrupted = Some(2);
    cut.tasks[1].report = None;
    recs.extend(records(&p4, &cut, "x", Some(&[64][..])));
    let text = rendered(&recs);
    // Two residency tables, then the series.
    assert_eq!(
        text.lines().filter(|l| l.starts_with("Task ")).count(),
        2,
        "{text}"
    );
    let series = text.split("numa_test series").nth(1).expect(&text);
    let rows: Vec<Vec<&str>> = series
        .lines()
        .map(|l| l.split_whitespace().collect())
        .filter(|w: &Vec<&str>| w.first().is_some_and(|c| c.parse::<u32>().is_ok()))
        .collect();
    assert_eq!(rows[0][..4], ["2", "4.00", "8.00", "8.00"], "{series}");
    assert_eq!(rows[1][..3], ["4", "-", "-"], "{series}");
    assert!(
        series.contains("partial: 1 of 4 tasks finished"),
        "{series}"
    );
    assert!(series.contains("left out: N = 64"), "{series}");
    // The cut run's totals have no average either.
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("AverageUserTime -"), "{text}");
    let refs: Vec<&Record> = recs.iter().collect();
    let c = csv(&refs);
    assert_eq!(c.header[0], "N");
    assert_eq!(c.rows.len(), 2);
    assert_eq!(charts(&refs).len(), 2);
    assert!(charts(&refs)[1].title.starts_with("N=4"));
}

#[test]
fn a_failed_run_is_partial_by_its_condition_even_with_every_task_finished() {
    let (p, out) = run();
    let mut failed = out.clone();
    failed.failed = Some("the burst's sender died".into());
    let recs = records(&p, &failed, "x", Some(&[64][..]));
    assert_eq!(recs[2].part_failed(), Some("the burst's sender died"));
    assert!(recs[2].notes.iter().any(|n| n.starts_with("FAILED")));
    assert!(rendered(&recs).contains("partial: 2 of 2 tasks finished"));
    // The note without the condition (a document from before conditions)
    // is a whole run.
    let mut old = recs.clone();
    old[2].conditions.clear();
    assert!(!rendered(&old).contains("partial:"));
}

#[test]
fn chosen_values_are_stated_under_the_title() {
    let (mut p, out) = run();
    p.chosen = crate::probes::sched::Chosen {
        size: Some(crate::probes::sched::plan::SizeChoice {
            elements: 1_000_000,
            llc_bytes: Some(32 << 20),
            basis: "4 x the 32 MiB last-level cache per task".into(),
        }),
        passes: None,
        target_s: None,
        burst: None,
        burst_limited: None,
    };
    let text = rendered(&records(&p, &out, "x", None));
    let second = text.lines().nth(1).unwrap();
    assert_eq!(
        second,
        "size: 1000000 elements per array: 4 x the 32 MiB last-level cache per task (--elements overrides)"
    );
    assert!(!text.contains("passes:"), "{text}");
}
