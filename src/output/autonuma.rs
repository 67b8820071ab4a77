//! `numabench autonuma` as text (per test a table of runs like the
//! benchmark's slides, then averages and spread), as records of the
//! results document, and as the convergence chart (SVG) and series (CSV)
//! of each run.

use super::svg::{self, Chart, Marker};
use crate::probes::autonuma::bench::{Plan, Test, Work};
use crate::probes::autonuma::watch::{Method, WALK_PAGES_PER_QUERY};
use crate::probes::autonuma::{Outcome, Settings};
use crate::probes::stats;
use crate::results::{Better, Line, Placement, Record, Series};
use crate::view::table::{Align, Table};
use serde_json::json;
use std::fmt::Write;

const MIB: f64 = 1048576.0;

fn nodes_list(ids: &[usize]) -> String {
    ids.iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What the whole command will do, before the first test.
pub fn header(
    nr_cpus: usize,
    cpu_nodes: &[usize],
    start_node: usize,
    balancing: Option<u32>,
    settings: &Settings,
) -> String {
    let balancing = match balancing {
        Some(0) => "off (kernel.numa_balancing = 0): nothing should move".to_string(),
        Some(v) => format!("on (kernel.numa_balancing = {v})"),
        None => "not available in this kernel".to_string(),
    };
    format!(
        "numabench autonuma: {nr_cpus} CPU(s) on node(s) {}; all memory starts on node {start_node}; NUMA balancing {balancing}\n\
         looked at every {} s: {}; converged = every node with usable CPUs holds total/{} of the memory within {}% of that share, from then to the end\n\n",
        nodes_list(cpu_nodes),
        settings.interval.as_secs_f64(),
        method_text(settings.method),
        cpu_nodes.len().max(1),
        settings.tolerance_pct,
    )
}

/// How the looks find the memory per node, in a few words.
fn method_text(method: Method) -> String {
    match method {
        Method::Sampled { max_pages } => format!(
            "memory per node from the node of {max_pages} sampled pages (move_pages), or of every page (numa_maps) up to {} pages",
            max_pages * WALK_PAGES_PER_QUERY
        ),
        Method::Exact => "memory per node counted page by page (numa_maps)".into(),
    }
}

/// The test's shape and work, and its notes.
pub fn intro(plan: &Plan) -> String {
    let s = &plan.shape;
    let mib = s.mem_bytes as f64 / MIB;
    let memory = if s.per_thread {
        format!(
            "M = {mib:.0} MiB per process split over its threads ({:.1} MiB each)",
            s.bytes_per_thread_pass() as f64 / MIB
        )
    } else {
        format!("M = {mib:.0} MiB per process shared by all its threads")
    };
    let work = match plan.work {
        Work::Loops(l) => format!("{l} memset pass(es) per thread"),
        Work::Secs(secs) => format!("memset passes for {secs} s"),
    };
    let mut out = format!(
        "{}: P = {} process(es) x T = {} thread(s), {memory}; {work}\n",
        plan.test.name(),
        s.processes,
        s.threads
    );
    for n in &plan.notes {
        let _ = writeln!(out, "  {n}");
    }
    out
}

fn secs(v: Option<f64>) -> String {
    v.map_or("never".into(), |t| format!("{t:.1} s"))
}

fn counter(o: &Outcome, key: &str) -> String {
    o.numa_balancing
        .get(key)
        .map_or("-".into(), |v| v.to_string())
}

/// The table of a test's runs, one row each.
pub fn runs_table(plan: &Plan, outcomes: &[Outcome], settings: &Settings) -> String {
    let mem_nodes = outcomes.first().map_or(Vec::new(), |o| o.mem_nodes.clone());
    let mut header: Vec<String> = vec![
        "run".into(),
        "seconds".into(),
        "GB/s".into(),
        "converged at".into(),
    ];
    header.extend(mem_nodes.iter().map(|n| format!("node {n} at end")));
    header.extend(
        [
            "pages migrated",
            "hint faults",
            "user s",
            "system s",
            "sampling",
        ]
        .map(String::from),
    );
    let h: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = Table::new(&h, &vec![Align::Right; h.len()]);
    for (i, o) in outcomes.iter().enumerate() {
        let share = o.final_share_pct();
        // A partial run's figures stay visible, never as a normal row.
        let run = match (&o.interrupted, &o.failed) {
            (Some(_), _) => format!("{} INTERRUPTED", i + 1),
            (None, Some(_)) => format!("{} FAILED", i + 1),
            _ => (i + 1).to_string(),
        };
        let mut row = vec![
            run,
            format!("{:.2}", o.runtime_s),
            format!("{:.1}", gb_s(o)),
            secs(o.convergence_s),
        ];
        row.extend(
            mem_nodes
                .iter()
                .map(|n| format!("{:.1}%", share.get(n).copied().unwrap_or(0.0))),
        );
        row.extend([
            counter(o, "numa_pages_migrated"),
            counter(o, "numa_hint_faults"),
            format!("{:.2}", o.cpu.user_s),
            format!("{:.2}", o.cpu.system_s),
            format!("{:.2}%", o.sampling_overhead_pct()),
        ]);
        t.row(row);
    }
    let mut out = String::new();
    for line in t.render().lines() {
        let _ = writeln!(out, "  {line}");
    }
    // The costliest run speaks for all: the runs look at the same memory.
    let costliest = outcomes.iter().enumerate().max_by(|a, b| {
        a.1.sampling_overhead_pct()
            .total_cmp(&b.1.sampling_overhead_pct())
    });
    if let Some((i, o)) = costliest
        && let Some(hint) = overhead_hint(o, settings)
    {
        let _ = writeln!(out, "  run {}: {hint}", i + 1);
    }
    if let Some(o) = outcomes.iter().max_by_key(|o| o.stride_max)
        && o.sampled_looks > 0
    {
        let _ = writeln!(
            out,
            "  memory per node estimated: up to {} pages queried per look, each standing for up to {} (--exact counts them all)",
            o.sampled_pages_max, o.stride_max
        );
    }
    for (i, o) in outcomes.iter().enumerate() {
        if let Some(why) = &o.method_fallback {
            let _ = writeln!(out, "  run {}: {why}", i + 1);
        }
    }
    if plan.test == Test::Numa02Smt {
        for (i, o) in outcomes.iter().enumerate() {
            let _ = writeln!(out, "  run {}: {}", i + 1, smt_line(o));
        }
    }
    // Averages cover whole runs only.
    let whole: Vec<&Outcome> = outcomes.iter().filter(|o| o.whole()).collect();
    if whole.is_empty() {
        let _ = writeln!(
            out,
            "  {}: no whole run, no average: the run above is partial\n",
            plan.test.name()
        );
        return out;
    }
    let _ = match plan.work {
        Work::Loops(_) => {
            let times: Vec<f64> = whole.iter().map(|o| o.runtime_s).collect();
            writeln!(
                out,
                "  {}: {:.2} s on average over {} run(s), stddev {:.2} s (lower is better)\n",
                plan.test.name(),
                stats::mean(&times),
                times.len(),
                stats::stddev(&times)
            )
        }
        // A fixed time makes the seconds equal: the work done is the result.
        Work::Secs(_) => {
            let rates: Vec<f64> = whole.iter().map(|o| gb_s(o)).collect();
            writeln!(
                out,
                "  {}: {:.1} GB/s cleared on average over {} run(s), stddev {:.1} GB/s (higher is better)\n",
                plan.test.name(),
                stats::mean(&rates),
                rates.len(),
                stats::stddev(&rates)
            )
        }
    };
    out
}

/// Bytes all threads cleared per second of the run, in 10^9.
fn gb_s(o: &Outcome) -> f64 {
    if o.runtime_s > 0.0 {
        o.data_bytes as f64 / 1e9 / o.runtime_s
    } else {
        0.0
    }
}

/// Share of the run's CPU time the looks may take before the text says how
/// to lower it.
pub const OVERHEAD_TARGET_PCT: f64 = 1.0;

/// What a look cost and the interval that would have kept the looks under
/// [`OVERHEAD_TARGET_PCT`], when they took more. An exact look walks the
/// page tables of all the test's memory, so its cost grows with the memory;
/// a sampled look's grows with `--sample-pages`. The share shrinks with the
/// CPUs at work.
pub fn overhead_hint(o: &Outcome, settings: &Settings) -> Option<String> {
    let pct = o.sampling_overhead_pct();
    if pct <= OVERHEAD_TARGET_PCT || o.looks.is_empty() {
        return None;
    }
    let per_look_ms = o.sampling_cpu_s / o.looks.len() as f64 * 1000.0;
    let wider = (settings.interval.as_secs_f64() * pct / OVERHEAD_TARGET_PCT * 2.0).ceil() / 2.0;
    let other = match o.method {
        Method::Sampled { .. } => "fewer --sample-pages",
        Method::Exact => "sampling (no --exact)",
    };
    Some(format!(
        "the looks took {pct:.2}% of the run's CPU time ({per_look_ms:.1} ms each, above the {OVERHEAD_TARGET_PCT}% aimed at); --interval {wider} or {other} would keep them under it"
    ))
}

/// numa02_SMT's question: did the kernel keep one thread per core?
fn smt_line(o: &Outcome) -> String {
    let end = o.looks.last().map_or(0, |l| l.doubled_cores);
    let max = o.looks.iter().map(|l| l.doubled_cores).max().unwrap_or(0);
    format!(
        "cores carrying two of the test's threads: {end} at the last look, at most {max} (0 = one thread per physical core, as the kernel should do)"
    )
}

/// The slides' table: per test its runs, average and stddev of seconds,
/// and how its runs converged.
pub fn summary(results: &[(Plan, Vec<Outcome>)]) -> String {
    let mut t = Table::new(
        &["test", "runs", "average s", "stddev s", "GB/s", "converged"],
        &[
            Align::Left,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Left,
        ],
    );
    for (plan, all) in results {
        // Partial runs (stopped, failed) are left out of every average.
        let outs: Vec<&Outcome> = all.iter().filter(|o| o.whole()).collect();
        let partial = all.len() - outs.len();
        if outs.is_empty() {
            if partial > 0 {
                t.row(vec![
                    plan.test.name().into(),
                    format!("0 ({partial} partial)"),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                ]);
            }
            continue;
        }
        let times: Vec<f64> = outs.iter().map(|o| o.runtime_s).collect();
        let conv: Vec<f64> = outs.iter().filter_map(|o| o.convergence_s).collect();
        let converged = if conv.is_empty() {
            format!("0 of {} runs", outs.len())
        } else {
            format!(
                "{} of {} runs, at {:.1} s on average",
                conv.len(),
                outs.len(),
                stats::mean(&conv)
            )
        };
        t.row(vec![
            plan.test.name().into(),
            if partial > 0 {
                format!("{} (+{partial} partial)", outs.len())
            } else {
                outs.len().to_string()
            },
            format!("{:.2}", stats::mean(&times)),
            format!("{:.2}", stats::stddev(&times)),
            format!(
                "{:.1}",
                stats::mean(&outs.iter().map(|o| gb_s(o)).collect::<Vec<_>>())
            ),
            converged,
        ]);
    }
    format!("Seconds per test (lower is better)\n{}", t.render())
}

/// File name stem of a run's chart and series.
pub fn file_stem(test: Test, run: usize) -> String {
    format!("{}-run{run}", test.name())
}

/// Memory per node over time, MiB.
pub fn memory_series(o: &Outcome) -> Series {
    Series {
        name: "memory_per_node".into(),
        x_label: "time".into(),
        x_unit: "s".into(),
        y_label: "memory".into(),
        y_unit: "MiB".into(),
        x: o.looks.iter().map(|l| l.t).collect(),
        lines: o
            .mem_nodes
            .iter()
            .map(|n| Line {
                label: format!("node {n}"),
                y: o.looks
                    .iter()
                    .map(|l| l.mem.get(n).copied().unwrap_or(0) as f64 / MIB)
                    .collect(),
            })
            .collect(),
    }
}

/// Worker threads per node over time.
pub fn threads_series(o: &Outcome) -> Series {
    Series {
        name: "threads_per_node".into(),
        x_label: "time".into(),
        x_unit: "s".into(),
        y_label: "threads".into(),
        y_unit: "count".into(),
        x: o.looks.iter().map(|l| l.t).collect(),
        lines: o
            .cpu_nodes
            .iter()
            .map(|n| Line {
                label: format!("node {n}"),
                y: o.looks
                    .iter()
                    .map(|l| l.threads.get(n).copied().unwrap_or(0) as f64)
                    .collect(),
            })
            .collect(),
    }
}

fn doubled_series(o: &Outcome) -> Series {
    Series {
        name: "cores_with_two_threads".into(),
        x_label: "time".into(),
        x_unit: "s".into(),
        y_label: "cores".into(),
        y_unit: "count".into(),
        x: o.looks.iter().map(|l| l.t).collect(),
        lines: vec![Line {
            label: "cores with 2+ threads".into(),
            y: o.looks.iter().map(|l| l.doubled_cores as f64).collect(),
        }],
    }
}

/// The record of run `run` (from 1) of `plan`.
pub fn record(plan: &Plan, run: usize, o: &Outcome, settings: &Settings) -> Record {
    let s = &plan.shape;
    let mut r = Record::new("autonuma", &format!("{} run {run}", plan.test.name()))
        .param("test", plan.test.name())
        .param("run", run)
        .param("processes", s.processes)
        .param("threads", s.threads)
        .param("size_bytes", s.mem_bytes)
        .param("seed_size_bytes", plan.seed_mem_bytes)
        .param("memory", if s.per_thread { "thread" } else { "process" })
        .param("nr_cpus", plan.nr_cpus)
        .param("start_node", plan.start_node)
        .param("cpu_nodes", o.cpu_nodes.clone())
        .param("interval_s", settings.interval.as_secs_f64())
        .param("tolerance_pct", settings.tolerance_pct)
        .param("converged", o.convergence_s.is_some())
        .param("looks", o.looks.len())
        .param("looks_dropped", o.looks_dropped)
        .param("unreadable_files", o.unreadable)
        .param("loops_min", o.loops_min)
        .param("loops_max", o.loops_max)
        .param("look_method", o.method.name())
        .param(
            "final_share_pct",
            o.final_share_pct()
                .iter()
                .map(|(n, p)| (n.to_string(), json!(p)))
                .collect::<serde_json::Map<_, _>>(),
        );
    r = match plan.work {
        Work::Loops(l) => r.param("loops", l),
        Work::Secs(secs) => r.param("secs", secs),
    };
    r = r
        .param("sampled_looks", o.sampled_looks)
        .param("exact_looks", o.exact_looks);
    if let Method::Sampled { max_pages } = settings.method {
        r = r.param("sample_pages", max_pages);
    }
    if o.sampled_looks > 0 {
        r = r
            .param("sampled_pages_max", o.sampled_pages_max)
            .param("sample_stride_max", o.stride_max)
            .param("carried_pct_max", o.carried_pct_max);
    }
    // Only numa_maps shows policies: no list is no evidence of none.
    if o.exact_looks > 0 {
        r = r.param(
            "policies_seen",
            o.policies.iter().cloned().collect::<Vec<_>>(),
        );
    }
    r = r
        .metric("runtime_s", o.runtime_s, "s", Better::Lower)
        .metric("user_s", o.cpu.user_s, "s", Better::Lower)
        .metric("system_s", o.cpu.system_s, "s", Better::Lower)
        .metric(
            "sampling_overhead_pct",
            o.sampling_overhead_pct(),
            "%",
            Better::Lower,
        )
        .metric("data_gb", o.data_bytes as f64 / 1e9, "GB", Better::Higher);
    if o.runtime_s > 0.0 {
        r = r.metric(
            "bandwidth_mb_s",
            o.data_bytes as f64 / 1e6 / o.runtime_s,
            "MB/s",
            Better::Higher,
        );
    }
    if let Some(c) = o.convergence_s {
        r = r.metric("convergence_s", c, "s", Better::Lower);
    }
    for (k, v) in &o.numa_balancing {
        r = r.metric(k, *v as f64, "count", Better::Lower);
    }
    r.series.push(memory_series(o));
    r.series.push(threads_series(o));
    if plan.test == Test::Numa02Smt {
        let end = o.looks.last().map_or(0, |l| l.doubled_cores);
        let max = o.looks.iter().map(|l| l.doubled_cores).max().unwrap_or(0);
        r = r
            .metric(
                "cores_with_two_threads_end",
                end as f64,
                "count",
                Better::Lower,
            )
            .metric(
                "cores_with_two_threads_max",
                max as f64,
                "count",
                Better::Lower,
            );
        r.series.push(doubled_series(o));
    }
    if let Some(last) = o.looks.last() {
        r.placement = Some(Placement {
            pages_by_node: last
                .pages
                .iter()
                .map(|(n, p)| (n.to_string(), *p))
                .collect(),
            on_target_pct: None,
            huge_pct: 0.0,
            cpus_seen: o.cpus_seen.clone(),
        });
    }
    r.notes.extend(plan.notes.iter().cloned());
    r.notes.push(method_note(o, settings));
    r.notes.extend(checks(plan, o));
    r
}

/// How the run's memory figures were found.
pub fn method_note(o: &Outcome, settings: &Settings) -> String {
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
        return "memory per node and memory policies from numa_maps at each look (--exact)".into();
    };
    if let Some(why) = &o.method_fallback {
        return format!("memory per node sampled until {why}");
    }
    if o.sampled_looks == 0 {
        return format!(
            "memory per node and memory policies from numa_maps at each look: the test's mappings held no more than {} pages, which numa_maps walks for less CPU time than {max_pages} sampled pages take",
            max_pages * WALK_PAGES_PER_QUERY
        );
    }
    let policies = if o.exact_looks == 0 {
        "; memory policies not read (--exact counts every page from numa_maps and reads them)"
    } else {
        ""
    };
    format!(
        "memory per node estimated at {} of {} looks from the node of at most {max_pages} pages (move_pages; up to {} queried, each standing for up to {} pages){policies}",
        o.sampled_looks,
        o.looks.len(),
        o.sampled_pages_max,
        o.stride_max
    )
}

