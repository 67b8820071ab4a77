//! `numabench autonuma`: the AutoNUMA benchmark (numa01,
//! numa01_THREAD_ALLOC, numa02, numa02_SMT) on the workload engine,
//! with the benchmark's convergence charts: how much of the test's memory
//! is on each node over time, all of it starting on one node.
//!
//! The engine writes every data area once from the start node's CPUs with
//! a thread memory policy bound to that node, then puts the thread's
//! affinity and policy back (its `-0`), so the pages start there and carry
//! no policy of their own: whatever moves them later is the kernel. The
//! parent looks at the children at a fixed interval through the engine's
//! sampling hook.

pub(crate) mod bench;
pub(crate) mod bind;
pub(crate) mod convergence;
pub(crate) mod facts;
mod part;
pub(crate) mod records;
pub(crate) mod session;
pub(crate) mod shape;
pub(crate) mod text;
pub(crate) mod view;

pub(crate) use view::AutonumaView;

use crate::probes::workload::layout::AreaPlacement;
use crate::probes::workload::outcome::{RunOutput, Sampler};
use crate::probes::workload::params::{Params, resolve};
use crate::probes::workload::{areas, tasks, vmstat, watch};
use crate::sys::CpuTimes;
use crate::topology::Topology;
use anyhow::Result;
use bench::Plan;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use watch::{Look, Method, Watch};

/// How a run is watched and judged.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Settings {
    /// Time between two looks.
    pub interval: Duration,
    /// How far (percent of its share) a node may be from its share of the
    /// memory and still count as converged.
    pub tolerance_pct: f64,
    /// How a look finds where the memory is.
    pub method: Method,
}

/// One run of one test.
#[derive(Debug, Clone, Default)]
pub(crate) struct Outcome {
    /// Release of the tasks to the last child reaped.
    pub runtime_s: f64,
    pub looks: Vec<Look>,
    /// Nodes the memory series has a line for: nodes with usable memory and
    /// any other node memory was seen on.
    pub mem_nodes: Vec<usize>,
    /// Nodes whose CPUs the test may use: the convergence rule's nodes.
    pub cpu_nodes: Vec<usize>,
    pub convergence_s: Option<f64>,
    pub numa_balancing: vmstat::Counters,
    /// CPU time of the parent and the tasks during the run.
    pub cpu: CpuTimes,
    /// CPU time of the parent's looks.
    pub sampling_cpu_s: f64,
    /// How the looks were taken at the end of the run.
    pub method: Method,
    /// Looks that sampled pages, and looks that counted some or all of the
    /// memory from `numa_maps` (a sampled run's small memory, `--exact`).
    pub sampled_looks: usize,
    pub exact_looks: usize,
    /// Why sampled looks gave way to exact ones.
    pub method_fallback: Option<String>,
    /// Most pages a look queried, and the widest window a queried page
    /// stood for (sampled looks).
    pub sampled_pages_max: u64,
    pub stride_max: u64,
    /// The largest share of a look's memory, percent, counted on the node
    /// its sampled pages were last seen on (hidden from `move_pages` at that
    /// look).
    pub carried_pct_max: f64,
    /// Memory policies seen on the test's memory (exact looks only).
    pub policies: BTreeSet<String>,
    pub cpus_seen: Vec<usize>,
    /// Bytes cleared by all threads together.
    pub data_bytes: u64,
    /// Fewest and most passes a thread made.
    pub loops_min: u64,
    pub loops_max: u64,
    pub unreadable: usize,
    /// Looks left out because a task began to free its memory meanwhile.
    pub looks_dropped: usize,
    pub interrupted: Option<i32>,
    /// Why the run ended early when a task died.
    pub failed: Option<String>,
    /// Baselines: percent of the bound memory's pages on the node it was
    /// bound to at the end, and the tasks last seen outside their CPUs.
    pub bound_pct: Option<f64>,
    pub tasks_off_cpus: usize,
}

impl Outcome {
    /// The looks' CPU time as percent of the run's.
    pub(crate) fn sampling_overhead_pct(&self) -> f64 {
        let total = self.cpu.user_s + self.cpu.system_s;
        if total > 0.0 {
            self.sampling_cpu_s / total * 100.0
        } else {
            0.0
        }
    }

    /// Percent of the memory on each of `mem_nodes` at the last look.
    pub(crate) fn final_share_pct(&self) -> BTreeMap<usize, f64> {
        let Some(last) = self.looks.last() else {
            return BTreeMap::new();
        };
        let total: u64 = last.mem.values().sum();
        self.mem_nodes
            .iter()
            .map(|&n| {
                let b = last.mem.get(&n).copied().unwrap_or(0);
                (
                    n,
                    if total > 0 {
                        b as f64 * 100.0 / total as f64
                    } else {
                        0.0
                    },
                )
            })
            .collect()
    }
}

