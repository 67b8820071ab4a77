//! Records back to figures: per GPU, the best bandwidth of each memory
//! node and direction (from the largest sizes), Phi, alpha_p and the
//! bandwidth classes, and the cells of the node x node table. The measurement summarises what it just measured;
//! the view summarises a document, so both read the same records.

use super::phi::{Phi, PhiSource};
use super::{Direction, PROBE};
use crate::analysis::classes::{Class, ClassOptions, Classes, classify};
use crate::analysis::model::alpha;
use crate::results::Record;
use crate::results::names::pcie::{kind, metric as pm, param as pp, phi_source};
use crate::results::names::{metric, param};
use std::collections::BTreeMap;

/// The best bandwidth of one (GPU, memory node, direction) and the size
/// that gave it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Best {
    pub mb_s: f64,
    pub size_bytes: usize,
}

/// One memory node of one GPU, or (in [`GpuSummary::pairs`]) one cell of
/// the node x node table: the thread on `cpu_node`, the host buffer on
/// `mem_node`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NodeRow {
    pub mem_node: usize,
    pub cpu: Option<usize>,
    pub cpu_node: Option<usize>,
    pub download: Option<Best>,
    pub readback: Option<Best>,
}

impl NodeRow {
    pub(crate) fn best(&self, dir: Direction) -> Option<Best> {
        match dir {
            Direction::Download => self.download,
            Direction::Readback => self.readback,
        }
    }
}

/// One GPU's figures from every memory node, with Phi and the classes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GpuSummary {
    pub gpu: usize,
    pub name: String,
    pub pci_bus_id: String,
    /// The node sysfs gives for the GPU's PCI device.
    pub gpu_node: Option<usize>,
    pub phi: Option<Phi>,
    /// Memory nodes ascending.
    pub rows: Vec<NodeRow>,
    /// Classes of the rows' download figures (value `i` is row `i`).
    pub download: Classes,
    /// Classes of the rows' readback figures.
    pub readback: Classes,
    /// Notes of the GPU record.
    pub notes: Vec<String>,
    /// The node x node table by (CPU node, memory node), the rows' own
    /// cells included, `cpu_node` set in every one; empty where the thread
    /// ran on no other node.
    pub pairs: Vec<NodeRow>,
}

impl GpuSummary {
    pub(crate) fn classes(&self, dir: Direction) -> &Classes {
        match dir {
            Direction::Download => &self.download,
            Direction::Readback => &self.readback,
        }
    }

    /// alpha_p of row `row` in `dir`: best bandwidth / Phi.
    pub(crate) fn alpha_p(&self, row: usize, dir: Direction) -> Option<f64> {
        self.alpha_p_of(self.rows.get(row)?, dir)
    }

    /// alpha_p of a row, or of a cell of the node x node table.
    pub(crate) fn alpha_p_of(&self, row: &NodeRow, dir: Direction) -> Option<f64> {
        Some(alpha(row.best(dir)?.mb_s, self.phi.as_ref()?.mb_s))
    }

    /// The best figure of every row in `dir`, NaN where there is none (as
    /// [`classify`] takes them).
    fn values(&self, dir: Direction) -> Vec<f64> {
        self.rows
            .iter()
            .map(|r| r.best(dir).map_or(f64::NAN, |b| b.mb_s))
            .collect()
    }
}

fn phi_of_record(rec: &Record) -> Option<Phi> {
    let mb_s = rec.value(pm::PHI_MB_S)?;
    let source = match rec.str_param(pp::PHI_SOURCE) {
        Some(phi_source::LINK) => PhiSource::Link {
            speed_gt_s: rec.f64_param(pp::LINK_SPEED_GT_S)?,
            width: u32::try_from(rec.u64_param(pp::LINK_WIDTH)?).ok()?,
        },
        _ => PhiSource::Given,
    };
    Some(Phi { mb_s, source })
}

/// Which sizes the best figure is taken from: those at least the largest
/// size divided by this (with the default sizes: 64, 128 and 256 MiB).
pub(crate) const LARGE_SIZES: usize = 4;

