//! `--per-core`: single-thread bandwidth from every core of one node to one
//! memory node, and whether the cores are equivalent; with `--runs N`, N
//! measurements per core and their spread (the thesis' Table 3.2).

use super::{MatrixConfig, admit_sizes, bandwidth_pages, working_set};
use crate::probes::measure::{self, Bandwidth};
use crate::probes::seats::node_cpus;
use crate::probes::sizing::array_bytes;
use crate::probes::team::Seat;
use crate::stats;
use crate::topology::Topology;
use anyhow::{Result, bail};
use std::time::Instant;

/// Every core of one node against one memory node.
#[derive(Debug, Clone)]
pub(crate) struct PerCore {
    pub cpu_node: usize,
    pub mem_node: usize,
    /// One per physical core measured.
    pub cores: Vec<CoreRuns>,
    /// `--runs`: measurements asked per core; `None`: one, shown as a
    /// figure per core.
    pub runs: Option<usize>,
    /// Across the cores' figures.
    pub summary: CoreSummary,
}

/// The measurements of one core: one, or one per run.
#[derive(Debug, Clone)]
pub(crate) struct CoreRuns {
    pub cpu: usize,
    pub runs: Vec<Bandwidth>,
}

impl CoreRuns {
    /// Each run's figure: MB/s, STREAM convention, the best of its timed
    /// runs.
    pub(crate) fn figures(&self) -> Vec<f64> {
        self.runs.iter().map(Bandwidth::stream_mb_s).collect()
    }

    /// The core's figure: its one measurement, or the mean of its runs.
    pub(crate) fn value(&self) -> f64 {
        stats::mean(&self.figures())
    }
}

/// Spread of a set of figures (the cores' figures, or one core's runs)
/// and, for cores, whether they are equivalent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CoreSummary {
    pub mean: f64,
    pub stddev: f64,
    /// 95% confidence interval of the mean (Student's t); the mean itself
    /// for a single figure.
    pub ci95: (f64, f64),
    pub min: f64,
    pub max: f64,
    /// Largest distance of a figure from the mean, in % of the mean.
    pub max_dev_pct: f64,
    pub equivalent: bool,
}

/// Cores count as equivalent when every one is within this % of the mean.
pub(crate) const EQUIVALENT_PCT: f64 = 5.0;

impl PerCore {
    /// With `--runs`: the widest 95% confidence interval of a core's mean,
    /// its half-width in % of that mean; `None` without runs.
    pub(crate) fn widest_ci_pct(&self) -> Option<f64> {
        self.runs?;
        self.cores
            .iter()
            .filter_map(|c| ci_half_pct(&c.figures()))
            .reduce(f64::max)
    }

    /// Whether the cores are equivalent; see [`equivalence`].
    pub(crate) fn equivalent(&self) -> Option<bool> {
        equivalence(&self.summary, self.widest_ci_pct())
    }
}

/// Half the 95% confidence interval of the mean of `figures`, in % of the
/// mean; `None` for fewer than two figures or a mean of 0.
pub(super) fn ci_half_pct(figures: &[f64]) -> Option<f64> {
    let (lo, hi) = stats::ci95(figures)?;
    let mean = stats::mean(figures);
    (mean > 0.0).then(|| 50.0 * (hi - lo) / mean)
}

/// Whether the cores are equivalent (every core's figure within
/// [`EQUIVALENT_PCT`] of the mean); `None` (cannot tell) when a core's
/// mean is itself known less closely than that (`widest_ci_pct`, with
/// `--runs`): its runs spread too much for the comparison to mean anything.
pub(super) fn equivalence(summary: &CoreSummary, widest_ci_pct: Option<f64>) -> Option<bool> {
    match widest_ci_pct {
        Some(w) if w > EQUIVALENT_PCT => None,
        _ => Some(summary.equivalent),
    }
}

pub(super) fn summarise_cores(values: &[f64]) -> CoreSummary {
    let mean = stats::mean(values);
    let max_dev_pct = if mean > 0.0 {
        values
            .iter()
            .map(|v| (v - mean).abs() / mean * 100.0)
            .fold(0.0, f64::max)
    } else {
        0.0
    };
    let fold = |f: fn(f64, f64) -> f64, start| values.iter().copied().fold(start, f);
    CoreSummary {
        mean,
        stddev: stats::stddev(values),
        ci95: stats::ci95(values).unwrap_or((mean, mean)),
        min: fold(f64::min, f64::INFINITY),
        max: fold(f64::max, f64::NEG_INFINITY),
        max_dev_pct,
        equivalent: max_dev_pct <= EQUIVALENT_PCT,
    }
}

