//! `numabench sched` results: the records of a run (one per task and a
//! summary), and the original report's residency table built back from
//! those records, as text and as sections for the HTML report.

use super::sections::Section;
use super::svg::{self, Chart, Marker};
use crate::probes::sched::residency::{self, marks, most_time_node};
use crate::probes::sched::{BurstOutcome, Params, RunOutput};
use crate::results::{Better, Placement, Record, Series};
use crate::view::table::{Align, Table};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// Points kept of the runnable-tasks series.
const SERIES_POINTS: usize = 300;

fn by_node<T: Into<Value> + Copy>(m: &BTreeMap<usize, T>) -> Value {
    Value::Object(
        m.iter()
            .map(|(k, v)| (k.to_string(), (*v).into()))
            .collect(),
    )
}

fn opt(v: Option<usize>) -> Value {
    v.map_or(Value::Null, Value::from)
}

/// One record per task, then the summary.
pub fn records(p: &Params, out: &RunOutput, command: &str) -> Vec<Record> {
    let mut nodes = out.nodes.clone();
    for t in &out.tasks {
        for n in t
            .residency
            .user_ticks
            .keys()
            .chain(t.residency.system_ticks.keys())
        {
            if !nodes.contains(n) {
                nodes.push(*n);
            }
        }
    }
    nodes.sort_unstable();
    let mut recs = Vec::new();
    let (mut moved, mut away) = (0u32, 0u32);
    for (i, t) in out.tasks.iter().enumerate() {
        let start_node = t.start_node;
        let shares = t.residency.shares(&nodes, start_node);
        let most = most_time_node(&nodes, &shares.pct);
        let memory = t.report.as_ref().and_then(|r| r.memory.as_ref());
        let mem_node = memory.and_then(|m| residency::majority_node(&m.pages_by_node));
        let mk = marks(start_node, most, mem_node);
        moved += u32::from(mk.moved);
        away += u32::from(mk.away_from_memory);
        let pct: Map<String, Value> = nodes
            .iter()
            .zip(&shares.pct)
            .map(|(n, v)| (n.to_string(), json!(v)))
            .collect();
        let mut r = Record::new("sched", &format!("task {}", i + 1))
            .param("task", i + 1)
            .param("pid", t.pid)
            .param(
                "size_bytes",
                crate::probes::sched::task::Arrays::bytes(p.size),
            )
            .param("start_cpu", opt(t.start_cpu))
            .param("start_node", opt(start_node))
            .param("most_time_node", opt(most))
            .param("memory_node", opt(mem_node))
            .param("moved", mk.moved)
            .param("away_from_memory", mk.away_from_memory)
            .param("time_pct_by_node", Value::Object(pct))
            .param("share_basis", shares.basis.name())
            .param("user_ticks_by_node", by_node(&t.residency.user_ticks))
            .param("system_ticks_by_node", by_node(&t.residency.system_ticks))
            .param(
                "runnable_looks_by_node",
                by_node(&t.residency.runnable_looks),
            )
            .param("finished", t.report.is_some());
        if t.residency.unplaced_ticks > 0 {
            r = r.param("unplaced_ticks", t.residency.unplaced_ticks);
        }
        let cpu = t.cpu(out.ticks_per_s);
        r = r
            .metric("user_time_s", cpu.user_s, "s", Better::Lower)
            .metric("system_time_s", cpu.system_s, "s", Better::Lower);
        if let Some(rep) = &t.report {
            r = r.metric(
                "runtime_s",
                (rep.done_ns as f64 / 1e9 - t.start_s).max(0.0),
                "s",
                Better::Lower,
            );
        }
        if let Some(m) = mem_node.and_then(|m| nodes.iter().position(|&n| n == m)) {
            r = r.metric("local_time_pct", shares.pct[m], "%", Better::Higher);
        }
        let bytes = memory.map_or(0, |m| m.bytes);
        r.placement = Some(Placement {
            pages_by_node: memory.map_or_else(BTreeMap::new, |m| {
                m.pages_by_node
                    .iter()
                    .map(|(k, v)| (k.to_string(), *v))
                    .collect()
            }),
            on_target_pct: None,
            huge_pct: memory.map_or(0.0, |m| m.huge_bytes as f64 * 100.0 / bytes.max(1) as f64),
            cpus_seen: t.residency.cpus_seen.iter().copied().collect(),
        });
        if shares.basis != residency::Basis::UserTime {
            r.notes.push(format!(
                "shares from {}: the task accrued no user-time tick while it was looked at",
                shares.basis.name()
            ));
        }
        if t.report.is_none() {
            r.notes
                .push("did not finish: the run was stopped; CPU times from the last look".into());
        }
        recs.push(r);
    }
    recs.push(summary(p, out, command, &nodes, moved, away));
    recs
}

