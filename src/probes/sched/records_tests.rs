//! Unit tests of the sched records.

use super::*;
use crate::probes::sched::burst::BurstSpec;
use crate::probes::sched::residency::{Look, Residency};
use crate::probes::sched::shared::{MemoryReport, TaskReport};
use crate::probes::sched::{BurstOutput, BurstPlan, TaskOutput};
use crate::sys::CpuTimes;
use std::time::Duration;

/// A task that accrued `ticks` (node, user ticks) in that order.
fn task(start: usize, ticks: &[(usize, u64)], mem: &[(usize, u64)]) -> TaskOutput {
    let mut r = Residency::default();
    let mut total = 0;
    for &(node, t) in ticks {
        total += t;
        let look = Look {
            cpu: node * 2,
            user_ticks: total,
            system_ticks: 0,
            runnable: true,
        };
        r.add(look, Some(node));
    }
    TaskOutput {
        pid: 100 + start as i32,
        start_cpu: Some(start * 2),
        start_node: Some(start),
        start_s: 0.01,
        residency: r,
        report: Some(TaskReport {
            done_ns: 8_000_000_000,
            cpu: CpuTimes {
                user_s: total as f64 / 100.0,
                system_s: 0.02,
            },
            checksum: 1,
            memory: Some(MemoryReport {
                pages_by_node: mem.iter().copied().collect(),
                not_present: 0,
                huge_bytes: 0,
                bytes: 20 << 20,
            }),
        }),
    }
}

/// Two tasks on two nodes, the first moved away from its memory, and a
/// burst that ran within the tasks' run.
pub(crate) fn run() -> (Params, RunOutput) {
    let p = Params {
        tasks: 2,
        size: 1_000_000,
        passes: 100,
        interval: Duration::from_millis(10),
        burst: Some(BurstPlan {
            at: Duration::from_secs(3),
            spec: BurstSpec::hackbench(20),
        }),
        chosen: Default::default(),
    };
    let out = RunOutput {
        tasks: vec![
            // Started on 0, ran mostly on 1, memory on 0.
            task(0, &[(0, 100), (1, 300)], &[(0, 5000), (1, 10)]),
            // Started on 1 and stayed with its memory.
            task(1, &[(1, 400)], &[(1, 5000)]),
        ],
        nodes: vec![0, 1],
        elapsed_s: 8.0,
        burst: BurstOutcome::Ran(BurstOutput {
            pid: 7,
            forked_at_s: 3.0,
            go_at_s: Some(3.2),
            wall_s: Some(1.5),
            ended_at_s: 4.8,
            processes: 800,
            failed: 0,
            messages_sent: 800_000,
            messages_received: 800_000,
            cpu: CpuTimes {
                user_s: 0.5,
                system_s: 2.0,
            },
            complete: true,
        }),
        sampler_cpu: CpuTimes {
            user_s: 0.01,
            system_s: 0.02,
        },
        parent_cpu: CpuTimes {
            user_s: 0.01,
            system_s: 0.03,
        },
        rounds: 800,
        series: (0..800)
            .map(|i| (i as f64 * 0.01, vec![1.0, 1.0]))
            .collect(),
        interrupted: None,
        failed: None,
        killed: false,
        ticks_per_s: 100.0,
    };
    (p, out)
}

#[test]
fn task_records_carry_shares_nodes_and_marks() {
    let (p, out) = run();
    let recs = records(&p, &out, "numabench sched 2", None);
    assert_eq!(recs.len(), 3);
    let t1 = &recs[0];
    assert_eq!(t1.name, "task 1");
    assert_eq!(t1.params["time_pct_by_node"]["0"], 25.0);
    assert_eq!(t1.params["time_pct_by_node"]["1"], 75.0);
    assert_eq!(t1.params["start_node"], 0);
    assert_eq!(t1.params["most_time_node"], 1);
    assert_eq!(t1.params["memory_node"], 0);
    assert_eq!(t1.params["moved"], true);
    assert_eq!(t1.params["away_from_memory"], true);
    assert_eq!(t1.metrics["local_time_pct"].value, 25.0);
    assert_eq!(t1.metrics["user_time_s"].value, 4.0);
    let t2 = &recs[1];
    assert_eq!(t2.params["moved"], false);
    assert_eq!(t2.params["away_from_memory"], false);
    assert_eq!(t2.metrics["local_time_pct"].value, 100.0);
    let s = &recs[2];
    assert_eq!(s.name, "summary");
    assert_eq!(s.metrics["tasks_moved"].value, 1.0);
    assert_eq!(s.metrics["tasks_away_from_memory"].value, 1.0);
    assert_eq!(s.metrics["average_user_time_s"].value, 4.0);
    assert_eq!(s.metrics["burst_s"].value, 1.5);
    assert_eq!(s.metrics["elapsed_minus_burst_s"].value, 6.5);
    assert_eq!(s.params["burst_messages_expected"], 800_000);
    // (tasks 8.04 s + burst 2.5 s + parent 0.04 s) of CPU; 0.03 s sampling.
    let pct = s.metrics["sampler_overhead_pct"].value;
    assert!((pct - 0.03 * 100.0 / 10.58).abs() < 1e-9, "{pct}");
    assert!(s.series[0].x.len() <= SERIES_POINTS);
    assert_eq!(s.series[0].lines.len(), 2);
}

