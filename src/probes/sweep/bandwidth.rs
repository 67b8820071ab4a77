//! The bandwidth rows of one sweep size: every operation asked for, at
//! every thread count, the best count kept per operation. One team per
//! (thread count, page kind) runs them all, so a size's memory is mapped
//! and faulted in once rather than once per operation: at the sizes past
//! the L3 the faults cost more than the measurement.

use super::{SweepConfig, SweepRow};
use crate::kernels::{self, KernelSpec, Op, Store};
use crate::memory::PageKind;
use crate::probes::measure::{self, Bandwidth, Timing};
use crate::probes::seats;
use crate::stats;
use crate::topology::Topology;
use anyhow::{Context, Result};

/// Smallest buffer (all of a thread's arrays together) that `huge` gives
/// huge pages; smaller ones stay on base pages.
pub(crate) const HUGE_FROM: usize = 4 << 20;

/// The pages of a thread's `bytes` (all its arrays).
pub(super) fn pages_for(cfg: &SweepConfig, bytes: usize) -> PageKind {
    if cfg.huge && bytes >= HUGE_FROM {
        PageKind::Auto
    } else {
        PageKind::Base
    }
}

/// The best row of each of `ops` at `size` over the thread `counts`, in
/// the order of `ops`. `go_on(op)` is asked before each measurement; at
/// the first `false` nothing more is measured, and an operation not
/// measured at every count has no row, since the best of some counts is
/// not the best.
pub(super) fn rows(
    topo: &Topology,
    size: usize,
    ops: &[Op],
    counts: &[usize],
    cfg: &SweepConfig,
    go_on: &mut dyn FnMut(Op) -> bool,
) -> Result<Vec<Option<SweepRow>>> {
    let kernels = ops
        .iter()
        .map(|&op| pick_kernel(cfg, op))
        .collect::<Result<Vec<_>>>()?;
    let pages: Vec<PageKind> = kernels
        .iter()
        .map(|k| pages_for(cfg, size * k.op.arrays()))
        .collect();
    let mut kinds: Vec<PageKind> = Vec::new();
    for p in &pages {
        if !kinds.contains(p) {
            kinds.push(*p);
        }
    }
    let timing = Timing {
        tries: cfg.tries,
        min_run: cfg.min_run,
    };
    let mut made: Vec<Vec<SweepRow>> = vec![Vec::new(); ops.len()];
    'counts: for &n in counts {
        let seats = seats::place(topo, n, cfg.placing);
        for &kind in &kinds {
            let which: Vec<usize> = (0..ops.len()).filter(|&i| pages[i] == kind).collect();
            let runs: Vec<_> = which.iter().map(|&i| (kernels[i], size)).collect();
            let measured =
                measure::bandwidths_split(&seats, &runs, (kind, timing), &[], &mut |j| {
                    go_on(ops[which[j]])
                })?;
            let stopped = measured.len() < runs.len();
            for (&i, m) in which.iter().zip(measured) {
                made[i].push(row(size, &m));
            }
            if stopped {
                break 'counts;
            }
        }
    }
    Ok(made
        .into_iter()
        .map(|rows| {
            if rows.len() < counts.len() {
                return None;
            }
            rows.into_iter().reduce(|a, b| {
                if b.bandwidth_mb_s > a.bandwidth_mb_s {
                    b
                } else {
                    a
                }
            })
        })
        .collect())
}

fn pick_kernel(cfg: &SweepConfig, op: Op) -> Result<&'static KernelSpec> {
    if let Some(k) = cfg.variants.iter().find(|k| k.op == op) {
        return Ok(k);
    }
    kernels::best(op, Store::Regular).with_context(|| format!("no kernel for {op} on this CPU"))
}

fn row(size: usize, m: &Bandwidth) -> SweepRow {
    let samples = m.lm_samples();
    SweepRow {
        size_kb: (size / 1024) as u64,
        operation: m.kernel.op.to_string(),
        bandwidth_mb_s: m.lm_mb_s(),
        latency_ns: 0.0,
        latency_stddev_ns: 0.0,
        latency_samples: 0,
        threads: m.threads,
        iterations: m.iterations,
        elapsed_s: m.elapsed_s,
        variant: m.kernel.name.to_string(),
        bytes_per_element: m.kernel.op.stream_bytes_per_element(),
        stream_bandwidth_mb_s: m.stream_mb_s(),
        placement_verified_pct: m.seen.verified_pct,
        huge_pct: m.seen.huge_pct,
        cv_pct: stats::cv_pct(&samples),
        samples,
        cpus_seen: m.seen.cpus_seen.clone(),
        pages_by_node: m.seen.pages_by_node.clone(),
        page_kind: m.seen.page_kind.clone(),
        pattern: None,
        notes: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn quick() -> SweepConfig {
        SweepConfig {
            tries: 1,
            min_run: Duration::from_millis(1),
            ..SweepConfig::default()
        }
    }

    #[test]
    fn every_operation_gets_its_row_in_the_order_asked_and_a_stop_leaves_the_rest_out() {
        let topo = crate::topology::read_topology(&crate::topology::SysfsRoot::live()).unwrap();
        let ops = [Op::Copy, Op::Read, Op::Triad];
        let mut asked = Vec::new();
        let out = rows(&topo, 1 << 20, &ops, &[1], &quick(), &mut |op| {
            asked.push(op);
            true
        })
        .unwrap();
        assert_eq!(asked, ops);
        let names: Vec<String> = out.iter().flatten().map(|r| r.operation.clone()).collect();
        assert_eq!(names, ["copy", "read", "triad"]);
        assert!(
            out.iter()
                .flatten()
                .all(|r| r.size_kb == 1024 && r.bandwidth_mb_s > 0.0)
        );
        // A stop before the second operation: the first keeps its row.
        let out = rows(&topo, 1 << 20, &ops, &[1], &quick(), &mut |op| {
            op == Op::Copy
        })
        .unwrap();
        assert_eq!(out.len(), 3);
        assert!(out[0].is_some() && out[1].is_none() && out[2].is_none());
    }

    #[test]
    fn huge_pages_start_at_4_mib_of_a_threads_arrays() {
        let cfg = SweepConfig {
            huge: true,
            ..SweepConfig::default()
        };
        assert_eq!(pages_for(&cfg, HUGE_FROM - 4096), PageKind::Base);
        assert_eq!(pages_for(&cfg, HUGE_FROM), PageKind::Auto);
        assert_eq!(pages_for(&SweepConfig::default(), 1 << 30), PageKind::Base);
    }
}
