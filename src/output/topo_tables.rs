//! The topology as titled tables, for the formats beside the terminal view
//! (`topo --markdown`, `--latex`, `--csv`, `--html`): the same figures as
//! `topo_text`, one table per part. The rows are built here once; `topo_text`
//! lays the same rows out as aligned text.

use crate::topology::{Cache, Topology};
use crate::units::bytes;
use crate::view::Section;

fn table(title: &str, header: &[&str], rows: Vec<Vec<String>>) -> Section {
    let mut s = Section::new(title);
    s.header = header.iter().map(|h| h.to_string()).collect();
    s.rows = rows;
    s
}

/// Nodes, distances, HMAT (if any), caches, settings, accelerators (if
/// any); the topology's warnings as notes of the last.
pub(crate) fn sections(t: &Topology) -> Vec<Section> {
    let mut out = vec![nodes(t), distances(t)];
    if t.nodes.iter().any(|n| n.hmat.is_some()) {
        out.push(hmat(t));
    }
    out.push(caches(t));
    out.push(settings(t));
    if !t.accelerators.is_empty() {
        out.push(accelerators(t));
    }
    if let Some(last) = out.last_mut() {
        last.lines.extend(t.warnings());
    }
    out
}

fn dash(s: String) -> String {
    if s.is_empty() { "-".into() } else { s }
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

/// The node table's columns, here and in `topo_text`.
pub(super) const NODE_HEADER: [&str; 7] = [
    "node",
    "cpus",
    "memory",
    "free",
    "huge pages free/total",
    "tier",
    "note",
];

/// One row per node; a node's huge page pools joined by `huge_sep`.
pub(super) fn node_rows(t: &Topology, huge_sep: &str) -> Vec<Vec<String>> {
    t.nodes
        .iter()
        .map(|n| {
            let huge = n
                .hugepages
                .iter()
                .map(|h| format!("{}: {}/{}", short_page(h.size_kb), h.free, h.total))
                .collect::<Vec<_>>()
                .join(huge_sep);
            let mut notes = Vec::new();
            if !n.has_cpu {
                notes.push("memory only");
            }
            if !n.has_memory {
                notes.push("no memory");
            }
            if !t.allowed.nodes.contains(n.id) {
                notes.push("not allowed");
            } else if n.has_cpu && t.usable_cpus_of(n.id).is_empty() {
                notes.push("no allowed CPU");
            }
            vec![
                n.id.to_string(),
                dash(n.cpus.to_list()),
                bytes(n.mem_total_bytes),
                n.mem_free_bytes.map_or_else(|| "unknown".into(), bytes),
                dash(huge),
                n.tier.map_or("-".into(), |v| v.to_string()),
                notes.join(", "),
            ]
        })
        .collect()
}

fn nodes(t: &Topology) -> Section {
    table("nodes", &NODE_HEADER, node_rows(t, ", "))
}

/// `distance` and one column per node.
pub(super) fn distance_header(t: &Topology) -> Vec<String> {
    let mut header = vec!["distance".to_string()];
    header.extend(t.nodes.iter().map(|n| n.id.to_string()));
    header
}

/// One row per node: its id and its distance to every node (`?` where the
/// kernel gave none).
pub(super) fn distance_rows(t: &Topology) -> Vec<Vec<String>> {
    t.nodes
        .iter()
        .map(|n| {
            let mut row = vec![n.id.to_string()];
            if n.distances.is_empty() {
                row.extend(t.nodes.iter().map(|_| "?".to_string()));
            } else {
                row.extend(n.distances.iter().map(|d| d.to_string()));
            }
            row
        })
        .collect()
}

fn distances(t: &Topology) -> Section {
    let header = distance_header(t);
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    table("distances", &header, distance_rows(t))
}

/// The HMAT table's columns after the node's.
pub(super) const HMAT_FIGURES: [&str; 5] = [
    "initiators",
    "read MB/s",
    "write MB/s",
    "read ns",
    "write ns",
];

/// One row per node with HMAT figures.
pub(super) fn hmat_rows(t: &Topology) -> Vec<Vec<String>> {
    let num = |v: Option<u64>| v.map_or("-".into(), |v| v.to_string());
    t.nodes
        .iter()
        .filter_map(|n| {
            let h = n.hmat.as_ref()?;
            Some(vec![
                n.id.to_string(),
                h.initiators.to_list(),
                num(h.read_bandwidth_mb_s),
                num(h.write_bandwidth_mb_s),
                num(h.read_latency_ns),
                num(h.write_latency_ns),
            ])
        })
        .collect()
}

fn hmat(t: &Topology) -> Section {
    table(
        "HMAT",
        &[&["node"], &HMAT_FIGURES[..]].concat(),
        hmat_rows(t),
    )
}

fn cache_name(c: &Cache) -> String {
    match c.kind.as_str() {
        "Data" => format!("L{}d", c.level),
        "Instruction" => format!("L{}i", c.level),
        _ => format!("L{}", c.level),
    }
}

/// Identical cache instances, counted.
pub(super) struct CacheGroup {
    pub name: String,
    pub size: u64,
    pub count: usize,
    /// CPUs sharing one instance.
    pub sharing: usize,
    pub line: Option<u32>,
}

/// The caches grouped by (level, type, size, sharing width), in the order
/// first seen.
pub(super) fn cache_groups(t: &Topology) -> Vec<CacheGroup> {
    let mut groups: Vec<CacheGroup> = Vec::new();
    for c in &t.caches {
        let name = cache_name(c);
        let sharing = c.cpus.len();
        match groups
            .iter_mut()
            .find(|g| g.name == name && g.size == c.size_bytes && g.sharing == sharing)
        {
            Some(g) => g.count += 1,
            None => groups.push(CacheGroup {
                name,
                size: c.size_bytes,
                count: 1,
                sharing,
                line: c.line_bytes,
            }),
        }
    }
    groups
}

fn caches(t: &Topology) -> Section {
    let rows = cache_groups(t)
        .into_iter()
        .map(|g| {
            vec![
                g.name,
                bytes(g.size),
                g.count.to_string(),
                g.sharing.to_string(),
                g.line.map_or("-".into(), |l| l.to_string()),
            ]
        })
        .collect();
    let mut s = table(
        "caches",
        &["cache", "size", "count", "CPUs sharing one", "line bytes"],
        rows,
    );
    if t.caches.is_empty() {
        s.lines.push("caches not reported by this kernel".into());
    }
    s
}

fn settings(t: &Topology) -> Section {
    let or = |v: &Option<String>, none: &str| v.clone().unwrap_or_else(|| none.into());
    let balancing = match t.numa_balancing {
        None => "(not available)".to_string(),
        Some(0) => "0 (off)".into(),
        Some(1) => "1 (on)".into(),
        Some(2) => "2 (memory tiering)".into(),
        Some(3) => "3 (on, with memory tiering)".into(),
        Some(v) => format!("{v}"),
    };
    let all_nodes = t.node_ids();
    let mut rows = vec![
        vec!["THP enabled".into(), or(&t.thp.enabled, "(unsupported)")],
        vec!["THP defrag".into(), or(&t.thp.defrag, "-")],
        vec!["numa_balancing".into(), balancing],
        vec![
            "cpuset CPUs".into(),
            format!("{} of {}", t.allowed.cpus, t.cpus_online),
        ],
        vec![
            "cpuset nodes".into(),
            format!("{} of {}", t.allowed.nodes, all_nodes),
        ],
    ];
    for m in &t.memory_tiers {
        rows.push(vec![
            format!("memory tier {}", m.id),
            format!("nodes {}", m.nodes),
        ]);
    }
    rows.extend(tiering_rows(t));
    for d in &t.damon {
        rows.push(vec!["DAMON".into(), damon_line(d)]);
    }
    if let Some(vm) = &t.virtual_machine {
        rows.push(vec!["virtual machine".into(), vm.clone()]);
    }
    table("settings", &["setting", "value"], rows)
}

/// `kdamond 0 on: paddr; schemes pageout`.
pub(super) fn damon_line(d: &crate::topology::Damon) -> String {
    let mut line = format!("{} {}", d.name, if d.on { "on" } else { "off" });
    if !d.operations.is_empty() {
        line += &format!(": {}", d.operations.join(", "));
    }
    if !d.actions.is_empty() {
        line += &format!("; schemes {}", d.actions.join(", "));
    }
    line
}

/// The kernel's own view of tiering, where there is more than one tier
/// or the kernel shows its settings: each tier's abstract distances, where
/// each node demotes to, whether it may, and the promotion limits.
pub(super) fn tiering_rows(t: &Topology) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    if t.memory_tiers.len() > 1 {
        let tiers: Vec<String> = t
            .memory_tiers
            .iter()
            .map(|m| {
                let (lo, hi) = m.abstract_distances();
                format!("tier {}: {lo}-{hi}", m.id)
            })
            .collect();
        rows.push(vec!["abstract dist.".into(), tiers.join("; ")]);
        let demotes: Vec<String> = t
            .nodes
            .iter()
            .filter(|n| n.has_memory)
            .map(|n| {
                let to = t.demotion_targets(n.id);
                match to.first() {
                    None => format!("node {} -> none", n.id),
                    Some(first) => format!(
                        "node {} -> {first} (fallback {})",
                        n.id,
                        crate::ids::NodeSet::from_ids(to.iter().copied())
                    ),
                }
            })
            .collect();
        rows.push(vec!["demotion".into(), demotes.join("; ")]);
    }
    if let Some(k) = &t.tiering {
        let mut parts = Vec::new();
        if let Some(d) = k.demotion_enabled {
            parts.push(format!("demotion_enabled {d}"));
        }
        if let Some(r) = k.promote_rate_limit_mb_s {
            parts.push(format!("promote rate limit {r} MB/s"));
        }
        if let Some(h) = k.hot_threshold_ms {
            parts.push(format!("hot threshold {h} ms"));
        }
        rows.push(vec!["tiering".into(), parts.join("; ")]);
    }
    rows
}

/// The accelerator table's columns, here and in `topo_text`.
pub(super) const ACCELERATOR_HEADER: [&str; 6] = [
    "accelerator",
    "kind",
    "vendor:device",
    "node",
    "link",
    "peak MB/s",
];

/// One row per accelerator.
pub(super) fn accelerator_rows(t: &Topology) -> Vec<Vec<String>> {
    t.accelerators
        .iter()
        .map(|a| {
            let link = match (a.link_speed_gt_s, a.link_width) {
                (Some(s), Some(w)) => format!("{s:.1} GT/s x{w}"),
                _ => "unknown".into(),
            };
            vec![
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
            ]
        })
        .collect()
}

fn accelerators(t: &Topology) -> Section {
    table("accelerators", &ACCELERATOR_HEADER, accelerator_rows(t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::fixture;

    #[test]
    fn every_node_and_distance_is_a_cell() {
        let t = fixture("two-node");
        let s = sections(&t);
        assert_eq!(s[0].title, "nodes");
        assert_eq!(s[0].rows.len(), t.nodes.len());
        assert_eq!(s[1].header.len(), 1 + t.nodes.len());
    }
}
