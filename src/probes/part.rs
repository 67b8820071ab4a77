//! What the probes' parts in `run` share: how a command line is sized to
//! the machine (chase buffers, time limits) and how a summary line puts
//! local beside remote. Each probe's own part sits in its `part.rs`.

use crate::results::Record;
use crate::results::names::param;
use crate::topology::Topology;

/// (CPU node, memory node) pairs: what the chase parts measure.
pub(crate) fn node_pairs(topo: &Topology) -> usize {
    topo.usable_cpu_nodes().len() * topo.usable_memory_nodes().len()
}

/// A part's time limit in seconds: `base`, or `per_cell` for each of
/// `cells` where they need more. The limit guards against a part that
/// hangs or crawls; it must not cut a healthy part short, or a machine
/// with many nodes would see its first pairs only.
pub(crate) fn time_limit(base: u64, per_cell: u64, cells: usize) -> String {
    base.max(per_cell * cells as u64).to_string()
}

/// The chase buffer of the latency parts: the matrix's idle-latency buffer
/// (16x the L3, at least 1 GiB, at most half a node's free memory), taken
/// at the node with the least room since one size serves every pair. The
/// full-random figure by pattern then repeats the matrix's idle latency at
/// the same size, and page-local differs from it by the pattern alone; with
/// two sizes a reader could not tell the size's share of a difference from
/// the host's drift.
pub(crate) fn chase_bytes(topo: &Topology) -> usize {
    use crate::probes::sizing::cap;
    let cpu = topo.allowed.cpus.iter().next().unwrap_or(0);
    let wanted = crate::probes::sizing::chase_bytes(topo, cpu);
    topo.usable_memory_nodes()
        .iter()
        .map(|m| cap(topo, wanted, m).0)
        .min()
        .unwrap_or(wanted)
}

/// `bytes` as a size argument in whole MiB.
pub(crate) fn mib(bytes: usize) -> String {
    format!("{}M", bytes >> 20)
}

/// Seconds one chase measurement of a part may take on a `bytes` buffer:
/// `base`, and 2 s for each GiB to map, fault in and link. A big L3 makes
/// a big buffer (7.5 GiB beside a 480 MiB L3), and a fresh virtual
/// machine's first touch of it took 14.5 s: a flat limit cut such a part
/// after its first pattern.
pub(crate) fn chase_cell_secs(base: u64, bytes: usize) -> u64 {
    base + 2 * (bytes as u64).div_ceil(1 << 30)
}

/// A chase probe's plan over `pairs` (CPU node, memory node): per memory
/// node and page kind one buffer of `bytes` mapped and faulted in once,
/// linked once per entry of `links` (whether it is a full-random chain),
/// then `chases_per_pair` sampled chases for each CPU node; capped at
/// `limit_s` where given.
pub(crate) fn chase_plan(
    pairs: &[(usize, usize)],
    bytes: usize,
    page_kinds: usize,
    links: &[bool],
    chases_per_pair: usize,
    limit_s: Option<f64>,
) -> crate::view::PartPlan {
    use crate::probes::cost::{self, Estimate};
    let mut mem_nodes: Vec<usize> = pairs.iter().map(|p| p.1).collect();
    mem_nodes.sort_unstable();
    mem_nodes.dedup();
    let builds = mem_nodes.len() * page_kinds.max(1);
    let mut e = Estimate::default();
    e.builds("chase", builds, bytes as u64).mapped(bytes as u64);
    let link: f64 = links
        .iter()
        .map(|&full| cost::chase_build_s(bytes as u64, full) - cost::fault_s(bytes as u64, 1))
        .sum();
    e.add(builds as f64 * (cost::fault_s(bytes as u64, 1) + link));
    e.add((pairs.len() * page_kinds.max(1) * chases_per_pair) as f64 * cost::CHASE_S);
    if let Some(limit) = limit_s {
        e.cap(limit, cost::CHASE_S);
    }
    e.plan(format!(
        "{} pair(s) x {chases_per_pair} chase(s){}",
        pairs.len(),
        if page_kinds > 1 {
            format!(" x {page_kinds} page kinds")
        } else {
            String::new()
        }
    ))
}

/// `plan` with the sentence of the chase's time cap, where it applied on
/// `topo`, after what it measures.
pub(crate) fn with_chase_cap(
    topo: &Topology,
    mut plan: crate::view::PartPlan,
) -> crate::view::PartPlan {
    let cpu = topo.allowed.cpus.iter().next().unwrap_or(0);
    if let Some(note) = crate::probes::sizing::chase_cap_note(topo, cpu) {
        plan.measures.push_str(&format!("; {note}"));
    }
    plan
}

/// The node pairs a per-pair part measures in `scope`: every pair with
/// `--all-pairs`, else by distance class above
/// [`crate::probes::pairs::SAMPLE_ABOVE`] memory nodes, or above two in a
/// run trimmed to its budget.
pub(crate) fn selection(scope: crate::view::Scope) -> crate::probes::pairs::Selection {
    use crate::probes::pairs::{SAMPLE_ABOVE, Selection};
    if scope.all_pairs {
        Selection::All
    } else if scope.trim >= crate::view::Trim::Pairs {
        Selection::ByClass { above: 2 }
    } else {
        Selection::ByClass {
            above: SAMPLE_ABOVE,
        }
    }
}

/// `selection` as the per-pair commands' flags.
pub(crate) fn selection_args(selection: crate::probes::pairs::Selection) -> Vec<String> {
    use crate::probes::pairs::Selection;
    match selection {
        Selection::All => vec!["--all-pairs".into()],
        Selection::ByClass { above } => vec!["--sample-above".into(), above.to_string()],
    }
}

/// A workload part's plan: `runs` runs of about `each_s` seconds each,
/// no buffer of its own built before them (its processes map their own).
pub(crate) fn workload_plan(measures: String, runs: usize, each_s: f64) -> crate::view::PartPlan {
    let mut e = crate::probes::cost::Estimate::default();
    e.add(runs as f64 * each_s);
    e.plan(measures)
}

pub(crate) fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

/// "local X, remote Y-Z" over `recs`' `key` (remote left out on one node).
pub(crate) fn local_remote(recs: &[&Record], key: &str, unit: &str, digits: usize) -> String {
    let pick = |want_local: bool| -> Vec<f64> {
        recs.iter()
            .filter(|r| r.is_local() == want_local && r.u64_param(param::MEM_NODE).is_some())
            .filter_map(|r| r.value(key))
            .collect()
    };
    let span = |v: &[f64]| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let s = if (hi - lo).abs() < 10f64.powi(-(digits as i32)) {
            format!("{lo:.digits$} {unit}")
        } else {
            format!("{lo:.digits$}-{hi:.digits$} {unit}")
        };
        s.trim_end().to_string()
    };
    let (l, r) = (pick(true), pick(false));
    let mut out = if l.is_empty() {
        "local -".to_string()
    } else {
        format!("local {}", span(&l))
    };
    if !r.is_empty() {
        out.push_str(&format!(", remote {}", span(&r)));
    }
    out
}

#[cfg(test)]
#[path = "part_tests.rs"]
mod tests;
