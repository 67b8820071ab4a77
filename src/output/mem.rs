//! `numabench mem` text in perf's formats, and its results records.
//!
//! perf prints a banner per run, the binding lists and a summary box, a
//! progress/convergence line once a second, then its metrics: with `-q`
//! one `name, value, unit, metric` line each (`print_res`), otherwise one
//! `value description` line each. numabench adds what perf does not know
//! (where the memory ended up, NUMA-balancing work, CPU time) as `#` lines
//! before the metrics, so the metric block stays perf's.

use crate::placement::CpuSet;
use crate::probes::mem::convergence::Change;
use crate::probes::mem::layout::AreaPlacement;
use crate::probes::mem::{Params, RunOutput, Summary, Tick};
use crate::results::{Better, Line, Placement, Record, Series};
use crate::topology::Topology;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fmt::Write;

/// perf's banner: `\n # Running NAME "COMMAND"`.
pub fn running(name: &str, command: &str) -> String {
    format!("\n # Running {name} \"{command}\"\n")
}

/// The binding lists and the summary box (unless `quiet`), with perf's
/// `# NOTE:` lines about list entries and unbound tasks (printed even when
/// quiet).
pub fn header(p: &Params, topo: &Topology, quiet: bool) -> String {
    let notes = |v: &[String]| -> String { v.iter().map(|n| format!("# {n}\n")).collect() };
    if quiet {
        return notes(&p.cpu_notes) + &notes(&p.node_notes);
    }
    let mut s = String::from("#\n");
    if !p.cpu_entries.is_empty() {
        s.push_str("# binding tasks to CPUs:\n#  ");
        let items: Vec<String> = p
            .cpu_entries
            .iter()
            .map(|&(cpu, len)| {
                if len > 1 {
                    format!("{cpu:2}/{len}")
                } else {
                    format!("{cpu:2}")
                }
            })
            .collect();
        s.push_str(&items.join(","));
        s.push('\n');
        s.push_str(&notes(&p.cpu_notes));
    }
    if !p.node_entries.is_empty() {
        s.push_str("# binding tasks to NODEs:\n# ");
        for (i, n) in p.node_entries.iter().enumerate() {
            let _ = write!(s, "{}{n:2}", if i == 0 { " " } else { "," });
        }
        s.push('\n');
        s.push_str(&notes(&p.node_notes));
    }
    s.push_str("#\n");
    let loops = p.nr_loops as i32; // perf prints its u32 with %d
    let mb = |b: u64| b / 1024 / 1024;
    let _ = write!(
        s,
        "\n ###\n # {} {} will execute (on {} nodes, {} CPUs):\n \
         #      {loops:5}x {:5}MB global  shared mem operations\n \
         #      {loops:5}x {:5}MB process shared mem operations\n \
         #      {loops:5}x {:5}MB thread  local  mem operations\n ###\n\n ###\n",
        p.nr_tasks,
        if p.nr_tasks == 1 { "task" } else { "tasks" },
        topo.nodes.len(),
        topo.cpus.len(),
        mb(p.bytes_global),
        mb(p.bytes_process),
        mb(p.bytes_thread),
    );
    s
}

pub fn startup_begin() -> &'static str {
    " #\n # Startup synchronization: ..."
}

pub fn startup_done(secs: f64) -> String {
    format!(" threads initialized in {secs:.6} seconds.\n #\n")
}

