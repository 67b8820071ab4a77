//! A results document read for a fleet: the host's identity and settings,
//! the nodes' sizes and the records, and nothing else. The full topology
//! (every CPU and cache) is skipped while parsing, never built, so reading
//! thousands of documents costs the records they hold and little more.
//!
//! The same checks as [`super::Document::load`]: a regular file of at most
//! [`super::read::MAX_RESULTS_BYTES`], JSON with `"tool": "numabench"` and a
//! numeric schema, records naming ids Linux allows and figures a
//! measurement gives.

use super::checks::RecordParts;
use super::document::{Metric, Placement};
use super::read::read_results_file;
use anyhow::{Context, Result, bail};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// What a fleet needs of one results document.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub(crate) struct LeanDocument {
    pub tool: String,
    pub schema: u64,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub started: String,
    #[serde(default = "yes")]
    pub complete: bool,
    pub host: LeanHost,
    #[serde(default)]
    pub records: Vec<LeanRecord>,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
pub(crate) struct LeanHost {
    #[serde(default)]
    pub hostname: String,
    #[serde(default)]
    pub kernel: String,
    #[serde(default)]
    pub cpu_model: String,
    #[serde(default)]
    pub thp: crate::topology::Thp,
    #[serde(default)]
    pub numa_balancing: Option<u32>,
    #[serde(default)]
    pub batch_node: Option<String>,
    #[serde(default)]
    pub topology: LeanTopology,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
pub(crate) struct LeanTopology {
    #[serde(default)]
    pub nodes: Vec<LeanNode>,
    /// Only its length is kept.
    #[serde(default, deserialize_with = "count")]
    pub cpus: usize,
}

/// The length of a list, its entries skipped unbuilt.
fn count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    struct Count;
    impl<'de> serde::de::Visitor<'de> for Count {
        type Value = usize;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
            let mut n = 0;
            while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                n += 1;
            }
            Ok(n)
        }
    }
    d.deserialize_seq(Count)
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub(crate) struct LeanNode {
    pub id: usize,
    #[serde(default)]
    pub has_cpu: bool,
    #[serde(default)]
    pub has_memory: bool,
    #[serde(default)]
    pub mem_total_bytes: u64,
}

/// A record as [`super::Record`] has it, without its series.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub(crate) struct LeanRecord {
    pub probe: String,
    pub name: String,
    #[serde(default)]
    pub params: Map<String, Value>,
    #[serde(default)]
    pub metrics: BTreeMap<String, Metric>,
    #[serde(default)]
    pub samples: BTreeMap<String, Vec<f64>>,
    #[serde(default)]
    pub placement: Option<Placement>,
}

impl LeanRecord {
    /// The record as the analysis functions over records take it.
    pub(crate) fn to_record(&self) -> super::Record {
        let mut r = super::Record::new(&self.probe, &self.name);
        r.params = self.params.clone();
        r.metrics = self.metrics.clone();
        r.samples = self.samples.clone();
        r.placement = self.placement.clone();
        r
    }
}

impl<'a> From<&'a LeanRecord> for RecordParts<'a> {
    fn from(r: &'a LeanRecord) -> Self {
        RecordParts {
            name: &r.name,
            params: &r.params,
            metrics: &r.metrics,
        }
    }
}

impl LeanDocument {
    /// Reads a results file; the error says what is wrong with it.
    pub(crate) fn load(path: &Path) -> Result<LeanDocument> {
        let text = read_results_file(path)
            .with_context(|| format!("cannot read results file {}", path.display()))?;
        Self::from_json(&text)
            .with_context(|| format!("{} is not a usable results file", path.display()))
    }

    pub(crate) fn from_json(text: &str) -> Result<LeanDocument> {
        let doc: LeanDocument = match serde_json::from_str(text) {
            Ok(d) => d,
            Err(e) => {
                // Say first what a person can act on: not ours at all.
                let v: Value = serde_json::from_str(text).context("not valid JSON")?;
                if v.get("tool").and_then(Value::as_str) != Some("numabench") {
                    bail!("it has no \"tool\": \"numabench\" key");
                }
                bail!("its shape does not match a results document: {e}");
            }
        };
        if doc.tool != "numabench" {
            bail!("it has no \"tool\": \"numabench\" key");
        }
        super::checks::check_records(doc.records.iter().map(Into::into))?;
        Ok(doc)
    }

    /// The name the fleet knows the machine by: the batch system's node
    /// name where the run recorded one, else the hostname.
    pub(crate) fn machine(&self) -> &str {
        self.host
            .batch_node
            .as_deref()
            .filter(|n| !n.is_empty())
            .unwrap_or(&self.host.hostname)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Better, Document, Record};

    fn doc() -> Document {
        let mut d = Document::new(&crate::topology::fixture("local-1node"));
        d.records.push(
            Record::new("matrix", "bandwidth_1t 0->0")
                .param("cpu_node", 0)
                .metric("bandwidth_mb_s", 1000.0, "MB/s", Better::Higher),
        );
        d.finish();
        d
    }

    #[test]
    fn reads_what_the_full_reader_reads() {
        let d = doc();
        let json = String::from_utf8(d.to_json().unwrap()).unwrap();
        let lean = LeanDocument::from_json(&json).unwrap();
        assert_eq!(lean.host.hostname, d.host.hostname);
        assert_eq!(lean.host.kernel, d.host.kernel);
        assert_eq!(lean.host.topology.nodes.len(), d.host.topology.nodes.len());
        assert_eq!(lean.host.topology.cpus, d.host.topology.cpus.len());
        assert_eq!(lean.records[0].to_record(), d.records[0]);
        assert!(lean.complete);
        assert_eq!(lean.machine(), d.host.hostname);
    }

    #[test]
    fn the_batch_node_names_the_machine() {
        let mut d = doc();
        d.host.batch_node = Some("n17".into());
        let json = String::from_utf8(d.to_json().unwrap()).unwrap();
        assert_eq!(LeanDocument::from_json(&json).unwrap().machine(), "n17");
    }

    #[test]
    fn ids_and_figures_are_held_as_the_full_reader_holds_them() {
        for (key, value, says) in [
            (
                "cpu_node",
                None,
                "cpu_node 5000000, past the largest node id",
            ),
            ("bandwidth_mb_s", Some(-1.0), "below 0"),
            ("bandwidth_mb_s", Some(1e300), "larger than any measurement"),
        ] {
            let mut d = doc();
            match value {
                None => d.records[0] = d.records[0].clone().param(key, 5_000_000),
                Some(v) => d.records[0].metrics.get_mut(key).unwrap().value = v,
            }
            let json = String::from_utf8(d.to_json().unwrap()).unwrap();
            let lean = format!("{:#}", LeanDocument::from_json(&json).unwrap_err());
            let full = format!("{:#}", Document::from_json(&json).unwrap_err());
            assert!(lean.contains(says), "{lean}");
            assert_eq!(lean, full);
        }
    }

    #[test]
    fn other_files_are_refused_with_a_reason() {
        for (text, why) in [
            ("{", "not valid JSON"),
            ("{\"a\":1}", "\"tool\""),
            ("{\"tool\":\"x\",\"schema\":1,\"host\":{}}", "\"tool\""),
            (
                "{\"tool\":\"numabench\",\"schema\":1,\"host\":{},\"records\":3}",
                "shape",
            ),
        ] {
            let e = format!("{:#}", LeanDocument::from_json(text).unwrap_err());
            assert!(e.contains(why), "{text}: {e}");
        }
    }
}
