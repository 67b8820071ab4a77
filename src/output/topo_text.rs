//! The human view of a topology, in the spirit of `numactl -H` with caches,
//! HMAT, cpuset limits and accelerators added.

use super::topo_tables;
use crate::topology::Topology;
use crate::units::bytes;
use crate::view::table::{Align, Table};
use std::fmt::Write;

pub fn render(t: &Topology) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "host      {}   kernel {}",
        or_unknown(&t.hostname),
        or_unknown(&t.kernel)
    );
    let _ = writeln!(
        out,
        "cpu       {}: {} package{}, {} cores, {} CPUs online ({} per core)",
        or_unknown(&t.cpu_model),
        t.packages(),
        plural(t.packages()),
        t.cores(),
        t.cpus.len(),
        match t.threads_per_core() {
            1 => "1 thread".to_string(),
            n => format!("{n} threads"),
        }
    );
    if !t.numa_sysfs {
        out.push_str("numa      the kernel exposes no NUMA information; shown as one node\n");
    }
    out.push('\n');
    out.push_str(&nodes(t));
    out.push('\n');
    out.push_str(&distances(t));
    let hmat = hmat(t);
    if !hmat.is_empty() {
        out.push('\n');
        out.push_str(&hmat);
    }
    out.push('\n');
    out.push_str(&caches(t));
    out.push('\n');
    out.push_str(&settings(t));
    let accel = accelerators(t);
    if !accel.is_empty() {
        out.push('\n');
        out.push_str(&accel);
    }
    for w in t.warnings() {
        let _ = writeln!(out, "\nnote: {w}");
    }
    out
}

/// A string from the machine, escaped: a host name or CPU model holding ESC
/// must not drive the terminal.
fn or_unknown(s: &str) -> std::borrow::Cow<'_, str> {
    if s.is_empty() {
        "(unknown)".into()
    } else {
        super::escape(s)
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `rows` under `header`, aligned.
fn text_table(header: &[&str], align: &[Align], rows: Vec<Vec<String>>) -> String {
    let mut table = Table::new(header, align);
    for row in rows {
        table.row(row);
    }
    table.render()
}

fn nodes(t: &Topology) -> String {
    use Align::{Left, Right};
    text_table(
        &topo_tables::NODE_HEADER,
        &[Right, Left, Right, Right, Left, Right, Left],
        topo_tables::node_rows(t, "  "),
    )
}

fn distances(t: &Topology) -> String {
    let header = topo_tables::distance_header(t);
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let align = vec![Align::Right; header.len()];
    text_table(&header, &align, topo_tables::distance_rows(t))
}

fn hmat(t: &Topology) -> String {
    if t.nodes.iter().all(|n| n.hmat.is_none()) {
        return String::new();
    }
    use Align::{Left, Right};
    text_table(
        &[&["HMAT node"], &topo_tables::HMAT_FIGURES[..]].concat(),
        &[Right, Left, Right, Right, Right, Right],
        topo_tables::hmat_rows(t),
    )
}

fn caches(t: &Topology) -> String {
    if t.caches.is_empty() {
        return "caches    (not reported by this kernel)\n".into();
    }
    let rows = topo_tables::cache_groups(t)
        .into_iter()
        .map(|g| {
            vec![
                g.name,
                bytes(g.size),
                format!("x{}", g.count),
                match g.sharing {
                    1 => "1 CPU".into(),
                    n => format!("{n} CPUs"),
                },
                g.line.map_or("-".into(), |l| format!("{l} B")),
            ]
        })
        .collect();
    use Align::{Left, Right};
    text_table(
        &["cache", "size", "count", "shared by", "line"],
        &[Left, Right, Right, Left, Right],
        rows,
    )
}

fn settings(t: &Topology) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "THP            enabled={} defrag={}",
        super::escape(t.thp.enabled.as_deref().unwrap_or("(unsupported)")),
        super::escape(t.thp.defrag.as_deref().unwrap_or("-"))
    );
    let balancing = match t.numa_balancing {
        None => "(not available)".to_string(),
        Some(0) => "0 (off)".into(),
        Some(1) => "1 (on)".into(),
        Some(2) => "2 (memory tiering)".into(),
        Some(3) => "3 (on, with memory tiering)".into(),
        Some(v) => format!("{v}"),
    };
    let _ = writeln!(out, "numa_balancing {balancing}");
    let all_nodes = t.node_ids();
    if t.allowed.cpus == t.cpus_online && t.allowed.nodes == all_nodes {
        let _ = writeln!(
            out,
            "cpuset         not restricted (CPUs {}, nodes {})",
            t.cpus_online, all_nodes
        );
    } else {
        let _ = writeln!(
            out,
            "cpuset         restricted: CPUs {} of {}, nodes {} of {}",
            t.allowed.cpus, t.cpus_online, t.allowed.nodes, all_nodes
        );
    }
    if let Some(l) = &t.memory_limit {
        let _ = writeln!(
            out,
            "memory limit   {}: buffers are sized and admitted within it",
            super::escape(&l.describe())
        );
    }
    if !t.memory_tiers.is_empty() {
        let tiers: Vec<String> = t
            .memory_tiers
            .iter()
            .map(|m| format!("{}: nodes {}", m.id, m.nodes))
            .collect();
        let _ = writeln!(out, "memory tiers   {}", tiers.join("; "));
    }
    for line in topo_tables::tiering_rows(t) {
        let _ = writeln!(out, "{:<14} {}", line[0], line[1]);
    }
    for d in &t.damon {
        let _ = writeln!(
            out,
            "DAMON          {}",
            super::escape(&topo_tables::damon_line(d))
        );
    }
    if let Some(vm) = &t.virtual_machine {
        let _ = writeln!(out, "virtual        {}", super::escape(vm));
    }
    out
}

fn accelerators(t: &Topology) -> String {
    if t.accelerators.is_empty() {
        return String::new();
    }
    use Align::{Left, Right};
    text_table(
        &topo_tables::ACCELERATOR_HEADER,
        &[Left, Left, Left, Right, Left, Right],
        topo_tables::accelerator_rows(t),
    )
}