fn summary(
    p: &Params,
    out: &RunOutput,
    command: &str,
    nodes: &[usize],
    moved: u32,
    away: u32,
) -> Record {
    let cpu = out.task_cpu();
    let finished = out.tasks.iter().filter(|t| t.report.is_some()).count();
    let sampler = out.sampler_cpu.user_s + out.sampler_cpu.system_s;
    let mut r = Record::new("sched", "summary")
        .param("tasks", p.tasks)
        .param("size_elements", p.size)
        .param(
            "size_bytes",
            crate::probes::sched::task::Arrays::bytes(p.size),
        )
        .param("passes", p.passes)
        .param("interval_ms", p.interval.as_secs_f64() * 1e3)
        .param("nodes", nodes.to_vec())
        .param("rounds", out.rounds)
        .param("clock_ticks_per_s", out.ticks_per_s)
        .param("finished_tasks", finished)
        .param("command", command)
        .metric("elapsed_s", out.elapsed_s, "s", Better::Lower)
        .metric("total_user_time_s", cpu.user_s, "s", Better::Lower)
        .metric("total_system_time_s", cpu.system_s, "s", Better::Lower)
        .metric("sampler_cpu_s", sampler, "s", Better::Lower)
        .metric(
            "parent_cpu_s",
            out.parent_cpu.user_s + out.parent_cpu.system_s,
            "s",
            Better::Lower,
        )
        .metric(
            "sampler_overhead_pct",
            out.sampler_pct(),
            "%",
            Better::Lower,
        )
        .metric(
            "sampler_us_per_round",
            sampler * 1e6 / out.rounds.max(1) as f64,
            "us",
            Better::Lower,
        )
        .metric("tasks_moved", f64::from(moved), "tasks", Better::Lower)
        .metric(
            "tasks_away_from_memory",
            f64::from(away),
            "tasks",
            Better::Lower,
        );
    if !out.tasks.is_empty() {
        r = r.metric(
            "average_user_time_s",
            cpu.user_s / out.tasks.len() as f64,
            "s",
            Better::Lower,
        );
    }
    if let Some(b) = &p.burst {
        r = r
            .param("burst_at_s", b.at.as_secs_f64())
            .param("burst_groups", b.spec.groups)
            .param("burst_group_size", b.spec.group_size)
            .param("burst_loops", b.spec.loops)
            .param("burst_message_bytes", b.spec.message_bytes)
            .param("burst_messages_expected", b.spec.messages());
    }
    let state = match &out.burst {
        BurstOutcome::Disabled => "disabled",
        BurstOutcome::NotStarted => "not started",
        BurstOutcome::NotReached => "not reached",
        BurstOutcome::Ran(_) => "ran",
    };
    r = r.param("burst", state);
    match &out.burst {
        BurstOutcome::NotReached => r.notes.push(format!(
            "no burst: every task finished ({:.2} s) before the burst time ({:.2} s)",
            out.elapsed_s,
            p.burst.map_or(0.0, |b| b.at.as_secs_f64())
        )),
        BurstOutcome::NotStarted => r
            .notes
            .push("no burst: the run stopped before the burst time".into()),
        BurstOutcome::Ran(b) => {
            r = r
                .param("burst_pid", b.pid)
                .param("burst_processes", b.processes)
                .param("burst_failed", b.failed)
                .param("burst_messages_sent", b.messages_sent)
                .param("burst_messages_received", b.messages_received)
                .param("burst_complete", b.complete)
                .param("burst_forked_at_s", b.forked_at_s)
                .param("burst_ended_at_s", b.ended_at_s)
                .metric(
                    "burst_cpu_s",
                    b.cpu.user_s + b.cpu.system_s,
                    "s",
                    Better::Lower,
                );
            if let Some(go) = b.go_at_s {
                r = r.param("burst_go_at_s", go);
            }
            if let (Some(h), Some(go)) = (b.wall_s, b.go_at_s) {
                let within = burst_within(go, h, out.elapsed_s);
                r = r
                    .metric("burst_s", h, "s", Better::Lower)
                    .metric("burst_within_tasks_s", within, "s", Better::Lower)
                    .metric(
                        "elapsed_minus_burst_s",
                        out.elapsed_s - within,
                        "s",
                        Better::Lower,
                    );
                if within < h {
                    r.notes.push(format!(
                        "the burst went on {:.2} s after the last task ended: E - H subtracts only the {within:.2} s of it within E",
                        h - within
                    ));
                }
            }
            if !b.complete {
                r.notes.push(format!(
                    "the burst did not complete: {} of {} messages received",
                    b.messages_received,
                    p.burst.map_or(0, |b| b.spec.messages())
                ));
            }
        }
        BurstOutcome::Disabled => {}
    }
    if let Some(sig) = out.interrupted {
        r = r.param("interrupted_by_signal", sig);
        r.notes.push(format!(
            "INTERRUPTED by signal {sig}: partial figures, {finished} of {} tasks finished",
            p.tasks
        ));
    }
    if let Some(why) = &out.failed {
        r.notes.push(format!(
            "FAILED: {why}; partial figures, {finished} of {} tasks finished",
            p.tasks
        ));
    }
    if out.killed {
        r.notes
            .push("a process did not stop in time and was killed".into());
    }
    let points = residency::downsample(&out.series, SERIES_POINTS);
    if !points.is_empty() {
        r.series.push(Series {
            name: "runnable tasks per node".into(),
            x_label: "run time".into(),
            x_unit: "s".into(),
            y_label: "tasks".into(),
            y_unit: "count".into(),
            x: points.iter().map(|p| p.0).collect(),
            lines: out
                .nodes
                .iter()
                .enumerate()
                .map(|(i, n)| crate::results::Line {
                    label: format!("node {n}"),
                    y: points
                        .iter()
                        .map(|p| p.1.get(i).copied().unwrap_or(0.0))
                        .collect(),
                })
                .collect(),
        });
    }
    r
}

