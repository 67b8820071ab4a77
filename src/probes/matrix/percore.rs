//! `--per-core`: single-thread bandwidth from every core of one node to one
//! memory node, and whether the cores are equivalent.

use super::{MatrixConfig, admit_sizes, array_bytes, bandwidth_pages, node_cpus, working_set};
use crate::probes::measure::{self, Bandwidth};
use crate::probes::team::Seat;
use crate::stats;
use crate::topology::Topology;
use anyhow::{Result, bail};
use std::time::Instant;

/// Every core of one node against one memory node.
#[derive(Debug, Clone)]
pub struct PerCore {
    pub cpu_node: usize,
    pub mem_node: usize,
    /// (cpu, measurement) per physical core.
    pub cores: Vec<(usize, Bandwidth)>,
    pub summary: CoreSummary,
}

/// Spread of the per-core figures and whether the cores are equivalent.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreSummary {
    pub mean: f64,
    pub stddev: f64,
    /// 95% confidence interval of the mean (Student's t).
    pub ci95: (f64, f64),
    /// Largest distance of a core from the mean, in % of the mean.
    pub max_dev_pct: f64,
    pub equivalent: bool,
}

/// Cores count as equivalent when every one is within this % of the mean.
pub const EQUIVALENT_PCT: f64 = 5.0;

/// Two-sided 97.5% quantile of Student's t for `df` degrees of freedom.
pub fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        31..=60 => 2.000,
        61..=120 => 1.980,
        _ => 1.960,
    }
}

pub fn summarise_cores(values: &[f64]) -> CoreSummary {
    let mean = stats::mean(values);
    let sd = stats::stddev(values);
    let half = if values.len() < 2 {
        0.0
    } else {
        t975(values.len() - 1) * sd / (values.len() as f64).sqrt()
    };
    let max_dev_pct = if mean > 0.0 {
        values
            .iter()
            .map(|v| (v - mean).abs() / mean * 100.0)
            .fold(0.0, f64::max)
    } else {
        0.0
    };
    CoreSummary {
        mean,
        stddev: sd,
        ci95: (mean - half, mean + half),
        max_dev_pct,
        equivalent: max_dev_pct <= EQUIVALENT_PCT,
    }
}

/// Single-thread bandwidth from every core of `cpu_node` to `mem_node`.
pub fn per_core(
    topo: &Topology,
    cfg: &MatrixConfig,
    cpu_node: usize,
    mem_node: usize,
    progress: &mut dyn FnMut(&str),
) -> Result<PerCore> {
    // One CPU per physical core: `node_cpus` lists those first.
    let all = node_cpus(topo, cpu_node);
    let mut cores: Vec<String> = all
        .iter()
        .filter_map(|&c| topo.cpu(c).map(|cpu| cpu.smt_siblings.to_list()))
        .collect();
    cores.sort();
    cores.dedup();
    let cpus: Vec<usize> = all.into_iter().take(cores.len().max(1)).collect();
    if cpus.is_empty() {
        bail!("node {cpu_node} has no CPU this process may use");
    }
    admit_sizes(topo, cfg, &[mem_node])?;
    let ws = match cfg.working_set {
        Some(w) => w,
        None => working_set(topo, &cpus[..1], mem_node).0,
    };
    let pages = bandwidth_pages(cfg);
    let started = Instant::now();
    let mut out = Vec::new();
    for &cpu in &cpus {
        if cfg.time_limit.is_some_and(|t| started.elapsed() >= t)
            || crate::interrupt::requested().is_some()
        {
            break;
        }
        progress(&format!("cpu {cpu} -> mem node {mem_node}"));
        let seat = Seat {
            cpu,
            node: mem_node,
        };
        let b = measure::bandwidth(
            &[seat],
            array_bytes(ws, cfg.kernel.op.arrays(), 1),
            cfg.kernel,
            pages,
            cfg.timing,
        )?;
        out.push((cpu, b));
    }
    let values: Vec<f64> = out.iter().map(|(_, b)| b.stream_mb_s()).collect();
    Ok(PerCore {
        cpu_node,
        mem_node,
        cores: out,
        summary: summarise_cores(&values),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn student_t_and_confidence_interval() {
        assert_eq!(t975(1), 12.706);
        assert_eq!(t975(9), 2.262);
        assert_eq!(t975(1000), 1.960);
        let s = summarise_cores(&[100.0, 102.0, 98.0, 100.0]);
        assert_eq!(s.mean, 100.0);
        let half = 3.182 * s.stddev / 2.0;
        assert!((s.ci95.1 - 100.0 - half).abs() < 1e-9);
        assert!(s.equivalent);
        let uneven = summarise_cores(&[100.0, 100.0, 100.0, 80.0]);
        assert!(!uneven.equivalent, "{uneven:?}");
        assert!((uneven.max_dev_pct - 15.789_473_7).abs() < 1e-6);
    }
}
