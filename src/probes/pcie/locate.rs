//! Finding things: the GPUs the driver sees, the sysfs PCI device of each,
//! and the CPU a memory node's copies run on.

use super::cuda::{CUDA_ERROR_NO_DEVICE, Driver};
use crate::error::usage;
use crate::ids::NodeSet;
use crate::topology::{Accelerator, Topology};
use anyhow::Result;

/// The CPU a measurement for a memory node runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CpuChoice {
    pub cpu: usize,
    /// The node of `cpu`: the memory node itself, or the nearest node with
    /// usable CPUs when the memory node has none (CXL, HBM, cpuset).
    pub cpu_node: usize,
}

/// The first usable CPU (one per core first) of `mem_node`, else of the
/// nearest node with usable CPUs by SLIT distance (lowest id on a tie).
/// `None` when this process may run on no CPU at all.
pub(crate) fn cpu_for_memory_node(topo: &Topology, mem_node: usize) -> Option<CpuChoice> {
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

/// Where the thread goes for the copies from one memory node: first the
/// CPU [`cpu_for_memory_node`] picks (the per-node figure), then the first
/// usable CPU (one per core first) of every other node of `cpu_nodes`
/// (the node x node table's other cells), in the order given. Nodes of
/// `cpu_nodes` without a usable CPU, or repeated, are left out. `None`
/// when this process may run on no CPU at all.
pub(crate) fn thread_seats(
    topo: &Topology,
    mem_node: usize,
    cpu_nodes: &[usize],
) -> Option<(CpuChoice, Vec<CpuChoice>)> {
    let home = cpu_for_memory_node(topo, mem_node)?;
    let mut others: Vec<CpuChoice> = Vec::new();
    for &n in cpu_nodes {
        if n == home.cpu_node || others.iter().any(|c| c.cpu_node == n) {
            continue;
        }
        if let Some(&cpu) = topo.cores_first(&topo.usable_cpus_of(n)).first() {
            others.push(CpuChoice { cpu, cpu_node: n });
        }
    }
    Some((home, others))
}

/// A PCI address as numbers: domain, bus, device, function. Accepts
/// `DDDD:BB:DD.F` in either case, with a domain of any width (the driver
/// writes 4 or 8 hex digits, sysfs 4) or without one (domain 0).
pub(crate) fn parse_pci_address(text: &str) -> Option<(u32, u32, u32, u32)> {
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
pub(crate) fn same_pci_address(a: &str, b: &str) -> bool {
    matches!((parse_pci_address(a), parse_pci_address(b)), (Some(x), Some(y)) if x == y)
}

/// The sysfs PCI device of a GPU the driver names by `bus_id`.
pub(crate) fn find_accelerator<'t>(topo: &'t Topology, bus_id: &str) -> Option<&'t Accelerator> {
    topo.accelerators
        .iter()
        .find(|a| same_pci_address(&a.pci_address, bus_id))
}

/// What the driver reports of one GPU.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GpuInfo {
    /// CUDA device ordinal (after `CUDA_VISIBLE_DEVICES`).
    pub ordinal: usize,
    pub name: String,
    /// As the driver writes it, e.g. `0000:3B:00.0`.
    pub pci_bus_id: String,
}

/// What the driver found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Found {
    /// The library works but there is no GPU; the reason in words.
    NoDevice(String),
    Gpus(Vec<GpuInfo>),
}

/// Initialises the driver and lists its GPUs. `CUDA_ERROR_NO_DEVICE` from
/// `cuInit`, or a device count of 0, is [`Found::NoDevice`]; any other
/// failure is an error.
pub(crate) fn discover(driver: &Driver) -> Result<Found> {
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

/// The GPUs `--gpu` names (`wanted`; empty: all of `gpus`), each checked
/// against the driver's list, repeats dropped.
pub(crate) fn pick_gpus(wanted: &[usize], gpus: &[GpuInfo]) -> Result<Vec<usize>> {
    if wanted.is_empty() {
        return Ok(gpus.iter().map(|g| g.ordinal).collect());
    }
    let mut out = Vec::new();
    for &g in wanted {
        if !gpus.iter().any(|x| x.ordinal == g) {
            return Err(usage(format!(
                "--gpu {g}: GPU {g} does not exist (CUDA devices: {})",
                NodeSet::from_ids(gpus.iter().map(|x| x.ordinal))
            )));
        }
        if !out.contains(&g) {
            out.push(g);
        }
    }
    Ok(out)
}
