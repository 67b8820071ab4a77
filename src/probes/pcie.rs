//! Host-device (PCIe) bandwidth per memory node, as SHOC's BusSpeedDownload
//! and BusSpeedReadback measure it under `numactl --cpunodebind=N
//! --membind=N` in Braithwaite's thesis (section 3.2.2, Algorithm 3): for
//! every GPU and every memory node, a host buffer bound to that node and
//! page-locked, copied to the GPU (download) and back (readback) at a range
//! of sizes, the calling thread on a CPU of that node.
//!
//! The figures are put beside Phi, the link's theoretical one-direction
//! bandwidth (from the PCIe link speed and width in sysfs, or `--phi`), as
//! `alpha_p = bandwidth / Phi` (thesis eq. 4.3, section 4.3), and the
//! memory nodes are sorted into bandwidth classes per GPU and direction
//! with [`classify`].
//!
//! Everything but [`measure`] (and [`discover`]) is pure and tested on
//! fixture topologies and the thesis' published figures; the measurement
//! itself needs a GPU.

use super::cuda::{
    CUDA_ERROR_NO_DEVICE, Context, CopyDirection, CudaError, DeviceMemory, Driver, Event,
    Registered,
};
use crate::analysis::classes::{ClassOptions, Classes, classify};
use crate::analysis::model::alpha;
use crate::memory::{Buffer, BufferOptions, PageKind};
use crate::placement::{CpuSet, MemPolicy, NodeSet, affinity};
use crate::results::{Better, Placement, Record};
use crate::topology::{Accelerator, SysfsRoot, Topology, read_topology};
use anyhow::{Context as _, Result};
use serde_json::Value;
use std::collections::BTreeMap;

/// The probe name in records.
pub const PROBE: &str = "pcie";
/// Record kinds (the `kind` parameter).
pub const KIND_SIZE: &str = "size";
pub const KIND_GPU: &str = "gpu";
pub const KIND_BEST: &str = "best";

/// Which way the data goes, in SHOC's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    /// Host to device (BusSpeedDownload).
    Download,
    /// Device to host (BusSpeedReadback).
    Readback,
}

impl Direction {
    pub const BOTH: [Direction; 2] = [Direction::Download, Direction::Readback];

    pub fn name(self) -> &'static str {
        match self {
            Direction::Download => "download",
            Direction::Readback => "readback",
        }
    }

    pub fn from_name(name: &str) -> Option<Direction> {
        Direction::BOTH.into_iter().find(|d| d.name() == name)
    }

    fn copy(self) -> CopyDirection {
        match self {
            Direction::Download => CopyDirection::HostToDevice,
            Direction::Readback => CopyDirection::DeviceToHost,
        }
    }
}

/// The CPU a measurement for a memory node runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuChoice {
    pub cpu: usize,
    /// The node of `cpu`: the memory node itself, or the nearest node with
    /// usable CPUs when the memory node has none (CXL, HBM, cpuset).
    pub cpu_node: usize,
}

/// The first usable CPU (one per core first) of `mem_node`, else of the
/// nearest node with usable CPUs by SLIT distance (lowest id on a tie).
/// `None` when this process may run on no CPU at all.
pub fn cpu_for_memory_node(topo: &Topology, mem_node: usize) -> Option<CpuChoice> {
    let first = |node: usize| {
        topo.cores_first(&topo.usable_cpus_of(node))
            .first()
            .copied()
    };
    if let Some(cpu) = first(mem_node) {
        return Some(CpuChoice {
            cpu,
            cpu_node: mem_node,
        });
    }
    let cpu_node = topo
        .usable_cpu_nodes()
        .iter()
        .min_by_key(|&n| (topo.distance(mem_node, n).unwrap_or(u32::MAX), n))?;
    Some(CpuChoice {
        cpu: first(cpu_node)?,
        cpu_node,
    })
}

/// A PCI address as numbers: domain, bus, device, function. Accepts
/// `DDDD:BB:DD.F` in either case, with a domain of any width (the driver
/// writes 4 or 8 hex digits, sysfs 4) or without one (domain 0).
pub fn parse_pci_address(text: &str) -> Option<(u32, u32, u32, u32)> {
    let hex = |s: &str| {
        (!s.is_empty() && s.len() <= 8)
            .then(|| u32::from_str_radix(s, 16).ok())
            .flatten()
    };
    let parts: Vec<&str> = text.trim().split(':').collect();
    let (domain, bus, devfn) = match parts.as_slice() {
        [d, b, df] => (hex(d)?, *b, *df),
        [b, df] => (0, *b, *df),
        _ => return None,
    };
    let (dev, func) = devfn.split_once('.')?;
    Some((domain, hex(bus)?, hex(dev)?, hex(func)?))
}

/// True when two PCI addresses name the same function, e.g. the driver's
/// `0000:3B:00.0` and sysfs' `0000:3b:00.0`.
pub fn same_pci_address(a: &str, b: &str) -> bool {
    matches!((parse_pci_address(a), parse_pci_address(b)), (Some(x), Some(y)) if x == y)
}

/// The sysfs PCI device of a GPU the driver names by `bus_id`.
pub fn find_accelerator<'t>(topo: &'t Topology, bus_id: &str) -> Option<&'t Accelerator> {
    topo.accelerators
        .iter()
        .find(|a| same_pci_address(&a.pci_address, bus_id))
}

