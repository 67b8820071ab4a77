//! Measurements to records: a `gpu` record per GPU (node, link, Phi), a
//! `size` record per copy size (every timed copy kept), a `best` record
//! per (GPU, memory node, direction) with alpha_p and class; for the node x
//! node table a `pair_size` record per copy size with the thread on another
//! node and a `pair` record per (GPU, CPU node, memory node, direction).

use super::locate::{CpuChoice, GpuInfo};
use super::phi::{Phi, PhiSource, short};
use super::summary::{GpuSummary, NodeRow};
use super::{Direction, PROBE};
use crate::results::names::pcie::{kind, metric as pm, param as pp, phi_source};
use crate::results::names::{metric, param};
use crate::results::{Better, Record};
use crate::topology::Accelerator;

/// Parameters every record of one GPU carries.
fn gpu_params(rec: Record, gpu: &GpuInfo, acc: Option<&Accelerator>) -> Record {
    rec.param(pp::GPU, gpu.ordinal)
        .param(pp::GPU_NAME, gpu.name.as_str())
        .param(pp::PCI_BUS_ID, gpu.pci_bus_id.as_str())
        .param(pp::GPU_NODE, acc.and_then(|a| a.numa_node))
}

/// The record saying which GPU it is and what its Phi is.
pub(crate) fn gpu_record(gpu: &GpuInfo, acc: Option<&Accelerator>, phi: Option<&Phi>) -> Record {
    let mut rec = gpu_params(Record::new(PROBE, &format!("gpu{}", gpu.ordinal)), gpu, acc)
        .param(pp::KIND, kind::GPU);
    if let Some(a) = acc {
        rec = rec
            .param(pp::LINK_SPEED_GT_S, a.link_speed_gt_s)
            .param(pp::LINK_WIDTH, a.link_width)
            .param(pp::MAX_LINK_SPEED_GT_S, a.max_link_speed_gt_s)
            .param(pp::MAX_LINK_WIDTH, a.max_link_width);
    } else {
        rec.notes.push(format!(
            "the GPU's PCI device {} is not in sysfs: its node and link are unknown (give --phi for alpha_p)",
            gpu.pci_bus_id
        ));
    }
    match phi {
        Some(p) => {
            rec = rec
                .param(
                    pp::PHI_SOURCE,
                    match p.source {
                        PhiSource::Given => phi_source::GIVEN,
                        PhiSource::Link { .. } => phi_source::LINK,
                    },
                )
                .metric(pm::PHI_MB_S, p.mb_s, "MB/s", Better::Higher);
        }
        None if acc.is_some() => rec.notes.push(
            "sysfs gives no link speed and width for it: Phi and alpha_p unknown (give --phi)"
                .into(),
        ),
        None => {}
    }
    if let Some(note) = slow_link_note(acc, phi) {
        rec.notes.push(note);
    }
    rec
}

/// A note when the link ran below what the device can do.
fn slow_link_note(acc: Option<&Accelerator>, phi: Option<&Phi>) -> Option<String> {
    if let (Some(a), Some(PhiSource::Link { speed_gt_s, width })) = (acc, phi.map(|p| &p.source))
        && let (Some(ms), Some(mw)) = (a.max_link_speed_gt_s, a.max_link_width)
        && (*speed_gt_s < ms || *width < mw)
    {
        return Some(format!(
            "the link ran at {} GT/s x{width} but the device can do {} GT/s x{mw}: the slot, a riser or power saving holds it lower; Phi is the link's figure as it ran",
            short(*speed_gt_s),
            short(ms)
        ));
    }
    None
}

/// MB/s (10^6 bytes per second) of `bytes` moved in `seconds`; `None`
/// for a time the clock could not resolve.
pub(crate) fn mb_s(bytes: usize, seconds: f64) -> Option<f64> {
    (seconds > 0.0 && seconds.is_finite()).then(|| bytes as f64 / seconds / 1e6)
}