/// The once-a-second line: progress, then with `-c`/`-m` per node
/// `tasks/processes`, `[distance/process groups]`, loops min-max (spread),
/// skew, process compression `{min-max}` nodes, and convergence events.
/// Like perf, a line that stays converged ends without a newline.
pub fn tick(t: &Tick) -> String {
    let mut s = format!(
        "\r #  {:5.1}%  [{:.1} mins]",
        t.progress_pct,
        t.elapsed_s / 60.0
    );
    let Some((snap, change)) = &t.convergence else {
        return s;
    };
    for n in &snap.nodes {
        let _ = write!(s, " {:2}/{:<2}", n.tasks, n.processes);
    }
    let _ = write!(s, " [{:2}/{:<2}]", snap.distance, snap.process_groups);
    let _ = write!(
        s,
        " l:{:3}-{:<3} ({:3})",
        snap.loops_min,
        snap.loops_max,
        snap.loops_max.saturating_sub(snap.loops_min)
    );
    if let Some(skew) = snap.skew_pct {
        let _ = write!(s, " [{skew:4.1}%]");
    }
    if !snap.strong {
        let _ = write!(s, " {{{}-{}}}", snap.compression.0, snap.compression.1);
    }
    match change {
        Change::Converged => {
            let _ = writeln!(s, " ({:6.1}s converged)", t.elapsed_s);
        }
        Change::Deconverged => {
            let _ = writeln!(s, " ({:6.1}s de-converged)", t.elapsed_s);
        }
        Change::None if snap.converged => {}
        Change::None => s.push('\n'),
    }
    s
}

/// The end-of-run box perf prints before the metrics (unless `-q`).
pub fn footer() -> &'static str {
    "\n ###\n\n"
}

/// One perf `print_res` line.
pub fn print_res(name: &str, val: f64, unit: &str, short: &str, long: &str, quiet: bool) -> String {
    if quiet {
        format!(" {name:<30} {val:15.3}, {unit:<15} {short}\n")
    } else {
        format!(" {val:14.3} {long}\n")
    }
}

/// perf's metrics (nine, plus the convergence latency with `-m`). `name`
/// is perf's first column: the test name, or `main,` for a single run.
pub fn results(name: &str, s: &Summary, quiet: bool) -> String {
    let mut out = String::new();
    let mut line = |v: f64, unit: &str, short: &str, long: &str| {
        out.push_str(&print_res(name, v, unit, short, long, quiet));
    };
    if let Some(c) = s.convergence_latency_s {
        line(
            c,
            "secs,",
            "NUMA-convergence-latency",
            "secs latency to NUMA-converge",
        );
    }
    line(
        s.runtime_max_s,
        "secs,",
        "runtime-max/thread",
        "secs slowest (max) thread-runtime",
    );
    line(
        s.runtime_min_s,
        "secs,",
        "runtime-min/thread",
        "secs fastest (min) thread-runtime",
    );
    line(
        s.runtime_avg_s,
        "secs,",
        "runtime-avg/thread",
        "secs average thread-runtime",
    );
    line(
        s.spread_pct,
        "%,",
        "spread-runtime/thread",
        "% difference between max/avg runtime",
    );
    line(
        s.data_per_thread_gb,
        "GB,",
        "data/thread",
        "GB data processed, per thread",
    );
    line(
        s.data_total_gb,
        "GB,",
        "data-total",
        "GB data processed, total",
    );
    line(
        s.runtime_per_byte_ns,
        "nsecs,",
        "runtime/byte/thread",
        "nsecs/byte/thread runtime",
    );
    line(
        s.thread_speed_gb_s,
        "GB/sec,",
        "thread-speed",
        "GB/sec/thread speed",
    );
    line(
        s.total_speed_gb_s,
        "GB/sec,",
        "total-speed",
        "GB/sec total speed",
    );
    out
}