/// Phi of a link of `width` lanes at `speed_gt_s`, per direction, in MB/s
/// (see [`Accelerator::link_peak_mb_s`]): 8b/10b encoding below 8 GT/s,
/// 128b/130b from 8 GT/s. PCIe 2.0 x16 gives 8000 MB/s, 3.0 x16 15754,
/// 4.0 x16 31508, 5.0 x16 63015.
///
/// The thesis' Phi for PCIe 2.0 x16 is 12.8 GB/s, 8b/10b applied to the
/// 16 GB/s usually quoted for the slot; that figure counts both
/// directions, while a copy uses one (see
/// [`PCIE2_X16_MB_S`](crate::analysis::model::PCIE2_X16_MB_S)). Give
/// `--phi 12800` to compare with its alpha_p values.
pub fn link_phi_mb_s(speed_gt_s: f64, width: u32) -> Option<f64> {
    let probe = Accelerator {
        pci_address: String::new(),
        vendor: String::new(),
        device: String::new(),
        class: String::new(),
        kind: String::new(),
        numa_node: None,
        link_speed_gt_s: Some(speed_gt_s),
        link_width: Some(width),
        max_link_speed_gt_s: None,
        max_link_width: None,
    };
    probe.link_peak_mb_s().filter(|p| p.is_finite() && *p > 0.0)
}

/// Where Phi comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum PhiSource {
    /// `--phi`.
    Given,
    /// The PCIe link in sysfs (`current_link_speed`, `current_link_width`).
    Link { speed_gt_s: f64, width: u32 },
}

/// The theoretical one-direction bandwidth of a GPU's link.
#[derive(Debug, Clone, PartialEq)]
pub struct Phi {
    pub mb_s: f64,
    pub source: PhiSource,
}

impl Phi {
    pub fn given(mb_s: f64) -> Phi {
        Phi {
            mb_s,
            source: PhiSource::Given,
        }
    }

    /// Phi of the accelerator's current link, when sysfs reports it.
    pub fn of_link(acc: &Accelerator) -> Option<Phi> {
        let (speed_gt_s, width) = (acc.link_speed_gt_s?, acc.link_width?);
        Some(Phi {
            mb_s: link_phi_mb_s(speed_gt_s, width)?,
            source: PhiSource::Link { speed_gt_s, width },
        })
    }

    /// One line: the figure and where it comes from.
    pub fn describe(&self) -> String {
        match &self.source {
            PhiSource::Given => format!("Phi = {:.0} MB/s, as given with --phi", self.mb_s),
            PhiSource::Link { speed_gt_s, width } => format!(
                "Phi = {:.0} MB/s per direction: PCIe link {} GT/s x{width}, {} encoding",
                self.mb_s,
                short(*speed_gt_s),
                if *speed_gt_s < 8.0 {
                    "8b/10b"
                } else {
                    "128b/130b"
                }
            ),
        }
    }
}

/// A number without needless decimals: 8, 2.5.
fn short(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// What the driver reports of one GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuInfo {
    /// CUDA device ordinal (after `CUDA_VISIBLE_DEVICES`).
    pub ordinal: usize,
    pub name: String,
    /// As the driver writes it, e.g. `0000:3B:00.0`.
    pub pci_bus_id: String,
}

/// What the driver found.
#[derive(Debug, Clone, PartialEq)]
pub enum Found {
    /// The library works but there is no GPU; the reason in words.
    NoDevice(String),
    Gpus(Vec<GpuInfo>),
}

/// Initialises the driver and lists its GPUs. `CUDA_ERROR_NO_DEVICE` from
/// `cuInit`, or a device count of 0, is [`Found::NoDevice`]; any other
/// failure is an error.
pub fn discover(driver: &Driver) -> Result<Found> {
    match driver.init() {
        Err(e) if e.code == CUDA_ERROR_NO_DEVICE => return Ok(Found::NoDevice(e.to_string())),
        other => other?,
    }
    let n = driver.device_count()?;
    if n == 0 {
        return Ok(Found::NoDevice("cuDeviceGetCount reports 0 devices".into()));
    }
    let mut out = Vec::with_capacity(n);
    for ordinal in 0..n {
        let dev = driver.device(ordinal)?;
        out.push(GpuInfo {
            ordinal,
            name: driver.device_name(dev)?,
            pci_bus_id: driver.pci_bus_id(dev)?,
        });
    }
    Ok(Found::Gpus(out))
}

/// What to measure; every value checked by the caller.
#[derive(Debug, Clone, PartialEq)]
pub struct PcieConfig {
    /// Ordinals of the GPUs to measure.
    pub gpus: Vec<usize>,
    /// Memory nodes, each with memory this process may use.
    pub mem_nodes: Vec<usize>,
    /// Copy sizes in bytes, ascending, not empty.
    pub sizes: Vec<usize>,
    /// Timed copies per size and direction after one warm-up copy.
    pub tries: usize,
    /// `--phi`, replacing the link's figure for every GPU.
    pub phi_mb_s: Option<f64>,
}

/// Parameters every record of one GPU carries.
fn gpu_params(rec: Record, gpu: &GpuInfo, acc: Option<&Accelerator>) -> Record {
    rec.param("gpu", gpu.ordinal)
        .param("gpu_name", gpu.name.as_str())
        .param("pci_bus_id", gpu.pci_bus_id.as_str())
        .param("gpu_node", acc.and_then(|a| a.numa_node))
}

