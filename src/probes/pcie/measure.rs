//! The measurement: for each GPU, one context and one device buffer; for
//! each memory node, a host buffer bound there, page-locked, the thread on
//! a CPU of the node, then (for the node x node table) on a CPU of every
//! other CPU node in turn; for each direction and size, one warm-up copy
//! and the timed ones.

use super::Direction;
use super::cuda::{Context, CudaError, DeviceMemory, Driver, Event, Registered};
use super::locate::{CpuChoice, GpuInfo, find_accelerator, thread_seats};
use super::phi::{Phi, PhiSource, better_phi};
use super::records::{gpu_record, pair_size_record, size_record};
use super::summary::large_sizes;
use crate::ids::{CpuSet, NodeSet};
use crate::memory::{Buffer, BufferOptions, PageKind};
use crate::placement::{MemPolicy, affinity};
use crate::results::{Placement, Record};
use crate::topology::{Accelerator, SysfsRoot, Topology, read_topology};
use anyhow::{Context as _, Result};

/// What to measure; every value checked by the caller.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PcieConfig {
    /// Ordinals of the GPUs to measure.
    pub gpus: Vec<usize>,
    /// Memory nodes, each with memory this process may use.
    pub mem_nodes: Vec<usize>,
    /// CPU nodes the thread also copies from, for the node x node table
    /// (each with CPUs this process may use); empty: only from each memory
    /// node's own node.
    pub cpu_nodes: Vec<usize>,
    /// Copy sizes in bytes, ascending, not empty.
    pub sizes: Vec<usize>,
    /// Timed copies per size and direction after one warm-up copy.
    pub tries: usize,
    /// `--phi`, replacing the link's figure for every GPU.
    pub phi_mb_s: Option<f64>,
}

/// Measures every GPU of `gpus` named in `cfg` from every memory node of
/// `cfg`: returns one `gpu` record per GPU and one `size` record per (GPU,
/// memory node, direction, size). `progress` hears what starts. Restores
/// the thread's affinity afterwards.
pub(crate) fn measure(
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
        let (phi, link) = phi_and_link(cfg.phi_mb_s, acc.as_ref(), after.as_ref());
        out.push(gpu_record(gpu, link, phi.as_ref()));
        out.extend(sizes);
    }
    Ok(out)
}

/// Phi of a GPU (`--phi`, else the better of the link readings before and
/// after the copies) and the reading of the link to record beside it.
fn phi_and_link<'a>(
    given: Option<f64>,
    before: Option<&'a Accelerator>,
    after: Option<&'a Accelerator>,
) -> (Option<Phi>, Option<&'a Accelerator>) {
    let phi = match given {
        Some(p) => Some(Phi::given(p)),
        None => better_phi(before.and_then(Phi::of_link), after.and_then(Phi::of_link)),
    };
    let link = match (&phi, after) {
        (
            Some(Phi {
                source: PhiSource::Link { speed_gt_s, width },
                ..
            }),
            Some(a),
        ) if a.link_speed_gt_s == Some(*speed_gt_s) && a.link_width == Some(*width) => after,
        _ => before.or(after),
    };
    (phi, link)
}

/// Every memory node of `cfg` on one GPU; the records and the GPU's link
/// as sysfs gives it right after the copies.
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
    let events = (ctx.event()?, ctx.event()?);
    let mut out = Vec::new();
    for &node in &cfg.mem_nodes {
        if crate::interrupt::requested().is_some() {
            break;
        }
        let gpu_side = GpuSide {
            ctx: &ctx,
            device_mem: &device_mem,
            events: (&events.0, &events.1),
            gpu,
            acc,
        };
        if measure_node(topo, cfg, &gpu_side, node, max, progress, &mut out)? {
            break;
        }
        ctx.synchronize()?;
    }
    // The link as it is right after the copies, before the context goes
    // (an idle GPU may train its link down again).
    let after = read_topology(&SysfsRoot::live())
        .ok()
        .and_then(|t| find_accelerator(&t, &gpu.pci_bus_id).cloned());
    Ok((out, after))
}

/// What the copies of one GPU share.
struct GpuSide<'c, 'd> {
    ctx: &'c Context<'d>,
    device_mem: &'c DeviceMemory<'c>,
    events: (&'c Event<'c>, &'c Event<'c>),
    gpu: &'c GpuInfo,
    acc: Option<&'c Accelerator>,
}

