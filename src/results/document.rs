//! Types of the results document, schema 1.
//!
//! Every field documented here is part of the schema. Readers ignore keys they
//! do not know, so newer files stay readable; a file whose `schema` is newer
//! than [`SCHEMA`] is read as far as its shape allows and flagged.

use crate::topology::{Allowed, Thp, Topology};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// The schema version this build writes.
pub(crate) const SCHEMA: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Document {
    /// Schema version of this document.
    pub schema: u32,
    /// Always `numabench`.
    pub tool: String,
    /// Version of the tool that wrote it.
    pub version: String,
    /// The command line, argument by argument.
    pub command: Vec<String>,
    /// RFC 3339 UTC time the run started.
    pub started: String,
    /// RFC 3339 UTC time the run finished; `None` while running or when the
    /// run was interrupted.
    pub finished: Option<String>,
    /// False when the run was interrupted and the records are partial.
    #[serde(default = "yes")]
    pub complete: bool,
    /// The machine the run measured.
    pub host: Host,
    /// What was measured.
    pub records: Vec<Record>,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Host {
    pub hostname: String,
    pub kernel: String,
    pub cpu_model: String,
    pub thp: Thp,
    pub numa_balancing: Option<u32>,
    /// The cpuset the run was confined to.
    pub allowed: Allowed,
    /// The full topology snapshot.
    pub topology: Topology,
    /// The name the batch system knows this machine by (`SLURMD_NODENAME`
    /// when the run was a Slurm job), which `fleet report` keys machines by:
    /// on some clusters every node has the same hostname.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_node: Option<String>,
}

impl Host {
    pub fn from_topology(topo: &Topology) -> Self {
        Self {
            hostname: topo.hostname.clone(),
            kernel: topo.kernel.clone(),
            cpu_model: topo.cpu_model.clone(),
            thp: topo.thp.clone(),
            numa_balancing: topo.numa_balancing,
            allowed: topo.allowed.clone(),
            topology: topo.clone(),
            batch_node: None,
        }
    }
}

/// Which direction of a metric is an improvement.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Higher,
    Lower,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Metric {
    pub value: f64,
    /// Unit as written in tables, e.g. `MB/s` (10^6 bytes per second), `ns`.
    pub unit: String,
    pub better: Better,
}

/// Where a record's memory and threads really were.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Placement {
    /// Pages found on each node (keys are node ids).
    pub pages_by_node: BTreeMap<String, u64>,
    /// Percent of pages on the intended node(s); `None` when nothing was
    /// intended (default policy).
    pub on_target_pct: Option<f64>,
    /// Percent of the memory backed by huge pages.
    pub huge_pct: f64,
    /// CPUs the measuring threads were seen on.
    pub cpus_seen: Vec<usize>,
}

/// A time series, e.g. memory per node over time.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Series {
    pub name: String,
    pub x_label: String,
    pub x_unit: String,
    pub y_label: String,
    pub y_unit: String,
    pub x: Vec<f64>,
    /// One line per label (e.g. per node), each as long as `x`.
    pub lines: Vec<Line>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Line {
    pub label: String,
    pub y: Vec<f64>,
}

/// One measurement of one probe.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Record {
    /// The probe that made it: `matrix`, `sweep`, `mem`, ...
    pub probe: String,
    /// Name unique within the probe, e.g. `triad 0->1`.
    pub name: String,
    /// What was asked: canonical keys `cpu_node`, `mem_node`, `cpu`,
    /// `threads`, `processes`, `size_bytes`, `kernel`, `variant`,
    /// `page_size`.
    #[serde(default)]
    pub params: Map<String, Value>,
    /// What was measured, by name with the unit in the name
    /// (`bandwidth_mb_s`, `latency_ns`, `runtime_s`, ...).
    #[serde(default)]
    pub metrics: BTreeMap<String, Metric>,
    /// Raw repetitions per metric name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub samples: BTreeMap<String, Vec<f64>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<Series>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    /// Things the reader of this figure should know (scaled-down sizes,
    /// unverified placement, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// What happened to the figures, as data beside the notes that say it
    /// in words: the code acts on these, never on a note's wording. Left
    /// out when empty, so documents from before it read and print as they
    /// did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<super::Condition>,
}

impl Record {
    pub fn new(probe: &str, name: &str) -> Self {
        Self {
            probe: probe.into(),
            name: name.into(),
            params: Map::new(),
            metrics: BTreeMap::new(),
            samples: BTreeMap::new(),
            series: Vec::new(),
            placement: None,
            notes: Vec::new(),
            conditions: Vec::new(),
        }
    }

    pub fn param(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.params.insert(key.into(), value.into());
        self
    }

    /// Adds a metric. A value that is not finite (a rate over zero time, a
    /// run stopped before it moved a byte) was not measured: JSON has no
    /// way to say NaN or infinity, so it is left out rather than written as
    /// a null no reader accepts.
    pub fn metric(mut self, key: &str, value: f64, unit: &str, better: Better) -> Self {
        if !value.is_finite() {
            return self;
        }
        self.metrics.insert(
            key.into(),
            Metric {
                value,
                unit: unit.into(),
                better,
            },
        );
        self
    }
}

impl Document {
    /// A new, empty document for this run.
    pub fn new(topo: &Topology) -> Self {
        Self {
            schema: SCHEMA,
            tool: "numabench".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            command: std::env::args().collect(),
            started: super::now_rfc3339(),
            finished: None,
            complete: false,
            host: Host {
                batch_node: batch_node(),
                ..Host::from_topology(topo)
            },
            records: Vec::new(),
        }
    }

    /// Seconds from `started` to `finished`, where both are this crate's
    /// UTC form: the duration every output of the document quotes.
    pub fn elapsed_s(&self) -> Option<f64> {
        let start = super::time::parse_utc(&self.started)?;
        let end = super::time::parse_utc(self.finished.as_deref()?)?;
        (end >= start).then_some((end - start) as f64)
    }

    /// Marks the run finished now.
    pub fn finish(&mut self) {
        self.finished = Some(super::now_rfc3339());
        self.complete = true;
    }

    pub fn to_json(&self) -> Result<Vec<u8>> {
        let mut bytes = crate::text::json_pretty(self)?.into_bytes();
        bytes.push(b'\n');
        Ok(bytes)
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        super::write_output(path, &self.to_json()?)
    }
}

/// The Slurm node this process runs on, if it is a Slurm job step: a plain
/// name (control characters would be escaped on output anyway, but a name
/// over 255 bytes is no node name).
fn batch_node() -> Option<String> {
    std::env::var(BATCH_NODE_ENV)
        .ok()
        .filter(|n| !n.is_empty() && n.len() <= 255)
}

/// What Slurm's `slurmd` sets to the node's name in every job step.
pub(crate) const BATCH_NODE_ENV: &str = "SLURMD_NODENAME";

#[cfg(test)]
#[path = "document_tests.rs"]
mod tests;