/// The record saying which GPU it is and what its Phi is.
pub fn gpu_record(gpu: &GpuInfo, acc: Option<&Accelerator>, phi: Option<&Phi>) -> Record {
    let mut rec = gpu_params(Record::new(PROBE, &format!("gpu{}", gpu.ordinal)), gpu, acc)
        .param("kind", KIND_GPU);
    if let Some(a) = acc {
        rec = rec
            .param("link_speed_gt_s", a.link_speed_gt_s)
            .param("link_width", a.link_width)
            .param("max_link_speed_gt_s", a.max_link_speed_gt_s)
            .param("max_link_width", a.max_link_width);
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
                    "phi_source",
                    match p.source {
                        PhiSource::Given => "given",
                        PhiSource::Link { .. } => "link",
                    },
                )
                .metric("phi_mb_s", p.mb_s, "MB/s", Better::Higher);
        }
        None if acc.is_some() => rec.notes.push(
            "sysfs gives no link speed and width for it: Phi and alpha_p unknown (give --phi)"
                .into(),
        ),
        None => {}
    }
    if let (Some(a), Some(PhiSource::Link { speed_gt_s, width })) = (acc, phi.map(|p| &p.source))
        && let (Some(ms), Some(mw)) = (a.max_link_speed_gt_s, a.max_link_width)
        && (*speed_gt_s < ms || *width < mw)
    {
        rec.notes.push(format!(
            "the link ran at {} GT/s x{width} but the device can do {} GT/s x{mw}: the slot, a riser or power saving holds it lower; Phi is the link's figure as it ran",
            short(*speed_gt_s),
            short(ms)
        ));
    }
    rec
}

