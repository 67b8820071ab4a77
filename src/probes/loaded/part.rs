//! The loaded-latency probe in the jobs over several probes: its part in
//! `run`, its summary line, its idle points for the repeat check and its
//! fleet figure.

use super::LoadedView;
use crate::topology::Topology;
use crate::analysis::fleet::figures::{cell, worst};
use crate::probes::part::words;
use crate::results::names::fleet::figure as id;
use crate::results::names::loaded::{kind, metric, param};
use crate::results::names::{metric as shared, param as node, probe};
use crate::results::{Better, Record};
use crate::view::{FleetFigure, Part, Probe, Profile, Scope, Spec, Trim};

/// A short curve: idle, four load levels, the near and the far pair of
/// the first CPU node; the far pair is not begun after 60 s. Page-local:
/// the knee is where latency doubles, and the page walks of a large
/// full-random chase (481 ns idle against 144 ns on a 7.5 GiB buffer)
/// would double the idle figure the load must match.
const PART: Part = Part {
    profile: Profile::Default,
    order: 2,
    args: |_, scope| {
        words(&[
            probe::LOADED,
            "--pattern",
            "page-local",
            "--pairs",
            "near-far",
            "--delays",
            &delays(scope)
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(","),
            "--time-limit",
            "60",
            "--json",
        ])
    },
    counted_as: None,
    in_process: None,
    plan: |topo, scope| {
        let cfg = super::LoadedConfig {
            delays_ns: delays(scope),
            pattern: crate::kernels::pattern::Pattern::PageLocal { window: 256 << 10 },
            pairs: super::Pairs::NearFar,
            time_limit: Some(std::time::Duration::from_secs(60)),
            ..Default::default()
        };
        estimate(topo, &cfg)
    },
};

/// The loads: four and full, or three in a run trimmed to its budget.
fn delays(scope: Scope) -> Vec<u64> {
    if scope.trim >= Trim::Repeats {
        vec![0, 400, 20000]
    } else {
        vec![0, 100, 400, 1500, 20000]
    }
}

/// Seconds of one point of a curve: two settling samples and about ten
/// of 20 ms (`inject`'s sampling), and the injectors' start.
const POINT_S: f64 = 0.27;
/// Seconds of the injectors' kernel trial: two rounds of 30 ms over the
/// mix's candidate kernels.
const TRIAL_S: f64 = 0.25;

/// What `loaded` will measure with `cfg`: per pair a chase buffer, the
/// injectors' buffers, the kernel trial and a point per delay beside the
/// idle one.
pub(crate) fn estimate(topo: &Topology, cfg: &super::LoadedConfig) -> crate::view::PartPlan {
    use crate::probes::cost::{self, Estimate};
    let pairs = match super::pairs(topo, cfg) {
        Ok(p) => p,
        Err(e) => return crate::view::PartPlan::cannot(&e),
    };
    let full = cfg.pattern == crate::kernels::pattern::Pattern::FullRandom;
    let mut e = Estimate::default();
    let mut per_pair = 0.0f64;
    let mut mem_nodes: Vec<usize> = pairs.iter().map(|p| p.1).collect();
    mem_nodes.sort_unstable();
    mem_nodes.dedup();
    for &pair in &pairs {
        let Ok(p) = super::plan(topo, cfg, pair) else {
            continue;
        };
        let injected = (p.injector_bytes * p.injector_cpus.len()) as u64;
        let s = cost::fault_s(injected, p.injector_cpus.len())
            + TRIAL_S
            + (cfg.delays_ns.len() + 1) as f64 * POINT_S;
        per_pair = per_pair.max(s);
        e.builds("injector arrays", p.injector_cpus.len(), p.injector_bytes as u64)
            .mapped(p.chase_bytes as u64 + injected)
            .add(s);
    }
    if let Some(p) = pairs.first().and_then(|&pair| super::plan(topo, cfg, pair).ok()) {
        e.builds("chase", mem_nodes.len(), p.chase_bytes as u64)
            .add(mem_nodes.len() as f64 * cost::chase_build_s(p.chase_bytes as u64, full));
    }
    if let Some(t) = cfg.time_limit {
        e.cap(t.as_secs_f64(), per_pair);
    }
    e.plan(format!(
        "{} pair(s) x {} point(s)",
        pairs.len(),
        cfg.delays_ns.len() + 1
    ))
}

/// The worst local latency at full load.
const FLEET: &[FleetFigure] = &[FleetFigure {
    spec: Spec {
        id: id::LOCAL_LOADED_LATENCY,
        title: "local latency at full load",
        unit: "ns",
        better: Better::Lower,
    },
    read: |records| {
        let cells: Vec<_> = records
            .iter()
            .filter(|r| r.str_param(param::KIND) == Some(kind::KNEE))
            .filter_map(|r| cell(r, metric::MAX_LOAD_LATENCY_NS))
            .collect();
        worst(&cells, true, true)
    },
}];

impl Probe for LoadedView {
    fn findings(
        &self,
        _doc: &crate::results::Document,
        records: &[&Record],
    ) -> Vec<crate::view::Finding> {
        super::findings::findings(records)
    }

    fn part(&self) -> Option<Part> {
        Some(PART)
    }

    /// Idle and full-load latency with the load the injectors moved.
    fn summary_line(&self, _topo: &Topology, recs: &[&Record]) -> Option<String> {
        let parts: Vec<String> = recs
            .iter()
            .filter(|r| r.str_param(param::KIND) == Some(kind::KNEE))
            .map(|r| {
                let pair = format!(
                    "{}->{}",
                    r.u64_param(node::CPU_NODE).unwrap_or(0),
                    r.u64_param(node::MEM_NODE).unwrap_or(0)
                );
                let idle = r.value(metric::IDLE_LATENCY_NS).unwrap_or(f64::NAN);
                // MB/s as the summary's other bandwidths: a light knee
                // printed in GB/s read "0.0".
                let full = match (
                    r.value(metric::MAX_LOAD_LATENCY_NS),
                    r.value(metric::MAX_BANDWIDTH_MB_S),
                ) {
                    (Some(ns), Some(bw)) => format!("{ns:.0} ns at {bw:.0} MB/s injected"),
                    _ => "no load measured".into(),
                };
                let knee = match r.value(metric::KNEE_BANDWIDTH_MB_S) {
                    Some(k) => format!(", knee at {k:.0} MB/s"),
                    None => ", no knee".into(),
                };
                let one = if r.u64_param(param::INJECTORS) == Some(1) {
                    " (1 injector: one core's load)"
                } else {
                    ""
                };
                format!("{pair} idle {idle:.0} ns, {full}{knee}{one}")
            })
            .collect();
        // Its idle point is a chase of its own, beside run's headline: the
        // phrase says the line is about load.
        (!parts.is_empty()).then(|| {
            format!(
                "  loaded latency:     under injected load: {}\n",
                parts.join("; ")
            )
        })
    }

    /// The curve's idle point: its injectors parked.
    fn idle_chase(&self, r: &Record) -> Option<f64> {
        let idle = r.str_param(param::KIND) == Some(kind::POINT)
            && r.u64_param(param::INJECTORS) == Some(0);
        idle.then(|| r.value(shared::LATENCY_NS)).flatten()
    }

    fn idle_chase_source(&self) -> &'static str {
        "the loaded curve's idle point"
    }

    fn fleet_figures(&self) -> &'static [FleetFigure] {
        FLEET
    }
}