/// The part of a burst released at `go` and lasting `h` that falls within
/// the tasks' run `0..elapsed`: what E - H should take away, as the
/// original assumed the burst ran entirely while the tasks did.
pub fn burst_within(go: f64, h: f64, elapsed: f64) -> f64 {
    if go + h <= elapsed {
        // Exactly H, not H through a rounding subtraction.
        h
    } else {
        (elapsed - go).clamp(0.0, h)
    }
}

// --- Reading records back (from this run or a results file) -------------

fn num(r: &Record, k: &str) -> Option<f64> {
    r.params.get(k).and_then(Value::as_f64)
}

fn node_param(r: &Record, k: &str) -> String {
    r.params
        .get(k)
        .and_then(Value::as_u64)
        .map_or("-".into(), |v| v.to_string())
}

fn metric(r: &Record, k: &str) -> Option<f64> {
    r.metrics.get(k).map(|m| m.value)
}

fn secs(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.2}"))
}

fn task_records<'a>(records: &[&'a Record]) -> Vec<&'a Record> {
    let mut t: Vec<&Record> = records
        .iter()
        .copied()
        .filter(|r| r.probe == "sched" && r.params.contains_key("task"))
        .collect();
    t.sort_by_key(|r| r.params.get("task").and_then(Value::as_u64).unwrap_or(0));
    t
}

fn summary_record<'a>(records: &[&'a Record]) -> Option<&'a Record> {
    records
        .iter()
        .copied()
        .find(|r| r.probe == "sched" && r.name == "summary")
}

/// The node columns: the summary's list, plus any node a task has a share on.
fn columns(summary: Option<&Record>, tasks: &[&Record]) -> Vec<usize> {
    let mut nodes: Vec<usize> = summary
        .and_then(|s| s.params.get("nodes"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_u64())
                .map(|v| v as usize)
                .collect()
        })
        .unwrap_or_default();
    for t in tasks {
        if let Some(m) = t.params.get("time_pct_by_node").and_then(Value::as_object) {
            for k in m.keys().filter_map(|k| k.parse::<usize>().ok()) {
                if !nodes.contains(&k) {
                    nodes.push(k);
                }
            }
        }
    }
    nodes.sort_unstable();
    nodes
}

fn title(s: Option<&Record>) -> String {
    let Some(s) = s else {
        return "numabench sched".into();
    };
    let n = |k: &str| num(s, k).map_or("?".into(), |v| format!("{v}"));
    let bytes = num(s, "size_bytes").map_or("?".into(), |b| crate::view::table::bytes(b as u64));
    let burst = match s.params.get("burst_at_s").and_then(Value::as_f64) {
        Some(at) => format!("burst of {} group(s) at {at} s", n("burst_groups")),
        None => "no burst".into(),
    };
    format!(
        "numabench sched: {} tasks x {} elements ({bytes} each), {} passes, unbound; {burst}; looked at every {} ms",
        n("tasks"),
        n("size_elements"),
        n("passes"),
        n("interval_ms"),
    )
}

