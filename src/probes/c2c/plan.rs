//! Which CPU pairs are measured, and what each pair shares: the class of a
//! pair comes from the topology (SMT siblings, L3 caches, nodes), and on a
//! machine with many CPUs a deterministic sample of the pairs stands for
//! all of them, a few from each (class, node pair) group.

use crate::results::names::c2c::class;
use crate::topology::Topology;
use std::collections::BTreeMap;

/// What two CPUs share, closest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PairClass {
    /// Two hardware threads of one core.
    Smt,
    /// Different cores under one L3 cache.
    SameL3,
    /// One NUMA node, no shared L3 (or no L3 known).
    SameNode,
    /// Different NUMA nodes.
    Remote,
}

impl PairClass {
    pub const ALL: [PairClass; 4] = [
        PairClass::Smt,
        PairClass::SameL3,
        PairClass::SameNode,
        PairClass::Remote,
    ];

    /// The name records give it (`class` param).
    pub fn name(self) -> &'static str {
        match self {
            PairClass::Smt => class::SMT,
            PairClass::SameL3 => class::SAME_L3,
            PairClass::SameNode => class::SAME_NODE,
            PairClass::Remote => class::REMOTE,
        }
    }

    pub fn parse(text: &str) -> Option<PairClass> {
        Self::ALL.into_iter().find(|c| c.name() == text)
    }
}

/// Two CPUs to measure, `a < b`, with their nodes and class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pair {
    pub a: usize,
    pub b: usize,
    pub node_a: Option<usize>,
    pub node_b: Option<usize>,
    pub class: PairClass,
}

/// The class of CPUs `a` and `b` on `topo`.
pub fn classify(topo: &Topology, a: usize, b: usize) -> PairClass {
    let cpu_a = topo.cpu(a);
    if cpu_a.is_some_and(|c| c.smt_siblings.contains(b)) {
        return PairClass::Smt;
    }
    let node = |c: usize| topo.cpu(c).and_then(|c| c.node);
    if node(a) != node(b) {
        return PairClass::Remote;
    }
    let shared_l3 = topo
        .caches
        .iter()
        .any(|c| c.level == 3 && c.cpus.contains(a) && c.cpus.contains(b));
    if shared_l3 {
        PairClass::SameL3
    } else {
        PairClass::SameNode
    }
}

/// The pairs to measure and whether they are all of them.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub pairs: Vec<Pair>,
    /// Pairs of the CPUs given: more than `pairs` when sampled.
    pub total_pairs: usize,
    pub sampled: bool,
    /// Most pairs measured per (class, node pair) group when sampled.
    pub per_group: usize,
}

/// Every pair of `cpus` (ascending, distinct) where there are at most
/// `full_up_to` CPUs; else, from each (class, node, node) group, up to
/// `per_group` pairs evenly spaced over the group's pairs in CPU order.
/// Either way the pairs come in rounds: the first pair of every group, then
/// the second of every group, ..., so that a run cut short by its time
/// limit still has every group it reached.
pub fn plan(topo: &Topology, cpus: &[usize], full_up_to: usize, per_group: usize) -> Plan {
    let mut groups: BTreeMap<(PairClass, Option<usize>, Option<usize>), Vec<Pair>> =
        BTreeMap::new();
    let mut total = 0;
    for (i, &a) in cpus.iter().enumerate() {
        for &b in &cpus[i + 1..] {
            let node = |c: usize| topo.cpu(c).and_then(|c| c.node);
            let pair = Pair {
                a,
                b,
                node_a: node(a),
                node_b: node(b),
                class: classify(topo, a, b),
            };
            let (lo, hi) = (pair.node_a.min(pair.node_b), pair.node_a.max(pair.node_b));
            groups.entry((pair.class, lo, hi)).or_default().push(pair);
            total += 1;
        }
    }
    let sampled = cpus.len() > full_up_to;
    let chosen: Vec<Vec<Pair>> = groups
        .into_values()
        .map(|g| if sampled { spaced(&g, per_group) } else { g })
        .collect();
    let mut pairs = Vec::new();
    let longest = chosen.iter().map(Vec::len).max().unwrap_or(0);
    for round in 0..longest {
        pairs.extend(chosen.iter().filter_map(|g| g.get(round).copied()));
    }
    Plan {
        pairs,
        total_pairs: total,
        sampled,
        per_group,
    }
}

