//! The kernel's side of tiering: which node is fast and which slow (from
//! its memory tiers), whether this machine and kernel can tier at all, the
//! settings in force, and the /proc/vmstat counters of promotion and
//! demotion.

use crate::error::usage;
use crate::ids::CpuSet;
use crate::results::names::metric;
use crate::results::names::tier::metric as tm;
use crate::topology::Topology;
use anyhow::Result;
use std::collections::BTreeMap;

/// The two nodes a test moves memory between, and the CPUs that use it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Tiers {
    pub fast: usize,
    pub slow: usize,
    pub fast_tier: u32,
    pub slow_tier: u32,
    /// The node whose CPUs run the workers: the fast node, or the CPU node
    /// nearest to it where it has none.
    pub cpu_node: usize,
    pub cpus: CpuSet,
}

/// What to do on a machine that cannot tier.
const WHAT_TIERS: &str = "tiering needs memory in a lower tier than the CPUs' memory (CXL or persistent memory, or a CPU-less node that HMAT reports slower) and Linux 6.1 or later (tiers from HMAT from 6.6)";

/// The fast and slow node a test uses: the first node with usable memory
/// in the top tier (one with CPUs this process may use, if any) and its
/// preferred demotion target. Exit 2 with one line where there is none.
pub(crate) fn find(topo: &Topology) -> Result<Tiers> {
    if topo.memory_tiers.is_empty() {
        return Err(usage(format!(
            "tier: this kernel shows no memory tiers (/sys/devices/virtual/memory_tiering is missing or empty; kernel {}); {WHAT_TIERS}",
            topo.kernel
        )));
    }
    let usable = topo.usable_memory_nodes();
    let tiered: Vec<usize> = topo
        .memory_tiers
        .iter()
        .filter(|t| t.nodes.iter().any(|n| usable.contains(n)))
        .map(|t| t.id as usize)
        .collect();
    if tiered.len() < 2 {
        let list: Vec<String> = topo
            .memory_tiers
            .iter()
            .map(|t| format!("tier {}: node(s) {}", t.id, t.nodes))
            .collect();
        return Err(usage(format!(
            "tier: this machine cannot tier: its usable memory is in one memory tier ({}); {WHAT_TIERS}",
            list.join("; ")
        )));
    }
    let top = &topo.memory_tiers[0];
    let with_cpus = |n: &usize| {
        topo.node(*n)
            .is_some_and(|node| !node.cpus.intersection(&topo.allowed.cpus).is_empty())
    };
    let candidates: Vec<usize> = top.nodes.iter().filter(|n| usable.contains(*n)).collect();
    let fast = candidates
        .iter()
        .copied()
        .find(with_cpus)
        .or(candidates.first().copied())
        .ok_or_else(|| usage("tier: no node of the top memory tier may be used by this process"))?;
    let slow = topo
        .demotion_targets(fast)
        .into_iter()
        .find(|n| usable.contains(*n))
        .ok_or_else(|| {
            usage(format!(
                "tier: node {fast} has no lower-tier node this process may use"
            ))
        })?;
    let cpu_node = if with_cpus(&fast) {
        fast
    } else {
        let mut by_distance: Vec<(u32, usize)> = topo
            .nodes
            .iter()
            .filter(|n| with_cpus(&n.id))
            .map(|n| (topo.distance(fast, n.id).unwrap_or(u32::MAX), n.id))
            .collect();
        by_distance.sort_unstable();
        by_distance
            .first()
            .map(|x| x.1)
            .ok_or_else(|| usage("tier: this process may use no CPU of any node"))?
    };
    let cpus = topo
        .node(cpu_node)
        .map(|n| n.cpus.intersection(&topo.allowed.cpus))
        .unwrap_or_default();
    Ok(Tiers {
        fast,
        slow,
        fast_tier: topo.node(fast).and_then(|n| n.tier).unwrap_or(0),
        slow_tier: topo.node(slow).and_then(|n| n.tier).unwrap_or(0),
        cpu_node,
        cpus,
    })
}

