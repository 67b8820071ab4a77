//! A run's measurements as records: one per task (its share of time on
//! each node, iSched, MSched, its memory's node and the marks between
//! them), then the summary (numa_test's totals, the burst, the sampler's
//! cost and the runnable-tasks series).

use super::residency::{self, Marks, marks, most_time_node};
use super::task::Arrays;
use super::{BurstOutcome, BurstOutput, Params, RunOutput, TaskOutput};
use crate::results::names::sched::{burst_state, metric, param, record, task, task_metric};
use crate::results::names::{self, probe};
use crate::results::{Better, Condition, Line, Placement, Record, Series};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// Points kept of the runnable-tasks series.
pub(crate) const SERIES_POINTS: usize = 300;

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

/// One record per task, then the summary. In a series (`series`: the
/// task counts left out of it) every name starts with `N=<tasks> `.
pub(crate) fn records(
    p: &Params,
    out: &RunOutput,
    command: &str,
    series: Option<&[usize]>,
) -> Vec<Record> {
    let nodes = columns(out);
    let mut recs = Vec::new();
    let (mut moved, mut away) = (0u32, 0u32);
    for (i, t) in out.tasks.iter().enumerate() {
        let (r, mk) = task_record(p, out, i, t, &nodes);
        moved += u32::from(mk.moved);
        away += u32::from(mk.away_from_memory);
        recs.push(r);
    }
    recs.push(summary(p, out, command, &nodes, moved, away));
    if let Some(left_out) = series {
        for r in &mut recs {
            r.name = format!("{}{} {}", record::SERIES_PREFIX, p.tasks, r.name);
        }
        if let Some(s) = recs.last_mut() {
            s.params
                .insert(param::SERIES_LEFT_OUT.into(), left_out.to_vec().into());
        }
    }
    recs
}

/// The node columns: the nodes this process may run on, plus any node a
/// task accrued a tick on.
fn columns(out: &RunOutput) -> Vec<usize> {
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
    nodes
}

/// Task `i`'s record, and its marks for the summary's counts.
fn task_record(
    p: &Params,
    out: &RunOutput,
    i: usize,
    t: &TaskOutput,
    nodes: &[usize],
) -> (Record, Marks) {
    let start_node = t.start_node;
    let shares = t.residency.shares(nodes, start_node);
    let most = most_time_node(nodes, &shares.pct);
    let memory = t.report.as_ref().and_then(|r| r.memory.as_ref());
    let mem_node = memory.and_then(|m| residency::majority_node(&m.pages_by_node));
    let mk = marks(start_node, most, mem_node);
    let pct: Map<String, Value> = nodes
        .iter()
        .zip(&shares.pct)
        .map(|(n, v)| (n.to_string(), json!(v)))
        .collect();
    let mut r = Record::new(probe::SCHED, &format!("{} {}", record::TASK, i + 1))
        .param(task::TASK, i + 1)
        .param(task::PID, t.pid)
        .param(names::param::SIZE_BYTES, Arrays::bytes(p.size))
        .param(task::START_CPU, opt(t.start_cpu))
        .param(task::START_NODE, opt(start_node))
        .param(task::MOST_TIME_NODE, opt(most))
        .param(task::MEMORY_NODE, opt(mem_node))
        .param(task::MOVED, mk.moved)
        .param(task::AWAY_FROM_MEMORY, mk.away_from_memory)
        .param(task::TIME_PCT_BY_NODE, Value::Object(pct))
        .param(task::SHARE_BASIS, shares.basis.name())
        .param(task::USER_TICKS_BY_NODE, by_node(&t.residency.user_ticks))
        .param(
            task::SYSTEM_TICKS_BY_NODE,
            by_node(&t.residency.system_ticks),
        )
        .param(
            task::RUNNABLE_LOOKS_BY_NODE,
            by_node(&t.residency.runnable_looks),
        )
        .param(task::FINISHED, t.report.is_some());
    if t.residency.unplaced_ticks > 0 {
        r = r.param(task::UNPLACED_TICKS, t.residency.unplaced_ticks);
    }
    r = task_metrics(r, out, t);
    if let Some(m) = mem_node.and_then(|m| nodes.iter().position(|&n| n == m)) {
        r = r.metric(
            task_metric::LOCAL_TIME_PCT,
            shares.pct[m],
            "%",
            Better::Higher,
        );
    }
    r.placement = Some(task_placement(t));
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
    (r, mk)
}

/// A task's CPU times, and its run time where it finished.
fn task_metrics(r: Record, out: &RunOutput, t: &TaskOutput) -> Record {
    let cpu = t.cpu(out.ticks_per_s);
    let r = r
        .metric(names::metric::USER_TIME_S, cpu.user_s, "s", Better::Lower)
        .metric(
            names::metric::SYSTEM_TIME_S,
            cpu.system_s,
            "s",
            Better::Lower,
        );
    match &t.report {
        Some(rep) => r.metric(
            names::metric::RUNTIME_S,
            (rep.done_ns as f64 / 1e9 - t.start_s).max(0.0),
            "s",
            Better::Lower,
        ),
        None => r,
    }
}

