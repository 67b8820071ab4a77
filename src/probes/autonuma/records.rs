//! An AutoNUMA run as records of the results document: one per run (its
//! figures, memory and threads per node over time, how the memory was
//! found) and one per test (average and spread of its runs), and a run's
//! looks as the CSV `--out` writes beside its chart.

use super::bench::{Plan, Test, Work};
use super::bind::{Bind, Position};
use super::watch::{Method, WALK_PAGES_PER_QUERY};
use super::{Outcome, Settings};
use crate::results::names::autonuma::{metric as am, param as ap, series as an};
use crate::results::names::{metric, param, probe};
use crate::results::{Better, Condition, Line, Placement, Record, Series};
use crate::stats;
use serde_json::json;
use std::fmt::Write;

pub(crate) const MIB: f64 = 1048576.0;

/// How the method note of every run record begins.
const METHOD_NOTE_START: &str = "memory per node";

/// File name stem of a run's chart and series.
pub(crate) fn file_stem(plan: &Plan, run: usize) -> String {
    format!("{}-run{run}", plan.label())
}

fn over_time(name: &str, y_label: &str, y_unit: &str, o: &Outcome, lines: Vec<Line>) -> Series {
    Series {
        name: name.into(),
        x_label: "time".into(),
        x_unit: "s".into(),
        y_label: y_label.into(),
        y_unit: y_unit.into(),
        x: o.looks.iter().map(|l| l.t).collect(),
        lines,
    }
}

/// Memory per node over time, MiB.
pub(crate) fn memory_series(o: &Outcome) -> Series {
    let lines = memory_lines(&o.mem_nodes, &o.looks);
    over_time(an::MEMORY_PER_NODE, "memory", "MiB", o, lines)
}

pub(crate) use crate::probes::workload::memwatch::memory_lines;

/// Worker threads per node over time.
pub(crate) fn threads_series(o: &Outcome) -> Series {
    let lines = o
        .cpu_nodes
        .iter()
        .map(|n| Line {
            label: format!("node {n}"),
            y: o.looks
                .iter()
                .map(|l| l.threads.get(n).copied().unwrap_or(0) as f64)
                .collect(),
        })
        .collect();
    over_time(an::THREADS_PER_NODE, "threads", "count", o, lines)
}

fn doubled_series(o: &Outcome) -> Series {
    let lines = vec![Line {
        label: "cores with 2+ threads".into(),
        y: o.looks.iter().map(|l| l.doubled_cores as f64).collect(),
    }];
    over_time(an::CORES_WITH_TWO_THREADS, "cores", "count", o, lines)
}

/// The record of run `run` (from 1) of `plan`.
pub(crate) fn record(plan: &Plan, run: usize, o: &Outcome, settings: &Settings) -> Record {
    let r = Record::new(probe::AUTONUMA, &format!("{} run {run}", plan.label()));
    let r = run_params(r, plan, run, o, settings);
    let mut r = run_metrics(r, o);
    r.series.push(memory_series(o));
    r.series.push(threads_series(o));
    if plan.test == Test::Numa02Smt {
        r = smt_figures(r, o);
    }
    if let Some(last) = o.looks.last() {
        r.placement = Some(Placement {
            pages_by_node: last
                .pages
                .iter()
                .map(|(n, p)| (n.to_string(), *p))
                .collect(),
            on_target_pct: o.bound_pct,
            huge_pct: 0.0,
            cpus_seen: o.cpus_seen.clone(),
        });
    }
    r.notes.extend(plan.notes.iter().cloned());
    r.notes.push(method_note(o, settings));
    r.notes.extend(checks(plan, o));
    r.conditions.extend(plan.conditions.iter().cloned());
    r.conditions.extend(conditions(o, settings));
    r
}