/// Up to `n` items of `items`, evenly spaced, the first always included.
fn spaced<T: Copy>(items: &[T], n: usize) -> Vec<T> {
    if items.len() <= n {
        return items.to_vec();
    }
    (0..n).map(|k| items[k * items.len() / n]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::fixture;

    fn cpus(topo: &Topology) -> Vec<usize> {
        topo.cpus.iter().map(|c| c.id).collect()
    }

    #[test]
    fn every_pair_once_with_the_class_the_topology_gives() {
        let topo = fixture("amd-4node");
        let ids = cpus(&topo);
        let p = plan(&topo, &ids, 64, 4);
        let n = ids.len();
        assert!(!p.sampled);
        assert_eq!(p.pairs.len(), n * (n - 1) / 2);
        assert_eq!(p.total_pairs, p.pairs.len());
        for pair in &p.pairs {
            assert!(pair.a < pair.b);
            let same_node = pair.node_a == pair.node_b;
            assert_eq!(pair.class == PairClass::Remote, !same_node, "{pair:?}");
            let sib = topo.cpu(pair.a).unwrap().smt_siblings.contains(pair.b);
            assert_eq!(pair.class == PairClass::Smt, sib, "{pair:?}");
        }
    }

    #[test]
    fn smt_siblings_and_l3_sharers_are_told_apart() {
        let topo = fixture("interleaved-smt");
        let ids = cpus(&topo);
        let p = plan(&topo, &ids, 64, 4);
        let has = |c: PairClass| p.pairs.iter().any(|x| x.class == c);
        assert!(has(PairClass::Smt), "{:?}", p.pairs);
        for pair in p.pairs.iter().filter(|x| x.class == PairClass::SameL3) {
            assert!(
                topo.caches
                    .iter()
                    .any(|c| c.level == 3 && c.cpus.contains(pair.a) && c.cpus.contains(pair.b))
            );
        }
    }

    #[test]
    fn large_machines_are_sampled_per_group_deterministically() {
        let topo = fixture("big-16node");
        let ids = cpus(&topo);
        let full = plan(&topo, &ids, usize::MAX, 2);
        let s = plan(&topo, &ids, 4, 2);
        assert!(s.sampled && s.pairs.len() < full.pairs.len());
        assert_eq!(s.total_pairs, full.pairs.len());
        assert_eq!(s, plan(&topo, &ids, 4, 2), "not deterministic");
        // Every (class, node pair) group of the full plan is present.
        let key = |x: &Pair| (x.class, x.node_a.min(x.node_b), x.node_a.max(x.node_b));
        let groups = |p: &Plan| {
            let mut g: Vec<_> = p.pairs.iter().map(key).collect();
            g.sort();
            g.dedup();
            g
        };
        assert_eq!(groups(&full), groups(&s));
        for g in groups(&s) {
            let n = s.pairs.iter().filter(|x| key(x) == g).count();
            assert!((1..=2).contains(&n), "{g:?}: {n}");
        }
        // The first round holds one pair of every group.
        let first: Vec<_> = s.pairs[..groups(&s).len()].iter().map(key).collect();
        let mut sorted = first.clone();
        sorted.dedup();
        assert_eq!(first.len(), sorted.len());
    }

    #[test]
    fn spacing_keeps_the_first_and_spreads_the_rest() {
        assert_eq!(spaced(&[1, 2, 3, 4, 5, 6, 7, 8], 4), [1, 3, 5, 7]);
        assert_eq!(spaced(&[1, 2], 4), [1, 2]);
        for c in PairClass::ALL {
            assert_eq!(PairClass::parse(c.name()), Some(c));
        }
    }
}
