//! Idle latency by access pattern and page kind: one pinned thread chases
//! a buffer bound to each memory node, from each CPU node, for every
//! pattern (full-random, page-local, stride) and page kind asked (base,
//! THP, hugetlb). The figure multichase and MLC users quote is page-local
//! on huge pages; full-random adds the page walks of a TLB-missing load.
//!
//! `mod.rs` measures; `records.rs` turns the measurements into records;
//! `view.rs` shows the records in every format.

mod part;
pub(crate) use part::estimate;
pub(crate) mod records;
pub(crate) mod view;

pub(crate) use view::LatencyView;

use super::measure::{self, Latency};
use super::seats::{first_cpu, nodes};
use super::team::Seat;
use crate::ids::NodeSet;
use crate::kernels::pattern::Pattern;
use crate::memory::PageKind;
use crate::results::Condition;
use crate::topology::Topology;
use anyhow::{Result, bail};
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
}

/// Measures every (CPU node, memory node, pattern, page kind), pairs
/// outermost so a stop leaves whole pairs; `size` is admitted on every
/// memory node before this (one buffer is mapped at a time).
pub(crate) fn run(
    topo: &Topology,
    cfg: &LatencyConfig,
    progress: &mut dyn FnMut(&str),
) -> Result<Measured> {
    run_with(topo, cfg, progress, &mut measure::latency)
}

/// One chase: seat, buffer bytes, pages, pattern.
type Chase<'a> = dyn FnMut(Seat, usize, PageKind, &Pattern) -> Result<Latency> + 'a;

/// [`run`] with the chase given, so a failing one can be put in its place.
fn run_with(
    topo: &Topology,
    cfg: &LatencyConfig,
    progress: &mut dyn FnMut(&str),
    chase: &mut Chase,
) -> Result<Measured> {
    let cpu_nodes = nodes(topo.usable_cpu_nodes(), &cfg.cpu_nodes);
    let mem_nodes = nodes(topo.usable_memory_nodes(), &cfg.mem_nodes);
    if cpu_nodes.is_empty() || mem_nodes.is_empty() {
        bail!(
            "no CPU node or no memory node left to measure (check --cpu-nodes, --mem-nodes and the cpuset)"
        );
    }
    let started = Instant::now();
    let planned = cpu_nodes.len() * mem_nodes.len() * cfg.patterns.len() * cfg.pages.len();
    let mut out = Measured::default();
    'pairs: for &c in &cpu_nodes {
        let Some(cpu) = first_cpu(topo, c) else {
            continue;
        };
        for &m in &mem_nodes {
            for &pages in &cfg.pages {
                for pattern in &cfg.patterns {
                    if crate::interrupt::requested().is_some()
                        || cfg.time_limit.is_some_and(|t| started.elapsed() >= t)
                    {
                        break 'pairs;
                    }
                    progress(&format!(
                        "cpu node {c} -> mem node {m}: {pattern}, {pages} pages"
                    ));
                    let seat = Seat { cpu, node: m };
                    let latency = match chase(seat, cfg.size, pages, pattern) {
                        Ok(l) => l,
                        Err(e) if !out.cells.is_empty() => {
                            out.failed = Some(format!("{e:#}"));
                            break 'pairs;
                        }
                        Err(e) => return Err(e),
                    };
                    out.cells.push(Cell {
                        cpu_node: c,
                        mem_node: m,
                        cpu,
                        pattern: *pattern,
                        pages_asked: pages,
                        latency,
                    });
                }
            }
        }
    }
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
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> LatencyConfig {
        LatencyConfig {
            size: 1 << 20,
            patterns: vec![Pattern::FullRandom],
            pages: vec![PageKind::Base],
            cpu_nodes: None,
            mem_nodes: None,
            time_limit: None,
        }
    }

    fn made(seat: Seat) -> Latency {
        Latency {
            size_bytes: 1 << 20,
            pattern: Pattern::FullRandom,
            samples: vec![100.0 + seat.node as f64],
            elapsed_s: 0.1,
            seen: Default::default(),
        }
    }

    #[test]
    fn a_chase_that_fails_partway_keeps_those_before_it() {
        let topo = crate::topology::fixture("two-node");
        let mut calls = 0;
        let mut chase = |seat: Seat, _: usize, _: PageKind, _: &Pattern| {
            calls += 1;
            if calls == 3 {
                bail!("mbind failed on node {}", seat.node)
            }
            Ok(made(seat))
        };
        let out = run_with(&topo, &cfg(), &mut |_| {}, &mut chase).unwrap();
        assert_eq!(out.cells.len(), 2);
        assert!(
            out.failed.as_deref().unwrap().contains("mbind failed"),
            "{:?}",
            out.failed
        );
        assert!(out.notes.is_empty(), "{:?}", out.notes);
        // The first chase failing leaves nothing to keep: the error itself.
        let mut first =
            |_: Seat, _: usize, _: PageKind, _: &Pattern| -> Result<Latency> { bail!("no memory") };
        assert!(run_with(&topo, &cfg(), &mut |_| {}, &mut first).is_err());
    }

    #[test]
    fn a_run_its_time_limit_cut_carries_the_limit_on_its_first_record() {
        let topo = crate::topology::fixture("two-node");
        let cfg = LatencyConfig {
            time_limit: Some(Duration::from_millis(5)),
            ..cfg()
        };
        let mut slow = |seat: Seat, _: usize, _: PageKind, _: &Pattern| {
            std::thread::sleep(Duration::from_millis(10));
            Ok(made(seat))
        };
        let out = run_with(&topo, &cfg, &mut |_| {}, &mut slow).unwrap();
        assert_eq!(out.cells.len(), 1);
        assert_eq!(out.notes, ["time limit reached: 1 of 4 measurements made"]);
        let recs = super::records::records(&out);
        assert_eq!(recs[0].cut_by_time_limit(), Some(0.005));
        assert_eq!(recs[0].notes, out.notes);
    }
}
