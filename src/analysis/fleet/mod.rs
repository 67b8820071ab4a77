//! A fleet of machines, each known by one results document: their key
//! figures side by side, grouped by machine kind (CPU model, node count,
//! memory size) so that like is compared with like; the machines outside
//! their kind's spread (median and MAD), the kinds that are rare for their
//! CPU model, and the settings that differ within a kind.
//!
//! The flow: each document is reduced to a [`Machine`] (a few figures and
//! settings, see [`figures`]) as soon as it is read, so a fleet of 10,000
//! documents holds 10,000 small rows; [`report`] groups and judges them;
//! [`compare`] pairs two fleets by machine name.

pub(crate) mod compare;
pub(crate) mod figures;
pub(crate) mod group;
pub(crate) mod robust;

pub(crate) use group::{Rule, report};

pub(crate) use crate::view::{Figure, Spec};

use crate::results::Better;
use crate::results::names::fleet::figure as id;
use crate::view::Probe;
use serde::Serialize;

const fn spec(id: &'static str, title: &'static str, unit: &'static str, better: Better) -> Spec {
    Spec {
        id,
        title,
        unit,
        better,
    }
}

/// The fleet's own key figures: the matrix's (what every run measures,
/// `--profile quick` included) and the host's.
const OWN: &[Spec] = &[
    spec(
        id::LOCAL_BW_1T,
        "local bandwidth, 1 thread",
        "MB/s",
        Better::Higher,
    ),
    spec(
        id::REMOTE_BW_1T,
        "remote bandwidth, 1 thread",
        "MB/s",
        Better::Higher,
    ),
    spec(
        id::LOCAL_BW_SAT,
        "local bandwidth, saturated",
        "MB/s",
        Better::Higher,
    ),
    spec(
        id::REMOTE_BW_SAT,
        "remote bandwidth, saturated",
        "MB/s",
        Better::Higher,
    ),
    spec(id::LOCAL_LATENCY, "local idle latency", "ns", Better::Lower),
    spec(
        id::REMOTE_LATENCY,
        "remote idle latency",
        "ns",
        Better::Lower,
    ),
    spec(id::CLASSES, "bandwidth classes", "", Better::Lower),
    spec(id::NODES, "NUMA nodes", "", Better::Higher),
    spec(id::MEMORY_GIB, "memory", "GiB", Better::Higher),
];

/// The key figures, in the order every output shows them: the fleet's
/// own, then those of each probe of `registry`, in its order.
pub(crate) fn specs(registry: &[&dyn Probe]) -> Vec<Spec> {
    let probes = registry
        .iter()
        .flat_map(|p| p.fleet_figures().iter().map(|f| f.spec));
    OWN.iter().copied().chain(probes).collect()
}

/// What a machine is: machines of one kind are compared with each other.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub(crate) struct Kind {
    pub cpu_model: String,
    pub nodes: usize,
    /// Memory of all nodes, in GiB as the kind's machines have it (the
    /// median of a group whose sizes lie within 2% of each other).
    pub memory_gib: u64,
}

impl Kind {
    /// `AMD EPYC 7763, 8 nodes, 512 GiB`.
    pub(crate) fn label(&self) -> String {
        format!(
            "{}, {} node{}, {} GiB",
            crate::text::escape(&self.cpu_model),
            self.nodes,
            if self.nodes == 1 { "" } else { "s" },
            self.memory_gib
        )
    }
}

/// Settings compared within a kind, each as a short text.
pub(crate) type Config = Vec<(&'static str, String)>;

/// One machine of the fleet: its newest results document, reduced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Machine {
    /// The batch system's node name, else the hostname.
    pub name: String,
    pub hostname: String,
    /// The file it was read from.
    pub source: String,
    pub started: String,
    /// False for a run that was stopped: its figures are partial.
    pub complete: bool,
    pub cpu_model: String,
    pub nodes: usize,
    pub memory_bytes: u64,
    /// One per entry of [`specs`]; `None` where the document lacks it.
    pub figures: Vec<Option<Figure>>,
    pub config: Config,
}

impl Machine {
    pub(crate) fn figure(&self, i: usize) -> Option<&Figure> {
        self.figures.get(i).and_then(Option::as_ref)
    }

    pub(crate) fn setting(&self, key: &str) -> Option<&str> {
        self.config
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_str())
    }
}
