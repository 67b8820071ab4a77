//! `numabench mem` text in perf's formats, as the run goes.
//!
//! perf prints a banner per run, the binding lists and a summary box, a
//! progress/convergence line once a second, then its metrics: with `-q`
//! one `name, value, unit, metric` line each (`print_res`), otherwise one
//! `value description` line each. numabench adds what perf does not know
//! (where the memory ended up, NUMA-balancing work, CPU time) as `#` lines
//! before the metrics, so the metric block stays perf's.

use super::Summary;
use crate::probes::workload::areas::{AreaKey, area_name, areas, intended, node_shares};
use crate::probes::workload::convergence::Change;
use crate::probes::workload::layout::AreaPlacement;
use crate::probes::workload::memwatch;
use crate::probes::workload::outcome::{MemorySeries, RunOutput, Tick};
use crate::probes::workload::params::Params;
use crate::results::names::{mem::metric as mm, metric};
use crate::topology::Topology;
use std::collections::BTreeMap;
use std::fmt::Write;

/// perf's banner: `\n # Running NAME "COMMAND"`.
pub(crate) fn running(name: &str, command: &str) -> String {
    format!("\n # Running {name} \"{command}\"\n")
}

/// The binding lists and the summary box (unless `quiet`), with perf's
/// `# NOTE:` lines about list entries and unbound tasks (printed even when
/// quiet).
pub(crate) fn header(p: &Params, topo: &Topology, quiet: bool) -> String {
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

pub(crate) fn startup_begin() -> &'static str {
    " #\n # Startup synchronization: ..."
}

pub(crate) fn startup_done(secs: f64) -> String {
    format!(" threads initialized in {secs:.6} seconds.\n #\n")
}

/// The once-a-second line: progress, then with `-c`/`-m` per node
/// `tasks/processes`, `[distance/process groups]`, loops min-max (spread),
/// skew, process compression `{min-max}` nodes, and convergence events.
/// Like perf, a line that stays converged ends without a newline.
pub(crate) fn tick(t: &Tick) -> String {
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
pub(crate) fn footer() -> &'static str {
    "\n ###\n\n"
}

/// One perf `print_res` line.
pub(crate) fn print_res(
    name: &str,
    val: f64,
    unit: &str,
    short: &str,
    long: &str,
    quiet: bool,
) -> String {
    if quiet {
        format!(" {name:<30} {val:15.3}, {unit:<15} {short}\n")
    } else {
        format!(" {val:14.3} {long}\n")
    }
}