/// Both directions and every size from memory node `node` with the thread
/// on the node's own CPU, then the largest sizes with the thread on each
/// other CPU node of `cfg`; records pushed to `out`; true when a stop
/// signal ended it early.
fn measure_node(
    topo: &Topology,
    cfg: &PcieConfig,
    side: &GpuSide<'_, '_>,
    node: usize,
    max: usize,
    progress: &mut dyn FnMut(&str),
    out: &mut Vec<Record>,
) -> Result<bool> {
    let (home, others) = thread_seats(topo, node, &cfg.cpu_nodes)
        .with_context(|| format!("memory node {node}: no CPU this process may run on"))?;
    let _pin = affinity::pin_scoped(&CpuSet::from_ids([home.cpu]))
        .with_context(|| format!("memory node {node}: cannot pin to CPU {}", home.cpu))?;
    let mut buf = Buffer::new(
        &BufferOptions::new(max)
            .pages(PageKind::Base)
            .policy(MemPolicy::Bind(NodeSet::from_ids([node]))),
    )
    .with_context(|| format!("memory node {node}: host buffer"))?;
    // Page-locked pages stay where they are: one look serves every seat.
    let (placement, notes) = host_placement(&buf, node);
    let mut host = side
        .ctx
        .register(&mut buf)
        .with_context(|| format!("memory node {node}"))?;
    let large = large_sizes(&cfg.sizes);
    let seats = std::iter::once((home, cfg.sizes.as_slice()))
        .chain(others.iter().map(|&c| (c, large.as_slice())));
    for (i, (choice, sizes)) in seats.enumerate() {
        let seen_cpu = affinity::pin_and_check(choice.cpu)
            .with_context(|| format!("memory node {node}: CPU {}", choice.cpu))?;
        let mut seat = Seat {
            mem_node: node,
            choice,
            pair: i > 0,
            placement: placement.clone().map(|mut p| {
                p.cpus_seen = vec![seen_cpu];
                p
            }),
            notes: Vec::new(),
        };
        if !seat.pair && choice.cpu_node != node {
            seat.notes.push(format!(
                "memory node {node} has no usable CPU: the thread ran on CPU {} of node {}, the nearest",
                choice.cpu, choice.cpu_node
            ));
        }
        seat.notes.extend(notes.iter().cloned());
        if copy_sizes(cfg, side, &seat, sizes, &mut host, progress, out)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Where the thread runs for a set of copies and what their records carry.
struct Seat {
    mem_node: usize,
    choice: CpuChoice,
    /// A cell of the node x node table only (not the memory node's own).
    pair: bool,
    placement: Option<Placement>,
    notes: Vec<String>,
}

/// Both directions and every size of `sizes` from the host buffer with the
/// thread where `seat` says; true when a stop signal ended it early.
fn copy_sizes(
    cfg: &PcieConfig,
    side: &GpuSide<'_, '_>,
    seat: &Seat,
    sizes: &[usize],
    host: &mut Registered<'_>,
    progress: &mut dyn FnMut(&str),
    out: &mut Vec<Record>,
) -> Result<bool> {
    let (node, choice) = (seat.mem_node, seat.choice);
    for dir in Direction::BOTH {
        for &size in sizes {
            if crate::interrupt::requested().is_some() {
                return Ok(true);
            }
            progress(&format!(
                "GPU {} {} node {node}, {}{}",
                side.gpu.ordinal,
                match dir {
                    Direction::Download => "<-",
                    Direction::Readback => "->",
                },
                crate::units::bytes(size as u64),
                if seat.pair {
                    format!(", thread on node {}", choice.cpu_node)
                } else {
                    String::new()
                }
            ));
            let times = time_copies(side, dir, host, size, cfg.tries).with_context(|| {
                let thread = if seat.pair {
                    format!(" (thread on node {})", choice.cpu_node)
                } else {
                    String::new()
                };
                format!("memory node {node}{thread}, {} of {size} bytes", dir.name())
            })?;
            let make = if seat.pair {
                pair_size_record
            } else {
                size_record
            };
            let mut rec = make(side.gpu, side.acc, node, choice, dir, size, &times);
            rec.placement = seat.placement.clone();
            rec.notes.extend(seat.notes.iter().cloned());
            out.push(rec);
        }
    }
    Ok(false)
}

/// Where the host buffer of `node` is (as `move_pages` sees it; the CPU
/// seen is filled in per seat) and the notes every record from the buffer
/// carries.
fn host_placement(buf: &Buffer, node: usize) -> (Option<Placement>, Vec<String>) {
    let mut notes = Vec::new();
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
                cpus_seen: Vec::new(),
            })
        }
        Err(e) => {
            notes.push(format!("placement not verified: {e}"));
            None
        }
    };
    (placement, notes)
}

/// One warm-up copy (first-use costs such as the driver's mappings are no
/// part of the figure), then `tries` copies timed with events; seconds.
fn time_copies(
    side: &GpuSide<'_, '_>,
    dir: Direction,
    host: &mut Registered<'_>,
    size: usize,
    tries: usize,
) -> Result<Vec<f64>, CudaError> {
    let (ctx, dev) = (side.ctx, side.device_mem);
    ctx.copy(dir.copy(), host, dev, size)?;
    (0..tries)
        .map(|_| ctx.timed_copy(dir.copy(), host, dev, size, side.events.0, side.events.1))
        .collect()
}
