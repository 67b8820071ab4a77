//! Peak injection in the jobs over several probes: its part in `run`, its
//! summary line and its fleet figure.

use super::PeakView;
use crate::topology::Topology;
use crate::analysis::fleet::figures::{cell, worst};
use crate::probes::part::{local_remote, time_limit, words};
use crate::results::names::fleet::figure as id;
use crate::results::names::peak::{INTERLEAVE, kind, param};
use crate::results::names::{metric, param as shared, probe};
use crate::results::{Better, Record};
use crate::view::{FleetFigure, Part, Probe, Profile, Scope, Spec};

/// All six mixes (the best is not always read, 1:1, triad or write: 2:1
/// or 3:1 wins on some machines, with either store kind), both store
/// kinds, all cores of each CPU node into every target.
const PART: Part = Part {
    profile: Profile::Default,
    order: 5,
    args: |topo, scope| {
        // Each CPU node into every memory node, and interleaved with two or more.
        let mem = topo.usable_memory_nodes().len();
        let targets = mem + usize::from(mem > 1);
        let limit = limit_s(topo, targets);
        let timing = timing(scope);
        let mut args = words(&[
            probe::PEAK,
            "-r",
            &timing.tries.to_string(),
            "--min-run-ms",
            &timing.min_run.as_millis().to_string(),
            "--threads",
            "all",
            "--time-limit",
            &limit,
            "--json",
        ]);
        args.extend(crate::probes::part::selection_args(
            crate::probes::part::selection(scope),
        ));
        args
    },
    counted_as: None,
    in_process: None,
    plan: |topo, scope| {
        let mem = topo.usable_memory_nodes().len();
        let cfg = super::PeakConfig {
            threads: vec![super::ThreadCount::All],
            timing: timing(scope),
            selection: crate::probes::part::selection(scope),
            time_limit: Some(std::time::Duration::from_secs(
                limit_s(topo, mem + usize::from(mem > 1))
                    .parse()
                    .unwrap_or(20),
            )),
            ..Default::default()
        };
        estimate(topo, &cfg)
    },
};

/// Each figure's timing: the default, or the trimmed one in a run
/// trimmed to its budget.
fn timing(scope: Scope) -> crate::probes::measure::Timing {
    crate::probes::cost::timing(scope.trim)
}

/// The part's time limit: 3 s per (CPU node, target), at least 20.
fn limit_s(topo: &Topology, targets: usize) -> String {
    time_limit(20, 3, topo.usable_cpu_nodes().len() * targets)
}

/// What `peak` will measure with `cfg`: per CPU node, target and thread
/// count one team that maps its working set once and times every
/// candidate kernel on it.
pub(crate) fn estimate(topo: &Topology, cfg: &super::PeakConfig) -> crate::view::PartPlan {
    use crate::probes::cost::{self, Estimate};
    use crate::probes::seats::{node_cpus, nodes};
    let cpu_nodes = nodes(topo.usable_cpu_nodes(), &cfg.cpu_nodes);
    let mem_nodes = nodes(topo.usable_memory_nodes(), &cfg.mem_nodes);
    let (kernels, _) = super::peak_kernels(&cfg.mixes, &cfg.stores);
    let one = cost::bandwidth_s(cfg.timing.tries, cfg.timing.min_run);
    let targets = super::targets(&mem_nodes, cfg.interleave);
    let wanted = wanted_targets(topo, cfg, (&cpu_nodes, &mem_nodes));
    let mut e = Estimate::default();
    let mut measured = 0;
    for &c in &cpu_nodes {
        let cpus = node_cpus(topo, c);
        for n in super::counts(cfg, cpus.len()) {
            for target in &wanted(c) {
                let (ws, _, _) = super::working_set(topo, cfg, &cpus, target);
                e.builds("bandwidth arrays", 1, ws as u64)
                    .mapped(ws as u64)
                    .add(cost::fault_s(ws as u64, n))
                    .add(kernels.len() as f64 * one);
                measured += 1;
            }
        }
    }
    if let Some(t) = cfg.time_limit {
        e.cap(t.as_secs_f64(), kernels.len() as f64 * one);
    }
    e.plan(format!(
        "{measured} team(s) x {} kernel(s): {} CPU node(s) x {} target(s)",
        kernels.len(),
        cpu_nodes.len(),
        targets.len()
    ))
}

