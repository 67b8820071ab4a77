//! The thesis' PCIe-access model (section 4.3) over a `pcie` results file:
//! per GPU and direction, the bandwidth classes of the memory nodes with
//! alpha_p = class bandwidth / Phi (Table 5.4), and for an access mix
//! D_p = sum(alpha_p,i x theta_i) (eq. 4.13; the examples 4.17 and 4.18).

use crate::analysis::classes::ClassOptions;
use crate::analysis::model as m;
use crate::error::usage;
use crate::probes::pcie::Direction;
use crate::probes::pcie::summary::{GpuSummary, summarise, use_recorded_classes};
use crate::results::names::model::{metric as mm, param as mp};
use crate::results::names::pcie::{metric as pm, param as pp};
use crate::results::names::{metric, probe};
use crate::results::{Better, Document, Record};
use crate::view::Section;
use anyhow::Result;

/// One class of one GPU and direction.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PcieClass {
    pub index: usize,
    pub max_mb_s: f64,
    pub alpha_p: f64,
    pub mem_nodes: Vec<usize>,
}

/// One GPU's classes each way, with the Phi they divide by.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GpuClasses {
    pub gpu: usize,
    pub name: String,
    pub phi_mb_s: f64,
    /// Phi and where it comes from, in words.
    pub phi: String,
    pub download: Vec<PcieClass>,
    pub readback: Vec<PcieClass>,
}

impl GpuClasses {
    pub(crate) fn classes(&self, dir: Direction) -> &[PcieClass] {
        match dir {
            Direction::Download => &self.download,
            Direction::Readback => &self.readback,
        }
    }
}

/// D_p of one GPU and direction for an access mix.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PcieMix {
    pub gpu: usize,
    pub direction: Direction,
    pub thetas: Vec<f64>,
    pub alphas: Vec<f64>,
    pub d: f64,
}

/// What `numabench model` makes of a pcie results file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PcieModelled {
    pub gpus: Vec<GpuClasses>,
    pub mixes: Vec<PcieMix>,
}

/// What to model from a pcie results document.
#[derive(Debug, Clone, Default)]
pub(crate) struct PcieOptions {
    /// Phi in MB/s for every GPU, in place of the recorded one.
    pub phi: Option<f64>,
    /// Class tolerance (a fraction), in place of the recorded classes.
    pub tolerance: Option<f64>,
    pub merge_close: bool,
    /// Only these GPUs; empty: every GPU of the document.
    pub gpus: Vec<usize>,
    pub direction: Option<Direction>,
    pub thetas: Option<Vec<f64>>,
}

/// Whether `doc` holds pcie measurements.
pub(crate) fn is_pcie(doc: &Document) -> bool {
    doc.records.iter().any(|r| r.probe == probe::PCIE)
}

fn classes_of(s: &GpuSummary, dir: Direction, phi: f64) -> Vec<PcieClass> {
    s.classes(dir)
        .classes
        .iter()
        .map(|k| PcieClass {
            index: k.index,
            max_mb_s: k.max,
            alpha_p: m::alpha(k.max, phi),
            mem_nodes: k.members.iter().map(|&i| s.rows[i].mem_node).collect(),
        })
        .collect()
}

