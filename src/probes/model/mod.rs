//! The data-access performance model (Braithwaite 2012) applied to a
//! measured matrix: bandwidth classes, alpha_i = class bandwidth / Gamma,
//! D = sum(alpha_i * theta_i) for an access mix or a running process's
//! pages (`mod.rs`); a check of the model against a mixed placement
//! measured now (`validate.rs`); their records (`records.rs`) and how they
//! are shown (`view.rs`).

pub(crate) mod pcie;
pub(crate) mod records;
pub(crate) mod sections;
pub(crate) mod validate;
pub(crate) mod view;

pub(crate) use view::ModelView;

use crate::analysis::atlas::Atlas;
use crate::analysis::model as m;
use crate::analysis::placement::{self, Prediction};
use crate::error::usage;
use crate::procfs::{numa_maps, stat as procstat};
use crate::results::Document;
use crate::topology::Topology;
use anyhow::Result;
use std::collections::BTreeMap;

/// What to model from a matrix results document.
#[derive(Debug, Clone, Default)]
pub(crate) struct ModelOptions {
    /// Gamma in MB/s as given [default: recorded with the matrix, else the
    /// best cell].
    pub peak: Option<f64>,
    /// Class tolerance (a fraction) in place of the one recorded with the
    /// matrix.
    pub tolerance: Option<f64>,
    /// Merge close classes, whatever the matrix recorded.
    pub merge_close: bool,
    /// An access mix per class, fastest first.
    pub thetas: Option<Vec<f64>>,
    /// Classes as seen from this CPU node for `thetas`.
    pub cpu_node: Option<usize>,
    /// A running process whose pages to model.
    pub pid: Option<u32>,
}

/// D for an access mix.
#[derive(Debug, Clone)]
pub(crate) struct Mix {
    /// `from CPU node N` or `system-wide`.
    pub from: String,
    pub cpu_node: Option<usize>,
    pub thetas: Vec<f64>,
    pub alphas: Vec<f64>,
    pub d: f64,
}

/// Where a process's pages are and D for running it on each CPU node.
#[derive(Debug, Clone)]
pub(crate) struct Process {
    pub pid: u32,
    pub bytes: BTreeMap<usize, u64>,
    pub predictions: Vec<Prediction>,
    /// Nodes holding pages that the matrix did not measure.
    pub unknown: Vec<usize>,
    /// The node it last ran on, where known.
    pub now: Option<usize>,
}

/// Everything modelled from one matrix.
pub(crate) struct Modelled {
    pub atlas: Atlas,
    pub gamma: m::Peak,
    pub mix: Option<Mix>,
    pub process: Option<Process>,
}

/// Models the matrix in `doc`; errors in what the user asked for are
/// usage errors naming the option.
/// `source` names the document in messages.
pub(crate) fn model(doc: &Document, source: &str, opts: &ModelOptions) -> Result<Modelled> {
    let mut atlas = Atlas::from_records(&doc.records);
    if let Some(t) = opts.tolerance {
        atlas.class_options.tolerance = t;
    }
    atlas.class_options.merge_close |= opts.merge_close;
    if atlas.single.is_empty() {
        return Err(usage(format!(
            "{source}: no single-thread matrix bandwidth in it (make one with 'numabench matrix --save FILE')"
        )));
    }
    if let Some(c) = opts.cpu_node
        && !atlas.cpu_nodes.contains(&c)
    {
        return Err(usage(format!(
            "--cpu-node {c}: the matrix has rows for CPU nodes {:?} only",
            atlas.cpu_nodes
        )));
    }
    if let Some(c) = opts.cpu_node
        && opts.thetas.is_none()
    {
        // The class tables already show every CPU node; --pid predicts
        // for each of them.
        return Err(usage(format!(
            "--cpu-node {c} picks the classes --theta uses: add --theta, or leave --cpu-node out (the tables show every CPU node)"
        )));
    }
    let gamma = placement::peak(&atlas, opts.peak, atlas.peak.clone()).ok_or_else(|| {
        usage("the results file has no single-thread matrix bandwidth (none above 0)")
    })?;
    let mix = opts
        .thetas
        .as_deref()
        .map(|t| mix(&atlas, &gamma, opts.cpu_node, t))
        .transpose()?;
    let process = opts
        .pid
        .map(|pid| process(&atlas, &doc.host.topology, &gamma, pid))
        .transpose()?;
    Ok(Modelled {
        atlas,
        gamma,
        mix,
        process,
    })
}

fn mix(atlas: &Atlas, gamma: &m::Peak, cpu_node: Option<usize>, thetas: &[f64]) -> Result<Mix> {
    let (classes, from) = match cpu_node {
        Some(c) => (
            placement::row_classes(atlas, c).classes,
            format!("from CPU node {c}"),
        ),
        None => (
            placement::system_classes(atlas).1,
            "system-wide".to_string(),
        ),
    };
    let alphas: Vec<f64> = classes
        .classes
        .iter()
        .map(|c| m::alpha(c.max, gamma.mb_s))
        .collect();
    let d = m::performance(&alphas, thetas).map_err(|e| usage(format!("--theta: {e}")))?;
    Ok(Mix {
        from,
        cpu_node,
        thetas: thetas.to_vec(),
        alphas,
        d,
    })
}

fn process(atlas: &Atlas, topo: &Topology, gamma: &m::Peak, pid: u32) -> Result<Process> {
    let maps = numa_maps::read_numa_maps(pid).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound if !crate::placement::sys::kernel_has_numa() => {
            usage(format!(
                "--pid {pid}: the process has no numa_maps: this kernel was built without NUMA support, so all its memory is on node 0"
            ))
        }
        std::io::ErrorKind::NotFound => usage(format!("--pid {pid}: no such process")),
        std::io::ErrorKind::PermissionDenied => usage(format!(
            "--pid {pid}: cannot read its numa_maps (permission denied; run as its owner or root)"
        )),
        _ => anyhow::anyhow!("--pid {pid}: {e}"),
    })?;
    let bytes = numa_maps::bytes_by_node(&maps);
    let (predictions, unknown) = placement::predict_for_pages(atlas, &bytes, gamma);
    let now = procstat::process_stat(pid as i32)
        .ok()
        .map(|s| s.cpu)
        .and_then(|c| topo.cpu(c))
        .and_then(|c| c.node);
    Ok(Process {
        pid,
        bytes,
        predictions,
        unknown,
        now,
    })
}

/// The CPU node with the highest D; ties go to the lowest node.
pub(crate) fn best_prediction(preds: &[Prediction]) -> Option<&Prediction> {
    preds
        .iter()
        .reduce(|a, b| if b.d > a.d + 1e-12 { b } else { a })
}
