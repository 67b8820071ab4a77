//! Memory-level parallelism: one pinned thread follows N independent
//! pointer chases through one buffer, interleaved (multichase's `-c
//! parallelN`), for N = 1, 2, 4, ... 16, per (CPU node, memory node).
//!
//! Figures, per N: `ns_per_access`, wall time / (N x loads per chase), the
//! figure multichase prints; `chase_latency_ns` = N x that, the time each
//! chase waits from one load to its next; and the achieved concurrency.
//! By Little's law, loads in flight = throughput x time each spends in
//! flight. Measured with each load's own (loaded) latency that is N by
//! construction, so the informative form counts in idle latencies:
//! concurrency = (1 / ns_per_access(N)) x ns_per_access(1) =
//! bandwidth x idle latency / line. It grows with N while the core and the
//! memory overlap the misses and flattens at the limit of outstanding
//! misses (fill buffers, MSHRs) or of the memory path.
//!
//! The chases are built once per memory node with the most chases asked
//! for, each in its own slots ([`crate::kernels::chase`]), and followed
//! from each CPU node's CPU in turn ([`super::node_chase`]); measuring N
//! uses the first N, so every N walks the same cycles.

mod findings;
mod part;
pub(crate) use part::estimate;
pub(crate) mod records;
pub(crate) mod view;

pub(crate) use view::MlpView;

use super::measure::{self, Seen};
use super::node_chase::{Buffers, Link, Linked, Memory};
use super::pairs::{self, Selection};
use super::seats::{first_cpu, nodes};
use super::team::Seat;
use crate::ids::NodeSet;
use crate::kernels::pattern::{Pattern, WIDE_SPACING};
use crate::memory::PageKind;
use crate::results::Condition;
use crate::stats;
use crate::topology::Topology;
use anyhow::{Context, Result, bail};
use std::time::{Duration, Instant};

/// Which (CPU node, memory node) pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pairs {
    /// Every CPU node with every memory node.
    All,
    /// Every CPU node with its own node and the farthest memory node.
    LocalFar,
}

#[derive(Debug, Clone)]
pub(crate) struct MlpConfig {
    pub size: usize,
    pub pattern: Pattern,
    pub pages: PageKind,
    /// Chase counts, ascending, 1 first.
    pub counts: Vec<usize>,
    pub pairs: Pairs,
    pub cpu_nodes: Option<NodeSet>,
    pub mem_nodes: Option<NodeSet>,
    pub time_limit: Option<Duration>,
    /// With `Pairs::All`: every pair, or pairs by distance class on a
    /// large machine ([`crate::probes::pairs`]).
    pub selection: Selection,
    /// Only these pairs (a spot check's second pass), in this order.
    pub only: Option<Vec<(usize, usize)>>,
}

/// One chase count: ns per access of every sample.
#[derive(Debug, Clone)]
pub(crate) struct Point {
    pub chases: usize,
    pub samples: Vec<f64>,
}

impl Point {
    pub(crate) fn ns_per_access(&self) -> f64 {
        stats::median(&self.samples)
    }
}

