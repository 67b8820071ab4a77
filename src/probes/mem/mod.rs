//! `numabench mem`: perf's `perf bench numa mem` (2012) on the workload
//! engine ([`workload`](super::workload)): processes and threads working
//! on global, per-process and per-thread memory with perf's access
//! patterns, NUMA convergence tracking, and perf's nine result metrics,
//! plus where the memory really went and what NUMA balancing did
//! meanwhile; its suite of perf's tests, records, text and view.

mod part;
pub(crate) mod records;
pub(crate) mod session;
pub(crate) mod suite;
pub(crate) mod text;
pub(crate) mod view;

pub(crate) use view::MemView;

use super::workload::outcome::RunOutput;
use super::workload::params::Params;

/// perf's result figures (its `__bench_numa` epilogue).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Summary {
    /// With `-m`: the run time until convergence (perf reports the run's
    /// max runtime; a run that never converged shows its full length; with
    /// `--memory-per-node` the CPU side's convergence time).
    pub convergence_latency_s: Option<f64>,
    pub runtime_max_s: f64,
    pub runtime_min_s: f64,
    pub runtime_avg_s: f64,
    /// Half the max-min runtime difference, as percent of the max.
    pub spread_pct: f64,
    /// 10^9 bytes processed per task.
    pub data_per_thread_gb: f64,
    pub data_total_gb: f64,
    pub runtime_per_byte_ns: f64,
    pub thread_speed_gb_s: f64,
    pub total_speed_gb_s: f64,
}

impl Summary {
    pub(crate) fn of(p: &Params, out: &RunOutput) -> Summary {
        let tasks = p.nr_tasks.max(1) as f64;
        let max = out.runtime_max_s;
        let min = out.task_runtime_ns.iter().copied().min().unwrap_or(0) as f64 / 1e9;
        let sum: u64 = out.task_runtime_ns.iter().sum();
        let avg = sum as f64 / tasks / 1e9;
        let bytes: f64 = out.task_bytes.iter().map(|&b| b as f64).sum();
        // perf reports the run's length, which -m ends at convergence; a
        // stop held for the memory side ran on, so the CPU side's own time
        // is the latency then.
        let latency = if out.stop_held {
            out.tracker.since_s.unwrap_or(max)
        } else {
            max
        };
        Summary {
            convergence_latency_s: p.measure_convergence.then_some(latency),
            runtime_max_s: max,
            runtime_min_s: min,
            runtime_avg_s: avg,
            spread_pct: (max - min) / 2.0 / max * 100.0,
            data_per_thread_gb: bytes / tasks / 1e9,
            data_total_gb: bytes / 1e9,
            runtime_per_byte_ns: max * 1e9 / (bytes / tasks),
            thread_speed_gb_s: bytes / tasks / 1e9 / max,
            total_speed_gb_s: bytes / max / 1e9,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::workload::params::{RawOptions, resolve};

    #[test]
    fn summary_uses_perfs_formulas() {
        let raw = RawOptions {
            nr_proc: Some(2),
            nr_threads: Some(1),
            mb_proc: Some("1".into()),
            measure_convergence: true,
            ..RawOptions::seed_defaults()
        };
        let p = resolve(&raw, &crate::topology::fixture("two-node")).unwrap();
        let out = RunOutput {
            runtime_max_s: 10.0,
            task_runtime_ns: vec![8_000_000_000, 9_000_000_000],
            task_bytes: vec![30_000_000_000, 10_000_000_000],
            ..Default::default()
        };
        let s = Summary::of(&p, &out);
        assert_eq!(s.convergence_latency_s, Some(10.0));
        assert_eq!(s.runtime_min_s, 8.0);
        assert_eq!(s.runtime_avg_s, 8.5);
        assert!((s.spread_pct - 10.0).abs() < 1e-9);
        assert_eq!(s.data_total_gb, 40.0);
        assert_eq!(s.data_per_thread_gb, 20.0);
        assert!((s.runtime_per_byte_ns - 0.5).abs() < 1e-12);
        assert_eq!(s.thread_speed_gb_s, 2.0);
        assert_eq!(s.total_speed_gb_s, 4.0);
    }
}
