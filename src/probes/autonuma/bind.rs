//! The benchmark's baselines: every test run once more with its threads
//! and memory bound to the same node (HARD_BIND, the best placement) and
//! with its memory bound to the node farthest from its threads
//! (INVERSE_BIND, the worst), so that the test's own result reads as a
//! position between the two.
//!
//! A process's threads share a home node when they share its memory; tasks
//! with memory of their own are spread over the nodes in blocks. Homes go
//! round the nodes with usable CPUs; a home's memory node is its own (or
//! the nearest with memory) for HARD_BIND, the one at the largest SLIT
//! distance for INVERSE_BIND.

use super::shape::Shape;
use crate::ids::CpuSet;
use crate::probes::seats::memory_node_for;
use crate::probes::workload::layout::AreaPlacement;
use crate::topology::Topology;

/// How a run places its threads and memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Bind {
    /// Nothing bound: the kernel places (the test itself).
    Free,
    Hard,
    Inverse,
}

impl Bind {
    /// The two baselines, best first.
    pub(crate) const BASELINES: [Bind; 2] = [Bind::Hard, Bind::Inverse];

    /// Appended to the test's name: `numa01_HARD_BIND`.
    pub(crate) fn suffix(self) -> &'static str {
        match self {
            Bind::Free => "",
            Bind::Hard => "_HARD_BIND",
            Bind::Inverse => "_INVERSE_BIND",
        }
    }

    /// The value of a run record's `bind` param.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Bind::Free => "free",
            Bind::Hard => "hard_bind",
            Bind::Inverse => "inverse_bind",
        }
    }

    pub(crate) fn from_name(s: &str) -> Option<Bind> {
        [Bind::Free, Bind::Hard, Bind::Inverse]
            .into_iter()
            .find(|b| b.name() == s)
    }
}

/// Whether the baselines can differ here: two nodes with memory at least.
pub(crate) fn meaningful(topo: &Topology) -> bool {
    topo.usable_memory_nodes().len() >= 2
}

/// The home node (with CPUs) of every task, process by process.
pub(crate) fn homes(shape: &Shape, cpu_nodes: &[usize]) -> Vec<usize> {
    let n = cpu_nodes.len().max(1);
    let total = shape.processes * shape.threads;
    (0..total)
        .map(|t| {
            let slot = if shape.per_thread {
                t * n / total.max(1)
            } else {
                t / shape.threads.max(1) % n
            };
            cpu_nodes.get(slot).copied().unwrap_or(0)
        })
        .collect()
}

/// The node with usable memory farthest from `node`; ties go to the
/// lowest id.
pub(crate) fn farthest(topo: &Topology, node: usize) -> usize {
    topo.usable_memory_nodes()
        .iter()
        .max_by_key(|&m| (topo.distance(node, m).unwrap_or(0), std::cmp::Reverse(m)))
        .unwrap_or(node)
}

/// The memory node a task with home `node` is bound to.
pub(crate) fn memory_node(topo: &Topology, bind: Bind, node: usize) -> usize {
    match bind {
        Bind::Inverse => farthest(topo, node),
        _ => memory_node_for(topo, node),
    }
}

/// Each task's (CPUs, memory node) under `bind`; empty for [`Bind::Free`].
pub(crate) fn placement(topo: &Topology, bind: Bind, shape: &Shape) -> Vec<(CpuSet, usize)> {
    if bind == Bind::Free {
        return Vec::new();
    }
    let cpu_nodes: Vec<usize> = topo.usable_cpu_nodes().iter().collect();
    homes(shape, &cpu_nodes)
        .into_iter()
        .map(|h| (topo.usable_cpus_of(h), memory_node(topo, bind, h)))
        .collect()
}

/// The placement in words, for the plan's notes: which node's CPUs run
/// which tasks and where their memory is bound.
pub(crate) fn describe(topo: &Topology, bind: Bind, shape: &Shape) -> String {
    let cpu_nodes: Vec<usize> = topo.usable_cpu_nodes().iter().collect();
    let homes = homes(shape, &cpu_nodes);
    let mut pairs: Vec<(usize, usize, usize)> = Vec::new();
    for h in homes {
        let m = memory_node(topo, bind, h);
        match pairs.iter_mut().find(|p| p.0 == h) {
            Some(p) => p.2 += 1,
            None => pairs.push((h, m, 1)),
        }
    }
    let list: Vec<String> = pairs
        .iter()
        .map(|(h, m, n)| format!("{n} thread(s) on node {h}'s CPUs with memory on node {m}"))
        .collect();
    let what = match bind {
        Bind::Inverse => "the worst placement, memory on the farthest node",
        _ => "the best placement, memory on the threads' own node",
    };
    format!(
        "{}: {what}: {}; nothing for the kernel to move",
        bind.suffix().trim_start_matches('_'),
        list.join(", ")
    )
}

