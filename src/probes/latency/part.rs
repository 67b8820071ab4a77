//! The latency probe in the jobs over several probes: its part in `run`,
//! its summary line, its idle chases for the repeat check and its fleet
//! figure.

use super::LatencyView;
use crate::topology::Topology;
use crate::analysis::fleet::figures::{cell, worst};
use crate::kernels::pattern::Pattern;
use crate::probes::part::{
    with_chase_cap,
    chase_bytes, chase_cell_secs, chase_plan, local_remote, mib, node_pairs, selection,
    selection_args, time_limit, words,
};
use crate::results::names::fleet::figure as id;
use crate::results::names::{metric, param, probe};
use crate::results::{Better, Record};
use crate::view::{FleetFigure, Part, Probe, Profile, Scope, Spec, Trim};

/// The part's config on `topo`, as its command line gives it.
fn config(topo: &Topology, scope: Scope) -> super::LatencyConfig {
    let bytes = chase_bytes(topo);
    super::LatencyConfig {
        size: bytes,
        patterns: if scope.trim >= Trim::Brief {
            vec![Pattern::PageLocal { window: 256 << 10 }]
        } else {
            vec![Pattern::PageLocal { window: 256 << 10 }, Pattern::FullRandom]
        },
        pages: vec![crate::memory::PageKind::Thp],
        cpu_nodes: None,
        mem_nodes: None,
        time_limit: Some(std::time::Duration::from_secs(limit_s(topo, bytes))),
        selection: selection(scope),
    }
}

/// Page-local and full-random on every node pair, THP, past the L3.
/// Page-local first: it is the figure people quote, and the full-random
/// one repeats the matrix's idle-latency cell.
const PART: Part = Part {
    profile: Profile::Default,
    order: 0,
    args: |topo, scope| {
        let bytes = chase_bytes(topo);
        let limit = limit_s(topo, bytes);
        let mut args = words(&[
            probe::LATENCY,
            "-s",
            &mib(bytes),
            "--pages",
            "thp",
            "--pattern",
            if scope.trim >= Trim::Brief {
                "page-local"
            } else {
                "page-local,full-random"
            },
            "-t",
            &limit.to_string(),
            "--json",
        ]);
        args.extend(selection_args(selection(scope)));
        args
    },
    counted_as: None,
    in_process: None,
    plan: |topo, scope| with_chase_cap(topo, estimate(topo, &config(topo, scope))),
};

/// The part's time limit: a guard against a part that hangs or crawls,
/// well past its estimate.
fn limit_s(topo: &Topology, bytes: usize) -> u64 {
    time_limit(12, chase_cell_secs(3, bytes), 2 * node_pairs(topo))
        .parse()
        .unwrap_or(12)
}

/// What `latency` will measure with `cfg`: a buffer per memory node and
/// page kind, linked once per pattern, chased from every CPU node.
pub(crate) fn estimate(topo: &Topology, cfg: &super::LatencyConfig) -> crate::view::PartPlan {
    use crate::probes::seats::nodes;
    let pairs = crate::probes::pairs::plan(
        topo,
        &nodes(topo.usable_cpu_nodes(), &cfg.cpu_nodes),
        &nodes(topo.usable_memory_nodes(), &cfg.mem_nodes),
        cfg.selection,
    )
    .measured;
    let links: Vec<bool> = cfg.patterns.iter().map(|p| *p == Pattern::FullRandom).collect();
    chase_plan(
        &pairs,
        cfg.size,
        cfg.pages.len(),
        &links,
        cfg.patterns.len(),
        cfg.time_limit.map(|t| t.as_secs_f64()),
    )
}

/// The worst local page-local latency.
const FLEET: &[FleetFigure] = &[FleetFigure {
    spec: Spec {
        id: id::LOCAL_PAGE_LOCAL_LATENCY,
        title: "local page-local latency",
        unit: "ns",
        better: Better::Lower,
    },
    read: |records| {
        let cells: Vec<_> = records
            .iter()
            .filter(|r| r.str_param(param::PATTERN) == Some(Pattern::PAGE_LOCAL))
            .filter_map(|r| cell(r, metric::LATENCY_NS))
            .collect();
        worst(&cells, true, true)
    },
}];

/// The patterns run's summary gives in its headline line.
const HEADLINE_PATTERNS: [&str; 2] = ["page-local", "full-random"];

impl Probe for LatencyView {
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

    /// Idle latency of the patterns other than run's headline's
    /// (page-local and full-random, which it quotes already): "stride
    /// local 80.1 ns; ...".
    fn summary_line(&self, _topo: &Topology, recs: &[&Record]) -> Option<String> {
        // Records come pair by pair, each pair with every pattern: keep
        // each pattern once, in the order first met.
        let mut patterns: Vec<&str> = Vec::new();
        for p in recs.iter().filter_map(|r| r.str_param(param::PATTERN)) {
            if !patterns.contains(&p) && !HEADLINE_PATTERNS.contains(&p) {
                patterns.push(p);
            }
        }
        let parts: Vec<String> = patterns
            .iter()
            .map(|p| {
                let these: Vec<&Record> = recs
                    .iter()
                    .copied()
                    .filter(|r| r.str_param(param::PATTERN) == Some(p))
                    .collect();
                let first = these.first();
                let pages = first
                    .and_then(|r| r.str_param(param::PAGE_SIZE))
                    .unwrap_or("?");
                let buffer = crate::analysis::atlas::buffer_suffix(
                    first.and_then(|r| r.u64_param(param::SIZE_BYTES)),
                );
                format!(
                    "{p} ({pages}{buffer}) {}",
                    local_remote(&these, metric::LATENCY_NS, "ns", 1)
                )
            })
            .collect();
        (!parts.is_empty()).then(|| format!("  other patterns:     {}\n", parts.join("; ")))
    }

    fn idle_chase(&self, r: &Record) -> Option<f64> {
        r.value(metric::LATENCY_NS)
    }

    fn idle_chase_source(&self) -> &'static str {
        "the latency probe"
    }

    fn fleet_figures(&self) -> &'static [FleetFigure] {
        FLEET
    }
}
