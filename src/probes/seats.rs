//! Which CPUs a team of threads uses, and whose memory each one gets.

use super::team::Seat;
use crate::topology::Topology;

/// `n` seats spread over the nodes this process may run on, round robin, so
/// every memory controller gets work; within a node one thread per
/// physical core comes before any SMT sibling. Each thread's memory is its
/// own node's, or the nearest node with memory when its node has none.
pub fn spread(topo: &Topology, n: usize) -> Vec<Seat> {
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

/// The node itself if it has memory this process may use, else the nearest
/// one by SLIT distance.
pub fn memory_node_for(topo: &Topology, node: usize) -> usize {
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
pub fn max_threads(topo: &Topology) -> usize {
    topo.usable_cpu_nodes()
        .iter()
        .map(|n| topo.usable_cpus_of(n).len())
        .sum()
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
    fn big_machine_uses_every_node() {
        let t = topo("big-16node");
        let seats = spread(&t, 16);
        let nodes: Vec<usize> = seats.iter().map(|s| s.node).collect();
        assert_eq!(nodes, (0..16).collect::<Vec<_>>());
    }
}