/// The sizes of `sizes` a best figure is taken from (see [`LARGE_SIZES`]),
/// ascending: the ones the node x node table copies.
pub(crate) fn large_sizes(sizes: &[usize]) -> Vec<usize> {
    let largest = sizes.iter().copied().max().unwrap_or(0);
    let mut out: Vec<usize> = sizes
        .iter()
        .copied()
        .filter(|s| s.saturating_mul(LARGE_SIZES) >= largest)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The best of `(size, MB/s)` figures: the highest among the largest sizes
/// (at least 1/[`LARGE_SIZES`] of the largest), ties going to the larger
/// size. Small copies are bound by per-copy latency, and their times are
/// a few event ticks, too coarse to set a peak with.
pub(crate) fn best_of(figures: &[(usize, f64)]) -> Option<Best> {
    let usable = || figures.iter().filter(|(_, v)| v.is_finite() && *v > 0.0);
    let largest = usable().map(|(s, _)| *s).max()?;
    usable()
        .filter(|(s, _)| s.saturating_mul(LARGE_SIZES) >= largest)
        .map(|&(size_bytes, mb_s)| Best { mb_s, size_bytes })
        .max_by(|a, b| {
            a.mb_s
                .total_cmp(&b.mb_s)
                .then(a.size_bytes.cmp(&b.size_bytes))
        })
}

/// Summaries per GPU (ascending ordinal) from the `gpu` and `size`
/// records of a document. `phi_override` (`--phi`) replaces every GPU's
/// Phi. The best of a (GPU, node, direction) is taken with [`best_of`];
/// classes are found with [`classify`] over the memory nodes of each GPU
/// and direction.
pub(crate) fn summarise<'r>(
    records: impl IntoIterator<Item = &'r Record>,
    phi_override: Option<f64>,
    opts: &ClassOptions,
) -> Vec<GpuSummary> {
    let mut acc = Gathered::default();
    for rec in records.into_iter().filter(|r| r.probe == PROBE) {
        if let Some(g) = rec.usize_param(pp::GPU) {
            acc.add(g, rec, opts);
        }
    }
    acc.finish(phi_override, opts)
}

/// (size, MB/s) of the copies of one figure, before [`best_of`].
type Figures = Vec<(usize, f64)>;

/// What [`summarise`] collects before it picks the bests.
#[derive(Default)]
struct Gathered {
    gpus: BTreeMap<usize, GpuSummary>,
    rows: BTreeMap<usize, BTreeMap<usize, NodeRow>>,
    /// By (GPU, memory node, direction).
    figures: BTreeMap<(usize, usize, Direction), Figures>,
    /// By GPU, then (CPU node, memory node): the pair_size records' cells.
    pairs: BTreeMap<usize, BTreeMap<(usize, usize), NodeRow>>,
    /// By (GPU, CPU node, memory node, direction).
    pair_figures: BTreeMap<(usize, usize, usize, Direction), Figures>,
}

impl Gathered {
    fn add(&mut self, g: usize, rec: &Record, opts: &ClassOptions) {
        let summary = self.gpus.entry(g).or_insert_with(|| GpuSummary {
            gpu: g,
            name: rec.str_param(pp::GPU_NAME).unwrap_or("?").to_string(),
            pci_bus_id: rec.str_param(pp::PCI_BUS_ID).unwrap_or("?").to_string(),
            gpu_node: rec.usize_param(pp::GPU_NODE),
            phi: None,
            rows: Vec::new(),
            download: classify(&[], opts),
            readback: classify(&[], opts),
            notes: Vec::new(),
            pairs: Vec::new(),
        });
        match rec.str_param(pp::KIND) {
            Some(kind::GPU) => {
                summary.phi = phi_of_record(rec);
                summary.notes = rec.notes.clone();
            }
            Some(kind::SIZE) => self.add_size(g, rec),
            Some(kind::PAIR_SIZE) => self.add_pair(g, rec),
            _ => {}
        }
    }

    fn add_size(&mut self, g: usize, rec: &Record) {
        let (Some(node), Some(dir), Some(size)) = (
            rec.usize_param(param::MEM_NODE),
            rec.str_param(pp::DIRECTION).and_then(Direction::from_name),
            rec.usize_param(param::SIZE_BYTES),
        ) else {
            return;
        };
        let row = self
            .rows
            .entry(g)
            .or_default()
            .entry(node)
            .or_insert(NodeRow {
                mem_node: node,
                cpu: rec.usize_param(param::CPU),
                cpu_node: rec.usize_param(param::CPU_NODE),
                download: None,
                readback: None,
            });
        if let Some(v) = rec.value(metric::BANDWIDTH_MB_S) {
            self.figures
                .entry((g, row.mem_node, dir))
                .or_default()
                .push((size, v));
        }
    }