#[test]
fn a_burst_past_the_tasks_counts_only_within_e() {
    assert_eq!(burst_within(3.0, 1.0, 8.0), 1.0);
    assert_eq!(burst_within(3.0, 1.0, 3.5), 0.5);
    assert_eq!(burst_within(3.0, 1.0, 2.0), 0.0);
    // Within E: H itself, not a rounded difference.
    assert_eq!(burst_within(2.61, 2.11, 4.93), 2.11);
    let (p, mut out) = run();
    out.elapsed_s = 4.0;
    let recs = records(&p, &out, "x", None);
    let s = &recs[2];
    assert!((s.metrics["burst_within_tasks_s"].value - 0.8).abs() < 1e-9);
    assert!((s.metrics["elapsed_minus_burst_s"].value - 3.2).abs() < 1e-9);
    assert!(
        s.notes
            .iter()
            .any(|n| n.contains("after the last task ended"))
    );
}

#[test]
fn no_burst_and_interrupted_runs_say_so_in_the_records() {
    let (p, mut out) = run();
    out.burst = BurstOutcome::NotReached;
    out.elapsed_s = 1.0;
    out.interrupted = Some(2);
    out.tasks[1].report = None;
    let recs = records(&p, &out, "x", None);
    let s = &recs[2];
    assert_eq!(s.params["burst"], "not reached");
    assert_eq!(s.params["interrupted_by_signal"], 2);
    assert!(!s.metrics.contains_key("burst_s"));
    // A partial run is never averaged.
    assert!(!s.metrics.contains_key("average_user_time_s"), "{s:?}");
    assert!(s.metrics.contains_key("total_user_time_s"));
    assert!(s.notes[0].starts_with("no burst: every task finished"));
    assert!(s.notes[1].starts_with("INTERRUPTED by signal 2"));
    assert_eq!(s.cut_by_signal(), Some(2));
    assert_eq!(s.part_failed(), None);
    assert!(recs[1].notes[0].starts_with("did not finish"));
}

#[test]
fn chosen_values_and_series_names_are_in_the_records() {
    use crate::probes::sched::plan::{PassesChoice, SizeChoice};
    let (mut p, out) = run();
    p.chosen = crate::probes::sched::Chosen {
        size: Some(SizeChoice {
            elements: 1_000_000,
            llc_bytes: Some(32 << 20),
            basis: "4 x the 32 MiB last-level cache per task".into(),
        }),
        passes: Some(PassesChoice {
            passes: 100,
            pass_s: Some(0.09),
            basis: "one pass took 0.090 s".into(),
        }),
        target_s: Some(9.0),
        burst: None,
        burst_limited: None,
    };
    let recs = records(&p, &out, "x", Some(&[64][..]));
    assert_eq!(recs[0].name, "N=2 task 1");
    let s = &recs[2];
    assert_eq!(s.name, "N=2 summary");
    assert_eq!(s.params["llc_bytes"], 32 << 20);
    assert_eq!(s.params["pass_s"], 0.09);
    assert_eq!(s.params["target_run_s"], 9.0);
    assert_eq!(s.params["burst_transport"], "socket");
    assert_eq!(s.params["series_left_out"], serde_json::json!([64]));
    assert!(s.params["size_basis"].as_str().unwrap().contains("4 x"));
    // Given values leave no basis behind.
    let (p, out) = run();
    let s = &records(&p, &out, "x", None)[2];
    assert!(!s.has_param("size_basis"));
    assert!(!s.has_param("passes_basis"));
}