/// Where a task's pages were at the end of its work, and the CPUs it was
/// seen on.
fn task_placement(t: &TaskOutput) -> Placement {
    let memory = t.report.as_ref().and_then(|r| r.memory.as_ref());
    let bytes = memory.map_or(0, |m| m.bytes);
    Placement {
        pages_by_node: memory.map_or_else(BTreeMap::new, |m| {
            m.pages_by_node
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect()
        }),
        on_target_pct: None,
        huge_pct: memory.map_or(0.0, |m| m.huge_bytes as f64 * 100.0 / bytes.max(1) as f64),
        cpus_seen: t.residency.cpus_seen.iter().copied().collect(),
    }
}

/// The summary: what ran, the totals, the burst, how the run ended and the
/// runnable-tasks series.
fn summary(
    p: &Params,
    out: &RunOutput,
    command: &str,
    nodes: &[usize],
    moved: u32,
    away: u32,
) -> Record {
    let finished = out.tasks.iter().filter(|t| t.report.is_some()).count();
    let mut r = Record::new(probe::SCHED, record::SUMMARY)
        .param(names::param::TASKS, p.tasks)
        .param(param::SIZE_ELEMENTS, p.size)
        .param(names::param::SIZE_BYTES, Arrays::bytes(p.size))
        .param(param::PASSES, p.passes)
        .param(param::INTERVAL_MS, p.interval.as_secs_f64() * 1e3)
        .param(param::NODES, nodes.to_vec())
        .param(param::ROUNDS, out.rounds)
        .param(param::CLOCK_TICKS_PER_S, out.ticks_per_s)
        .param(param::FINISHED_TASKS, finished)
        .param(names::param::COMMAND, command);
    r = chosen(r, p);
    r = totals(r, out, moved, away);
    r = burst_plan(r, p);
    r = burst(r, p, out);
    run_end_notes(&mut r, p, out, finished);
    r.series.extend(runnable_series(out));
    r
}

/// How the size and the passes were chosen, where they were.
fn chosen(mut r: Record, p: &Params) -> Record {
    if let Some(s) = &p.chosen.size {
        r = r.param(param::SIZE_BASIS, s.basis.as_str());
        if let Some(l) = s.llc_bytes {
            r = r.param(param::LLC_BYTES, l);
        }
    }
    if let Some(c) = &p.chosen.passes {
        r = r.param(param::PASSES_BASIS, c.basis.as_str());
        if let Some(s) = c.pass_s {
            r = r.param(param::PASS_S, s);
        }
    }
    if let Some(t) = p.chosen.target_s {
        r = r.param(param::TARGET_RUN_S, t);
    }
    r.notes.extend(p.chosen.burst.iter().cloned());
    r.conditions.extend(p.chosen.burst_limited.clone());
    r
}

/// numa_test's totals and the sampler's cost.
fn totals(r: Record, out: &RunOutput, moved: u32, away: u32) -> Record {
    let cpu = out.task_cpu();
    let sampler = out.sampler_cpu.user_s + out.sampler_cpu.system_s;
    let r = r
        .metric(metric::ELAPSED_S, out.elapsed_s, "s", Better::Lower)
        .metric(metric::TOTAL_USER_TIME_S, cpu.user_s, "s", Better::Lower)
        .metric(
            metric::TOTAL_SYSTEM_TIME_S,
            cpu.system_s,
            "s",
            Better::Lower,
        )
        .metric(metric::SAMPLER_CPU_S, sampler, "s", Better::Lower)
        .metric(
            metric::PARENT_CPU_S,
            out.parent_cpu.user_s + out.parent_cpu.system_s,
            "s",
            Better::Lower,
        )
        .metric(
            metric::SAMPLER_OVERHEAD_PCT,
            out.sampler_pct(),
            "%",
            Better::Lower,
        )
        .metric(
            metric::SAMPLER_US_PER_ROUND,
            sampler * 1e6 / out.rounds.max(1) as f64,
            "us",
            Better::Lower,
        )
        .metric(
            metric::TASKS_MOVED,
            f64::from(moved),
            "tasks",
            Better::Lower,
        )
        .metric(
            metric::TASKS_AWAY_FROM_MEMORY,
            f64::from(away),
            "tasks",
            Better::Lower,
        );
    // An average of a partial run would read as a whole one's.
    let whole = out.interrupted.is_none()
        && out.failed.is_none()
        && out.tasks.iter().all(|t| t.report.is_some());
    if out.tasks.is_empty() || !whole {
        return r;
    }
    r.metric(
        metric::AVERAGE_USER_TIME_S,
        cpu.user_s / out.tasks.len() as f64,
        "s",
        Better::Lower,
    )
}

