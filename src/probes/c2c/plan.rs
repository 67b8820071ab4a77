//! Which CPU pairs are measured, and what each pair shares: the class of a
//! pair comes from the topology (SMT siblings, L3 caches, nodes), and on a
//! machine with many CPUs a deterministic sample of the pairs stands for
//! all of them, a few from each (class, node pair) group, spread over as
//! many CPUs as the group has.

use crate::results::names::c2c::class;
use crate::topology::Topology;
use std::collections::{BTreeMap, HashMap};

/// What a pair is grouped by when pairs are sampled: its class and its two
/// nodes, lower first.
pub(crate) type GroupKey = (PairClass, Option<usize>, Option<usize>);

/// What two CPUs share, closest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum PairClass {
    /// Two hardware threads of one core.
    Smt,
    /// Different cores under one L3 cache.
    SameL3,
    /// One NUMA node, no shared L3 (or no L3 known).
    SameNode,
    /// Different NUMA nodes of one package (SNC, NPS).
    SamePackage,
    /// Different NUMA nodes in different packages (or packages unknown).
    Remote,
}

impl PairClass {
    pub(crate) const ALL: [PairClass; 5] = [
        PairClass::Smt,
        PairClass::SameL3,
        PairClass::SameNode,
        PairClass::SamePackage,
        PairClass::Remote,
    ];

    /// The name records give it (`class` param).
    pub(crate) fn name(self) -> &'static str {
        match self {
            PairClass::Smt => class::SMT,
            PairClass::SameL3 => class::SAME_L3,
            PairClass::SameNode => class::SAME_NODE,
            PairClass::SamePackage => class::SAME_PACKAGE,
            PairClass::Remote => class::REMOTE,
        }
    }

    pub(crate) fn parse(text: &str) -> Option<PairClass> {
        Self::ALL.into_iter().find(|c| c.name() == text)
    }
}

/// Two CPUs to measure, `a < b` as planned, with their nodes and class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pair {
    pub a: usize,
    pub b: usize,
    pub node_a: Option<usize>,
    pub node_b: Option<usize>,
    pub class: PairClass,
}

impl Pair {
    /// The group the pair belongs to.
    pub(crate) fn group(&self) -> GroupKey {
        let (lo, hi) = (self.node_a.min(self.node_b), self.node_a.max(self.node_b));
        (self.class, lo, hi)
    }

    /// The same two CPUs the other way round: for the read variants, which
    /// time one direction only (`a` reads from `b`'s cache).
    pub(crate) fn reversed(self) -> Pair {
        Pair {
            a: self.b,
            b: self.a,
            node_a: self.node_b,
            node_b: self.node_a,
            class: self.class,
        }
    }
}

/// The class of CPUs `a` and `b` on `topo`.
pub(crate) fn classify(topo: &Topology, a: usize, b: usize) -> PairClass {
    let cpu_a = topo.cpu(a);
    if cpu_a.is_some_and(|c| c.smt_siblings.contains(b)) {
        return PairClass::Smt;
    }
    let node = |c: usize| topo.cpu(c).and_then(|c| c.node);
    if node(a) != node(b) {
        let package = |c: usize| topo.cpu(c).and_then(|c| c.package);
        return match (package(a), package(b)) {
            (Some(x), Some(y)) if x == y => PairClass::SamePackage,
            _ => PairClass::Remote,
        };
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
pub(crate) struct Plan {
    pub pairs: Vec<Pair>,
    /// Pairs of the CPUs given: more than `pairs` when sampled.
    pub total_pairs: usize,
    pub sampled: bool,
    /// Most pairs measured per (class, node pair) group when sampled.
    pub per_group: usize,
    /// Pairs of the CPUs given in each group: what the group's measured
    /// pairs stand for.
    pub group_pairs: BTreeMap<GroupKey, usize>,
}

impl Plan {
    /// Pairs of the CPUs given in `pair`'s group (1 for a pair not planned).
    pub(crate) fn group_pairs_of(&self, pair: &Pair) -> usize {
        self.group_pairs.get(&pair.group()).copied().unwrap_or(1)
    }
}

/// Every pair of `cpus` (ascending, distinct) where there are at most
/// `full_up_to` CPUs; else, from each (class, node, node) group, up to
/// `per_group` pairs chosen by [`spread`]. Either way the pairs come in
/// rounds: the first pair of every group, then the second of every group,
/// ..., so that a run cut short by its time limit still has every group it
/// reached.
pub(crate) fn plan(topo: &Topology, cpus: &[usize], full_up_to: usize, per_group: usize) -> Plan {
    let mut groups: BTreeMap<GroupKey, Vec<Pair>> = BTreeMap::new();
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
            groups.entry(pair.group()).or_default().push(pair);
            total += 1;
        }
    }
    let sampled = cpus.len() > full_up_to;
    let group_pairs = groups.iter().map(|(k, g)| (*k, g.len())).collect();
    let mut uses = HashMap::new();
    let chosen: Vec<Vec<Pair>> = groups
        .into_values()
        .map(|g| {
            if sampled {
                spread(&g, per_group, &mut uses)
            } else {
                g
            }
        })
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
        group_pairs,
    }
}