/// One pair's curve.
#[derive(Debug, Clone)]
pub(crate) struct Curve {
    pub cpu_node: usize,
    pub mem_node: usize,
    pub cpu: usize,
    pub points: Vec<Point>,
    pub seen: Seen,
    pub elapsed_s: f64,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Measured {
    pub curves: Vec<Curve>,
    pub notes: Vec<String>,
    /// What the notes say of a stop, as data.
    pub conditions: Vec<Condition>,
    /// A pair that failed after others were measured, which ended the run;
    /// those before it are kept.
    pub failed: Option<String>,
    /// Chase buffers mapped: one per memory node.
    pub buffers_built: usize,
}

/// The (CPU node, memory node) pairs to measure.
pub(crate) fn pairs(topo: &Topology, cfg: &MlpConfig) -> Vec<(usize, usize)> {
    if let Some(only) = &cfg.only {
        return only.clone();
    }
    let cpu_nodes = nodes(topo.usable_cpu_nodes(), &cfg.cpu_nodes);
    let mem_nodes = nodes(topo.usable_memory_nodes(), &cfg.mem_nodes);
    if cfg.pairs == Pairs::All {
        return pairs::plan(topo, &cpu_nodes, &mem_nodes, cfg.selection).measured;
    }
    let mut out = Vec::new();
    for &c in &cpu_nodes {
        match cfg.pairs {
            Pairs::All => out.extend(mem_nodes.iter().map(|&m| (c, m))),
            Pairs::LocalFar => {
                if mem_nodes.contains(&c) {
                    out.push((c, c));
                }
                let far = mem_nodes
                    .iter()
                    .copied()
                    .filter(|&m| m != c)
                    .max_by_key(|&m| (topo.distance(c, m).unwrap_or(0), std::cmp::Reverse(m)));
                out.extend(far.map(|m| (c, m)));
            }
        }
    }
    out
}

/// Every pair's curve; a stop (signal, time limit) ends at a pair's end.
/// Per memory node one buffer, linked once with the most chases and
/// chased from each of its pairs' CPUs in turn; one buffer is mapped at a
/// time. The curves come out in the order of [`pairs()`].
pub(crate) fn run(
    topo: &Topology,
    cfg: &MlpConfig,
    progress: &mut dyn FnMut(&str),
) -> Result<Measured> {
    let mut out = run_with(topo, cfg, progress, &mut Memory, &mut |linked, seat, c| {
        curve(cfg, linked, seat, c)
    })?;
    if cfg.pairs != Pairs::All || cfg.only.is_some() {
        return Ok(out);
    }
    let cpu_nodes = nodes(topo.usable_cpu_nodes(), &cfg.cpu_nodes);
    let mem_nodes = nodes(topo.usable_memory_nodes(), &cfg.mem_nodes);
    let mut plan = pairs::plan(topo, &cpu_nodes, &mem_nodes, cfg.selection);
    if !plan.is_sampled() {
        return Ok(out);
    }
    let stopped = out.failed.is_some() || out.curves.len() < plan.measured.len();
    let wider = if stopped {
        Vec::new()
    } else {
        spot_check(&mut plan, topo, &out.curves)
    };
    if !wider.is_empty() {
        // A class whose sample disagrees is measured whole.
        let second = MlpConfig {
            only: Some(wider),
            ..cfg.clone()
        };
        let more = run_with(topo, &second, progress, &mut Memory, &mut |linked, seat, c| {
            curve(&second, linked, seat, c)
        })?;
        out.curves.extend(more.curves);
        out.notes.extend(more.notes);
        out.conditions.extend(more.conditions);
        out.failed = out.failed.or(more.failed);
        out.buffers_built += more.buffers_built;
    }
    out.notes.extend(pairs::note(&plan, out.curves.len()));
    Ok(out)
}

/// The spot check of each sampled class on the one-chase figure: the
/// pairs of the classes whose sample disagrees.
fn spot_check(plan: &mut pairs::PairPlan, topo: &Topology, curves: &[Curve]) -> Vec<(usize, usize)> {
    let mut wider = Vec::new();
    for d in plan.sampled_distances() {
        let figures: Vec<f64> = curves
            .iter()
            .filter(|c| topo.distance(c.cpu_node, c.mem_node) == Some(d))
            .filter_map(|c| c.points.first().map(Point::ns_per_access))
            .collect();
        wider.extend(plan.spot_check(d, &figures));
    }
    wider
}

/// [`run`] with the buffers and the curve (of a linked buffer, from a
/// seat, for a CPU node) given, so a test can count the builds.
fn run_with<B: Buffers>(
    topo: &Topology,
    cfg: &MlpConfig,
    progress: &mut dyn FnMut(&str),
    buffers: &mut B,
    curve: &mut impl for<'b> FnMut(&mut B::Linked<'b>, Seat, usize) -> Result<Curve>,
) -> Result<Measured> {
    let pairs = pairs(topo, cfg);
    if pairs.is_empty() {
        bail!("no node pair left to measure (check --cpu-nodes, --mem-nodes and the cpuset)");
    }
    // Each memory node's pairs as (place in `pairs`, CPU node, CPU), in the
    // order the memory nodes are first met.
    type Pair = (usize, usize, usize);
    let mut by_node: Vec<(usize, Vec<Pair>)> = Vec::new();
    for (at, &(c, m)) in pairs.iter().enumerate() {
        let Some(cpu) = first_cpu(topo, c) else {
            continue;
        };
        match by_node.iter_mut().find(|(n, _)| *n == m) {
            Some((_, these)) => these.push((at, c, cpu)),
            None => by_node.push((m, vec![(at, c, cpu)])),
        }
    }
    let started = Instant::now();
    let mut out = Measured::default();
    let mut made: Vec<(usize, Curve)> = Vec::new();
    let most = cfg.counts.iter().copied().max().unwrap_or(1);
    let how = Link::Parallel {
        pattern: cfg.pattern,
        spacing: spacing(&cfg.pattern),
        chases: most,
        seed: cfg.size as u64,
    };
    let stopped = |out: &mut Measured, made: usize| -> bool {
        let timed_out = cfg.time_limit.filter(|&t| started.elapsed() >= t);
        let sig = crate::interrupt::requested();
        if sig.is_none() && timed_out.is_none() {
            return false;
        }
        out.notes.push(format!(
            "stopped ({}): {made} of {} node pairs measured",
            sig.map_or("time limit reached".to_string(), |s| format!(
                "interrupted by {}",
                crate::interrupt::name(s)
            )),
            pairs.len()
        ));
        out.conditions.extend(match sig {
            Some(signal) => Some(Condition::CutBySignal { signal }),
            None => timed_out.map(Condition::time_limit),
        });
        true
    };
    'all: for (m, these) in &by_node {
        let m = *m;
        if stopped(&mut out, made.len()) {
            break;
        }
        progress(&format!("mem node {m}: mapping and linking the chase buffer"));
        let mut built = match buffers.build(these[0].2, m, cfg.size, cfg.pages) {
            Ok(b) => b,
            Err(e) => {
                let e = e.context(format!("mlp, chase buffer on node {m}"));
                keep_or_fail(&mut out, e, made.len())?;
                break;
            }
        };
        out.buffers_built += 1;
        let mut linked = match buffers.link(&mut built, how) {
            Ok(l) => l,
            Err(e) => {
                let e = e.context(format!("mlp, chases on node {m}"));
                keep_or_fail(&mut out, e, made.len())?;
                break;
            }
        };
        for (i, &(at, c, cpu)) in these.iter().enumerate() {
            // The first pair was let through before the build.
            if i > 0 && stopped(&mut out, made.len()) {
                break 'all;
            }
            progress(&format!(
                "cpu node {c} -> mem node {m}: {} chases",
                cfg.counts.len()
            ));
            match curve(&mut linked, Seat { cpu, node: m }, c) {
                Ok(curve) => made.push((at, curve)),
                Err(e) => {
                    keep_or_fail(&mut out, e, made.len())?;
                    break 'all;
                }
            }
        }
    }
    made.sort_by_key(|(at, _)| *at);
    out.curves = made.into_iter().map(|(_, curve)| curve).collect();
    Ok(out)
}

