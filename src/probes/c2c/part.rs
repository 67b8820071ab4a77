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
use crate::view::{FleetFigure, Part, Probe, Profile, Spec};

/// Fewer samples, and sampled pairs above 16 CPUs, two per (class, node
/// pair): the node summary, not every pair.
const PART: Part = Part {
    profile: Profile::Default,
    order: 4,
    args: |_| {
        words(&[
            probe::C2C,
            "-n",
            "100",
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
};

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
