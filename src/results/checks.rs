//! What a results file may say: ids Linux allows and figures a
//! measurement gives. Views lay records out as grids and charts, so a file
//! outside these bounds is refused with its reason rather than drawn.

use super::document::{Metric, Record};
use super::names;
use crate::ids::MAX_ID;
use crate::topology::Topology;
use anyhow::{Result, bail};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Node and CPU numbers from a file become bitmaps when shown, so each is
/// held to the bound the list parser keeps ([`MAX_ID`]): a file naming node
/// 2^61 would otherwise ask for an exabyte.
pub(super) fn check_host_ids(topo: &Topology) -> Result<()> {
    let ids = topo
        .nodes
        .iter()
        .map(|n| ("node", n.id))
        .chain(topo.cpus.iter().map(|c| ("CPU", c.id)))
        .chain(topo.cpus.iter().filter_map(|c| c.node).map(|n| ("node", n)))
        .chain(
            topo.accelerators
                .iter()
                .filter_map(|a| a.numa_node)
                .map(|n| ("node", n)),
        );
    for (what, id) in ids {
        if id >= MAX_ID {
            bail!(
                "its host names {what} {id}, past the largest id ({})",
                MAX_ID - 1
            );
        }
    }
    Ok(())
}

/// The params that hold a node id, and those that hold a CPU id.
const NODE_PARAMS: [&str; 5] = [
    names::param::CPU_NODE,
    names::param::MEM_NODE,
    names::c2c::param::PEER_NODE,
    names::pcie::param::GPU_NODE,
    names::loaded::param::INJECTOR_NODE,
];
const CPU_PARAMS: [&str; 2] = [names::param::CPU, names::c2c::param::PEER_CPU];

/// What a check needs of a record, full or lean: its name, params and
/// metrics.
pub(super) struct RecordParts<'a> {
    pub name: &'a str,
    pub params: &'a Map<String, Value>,
    pub metrics: &'a BTreeMap<String, Metric>,
}

impl<'a> From<&'a Record> for RecordParts<'a> {
    fn from(r: &'a Record) -> Self {
        RecordParts {
            name: &r.name,
            params: &r.params,
            metrics: &r.metrics,
        }
    }
}

/// The node and CPU ids records name are held to what Linux allows, as the
/// host's are, and their figures to what a measurement gives: views lay
/// records out as node x node and CPU x CPU grids and draw their figures
/// to scale, so a file naming node 5000000 would otherwise ask for a grid
/// of millions of rows, and one giving 1e308 MB/s a 309-digit cell.
pub(super) fn check_records<'a>(records: impl IntoIterator<Item = RecordParts<'a>>) -> Result<()> {
    let bounds: Vec<(&str, usize, &str)> = NODE_PARAMS
        .iter()
        .map(|k| (*k, crate::topology::MAX_NODES, "node"))
        .chain(CPU_PARAMS.iter().map(|k| (*k, crate::ids::MAX_CPUS, "CPU")))
        .collect();
    // One pass over the records: a file may hold hundreds of thousands.
    for r in records {
        check_metric_values(&r)?;
        check_counts(&r)?;
        for &(key, bound, what) in &bounds {
            if let Some(id) = r.params.get(key).and_then(Value::as_u64)
                && id >= bound as u64
            {
                bail!(
                    "record {:?} gives {key} {id}, past the largest {what} id Linux allows ({})",
                    crate::text::escape(r.name),
                    bound - 1
                );
            }
        }
    }
    Ok(())
}

/// Params that are whole numbers wherever a probe writes them, besides the
/// ids: thread and process counts, sizes. A view that finds `"0"`, `-1`,
/// `null` or `1e300` in one of these or an id cannot place the record, and
/// would leave it out without a word.
const COUNT_PARAMS: [&str; 3] = [
    names::param::THREADS,
    names::param::PROCESSES,
    names::param::SIZE_BYTES,
];

fn check_counts(r: &RecordParts) -> Result<()> {
    // Every probe says what a figure is of (nodes, sizes, a test's name):
    // a figure with no params at all cannot be placed by any view.
    if r.params.is_empty() && !r.metrics.is_empty() {
        bail!(
            "record {:?} has figures but no params, so nothing says what they measured",
            crate::text::escape(r.name)
        );
    }
    for &key in NODE_PARAMS.iter().chain(&CPU_PARAMS).chain(&COUNT_PARAMS) {
        let Some(v) = r.params.get(key) else { continue };
        // A GPU's node is unknown (null) where its firmware gives none.
        if v.as_u64().is_some() || (key == names::pcie::param::GPU_NODE && v.is_null()) {
            continue;
        }
        let shown = v.to_string();
        let shown: String = shown.chars().take(40).collect();
        bail!(
            "record {:?} gives {key} = {}, where a whole number from 0 up belongs",
            crate::text::escape(r.name),
            crate::text::escape(&shown)
        );
    }
    Ok(())
}

/// The largest figure a results file may give. No measurement comes near
/// it (a byte count of 2^60 is 1.2e18); a damaged file's 1e308 would be
/// shown as a 309-digit number and could overflow a chart's scale.
const MAX_METRIC_MAGNITUDE: f64 = 1e18;

/// The figures that are measurements outright and so never below 0: every
/// probe's latency and bandwidth. Figures derived from them may be (the low
/// end of a confidence interval, a model's error), so the rule is by name.
const NON_NEGATIVE: [&str; 2] = [names::metric::LATENCY_NS, names::metric::BANDWIDTH_MB_S];

/// A record's metrics as a measurement could give them.
fn check_metric_values(r: &RecordParts) -> Result<()> {
    for (key, m) in r.metrics {
        let problem = if m.value.abs() > MAX_METRIC_MAGNITUDE {
            "larger than any measurement"
        } else if m.value < 0.0 && NON_NEGATIVE.contains(&key.as_str()) {
            "below 0, which a measured latency or bandwidth cannot be"
        } else {
            continue;
        };
        let value = if m.value.abs() >= 1e9 || (m.value != 0.0 && m.value.abs() < 1e-6) {
            format!("{:e}", m.value)
        } else {
            m.value.to_string()
        };
        bail!(
            "record {:?} gives {} = {value} {}, {problem}",
            crate::text::escape(r.name),
            crate::text::escape(key),
            crate::text::escape(&m.unit)
        );
    }
    Ok(())
}
