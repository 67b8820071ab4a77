//! Types of the results document, schema 1.
//!
//! Every field documented here is part of the schema. Readers ignore keys they
//! do not know, so newer files stay readable; a file whose `schema` is newer
//! than [`SCHEMA`] is read as far as its shape allows and flagged.

use crate::topology::{Allowed, Thp, Topology};
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// The schema version this build writes.
pub const SCHEMA: u32 = 1;

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

    /// Reads a results file; the error says which file and what is wrong
    /// with it.
    pub fn load(path: &Path) -> Result<Loaded> {
        let text = read_results_file(path)
            .with_context(|| format!("cannot read results file {}", path.display()))?;
        Self::from_json(&text)
            .with_context(|| format!("{} is not a usable results file", path.display()))
    }

    pub fn from_json(text: &str) -> Result<Loaded> {
        // Straight into the document first: the generic tree of a large
        // file takes several times the memory of the document itself. The
        // tree is built only for a file that does not read so, to say why
        // or to read what can be read of it.
        if let Ok(document) = serde_json::from_str::<Document>(text)
            && document.tool == "numabench"
        {
            let mut warnings = Vec::new();
            if document.schema > SCHEMA {
                warnings.push(newer_schema(u64::from(document.schema)));
            }
            super::checks::check_host_ids(&document.host.topology)?;
            super::checks::check_records(document.records.iter().map(Into::into))?;
            return Ok(Loaded { document, warnings });
        }
        let value: Value = serde_json::from_str(text).context("not valid JSON")?;
        let Some(obj) = value.as_object() else {
            bail!("the top level is not an object");
        };
        if obj.get("tool").and_then(Value::as_str) != Some("numabench") {
            bail!("it has no \"tool\": \"numabench\" key");
        }
        let schema = obj
            .get("schema")
            .and_then(Value::as_u64)
            .context("it has no numeric \"schema\" key")?;
        let mut warnings = Vec::new();
        if schema > u64::from(SCHEMA) {
            warnings.push(newer_schema(schema));
        }
        // Read from the parsed value in place: a copy would double the memory a
        // large file takes.
        let document = match Document::deserialize(&value) {
            Ok(d) => d,
            // Read what can be read: each record on its own, the host as far
            // as its names go, and say what was left out.
            Err(whole) => lenient(obj, schema, &mut warnings)
                .with_context(|| format!("schema {schema} document does not match: {whole}"))?,
        };
        super::checks::check_host_ids(&document.host.topology)?;
        super::checks::check_records(document.records.iter().map(Into::into))?;
        Ok(Loaded { document, warnings })
    }
}

fn newer_schema(schema: u64) -> String {
    format!(
        "schema {schema} is newer than this numabench understands ({SCHEMA}); fields it does not know are ignored"
    )
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
pub const BATCH_NODE_ENV: &str = "SLURMD_NODENAME";

/// Most a results file may hold; a run of every probe on a large machine
/// writes a few MiB. Parsed, a document takes up to some twenty times its
/// size in memory, so the cap is what bounds a hostile file's cost.
pub const MAX_RESULTS_BYTES: u64 = 64 << 20;

/// Memory a document takes while it is read, as a multiple of its size:
/// the text, then the records built from it (about eight times the text
/// for a document of many small records).
const PARSE_FACTOR: u64 = 10;

/// What reading a document may take without a look at the memory limit:
/// well inside the reserve the limit keeps for the process's own heap.
const PARSE_UNCHECKED_BYTES: u64 = 16 << 20;

/// The text of a results file, which must be a regular file: a FIFO or a
/// terminal would block forever, `/dev/zero` would never end. The type is
/// checked before opening (opening a device can act: `/dev/watchdog` arms a
/// timer) and again on the descriptor, which was opened without blocking,
/// so nothing swapped in between is read.
pub(crate) fn read_results_file(path: &Path) -> Result<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let regular = |meta: std::fs::Metadata| -> Result<()> {
        if meta.is_file() {
            return Ok(());
        }
        let kind = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file (a FIFO, pipe, socket or device)"
        };
        bail!("it is {kind}; save the results to a file first (--save FILE) and give that");
    };
    regular(std::fs::metadata(path)?)?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = file.metadata()?;
    regular(meta.clone())?;
    // A small document fits in what the limit's reserve keeps for the
    // process itself; only one that needs more is held to the headroom.
    let need = meta.len().min(MAX_RESULTS_BYTES) * PARSE_FACTOR;
    if need > PARSE_UNCHECKED_BYTES
        && let Some(limit) = crate::topology::process_memory_limit()
        && need > limit.headroom_bytes
    {
        bail!(
            "reading its {} takes up to {} of memory, more than the {}; raise the limit or read it where there is room",
            crate::units::bytes(meta.len()),
            crate::units::bytes(need),
            limit.describe()
        );
    }
    let mut bytes = Vec::new();
    file.take(MAX_RESULTS_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_RESULTS_BYTES {
        bail!(
            "it holds more than {} MiB, more than any results document",
            MAX_RESULTS_BYTES >> 20
        );
    }
    String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("it is not UTF-8 text"))
}

/// A document whose whole does not parse: its records one by one (bad ones
/// skipped with a warning) and its host as far as it parses.
fn lenient(obj: &Map<String, Value>, schema: u64, warnings: &mut Vec<String>) -> Result<Document> {
    let Some(records) = obj.get("records").and_then(Value::as_array) else {
        bail!("it has no \"records\" list");
    };
    let text = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_string);
    let mut doc = Document {
        schema: schema as u32,
        tool: "numabench".into(),
        version: text("version").unwrap_or_else(|| "?".into()),
        command: obj
            .get("command")
            .and_then(|c| Vec::<String>::deserialize(c).ok())
            .unwrap_or_default(),
        started: text("started").unwrap_or_default(),
        finished: text("finished"),
        complete: obj.get("complete").and_then(Value::as_bool).unwrap_or(true),
        host: Host::from_topology(&Topology::default()),
        records: Vec::new(),
    };
    // Parts are read in place, never copied: a large file must not take
    // twice its memory.
    let host = obj.get("host").unwrap_or(&Value::Null);
    match Host::deserialize(host) {
        Ok(h) => doc.host = h,
        Err(e) => {
            let name = |k: &str| {
                host.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_string()
            };
            doc.host.hostname = name("hostname");
            doc.host.kernel = name("kernel");
            doc.host.cpu_model = name("cpu_model");
            doc.host.topology.hostname = doc.host.hostname.clone();
            warnings.push(format!(
                "its host description cannot be read ({e}); only the host's names are used"
            ));
        }
    }
    for (i, r) in records.iter().enumerate() {
        match Record::deserialize(r) {
            Ok(rec) => doc.records.push(rec),
            Err(e) => warnings.push(format!(
                "record {} ({}) cannot be read and is left out: {e}",
                i + 1,
                r.get("name").and_then(Value::as_str).unwrap_or("unnamed")
            )),
        }
    }
    Ok(doc)
}

/// A document read from disk with what the reader should know about it.
#[derive(Debug)]
pub struct Loaded {
    pub document: Document,
    pub warnings: Vec<String>,
}

#[cfg(test)]
#[path = "document_tests.rs"]
mod tests;
