//! Which (CPU node, memory node) pairs the per-pair probes measure.
//!
//! Measuring all N² pairs of a 32- or 64-node machine takes hours, and
//! most of them say the same thing: the SLIT distance puts every pair into
//! a class (local, same socket, one socket hop, two hops, CXL), and pairs
//! of one class go over the same kind of path. [`plan`] therefore measures,
//! above [`SAMPLE_ABOVE`] memory nodes:
//!
//! - every local pair (CPU node = memory node, or at the node's own
//!   distance, as firmware that lists one node twice has it): these are
//!   the figures each node is judged by, and there are only N of them;
//! - every pair whose memory node has no CPUs (CXL or HBM memory, one row
//!   per such node): the slow tiers are what the run is often about, and
//!   their distances say least about the path;
//! - every pair whose distance is unknown: it fits no class;
//! - of every other class, a spread sample of [`sample_size`] pairs,
//!   `max(2, ⌈√n⌉)` of its `n` pairs: at least two, so that the spot check
//!   has a spread to look at, and few enough that the samples of the
//!   classes together grow like N (a class holds up to N² pairs, its
//!   sample √(N²) = N), where measuring every pair grows like N². The
//!   sample is chosen greedily, each pick a pair whose CPU node and memory
//!   node (then their sockets) the sample has used least, ties going to
//!   the earlier pair: it covers as many CPU nodes, memory nodes and
//!   sockets as its size allows, and is the same on every run.
//!
//! Every other pair is inferred from its class's sample. [`class_holds`]
//! is the spot check of a sample's figures: when it fails, the class is
//! not one path after all (a mesh where distance hides the hop count), and
//! [`PairPlan::widen`] hands out the rest of the class to measure.

use crate::topology::Topology;
use std::collections::BTreeMap;

/// Memory nodes up to which every pair is measured by default: 8 nodes
/// are 64 pairs, minutes of measuring; 16 nodes (two sockets of SNC4 or
/// NPS4 and more) are 256, and sampling starts to pay.
pub(crate) const SAMPLE_ABOVE: usize = 8;

/// The most a class's sample may spread (max / min − 1) and still stand
/// for the class: pairs of one path differ by less than run-to-run noise
/// plus placement inside the node (a few %), while a second kind of path
/// in the class (an extra hop: 30% and more) shows far above it.
pub(crate) const CLASS_SPREAD: f64 = 0.10;

/// A (CPU node, memory node) pair.
pub(crate) type Pair = (usize, usize);

/// Which pairs to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Selection {
    /// Every pair.
    All,
    /// Sample the classes (see the module) when there are more than
    /// `above` memory nodes; every pair otherwise.
    ByClass { above: usize },
}

impl Default for Selection {
    fn default() -> Self {
        Self::ByClass {
            above: SAMPLE_ABOVE,
        }
    }
}

/// A pair left out, and the measured pairs its figure comes from: its
/// class's sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Inferred {
    pub(crate) pair: Pair,
    pub(crate) class_distance: u32,
    pub(crate) from: Vec<Pair>,
}

/// The pairs at one distance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Class {
    /// SLIT distance; `None` for pairs whose distance is unknown.
    pub(crate) distance: Option<u32>,
    pub(crate) pairs: usize,
    pub(crate) measured: usize,
}

/// Which pairs to measure, in order, and which are inferred from which.
/// Every pair of the CPU nodes and memory nodes planned for is in exactly
/// one of `measured` and `inferred`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PairPlan {
    /// In measuring order: by CPU node, then memory node, as given; pairs
    /// added by [`PairPlan::widen`] after them.
    pub(crate) measured: Vec<Pair>,
    /// In the same order.
    pub(crate) inferred: Vec<Inferred>,
    /// By distance, ascending; unknown distance last.
    pub(crate) classes: Vec<Class>,
}

/// How many pairs of a class of `pairs` are measured: `max(2, ⌈√pairs⌉)`,
/// or all of them when that is fewer.
pub(crate) fn sample_size(pairs: usize) -> usize {
    let mut root = (pairs as f64).sqrt() as usize;
    while root * root < pairs {
        root += 1;
    }
    root.max(2).min(pairs)
}

/// Whether a class's sample agrees well enough to stand for the class:
/// every figure finite and above 0 and the largest at most
/// [`CLASS_SPREAD`] above the smallest. Figures are one metric of the
/// sample's pairs (latency in ns, bandwidth in MB/s: a ratio suits both).
/// No figures (the pairs could not be measured) is no evidence: the class
/// does not hold.
pub(crate) fn class_holds(figures: &[f64]) -> bool {
    if figures.is_empty() || figures.iter().any(|f| !f.is_finite() || *f <= 0.0) {
        return false;
    }
    let min = figures.iter().copied().fold(f64::INFINITY, f64::min);
    let max = figures.iter().copied().fold(0.0, f64::max);
    max <= min * (1.0 + CLASS_SPREAD)
}