/// Percent of a look's pages counted on a sampled page's last node.
fn carried_pct(l: &Look) -> f64 {
    let resident: u64 = l.pages.values().sum();
    if resident > 0 {
        l.carried_pages as f64 * 100.0 / resident as f64
    } else {
        0.0
    }
}

/// Where a bound run's memory and tasks were at its end: percent of the
/// bound areas' pages on their node, and tasks last seen off their CPUs.
fn bound_check(p: &Params, out: &RunOutput) -> (Option<f64>, usize) {
    if p.node_bind.iter().all(Option::is_none) {
        return (None, 0);
    }
    let areas: Vec<(Option<usize>, &AreaPlacement)> = areas::areas(out)
        .into_iter()
        .map(|(k, a)| (areas::intended(p, k), a))
        .collect();
    let off = out
        .task_cpus
        .iter()
        .zip(&p.cpu_bind)
        .filter(|(cpu, set)| matches!((cpu, set), (Some(c), Some(s)) if !s.contains(*c)))
        .count();
    (bind::on_bound_node_pct(&areas), off)
}

/// Runs `plan` once; `on_look` sees every look as it is taken.
pub(crate) fn run(
    plan: &Plan,
    topo: &Topology,
    settings: &Settings,
    on_look: &mut dyn FnMut(&Look),
) -> Result<Outcome> {
    let mut params = resolve(&bench::engine_options(plan), topo)?;
    let bound = bind::placement(topo, plan.bind, &plan.shape);
    if !bound.is_empty() {
        // Written where they are bound, by the bound threads: no -0.
        params.init_cpu0 = false;
        for (t, (cpus, node)) in bound.into_iter().enumerate() {
            params.cpu_bind[t] = Some(cpus);
            params.node_bind[t] = Some(node);
        }
    }
    let mut watch = Watch::new(topo, settings.method);
    let mut look = |t: f64, pids: &[i32], intact: &dyn Fn() -> bool| {
        if let Some(l) = watch.look(t, pids, intact) {
            on_look(l);
        }
    };
    let sampler = Sampler {
        interval: settings.interval,
        look: &mut look,
        hold_stop: None,
    };
    let out = tasks::run_sampled(&params, topo, &mut |_| {}, Some(sampler))?;
    let cpu_nodes: Vec<usize> = topo.usable_cpu_nodes().iter().collect();
    let mut mem_nodes: BTreeSet<usize> = topo.usable_memory_nodes().iter().collect();
    for l in &watch.looks {
        mem_nodes.extend(l.mem.keys());
    }
    let refs: Vec<(f64, &BTreeMap<usize, u64>)> =
        watch.looks.iter().map(|l| (l.t, &l.mem)).collect();
    let convergence_s = convergence::convergence_time(&refs, &cpu_nodes, settings.tolerance_pct);
    let (bound_pct, tasks_off_cpus) = bound_check(&params, &out);
    Ok(Outcome {
        bound_pct,
        tasks_off_cpus,
        runtime_s: out.runtime_max_s,
        convergence_s,
        mem_nodes: mem_nodes.into_iter().collect(),
        cpu_nodes,
        numa_balancing: out.numa_balancing,
        cpu: out.cpu,
        sampling_cpu_s: watch.cpu_s,
        method: watch.method,
        sampled_looks: watch.looks.iter().filter(|l| l.sampled_pages > 0).count(),
        exact_looks: watch.looks.iter().filter(|l| l.exact).count(),
        method_fallback: watch.fallback,
        sampled_pages_max: watch
            .looks
            .iter()
            .map(|l| l.sampled_pages)
            .max()
            .unwrap_or(0),
        stride_max: watch.looks.iter().map(|l| l.stride).max().unwrap_or(1),
        carried_pct_max: watch.looks.iter().map(carried_pct).fold(0.0, f64::max),
        policies: watch.policies,
        cpus_seen: watch.cpus_seen.into_iter().collect(),
        data_bytes: out.task_bytes.iter().sum(),
        loops_min: out.task_loops.iter().copied().min().unwrap_or(0),
        loops_max: out.task_loops.iter().copied().max().unwrap_or(0),
        unreadable: watch.unreadable,
        looks_dropped: watch.dropped,
        interrupted: out.interrupted,
        failed: out.failed,
        looks: watch.looks,
    })
}