/// Models the pcie measurements of `doc`; `source` names it in messages.
pub(crate) fn model(doc: &Document, source: &str, opts: &PcieOptions) -> Result<PcieModelled> {
    let records: Vec<&Record> = doc.records.iter().collect();
    let rule = ClassOptions {
        tolerance: opts.tolerance.unwrap_or(ClassOptions::default().tolerance),
        merge_close: opts.merge_close,
    };
    let mut summaries = summarise(records.iter().copied(), opts.phi, &rule);
    if opts.tolerance.is_none() && !opts.merge_close {
        // The classes the run found, --tolerance included.
        use_recorded_classes(&mut summaries, &records);
    }
    let known: Vec<usize> = summaries.iter().map(|s| s.gpu).collect();
    if let Some(g) = opts.gpus.iter().find(|g| !known.contains(g)) {
        return Err(usage(format!(
            "--gpu {g}: {source} has figures for GPU(s) {known:?} only"
        )));
    }
    if !opts.gpus.is_empty() {
        summaries.retain(|s| opts.gpus.contains(&s.gpu));
    }
    let mut gpus = Vec::new();
    for s in &summaries {
        let Some(phi) = s.phi.clone() else {
            return Err(usage(format!(
                "{source}: GPU {} has no Phi (its link speed was not readable); give it with --phi MB/S",
                s.gpu
            )));
        };
        gpus.push(GpuClasses {
            gpu: s.gpu,
            name: s.name.clone(),
            download: classes_of(s, Direction::Download, phi.mb_s),
            readback: classes_of(s, Direction::Readback, phi.mb_s),
            phi_mb_s: phi.mb_s,
            phi: phi.describe(),
        });
    }
    if gpus.is_empty() {
        return Err(usage(format!(
            "{source}: no GPU figures in it (make them with 'numabench pcie --save FILE')"
        )));
    }
    let mixes = match &opts.thetas {
        Some(t) => mixes(&gpus, opts.direction, t)?,
        None => Vec::new(),
    };
    Ok(PcieModelled { gpus, mixes })
}

fn mixes(gpus: &[GpuClasses], dir: Option<Direction>, thetas: &[f64]) -> Result<Vec<PcieMix>> {
    let dirs: Vec<Direction> = dir.map_or(Direction::BOTH.to_vec(), |d| vec![d]);
    let mut out = Vec::new();
    for g in gpus {
        for &d in &dirs {
            let alphas: Vec<f64> = g.classes(d).iter().map(|k| k.alpha_p).collect();
            let dp = m::performance(&alphas, thetas).map_err(|e| {
                usage(format!(
                    "--theta: {e} (GPU {} {}; pick one with --gpu and --direction)",
                    g.gpu,
                    d.name()
                ))
            })?;
            out.push(PcieMix {
                gpu: g.gpu,
                direction: d,
                thetas: thetas.to_vec(),
                alphas,
                d: dp,
            });
        }
    }
    Ok(out)
}

/// The model's records: every class with its alpha_p, and each D_p.
pub(crate) fn records(x: &PcieModelled) -> Vec<Record> {
    let mut out = Vec::new();
    for g in &x.gpus {
        for d in Direction::BOTH {
            for k in g.classes(d) {
                out.push(
                    Record::new(
                        probe::MODEL,
                        &format!("pcie class {} gpu {} {}", k.index, g.gpu, d.name()),
                    )
                    .param(pp::GPU, g.gpu)
                    .param(pp::DIRECTION, d.name())
                    .param(mp::CLASS, k.index)
                    .param(mp::MEMBERS, k.mem_nodes.clone())
                    .param(pp::GPU_NAME, g.name.clone())
                    .param(mp::SOURCE, g.phi.clone())
                    .metric(metric::BANDWIDTH_MB_S, k.max_mb_s, "MB/s", Better::Higher)
                    .metric(pm::ALPHA_P, k.alpha_p, "", Better::Higher)
                    .metric(pm::PHI_MB_S, g.phi_mb_s, "MB/s", Better::Higher),
                );
            }
        }
    }
    for mix in &x.mixes {
        out.push(
            Record::new(
                probe::MODEL,
                &format!("D_p gpu {} {}", mix.gpu, mix.direction.name()),
            )
            .param(pp::GPU, mix.gpu)
            .param(pp::DIRECTION, mix.direction.name())
            .param(mp::THETA, mix.thetas.clone())
            .metric(mm::D, mix.d, "", Better::Higher),
        );
    }
    out
}

/// A class cell as Table 5.4 has it: `<= 6.60 GB/s (0.5156)`.
fn cell(k: Option<&PcieClass>) -> String {
    k.map_or("-".into(), |k| {
        format!("<= {:.2} GB/s ({:.4})", k.max_mb_s / 1000.0, k.alpha_p)
    })
}