/// Files of the kernel's tiering and NUMA-balancing settings, by the name
/// a record keeps them under. debugfs ones are readable by root only.
const SETTINGS: [(&str, &str); 8] = [
    ("numa_balancing", "/proc/sys/kernel/numa_balancing"),
    (
        "numa_balancing_promote_rate_limit_MBps",
        "/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps",
    ),
    ("demotion_enabled", "/sys/kernel/mm/numa/demotion_enabled"),
    (
        "hot_threshold_ms",
        "/sys/kernel/debug/sched/numa_balancing/hot_threshold_ms",
    ),
    (
        "scan_delay_ms",
        "/sys/kernel/debug/sched/numa_balancing/scan_delay_ms",
    ),
    (
        "scan_period_min_ms",
        "/sys/kernel/debug/sched/numa_balancing/scan_period_min_ms",
    ),
    (
        "scan_period_max_ms",
        "/sys/kernel/debug/sched/numa_balancing/scan_period_max_ms",
    ),
    (
        "scan_size_mb",
        "/sys/kernel/debug/sched/numa_balancing/scan_size_mb",
    ),
];

/// The settings in force now, those that could be read (short values
/// only, control characters made visible).
pub(crate) fn settings() -> BTreeMap<String, String> {
    SETTINGS
        .iter()
        .filter_map(|(name, path)| {
            let text = std::fs::read_to_string(path).ok()?;
            let v = text.trim();
            (v.len() <= 64).then(|| (name.to_string(), crate::text::escape(v).into_owned()))
        })
        .collect()
}

/// The NUMA balancing mode of `settings`: 0 off, 1 normal, 2 tiering, 3 both.
pub(crate) fn mode(settings: &BTreeMap<String, String>) -> Option<u32> {
    settings.get("numa_balancing")?.parse().ok()
}

pub(crate) fn demotion_enabled(settings: &BTreeMap<String, String>) -> Option<bool> {
    match settings.get("demotion_enabled")?.as_str() {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}

/// Whether mode `m` promotes pages from a lower tier.
pub(crate) fn promotes(m: Option<u32>) -> bool {
    m.is_some_and(|m| m & 2 != 0)
}

/// The counters read, in the order reported: promotion, demotion, the
/// allocation stalls of reclaim, and NUMA balancing's own.
pub(crate) const KEYS: [&str; 9] = [
    tm::PGPROMOTE_SUCCESS,
    tm::PGPROMOTE_CANDIDATE,
    tm::PGDEMOTE_KSWAPD,
    tm::PGDEMOTE_DIRECT,
    tm::PGDEMOTE_KHUGEPAGED,
    tm::ALLOCSTALL_NORMAL,
    tm::ALLOCSTALL_MOVABLE,
    metric::NUMA_HINT_FAULTS,
    metric::NUMA_PAGES_MIGRATED,
];

pub(crate) use crate::procfs::vmstat::{Counters, delta};

#[cfg(test)]
fn parse_vmstat(text: &str) -> Counters {
    crate::procfs::vmstat::parse(text, &KEYS)
}

pub(crate) fn read_vmstat() -> Counters {
    crate::procfs::vmstat::read(&KEYS)
}

/// Pages demoted, by any path.
pub(crate) fn demoted(c: &Counters) -> u64 {
    [
        tm::PGDEMOTE_KSWAPD,
        tm::PGDEMOTE_DIRECT,
        tm::PGDEMOTE_KHUGEPAGED,
    ]
    .iter()
    .filter_map(|k| c.get(*k))
    .sum()
}

pub(crate) fn promoted(c: &Counters) -> u64 {
    c.get(tm::PGPROMOTE_SUCCESS).copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_node_cannot_tier() {
        let topo = crate::topology::fixture("local-1node");
        let e = find(&topo).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        let line = e.to_string();
        assert!(line.starts_with("tier: "), "{line}");
        assert!(!line.contains('\n'));
    }

    #[test]
    fn a_cpu_less_lower_tier_is_the_slow_node() {
        let topo = crate::topology::fixture("cxl-memonly");
        let t = find(&topo).unwrap();
        assert_ne!(t.fast, t.slow);
        assert!(t.fast_tier < t.slow_tier, "{t:?}");
        assert!(!t.cpus.is_empty());
        assert_eq!(topo.node(t.slow).unwrap().tier, Some(t.slow_tier));
    }

    #[test]
    fn vmstat_counters_parse_and_subtract() {
        let a = parse_vmstat("pgpromote_success 10\npgdemote_kswapd 5\nnr_free_pages 9\n");
        let b = parse_vmstat("pgpromote_success 25\npgdemote_kswapd 5\npgdemote_direct 2\n");
        assert_eq!(a.len(), 2);
        let d = delta(&a, &b);
        assert_eq!(promoted(&d), 15);
        assert_eq!(demoted(&d), 0);
        assert!(!d.contains_key("pgdemote_direct"));
        assert!(promotes(Some(2)) && promotes(Some(3)));
        assert!(!promotes(Some(1)) && !promotes(Some(0)) && !promotes(None));
    }
}