/// What decides a pair's fate.
enum Kind {
    /// Local, memory without CPUs, or unknown distance.
    Always,
    /// One of the class of this distance.
    Class(u32),
}

fn kind(topo: &Topology, (cpu, mem): Pair) -> Kind {
    let Some(d) = topo.distance(cpu, mem) else {
        return Kind::Always;
    };
    let local = cpu == mem || topo.distance(cpu, cpu) == Some(d);
    let memory_only = topo.node(mem).is_none_or(|n| n.cpus.is_empty());
    if local || memory_only {
        Kind::Always
    } else {
        Kind::Class(d)
    }
}

/// The socket of a node: its first CPU's package (`None` without one).
fn socket(topo: &Topology, node: usize) -> Option<u32> {
    let first = topo.node(node)?.cpus.first()?;
    topo.cpu(first)?.package
}

/// `ids` without repeats, in their order.
fn unique(ids: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(ids.len());
    for &id in ids {
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

/// The plan for `cpu_nodes` x `mem_nodes` (repeats ignored) under
/// `selection`.
pub(crate) fn plan(
    topo: &Topology,
    cpu_nodes: &[usize],
    mem_nodes: &[usize],
    selection: Selection,
) -> PairPlan {
    let mem_nodes = unique(mem_nodes);
    let all: Vec<Pair> = unique(cpu_nodes)
        .into_iter()
        .flat_map(|c| mem_nodes.iter().map(move |&m| (c, m)))
        .collect();
    let sampling = match selection {
        Selection::All => false,
        Selection::ByClass { above } => mem_nodes.len() > above,
    };
    let mut measure = vec![!sampling; all.len()];
    // Class distance -> indices into `all` of its pairs.
    let mut by_class: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, &pair) in all.iter().enumerate() {
        match kind(topo, pair) {
            Kind::Always => measure[i] = true,
            Kind::Class(d) => by_class.entry(d).or_default().push(i),
        }
    }
    let mut inferred = Vec::new();
    if sampling {
        let sockets: BTreeMap<usize, Option<u32>> = all
            .iter()
            .flat_map(|&(c, m)| [c, m])
            .map(|n| (n, socket(topo, n)))
            .collect();
        let mut sample_of = BTreeMap::new();
        for (&d, members) in &by_class {
            let picked = spread_sample(&all, members, &sockets);
            for &i in &picked {
                measure[i] = true;
            }
            sample_of.insert(d, picked.iter().map(|&i| all[i]).collect::<Vec<_>>());
        }
        for (i, &pair) in all.iter().enumerate() {
            if let (false, Kind::Class(d)) = (measure[i], kind(topo, pair)) {
                inferred.push(Inferred {
                    pair,
                    class_distance: d,
                    from: sample_of[&d].clone(),
                });
            }
        }
    }
    let measured = all
        .iter()
        .zip(&measure)
        .filter(|(_, m)| **m)
        .map(|(p, _)| *p)
        .collect();
    let mut plan = PairPlan {
        measured,
        inferred,
        classes: Vec::new(),
    };
    plan.classes = plan.count_classes(topo);
    plan
}

/// The indices (ascending) of [`sample_size`] pairs among `members`
/// (indices into `all`, ascending), picked greedily: each pick the pair
/// whose CPU node plus memory node the sample has used least, then whose
/// CPU socket plus memory socket, then the earliest.
fn spread_sample(
    all: &[Pair],
    members: &[usize],
    sockets: &BTreeMap<usize, Option<u32>>,
) -> Vec<usize> {
    let want = sample_size(members.len());
    // Keyed by role (true: as the CPU node, false: as the memory node).
    let mut node_uses: BTreeMap<(bool, usize), usize> = BTreeMap::new();
    let mut socket_uses: BTreeMap<(bool, Option<u32>), usize> = BTreeMap::new();
    let mut taken = vec![false; members.len()];
    let mut picked = Vec::with_capacity(want);
    for _ in 0..want {
        let score = |&(c, m): &Pair| {
            let nodes =
                node_uses.get(&(true, c)).unwrap_or(&0) + node_uses.get(&(false, m)).unwrap_or(&0);
            let socks = socket_uses.get(&(true, sockets[&c])).unwrap_or(&0)
                + socket_uses.get(&(false, sockets[&m])).unwrap_or(&0);
            (nodes, socks)
        };
        let Some(best) = (0..members.len())
            .filter(|&k| !taken[k])
            .min_by_key(|&k| (score(&all[members[k]]), k))
        else {
            break;
        };
        taken[best] = true;
        let (c, m) = all[members[best]];
        *node_uses.entry((true, c)).or_default() += 1;
        *node_uses.entry((false, m)).or_default() += 1;
        *socket_uses.entry((true, sockets[&c])).or_default() += 1;
        *socket_uses.entry((false, sockets[&m])).or_default() += 1;
        picked.push(members[best]);
    }
    picked.sort_unstable();
    picked
}

impl PairPlan {
    /// The plan for the nodes this process may use: CPU nodes with usable
    /// CPUs, memory nodes it may allocate from.
    #[cfg(test)]
    pub(crate) fn for_usable(topo: &Topology, selection: Selection) -> Self {
        let cpus: Vec<usize> = topo.usable_cpu_nodes().iter().collect();
        let mems: Vec<usize> = topo.usable_memory_nodes().iter().collect();
        plan(topo, &cpus, &mems, selection)
    }

    /// Pairs by distance, with how many of them are measured.
    fn count_classes(&self, topo: &Topology) -> Vec<Class> {
        let mut counts: BTreeMap<(bool, u32), (usize, usize)> = BTreeMap::new();
        let mut add = |pair: Pair, measured: bool| {
            let d = topo.distance(pair.0, pair.1);
            let e = counts.entry((d.is_none(), d.unwrap_or(0))).or_default();
            e.0 += 1;
            e.1 += usize::from(measured);
        };
        for &p in &self.measured {
            add(p, true);
        }
        for i in &self.inferred {
            add(i.pair, false);
        }
        counts
            .into_iter()
            .map(|((unknown, d), (pairs, measured))| Class {
                distance: (!unknown).then_some(d),
                pairs,
                measured,
            })
            .collect()
    }

    /// True when some pairs are inferred.
    pub(crate) fn is_sampled(&self) -> bool {
        !self.inferred.is_empty()
    }

    /// The measured pairs the class at `distance` is inferred from (empty
    /// when none of it is inferred): what [`class_holds`] checks.
    #[cfg(test)]
    pub(crate) fn sample(&self, distance: u32) -> &[Pair] {
        self.inferred
            .iter()
            .find(|i| i.class_distance == distance)
            .map_or(&[], |i| &i.from)
    }

    /// Measures the rest of the class at `distance`: its inferred pairs
    /// move to the end of [`PairPlan::measured`] and are returned, in
    /// measuring order.
    pub(crate) fn widen(&mut self, distance: u32) -> Vec<Pair> {
        let (rest, keep): (Vec<Inferred>, Vec<Inferred>) = std::mem::take(&mut self.inferred)
            .into_iter()
            .partition(|i| i.class_distance == distance);
        self.inferred = keep;
        let rest: Vec<Pair> = rest.into_iter().map(|i| i.pair).collect();
        self.measured.extend(&rest);
        if let Some(c) = self
            .classes
            .iter_mut()
            .find(|c| c.distance == Some(distance))
        {
            c.measured += rest.len();
        }
        rest
    }

    /// The distances of the classes that are sampled (some of their pairs
    /// inferred), ascending.
    pub(crate) fn sampled_distances(&self) -> Vec<u32> {
        let mut d: Vec<u32> = self.inferred.iter().map(|i| i.class_distance).collect();
        d.sort_unstable();
        d.dedup();
        d
    }

    /// The spot check of the class at `distance`, given the figures of its
    /// sample (the class's measured pairs): nothing more to measure when
    /// they agree ([`class_holds`]), else the rest of the class
    /// ([`PairPlan::widen`]).
    pub(crate) fn spot_check(&mut self, distance: u32, figures: &[f64]) -> Vec<Pair> {
        if class_holds(figures) {
            Vec::new()
        } else {
            self.widen(distance)
        }
    }
}

/// What a sampled run measured (`measured_pairs` of the plan's) and what
/// it left to the classes; `None` where every pair was measured.
pub(crate) fn note(plan: &PairPlan, measured_pairs: usize) -> Option<String> {
    if !plan.is_sampled() {
        return None;
    }
    let total: usize = plan.classes.iter().map(|c| c.pairs).sum();
    let classes: Vec<String> = plan
        .classes
        .iter()
        .filter(|c| c.measured < c.pairs)
        .map(|c| {
            let d = c.distance.map_or("unknown".into(), |d| d.to_string());
            format!("{} of {} at distance {d}", c.measured, c.pairs)
        })
        .collect();
    Some(format!(
        "pairs by distance class: {measured_pairs} of {total} node pairs measured (every local pair; {}); the others stand for their class (--all-pairs measures every pair)",
        classes.join(", ")
    ))
}

#[cfg(test)]
#[path = "pairs_tests.rs"]
mod tests;
