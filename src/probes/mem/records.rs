//! A `mem` run as a results-document record: what was asked (params),
//! perf's metrics and what numabench adds, the raw per-task samples, the
//! tasks-per-node series, where the memory was, and the notes.

use super::Summary;
use crate::ids::CpuSet;
use crate::probes::workload::areas::{AreaKey, area_name, areas, intended};
use crate::probes::workload::convergence::Change;
use crate::probes::workload::layout::AreaPlacement;
use crate::probes::workload::memwatch::{self, memory_lines};
use crate::probes::workload::outcome::RunOutput;
use crate::probes::workload::params::Params;
use crate::results::names::mem::{area, metric as mm, param as mp, sample, series};
use crate::results::names::{metric, param, probe};
use crate::results::{Better, Line, Placement, Record, Series};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The run as a results-document record.
pub(crate) fn record(
    name: &str,
    command: &str,
    p: &Params,
    out: &RunOutput,
    s: &Summary,
) -> Record {
    let mut r = asked(Record::new(probe::MEM, name), p, command);
    r = perf_metrics(r, s);
    r = added_metrics(r, p, out, s);
    add_samples(&mut r, out);
    add_series(&mut r, out);
    r = add_memory(r, out);
    r = r.param(mp::MEMORY_PLACEMENT, Value::Array(placement_detail(p, out)));
    r.placement = Some(placement(p, out));
    add_notes(&mut r, p, out);
    r
}

/// A suite test this machine cannot run, and why.
pub(crate) fn skipped(name: &str, command: &str, why: &str, notes: &[String]) -> Record {
    let mut r = Record::new(probe::MEM, name)
        .param(param::SKIPPED, true)
        .param(param::COMMAND, command);
    r.notes.push(format!("skipped: {why}"));
    r.notes.extend(notes.iter().cloned());
    r
}

/// A suite test that could not start.
pub(crate) fn failed(name: &str, command: &str, why: &str) -> Record {
    let mut r = Record::new(probe::MEM, name).param(param::COMMAND, command);
    r.notes.push(format!("failed: {why}"));
    r
}

/// A suite test's record: the run's, named for its test, with the
/// suite's notes on how it was mapped onto this machine.
pub(crate) fn suite_test(r: Record, test: &str, notes: &[String]) -> Record {
    let mut r = r.param(param::TEST, test);
    r.notes.extend(notes.iter().cloned());
    r
}

/// The options, under their meaning.
fn asked(r: Record, p: &Params, command: &str) -> Record {
    let loops = if p.nr_loops == u32::MAX {
        Value::Null
    } else {
        json!(p.nr_loops)
    };
    r.param(param::PROCESSES, p.nr_proc)
        .param(param::THREADS, p.nr_threads)
        .param(param::TASKS, p.nr_tasks)
        .param(param::SIZE_BYTES, p.total_bytes())
        .param(mp::GLOBAL_BYTES, p.bytes_global)
        .param(mp::PROCESS_BYTES, p.bytes_process)
        .param(mp::PROCESS_LOCKED_BYTES, p.bytes_process_locked)
        .param(mp::THREAD_BYTES, p.bytes_thread)
        .param(mp::LOOPS, loops)
        .param(mp::SECS, p.nr_secs)
        .param(mp::ACCESS, p.access())
        .param(mp::RANDOM_WALK, p.data_rand_walk)
        .param(mp::BACKWARDS, p.data_backwards)
        .param(mp::INIT_RANDOM, p.init_random)
        .param(mp::INIT_CPU0, p.init_cpu0)
        .param(mp::THP, p.thp)
        .param(mp::SERIALIZE_STARTUP, p.serialize_startup)
        .param(mp::SLEEP_US, p.sleep_usecs)
        .param(mp::PERTURB_SECS, p.perturb_secs)
        .param(
            mp::CPUS,
            p.cpu_list.clone().map_or(Value::Null, Value::from),
        )
        .param(
            mp::MEMNODES,
            p.node_list.clone().map_or(Value::Null, Value::from),
        )
        .param(param::COMMAND, command)
}