fn node_shares(a: &AreaPlacement) -> String {
    let present: u64 = a.pages_by_node.values().sum();
    if present == 0 {
        return "no page present".into();
    }
    a.pages_by_node
        .iter()
        .map(|(n, c)| format!("node {n} {:.0}%", *c as f64 * 100.0 / present as f64))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The node an area was meant for by `-M`: a thread's own node, a
/// process's first thread's node.
fn intended(p: &Params, area: AreaKey) -> Option<usize> {
    match area {
        AreaKey::Global => None,
        AreaKey::Process(i) => p.node_bind.get(i * p.nr_threads).copied().flatten(),
        AreaKey::Thread(t) => p.node_bind.get(t).copied().flatten(),
    }
}

#[derive(Debug, Clone, Copy)]
enum AreaKey {
    Global,
    Process(usize),
    Thread(usize),
}

fn areas(out: &RunOutput) -> Vec<(AreaKey, &AreaPlacement)> {
    let mut v = Vec::new();
    if let Some(g) = &out.global_placement {
        v.push((AreaKey::Global, g));
    }
    for (i, a) in out.process_placement.iter().enumerate() {
        if let Some(a) = a {
            v.push((AreaKey::Process(i), a));
        }
    }
    for (t, a) in out.thread_placement.iter().enumerate() {
        if let Some(a) = a {
            v.push((AreaKey::Thread(t), a));
        }
    }
    v
}

fn area_name(p: &Params, k: AreaKey) -> String {
    match k {
        AreaKey::Global => "global".into(),
        AreaKey::Process(i) => format!("process {i}"),
        AreaKey::Thread(t) => format!("thread {}/{}", t / p.nr_threads, t % p.nr_threads),
    }
}

/// What numabench adds to perf's output, as `#` lines: where each area's
/// memory is (all areas unless `quiet`, where one line per kind), the
/// NUMA-balancing counters and the CPU time.
pub fn extras(p: &Params, out: &RunOutput, quiet: bool) -> String {
    let mut s = String::new();
    let list = areas(out);
    if !list.is_empty() {
        let sampled = list.iter().any(|(_, a)| a.pages_checked < a.pages_total);
        let _ = writeln!(
            s,
            " # memory placement at the end (move_pages{}):",
            if sampled { ", large areas sampled" } else { "" }
        );
        if quiet {
            for (kind, pick) in [("global", 0usize), ("process", 1), ("thread", 2)] {
                let sel: Vec<&(AreaKey, &AreaPlacement)> = list
                    .iter()
                    .filter(|(k, _)| {
                        matches!(
                            (k, pick),
                            (AreaKey::Global, 0)
                                | (AreaKey::Process(_), 1)
                                | (AreaKey::Thread(_), 2)
                        )
                    })
                    .collect();
                if sel.is_empty() {
                    continue;
                }
                let mut merged = AreaPlacement::default();
                for (_, a) in &sel {
                    for (n, c) in &a.pages_by_node {
                        *merged.pages_by_node.entry(*n).or_insert(0) += c;
                    }
                }
                let _ = writeln!(
                    s,
                    " #   {kind} memory ({} area{}): {}",
                    sel.len(),
                    if sel.len() == 1 { "" } else { "s" },
                    node_shares(&merged)
                );
            }
        } else {
            for (k, a) in &list {
                let target = intended(p, *k)
                    .and_then(|n| {
                        a.pct_on(n)
                            .map(|pct| format!(", {pct:.0}% on bound node {n}"))
                    })
                    .unwrap_or_default();
                let _ = writeln!(
                    s,
                    " #   {:<12} {:>10}: {}{target}, {:.0}% THP",
                    area_name(p, *k),
                    crate::placement::sys::fmt_bytes(a.bytes),
                    node_shares(a),
                    a.huge_bytes as f64 * 100.0 / a.bytes.max(1) as f64
                );
            }
        }
    }
    let nb = &out.numa_balancing;
    if nb.is_empty() {
        s.push_str(" # NUMA balancing: no counters in /proc/vmstat on this kernel\n");
    } else {
        let g = |k: &str| nb.get(k).copied().unwrap_or(0);
        let _ = writeln!(
            s,
            " # NUMA balancing during the run: {} PTE updates ({} huge), {} hinting faults ({} local), {} pages migrated",
            g("numa_pte_updates"),
            g("numa_huge_pte_updates"),
            g("numa_hint_faults"),
            g("numa_hint_faults_local"),
            g("numa_pages_migrated")
        );
    }
    let _ = writeln!(
        s,
        " # CPU time: {:.3} s user, {:.3} s system (numabench and its children)",
        out.cpu.user_s, out.cpu.system_s
    );
    if let Some(sig) = out.interrupted {
        let _ = writeln!(
            s,
            " # INTERRUPTED by signal {sig}{}: the figures below cover the partial run",
            if out.killed { ", tasks killed" } else { "" }
        );
    } else if let Some(why) = &out.failed {
        let _ = writeln!(
            s,
            " # FAILED: {why}; the figures below cover the partial run"
        );
    }
    s
}

/// The run as a results-document record.
pub fn record(name: &str, command: &str, p: &Params, out: &RunOutput, s: &Summary) -> Record {
    let mut r = Record::new("mem", name)
        .param("processes", p.nr_proc)
        .param("threads", p.nr_threads)
        .param("tasks", p.nr_tasks)
        .param("size_bytes", p.total_bytes())
        .param("global_bytes", p.bytes_global)
        .param("process_bytes", p.bytes_process)
        .param("process_locked_bytes", p.bytes_process_locked)
        .param("thread_bytes", p.bytes_thread)
        .param(
            "loops",
            if p.nr_loops == u32::MAX {
                Value::Null
            } else {
                json!(p.nr_loops)
            },
        )
        .param("secs", p.nr_secs)
        .param("access", p.access())
        .param("random_walk", p.data_rand_walk)
        .param("backwards", p.data_backwards)
        .param("init_random", p.init_random)
        .param("init_cpu0", p.init_cpu0)
        .param("thp", p.thp)
        .param("serialize_startup", p.serialize_startup)
        .param("sleep_us", p.sleep_usecs)
        .param("perturb_secs", p.perturb_secs)
        .param("cpus", p.cpu_list.clone().map_or(Value::Null, Value::from))
        .param(
            "memnodes",
            p.node_list.clone().map_or(Value::Null, Value::from),
        )
        .param("command", command)
        .metric("runtime_max_s", s.runtime_max_s, "s", Better::Lower)
        .metric("runtime_min_s", s.runtime_min_s, "s", Better::Lower)
        .metric("runtime_avg_s", s.runtime_avg_s, "s", Better::Lower)
        .metric("spread_runtime_pct", s.spread_pct, "%", Better::Lower)
        .metric(
            "data_per_thread_gb",
            s.data_per_thread_gb,
            "GB",
            Better::Higher,
        )
        .metric("data_total_gb", s.data_total_gb, "GB", Better::Higher)
        .metric(
            "runtime_per_byte_per_thread_ns",
            s.runtime_per_byte_ns,
            "ns",
            Better::Lower,
        )
        .metric(
            "thread_speed_gb_s",
            s.thread_speed_gb_s,
            "GB/s",
            Better::Higher,
        )
        .metric(
            "total_speed_gb_s",
            s.total_speed_gb_s,
            "GB/s",
            Better::Higher,
        )
        .metric("user_time_s", out.cpu.user_s, "s", Better::Lower)
        .metric("system_time_s", out.cpu.system_s, "s", Better::Lower);
    if let Some(c) = s.convergence_latency_s {
        r = r.metric("convergence_latency_s", c, "s", Better::Lower);
    }
    if p.show_convergence || p.measure_convergence {
        r = r.param("converged", out.tracker.since_s.is_some());
        if let Some(t) = out.tracker.since_s {
            r = r.metric("converged_at_s", t, "s", Better::Lower);
        }
    }
    if let Some(st) = out.startup_s {
        r = r.metric("startup_s", st, "s", Better::Lower);
    }
    for (k, v) in &out.numa_balancing {
        r = r.metric(k, *v as f64, "count", Better::Lower);
    }
    r.samples.insert(
        "task_runtime_s".into(),
        out.task_runtime_ns
            .iter()
            .map(|&n| n as f64 / 1e9)
            .collect(),
    );
    r.samples.insert(
        "task_data_gb".into(),
        out.task_bytes.iter().map(|&b| b as f64 / 1e9).collect(),
    );
    r.samples.insert(
        "task_loops".into(),
        out.task_loops.iter().map(|&l| l as f64).collect(),
    );
    if !out.samples.is_empty() {
        r.series.push(Series {
            name: "tasks_per_node".into(),
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
    // Where the memory is: estimated pages per node over every area, each
    // area's sample scaled to its size.
    let list = areas(out);
    let mut by_node: BTreeMap<String, u64> = BTreeMap::new();
    let (mut huge, mut bytes) = (0u64, 0u64);
    let (mut on, mut bound) = (0f64, 0f64);
    let mut detail = Vec::new();
    for (k, a) in &list {
        let scale = a.pages_total as f64 / a.pages_checked.max(1) as f64;
        for (n, c) in &a.pages_by_node {
            *by_node.entry(n.to_string()).or_insert(0) += (*c as f64 * scale).round() as u64;
        }
        huge += a.huge_bytes;
        bytes += a.bytes;
        let target = intended(p, *k);
        if let Some(n) = target {
            let present: u64 = a.pages_by_node.values().sum();
            on += a.pages_by_node.get(&n).copied().unwrap_or(0) as f64 * scale;
            bound += present as f64 * scale;
        }
        detail.push(json!({
            "area": area_name(p, *k),
            "bytes": a.bytes,
            "pages_total": a.pages_total,
            "pages_checked": a.pages_checked,
            "pages_not_present": a.not_present,
            "pages_by_node": a.pages_by_node.iter().map(|(n, c)| (n.to_string(), json!(c))).collect::<serde_json::Map<_, _>>(),
            "bound_node": target,
            "on_bound_node_pct": target.and_then(|n| a.pct_on(n)),
            "huge_bytes": a.huge_bytes,
        }));
    }
    r = r.param("memory_placement", Value::Array(detail));
    let mut cpus_seen = CpuSet::new();
    for c in out.task_cpus.iter().flatten() {
        cpus_seen.insert(*c);
    }
    r.placement = Some(Placement {
        pages_by_node: by_node,
        on_target_pct: (bound > 0.0).then(|| on * 100.0 / bound),
        huge_pct: if bytes > 0 {
            huge as f64 * 100.0 / bytes as f64
        } else {
            0.0
        },
        cpus_seen: cpus_seen.iter().collect(),
    });
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
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::mem::convergence::{NodeLoad, Snapshot};

    fn summary() -> Summary {
        Summary {
            convergence_latency_s: None,
            runtime_max_s: 20.049,
            runtime_min_s: 20.044,
            runtime_avg_s: 20.044,
            spread_pct: 0.014,
            data_per_thread_gb: 172.872,
            data_total_gb: 172.872,
            runtime_per_byte_ns: 0.116,
            thread_speed_gb_s: 8.622,
            total_speed_gb_s: 8.622,
        }
    }

    #[test]
    fn quiet_lines_match_perfs_print_res() {
        let text = results("RAM-bw-local,", &summary(), true);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 9);
        // From the seed's own output.
        assert_eq!(
            lines[0],
            " RAM-bw-local,                           20.049, secs,           runtime-max/thread"
        );
        assert_eq!(
            lines[8],
            " RAM-bw-local,                            8.622, GB/sec,         total-speed"
        );
        let mut s = summary();
        s.convergence_latency_s = Some(0.652);
        let text = results(" 3x1-convergence,", &s, true);
        assert_eq!(text.lines().count(), 10);
        assert_eq!(
            text.lines().next().unwrap(),
            "  3x1-convergence,                        0.652, secs,           NUMA-convergence-latency"
        );
    }

    #[test]
    fn verbose_lines_match_perfs() {
        let text = results("main,", &summary(), false);
        assert_eq!(
            text.lines().next().unwrap(),
            "         20.049 secs slowest (max) thread-runtime"
        );
        assert!(text.ends_with("          8.622 GB/sec total speed\n"));
    }

    #[test]
    fn tick_lines() {
        let snap = Snapshot {
            nodes: vec![
                NodeLoad {
                    node: 0,
                    tasks: 2,
                    processes: 1,
                },
                NodeLoad {
                    node: 1,
                    tasks: 2,
                    processes: 1,
                },
            ],
            distance: 0,
            process_groups: 2,
            loops_min: 3,
            loops_max: 4,
            skew_pct: Some(25.0),
            compression: (1, 1),
            strong: true,
            converged: true,
        };
        let t = Tick {
            elapsed_s: 2.0,
            progress_pct: 0.0,
            convergence: Some((snap.clone(), Change::Converged)),
        };
        assert_eq!(
            tick(&t),
            "\r #    0.0%  [0.0 mins]  2/1   2/1  [ 0/2 ] l:  3-4   (  1) [25.0%] (   2.0s converged)\n"
        );
        let still = Tick {
            convergence: Some((snap, Change::None)),
            ..t
        };
        assert!(!tick(&still).ends_with('\n'));
    }
}
