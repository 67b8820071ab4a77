//! Which CPUs a team of threads uses, and whose memory each one gets.

use super::team::Seat;
use crate::ids::NodeSet;
use crate::topology::Topology;

/// `n` seats spread over the nodes this process may run on, round robin, so
/// every memory controller gets work; within a node one thread per
/// physical core comes before any SMT sibling. Each thread's memory is its
/// own node's, or the nearest node with memory when its node has none.
pub(crate) fn spread(topo: &Topology, n: usize) -> Vec<Seat> {
    let per_node: Vec<(usize, Vec<usize>)> = topo
        .usable_cpu_nodes()
        .iter()
        .map(|node| (node, topo.cores_first(&topo.usable_cpus_of(node))))
        .collect();
    let mut seats = Vec::with_capacity(n);
    let mut round = 0;
    while seats.len() < n {
        let before = seats.len();
        for (node, cpus) in &per_node {
            if seats.len() == n {
                break;
            }
            if let Some(&cpu) = cpus.get(round) {
                seats.push(Seat {
                    cpu,
                    node: memory_node_for(topo, *node),
                });
            }
        }
        if seats.len() == before {
            break;
        }
        round += 1;
    }
    seats
}

/// How a team's threads are placed on CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Placing {
    /// numabench's own: [`spread`].
    #[default]
    Nodes,
    /// OpenMP's rules for a parallel region with this binding policy over
    /// these places (`OMP_PROC_BIND`, `OMP_PLACES`).
    Omp { bind: Bind, places: Places },
}

/// OpenMP's thread affinity policies numabench follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bind {
    /// Threads spaced evenly over the places.
    Spread,
    /// Threads on consecutive places from the first.
    Close,
}

/// OpenMP's abstract place names numabench follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Places {
    /// Each hardware thread.
    Threads,
    /// Each physical core: its hardware threads.
    Cores,
    /// Each package: its CPUs.
    Sockets,
}

/// `n` seats placed by `placing`.
pub(crate) fn place(topo: &Topology, n: usize, placing: Placing) -> Vec<Seat> {
    match placing {
        Placing::Nodes => spread(topo, n),
        Placing::Omp { bind, places } => omp(topo, n, bind, places),
    }
}

/// The places of `kind` over the CPUs this process may use, each place's
/// CPUs in number order and the places in the order of their first CPU, as
/// an OpenMP runtime lists them.
pub(crate) fn places(topo: &Topology, kind: Places) -> Vec<Vec<usize>> {
    let mut usable: Vec<usize> = topo
        .usable_cpu_nodes()
        .iter()
        .flat_map(|n| topo.usable_cpus_of(n).iter().collect::<Vec<_>>())
        .collect();
    usable.sort_unstable();
    let key = |cpu: usize| -> String {
        let c = topo.cpu(cpu);
        match kind {
            Places::Threads => cpu.to_string(),
            Places::Cores => c.map_or_else(|| cpu.to_string(), |c| c.smt_siblings.to_list()),
            Places::Sockets => c
                .and_then(|c| c.package)
                .map_or_else(|| format!("cpu{cpu}"), |p| format!("package{p}")),
        }
    };
    let mut keys: Vec<String> = Vec::new();
    let mut out: Vec<Vec<usize>> = Vec::new();
    for cpu in usable {
        let k = key(cpu);
        match keys.iter().position(|x| *x == k) {
            Some(i) => out[i].push(cpu),
            None => {
                keys.push(k);
                out.push(vec![cpu]);
            }
        }
    }
    out
}

/// OpenMP's placement of `n` threads: with no more threads than places,
/// `close` puts thread i on place i and `spread` on the first place of the
/// i-th of n equal parts of the place list; with more, both give each
/// place an equal run of consecutive threads. Threads sharing a place take
/// its CPUs in turn (cores first within a package); at most one thread per
/// usable CPU.
fn omp(topo: &Topology, n: usize, bind: Bind, kind: Places) -> Vec<Seat> {
    let list = places(topo, kind);
    let p = list.len();
    let n = n.min(list.iter().map(Vec::len).sum::<usize>());
    let mut used = vec![0usize; p];
    let mut seats = Vec::with_capacity(n);
    for i in 0..n {
        let at = match bind {
            Bind::Close if n <= p => i,
            _ => i * p / n,
        };
        let cpus = if kind == Places::Sockets {
            topo.cores_first(&crate::ids::CpuSet::from_ids(list[at].iter().copied()))
        } else {
            list[at].clone()
        };
        let cpu = cpus[used[at] % cpus.len()];
        used[at] += 1;
        let node = topo.cpu(cpu).and_then(|c| c.node).unwrap_or(0);
        seats.push(Seat {
            cpu,
            node: memory_node_for(topo, node),
        });
    }
    seats
}