/// The residency table and the totals, as sections.
pub fn sections(records: &[&Record]) -> Vec<Section> {
    let tasks = task_records(records);
    let summary = summary_record(records);
    let nodes = columns(summary, &tasks);
    let mut table = Section::new(title(summary));
    table.header = std::iter::once("Task".to_string())
        .chain(nodes.iter().map(|n| format!("node{n:02}")))
        .chain(
            [
                "iSched",
                "MSched",
                "",
                "Mem",
                "",
                "UserTime(s)",
                "SysTime(s)",
            ]
            .iter()
            .map(|s| s.to_string()),
        )
        .collect();
    for t in &tasks {
        let pct = t.params.get("time_pct_by_node").and_then(Value::as_object);
        let flag = |k: &str, mark: &str| {
            if t.params.get(k).and_then(Value::as_bool) == Some(true) {
                mark.to_string()
            } else {
                String::new()
            }
        };
        let mut row = vec![t.params.get("task").map_or("?".into(), |v| v.to_string())];
        row.extend(nodes.iter().map(|n| {
            pct.and_then(|m| m.get(&n.to_string()))
                .and_then(Value::as_f64)
                .map_or("-".into(), |v| format!("{v:.1}"))
        }));
        row.extend([
            node_param(t, "start_node"),
            node_param(t, "most_time_node"),
            flag("moved", "*"),
            node_param(t, "memory_node"),
            flag("away_from_memory", "!"),
            secs(metric(t, "user_time_s")),
            secs(metric(t, "system_time_s")),
        ]);
        table.rows.push(row);
    }
    table.lines.extend(
        [
            "nodeNN: % of the task's user time on the node's CPUs",
            "iSched: the node it started on; MSched: the node with most of its time;",
            "Mem: the node with most of its pages at the end of its work",
            "*: MSched differs from iSched (it was moved for most of its run)",
            "!: MSched differs from Mem (it ran mostly away from its memory)",
        ]
        .map(String::from),
    );
    let mut totals = Section::new("totals");
    totals.header = vec!["".into(), "value".into(), "".into()];
    if let Some(s) = summary {
        let m = |k: &str| metric(s, k);
        let mut row = |name: &str, v: Option<f64>, about: String| {
            let v = v.map_or("-".into(), |v| format!("{v:.2} s"));
            totals.rows.push(vec![name.into(), v, about]);
        };
        row("AverageUserTime", m("average_user_time_s"), String::new());
        row(
            "ElapsedTime (E)",
            m("elapsed_s"),
            "first fork to the last task's end".into(),
        );
        row(
            "TotalUserTime",
            m("total_user_time_s"),
            "of the tasks".into(),
        );
        row(
            "TotalSysTime",
            m("total_system_time_s"),
            "of the tasks".into(),
        );
        let state = s.params.get("burst").and_then(Value::as_str).unwrap_or("?");
        let about = match state {
            "ran" => format!(
                "{} processes from {} s; {} of {} messages; {} s CPU",
                num(s, "burst_processes").map_or("?".into(), |v| v.to_string()),
                secs(num(s, "burst_go_at_s")),
                num(s, "burst_messages_received").map_or("?".into(), |v| v.to_string()),
                num(s, "burst_messages_expected").map_or("?".into(), |v| v.to_string()),
                secs(m("burst_cpu_s")),
            ),
            other => other.to_string(),
        };
        row("BurstTime (H)", m("burst_s"), about);
        let within = match (m("burst_within_tasks_s"), m("burst_s")) {
            (Some(w), Some(h)) if w < h => format!("H counted only within E: {w:.2} s"),
            _ => String::new(),
        };
        row("E - H", m("elapsed_minus_burst_s"), within);
        totals.rows.push(vec![
            "Sampler CPU".into(),
            m("sampler_cpu_s").map_or("-".into(), |v| format!("{v:.3} s")),
            format!(
                "{:.3}% of the run's CPU time; {} rounds, {:.0} us each",
                m("sampler_overhead_pct").unwrap_or(0.0),
                num(s, "rounds").unwrap_or(0.0),
                m("sampler_us_per_round").unwrap_or(0.0)
            ),
        ]);
        totals.lines.extend(s.notes.iter().cloned());
    }
    for t in &tasks {
        for n in &t.notes {
            totals.lines.push(format!("{}: {n}", t.name));
        }
    }
    vec![table, totals]
}