/// A failure after `made` curves: kept as the run's end when there are
/// some, the error itself when there are none.
fn keep_or_fail(out: &mut Measured, e: anyhow::Error, made: usize) -> Result<()> {
    if made == 0 {
        return Err(e);
    }
    out.failed = Some(format!("{e:#}"));
    Ok(())
}

/// Bytes between the elements of each chase: a stride chase steps its
/// stride; the others keep multichase's 256 B, room for a slot per chase.
pub(crate) fn spacing(pattern: &Pattern) -> usize {
    pattern.stride().unwrap_or(WIDE_SPACING).max(WIDE_SPACING)
}

/// The fewest elements `chases` chases need: one each at every step, so N
/// loads are N lines and not one line's miss shared, and with a page-local
/// pattern a window each.
pub(crate) fn elements_needed(pattern: &Pattern, chases: usize) -> usize {
    let per = pattern
        .window()
        .map_or(1, |w| (w / spacing(pattern)).max(1));
    chases * per
}

/// Refuses a buffer with fewer elements than the most chases need.
pub(crate) fn check_elements(cfg: &MlpConfig) -> Result<()> {
    let spacing = spacing(&cfg.pattern);
    let most = cfg.counts.iter().copied().max().unwrap_or(1);
    let have = crate::kernels::chase::elements_used(&cfg.pattern, cfg.size / 8, spacing);
    let need = elements_needed(&cfg.pattern, most);
    if have >= need {
        return Ok(());
    }
    Err(crate::error::usage(format!(
        "--size {} B: {have} elements of {spacing} B, fewer than the {need} that {most} chases \
         need ({} each); give a larger --size or fewer --chases",
        cfg.size,
        need / most
    )))
}