    fn add_pair(&mut self, g: usize, rec: &Record) {
        let (Some(c), Some(m), Some(dir), Some(size)) = (
            rec.usize_param(param::CPU_NODE),
            rec.usize_param(param::MEM_NODE),
            rec.str_param(pp::DIRECTION).and_then(Direction::from_name),
            rec.usize_param(param::SIZE_BYTES),
        ) else {
            return;
        };
        self.pairs
            .entry(g)
            .or_default()
            .entry((c, m))
            .or_insert(NodeRow {
                mem_node: m,
                cpu: rec.usize_param(param::CPU),
                cpu_node: Some(c),
                download: None,
                readback: None,
            });
        if let Some(v) = rec.value(metric::BANDWIDTH_MB_S) {
            self.pair_figures
                .entry((g, c, m, dir))
                .or_default()
                .push((size, v));
        }
    }

    /// The node x node table of GPU `g`: the cells the thread ran on
    /// another node for, and each memory node's own row as its cell; empty
    /// without the former.
    fn pair_cells(&mut self, g: usize, rows: &[NodeRow]) -> Vec<NodeRow> {
        let Some(mut cells) = self.pairs.remove(&g) else {
            return Vec::new();
        };
        for (&(c, m), cell) in cells.iter_mut() {
            for dir in Direction::BOTH {
                let best = self
                    .pair_figures
                    .get(&(g, c, m, dir))
                    .and_then(|f| best_of(f));
                match dir {
                    Direction::Download => cell.download = best,
                    Direction::Readback => cell.readback = best,
                }
            }
        }
        for row in rows {
            if let Some(c) = row.cpu_node {
                cells
                    .entry((c, row.mem_node))
                    .or_insert_with(|| row.clone());
            }
        }
        cells.into_values().collect()
    }

    fn finish(mut self, phi_override: Option<f64>, opts: &ClassOptions) -> Vec<GpuSummary> {
        for ((g, node, dir), sizes) in &self.figures {
            if let Some(row) = self.rows.get_mut(g).and_then(|r| r.get_mut(node)) {
                match dir {
                    Direction::Download => row.download = best_of(sizes),
                    Direction::Readback => row.readback = best_of(sizes),
                }
            }
        }
        let mut gpus = std::mem::take(&mut self.gpus);
        for (g, summary) in gpus.iter_mut() {
            summary.rows = self
                .rows
                .remove(g)
                .unwrap_or_default()
                .into_values()
                .collect();
            summary.pairs = self.pair_cells(*g, &summary.rows);
            if let Some(p) = phi_override {
                summary.phi = Some(Phi::given(p));
            }
            summary.download = classify(&summary.values(Direction::Download), opts);
            summary.readback = classify(&summary.values(Direction::Readback), opts);
        }
        gpus.into_values().collect()
    }
}

/// The classes the `best` records of `records` give, in place of the ones
/// [`summarise`] found with its own tolerance: a document shows the
/// classes its run found (`--tolerance` included). Left as they are where
/// a memory node with a figure has no recorded class.
pub(crate) fn use_recorded_classes(summaries: &mut [GpuSummary], records: &[&Record]) {
    for s in summaries.iter_mut() {
        for dir in Direction::BOTH {
            if let Some(c) = recorded_classes(s, dir, records) {
                match dir {
                    Direction::Download => s.download = c,
                    Direction::Readback => s.readback = c,
                }
            }
        }
    }
}

fn recorded_classes(s: &GpuSummary, dir: Direction, records: &[&Record]) -> Option<Classes> {
    let class_of = |node: usize| {
        records.iter().find_map(|r| {
            (r.probe == PROBE
                && r.str_param(pp::KIND) == Some(kind::BEST)
                && r.usize_param(pp::GPU) == Some(s.gpu)
                && r.usize_param(param::MEM_NODE) == Some(node)
                && r.str_param(pp::DIRECTION) == Some(dir.name()))
            .then(|| r.usize_param(pp::CLASS))
            .flatten()
        })
    };
    let mut assignment = Vec::with_capacity(s.rows.len());
    for row in &s.rows {
        match row.best(dir) {
            Some(_) => assignment.push(Some(class_of(row.mem_node)?)),
            None => assignment.push(None),
        }
    }
    let count = assignment.iter().flatten().max().map_or(0, |m| m + 1);
    let values = s.values(dir);
    let mut classes = Vec::with_capacity(count);
    for index in 0..count {
        let members: Vec<usize> = (0..assignment.len())
            .filter(|&i| assignment[i] == Some(index))
            .collect();
        let of = |i: &usize| values[*i];
        let max = members.iter().map(of).fold(f64::NEG_INFINITY, f64::max);
        let min = members.iter().map(of).fold(f64::INFINITY, f64::min);
        let mean = members.iter().map(of).sum::<f64>() / members.len() as f64;
        classes.push(Class {
            index,
            max,
            min,
            mean,
            members,
        });
    }
    Some(Classes {
        classes,
        assignment,
        criterion: "as the run recorded them".into(),
    })
}