/// Table 5.4 per GPU, then each D_p with its terms.
pub(crate) fn sections(x: &PcieModelled) -> Vec<Section> {
    let mut out = Vec::new();
    for g in &x.gpus {
        let mut s = Section::new(format!(
            "PCIe bandwidth classes of GPU {} ({}): best GB/s of the class (alpha_p = class bandwidth / Phi)",
            g.gpu, g.name
        ));
        s.header = [
            "class",
            "download",
            "readback",
            "download nodes",
            "readback nodes",
        ]
        .map(String::from)
        .to_vec();
        let n = g.download.len().max(g.readback.len());
        for i in 0..n {
            let (w, r) = (g.download.get(i), g.readback.get(i));
            let nodes = |k: Option<&PcieClass>| {
                k.map_or("-".into(), |k| {
                    k.mem_nodes
                        .iter()
                        .map(|n| n.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                })
            };
            s.rows.push(vec![
                format!("class {i}"),
                cell(w),
                cell(r),
                nodes(w),
                nodes(r),
            ]);
        }
        s.lines.push(g.phi.clone());
        out.push(s);
    }
    for mix in &x.mixes {
        let mut s = Section::new(format!(
            "PCIe data-access performance D_p (GPU {}, {})",
            mix.gpu,
            mix.direction.name()
        ));
        let terms: Vec<String> = mix
            .thetas
            .iter()
            .zip(&mix.alphas)
            .map(|(t, a)| format!("{t:.4} x {a:.4}"))
            .collect();
        s.lines
            .push(format!("D_p = {} = {:.4}", terms.join(" + "), mix.d));
        if let Some(a0) = mix.alphas.first() {
            s.lines.push(format!(
                "against all accesses in class 0: D_p - alpha_p0 = {:+.4}",
                m::loss(mix.d, *a0)
            ));
        }
        out.push(s);
    }
    out
}

/// The sections again from the model's pcie records (a saved file shown by
/// `report`); `None` where there are none.
pub(crate) fn from_records(records: &[&Record]) -> Option<PcieModelled> {
    let dir = |r: &Record| r.str_param(pp::DIRECTION).and_then(Direction::from_name);
    let value = |r: &Record, k: &str| r.value(k).unwrap_or(f64::NAN);
    let mut gpus: Vec<GpuClasses> = Vec::new();
    let mut mixes = Vec::new();
    for r in records.iter().filter(|r| r.has_param(pp::DIRECTION)) {
        let (Some(g), Some(d)) = (r.u64_param(pp::GPU), dir(r)) else {
            continue;
        };
        let g = g as usize;
        if let Some(thetas) = r.f64s_param(mp::THETA) {
            mixes.push(PcieMix {
                gpu: g,
                direction: d,
                thetas,
                alphas: Vec::new(),
                d: value(r, mm::D),
            });
            continue;
        }
        if !gpus.iter().any(|x| x.gpu == g) {
            let text = |k: &str| r.str_param(k).unwrap_or("?");
            gpus.push(GpuClasses {
                gpu: g,
                name: text(pp::GPU_NAME).to_string(),
                phi_mb_s: value(r, pm::PHI_MB_S),
                phi: text(mp::SOURCE).to_string(),
                download: Vec::new(),
                readback: Vec::new(),
            });
        }
        let entry = gpus.iter_mut().find(|x| x.gpu == g)?;
        let class = PcieClass {
            index: r.u64_param(mp::CLASS).unwrap_or(0) as usize,
            max_mb_s: value(r, metric::BANDWIDTH_MB_S),
            alpha_p: value(r, pm::ALPHA_P),
            mem_nodes: r
                .u64s_param(mp::MEMBERS)
                .unwrap_or_default()
                .into_iter()
                .map(|n| n as usize)
                .collect(),
        };
        match d {
            Direction::Download => entry.download.push(class),
            Direction::Readback => entry.readback.push(class),
        }
    }
    for mix in &mut mixes {
        if let Some(g) = gpus.iter().find(|g| g.gpu == mix.gpu) {
            mix.alphas = g.classes(mix.direction).iter().map(|k| k.alpha_p).collect();
        }
    }
    (!gpus.is_empty() || !mixes.is_empty()).then_some(PcieModelled { gpus, mixes })
}