/// Percent of the bound memory's pages found on the node it was bound to,
/// from the areas' placement at the end of the run (`intended`: each
/// area's node).
pub(crate) fn on_bound_node_pct(areas: &[(Option<usize>, &AreaPlacement)]) -> Option<f64> {
    let (mut on, mut all) = (0u64, 0u64);
    for (node, a) in areas {
        let Some(node) = node else { continue };
        on += a.pages_by_node.get(node).copied().unwrap_or(0);
        all += a.pages_by_node.values().sum::<u64>();
    }
    (all > 0).then(|| on as f64 * 100.0 / all as f64)
}

/// Two baselines closer than this (percent of the larger) give no
/// position.
pub(crate) const APART_PCT: f64 = 1.0;

/// A test's result between its baselines.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Position {
    /// Seconds (fixed work) or GB/s (fixed time): what the three are
    /// compared by.
    pub by_rate: bool,
    pub value: f64,
    pub hard: f64,
    pub inverse: f64,
    /// 0% at INVERSE_BIND, 100% at HARD_BIND; `None` where the two are
    /// within [`APART_PCT`] of each other or the worst came out better.
    pub pct: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(processes: usize, threads: usize, per_thread: bool) -> Shape {
        Shape {
            processes,
            threads,
            mem_bytes: 1 << 30,
            per_thread,
        }
    }

    #[test]
    fn processes_sharing_memory_get_one_node_each_threads_are_spread() {
        // numa01 on 2 nodes: process 0 on node 0, process 1 on node 1.
        assert_eq!(homes(&shape(2, 3, false), &[0, 1]), [0, 0, 0, 1, 1, 1]);
        // PER_NODE on 4 nodes with interleaved ids.
        assert_eq!(homes(&shape(4, 1, false), &[0, 2, 4, 6]), [0, 2, 4, 6]);
        // numa02: 1 process, threads in blocks over the nodes.
        assert_eq!(homes(&shape(1, 4, true), &[0, 1]), [0, 0, 1, 1]);
        assert_eq!(homes(&shape(1, 3, true), &[0, 1]), [0, 0, 1]);
        // More processes than nodes go round.
        assert_eq!(homes(&shape(3, 1, false), &[0, 1]), [0, 1, 0]);
    }

    #[test]
    fn inverse_binds_to_the_farthest_node_hard_to_its_own() {
        let topo = crate::topology::fixture("amd-4node");
        let nodes: Vec<usize> = topo.usable_memory_nodes().iter().collect();
        assert!(nodes.len() >= 2, "{nodes:?}");
        for &n in &nodes {
            let far = farthest(&topo, n);
            assert_ne!(far, n);
            let d = topo.distance(n, far).unwrap();
            assert!(nodes.iter().all(|&m| topo.distance(n, m).unwrap() <= d));
            assert_eq!(memory_node(&topo, Bind::Hard, n), n);
        }
        let p = placement(&topo, Bind::Inverse, &shape(2, 2, false));
        assert_eq!(p.len(), 4);
        let cpu_nodes: Vec<usize> = topo.usable_cpu_nodes().iter().collect();
        for ((cpus, m), h) in p.iter().zip(homes(&shape(2, 2, false), &cpu_nodes)) {
            assert_eq!(*cpus, topo.usable_cpus_of(h));
            assert_eq!(*m, farthest(&topo, h));
        }
        assert!(placement(&topo, Bind::Free, &shape(2, 2, false)).is_empty());
        let d = describe(&topo, Bind::Hard, &shape(2, 2, false));
        assert!(d.starts_with("HARD_BIND: the best placement"), "{d}");
        assert!(d.contains("2 thread(s) on node"), "{d}");
    }

    #[test]
    fn one_node_has_no_meaningful_baselines() {
        let mut topo = crate::topology::fixture("two-node");
        assert!(meaningful(&topo));
        topo.nodes.truncate(1);
        topo.allowed.nodes = crate::ids::NodeSet::from_ids([topo.nodes[0].id]);
        assert!(!meaningful(&topo));
        assert_eq!(farthest(&topo, topo.nodes[0].id), topo.nodes[0].id);
    }

    #[test]
    fn names_round_trip() {
        for b in [Bind::Free, Bind::Hard, Bind::Inverse] {
            assert_eq!(Bind::from_name(b.name()), Some(b));
        }
        assert_eq!(Bind::Inverse.suffix(), "_INVERSE_BIND");
    }

    #[test]
    fn bound_pages_on_their_node_are_counted() {
        let a = |pages: &[(usize, u64)]| AreaPlacement {
            pages_by_node: pages.iter().copied().collect(),
            ..Default::default()
        };
        let (x, y) = (a(&[(0, 90), (1, 10)]), a(&[(1, 100)]));
        assert_eq!(
            on_bound_node_pct(&[(Some(0), &x), (Some(1), &y)]),
            Some(95.0)
        );
        assert_eq!(on_bound_node_pct(&[(None, &x)]), None);
    }
}