/// The best mix of each target with the most threads measured: the
/// all-core figures, not the one-thread ones (those without a thread
/// count where none has one).
fn all_core_best<'a>(recs: &[&'a Record]) -> Vec<&'a Record> {
    let best: Vec<&Record> = recs
        .iter()
        .copied()
        .filter(|r| r.str_param(param::KIND) == Some(kind::BEST))
        .collect();
    let most = best
        .iter()
        .filter_map(|r| r.u64_param(shared::THREADS))
        .max();
    best.into_iter()
        .filter(|r| r.u64_param(shared::THREADS) == most)
        .collect()
}

/// The worst local all-core peak.
const FLEET: &[FleetFigure] = &[FleetFigure {
    spec: Spec {
        id: id::LOCAL_PEAK_BW,
        title: "local peak injection",
        unit: "MB/s",
        better: Better::Higher,
    },
    read: |records| {
        let cells: Vec<_> = all_core_best(records)
            .iter()
            .filter_map(|r| cell(r, metric::BANDWIDTH_MB_S))
            .collect();
        worst(&cells, true, false)
    },
}];

impl Probe for PeakView {
    fn findings(
        &self,
        doc: &crate::results::Document,
        records: &[&Record],
    ) -> Vec<crate::view::Finding> {
        super::findings::findings(doc, records)
    }

    fn part(&self) -> Option<Part> {
        Some(PART)
    }

    /// The best mix of all cores per target: local, remote, interleaved.
    fn summary_line(&self, _topo: &Topology, recs: &[&Record]) -> Option<String> {
        let top = all_core_best(recs);
        let most = top.first()?.u64_param(shared::THREADS)?;
        let named = |r: &Record| {
            format!(
                "{} {}",
                r.str_param(param::MIX).unwrap_or("?"),
                r.str_param(param::STORE).unwrap_or("?")
            )
        };
        let mut out = format!(
            "  peak injection:     {most} thread(s): {}",
            local_remote(&top, metric::BANDWIDTH_MB_S, "MB/s", 0)
        );
        if let Some(r) = top.iter().find(|r| r.is_local()) {
            out.push_str(&format!(" (local best: {})", named(r)));
        }
        if let Some(r) = top
            .iter()
            .find(|r| r.str_param(param::TARGET) == Some(INTERLEAVE))
        {
            let v = r.value(metric::BANDWIDTH_MB_S).unwrap_or(f64::NAN);
            out.push_str(&format!(", interleaved {v:.0} MB/s"));
        }
        out.push('\n');
        Some(out)
    }

    fn fleet_figures(&self) -> &'static [FleetFigure] {
        FLEET
    }
}

/// The targets of each CPU node: every memory node and the interleaved
/// one, or where `cfg.selection` samples, the memory nodes of its sampled
/// pairs and the interleaved one.
pub(super) fn wanted_targets(
    topo: &Topology,
    cfg: &super::PeakConfig,
    (cpu_nodes, mem_nodes): (&[usize], &[usize]),
) -> impl Fn(usize) -> Vec<super::Target> {
    let plan = crate::probes::pairs::plan(topo, cpu_nodes, mem_nodes, cfg.selection);
    let all = super::targets(mem_nodes, cfg.interleave);
    move |c| {
        all.iter()
            .filter(|t| match t {
                super::Target::Node(m) => plan.measured.contains(&(c, *m)),
                super::Target::Interleave(_) => true,
            })
            .cloned()
            .collect()
    }
}