/// What the method note and the checks say of the run, as data: sampling
/// that gave way to numa_maps, a stop by a signal, a task that died.
fn conditions(o: &Outcome, settings: &Settings) -> Vec<Condition> {
    let mut out = Vec::new();
    if let (Method::Sampled { .. }, Some(why)) = (settings.method, &o.method_fallback) {
        out.push(Condition::FallbackMethod { why: why.clone() });
    }
    if let Some(signal) = o.interrupted {
        out.push(Condition::CutBySignal { signal });
    }
    if let Some(why) = &o.failed {
        out.push(Condition::PartFailed { why: why.clone() });
    }
    out
}

/// What was asked and how the run was watched.
fn run_params(r: Record, plan: &Plan, run: usize, o: &Outcome, settings: &Settings) -> Record {
    let s = &plan.shape;
    let memory = if s.per_thread {
        ap::MEMORY_THREAD
    } else {
        ap::MEMORY_PROCESS
    };
    let mut r = r
        .param(param::TEST, plan.test.name())
        .param(ap::RUN, run)
        .param(param::PROCESSES, s.processes)
        .param(param::THREADS, s.threads)
        .param(param::SIZE_BYTES, s.mem_bytes)
        .param(ap::SEED_SIZE_BYTES, plan.seed_mem_bytes)
        .param(ap::MEMORY, memory)
        .param(ap::NR_CPUS, plan.nr_cpus)
        .param(ap::START_NODE, plan.start_node)
        .param(ap::PLAN_NOTES, plan.notes.len())
        .param(ap::CPU_NODES, o.cpu_nodes.clone())
        .param(ap::INTERVAL_S, settings.interval.as_secs_f64())
        .param(ap::TOLERANCE_PCT, settings.tolerance_pct)
        .param(ap::CONVERGED, o.convergence_s.is_some())
        .param(ap::LOOKS, o.looks.len())
        .param(ap::LOOKS_DROPPED, o.looks_dropped)
        .param(ap::UNREADABLE_FILES, o.unreadable)
        .param(ap::LOOPS_MIN, o.loops_min)
        .param(ap::LOOPS_MAX, o.loops_max)
        .param(ap::LOOK_METHOD, o.method.name())
        .param(
            ap::FINAL_SHARE_PCT,
            o.final_share_pct()
                .iter()
                .map(|(n, p)| (n.to_string(), json!(p)))
                .collect::<serde_json::Map<_, _>>(),
        );
    r = match plan.work {
        Work::Loops(l) => r.param(ap::LOOPS, l),
        Work::Secs(secs) => r.param(ap::SECS, secs),
    };
    if plan.bind != Bind::Free {
        r = r
            .param(ap::BIND, plan.bind.name())
            .param(ap::TASKS_OFF_CPUS, o.tasks_off_cpus);
    }
    r = r
        .param(ap::SAMPLED_LOOKS, o.sampled_looks)
        .param(ap::EXACT_LOOKS, o.exact_looks);
    if let Method::Sampled { max_pages } = settings.method {
        r = r.param(ap::SAMPLE_PAGES, max_pages);
    }
    if o.sampled_looks > 0 {
        r = r
            .param(ap::SAMPLED_PAGES_MAX, o.sampled_pages_max)
            .param(ap::SAMPLE_STRIDE_MAX, o.stride_max)
            .param(ap::CARRIED_PCT_MAX, o.carried_pct_max);
    }
    // Only numa_maps shows policies: no list is no evidence of none.
    if o.exact_looks > 0 {
        r = r.param(
            ap::POLICIES_SEEN,
            o.policies.iter().cloned().collect::<Vec<_>>(),
        );
    }
    r
}

