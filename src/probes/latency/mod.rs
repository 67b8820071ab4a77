//! Idle latency by access pattern and page kind: one pinned thread chases
//! a buffer bound to each memory node, from each CPU node, for every
//! pattern (full-random, page-local, stride) and page kind asked (base,
//! THP, hugetlb). The figure multichase and MLC users quote is page-local
//! on huge pages; full-random adds the page walks of a TLB-missing load.
//!
//! `mod.rs` measures; `records.rs` turns the measurements into records;
//! `view.rs` shows the records in every format.

mod findings;
mod part;
pub(crate) use part::estimate;
pub(crate) mod records;
pub(crate) mod view;

pub(crate) use view::LatencyView;

use super::measure::Latency;
use super::node_chase::{Buffers, Link, Memory};
use super::seats::{first_cpu, nodes};
use crate::ids::NodeSet;
use crate::kernels::pattern::Pattern;
use crate::memory::PageKind;
use crate::results::Condition;
use crate::topology::Topology;
use crate::probes::pairs::{self, Selection};
use anyhow::{Result, bail};
use std::collections::HashSet;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub(crate) struct LatencyConfig {
    pub size: usize,
    /// Patterns in the order measured (a stride sweep is a pattern each).
    pub patterns: Vec<Pattern>,
    pub pages: Vec<PageKind>,
    pub cpu_nodes: Option<NodeSet>,
    pub mem_nodes: Option<NodeSet>,
    pub time_limit: Option<Duration>,
    /// Every node pair, or pairs by distance class on a large machine
    /// ([`crate::probes::pairs`]).
    pub selection: Selection,
}

/// One measurement: a node pair, a pattern, a page kind.
#[derive(Debug, Clone)]
pub(crate) struct Cell {
    pub cpu_node: usize,
    pub mem_node: usize,
    pub cpu: usize,
    pub pattern: Pattern,
    pub pages_asked: PageKind,
    pub latency: Latency,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Measured {
    pub cells: Vec<Cell>,
    pub notes: Vec<String>,
    /// What the notes say of a stop, as data.
    pub conditions: Vec<Condition>,
    /// A measurement that failed after others were made, which ended the
    /// run; those before it are kept.
    pub failed: Option<String>,
    /// Chase buffers mapped: one per memory node and page kind.
    pub buffers_built: usize,
}

/// Measures every (CPU node, memory node, pattern, page kind): per memory
/// node and page kind one buffer, linked once per pattern and chased from
/// each CPU node in turn, so a memory node's buffer is mapped once and not
/// once per CPU node; one buffer is mapped at a time (`size` is admitted on
/// every memory node before this). The cells come out in the order of
/// (CPU node, memory node, page kind, pattern), as a pair-by-pair loop
/// gave them; a stop leaves whole memory nodes' buffers.
pub(crate) fn run(
    topo: &Topology,
    cfg: &LatencyConfig,
    progress: &mut dyn FnMut(&str),
) -> Result<Measured> {
    run_with(topo, cfg, progress, &mut Memory, &mut |linked, cpu| {
        linked.latency_from(cpu)
    })
}

/// [`run`] with the buffers and the chase (of a linked buffer from a
/// CPU) given, so a test can count the
/// builds or fail one.
fn run_with<B: Buffers>(
    topo: &Topology,
    cfg: &LatencyConfig,
    progress: &mut dyn FnMut(&str),
    buffers: &mut B,
    chase: &mut impl for<'b> FnMut(&mut B::Linked<'b>, usize) -> Result<Latency>,
) -> Result<Measured> {
    let (cpus, mem_nodes, mut plan) = pairs_of(topo, cfg)?;
    let started = Instant::now();
    let stop = || {
        crate::interrupt::requested().is_some()
            || cfg.time_limit.is_some_and(|t| started.elapsed() >= t)
    };
    let mut out = Measured::default();
    // Each cell with its place in the pair-by-pair order.
    let mut made: Vec<(Place, Cell)> = Vec::new();
    let mut pass = Pass {
        cfg,
        cpus: &cpus,
        mem_nodes: &mem_nodes,
        wanted: plan.measured.iter().copied().collect(),
        stop: &stop,
    };
    pass.run(progress, buffers, chase, (&mut out, &mut made))?;
    if out.failed.is_none() && !stop() {
        // A class whose sample disagrees is measured whole, in a second
        // pass.
        let wider = spot_check(&mut plan, topo, &made);
        if !wider.is_empty() {
            pass.wanted = wider.into_iter().collect();
            pass.run(progress, buffers, chase, (&mut out, &mut made))?;
        }
    }
    made.sort_by_key(|(at, _)| *at);
    out.cells = made.into_iter().map(|(_, cell)| cell).collect();
    let per_pair = (cfg.patterns.len() * cfg.pages.len()).max(1);
    out.notes
        .extend(pairs::note(&plan, out.cells.len() / per_pair));
    note_a_cut(&mut out, plan.measured.len() * per_pair, cfg);
    Ok(out)
}