/// perf's nine figures.
fn perf_metrics(r: Record, s: &Summary) -> Record {
    use Better::{Higher, Lower};
    r.metric(mm::RUNTIME_MAX_S, s.runtime_max_s, "s", Lower)
        .metric(mm::RUNTIME_MIN_S, s.runtime_min_s, "s", Lower)
        .metric(mm::RUNTIME_AVG_S, s.runtime_avg_s, "s", Lower)
        .metric(mm::SPREAD_RUNTIME_PCT, s.spread_pct, "%", Lower)
        .metric(mm::DATA_PER_THREAD_GB, s.data_per_thread_gb, "GB", Higher)
        .metric(mm::DATA_TOTAL_GB, s.data_total_gb, "GB", Higher)
        .metric(
            mm::RUNTIME_PER_BYTE_PER_THREAD_NS,
            s.runtime_per_byte_ns,
            "ns",
            Lower,
        )
        .metric(mm::THREAD_SPEED_GB_S, s.thread_speed_gb_s, "GB/s", Higher)
        .metric(mm::TOTAL_SPEED_GB_S, s.total_speed_gb_s, "GB/s", Higher)
}

/// CPU time, convergence, startup and the NUMA-balancing counters.
fn added_metrics(mut r: Record, p: &Params, out: &RunOutput, s: &Summary) -> Record {
    r = r
        .metric(metric::USER_TIME_S, out.cpu.user_s, "s", Better::Lower)
        .metric(metric::SYSTEM_TIME_S, out.cpu.system_s, "s", Better::Lower);
    if let Some(c) = s.convergence_latency_s {
        r = r.metric(mm::CONVERGENCE_LATENCY_S, c, "s", Better::Lower);
    }
    if p.show_convergence || p.measure_convergence {
        r = r.param(mp::CONVERGED, out.tracker.since_s.is_some());
        if let Some(t) = out.tracker.since_s {
            r = r.metric(mm::CONVERGED_AT_S, t, "s", Better::Lower);
        }
    }
    if let Some(st) = out.startup_s {
        r = r.metric(mm::STARTUP_S, st, "s", Better::Lower);
    }
    for (k, v) in &out.numa_balancing {
        r = r.metric(k, *v as f64, "count", Better::Lower);
    }
    r
}

/// Each task's runtime, data and loops.
fn add_samples(r: &mut Record, out: &RunOutput) {
    r.samples.insert(
        sample::TASK_RUNTIME_S.into(),
        out.task_runtime_ns
            .iter()
            .map(|&n| n as f64 / 1e9)
            .collect(),
    );
    r.samples.insert(
        sample::TASK_DATA_GB.into(),
        out.task_bytes.iter().map(|&b| b as f64 / 1e9).collect(),
    );
    r.samples.insert(
        sample::TASK_LOOPS.into(),
        out.task_loops.iter().map(|&l| l as f64).collect(),
    );
}

/// Tasks per node, once a second.
fn add_series(r: &mut Record, out: &RunOutput) {
    if out.samples.is_empty() {
        return;
    }
    r.series.push(Series {
        name: series::TASKS_PER_NODE.into(),
        x_label: "run time".into(),
        x_unit: "s".into(),
        y_label: "tasks".into(),
        y_unit: "count".into(),
        x: out.samples.iter().map(|(t, _)| *t).collect(),
        lines: out
            .sample_nodes
            .iter()
            .enumerate()
            .map(|(i, n)| Line {
                label: format!("node {n}"),
                y: out.samples.iter().map(|(_, v)| v[i] as f64).collect(),
            })
            .collect(),
    });
}

/// With `--memory-per-node`: MiB per node once a second, when the memory
/// followed the tasks, and how the looks were taken.
fn add_memory(mut r: Record, out: &RunOutput) -> Record {
    let Some(m) = &out.memory else {
        return r;
    };
    r.series.push(Series {
        name: series::MEMORY_PER_NODE.into(),
        x_label: "run time".into(),
        x_unit: "s".into(),
        y_label: "memory".into(),
        y_unit: "MiB".into(),
        x: m.looks.iter().map(|l| l.t).collect(),
        lines: memory_lines(&m.nodes, &m.looks),
    });
    if let Some(t) = m.followed_at_s {
        r = r.metric(mm::MEMORY_CONVERGED_AT_S, t, "s", Better::Lower);
    }
    r.notes.push(format!(
        "memory per node: {} looks, one a second ({}, {:.3} s of CPU time); the memory side of convergence is each node's share of the memory within {} points of its share of the tasks, to the end; -G memory is shared and not counted",
        m.looks.len(),
        m.method,
        m.cpu_s,
        memwatch::TOLERANCE_PTS
    ));
    if let Some(f) = &m.fallback {
        r.notes.push(format!("memory per node: {f}"));
    }
    r
}