/// What the reader should know about how this run's figures came about.
pub fn checks(plan: &Plan, o: &Outcome) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(first) = o.looks.first() {
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
    let foreign: Vec<&String> = o.policies.iter().filter(|p| *p != "default").collect();
    if !foreign.is_empty() {
        notes.push(format!(
            "the test's memory carried memory policies other than default ({}); NUMA balancing leaves bound ranges alone",
            foreign
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if o.looks.is_empty() {
        notes.push("no look was taken: the run ended before the first".into());
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
/// slides' tables.
pub fn summary_record(plan: &Plan, outcomes: &[Outcome]) -> Record {
    let times: Vec<f64> = outcomes.iter().map(|o| o.runtime_s).collect();
    let conv: Vec<f64> = outcomes.iter().filter_map(|o| o.convergence_s).collect();
    let mut r = Record::new("autonuma", plan.test.name())
        .param("test", plan.test.name())
        .param("runs", outcomes.len())
        .param("converged_runs", conv.len())
        .param("processes", plan.shape.processes)
        .param("threads", plan.shape.threads)
        .param("size_bytes", plan.shape.mem_bytes)
        .metric("runtime_s", stats::mean(&times), "s", Better::Lower)
        .metric(
            "runtime_stddev_s",
            stats::stddev(&times),
            "s",
            Better::Lower,
        );
    r.samples.insert("runtime_s".into(), times);
    if !conv.is_empty() {
        r = r.metric("convergence_mean_s", stats::mean(&conv), "s", Better::Lower);
        r.samples.insert("convergence_s".into(), conv);
    }
    r
}

/// The run's convergence chart: one line per node, MiB over seconds, the
/// convergence moment marked.
pub fn chart(plan: &Plan, run: usize, o: &Outcome) -> String {
    let series = memory_series(o);
    let mut markers = Vec::new();
    if let Some(c) = o.convergence_s {
        markers.push(Marker {
            x: c,
            label: format!("converged {c:.1} s"),
        });
    }
    svg::render(&Chart {
        title: format!("{} run {run}: memory per node", plan.test.name()),
        x_label: "time (s)".into(),
        y_label: "memory (MiB)".into(),
        lines: svg::lines_of(&series),
        markers,
        ..Default::default()
    })
}

/// The run's looks as CSV: time, MiB per node, threads per node, cores
/// carrying two threads.
pub fn csv(o: &Outcome) -> String {
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
mod tests {
    use super::*;
    use crate::probes::autonuma::bench::{Asked, plan};
    use crate::probes::autonuma::watch::Look;
    use std::time::Duration;

    fn outcome() -> Outcome {
        let look = |t: f64, a: u64, b: u64, ta: usize, tb: usize| Look {
            t,
            mem: [(0, a << 20), (1, b << 20)].into(),
            pages: [(0, a * 256), (1, b * 256)].into(),
            threads: [(0, ta), (1, tb)].into(),
            doubled_cores: 0,
            sampled_pages: 4096,
            stride: 16,
            carried_pages: 0,
            exact: false,
        };
        Outcome {
            runtime_s: 3.0,
            looks: vec![
                look(0.0, 100, 0, 2, 0),
                look(0.5, 70, 30, 1, 1),
                look(1.0, 52, 48, 1, 1),
            ],
            mem_nodes: vec![0, 1],
            cpu_nodes: vec![0, 1],
            convergence_s: Some(1.0),
            numa_balancing: [("numa_pages_migrated".to_string(), 12288)].into(),
            cpu: crate::probes::mem::sys::CpuTimes {
                user_s: 5.0,
                system_s: 1.0,
            },
            sampling_cpu_s: 0.03,
            sampled_pages_max: 4096,
            stride_max: 16,
            sampled_looks: 3,
            policies: ["default".to_string()].into(),
            cpus_seen: vec![0, 2],
            data_bytes: 6_000_000_000,
            loops_min: 3,
            loops_max: 3,
            ..Default::default()
        }
    }

    fn settings() -> Settings {
        Settings {
            interval: Duration::from_millis(500),
            tolerance_pct: 10.0,
            method: Method::default(),
        }
    }

    fn a_plan(test: Test) -> Plan {
        plan(test, 4, 0, 64 << 30, &Asked::default()).unwrap()
    }

    #[test]
    fn the_record_carries_series_metrics_and_marker_data() {
        let p = a_plan(Test::Numa02);
        let r = record(&p, 2, &outcome(), &settings());
        assert_eq!(r.name, "numa02 run 2");
        assert_eq!(r.metrics["convergence_s"].value, 1.0);
        assert_eq!(r.metrics["runtime_s"].value, 3.0);
        assert!((r.metrics["sampling_overhead_pct"].value - 0.5).abs() < 1e-9);
        assert_eq!(r.metrics["numa_pages_migrated"].value, 12288.0);
        assert_eq!(r.metrics["bandwidth_mb_s"].value, 2000.0);
        let mem = &r.series[0];
        assert_eq!(mem.x, [0.0, 0.5, 1.0]);
        assert_eq!(mem.lines[1].label, "node 1");
        assert_eq!(mem.lines[1].y, [0.0, 30.0, 48.0]);
        assert_eq!(r.series[1].lines[0].y, [2.0, 1.0, 1.0]);
        assert_eq!(r.series.len(), 2, "only numa02_SMT has the cores series");
        assert_eq!(r.params["final_share_pct"]["1"], 48.0);
        assert_eq!(r.placement.as_ref().unwrap().pages_by_node["0"], 52 * 256);
        assert!(r.notes.iter().any(|n| n.contains("loops")), "{:?}", r.notes);
        // Sampled looks: what was sampled, and no claim about policies.
        assert_eq!(r.params["look_method"], "sampled");
        assert_eq!(r.params["sample_pages"], 4096);
        assert_eq!(r.params["sampled_pages_max"], 4096);
        assert_eq!(r.params["sample_stride_max"], 16);
        assert_eq!(r.params["sampled_looks"], 3);
        assert_eq!(r.params["exact_looks"], 0);
        assert!(r.params.get("policies_seen").is_none(), "{:?}", r.params);
        assert!(
            r.notes
                .iter()
                .any(|n| n.contains("estimated at 3 of 3 looks")
                    && n.contains("up to 4096 queried, each standing for up to 16 pages")
                    && n.contains("policies not read")),
            "{:?}",
            r.notes
        );
        let exact = Settings {
            method: Method::Exact,
            ..settings()
        };
        let o = Outcome {
            method: Method::Exact,
            sampled_looks: 0,
            exact_looks: 3,
            ..outcome()
        };
        let r = record(&p, 2, &o, &exact);
        assert_eq!(r.params["look_method"], "exact");
        assert_eq!(r.params["policies_seen"], json!(["default"]));
        assert!(r.params.get("sample_pages").is_none(), "{:?}", r.params);
        assert!(
            r.params.get("sample_stride_max").is_none(),
            "{:?}",
            r.params
        );
        assert!(
            r.notes.iter().any(|n| n.contains("(--exact)")),
            "{:?}",
            r.notes
        );
        let smt = record(&a_plan(Test::Numa02Smt), 1, &outcome(), &settings());
        assert_eq!(smt.series[2].name, "cores_with_two_threads");
        assert_eq!(smt.metrics["cores_with_two_threads_max"].value, 0.0);
    }

    #[test]
    fn checks_flag_a_wrong_start_and_bound_memory() {
        let p = a_plan(Test::Numa02);
        let mut o = outcome();
        assert!(checks(&p, &o).is_empty(), "{:?}", checks(&p, &o));
        o.looks[0].mem = [(0, 50), (1, 50)].into();
        o.policies.insert("bind:0".into());
        let notes = checks(&p, &o);
        assert!(notes[0].contains("only 50.0%"), "{notes:?}");
        assert!(notes[1].contains("bind:0"), "{notes:?}");
    }

    #[test]
    fn chart_marks_convergence_and_csv_has_a_row_per_look() {
        let p = a_plan(Test::Numa01);
        let s = chart(&p, 1, &outcome());
        assert!(s.contains("converged 1.0 s"), "{s}");
        assert_eq!(s.matches("<polyline").count(), 2);
        assert!(s.contains("stroke-dasharray"));
        let mut never = outcome();
        never.convergence_s = None;
        assert!(!chart(&p, 1, &never).contains("converged"));
        let c = csv(&outcome());
        let lines: Vec<&str> = c.lines().collect();
        assert_eq!(
            lines[0],
            "time_s,node0_mib,node1_mib,node0_threads,node1_threads,cores_with_two_threads"
        );
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[2], "0.500,70.000,30.000,1,1,0");
        assert_eq!(
            file_stem(Test::Numa01ThreadAlloc, 3),
            "numa01_THREAD_ALLOC-run3"
        );
    }

    #[test]
    fn costly_looks_get_a_wider_interval_suggested() {
        // 0.03 s of 6 s is 0.5%: no hint.
        assert_eq!(overhead_hint(&outcome(), &settings()), None);
        // 0.18 s of 6 s is 3% over 3 looks: 60 ms each; 0.5 s x 3 = 1.5 s.
        let mut o = outcome();
        o.sampling_cpu_s = 0.18;
        let hint = overhead_hint(&o, &settings()).unwrap();
        assert!(
            hint.contains("3.00% of the run's CPU time (60.0 ms each"),
            "{hint}"
        );
        assert!(
            hint.contains("--interval 1.5 or fewer --sample-pages would"),
            "{hint}"
        );
        let text = runs_table(&a_plan(Test::Numa02), &[o.clone()], &settings());
        assert!(text.contains("run 1: the looks took 3.00%"), "{text}");
        o.method = Method::Exact;
        let hint = overhead_hint(&o, &settings()).unwrap();
        assert!(hint.contains("or sampling (no --exact)"), "{hint}");
    }

    #[test]
    fn the_text_says_how_memory_was_found() {
        let h = header(2, &[0], 0, Some(0), &settings());
        assert!(
            h.contains("looked at every 0.5 s: memory per node from the node of 4096 sampled pages (move_pages), or of every page (numa_maps) up to 16384 pages;"),
            "{h}"
        );
        let exact = Settings {
            method: Method::Exact,
            ..settings()
        };
        assert!(header(2, &[0], 0, Some(0), &exact).contains("page by page (numa_maps)"));
        let text = runs_table(&a_plan(Test::Numa02), &[outcome()], &settings());
        assert!(
            text.contains("up to 4096 pages queried per look, each standing for up to 16"),
            "{text}"
        );
        // Small memory, every page from numa_maps: nothing estimated, and
        // the policies were read.
        let mut all = outcome();
        (all.sampled_looks, all.exact_looks) = (0, 3);
        let text = runs_table(&a_plan(Test::Numa02), &[all.clone()], &settings());
        assert!(!text.contains("estimated"), "{text}");
        let note = method_note(&all, &settings());
        assert!(note.contains("and memory policies from numa_maps at each look: the test's mappings held no more than 16384 pages"), "{note}");
        assert!(!note.contains("hidden"), "{note}");
        let r = record(&a_plan(Test::Numa02), 1, &all, &settings());
        assert_eq!(r.params["policies_seen"], json!(["default"]));
        assert!(
            r.params.get("sample_stride_max").is_none(),
            "{:?}",
            r.params
        );
        all.carried_pct_max = 12.25;
        assert!(
            method_note(&all, &settings()).contains("at most 12.2% of a look's memory was hidden"),
            "{}",
            method_note(&all, &settings())
        );
        all.method_fallback = Some("move_pages(pid=7) failed: denied".into());
        let text = runs_table(&a_plan(Test::Numa02), &[all.clone()], &settings());
        assert!(text.contains("run 1: move_pages(pid=7) failed"), "{text}");
        assert!(method_note(&all, &settings()).starts_with("memory per node sampled until"));
    }

    #[test]
    fn a_partial_run_is_marked_and_never_averaged() {
        let p = a_plan(Test::Numa02);
        let whole = outcome();
        let mut cut = outcome();
        cut.runtime_s = 0.25;
        cut.interrupted = Some(2);
        let text = runs_table(&p, &[whole.clone(), cut.clone()], &settings());
        assert!(text.contains("2 INTERRUPTED"), "{text}");
        let avg = format!("{:.2} s on average over 1 run(s)", whole.runtime_s);
        assert!(text.contains(&avg), "{text}");
        let sum = summary(&[(p.clone(), vec![whole.clone(), cut.clone()])]);
        assert!(sum.contains("1 (+1 partial)"), "{sum}");
        assert!(sum.contains(&format!("{:.2}", whole.runtime_s)), "{sum}");
        let mut died = outcome();
        died.failed = Some("process 0 ended".into());
        let text = runs_table(&p, &[died.clone()], &settings());
        assert!(text.contains("1 FAILED"), "{text}");
        assert!(text.contains("no whole run, no average"), "{text}");
        let sum = summary(&[(p, vec![died])]);
        assert!(sum.contains("0 (1 partial)"), "{sum}");
    }

    #[test]
    fn tables_show_runs_average_and_spread() {
        let p = a_plan(Test::Numa02);
        let mut b = outcome();
        b.runtime_s = 5.0;
        b.convergence_s = None;
        let text = runs_table(&p, &[outcome(), b.clone()], &settings());
        assert!(text.contains("node 1 at end"), "{text}");
        assert!(text.contains("48.0%"), "{text}");
        assert!(text.contains("never"), "{text}");
        // mean 4, sample stddev sqrt(2) = 1.41.
        assert!(
            text.contains("4.00 s on average over 2 run(s), stddev 1.41 s"),
            "{text}"
        );
        let sum = summary(&[(p.clone(), vec![outcome(), b])]);
        assert!(sum.contains("1 of 2 runs, at 1.0 s on average"), "{sum}");
        // For a fixed time the work done is the figure: 6 GB in 3 s.
        let timed = plan(
            Test::Numa02,
            4,
            0,
            64 << 30,
            &Asked {
                secs: Some(3),
                ..Default::default()
            },
        )
        .unwrap();
        let text = runs_table(&timed, &[outcome()], &settings());
        assert!(
            text.contains("2.0 GB/s cleared on average over 1 run(s)"),
            "{text}"
        );
        assert!(text.contains("(higher is better)"), "{text}");
        let rec = summary_record(&p, &[outcome()]);
        assert_eq!(rec.samples["runtime_s"], [3.0]);
        assert_eq!(rec.metrics["convergence_mean_s"].value, 1.0);
    }
}