/// One pass over the pairs `wanted`.
struct Pass<'a> {
    cfg: &'a LatencyConfig,
    /// Each CPU node with the CPU that chases.
    cpus: &'a [(usize, usize)],
    mem_nodes: &'a [usize],
    wanted: HashSet<(usize, usize)>,
    stop: &'a dyn Fn() -> bool,
}

impl Pass<'_> {
    /// Per memory node with a pair wanted and page kind one buffer, linked
    /// once per pattern, chased from each wanted pair's CPU; a failure
    /// after some cells ends the pass and is kept in `out.failed`.
    fn run<B: Buffers>(
        &self,
        progress: &mut dyn FnMut(&str),
        buffers: &mut B,
        chase: &mut impl for<'b> FnMut(&mut B::Linked<'b>, usize) -> Result<Latency>,
        (out, made): (&mut Measured, &mut Vec<(Place, Cell)>),
    ) -> Result<()> {
        let (cfg, stop) = (self.cfg, self.stop);
        // The first CPU node's CPU builds and links: the CPU that built the
        // buffer of each memory node's first pair before.
        let Some(&(_, builder)) = self.cpus.first() else {
            return Ok(());
        };
        let about = |pattern: &Pattern| format!("{pattern} latency at {} KiB", cfg.size / 1024);
        let mut failed = |e: anyhow::Error, what: String, made: usize| -> Result<()> {
            out.failed = Some(keep_or_fail(e.context(what), made)?);
            Ok(())
        };
        for (mi, &m) in self.mem_nodes.iter().enumerate() {
            if !self.wanted.iter().any(|&(_, wm)| wm == m) {
                continue;
            }
            for (pi, &pages) in cfg.pages.iter().enumerate() {
                if stop() {
                    return Ok(());
                }
                progress(&format!("mem node {m}: mapping the chase buffer, {pages} pages"));
                let mut built = match buffers.build(builder, m, cfg.size, pages) {
                    Ok(b) => b,
                    Err(e) => {
                        let kib = cfg.size / 1024;
                        let what = format!("chase buffer of {kib} KiB, {pages} pages, on node {m}");
                        return failed(e, what, made.len());
                    }
                };
                out.buffers_built += 1;
                // Nothing is linked or started after a stop, but what was
                // just built or linked is measured once.
                let mut fresh = true;
                for (ti, pattern) in cfg.patterns.iter().enumerate() {
                    if !std::mem::take(&mut fresh) && stop() {
                        return Ok(());
                    }
                    let how = Link::One {
                        pattern: *pattern,
                        seed: cfg.size as u64,
                    };
                    let mut linked = match buffers.link(&mut built, how) {
                        Ok(l) => l,
                        Err(e) => return failed(e, about(pattern), made.len()),
                    };
                    fresh = true;
                    for (ci, &(c, cpu)) in self.cpus.iter().enumerate() {
                        if !self.wanted.contains(&(c, m)) {
                            continue;
                        }
                        if !std::mem::take(&mut fresh) && stop() {
                            return Ok(());
                        }
                        progress(&format!("cpu node {c} -> mem node {m}: {pattern}, {pages} pages"));
                        let latency = match chase(&mut linked, cpu) {
                            Ok(l) => l,
                            Err(e) => return failed(e, about(pattern), made.len()),
                        };
                        let cell = Cell {
                            cpu_node: c,
                            mem_node: m,
                            cpu,
                            pattern: *pattern,
                            pages_asked: pages,
                            latency,
                        };
                        made.push(((ci, mi, pi, ti), cell));
                    }
                }
            }
        }
        Ok(())
    }
}

