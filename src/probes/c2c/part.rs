//! Core-to-core latency in the jobs over several probes: its part in
//! `run`, its summary line and its fleet figure.

use super::C2cView;
use crate::topology::Topology;
use crate::analysis::fleet::figures::plain;
use crate::probes::part::words;
use crate::results::names::c2c::variant::CAS;
use crate::results::names::fleet::figure as id;
use crate::results::names::{metric, param, probe};
use crate::results::{Better, Record};
use crate::view::{FleetFigure, Part, Probe, Profile, Scope, Spec, Trim};

/// Fewer samples, and sampled pairs above 16 CPUs, two per (class, node
/// pair): the node summary, not every pair.
const PART: Part = Part {
    profile: Profile::Default,
    order: 4,
    args: |_, scope| {
        words(&[
            probe::C2C,
            "--samples",
            &samples(scope).to_string(),
            "--sample-above",
            "16",
            "--per-group",
            "2",
            "--time-limit",
            "10",
            "--json",
        ])
    },
    counted_as: None,
    in_process: None,
    plan: |topo, scope| {
        let cpus: Vec<usize> = topo.allowed.cpus.iter().collect();
        let pairs = super::plan::plan(topo, &cpus, 16, 2).pairs.len();
        estimate(pairs, 1000, samples(scope), 2, Some(10.0))
    },
};

/// Samples per pair: 100, or half in a run trimmed to its budget.
fn samples(scope: Scope) -> usize {
    if scope.trim >= Trim::Repeats { 50 } else { 100 }
}

/// Seconds one round trip of a line between two cores takes in this
/// model: across sockets on a large server; a core pair of one L3 takes
/// less.
const ROUND_TRIP_S: f64 = 150e-9;
/// Seconds a reader takes per line chased in a read variant.
const READ_LINE_S: f64 = 60e-9;
/// Seconds to start and pin a pair's two threads.
const PAIR_START_S: f64 = 2e-3;

/// What `c2c` will measure: `pairs` CPU pairs, each with `samples` (and a
/// warm-up) of `iterations` round trips, and a read variant both ways,
/// of `variants` variants (one ping-pong and one read in the default).
pub(crate) fn estimate(
    pairs: usize,
    iterations: u64,
    samples: usize,
    variants: usize,
    limit_s: Option<f64>,
) -> crate::view::PartPlan {
    use crate::probes::cost::Estimate;
    let n = (samples + 1) as f64;
    let ping = n * iterations as f64 * ROUND_TRIP_S;
    let read = 2.0 * n * super::pingpong::CHASE_LINES as f64 * READ_LINE_S;
    let per_pair = PAIR_START_S + ping + if variants > 1 { read } else { 0.0 };
    let mut e = Estimate::default();
    e.add(pairs as f64 * per_pair);
    if let Some(limit) = limit_s {
        e.cap(limit, per_pair);
    }
    e.plan(format!("{pairs} CPU pair(s) x {variants} variant(s)"))
}

/// The median compare-and-swap latency over the CPU pairs measured.
const FLEET: &[FleetFigure] = &[FleetFigure {
    spec: Spec {
        id: id::C2C_LATENCY,
        title: "core-to-core latency",
        unit: "ns",
        better: Better::Lower,
    },
    read: |records| {
        let mut v: Vec<f64> = records
            .iter()
            .filter(|r| r.str_param(param::VARIANT) == Some(CAS))
            .filter_map(|r| r.measured(metric::LATENCY_NS).map(|m| m.value))
            .collect();
        v.sort_by(f64::total_cmp);
        plain(*v.get(v.len() / 2)?)
    },
}];

impl Probe for C2cView {
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

    /// Median one-way latency of each class, per variant, as the view's
    /// class table has it.
    fn summary_line(&self, _topo: &Topology, recs: &[&Record]) -> Option<String> {
        let parts: Vec<String> = super::view::class_medians(recs)
            .into_iter()
            .map(|(v, classes)| {
                let per_class: Vec<String> = classes
                    .iter()
                    .map(|(c, m)| format!("{} {m:.1} ns", c.name()))
                    .collect();
                format!("{v} {}", per_class.join(", "))
            })
            .collect();
        (!parts.is_empty()).then(|| format!("  core to core:       {}\n", parts.join("; ")))
    }

    fn fleet_figures(&self) -> &'static [FleetFigure] {
        FLEET
    }
}