/// The larger of two Phi readings of the same link. GPUs drop their link
/// to a lower speed when idle and train it up under load, so the reading
/// taken after the copies is normally the real one.
fn better_phi(a: Option<Phi>, b: Option<Phi>) -> Option<Phi> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b.mb_s > a.mb_s { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// Measures every GPU of `gpus` named in `cfg` from every memory node of
/// `cfg`: returns one [`KIND_GPU`] record per GPU and one [`KIND_SIZE`]
/// record per (GPU, memory node, direction, size). `progress` hears what
/// starts. Restores the thread's affinity afterwards.
pub fn measure(
    topo: &Topology,
    cfg: &PcieConfig,
    driver: &Driver,
    gpus: &[GpuInfo],
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Record>> {
    let mut out = Vec::new();
    let max = cfg
        .sizes
        .iter()
        .copied()
        .max()
        .context("no sizes to copy")?;
    for &ordinal in &cfg.gpus {
        if crate::interrupt::requested().is_some() {
            break;
        }
        let gpu = gpus
            .iter()
            .find(|g| g.ordinal == ordinal)
            .with_context(|| format!("GPU {ordinal} does not exist"))?;
        let what = format!("GPU {ordinal} ({})", gpu.pci_bus_id);
        let acc = find_accelerator(topo, &gpu.pci_bus_id).cloned();
        let (sizes, after) = measure_gpu(topo, cfg, driver, gpu, acc.as_ref(), max, progress)
            .with_context(|| what.clone())?;
        let phi = match cfg.phi_mb_s {
            Some(p) => Some(Phi::given(p)),
            None => better_phi(
                acc.as_ref().and_then(Phi::of_link),
                after.as_ref().and_then(Phi::of_link),
            ),
        };
        let link = match (&phi, &after) {
            (
                Some(Phi {
                    source: PhiSource::Link { speed_gt_s, width },
                    ..
                }),
                Some(a),
            ) if a.link_speed_gt_s == Some(*speed_gt_s) && a.link_width == Some(*width) => {
                after.as_ref()
            }
            _ => acc.as_ref().or(after.as_ref()),
        };
        out.push(gpu_record(gpu, link, phi.as_ref()));
        out.extend(sizes);
    }
    Ok(out)
}

fn measure_gpu(
    topo: &Topology,
    cfg: &PcieConfig,
    driver: &Driver,
    gpu: &GpuInfo,
    acc: Option<&Accelerator>,
    max: usize,
    progress: &mut dyn FnMut(&str),
) -> Result<(Vec<Record>, Option<Accelerator>)> {
    let dev = driver.device(gpu.ordinal)?;
    let ctx = driver.create_context(dev)?;
    let device_mem = ctx.alloc(max)?;
    let (start, stop) = (ctx.event()?, ctx.event()?);
    let mut out = Vec::new();
    'nodes: for &node in &cfg.mem_nodes {
        if crate::interrupt::requested().is_some() {
            break;
        }
        let choice = cpu_for_memory_node(topo, node)
            .with_context(|| format!("memory node {node}: no CPU this process may run on"))?;
        let _pin = affinity::pin_scoped(&CpuSet::from_ids([choice.cpu]))
            .with_context(|| format!("memory node {node}: cannot pin to CPU {}", choice.cpu))?;
        let seen_cpu = affinity::pin_and_check(choice.cpu)
            .with_context(|| format!("memory node {node}: CPU {}", choice.cpu))?;
        let mut buf = Buffer::new(
            &BufferOptions::new(max)
                .pages(PageKind::Base)
                .policy(MemPolicy::Bind(NodeSet::from_ids([node]))),
        )
        .with_context(|| format!("memory node {node}: host buffer"))?;
        let mut notes = Vec::new();
        if choice.cpu_node != node {
            notes.push(format!(
                "memory node {node} has no usable CPU: the thread ran on CPU {} of node {}, the nearest",
                choice.cpu, choice.cpu_node
            ));
        }
        let placement = match buf.verify() {
            Ok(p) => {
                if let Some(pct) = p.on_target_pct.filter(|&pct| pct < 100.0) {
                    notes.push(format!(
                        "only {pct:.1}% of the host buffer's pages are on node {node}"
                    ));
                }
                Some(Placement {
                    pages_by_node: p
                        .pages_by_node
                        .iter()
                        .map(|(k, v)| (k.to_string(), *v))
                        .collect(),
                    on_target_pct: p.on_target_pct,
                    huge_pct: p.huge_pct,
                    cpus_seen: vec![seen_cpu],
                })
            }
            Err(e) => {
                notes.push(format!("placement not verified: {e}"));
                None
            }
        };
        let mut host = ctx
            .register(&mut buf)
            .with_context(|| format!("memory node {node}"))?;
        for dir in Direction::BOTH {
            for &size in &cfg.sizes {
                if crate::interrupt::requested().is_some() {
                    break 'nodes;
                }
                progress(&format!(
                    "GPU {} {} node {node}, {}",
                    gpu.ordinal,
                    match dir {
                        Direction::Download => "<-",
                        Direction::Readback => "->",
                    },
                    crate::view::table::bytes(size as u64)
                ));
                let times = time_copies(
                    &ctx,
                    dir,
                    &mut host,
                    &device_mem,
                    size,
                    cfg.tries,
                    (&start, &stop),
                )
                .with_context(|| format!("memory node {node}, {} of {size} bytes", dir.name()))?;
                let mut rec = size_record(gpu, acc, node, choice, dir, size, &times);
                rec.placement = placement.clone();
                rec.notes.extend(notes.iter().cloned());
                out.push(rec);
            }
        }
        drop(host);
        ctx.synchronize()?;
    }
    // The link as it is right after the copies, before the context goes
    // (an idle GPU may train its link down again).
    let after = read_topology(&SysfsRoot::live())
        .ok()
        .and_then(|t| find_accelerator(&t, &gpu.pci_bus_id).cloned());
    Ok((out, after))
}

/// One warm-up copy (first-use costs such as the driver's mappings are no
/// part of the figure), then `tries` copies timed with events; seconds.
fn time_copies(
    ctx: &Context<'_>,
    dir: Direction,
    host: &mut Registered<'_>,
    dev: &DeviceMemory<'_>,
    size: usize,
    tries: usize,
    (start, stop): (&Event<'_>, &Event<'_>),
) -> Result<Vec<f64>, CudaError> {
    ctx.copy(dir.copy(), host, dev, size)?;
    (0..tries)
        .map(|_| ctx.timed_copy(dir.copy(), host, dev, size, start, stop))
        .collect()
}

/// MB/s (10^6 bytes per second) of `bytes` moved in `seconds`; `None`
/// for a time the clock could not resolve.
pub fn mb_s(bytes: usize, seconds: f64) -> Option<f64> {
    (seconds > 0.0 && seconds.is_finite()).then(|| bytes as f64 / seconds / 1e6)
}

/// The record of one (GPU, memory node, direction, size): the best of the
/// timed copies, every one kept as a sample.
pub fn size_record(
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
        .param("kind", KIND_SIZE)
        .param("mem_node", mem_node)
        .param("cpu", choice.cpu)
        .param("cpu_node", choice.cpu_node)
        .param("direction", dir.name())
        .param("size_bytes", size)
        .param("tries", times_s.len());
    let samples: Vec<f64> = times_s.iter().filter_map(|&t| mb_s(size, t)).collect();
    match samples.iter().copied().reduce(f64::max) {
        Some(best) => {
            rec = rec.metric("bandwidth_mb_s", best, "MB/s", Better::Higher);
            rec.samples.insert("bandwidth_mb_s".into(), samples);
        }
        None => rec
            .notes
            .push("every copy took less time than the events resolve".into()),
    }
    rec
}

/// The best bandwidth of one (GPU, memory node, direction) and the size
/// that gave it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Best {
    pub mb_s: f64,
    pub size_bytes: usize,
}

/// One memory node of one GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeRow {
    pub mem_node: usize,
    pub cpu: Option<usize>,
    pub cpu_node: Option<usize>,
    pub download: Option<Best>,
    pub readback: Option<Best>,
}

impl NodeRow {
    pub fn best(&self, dir: Direction) -> Option<Best> {
        match dir {
            Direction::Download => self.download,
            Direction::Readback => self.readback,
        }
    }
}

/// One GPU's figures from every memory node, with Phi and the classes.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuSummary {
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
}

impl GpuSummary {
    pub fn classes(&self, dir: Direction) -> &Classes {
        match dir {
            Direction::Download => &self.download,
            Direction::Readback => &self.readback,
        }
    }

    /// alpha_p of row `row` in `dir`: best bandwidth / Phi.
    pub fn alpha_p(&self, row: usize, dir: Direction) -> Option<f64> {
        let phi = self.phi.as_ref()?.mb_s;
        let b = self.rows.get(row)?.best(dir)?;
        Some(alpha(b.mb_s, phi))
    }
}

fn param_usize(rec: &Record, key: &str) -> Option<usize> {
    rec.params
        .get(key)
        .and_then(Value::as_u64)
        .and_then(|v| usize::try_from(v).ok())
}

fn param_str<'r>(rec: &'r Record, key: &str) -> Option<&'r str> {
    rec.params.get(key).and_then(Value::as_str)
}