/// Each area's pages as checked, and the node it was bound to.
fn placement_detail(p: &Params, out: &RunOutput) -> Vec<Value> {
    areas(out)
        .into_iter()
        .map(|(k, a)| area_detail(p, k, a))
        .collect()
}

fn area_detail(p: &Params, k: AreaKey, a: &AreaPlacement) -> Value {
    let target = intended(p, k);
    let by_node: serde_json::Map<String, Value> = a
        .pages_by_node
        .iter()
        .map(|(n, c)| (n.to_string(), json!(c)))
        .collect();
    let mut m = serde_json::Map::new();
    m.insert(area::AREA.into(), json!(area_name(p, k)));
    m.insert(area::BYTES.into(), json!(a.bytes));
    m.insert(area::PAGES_TOTAL.into(), json!(a.pages_total));
    m.insert(area::PAGES_CHECKED.into(), json!(a.pages_checked));
    m.insert(area::PAGES_NOT_PRESENT.into(), json!(a.not_present));
    m.insert(area::PAGES_BY_NODE.into(), Value::Object(by_node));
    m.insert(area::BOUND_NODE.into(), json!(target));
    m.insert(
        area::ON_BOUND_NODE_PCT.into(),
        json!(target.and_then(|n| a.pct_on(n))),
    );
    m.insert(area::HUGE_BYTES.into(), json!(a.huge_bytes));
    Value::Object(m)
}

/// Where the memory is: estimated pages per node over every area, each
/// area's sample scaled to its size; the share on the bound nodes; the
/// THP share; the CPUs the tasks were seen on.
fn placement(p: &Params, out: &RunOutput) -> Placement {
    let mut by_node: BTreeMap<String, u64> = BTreeMap::new();
    let (mut huge, mut bytes) = (0u64, 0u64);
    let (mut on, mut bound) = (0f64, 0f64);
    for (k, a) in areas(out) {
        let scale = a.pages_total as f64 / a.pages_checked.max(1) as f64;
        for (n, c) in &a.pages_by_node {
            *by_node.entry(n.to_string()).or_insert(0) += (*c as f64 * scale).round() as u64;
        }
        huge += a.huge_bytes;
        bytes += a.bytes;
        if let Some(n) = intended(p, k) {
            let present: u64 = a.pages_by_node.values().sum();
            on += a.pages_by_node.get(&n).copied().unwrap_or(0) as f64 * scale;
            bound += present as f64 * scale;
        }
    }
    let mut cpus_seen = CpuSet::new();
    for c in out.task_cpus.iter().flatten() {
        cpus_seen.insert(*c);
    }
    Placement {
        pages_by_node: by_node,
        on_target_pct: (bound > 0.0).then(|| on * 100.0 / bound),
        huge_pct: if bytes > 0 {
            huge as f64 * 100.0 / bytes as f64
        } else {
            0.0
        },
        cpus_seen: cpus_seen.iter().collect(),
    }
}

/// -Z, perf's binding notes, convergence events, and an early end.
fn add_notes(r: &mut Record, p: &Params, out: &RunOutput) {
    if p.data_zero_memset {
        r.notes
            .push("-Z: the data is cleared with glibc memset (bzero), not read and written".into());
    }
    for n in p.binding_notes() {
        r.notes.push(n.clone());
    }
    for (t, c) in &out.tracker.events {
        r.notes.push(match c {
            Change::Converged => format!("converged at {t:.1} s"),
            _ => format!("de-converged at {t:.1} s"),
        });
    }
    if let Some(sig) = out.interrupted {
        r.notes.push(format!(
            "interrupted by signal {sig}{}: partial results",
            if out.killed { ", tasks killed" } else { "" }
        ));
    } else if let Some(why) = &out.failed {
        r.notes.push(format!("failed: {why}; partial results"));
    }
}
