//! Host-device (PCIe) bandwidth per memory node, as SHOC's BusSpeedDownload
//! and BusSpeedReadback measure it under `numactl --cpunodebind=N
//! --membind=N` in Braithwaite's thesis (section 3.2.2, Algorithm 3): for
//! every GPU and every memory node, a host buffer bound to that node and
//! page-locked, copied to the GPU (download) and back (readback) at a range
//! of sizes, the calling thread on a CPU of that node. Where there is more
//! than one CPU node, the largest sizes are copied again with the thread on
//! each other CPU node (`--cpunodebind=i --membind=j`): the node x node
//! table of the thesis' Table 5.5.
//!
//! The figures are put beside Phi, the link's theoretical one-direction
//! bandwidth (from the PCIe link speed and width in sysfs, or `--phi`), as
//! `alpha_p = bandwidth / Phi` (thesis eq. 4.3, section 4.3), and the
//! memory nodes are sorted into bandwidth classes per GPU and direction
//! with [`classify`](crate::analysis::classes::classify).
//!
//! The steps, one file each: [`locate`] finds the GPUs and the CPU for a
//! memory node, [`measure`] copies (through the driver in [`cuda`]),
//! [`records`] turns copies into records, [`summary`] reads records back
//! into per-GPU figures and classes, [`view`] shows them. Everything but
//! the measurement is pure and tested on fixture topologies and the
//! thesis' published figures; the measurement itself needs a GPU (or the
//! stand-in driver of the tests).

pub(crate) mod cuda;
pub(crate) mod locate;
pub(crate) mod measure;
pub(crate) mod phi;
pub(crate) mod records;
pub(crate) mod summary;
pub(crate) mod view;

#[cfg(test)]
mod pair_tests;
#[cfg(test)]
mod tests;

pub(crate) use locate::{Found, discover};
pub(crate) use measure::PcieConfig;
pub(crate) use records::best_records;
pub(crate) use summary::{LARGE_SIZES, summarise};
pub(crate) use view::PcieView;

use crate::analysis::classes::ClassOptions;
use crate::results::Record;
use crate::results::names::probe;
use crate::topology::Topology;
use anyhow::Result;
use cuda::{CopyDirection, Driver};

/// The probe name in records.
pub(crate) const PROBE: &str = probe::PCIE;

/// Which way the data goes, in SHOC's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Direction {
    /// Host to device (BusSpeedDownload).
    Download,
    /// Device to host (BusSpeedReadback).
    Readback,
}

impl Direction {
    pub(crate) const BOTH: [Direction; 2] = [Direction::Download, Direction::Readback];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Direction::Download => "download",
            Direction::Readback => "readback",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<Direction> {
        Direction::BOTH.into_iter().find(|d| d.name() == name)
    }

    fn copy(self) -> CopyDirection {
        match self {
            Direction::Download => CopyDirection::HostToDevice,
            Direction::Readback => CopyDirection::DeviceToHost,
        }
    }
}

/// What `numabench pcie` asks for, every value but the GPUs checked.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Request {
    /// GPU ordinals as `--gpu` gives them; empty: every GPU.
    pub gpus: Vec<usize>,
    pub mem_nodes: Vec<usize>,
    /// CPU nodes for the node x node table; empty: none.
    pub cpu_nodes: Vec<usize>,
    /// Ascending, not empty.
    pub sizes: Vec<usize>,
    pub tries: usize,
    /// `--phi`, replacing the link's figure for every GPU.
    pub phi_mb_s: Option<f64>,
    pub classes: ClassOptions,
}

/// What a run gave.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// The driver is absent or finds no GPU: the reason as one line.
    Nothing(String),
    /// One GPU record per GPU, one size record per copy size, one best
    /// record per (GPU, memory node, direction); where the thread also ran
    /// on other CPU nodes, a pair_size record per copy size and a pair
    /// record per (GPU, CPU node, memory node, direction).
    Records(Vec<Record>),
}

/// Loads the driver, finds the GPUs and measures the ones `req` names from
/// every memory node of `req`. `progress` hears what starts.
pub(crate) fn run(
    topo: &Topology,
    req: &Request,
    progress: &mut dyn FnMut(&str),
) -> Result<Outcome> {
    let driver = match Driver::load() {
        Ok(d) => d,
        Err(e) if e.is_absent() => {
            return Ok(Outcome::Nothing(format!(
                "numabench pcie: no CUDA driver ({e}); nothing to measure"
            )));
        }
        Err(e) => return Err(e.into()),
    };
    let gpus = match discover(&driver)? {
        Found::NoDevice(why) => {
            return Ok(Outcome::Nothing(format!(
                "numabench pcie: the CUDA driver ({}) finds no GPU ({why}); nothing to measure",
                driver.library()
            )));
        }
        Found::Gpus(g) => g,
    };
    let cfg = PcieConfig {
        gpus: locate::pick_gpus(&req.gpus, &gpus)?,
        mem_nodes: req.mem_nodes.clone(),
        cpu_nodes: req.cpu_nodes.clone(),
        sizes: req.sizes.clone(),
        tries: req.tries,
        phi_mb_s: req.phi_mb_s,
    };
    let mut records = measure::measure(topo, &cfg, &driver, &gpus, progress)?;
    let summaries = summarise(&records, req.phi_mb_s, &req.classes);
    records.extend(best_records(&summaries));
    Ok(Outcome::Records(records))
}