/// Single-thread bandwidth from every core of `cpu_node` to `mem_node`:
/// one measurement per core, or `runs` of them, each with fresh arrays,
/// its own warm-up and the best of the timed runs. Runs go round the
/// cores (run 1 on every core, then run 2, ...), so a slow spell of the
/// machine falls on every core alike.
pub(crate) fn per_core(
    topo: &Topology,
    cfg: &MatrixConfig,
    cpu_node: usize,
    mem_node: usize,
    runs: Option<usize>,
    progress: &mut dyn FnMut(&str),
) -> Result<PerCore> {
    // One CPU per physical core: `node_cpus` lists those first.
    let all = node_cpus(topo, cpu_node);
    let mut core_ids: Vec<String> = all
        .iter()
        .filter_map(|&c| topo.cpu(c).map(|cpu| cpu.smt_siblings.to_list()))
        .collect();
    core_ids.sort();
    core_ids.dedup();
    let cpus: Vec<usize> = all.into_iter().take(core_ids.len().max(1)).collect();
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
    let mut cores: Vec<CoreRuns> = cpus
        .iter()
        .map(|&cpu| CoreRuns {
            cpu,
            runs: Vec::new(),
        })
        .collect();
    'runs: for run in 0..runs.unwrap_or(1) {
        for core in cores.iter_mut() {
            if cfg.time_limit.is_some_and(|t| started.elapsed() >= t)
                || crate::interrupt::requested().is_some()
            {
                break 'runs;
            }
            progress(&match runs {
                Some(n) => format!(
                    "cpu {} -> mem node {mem_node}, run {}/{n}",
                    core.cpu,
                    run + 1
                ),
                None => format!("cpu {} -> mem node {mem_node}", core.cpu),
            });
            let seat = Seat {
                cpu: core.cpu,
                node: mem_node,
            };
            core.runs.push(measure::bandwidth(
                &[seat],
                array_bytes(ws, cfg.kernel.op.arrays(), 1),
                cfg.kernel,
                pages,
                cfg.timing,
            )?);
        }
    }
    cores.retain(|c| !c.runs.is_empty());
    let values: Vec<f64> = cores.iter().map(CoreRuns::value).collect();
    Ok(PerCore {
        cpu_node,
        mem_node,
        cores,
        runs,
        summary: summarise_cores(&values),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_the_cores_with_its_confidence_interval() {
        let s = summarise_cores(&[100.0, 102.0, 98.0, 100.0]);
        assert_eq!(s.mean, 100.0);
        let half = 3.182 * s.stddev / 2.0;
        assert!((s.ci95.1 - 100.0 - half).abs() < 1e-9);
        assert_eq!((s.min, s.max), (98.0, 102.0));
        assert!(s.equivalent);
        let uneven = summarise_cores(&[100.0, 100.0, 100.0, 80.0]);
        assert!(!uneven.equivalent, "{uneven:?}");
        assert!((uneven.max_dev_pct - 15.789_473_7).abs() < 1e-6);
        // One figure: no spread, the interval shrinks to the mean.
        let one = summarise_cores(&[450.0]);
        assert_eq!(
            (one.stddev, one.ci95, one.min, one.max),
            (0.0, (450.0, 450.0), 450.0, 450.0)
        );
    }

    #[test]
    fn the_verdict_waits_for_intervals_narrower_than_the_bound() {
        let close = summarise_cores(&[100.0, 101.0]);
        let apart = summarise_cores(&[100.0, 120.0]);
        assert_eq!(equivalence(&close, None), Some(true));
        assert_eq!(equivalence(&apart, None), Some(false));
        assert_eq!(equivalence(&close, Some(4.9)), Some(true));
        assert_eq!(equivalence(&apart, Some(4.9)), Some(false));
        // A core's mean known only to -/+6%: neither verdict holds.
        assert_eq!(equivalence(&close, Some(6.0)), None);
        assert_eq!(equivalence(&apart, Some(6.0)), None);
        // Three runs 99, 100, 101: stddev 1, half-width 4.303 / sqrt(3).
        let w = ci_half_pct(&[99.0, 100.0, 101.0]).unwrap();
        assert!((w - 4.303 / 3f64.sqrt()).abs() < 1e-9, "{w}");
        assert_eq!(ci_half_pct(&[100.0]), None);
    }

    /// The thesis' Table 3.2 (cores 0-3 to memory node 0: mean 8127 MB/s,
    /// stddev 20.367, 30 runs): its interval (8106.338; 8147.072) is
    /// mean -/+ one stddev; the 95% interval of the mean is narrower by
    /// sqrt(30) / t(29).
    #[test]
    fn table_3_2_interval_against_the_mean_s_interval() {
        let (mean, sd): (f64, f64) = (8126.705, 20.367);
        assert!((8147.072 - mean - sd).abs() < 1e-9 && (mean - 8106.338 - sd).abs() < 1e-9);
        // 30 figures with that mean and stddev: 15 at mean - d, 15 at
        // mean + d, d = sd * sqrt(29 / 30).
        let d = sd * (29.0f64 / 30.0).sqrt();
        let xs: Vec<f64> = (0..30)
            .map(|i| if i % 2 == 0 { mean - d } else { mean + d })
            .collect();
        let s = summarise_cores(&xs);
        assert!((s.stddev - sd).abs() < 1e-9);
        let half = s.ci95.1 - s.mean;
        assert!((half - 2.045 * sd / 30f64.sqrt()).abs() < 1e-9);
        assert_eq!(
            format!("{:.3}; {:.3}", s.ci95.0, s.ci95.1),
            "8119.101; 8134.309"
        );
    }
}
