//! Checks the model against reality: one thread on a CPU node streams over
//! memory split across nodes by weight, and the measured bandwidth is set
//! beside what the pure placements predict.

use crate::analysis::model as m;
use crate::memory::PageKind;
use crate::memory::admission::admit_each;
use crate::probes::matrix::{self, MatrixConfig};
use crate::probes::measure::{self, Bandwidth};
use crate::probes::team::Seat;
use crate::topology::Topology;
use anyhow::{Result, bail};

/// What was measured for one mixed placement.
#[derive(Debug, Clone)]
pub(crate) struct Validation {
    pub cpu_node: usize,
    /// (memory node, weight, bandwidth with all memory there).
    pub pure: Vec<(usize, u32, Bandwidth)>,
    pub mixed: Bandwidth,
    /// Why the working set is smaller than the matrix's, where it is.
    pub notes: Vec<String>,
}

impl Validation {
    /// Requested fraction of memory per node.
    pub(crate) fn thetas(&self) -> Vec<f64> {
        let total: u32 = self.pure.iter().map(|p| p.1).sum();
        self.pure
            .iter()
            .map(|p| f64::from(p.1) / f64::from(total.max(1)))
            .collect()
    }

    /// Fraction of the mixed run's checked pages found on each node, in
    /// the order of `pure`.
    pub(crate) fn measured_thetas(&self) -> Vec<f64> {
        let pages = &self.mixed.seen.pages_by_node;
        let total: u64 = pages.values().sum();
        self.pure
            .iter()
            .map(|p| pages.get(&p.0).copied().unwrap_or(0) as f64 / total.max(1) as f64)
            .collect()
    }
}

/// A validation, or what a stop signal left of it: the pure placements
/// measured before it (no prediction can be checked without the mixed run).
pub(crate) enum Outcome {
    Done(Validation),
    Stopped(Vec<(usize, u32, Bandwidth)>),
}

pub(crate) fn run(
    topo: &Topology,
    cfg: &MatrixConfig,
    cpu_node: usize,
    weights: &[(usize, u32)],
    progress: &mut dyn FnMut(&str),
) -> Result<Outcome> {
    if weights.iter().all(|w| w.1 == 0) {
        bail!("every weight is 0");
    }
    let Some(&cpu) = crate::probes::seats::node_cpus(topo, cpu_node).first() else {
        bail!("node {cpu_node} has no CPU this process may use");
    };
    let pages = if cfg.huge {
        PageKind::Auto
    } else {
        PageKind::Base
    };
    let nodes: Vec<usize> = weights.iter().map(|w| w.0).collect();
    let (ws, scaled) = working_set(topo, cfg.working_set, cpu, &nodes)?;
    let array = crate::probes::sizing::array_bytes(ws, cfg.kernel.op.arrays(), 1);
    let mut pure = Vec::new();
    for &(m, w) in weights {
        if crate::interrupt::requested().is_some() {
            return Ok(Outcome::Stopped(pure));
        }
        progress(&format!("cpu node {cpu_node} -> mem node {m}"));
        let seat = [Seat { cpu, node: m }];
        let b = measure::bandwidth(&seat, array, cfg.kernel, pages, cfg.timing)?;
        pure.push((m, w, b));
    }
    if crate::interrupt::requested().is_some() {
        return Ok(Outcome::Stopped(pure));
    }
    progress(&format!("cpu node {cpu_node} -> mixed placement"));
    let seat = [Seat {
        cpu,
        node: weights[0].0,
    }];
    let used: Vec<(usize, u32)> = weights.iter().copied().filter(|w| w.1 > 0).collect();
    let mixed = measure::bandwidth_split(&seat, array, cfg.kernel, pages, cfg.timing, &used)?;
    Ok(Outcome::Done(Validation {
        cpu_node,
        pure,
        mixed,
        notes: scaled.into_iter().collect(),
    }))
}

/// Each pure run maps the whole working set on one node: a size given must
/// fit on every node; a size worked out here fits the smallest, with the
/// note that says it was scaled down and what decided it.
fn working_set(
    topo: &Topology,
    given: Option<usize>,
    cpu: usize,
    nodes: &[usize],
) -> Result<(usize, Option<String>)> {
    if let Some(w) = given {
        admit_each(topo, w as u64, nodes, "--size", "give a smaller --size")?;
        return Ok((w, None));
    }
    Ok(nodes
        .iter()
        .map(|&m| matrix::working_set(topo, &[cpu], m))
        .min_by_key(|w| w.0)
        .unwrap_or((0, None)))
}

/// A validation with the model's predictions beside the measurement.
#[derive(Debug, Clone)]
pub(crate) struct Checked {
    pub validation: Validation,
    /// Bandwidth with all memory on each node, in the order of `pure`.
    pub alone: Vec<f64>,
    pub measured: f64,
    /// The thesis' linear model, sum(theta_i x b_i).
    pub linear: f64,
    /// Time-weighted, 1 / sum(theta_i / b_i).
    pub harmonic: f64,
}

impl Checked {
    pub(crate) fn new(v: Validation) -> Result<Self> {
        let alone: Vec<f64> = v.pure.iter().map(|p| p.2.stream_mb_s()).collect();
        let thetas = v.thetas();
        Ok(Checked {
            linear: m::predict_linear(&alone, &thetas)?,
            harmonic: m::predict_harmonic(&alone, &thetas)?,
            measured: v.mixed.stream_mb_s(),
            alone,
            validation: v,
        })
    }

    /// A prediction's error against the measurement, in %.
    pub(crate) fn error_pct(&self, predicted: f64) -> f64 {
        m::error_pct(predicted, self.measured).unwrap_or(f64::NAN)
    }
}

/// One thread on `cpu_node` with the fastest triad: each node of `weights`
/// alone, then the memory split by the weights; `working_set` as given or
/// as the matrix works it out.
pub(crate) fn check(
    topo: &Topology,
    cpu_node: usize,
    weights: &[(usize, u32)],
    working_set: Option<usize>,
    progress: &mut dyn FnMut(&str),
) -> Result<Outcome> {
    let cfg = MatrixConfig::new()?
        .working_set(working_set)
        .measure(true, false, false);
    run(topo, &cfg, cpu_node, weights, progress)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_working_set_cut_by_a_memory_limit_says_so_and_names_it() {
        let mut topo = crate::topology::fixture("two-node");
        let cpu = crate::probes::seats::node_cpus(&topo, 0)[0];
        let (full, note) = working_set(&topo, None, cpu, &[0]).unwrap();
        assert!(note.is_none(), "{note:?}");
        topo.memory_limit = Some(crate::topology::MemoryLimit {
            headroom_bytes: 62 << 20,
            limit_bytes: 64 << 20,
            source: "memory cgroup /x (memory.limit_in_bytes)".into(),
        });
        let (ws, note) = working_set(&topo, None, cpu, &[0]).unwrap();
        assert_eq!(ws, 31 << 20);
        assert!(ws < full);
        let note = note.unwrap();
        assert!(note.contains("scaled down"), "{note}");
        assert!(note.contains("memory cgroup /x"), "{note}");
        // A size given is admitted, not scaled.
        assert_eq!(
            working_set(&topo, Some(1 << 20), cpu, &[0]).unwrap(),
            (1 << 20, None)
        );
        assert!(working_set(&topo, Some(1 << 30), cpu, &[0]).is_err());
    }
}