/// Up to `n` pairs of a group (in CPU order), each the pair whose two CPUs
/// the sample has used least so far (`uses`, over every group), nearest
/// the evenly spaced position `k * len / n` among those. Evenly spaced
/// positions alone would keep one end: in CPU order the pairs of CPUs 0-7
/// with 8-15 run (0,8), (0,9), ... and every fourth of them is a pair with
/// CPU 8.
fn spread(pairs: &[Pair], n: usize, uses: &mut HashMap<usize, usize>) -> Vec<Pair> {
    if pairs.len() <= n {
        for p in pairs {
            *uses.entry(p.a).or_default() += 1;
            *uses.entry(p.b).or_default() += 1;
        }
        return pairs.to_vec();
    }
    let mut taken = vec![false; pairs.len()];
    let mut out = Vec::with_capacity(n);
    for k in 0..n {
        let target = k * pairs.len() / n;
        let used = |p: &Pair| uses.get(&p.a).unwrap_or(&0) + uses.get(&p.b).unwrap_or(&0);
        let Some(i) = (0..pairs.len())
            .filter(|&i| !taken[i])
            .min_by_key(|&i| (used(&pairs[i]), i.abs_diff(target), i < target))
        else {
            break;
        };
        taken[i] = true;
        *uses.entry(pairs[i].a).or_default() += 1;
        *uses.entry(pairs[i].b).or_default() += 1;
        out.push(pairs[i]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::fixture;
    use std::collections::BTreeSet;

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
            let package = |c: usize| topo.cpu(c).unwrap().package.unwrap();
            let same_package = package(pair.a) == package(pair.b);
            let apart = [PairClass::SamePackage, PairClass::Remote].contains(&pair.class);
            assert_eq!(apart, !same_node, "{pair:?}");
            if !same_node {
                assert_eq!(
                    pair.class == PairClass::SamePackage,
                    same_package,
                    "{pair:?}"
                );
            }
            let sib = topo.cpu(pair.a).unwrap().smt_siblings.contains(pair.b);
            assert_eq!(pair.class == PairClass::Smt, sib, "{pair:?}");
        }
    }

    #[test]
    fn nodes_of_one_package_are_told_from_other_packages() {
        // amd-4node: two packages of two nodes each.
        let topo = fixture("amd-4node");
        let p = plan(&topo, &cpus(&topo), 64, 4);
        let nodes = |c: PairClass| -> BTreeSet<(usize, usize)> {
            p.pairs
                .iter()
                .filter(|x| x.class == c)
                .map(|x| (x.node_a.unwrap(), x.node_b.unwrap()))
                .collect()
        };
        assert_eq!(
            nodes(PairClass::SamePackage),
            BTreeSet::from([(0, 1), (2, 3)])
        );
        assert_eq!(
            nodes(PairClass::Remote),
            BTreeSet::from([(0, 2), (0, 3), (1, 2), (1, 3)])
        );
        // Without package ids, other nodes are remote.
        let mut bare = topo.clone();
        for c in &mut bare.cpus {
            c.package = None;
        }
        assert_eq!(classify(&topo, 0, 8), PairClass::SamePackage);
        assert_eq!(classify(&bare, 0, 8), PairClass::Remote);
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
        // What each group's pairs stand for adds up to every pair.
        assert_eq!(s.group_pairs.values().sum::<usize>(), s.total_pairs);
        assert_eq!(s.group_pairs, full.group_pairs);
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
    fn a_sample_spreads_over_both_ends_of_a_group() {
        // CPUs 0-7 with 8-15: 64 pairs, 4 to pick.
        let pairs: Vec<Pair> = (0..8)
            .flat_map(|a| {
                (8..16).map(move |b| Pair {
                    a,
                    b,
                    node_a: Some(0),
                    node_b: Some(1),
                    class: PairClass::Remote,
                })
            })
            .collect();
        let mut uses = HashMap::new();
        let got = spread(&pairs, 4, &mut uses);
        let ends = |ps: &[Pair]| {
            let a: BTreeSet<usize> = ps.iter().map(|p| p.a).collect();
            let b: BTreeSet<usize> = ps.iter().map(|p| p.b).collect();
            (a, b)
        };
        let (a, b) = ends(&got);
        assert_eq!((a.len(), b.len()), (4, 4), "{got:?}");
        assert_eq!((got[0].a, got[0].b), (0, 8));
        // The next pick avoids the CPUs used so far where it can.
        let again = spread(&pairs, 2, &mut uses);
        for p in &again {
            assert!(
                !a.contains(&p.a) && !b.contains(&p.b),
                "{p:?} after {got:?}"
            );
        }
        // A group no larger than asked for is taken whole.
        assert_eq!(spread(&pairs[..3], 4, &mut uses), pairs[..3]);
        for c in PairClass::ALL {
            assert_eq!(PairClass::parse(c.name()), Some(c));
        }
    }
}