/// The CPU nodes (each with the CPU that chases), the memory nodes and the
/// pairs to measure.
type Planned = (Vec<(usize, usize)>, Vec<usize>, pairs::PairPlan);

/// What [`Planned`] holds for `cfg`; an error where the options leave no
/// node.
fn pairs_of(
    topo: &Topology,
    cfg: &LatencyConfig,
) -> Result<Planned> {
    let cpu_nodes = nodes(topo.usable_cpu_nodes(), &cfg.cpu_nodes);
    let mem_nodes = nodes(topo.usable_memory_nodes(), &cfg.mem_nodes);
    if cpu_nodes.is_empty() || mem_nodes.is_empty() {
        bail!(
            "no CPU node or no memory node left to measure (check --cpu-nodes, --mem-nodes and the cpuset)"
        );
    }
    let cpus = cpu_nodes
        .iter()
        .filter_map(|&c| first_cpu(topo, c).map(|cpu| (c, cpu)))
        .collect();
    let plan = pairs::plan(topo, &cpu_nodes, &mem_nodes, cfg.selection);
    Ok((cpus, mem_nodes, plan))
}

/// A cell's place in the pair-by-pair order: (CPU node, memory node, page
/// kind, pattern) as indexes.
type Place = (usize, usize, usize, usize);

/// The spot check of each sampled class on the first pattern and page
/// kind measured: the pairs of the classes whose sample disagrees.
fn spot_check(
    plan: &mut pairs::PairPlan,
    topo: &Topology,
    made: &[(Place, Cell)],
) -> Vec<(usize, usize)> {
    let mut wider = Vec::new();
    for d in plan.sampled_distances() {
        let figures: Vec<f64> = made
            .iter()
            .filter(|((_, _, pi, ti), cell)| {
                *pi == 0 && *ti == 0 && topo.distance(cell.cpu_node, cell.mem_node) == Some(d)
            })
            .map(|(_, cell)| cell.latency.median_ns())
            .collect();
        wider.extend(plan.spot_check(d, &figures));
    }
    wider
}


/// A failure after `made` measurements: its message, kept as the run's
/// end, when there are some; the error itself when there are none.
fn keep_or_fail(e: anyhow::Error, made: usize) -> Result<String> {
    if made == 0 {
        return Err(e);
    }
    Ok(format!("{e:#}"))
}