fn phi_of_record(rec: &Record) -> Option<Phi> {
    let mb_s = rec.metrics.get("phi_mb_s")?.value;
    let source = match param_str(rec, "phi_source") {
        Some("link") => PhiSource::Link {
            speed_gt_s: rec.params.get("link_speed_gt_s")?.as_f64()?,
            width: u32::try_from(rec.params.get("link_width")?.as_u64()?).ok()?,
        },
        _ => PhiSource::Given,
    };
    Some(Phi { mb_s, source })
}

/// Which sizes the best figure is taken from: those at least the largest
/// size divided by this (with the default sizes: 64, 128 and 256 MiB).
pub const LARGE_SIZES: usize = 4;

/// The best of `(size, MB/s)` figures: the highest among the largest sizes
/// (at least 1/[`LARGE_SIZES`] of the largest), ties going to the larger
/// size. Small copies are bound by per-copy latency, and their times are
/// a few event ticks, too coarse to set a peak with.
pub fn best_of(figures: &[(usize, f64)]) -> Option<Best> {
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

/// Summaries per GPU (ascending ordinal) from the [`KIND_GPU`] and
/// [`KIND_SIZE`] records of a document. `phi_override` (`--phi`) replaces
/// every GPU's Phi. The best of a (GPU, node, direction) is taken with
/// [`best_of`]; classes are found with [`classify`] over the memory nodes
/// of each GPU and direction.
pub fn summarise(
    records: &[Record],
    phi_override: Option<f64>,
    opts: &ClassOptions,
) -> Vec<GpuSummary> {
    let mine = || {
        records
            .iter()
            .filter(|r| r.probe == PROBE)
            .filter_map(|r| param_usize(r, "gpu").map(|g| (g, r)))
    };
    let mut gpus: BTreeMap<usize, GpuSummary> = BTreeMap::new();
    let mut rows: BTreeMap<usize, BTreeMap<usize, NodeRow>> = BTreeMap::new();
    let mut figures: BTreeMap<(usize, usize, Direction), Vec<(usize, f64)>> = BTreeMap::new();
    for (g, rec) in mine() {
        let summary = gpus.entry(g).or_insert_with(|| GpuSummary {
            gpu: g,
            name: param_str(rec, "gpu_name").unwrap_or("?").to_string(),
            pci_bus_id: param_str(rec, "pci_bus_id").unwrap_or("?").to_string(),
            gpu_node: param_usize(rec, "gpu_node"),
            phi: None,
            rows: Vec::new(),
            download: classify(&[], opts),
            readback: classify(&[], opts),
            notes: Vec::new(),
        });
        match param_str(rec, "kind") {
            Some(KIND_GPU) => {
                summary.phi = phi_of_record(rec);
                summary.notes = rec.notes.clone();
            }
            Some(KIND_SIZE) => {
                let (Some(node), Some(dir), Some(size)) = (
                    param_usize(rec, "mem_node"),
                    param_str(rec, "direction").and_then(Direction::from_name),
                    param_usize(rec, "size_bytes"),
                ) else {
                    continue;
                };
                let row = rows.entry(g).or_default().entry(node).or_insert(NodeRow {
                    mem_node: node,
                    cpu: param_usize(rec, "cpu"),
                    cpu_node: param_usize(rec, "cpu_node"),
                    download: None,
                    readback: None,
                });
                if let Some(m) = rec.metrics.get("bandwidth_mb_s") {
                    figures
                        .entry((g, row.mem_node, dir))
                        .or_default()
                        .push((size, m.value));
                }
            }
            _ => {}
        }
    }
    for ((g, node, dir), sizes) in &figures {
        if let Some(row) = rows.get_mut(g).and_then(|r| r.get_mut(node)) {
            match dir {
                Direction::Download => row.download = best_of(sizes),
                Direction::Readback => row.readback = best_of(sizes),
            }
        }
    }
    for (g, summary) in gpus.iter_mut() {
        summary.rows = rows.remove(g).unwrap_or_default().into_values().collect();
        if let Some(p) = phi_override {
            summary.phi = Some(Phi::given(p));
        }
        let values = |dir: Direction| -> Vec<f64> {
            summary
                .rows
                .iter()
                .map(|r| r.best(dir).map_or(f64::NAN, |b| b.mb_s))
                .collect()
        };
        summary.download = classify(&values(Direction::Download), opts);
        summary.readback = classify(&values(Direction::Readback), opts);
    }
    gpus.into_values().collect()
}

/// One [`KIND_BEST`] record per (GPU, memory node, direction) with a
/// figure: the best bandwidth, the size that gave it, alpha_p when Phi is
/// known and the class.
pub fn best_records(summaries: &[GpuSummary]) -> Vec<Record> {
    let mut out = Vec::new();
    for s in summaries {
        for dir in Direction::BOTH {
            for (i, row) in s.rows.iter().enumerate() {
                let Some(best) = row.best(dir) else { continue };
                let mut rec = Record::new(
                    PROBE,
                    &format!("{} gpu{} node{}", dir.name(), s.gpu, row.mem_node),
                )
                .param("kind", KIND_BEST)
                .param("gpu", s.gpu)
                .param("gpu_name", s.name.as_str())
                .param("pci_bus_id", s.pci_bus_id.as_str())
                .param("gpu_node", s.gpu_node)
                .param("mem_node", row.mem_node)
                .param("cpu", row.cpu)
                .param("cpu_node", row.cpu_node)
                .param("direction", dir.name())
                .param("size_bytes", best.size_bytes)
                .param("class", s.classes(dir).class_of(i))
                .metric("bandwidth_mb_s", best.mb_s, "MB/s", Better::Higher);
                if let (Some(a), Some(phi)) = (s.alpha_p(i, dir), &s.phi) {
                    rec = rec
                        .param("phi_mb_s", phi.mb_s)
                        .metric("alpha_p", a, "", Better::Higher);
                }
                out.push(rec);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::PCIE2_X16_MB_S;
    use crate::topology::fixture;

    fn p4(x: f64) -> String {
        format!("{x:.4}")
    }

    #[test]
    fn phi_from_link_speed_and_width() {
        // PCIe 3.0 x16: 8 GT/s x 128/130 x 16 lanes / 8 bits.
        let gen3 = link_phi_mb_s(8.0, 16).unwrap();
        assert!((gen3 - 15_753.846).abs() < 0.01, "{gen3}");
        // PCIe 2.0 x16: 5 GT/s x 8/10 x 16 / 8 = 8000 MB/s per direction,
        // not the thesis' 12 800 (which counts both directions).
        assert_eq!(link_phi_mb_s(5.0, 16), Some(8000.0));
        assert_eq!(PCIE2_X16_MB_S, 1.6 * 8000.0);
        assert_eq!(link_phi_mb_s(2.5, 1), Some(250.0));
        let gen4 = link_phi_mb_s(16.0, 16).unwrap();
        assert!((gen4 - 31_507.69).abs() < 0.01, "{gen4}");
        let gen5 = link_phi_mb_s(32.0, 16).unwrap();
        assert!((gen5 - 63_015.38).abs() < 0.01, "{gen5}");
        assert_eq!(link_phi_mb_s(8.0, 0), None);
    }

    #[test]
    fn phi_of_a_fixture_gpu_and_its_description() {
        let t = fixture("two-node");
        let acc = find_accelerator(&t, "0000:3B:00.0").unwrap();
        assert_eq!(acc.numa_node, Some(1));
        let phi = Phi::of_link(acc).unwrap();
        assert_eq!(
            phi.describe(),
            "Phi = 31508 MB/s per direction: PCIe link 16 GT/s x16, 128b/130b encoding"
        );
        assert_eq!(
            Phi::given(12_800.0).describe(),
            "Phi = 12800 MB/s, as given with --phi"
        );
        let gen2 = Phi {
            mb_s: 8000.0,
            source: PhiSource::Link {
                speed_gt_s: 5.0,
                width: 16,
            },
        };
        assert!(gen2.describe().contains("5 GT/s x16, 8b/10b"));
        // A GPU with no link figures has no Phi.
        let mut bare = acc.clone();
        bare.link_width = None;
        assert_eq!(Phi::of_link(&bare), None);
    }

    #[test]
    fn the_better_of_two_link_readings_counts() {
        let idle = Phi {
            mb_s: 2000.0,
            source: PhiSource::Link {
                speed_gt_s: 2.5,
                width: 8,
            },
        };
        let busy = Phi::of_link(fixture("two-node").accelerators.last().unwrap()).unwrap();
        assert_eq!(
            better_phi(Some(idle.clone()), Some(busy.clone())),
            Some(busy.clone())
        );
        assert_eq!(
            better_phi(Some(busy.clone()), Some(idle.clone())),
            Some(busy)
        );
        assert_eq!(better_phi(None, Some(idle.clone())), Some(idle));
        assert_eq!(better_phi(None, None), None);
    }

    #[test]
    fn pci_addresses_match_across_case_and_domain_width() {
        assert!(same_pci_address("0000:3B:00.0", "0000:3b:00.0"));
        assert!(same_pci_address("00000000:3B:00.0", "0000:3b:00.0"));
        assert!(same_pci_address("3b:00.0", "0000:3B:00.0"));
        assert!(!same_pci_address("0000:3B:00.1", "0000:3b:00.0"));
        assert!(!same_pci_address("0001:3B:00.0", "0000:3b:00.0"));
        assert!(!same_pci_address("garbage", "garbage"));
        assert!(!same_pci_address("", ""));
        assert_eq!(parse_pci_address("0000:E3:1f.7"), Some((0, 0xe3, 0x1f, 7)));
        assert_eq!(parse_pci_address("0000:3b:00"), None);
        assert_eq!(parse_pci_address("0000:xx:00.0"), None);
        let t = fixture("two-node");
        assert_eq!(
            find_accelerator(&t, "0000:3B:00.0").map(|a| a.pci_address.as_str()),
            Some("0000:3b:00.0")
        );
        assert!(find_accelerator(&t, "0000:3C:00.0").is_none());
    }

    #[test]
    fn a_node_with_cpus_uses_its_own() {
        let t = fixture("two-node");
        assert_eq!(
            cpu_for_memory_node(&t, 0),
            Some(CpuChoice {
                cpu: 0,
                cpu_node: 0
            })
        );
        assert_eq!(
            cpu_for_memory_node(&t, 1),
            Some(CpuChoice {
                cpu: 8,
                cpu_node: 1
            })
        );
        // Only the CPUs of the cpuset count.
        let r = fixture("cpuset-restricted");
        assert_eq!(
            cpu_for_memory_node(&r, 0),
            Some(CpuChoice {
                cpu: 2,
                cpu_node: 0
            })
        );
    }

    #[test]
    fn a_memory_only_node_uses_the_nearest_node_with_cpus() {
        let mut t = fixture("cxl-memonly");
        assert!(t.node(2).unwrap().cpus.is_empty());
        // SLIT 50 to both CPU nodes: the lower id wins.
        assert_eq!(
            cpu_for_memory_node(&t, 2),
            Some(CpuChoice {
                cpu: 0,
                cpu_node: 0
            })
        );
        // Nearer to node 1.
        let n2 = t.nodes.iter_mut().find(|n| n.id == 2).unwrap();
        n2.distances = vec![50, 30, 10];
        assert_eq!(
            cpu_for_memory_node(&t, 2),
            Some(CpuChoice {
                cpu: 4,
                cpu_node: 1
            })
        );
        // No CPU allowed anywhere: no choice.
        t.allowed.cpus = CpuSet::new();
        assert_eq!(cpu_for_memory_node(&t, 2), None);
    }

    fn gpu0() -> GpuInfo {
        GpuInfo {
            ordinal: 0,
            name: "Tesla C2050".into(),
            pci_bus_id: "0000:3B:00.0".into(),
        }
    }

    /// Records as a measurement of the thesis' AMD 2P machine would give
    /// them: Table 5.5 (Cbench, SHOC CUDA, device 0, from nodes 0-3), GB/s
    /// written as MB/s, each at two sizes (the smaller one slower).
    fn table_5_5() -> Vec<Record> {
        let download = [5.8503, 5.3153, 2.3481, 2.3192];
        let readback = [6.5800, 5.3182, 2.3089, 2.2828];
        let gpu = gpu0();
        let mut out = vec![gpu_record(&gpu, None, Some(&Phi::given(PCIE2_X16_MB_S)))];
        for (dir, values) in [
            (Direction::Download, download),
            (Direction::Readback, readback),
        ] {
            for (node, gb_s) in values.into_iter().enumerate() {
                let choice = CpuChoice {
                    cpu: node * 4,
                    cpu_node: node,
                };
                for (size, scale) in [(1 << 20, 0.5), (64 << 20, 1.0)] {
                    // Three copies, the best at gb_s.
                    let best = size as f64 / (gb_s * 1e9 * scale);
                    let times = [best * 1.1, best, best * 1.05];
                    out.push(size_record(&gpu, None, node, choice, dir, size, &times));
                }
            }
        }
        out
    }

    #[test]
    fn size_records_keep_every_copy_and_the_best() {
        let choice = CpuChoice {
            cpu: 3,
            cpu_node: 1,
        };
        let rec = size_record(
            &gpu0(),
            None,
            1,
            choice,
            Direction::Readback,
            1_000_000,
            &[0.001, 0.0005, 0.0],
        );
        assert_eq!(rec.name, "readback gpu0 node1 1000000");
        assert_eq!(rec.metrics["bandwidth_mb_s"].value, 2000.0);
        assert_eq!(rec.samples["bandwidth_mb_s"], [1000.0, 2000.0]);
        assert_eq!(rec.params["direction"], "readback");
        assert_eq!(rec.params["pci_bus_id"], "0000:3B:00.0");
        assert_eq!(rec.params["gpu_node"], Value::Null);
        assert_eq!(rec.params["cpu"], 3);
        let none = size_record(&gpu0(), None, 1, choice, Direction::Download, 8, &[0.0]);
        assert!(none.metrics.is_empty());
        assert_eq!(none.notes.len(), 1);
        assert_eq!(mb_s(1_000_000, 0.001), Some(1000.0));
        assert_eq!(mb_s(1, f64::NAN), None);
    }

    #[test]
    fn alpha_p_and_classes_of_the_thesis_table_5_5() {
        let s = summarise(&table_5_5(), None, &ClassOptions::default());
        assert_eq!(s.len(), 1);
        let s = &s[0];
        assert_eq!(s.phi, Some(Phi::given(PCIE2_X16_MB_S)));
        assert_eq!(s.rows.len(), 4);
        // The best is at the largest size.
        assert!(
            s.rows
                .iter()
                .all(|r| r.download.unwrap().size_bytes == 64 << 20)
        );
        assert!((s.rows[0].download.unwrap().mb_s - 5850.3).abs() < 1e-6);
        // Table 5.4: class 0 download 5.85 GB/s (0.4571), readback 6.58
        // (0.5141); class 2 readback 2.31 (0.1804 of node 2's 2.3089).
        assert_eq!(p4(s.alpha_p(0, Direction::Download).unwrap()), "0.4571");
        assert_eq!(p4(s.alpha_p(0, Direction::Readback).unwrap()), "0.5141");
        assert_eq!(p4(s.alpha_p(1, Direction::Readback).unwrap()), "0.4155");
        // Readback: three classes, nodes 2 and 3 sharing the slowest.
        let r = &s.readback;
        assert_eq!(r.len(), 3);
        assert_eq!(r.assignment, [Some(0), Some(1), Some(2), Some(2)]);
        // Download: node 1 (5315) is within 10% of node 0 (5850), so this
        // criterion makes them one class where the thesis kept two (its
        // own 10% rule would merge them too).
        assert_eq!(s.download.assignment, [Some(0), Some(0), Some(1), Some(1)]);
        // A tighter tolerance separates them as the thesis did.
        let tight = summarise(&table_5_5(), None, &ClassOptions { tolerance: 0.05 });
        assert_eq!(
            tight[0].download.assignment,
            [Some(0), Some(1), Some(2), Some(2)]
        );
    }

    #[test]
    fn alpha_p_of_the_thesis_table_3_4_classes() {
        // Table 3.4 (AMD, SHOC): download 5.8/5.3/2.3, readback 6.6/5.3/2.3
        // GB/s, one memory node per class; Phi = 12.8 GB/s.
        let gpu = gpu0();
        let mut recs = vec![gpu_record(&gpu, None, None)];
        for (dir, values) in [
            (Direction::Download, [5.8, 5.3, 2.3]),
            (Direction::Readback, [6.6, 5.3, 2.3]),
        ] {
            for (node, gb_s) in values.into_iter().enumerate() {
                let choice = CpuChoice {
                    cpu: node,
                    cpu_node: node,
                };
                let t = (1 << 26) as f64 / (gb_s * 1e9);
                recs.push(size_record(&gpu, None, node, choice, dir, 1 << 26, &[t]));
            }
        }
        // No Phi recorded: no alpha_p.
        let s = summarise(&recs, None, &ClassOptions::default());
        assert_eq!(s[0].alpha_p(0, Direction::Readback), None);
        // --phi 12800 gives the thesis' eq. 4.15 and 4.16.
        let s = summarise(&recs, Some(PCIE2_X16_MB_S), &ClassOptions::default());
        let a =
            |dir| -> Vec<String> { (0..3).map(|i| p4(s[0].alpha_p(i, dir).unwrap())).collect() };
        assert_eq!(a(Direction::Readback), ["0.5156", "0.4141", "0.1797"]);
        assert_eq!(a(Direction::Download), ["0.4531", "0.4141", "0.1797"]);
        assert_eq!(s[0].readback.len(), 3);
        let maxima: Vec<f64> = s[0].readback.classes.iter().map(|c| c.max).collect();
        for (got, want) in maxima.iter().zip([6600.0, 5300.0, 2300.0]) {
            assert!((got - want).abs() < 1e-6, "{maxima:?}");
        }
    }

    #[test]
    fn best_records_carry_class_and_alpha_p() {
        let s = summarise(&table_5_5(), None, &ClassOptions::default());
        let best = best_records(&s);
        assert_eq!(best.len(), 8);
        let r = best
            .iter()
            .find(|r| r.name == "readback gpu0 node2")
            .unwrap();
        assert_eq!(r.params["kind"], KIND_BEST);
        assert_eq!(r.params["class"], 2);
        assert_eq!(r.params["size_bytes"], 64 << 20);
        assert_eq!(p4(r.metrics["alpha_p"].value), "0.1804");
        assert_eq!(r.params["phi_mb_s"], 12_800.0);
        // Summarising a document that already holds best records gives
        // the same.
        let mut all = table_5_5();
        all.extend(best.clone());
        assert_eq!(summarise(&all, None, &ClassOptions::default()), s);
    }

    #[test]
    fn the_best_comes_from_the_largest_sizes() {
        const M: usize = 1 << 20;
        // A small copy timed at a few event ticks looks fast; it does not
        // count.
        let figures = [
            (16 << 10, 90_000.0),
            (16 * M, 24_000.0),
            (64 * M, 25_500.0),
            (128 * M, 25_000.0),
            (256 * M, 25_100.0),
        ];
        assert_eq!(
            best_of(&figures),
            Some(Best {
                mb_s: 25_500.0,
                size_bytes: 64 * M
            })
        );
        // Ties go to the larger size; unusable figures are skipped.
        assert_eq!(
            best_of(&[(M, 10.0), (2 * M, 10.0), (4 * M, f64::NAN)]),
            Some(Best {
                mb_s: 10.0,
                size_bytes: 2 * M
            })
        );
        assert_eq!(
            best_of(&[(4096, 1.0)]),
            Some(Best {
                mb_s: 1.0,
                size_bytes: 4096
            })
        );
        assert_eq!(best_of(&[]), None);
        assert_eq!(best_of(&[(4096, 0.0)]), None);
    }

    #[test]
    fn gpu_records_say_what_is_unknown() {
        let gpu = gpu0();
        let none = gpu_record(&gpu, None, None);
        assert_eq!(none.params["kind"], KIND_GPU);
        assert!(none.metrics.is_empty());
        assert_eq!(none.notes.len(), 1, "{:?}", none.notes);
        assert!(none.notes[0].contains("not in sysfs"));
        let t = fixture("two-node");
        let mut acc = find_accelerator(&t, &gpu.pci_bus_id).unwrap().clone();
        acc.max_link_speed_gt_s = Some(32.0);
        let phi = Phi::of_link(&acc);
        let rec = gpu_record(&gpu, Some(&acc), phi.as_ref());
        assert_eq!(rec.params["gpu_node"], 1);
        assert_eq!(rec.params["phi_source"], "link");
        assert!((rec.metrics["phi_mb_s"].value - 31_507.69).abs() < 0.01);
        assert_eq!(rec.notes.len(), 1);
        assert!(
            rec.notes[0].contains("can do 32 GT/s x16"),
            "{:?}",
            rec.notes
        );
        // Phi read back from the record.
        let s = summarise(&[rec], None, &ClassOptions::default());
        assert_eq!(s[0].phi, phi);
        assert_eq!(s[0].gpu_node, Some(1));
        assert!(s[0].rows.is_empty());
    }
}