/// What the run measured: time, CPU time, the looks' cost, the work done,
/// convergence and the kernel's NUMA balancing counters.
fn run_metrics(r: Record, o: &Outcome) -> Record {
    let mut r = r
        .metric(metric::RUNTIME_S, o.runtime_s, "s", Better::Lower)
        .metric(am::USER_S, o.cpu.user_s, "s", Better::Lower)
        .metric(am::SYSTEM_S, o.cpu.system_s, "s", Better::Lower)
        .metric(
            am::SAMPLING_OVERHEAD_PCT,
            o.sampling_overhead_pct(),
            "%",
            Better::Lower,
        )
        .metric(am::DATA_GB, o.data_bytes as f64 / 1e9, "GB", Better::Higher);
    if o.runtime_s > 0.0 {
        r = r.metric(
            metric::BANDWIDTH_MB_S,
            o.data_bytes as f64 / 1e6 / o.runtime_s,
            "MB/s",
            Better::Higher,
        );
    }
    if let Some(c) = o.convergence_s {
        r = r.metric(metric::CONVERGENCE_S, c, "s", Better::Lower);
    }
    for (k, v) in &o.numa_balancing {
        r = r.metric(k, *v as f64, "count", Better::Lower);
    }
    r
}

/// numa02_SMT's question, whether the kernel kept one thread per core, as
/// figures and a series.
fn smt_figures(r: Record, o: &Outcome) -> Record {
    let end = o.looks.last().map_or(0, |l| l.doubled_cores);
    let max = o.looks.iter().map(|l| l.doubled_cores).max().unwrap_or(0);
    let mut r = r
        .metric(
            am::CORES_WITH_TWO_THREADS_END,
            end as f64,
            "count",
            Better::Lower,
        )
        .metric(
            am::CORES_WITH_TWO_THREADS_MAX,
            max as f64,
            "count",
            Better::Lower,
        );
    r.series.push(doubled_series(o));
    r
}

/// How the run's memory figures were found.
pub(crate) fn method_note(o: &Outcome, settings: &Settings) -> String {
    let mut note = method_words(o, settings);
    if o.carried_pct_max > 0.0 {
        let _ = write!(
            note,
            "; at most {:.1}% of a look's memory was hidden from move_pages at that look (pages marked for a NUMA-balancing hinting fault on some kernels, or being migrated) and counted on the node it was last seen on",
            o.carried_pct_max
        );
    }
    note
}

fn method_words(o: &Outcome, settings: &Settings) -> String {
    let Method::Sampled { max_pages } = settings.method else {
        return format!(
            "{METHOD_NOTE_START} and memory policies from numa_maps at each look (--exact)"
        );
    };
    if let Some(why) = &o.method_fallback {
        return format!("{METHOD_NOTE_START} sampled until {why}");
    }
    if o.sampled_looks == 0 {
        return format!(
            "{METHOD_NOTE_START} and memory policies from numa_maps at each look: the test's mappings held no more than {} pages, which numa_maps walks for less CPU time than {max_pages} sampled pages take",
            max_pages * WALK_PAGES_PER_QUERY
        );
    }
    let policies = if o.exact_looks == 0 {
        "; memory policies not read (--exact counts every page from numa_maps and reads them)"
    } else {
        ""
    };
    format!(
        "{METHOD_NOTE_START} estimated at {} of {} looks from the node of at most {max_pages} pages (move_pages; up to {} queried, each standing for up to {} pages){policies}",
        o.sampled_looks,
        o.looks.len(),
        o.sampled_pages_max,
        o.stride_max
    )
}

/// What the reader should know about how this run's figures came about.
pub(crate) fn checks(plan: &Plan, o: &Outcome) -> Vec<String> {
    let mut notes = Vec::new();
    // A baseline's memory starts where it is bound, not on the start node.
    if let Some(first) = o.looks.first().filter(|_| plan.bind == Bind::Free) {
        let total: u64 = first.mem.values().sum();
        let on_start = first.mem.get(&plan.start_node).copied().unwrap_or(0);
        if total > 0 && (on_start as f64) < 0.99 * total as f64 {
            notes.push(format!(
                "at the first look only {:.1}% of the memory was on node {}, the start node",
                on_start as f64 * 100.0 / total as f64,
                plan.start_node
            ));
        }
    }
    let foreign: Vec<&str> = o
        .policies
        .iter()
        .map(String::as_str)
        .filter(|p| *p != "default")
        .collect();
    if !foreign.is_empty() {
        notes.push(format!(
            "the test's memory carried memory policies other than default ({}); NUMA balancing leaves bound ranges alone",
            foreign.join(", ")
        ));
    }
    if o.looks.is_empty() {
        notes.push("no look was taken: the run ended before the first".into());
    }
    if let Some(pct) = o.bound_pct.filter(|&p| p < 99.0) {
        notes.push(format!(
            "only {pct:.1}% of the bound memory was on the node it was bound to at the end"
        ));
    }
    if o.tasks_off_cpus > 0 {
        notes.push(format!(
            "{} task(s) were last seen outside the CPUs they were bound to",
            o.tasks_off_cpus
        ));
    }
    if let Some(sig) = o.interrupted {
        notes.push(format!("interrupted by signal {sig}: the run is partial"));
    }
    if let Some(why) = &o.failed {
        notes.push(format!("failed: {why}; the run is partial"));
    }
    notes
}