/// The record of one (GPU, memory node, direction, size): the best of the
/// timed copies, every one kept as a sample.
pub(crate) fn size_record(
    gpu: &GpuInfo,
    acc: Option<&Accelerator>,
    mem_node: usize,
    choice: CpuChoice,
    dir: Direction,
    size: usize,
    times_s: &[f64],
) -> Record {
    let name = format!("{} gpu{} node{mem_node} {size}", dir.name(), gpu.ordinal);
    let mut rec = gpu_params(Record::new(PROBE, &name), gpu, acc)
        .param(pp::KIND, kind::SIZE)
        .param(param::MEM_NODE, mem_node)
        .param(param::CPU, choice.cpu)
        .param(param::CPU_NODE, choice.cpu_node)
        .param(pp::DIRECTION, dir.name())
        .param(param::SIZE_BYTES, size)
        .param(pp::TRIES, times_s.len());
    let samples: Vec<f64> = times_s.iter().filter_map(|&t| mb_s(size, t)).collect();
    match samples.iter().copied().reduce(f64::max) {
        Some(best) => {
            rec = rec.metric(metric::BANDWIDTH_MB_S, best, "MB/s", Better::Higher);
            rec.samples.insert(metric::BANDWIDTH_MB_S.into(), samples);
        }
        None => rec
            .notes
            .push("every copy took less time than the events resolve".into()),
    }
    rec
}

/// A [`size_record`] with the thread on CPU node `choice.cpu_node`, not
/// on the memory node's own: a figure of the node x node table only.
pub(crate) fn pair_size_record(
    gpu: &GpuInfo,
    acc: Option<&Accelerator>,
    mem_node: usize,
    choice: CpuChoice,
    dir: Direction,
    size: usize,
    times_s: &[f64],
) -> Record {
    let mut rec = size_record(gpu, acc, mem_node, choice, dir, size, times_s);
    rec.name = format!(
        "{} gpu{} node{}->node{mem_node} {size}",
        dir.name(),
        gpu.ordinal,
        choice.cpu_node
    );
    rec.params.insert(pp::KIND.into(), kind::PAIR_SIZE.into());
    rec
}

/// One `best` record per (GPU, memory node, direction) with a figure: the
/// best bandwidth, the size that gave it, alpha_p when Phi is known and
/// the class.
pub(crate) fn best_records(summaries: &[GpuSummary]) -> Vec<Record> {
    let mut out = Vec::new();
    for s in summaries {
        for dir in Direction::BOTH {
            for i in 0..s.rows.len() {
                out.extend(best_record(s, dir, i));
            }
        }
        for dir in Direction::BOTH {
            out.extend(s.pairs.iter().filter_map(|p| pair_record(s, p, dir)));
        }
    }
    out
}

/// One cell of the node x node table: the best figure of the thread on
/// `p.cpu_node` with the buffer on `p.mem_node`, and alpha_p.
fn pair_record(s: &GpuSummary, p: &NodeRow, dir: Direction) -> Option<Record> {
    let name = format!(
        "{} gpu{} node{}->node{}",
        dir.name(),
        s.gpu,
        p.cpu_node.map_or("?".into(), |c| c.to_string()),
        p.mem_node
    );
    figure_record(s, &name, kind::PAIR, p, dir, s.alpha_p_of(p, dir))
}

fn best_record(s: &GpuSummary, dir: Direction, i: usize) -> Option<Record> {
    let row = &s.rows[i];
    let name = format!("{} gpu{} node{}", dir.name(), s.gpu, row.mem_node);
    let rec = figure_record(s, &name, kind::BEST, row, dir, s.alpha_p(i, dir))?;
    Some(rec.param(pp::CLASS, s.classes(dir).class_of(i)))
}

/// A best figure of a GPU's summary as a record of kind `kind`: the GPU,
/// where the thread and the buffer were, the figure and the size that gave
/// it, alpha_p with Phi where known; `None` without a figure.
fn figure_record(
    s: &GpuSummary,
    name: &str,
    kind: &str,
    row: &NodeRow,
    dir: Direction,
    alpha_p: Option<f64>,
) -> Option<Record> {
    let best = row.best(dir)?;
    let mut rec = Record::new(PROBE, name)
        .param(pp::KIND, kind)
        .param(pp::GPU, s.gpu)
        .param(pp::GPU_NAME, s.name.as_str())
        .param(pp::PCI_BUS_ID, s.pci_bus_id.as_str())
        .param(pp::GPU_NODE, s.gpu_node)
        .param(param::MEM_NODE, row.mem_node)
        .param(param::CPU, row.cpu)
        .param(param::CPU_NODE, row.cpu_node)
        .param(pp::DIRECTION, dir.name())
        .param(param::SIZE_BYTES, best.size_bytes)
        .metric(metric::BANDWIDTH_MB_S, best.mb_s, "MB/s", Better::Higher);
    if let (Some(a), Some(phi)) = (alpha_p, &s.phi) {
        rec = rec
            .param(pp::PHI_MB_S, phi.mb_s)
            .metric(pm::ALPHA_P, a, "", Better::Higher);
    }
    Some(rec)
}