/// perf's metrics (nine, plus the convergence latency with `-m`). `name`
/// is perf's first column: the test name, or `main,` for a single run.
pub(crate) fn results(name: &str, s: &Summary, quiet: bool) -> String {
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

/// What numabench adds to perf's output, as `#` lines: where each area's
/// memory is (all areas unless `quiet`, where one line per kind), the
/// NUMA-balancing counters and the CPU time.
pub(crate) fn extras(p: &Params, out: &RunOutput, quiet: bool) -> String {
    let mut s = String::new();
    let list = areas(out);
    if !list.is_empty() {
        let sampled = list.iter().any(|(_, a)| a.pages_checked < a.pages_total);
        s.push_str(&placement_heading(sampled));
        if quiet {
            s.push_str(&placement_by_kind(&list));
        } else {
            for (k, a) in &list {
                let bound = intended(p, *k).and_then(|n| a.pct_on(n).map(|pct| (n, pct)));
                s.push_str(&area_line(&area_name(p, *k), a, bound));
            }
        }
    }
    s.push_str(&balancing_line(&out.numa_balancing));
    s.push_str(&cpu_line(out.cpu.user_s, out.cpu.system_s));
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

/// The line before the areas' placement.
pub(crate) fn placement_heading(sampled: bool) -> String {
    format!(
        " # memory placement at the end (move_pages{}):\n",
        if sampled { ", large areas sampled" } else { "" }
    )
}

/// One area's placement: its size, its pages' nodes, the share on the node
/// it was bound to, its THP share.
pub(crate) fn area_line(name: &str, a: &AreaPlacement, bound: Option<(usize, f64)>) -> String {
    let target = bound
        .map(|(n, pct)| format!(", {pct:.0}% on bound node {n}"))
        .unwrap_or_default();
    format!(
        " #   {:<12} {:>10}: {}{target}, {:.0}% THP\n",
        name,
        crate::units::bytes(a.bytes),
        node_shares(&a.pages_by_node),
        a.huge_bytes as f64 * 100.0 / a.bytes.max(1) as f64
    )
}

/// With `-q`: one line per kind of area, their pages merged.
fn placement_by_kind(list: &[(AreaKey, &AreaPlacement)]) -> String {
    let mut s = String::new();
    for (kind, pick) in [("global", 0usize), ("process", 1), ("thread", 2)] {
        let sel: Vec<&(AreaKey, &AreaPlacement)> = list
            .iter()
            .filter(|(k, _)| {
                matches!(
                    (k, pick),
                    (AreaKey::Global, 0) | (AreaKey::Process(_), 1) | (AreaKey::Thread(_), 2)
                )
            })
            .collect();
        if sel.is_empty() {
            continue;
        }
        let mut merged = BTreeMap::new();
        for (_, a) in &sel {
            for (n, c) in &a.pages_by_node {
                *merged.entry(*n).or_insert(0) += c;
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
    s
}

/// The NUMA-balancing counters' increase over the run.
pub(crate) fn balancing_line(nb: &BTreeMap<String, u64>) -> String {
    if nb.is_empty() {
        return " # NUMA balancing: no counters in /proc/vmstat on this kernel\n".into();
    }
    let g = |k: &str| nb.get(k).copied().unwrap_or(0);
    format!(
        " # NUMA balancing during the run: {} PTE updates ({} huge), {} hinting faults ({} local), {} pages migrated\n",
        g(mm::NUMA_PTE_UPDATES),
        g(mm::NUMA_HUGE_PTE_UPDATES),
        g(metric::NUMA_HINT_FAULTS),
        g(mm::NUMA_HINT_FAULTS_LOCAL),
        g(metric::NUMA_PAGES_MIGRATED)
    )
}

/// `--memory-per-node`: one `#` line per look, MiB of the tasks' memory and
/// tasks on each node ("MiB/tasks"), and what the looks cost.
pub(crate) fn memory_per_node(m: &MemorySeries) -> String {
    let mut s = format!(
        " # memory per node once a second, MiB/tasks ({} looks at the tasks' private memory, as autonuma's):\n",
        m.method
    );
    let _ = write!(s, " # {:>7}", "time");
    for n in &m.nodes {
        let head = format!("node {n}");
        let _ = write!(s, " {head:>12}");
    }
    s.push('\n');
    for l in &m.looks {
        let _ = write!(s, " # {:>5.1} s", l.t);
        for n in &m.nodes {
            let mib = l.mem.get(n).copied().unwrap_or(0) >> 20;
            let tasks = l.threads.get(n).copied().unwrap_or(0);
            let cell = format!("{mib}/{tasks}");
            let _ = write!(s, " {cell:>12}");
        }
        s.push('\n');
    }
    let _ = writeln!(
        s,
        " # {} look{} in {:.3} s of CPU time{}{}",
        m.looks.len(),
        if m.looks.len() == 1 { "" } else { "s" },
        m.cpu_s,
        if m.dropped > 0 {
            format!(", {} left out (a task was ending)", m.dropped)
        } else {
            String::new()
        },
        m.fallback
            .as_ref()
            .map(|f| format!("; {f}"))
            .unwrap_or_default()
    );
    s
}

/// The CPU side of convergence (perf's: every process on one node) beside
/// the memory side (each node's share of the memory within
/// [`memwatch::TOLERANCE_PTS`] points of its share of the tasks, to the end).
pub(crate) fn convergence_sides(cpu_s: Option<f64>, m: &MemorySeries) -> String {
    let side = |t: Option<f64>| t.map_or("not reached".to_string(), |t| format!("{t:.1} s"));
    let after = match (cpu_s, m.followed_at_s) {
        (Some(c), Some(mem)) if mem >= c => format!(" (memory {:.1} s after the CPUs)", mem - c),
        _ => String::new(),
    };
    format!(
        " # convergence: CPU side {}, memory side {}{after}; memory side = each node's share of the memory within {} points of its share of the tasks from then on\n",
        side(cpu_s),
        side(m.followed_at_s),
        memwatch::TOLERANCE_PTS
    )
}

/// CPU time of numabench and its children over the run.
pub(crate) fn cpu_line(user_s: f64, system_s: f64) -> String {
    format!(
        " # CPU time: {user_s:.3} s user, {system_s:.3} s system (numabench and its children)\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::workload::convergence::{NodeLoad, Snapshot};

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
    fn memory_lines_and_both_sides_of_convergence() {
        use crate::probes::workload::watch::Look;
        let look = |t: f64, a: u64, b: u64| Look {
            t,
            mem: [(0, a << 20), (1, b << 20)].into_iter().collect(),
            threads: [(0, 1), (1, 1)].into_iter().collect(),
            ..Default::default()
        };
        let m = MemorySeries {
            nodes: vec![0, 1],
            looks: vec![look(0.0, 64, 0), look(1.0, 40, 24), look(2.0, 32, 32)],
            followed_at_s: Some(2.0),
            cpu_s: 0.004,
            method: "sampled",
            ..Default::default()
        };
        let t = memory_per_node(&m);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 6, "{t}");
        assert_eq!(lines[1], " #    time       node 0       node 1");
        assert_eq!(lines[2], " #   0.0 s         64/1          0/1");
        assert_eq!(lines[4], " #   2.0 s         32/1         32/1");
        assert!(lines[5].starts_with(" # 3 looks in 0.004 s"), "{t}");
        let c = convergence_sides(Some(1.0), &m);
        assert!(
            c.starts_with(
                " # convergence: CPU side 1.0 s, memory side 2.0 s (memory 1.0 s after the CPUs);"
            ),
            "{c}"
        );
        let none = convergence_sides(None, &MemorySeries::default());
        assert!(
            none.contains("CPU side not reached, memory side not reached;"),
            "{none}"
        );
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