/// A test's runs together: average and spread of the seconds, as the
/// slides' tables, and where they lie between the baselines.
pub(crate) fn summary_record(
    plan: &Plan,
    outcomes: &[Outcome],
    position: Option<&Position>,
) -> Record {
    let times: Vec<f64> = outcomes.iter().map(|o| o.runtime_s).collect();
    let conv: Vec<f64> = outcomes.iter().filter_map(|o| o.convergence_s).collect();
    let mut r = Record::new(probe::AUTONUMA, &plan.label())
        .param(param::TEST, plan.test.name())
        .param(ap::RUNS, outcomes.len())
        .param(ap::CONVERGED_RUNS, conv.len())
        .param(param::PROCESSES, plan.shape.processes)
        .param(param::THREADS, plan.shape.threads)
        .param(param::SIZE_BYTES, plan.shape.mem_bytes)
        .metric(metric::RUNTIME_S, stats::mean(&times), "s", Better::Lower)
        .metric(
            am::RUNTIME_STDDEV_S,
            stats::stddev(&times),
            "s",
            Better::Lower,
        );
    r.samples.insert(metric::RUNTIME_S.into(), times);
    if !conv.is_empty() {
        r = r.metric(
            am::CONVERGENCE_MEAN_S,
            stats::mean(&conv),
            "s",
            Better::Lower,
        );
        r.samples.insert(metric::CONVERGENCE_S.into(), conv);
    }
    if plan.bind != Bind::Free {
        r = r.param(ap::BIND, plan.bind.name());
    }
    if let Some(p) = position {
        r = r
            .param(
                ap::POSITION_BY,
                if p.by_rate { "gb_s" } else { metric::RUNTIME_S },
            )
            .param(ap::HARD_BIND_VALUE, p.hard)
            .param(ap::INVERSE_BIND_VALUE, p.inverse);
        if let Some(pct) = p.pct {
            r = r.metric(am::POSITION_PCT, pct, "%", Better::Higher);
        }
    }
    r
}

/// The run's looks as CSV: time, MiB per node, threads per node, cores
/// carrying two threads (every look has it, whatever the test).
pub(crate) fn looks_csv(o: &Outcome) -> String {
    let mut out = String::from("time_s");
    for n in &o.mem_nodes {
        let _ = write!(out, ",node{n}_mib");
    }
    for n in &o.cpu_nodes {
        let _ = write!(out, ",node{n}_threads");
    }
    out.push_str(",cores_with_two_threads\n");
    for l in &o.looks {
        let _ = write!(out, "{:.3}", l.t);
        for n in &o.mem_nodes {
            let _ = write!(
                out,
                ",{:.3}",
                l.mem.get(n).copied().unwrap_or(0) as f64 / MIB
            );
        }
        for n in &o.cpu_nodes {
            let _ = write!(out, ",{}", l.threads.get(n).copied().unwrap_or(0));
        }
        let _ = writeln!(out, ",{}", l.doubled_cores);
    }
    out
}

#[cfg(test)]
#[path = "records_tests.rs"]
mod tests;
