//! `--memory-per-node`: where the tasks' memory is, once a second, through
//! [`watch`](super::watch)'s looks (a `move_pages` sample of the tasks'
//! private memory and the node each worker thread last ran on), and from
//! when on the memory stayed with the tasks: the memory side of
//! convergence, which perf's CPU-side criterion leaves out ("memory
//! typically follows within a couple of seconds").

use super::outcome::{Event, MemorySeries, RunOutput, Sampler};
use super::params::Params;
use super::tasks::run_sampled;
use super::watch::{Look, Method, Watch};
use crate::results::Line;
use crate::topology::Topology;
use anyhow::Result;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::time::Duration;

/// Time between two looks.
pub(crate) const INTERVAL: Duration = Duration::from_secs(1);

/// How far (percentage points) a node's share of the memory may be from
/// its share of the tasks for the memory to count as with them.
pub(crate) const TOLERANCE_PTS: f64 = 10.0;

/// Whether each node's share of the memory `mem` (bytes per node) is within
/// `tolerance_pts` percentage points of its share of the tasks `tasks`
/// (worker threads per node). No memory or no task seen is not.
pub(crate) fn follows(
    mem: &BTreeMap<usize, u64>,
    tasks: &BTreeMap<usize, usize>,
    tolerance_pts: f64,
) -> bool {
    let m: u64 = mem.values().sum();
    let t: usize = tasks.values().sum();
    if m == 0 || t == 0 {
        return false;
    }
    let share_m = |n: &usize| mem.get(n).copied().unwrap_or(0) as f64 * 100.0 / m as f64;
    let share_t = |n: &usize| tasks.get(n).copied().unwrap_or(0) as f64 * 100.0 / t as f64;
    mem.keys()
        .chain(tasks.keys())
        .all(|n| (share_m(n) - share_t(n)).abs() <= tolerance_pts)
}

/// The time of the first look from which every look [`follows`]; `None`
/// when the last one does not (or there is none).
pub(crate) fn followed_at(looks: &[Look], tolerance_pts: f64) -> Option<f64> {
    let with = |l: &Look| follows(&l.mem, &l.threads, tolerance_pts);
    match looks.iter().rposition(|l| !with(l)) {
        None => looks.first().map(|l| l.t),
        Some(i) => looks.get(i + 1).map(|l| l.t),
    }
}

/// A line per node of `nodes`: MiB of memory there at each of `looks`.
pub(crate) fn memory_lines(nodes: &[usize], looks: &[Look]) -> Vec<Line> {
    nodes
        .iter()
        .map(|n| Line {
            label: format!("node {n}"),
            y: looks
                .iter()
                .map(|l| l.mem.get(n).copied().unwrap_or(0) as f64 / 1048576.0)
                .collect(),
        })
        .collect()
}

/// Runs `p` with a look every [`INTERVAL`]. With `-m` the stop waits, past
/// the CPU side's convergence, until a look finds the memory with the
/// tasks (or `-s` ends the run, or [`super::outcome::HOLD_MAX_S`] pass).
pub(crate) fn run_watched(
    p: &Params,
    topo: &Topology,
    on_event: &mut dyn FnMut(Event),
) -> Result<RunOutput> {
    let mut watch = Watch::new(topo, Method::default());
    let with_tasks = Cell::new(false);
    let mut out = {
        let mut look = |t: f64, pids: &[i32], intact: &dyn Fn() -> bool| {
            if let Some(l) = watch.look(t, pids, intact) {
                with_tasks.set(follows(&l.mem, &l.threads, TOLERANCE_PTS));
            }
        };
        let sampler = Sampler {
            interval: INTERVAL,
            look: &mut look,
            hold_stop: Some(&with_tasks),
        };
        run_sampled(p, topo, on_event, Some(sampler))?
    };
    let mut nodes: Vec<usize> = topo.usable_memory_nodes().iter().collect();
    for l in &watch.looks {
        nodes.extend(l.mem.keys());
    }
    nodes.sort_unstable();
    nodes.dedup();
    out.memory = Some(MemorySeries {
        nodes,
        followed_at_s: followed_at(&watch.looks, TOLERANCE_PTS),
        cpu_s: watch.cpu_s,
        method: watch.method.name(),
        dropped: watch.dropped,
        unreadable: watch.unreadable,
        fallback: watch.fallback,
        looks: watch.looks,
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn look(t: f64, mem: &[(usize, u64)], tasks: &[(usize, usize)]) -> Look {
        Look {
            t,
            mem: mem.iter().copied().collect(),
            threads: tasks.iter().copied().collect(),
            ..Default::default()
        }
    }

    #[test]
    fn memory_follows_when_its_shares_are_the_tasks_shares() {
        let f = |m: &[(usize, u64)], t: &[(usize, usize)]| {
            let l = look(0.0, m, t);
            follows(&l.mem, &l.threads, TOLERANCE_PTS)
        };
        // Two processes on two nodes, their memory still all on node 0.
        assert!(!f(&[(0, 200)], &[(0, 1), (1, 1)]));
        // Half moved: 50/50 against 1/1.
        assert!(f(&[(0, 100), (1, 100)], &[(0, 1), (1, 1)]));
        // 60/40 is 10 points off: still with them; 61/39 is not.
        assert!(f(&[(0, 60), (1, 40)], &[(0, 1), (1, 1)]));
        assert!(!f(&[(0, 61), (1, 39)], &[(0, 1), (1, 1)]));
        // Memory on a node without tasks counts against it.
        assert!(!f(&[(0, 80), (2, 20)], &[(0, 2)]));
        // Nothing seen is not convergence.
        assert!(!f(&[], &[(0, 1)]));
        assert!(!f(&[(0, 1)], &[]));
    }

    #[test]
    fn followed_from_the_first_look_that_stays() {
        let split = [(0, 1), (1, 1)];
        let looks = vec![
            look(0.0, &[(0, 200)], &split),
            look(1.0, &[(0, 100), (1, 100)], &split),
            look(2.0, &[(0, 190), (1, 10)], &split),
            look(3.0, &[(0, 110), (1, 90)], &split),
            look(4.0, &[(0, 100), (1, 100)], &split),
        ];
        // Passing through balance at 1 s does not count; from 3 s it stays.
        assert_eq!(followed_at(&looks, TOLERANCE_PTS), Some(3.0));
        assert_eq!(followed_at(&looks[..3], TOLERANCE_PTS), None);
        assert_eq!(followed_at(&looks[1..2], TOLERANCE_PTS), Some(1.0));
        assert_eq!(followed_at(&[], TOLERANCE_PTS), None);
    }
}