/// The sections as text: the residency table in the original's layout,
/// then the totals.
pub fn text(records: &[&Record]) -> String {
    let mut out = String::new();
    for (i, s) in sections(records).iter().enumerate() {
        if i == 0 {
            out.push_str(&s.title);
            out.push_str("\n\n");
        }
        let header: Vec<&str> = s.header.iter().map(String::as_str).collect();
        let align: Vec<Align> = if i == 0 {
            s.header
                .iter()
                .map(|h| {
                    if h.is_empty() {
                        Align::Left
                    } else {
                        Align::Right
                    }
                })
                .collect()
        } else {
            vec![Align::Left, Align::Right, Align::Left]
        };
        let mut t = Table::new(&header, &align);
        for r in &s.rows {
            t.row(r.clone());
        }
        let rendered = t.render();
        // The totals read as the original's "name value" lines: no header.
        let body = if i == 0 {
            rendered.as_str()
        } else {
            rendered.split_once('\n').map_or("", |x| x.1)
        };
        out.push_str(body);
        for l in &s.lines {
            out.push_str(l);
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

/// The summary's series as charts, with the burst marked.
pub fn charts(records: &[&Record]) -> Vec<String> {
    let Some(s) = summary_record(records) else {
        return Vec::new();
    };
    let mut markers = Vec::new();
    if let Some(go) = num(s, "burst_go_at_s") {
        markers.push(Marker {
            x: go,
            label: "burst".into(),
        });
    }
    s.series
        .iter()
        .map(|series| {
            svg::render(&Chart {
                title: series.name.clone(),
                x_label: format!("{} ({})", series.x_label, series.x_unit),
                y_label: series.y_label.clone(),
                lines: svg::lines_of(series),
                markers: markers.clone(),
                ..Default::default()
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::mem::sys::CpuTimes;
    use crate::probes::sched::burst::BurstSpec;
    use crate::probes::sched::residency::{Look, Residency};
    use crate::probes::sched::shared::{MemoryReport, TaskReport};
    use crate::probes::sched::{BurstOutput, BurstPlan, TaskOutput};
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

    fn run() -> (Params, RunOutput) {
        let p = Params {
            tasks: 2,
            size: 1_000_000,
            passes: 100,
            interval: Duration::from_millis(10),
            burst: Some(BurstPlan {
                at: Duration::from_secs(3),
                spec: BurstSpec::hackbench(20),
            }),
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
        let recs = records(&p, &out, "numabench sched 2");
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
    fn the_table_has_a_column_per_node_and_the_marks() {
        let (p, out) = run();
        let recs = records(&p, &out, "numabench sched 2");
        let refs: Vec<&Record> = recs.iter().collect();
        let text = text(&refs);
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
    fn a_burst_past_the_tasks_counts_only_within_e() {
        assert_eq!(burst_within(3.0, 1.0, 8.0), 1.0);
        assert_eq!(burst_within(3.0, 1.0, 3.5), 0.5);
        assert_eq!(burst_within(3.0, 1.0, 2.0), 0.0);
        // Within E: H itself, not a rounded difference.
        assert_eq!(burst_within(2.61, 2.11, 4.93), 2.11);
        let (p, mut out) = run();
        out.elapsed_s = 4.0;
        let recs = records(&p, &out, "x");
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
    fn no_burst_and_interrupted_runs_say_so() {
        let (p, mut out) = run();
        out.burst = BurstOutcome::NotReached;
        out.elapsed_s = 1.0;
        out.interrupted = Some(2);
        out.tasks[1].report = None;
        let recs = records(&p, &out, "x");
        let s = &recs[2];
        assert_eq!(s.params["burst"], "not reached");
        assert!(!s.metrics.contains_key("burst_s"));
        let refs: Vec<&Record> = recs.iter().collect();
        let text = text(&refs);
        assert!(text.contains("no burst: every task finished"), "{text}");
        assert!(text.contains("INTERRUPTED by signal 2"), "{text}");
        assert!(text.contains("task 2: did not finish"), "{text}");
    }

    #[test]
    fn the_html_report_shows_the_residency_table_and_chart() {
        let (p, out) = run();
        let mut doc = crate::results::Document::new(&crate::topology::fixture("two-node"));
        doc.records = records(&p, &out, "x");
        let html = super::super::html::report(&[super::super::html::Run {
            label: "base".into(),
            doc: &doc,
        }]);
        assert!(html.contains("id=\"sched-base\""), "no sched part");
        assert!(html.contains("<th>iSched</th>"));
        assert!(html.contains("<td>75.0</td>"));
        assert!(html.contains("runnable tasks per node"));
        // Not drawn a second time by the generic table.
        assert_eq!(html.matches("<th>iSched</th>").count(), 1);
        assert!(!html.contains("<h2>sched</h2>"));
    }
}