/// The node itself if it has memory this process may use, else the nearest
/// one by SLIT distance.
pub(crate) fn memory_node_for(topo: &Topology, node: usize) -> usize {
    let usable = topo.usable_memory_nodes();
    if usable.contains(node) {
        return node;
    }
    usable
        .iter()
        .min_by_key(|&m| (topo.distance(node, m).unwrap_or(u32::MAX), m))
        .unwrap_or(node)
}

/// Every CPU this process may use.
pub(crate) fn max_threads(topo: &Topology) -> usize {
    topo.usable_cpu_nodes()
        .iter()
        .map(|n| topo.usable_cpus_of(n).len())
        .sum()
}

/// The CPUs of `node` this process may use, one per physical core first.
pub(crate) fn node_cpus(topo: &Topology, node: usize) -> Vec<usize> {
    topo.cores_first(&topo.usable_cpus_of(node))
}

/// The nodes measured: usable ones, restricted to `only`.
pub(crate) fn nodes(all: NodeSet, only: &Option<NodeSet>) -> Vec<usize> {
    all.iter()
        .filter(|n| only.as_ref().is_none_or(|o| o.contains(*n)))
        .collect()
}

/// The CPU a node's chase runs on: its first usable core.
pub(crate) fn first_cpu(topo: &Topology, node: usize) -> Option<usize> {
    topo.cores_first(&topo.usable_cpus_of(node))
        .first()
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::fixture as topo;

    #[test]
    fn spreads_over_nodes_then_cores_before_siblings() {
        let t = topo("interleaved-smt");
        let cpus: Vec<usize> = spread(&t, 4).iter().map(|s| s.cpu).collect();
        assert_eq!(cpus, [0, 8, 1, 9]);
        let all = spread(&t, 32);
        assert_eq!(all.len(), 32);
        // The 17th and later threads are SMT siblings (16-31), never before.
        assert!(all[..16].iter().all(|s| s.cpu < 16));
        assert!(
            all.iter()
                .all(|s| s.node == t.cpu(s.cpu).unwrap().node.unwrap())
        );
        assert_eq!(spread(&t, 100).len(), 32);
    }

    #[test]
    fn honours_the_cpuset() {
        let t = topo("cpuset-restricted");
        let seats = spread(&t, 6);
        assert_eq!(
            seats.iter().map(|s| s.cpu).collect::<Vec<_>>(),
            [2, 10, 3, 11, 4, 5]
        );
        assert_eq!(max_threads(&t), 6);
        // Node 0 is not allowed for memory: its threads use node 1.
        assert!(seats.iter().all(|s| s.node == 1));
    }

    #[test]
    fn openmp_close_fills_places_in_order_and_spread_spaces_them() {
        let t = topo("interleaved-smt");
        let cpus = |bind, places, n| -> Vec<usize> {
            place(&t, n, Placing::Omp { bind, places })
                .iter()
                .map(|s| s.cpu)
                .collect()
        };
        let cores = places(&t, Places::Cores);
        assert_eq!(cores.len(), 16);
        assert!(cores.iter().all(|c| c.len() == 2));
        let first = |i: usize| cores[i][0];
        // 4 threads on 16 cores: close takes the first four, spread every
        // fourth.
        assert_eq!(
            cpus(Bind::Close, Places::Cores, 4),
            (0..4).map(first).collect::<Vec<_>>()
        );
        assert_eq!(
            cpus(Bind::Spread, Places::Cores, 4),
            [0, 4, 8, 12].map(first).to_vec()
        );
        // 32 threads on 16 cores: two per core, the core's two hardware
        // threads.
        let all = cpus(Bind::Close, Places::Cores, 32);
        assert_eq!(all[..2], cores[0][..]);
        let mut sorted = all.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 32);
        // Hardware threads as places: close is CPU number order.
        assert_eq!(cpus(Bind::Close, Places::Threads, 3), [0, 1, 2]);
        // Never more seats than CPUs; memory on each thread's own node.
        assert_eq!(cpus(Bind::Spread, Places::Sockets, 100).len(), 32);
        for s in place(
            &t,
            8,
            Placing::Omp {
                bind: Bind::Spread,
                places: Places::Sockets,
            },
        ) {
            assert_eq!(Some(s.node), t.cpu(s.cpu).unwrap().node);
        }
        // Without OpenMP's variables, numabench's own.
        assert_eq!(place(&t, 4, Placing::Nodes), spread(&t, 4));
    }

    #[test]
    fn big_machine_uses_every_node() {
        let t = topo("big-16node");
        let seats = spread(&t, 16);
        let nodes: Vec<usize> = seats.iter().map(|s| s.node).collect();
        assert_eq!(nodes, (0..16).collect::<Vec<_>>());
    }
}