/// The note and condition of a run that ended before its `planned`
/// measurements without failing: a signal, else the time limit.
fn note_a_cut(out: &mut Measured, planned: usize, cfg: &LatencyConfig) {
    if out.cells.len() < planned && out.failed.is_none() {
        let made = out.cells.len();
        let (note, condition) = match crate::interrupt::requested() {
            Some(sig) => (
                format!(
                    "interrupted by {}: {made} of {planned} measurements made",
                    crate::interrupt::name(sig)
                ),
                Some(Condition::CutBySignal { signal: sig }),
            ),
            None => (
                format!("time limit reached: {made} of {planned} measurements made"),
                cfg.time_limit.map(Condition::time_limit),
            ),
        };
        out.notes.push(note);
        out.conditions.extend(condition);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::node_chase::{Counted, Fake};

    fn cfg() -> LatencyConfig {
        LatencyConfig {
            size: 1 << 20,
            patterns: vec![Pattern::FullRandom],
            pages: vec![PageKind::Base],
            cpu_nodes: None,
            mem_nodes: None,
            time_limit: None,
            selection: Selection::default(),
        }
    }

    fn made(on: &Fake, cpu: usize) -> Latency {
        Latency {
            size_bytes: 1 << 20,
            pattern: Pattern::FullRandom,
            samples: vec![100.0 + on.node as f64 + cpu as f64 / 1000.0],
            elapsed_s: 0.1,
            seen: Default::default(),
        }
    }

    #[test]
    fn each_memory_node_is_built_once_per_page_kind_and_linked_once_per_pattern() {
        let topo = crate::topology::fixture("amd-4node");
        let cfg = LatencyConfig {
            patterns: vec![Pattern::PageLocal { window: 64 << 10 }, Pattern::FullRandom],
            pages: vec![PageKind::Base, PageKind::Thp],
            ..cfg()
        };
        let mut counted = Counted::default();
        let mut chased = Vec::new();
        let out = run_with(&topo, &cfg, &mut |_| {}, &mut counted, &mut |on: &mut Fake, cpu| {
            chased.push((on.build, cpu));
            Ok(made(on, cpu))
        })
        .unwrap();
        let cpu_nodes: Vec<usize> = topo.usable_cpu_nodes().iter().collect();
        let mem_nodes: Vec<usize> = topo.usable_memory_nodes().iter().collect();
        let (c, m) = (cpu_nodes.len(), mem_nodes.len());
        // One buffer per memory node and page kind, memory node outermost,
        // all built by the first CPU node's CPU.
        let builder = first_cpu(&topo, cpu_nodes[0]).unwrap();
        let want: Vec<_> = mem_nodes
            .iter()
            .flat_map(|&n| cfg.pages.iter().map(move |&p| (builder, n, 1 << 20, p)))
            .collect();
        assert_eq!(counted.builds, want);
        assert_eq!(out.buffers_built, 2 * m);
        // Each buffer linked once per pattern, and each link chased from
        // every CPU node's CPU.
        assert_eq!(counted.links.len(), 2 * m * 2);
        assert_eq!(chased.len(), c * m * 2 * 2);
        for b in 0..2 * m {
            assert_eq!(chased.iter().filter(|(on, _)| *on == b).count(), c * 2);
        }
        // Records in the pair-by-pair order: CPU node, memory node, page
        // kind, pattern.
        let order: Vec<_> = out
            .cells
            .iter()
            .map(|x| (x.cpu_node, x.mem_node, x.pages_asked, x.pattern))
            .collect();
        let mut want = Vec::new();
        for &cn in &cpu_nodes {
            for &mn in &mem_nodes {
                for &p in &cfg.pages {
                    for &t in &cfg.patterns {
                        want.push((cn, mn, p, t));
                    }
                }
            }
        }
        assert_eq!(order, want);
        for x in &out.cells {
            assert_eq!(x.cpu, first_cpu(&topo, x.cpu_node).unwrap());
            let ns = x.latency.samples[0];
            assert_eq!(ns, 100.0 + x.mem_node as f64 + x.cpu as f64 / 1000.0);
        }
        assert!(out.notes.is_empty() && out.failed.is_none());
        let recs = super::records::records(&out);
        assert!(
            recs.iter()
                .all(|r| r.u64_param(crate::results::names::param::CHASE_BUFFERS_BUILT)
                    == Some(2 * m as u64))
        );
    }

    #[test]
    fn a_chase_that_fails_partway_keeps_those_before_it() {
        let topo = crate::topology::fixture("two-node");
        let mut calls = 0;
        let mut chase = |on: &mut Fake, cpu: usize| {
            calls += 1;
            if calls == 3 {
                bail!("chase failed on node {}", on.node)
            }
            Ok(made(on, cpu))
        };
        let out = run_with(&topo, &cfg(), &mut |_| {}, &mut Counted::default(), &mut chase).unwrap();
        assert_eq!(out.cells.len(), 2);
        assert!(
            out.failed.as_deref().unwrap().contains("chase failed"),
            "{:?}",
            out.failed
        );
        assert!(out.notes.is_empty(), "{:?}", out.notes);
        // The first chase failing leaves nothing to keep: the error itself.
        let mut first = |_: &mut Fake, _: usize| -> Result<Latency> { bail!("no memory") };
        assert!(run_with(&topo, &cfg(), &mut |_| {}, &mut Counted::default(), &mut first).is_err());
    }

    #[test]
    fn a_build_that_fails_partway_keeps_the_nodes_before_it() {
        let topo = crate::topology::fixture("two-node");
        let mut counted = Counted {
            fail_build: Some(2),
            ..Default::default()
        };
        let mut chase = |on: &mut Fake, cpu: usize| Ok(made(on, cpu));
        let out = run_with(&topo, &cfg(), &mut |_| {}, &mut counted, &mut chase).unwrap();
        // Memory node 0 from both CPU nodes, then node 1's buffer failed.
        let pairs: Vec<_> = out.cells.iter().map(|x| (x.cpu_node, x.mem_node)).collect();
        assert_eq!(pairs, [(0, 0), (1, 0)]);
        let failed = out.failed.unwrap();
        assert!(failed.contains("on node 1") && failed.contains("mbind failed"), "{failed}");
        assert_eq!(out.buffers_built, 1);
        let mut first = Counted {
            fail_build: Some(1),
            ..Default::default()
        };
        assert!(run_with(&topo, &cfg(), &mut |_| {}, &mut first, &mut chase).is_err());
    }

    #[test]
    fn a_run_its_time_limit_cut_carries_the_limit_on_its_first_record() {
        let topo = crate::topology::fixture("two-node");
        let cfg = LatencyConfig {
            time_limit: Some(Duration::from_millis(5)),
            ..cfg()
        };
        let mut counted = Counted::default();
        let mut slow = |on: &mut Fake, cpu: usize| {
            std::thread::sleep(Duration::from_millis(10));
            Ok(made(on, cpu))
        };
        let out = run_with(&topo, &cfg, &mut |_| {}, &mut counted, &mut slow).unwrap();
        assert_eq!(out.cells.len(), 1);
        assert_eq!(counted.builds.len(), 1, "no buffer is built after the limit");
        assert_eq!(out.notes, ["time limit reached: 1 of 4 measurements made"]);
        let recs = super::records::records(&out);
        assert_eq!(recs[0].cut_by_time_limit(), Some(0.005));
        assert_eq!(recs[0].notes, out.notes);
        // A limit already past: nothing built, nothing measured.
        let past = LatencyConfig {
            time_limit: Some(Duration::ZERO),
            ..cfg
        };
        let mut none = Counted::default();
        let out = run_with(&topo, &past, &mut |_| {}, &mut none, &mut slow).unwrap();
        assert!(out.cells.is_empty() && none.builds.is_empty());
    }

    #[test]
    fn a_large_machine_measures_its_classes_sample_and_widens_a_class_that_disagrees() {
        let topo = crate::topology::fixture("big-16node");
        let cpu_nodes: Vec<usize> = topo.usable_cpu_nodes().iter().collect();
        let mem_nodes: Vec<usize> = topo.usable_memory_nodes().iter().collect();
        let plan = pairs::plan(&topo, &cpu_nodes, &mem_nodes, Selection::default());
        assert!(plan.is_sampled());
        // Figures of one class agree: only the sample is measured.
        let mut counted = Counted::default();
        let out = run_with(&topo, &cfg(), &mut |_| {}, &mut counted, &mut |on: &mut Fake, cpu| {
            let c = topo.cpu(cpu).and_then(|x| x.node).unwrap();
            let d = topo.distance(c, on.node).unwrap_or(0) as f64;
            Ok(Latency {
                samples: vec![d],
                ..made(on, 0)
            })
        })
        .unwrap();
        let mut got: Vec<_> = out.cells.iter().map(|c| (c.cpu_node, c.mem_node)).collect();
        let mut want = plan.measured.clone();
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want);
        assert!(got.len() < cpu_nodes.len() * mem_nodes.len());
        assert!(out.buffers_built <= mem_nodes.len());
        let note = out.notes.iter().find(|n| n.starts_with("pairs by distance class"));
        assert!(note.is_some(), "{:?}", out.notes);
        // Figures that differ by memory node by up to 15%: every sampled
        // class is widened and all pairs end up measured, each once.
        let out = run_with(
            &topo,
            &cfg(),
            &mut |_| {},
            &mut Counted::default(),
            &mut |on: &mut Fake, cpu| Ok(made(on, cpu)),
        )
        .unwrap();
        let mut got: Vec<_> = out.cells.iter().map(|c| (c.cpu_node, c.mem_node)).collect();
        got.sort_unstable();
        got.dedup();
        assert_eq!(got.len(), out.cells.len());
        assert_eq!(got.len(), cpu_nodes.len() * mem_nodes.len());
        // Every pair asked for: no sampling at all.
        let all = LatencyConfig {
            selection: Selection::All,
            ..cfg()
        };
        let out = run_with(&topo, &all, &mut |_| {}, &mut Counted::default(), &mut |on: &mut Fake, cpu| {
            Ok(made(on, cpu))
        })
        .unwrap();
        assert_eq!(out.cells.len(), cpu_nodes.len() * mem_nodes.len());
        assert!(!out.notes.iter().any(|n| n.starts_with("pairs by distance class")));
    }
}
