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
//! The chases are built once per pair with the most chases asked for, each
//! in its own slots ([`crate::kernels::chase`]); measuring N uses the
//! first N, so every N walks the same cycles.

mod part;
pub(crate) use part::estimate;
pub(crate) mod records;
pub(crate) mod view;

pub(crate) use view::MlpView;

use super::measure::{self, Seen};
use super::seats::{first_cpu, nodes};
use super::team::Seat;
use crate::ids::NodeSet;
use crate::kernels::chase::Chases;
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
}

/// The (CPU node, memory node) pairs to measure.
pub(crate) fn pairs(topo: &Topology, cfg: &MlpConfig) -> Vec<(usize, usize)> {
    let cpu_nodes = nodes(topo.usable_cpu_nodes(), &cfg.cpu_nodes);
    let mem_nodes = nodes(topo.usable_memory_nodes(), &cfg.mem_nodes);
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
pub(crate) fn run(
    topo: &Topology,
    cfg: &MlpConfig,
    progress: &mut dyn FnMut(&str),
) -> Result<Measured> {
    let pairs = pairs(topo, cfg);
    if pairs.is_empty() {
        bail!("no node pair left to measure (check --cpu-nodes, --mem-nodes and the cpuset)");
    }
    let started = Instant::now();
    let mut out = Measured::default();
    for &(c, m) in &pairs {
        let timed_out = cfg.time_limit.filter(|&t| started.elapsed() >= t);
        if crate::interrupt::requested().is_some() || timed_out.is_some() {
            let sig = crate::interrupt::requested();
            out.notes.push(format!(
                "stopped ({}): {} of {} node pairs measured",
                sig.map_or("time limit reached".to_string(), |s| format!(
                    "interrupted by {}",
                    crate::interrupt::name(s)
                )),
                out.curves.len(),
                pairs.len()
            ));
            out.conditions.extend(match sig {
                Some(signal) => Some(Condition::CutBySignal { signal }),
                None => timed_out.map(Condition::time_limit),
            });
            break;
        }
        let Some(cpu) = first_cpu(topo, c) else {
            continue;
        };
        progress(&format!(
            "cpu node {c} -> mem node {m}: {} chases",
            cfg.counts.len()
        ));
        match curve(cfg, Seat { cpu, node: m }, c) {
            Ok(curve) => out.curves.push(curve),
            Err(e) if !out.curves.is_empty() => {
                out.failed = Some(format!("{e:#}"));
                break;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(out)
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

fn curve(cfg: &MlpConfig, seat: Seat, cpu_node: usize) -> Result<Curve> {
    let begun = Instant::now();
    let most = cfg.counts.iter().copied().max().unwrap_or(1);
    let (points, seen) = measure::on_chase_buffer(seat, cfg.size, cfg.pages, |words| {
        let spacing = spacing(&cfg.pattern);
        let mut c = Chases::build(words, &cfg.pattern, spacing, most, cfg.size as u64)?;
        let lap = c.elements() as u64;
        let mut points = Vec::new();
        for &n in &cfg.counts {
            let samples = measure::sample_chase(
                &mut |loads| c.ns_per_access(n, (loads / n as u64).max(1)),
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
}
