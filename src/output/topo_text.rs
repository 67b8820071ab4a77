//! The human view of a topology, in the spirit of `numactl -H` with caches,
//! HMAT, cpuset limits and accelerators added.

use crate::topology::{Cache, Topology};
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

fn nodes(t: &Topology) -> String {
    let mut table = Table::new(
        &[
            "node",
            "cpus",
            "memory",
            "free",
            "huge pages free/total",
            "tier",
            "note",
        ],
        &[
            Align::Right,
            Align::Left,
            Align::Right,
            Align::Right,
            Align::Left,
            Align::Right,
            Align::Left,
        ],
    );
    for n in &t.nodes {
        let huge = n
            .hugepages
            .iter()
            .map(|h| format!("{}: {}/{}", short_page(h.size_kb), h.free, h.total))
            .collect::<Vec<_>>()
            .join("  ");
        let mut notes = Vec::new();
        if !n.has_cpu {
            notes.push("memory only".to_string());
        }
        if !n.has_memory {
            notes.push("no memory".to_string());
        }
        if !t.allowed.nodes.contains(n.id) {
            notes.push("not allowed".to_string());
        } else if n.has_cpu && t.usable_cpus_of(n.id).is_empty() {
            notes.push("no allowed CPU".to_string());
        }
        table.row(vec![
            n.id.to_string(),
            if n.cpus.is_empty() {
                "-".into()
            } else {
                n.cpus.to_list()
            },
            bytes(n.mem_total_bytes),
            bytes(n.mem_free_bytes),
            if huge.is_empty() { "-".into() } else { huge },
            n.tier.map_or("-".into(), |v| v.to_string()),
            notes.join(", "),
        ]);
    }
    table.render()
}

/// `2048` kB → `2M`, `1048576` → `1G`.
fn short_page(kb: u64) -> String {
    if kb >= 1 << 20 && kb.is_multiple_of(1 << 20) {
        format!("{}G", kb >> 20)
    } else if kb >= 1024 && kb.is_multiple_of(1024) {
        format!("{}M", kb >> 10)
    } else {
        format!("{kb}K")
    }
}

fn distances(t: &Topology) -> String {
    let mut header = vec!["distance".to_string()];
    header.extend(t.nodes.iter().map(|n| n.id.to_string()));
    let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let align = vec![Align::Right; header.len()];
    let mut table = Table::new(&header_refs, &align);
    for n in &t.nodes {
        let mut row = vec![n.id.to_string()];
        if n.distances.is_empty() {
            row.extend(t.nodes.iter().map(|_| "?".to_string()));
        } else {
            row.extend(n.distances.iter().map(|d| d.to_string()));
        }
        table.row(row);
    }
    table.render()
}

fn hmat(t: &Topology) -> String {
    if t.nodes.iter().all(|n| n.hmat.is_none()) {
        return String::new();
    }
    let mut table = Table::new(
        &[
            "HMAT node",
            "initiators",
            "read MB/s",
            "write MB/s",
            "read ns",
            "write ns",
        ],
        &[
            Align::Right,
            Align::Left,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
        ],
    );
    let num = |v: Option<u64>| v.map_or("-".into(), |v| v.to_string());
    for n in &t.nodes {
        if let Some(h) = &n.hmat {
            table.row(vec![
                n.id.to_string(),
                h.initiators.to_list(),
                num(h.read_bandwidth_mb_s),
                num(h.write_bandwidth_mb_s),
                num(h.read_latency_ns),
                num(h.write_latency_ns),
            ]);
        }
    }
    table.render()
}

fn cache_name(c: &Cache) -> String {
    match c.kind.as_str() {
        "Data" => format!("L{}d", c.level),
        "Instruction" => format!("L{}i", c.level),
        _ => format!("L{}", c.level),
    }
}

fn caches(t: &Topology) -> String {
    if t.caches.is_empty() {
        return "caches    (not reported by this kernel)\n".into();
    }
    let mut table = Table::new(
        &["cache", "size", "count", "shared by", "line"],
        &[
            Align::Left,
            Align::Right,
            Align::Right,
            Align::Left,
            Align::Right,
        ],
    );
    // Group identical (level, type, size, sharing width) instances.
    let mut groups: Vec<(String, u64, usize, usize, Option<u32>)> = Vec::new();
    for c in &t.caches {
        let key = (cache_name(c), c.size_bytes, c.cpus.len());
        match groups.iter_mut().find(|g| (g.0.clone(), g.1, g.3) == key) {
            Some(g) => g.2 += 1,
            None => groups.push((key.0, key.1, 1, key.2, c.line_bytes)),
        }
    }
    for (name, size, count, sharing, line) in groups {
        table.row(vec![
            name,
            bytes(size),
            format!("x{count}"),
            match sharing {
                1 => "1 CPU".into(),
                n => format!("{n} CPUs"),
            },
            line.map_or("-".into(), |l| format!("{l} B")),
        ]);
    }
    table.render()
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
    if !t.memory_tiers.is_empty() {
        let tiers: Vec<String> = t
            .memory_tiers
            .iter()
            .map(|m| format!("{}: nodes {}", m.id, m.nodes))
            .collect();
        let _ = writeln!(out, "memory tiers   {}", tiers.join("; "));
    }
    out
}

fn accelerators(t: &Topology) -> String {
    if t.accelerators.is_empty() {
        return String::new();
    }
    let mut table = Table::new(
        &[
            "accelerator",
            "kind",
            "vendor:device",
            "node",
            "link",
            "peak MB/s",
        ],
        &[
            Align::Left,
            Align::Left,
            Align::Left,
            Align::Right,
            Align::Left,
            Align::Right,
        ],
    );
    for a in &t.accelerators {
        let link = match (a.link_speed_gt_s, a.link_width) {
            (Some(s), Some(w)) => format!("{s:.1} GT/s x{w}"),
            _ => "unknown".into(),
        };
        table.row(vec![
            a.pci_address.clone(),
            a.kind.clone(),
            format!(
                "{}:{}",
                a.vendor.trim_start_matches("0x"),
                a.device.trim_start_matches("0x")
            ),
            a.numa_node.map_or("?".into(), |n| n.to_string()),
            link,
            a.link_peak_mb_s().map_or("-".into(), |p| format!("{p:.0}")),
        ]);
    }
    table.render()
}