/// One pair's curve: every chase count, from `seat.cpu`, over the chases
/// `linked` (on `seat.node`) holds.
fn curve(cfg: &MlpConfig, linked: &mut Linked<'_>, seat: Seat, cpu_node: usize) -> Result<Curve> {
    let begun = Instant::now();
    let (points, seen) = linked
        .chase_from(seat.cpu, |walk| {
            let lap = walk.lap();
            let mut points = Vec::new();
            for &n in &cfg.counts {
                let samples = measure::sample_chase(
                    &mut |loads| walk.ns_per_access(n, (loads / n as u64).max(1)),
                    lap,
                );
                points.push(Point { chases: n, samples });
                if crate::interrupt::requested().is_some() {
                    break;
                }
            }
            Ok(points)
        })
        .with_context(|| format!("mlp, cpu {} -> node {}", seat.cpu, seat.node))?;
    Ok(Curve {
        cpu_node,
        mem_node: seat.node,
        cpu: seat.cpu,
        points,
        seen,
        elapsed_s: begun.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::fixture;

    fn cfg(pairs: Pairs) -> MlpConfig {
        MlpConfig {
            selection: crate::probes::pairs::Selection::default(),
            only: None,
            size: 1 << 20,
            pattern: Pattern::FullRandom,
            pages: PageKind::Base,
            counts: vec![1, 2],
            pairs,
            cpu_nodes: None,
            mem_nodes: None,
            time_limit: None,
        }
    }

    #[test]
    fn local_far_pairs_each_cpu_node_with_itself_and_its_farthest() {
        let t = fixture("amd-4node");
        let all = pairs(&t, &cfg(Pairs::All));
        let lf = pairs(&t, &cfg(Pairs::LocalFar));
        let cpu_nodes = t.usable_cpu_nodes().iter().count();
        assert_eq!(lf.len(), 2 * cpu_nodes, "{lf:?}");
        assert!(all.len() > lf.len());
        for &(c, m) in &lf {
            if c != m {
                let farthest = t
                    .usable_memory_nodes()
                    .iter()
                    .filter_map(|o| t.distance(c, o))
                    .max();
                assert_eq!(t.distance(c, m), farthest, "{c}->{m}");
            }
        }
    }

    fn made(seat: Seat, c: usize) -> Curve {
        Curve {
            cpu_node: c,
            mem_node: seat.node,
            cpu: seat.cpu,
            points: vec![Point {
                chases: 1,
                samples: vec![100.0],
            }],
            seen: Default::default(),
            elapsed_s: 0.1,
        }
    }

    #[test]
    fn each_memory_node_is_built_and_linked_once_and_curves_keep_the_pairs_order() {
        use crate::probes::node_chase::{Counted, Fake};
        let t = fixture("amd-4node");
        for how in [Pairs::All, Pairs::LocalFar] {
            let cfg = MlpConfig {
                selection: crate::probes::pairs::Selection::default(),
                only: None,
                counts: vec![1, 2, 4],
                ..cfg(how)
            };
            let mut counted = Counted::default();
            let mut chased = Vec::new();
            let out = run_with(&t, &cfg, &mut |_| {}, &mut counted, &mut |on: &mut Fake, seat, c| {
                assert_eq!(on.node, seat.node);
                chased.push((on.build, seat.node, c));
                Ok(made(seat, c))
            })
            .unwrap();
            let want = pairs(&t, &cfg);
            let mut nodes: Vec<usize> = want.iter().map(|&(_, m)| m).collect();
            nodes.sort();
            nodes.dedup();
            // One build per memory node that has a pair, memory-node-major.
            let built: Vec<usize> = counted.builds.iter().map(|b| b.1).collect();
            let mut first_met: Vec<usize> = Vec::new();
            for &(_, m) in &want {
                if !first_met.contains(&m) {
                    first_met.push(m);
                }
            }
            assert_eq!(built, first_met, "{how:?}");
            assert_eq!(built.len(), nodes.len());
            assert_eq!(out.buffers_built, nodes.len());
            // Linked once each, with the most chases.
            assert_eq!(counted.links.len(), nodes.len());
            for (_, link) in &counted.links {
                assert!(matches!(link, Link::Parallel { chases: 4, .. }), "{link:?}");
            }
            // Each chase used its memory node's build, the curves come out
            // in the pairs' order.
            for &(b, m, _) in &chased {
                assert_eq!(counted.builds[b].1, m);
            }
            let got: Vec<(usize, usize)> =
                out.curves.iter().map(|c| (c.cpu_node, c.mem_node)).collect();
            assert_eq!(got, want, "{how:?}");
            for c in &out.curves {
                assert_eq!(Some(c.cpu), first_cpu(&t, c.cpu_node));
            }
        }
    }

    #[test]
    fn a_curve_that_fails_partway_keeps_those_before_it() {
        use crate::probes::node_chase::{Counted, Fake};
        let t = fixture("two-node");
        let mut calls = 0;
        let out = run_with(
            &t,
            &cfg(Pairs::All),
            &mut |_| {},
            &mut Counted::default(),
            &mut |_: &mut Fake, seat, c| {
                calls += 1;
                if calls == 2 {
                    bail!("no memory");
                }
                Ok(made(seat, c))
            },
        )
        .unwrap();
        assert_eq!(out.curves.len(), 1);
        assert!(out.failed.unwrap().contains("no memory"));
    }
}