/// The burst asked for, if one was.
fn burst_plan(r: Record, p: &Params) -> Record {
    let Some(b) = &p.burst else { return r };
    r.param(param::BURST_AT_S, b.at.as_secs_f64())
        .param(param::BURST_GROUPS, b.spec.groups)
        .param(param::BURST_GROUP_SIZE, b.spec.group_size)
        .param(param::BURST_LOOPS, b.spec.loops)
        .param(param::BURST_MESSAGE_BYTES, b.spec.message_bytes)
        .param(param::BURST_TRANSPORT, b.spec.transport.name())
        .param(param::BURST_MESSAGES_EXPECTED, b.spec.messages())
}

/// What happened to the burst, with its figures where it ran.
fn burst(r: Record, p: &Params, out: &RunOutput) -> Record {
    let state = match &out.burst {
        BurstOutcome::Disabled => burst_state::DISABLED,
        BurstOutcome::NotStarted => burst_state::NOT_STARTED,
        BurstOutcome::NotReached => burst_state::NOT_REACHED,
        BurstOutcome::Ran(_) => burst_state::RAN,
    };
    let mut r = r.param(param::BURST, state);
    match &out.burst {
        BurstOutcome::NotReached => r.notes.push(format!(
            "no burst: every task finished ({:.2} s) before the burst time ({:.2} s)",
            out.elapsed_s,
            p.burst.map_or(0.0, |b| b.at.as_secs_f64())
        )),
        BurstOutcome::NotStarted => r
            .notes
            .push("no burst: the run stopped before the burst time".into()),
        BurstOutcome::Ran(b) => r = burst_ran(r, p, out, b),
        BurstOutcome::Disabled => {}
    }
    r
}

/// A burst that ran: its processes, messages and CPU, and H and E - H
/// where it was released.
fn burst_ran(r: Record, p: &Params, out: &RunOutput, b: &BurstOutput) -> Record {
    let mut r = r
        .param(param::BURST_PID, b.pid)
        .param(param::BURST_PROCESSES, b.processes)
        .param(param::BURST_FAILED, b.failed)
        .param(param::BURST_MESSAGES_SENT, b.messages_sent)
        .param(param::BURST_MESSAGES_RECEIVED, b.messages_received)
        .param(param::BURST_COMPLETE, b.complete)
        .param(param::BURST_FORKED_AT_S, b.forked_at_s)
        .param(param::BURST_ENDED_AT_S, b.ended_at_s)
        .metric(
            metric::BURST_CPU_S,
            b.cpu.user_s + b.cpu.system_s,
            "s",
            Better::Lower,
        );
    if let Some(go) = b.go_at_s {
        r = r.param(param::BURST_GO_AT_S, go);
    }
    if let (Some(h), Some(go)) = (b.wall_s, b.go_at_s) {
        let within = burst_within(go, h, out.elapsed_s);
        r = r
            .metric(metric::BURST_S, h, "s", Better::Lower)
            .metric(metric::BURST_WITHIN_TASKS_S, within, "s", Better::Lower)
            .metric(
                metric::ELAPSED_MINUS_BURST_S,
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
    r
}

/// How the run ended, where it did not end well.
fn run_end_notes(r: &mut Record, p: &Params, out: &RunOutput, finished: usize) {
    if let Some(sig) = out.interrupted {
        r.params
            .insert(param::INTERRUPTED_BY_SIGNAL.into(), sig.into());
        r.notes.push(format!(
            "INTERRUPTED by signal {sig}: partial figures, {finished} of {} tasks finished",
            p.tasks
        ));
        r.conditions.push(Condition::CutBySignal { signal: sig });
    }
    if let Some(why) = &out.failed {
        r.notes.push(format!(
            "FAILED: {why}; partial figures, {finished} of {} tasks finished",
            p.tasks
        ));
        r.conditions
            .push(Condition::PartFailed { why: why.clone() });
    }
    if out.killed {
        r.notes
            .push("a process did not stop in time and was killed".into());
    }
}

/// Runnable tasks on each node over the run, thinned to
/// [`SERIES_POINTS`].
fn runnable_series(out: &RunOutput) -> Option<Series> {
    let points = residency::downsample(&out.series, SERIES_POINTS);
    if points.is_empty() {
        return None;
    }
    Some(Series {
        name: crate::results::names::sched::RUNNABLE_SERIES.into(),
        x_label: "run time".into(),
        x_unit: "s".into(),
        y_label: "tasks".into(),
        y_unit: "count".into(),
        x: points.iter().map(|p| p.0).collect(),
        lines: out
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| Line {
                label: format!("node {n}"),
                y: points
                    .iter()
                    .map(|p| p.1.get(i).copied().unwrap_or(0.0))
                    .collect(),
            })
            .collect(),
    })
}

/// The part of a burst released at `go` and lasting `h` that falls within
/// the tasks' run `0..elapsed`: what E - H should take away, as the
/// original assumed the burst ran entirely while the tasks did.
pub(crate) fn burst_within(go: f64, h: f64, elapsed: f64) -> f64 {
    if go + h <= elapsed {
        // Exactly H, not H through a rounding subtraction.
        h
    } else {
        (elapsed - go).clamp(0.0, h)
    }
}

#[cfg(test)]
#[path = "records_tests.rs"]
pub(crate) mod tests;
