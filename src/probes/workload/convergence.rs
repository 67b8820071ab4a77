//! NUMA convergence as perf defines it, from the CPU each task last
//! reported.
//!
//! A run is converged when every process is compressed onto exactly one
//! node (all its threads on CPUs of that node) and the nodes hold as many
//! process groups as there are processes (no process split across nodes).
//! This is a CPU-placement criterion; where the memory went is reported
//! separately at the end of the run.

/// Tasks and distinct processes on one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NodeLoad {
    pub node: usize,
    pub tasks: usize,
    pub processes: usize,
}

/// One look at where the tasks run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Snapshot {
    pub nodes: Vec<NodeLoad>,
    /// Tasks on the most loaded node minus tasks on the least loaded one.
    pub distance: usize,
    /// Sum over nodes of the processes present there.
    pub process_groups: usize,
    /// perf's `loops_done` (index of the last loop) over tasks seen.
    pub loops_min: u32,
    pub loops_max: u32,
    /// 1 - min/max loops, percent, when both are non-zero.
    pub skew_pct: Option<f64>,
    /// Fewest and most nodes any process's threads are spread over.
    pub compression: (usize, usize),
    /// Every process on exactly one node.
    pub strong: bool,
    pub converged: bool,
}

/// Computes a snapshot. `cpus[t]` is task t's last CPU (`None` before its
/// first loop), tasks numbered process by process; `nodes` are the nodes
/// tasks may run on; `node_of` maps a CPU to its node.
pub(crate) fn snapshot(
    cpus: &[Option<usize>],
    loops: &[u32],
    nr_proc: usize,
    nr_threads: usize,
    nodes: &[usize],
    node_of: &dyn Fn(usize) -> Option<usize>,
) -> Snapshot {
    let task_node: Vec<Option<usize>> = cpus.iter().map(|c| c.and_then(node_of)).collect();
    let mut loads: Vec<NodeLoad> = nodes
        .iter()
        .map(|&node| NodeLoad {
            node,
            tasks: 0,
            processes: 0,
        })
        .collect();
    let (mut loops_min, mut loops_max, mut seen) = (u32::MAX, 0u32, false);
    for (t, n) in task_node.iter().enumerate() {
        let Some(n) = n else { continue };
        if let Some(l) = loads.iter_mut().find(|l| l.node == *n) {
            l.tasks += 1;
        }
        let lp = loops.get(t).copied().unwrap_or(0);
        loops_min = loops_min.min(lp);
        loops_max = loops_max.max(lp);
        seen = true;
    }
    if !seen {
        loops_min = 0;
    }
    let threads_of =
        |p: usize| &task_node[p * nr_threads..((p + 1) * nr_threads).min(task_node.len())];
    for l in &mut loads {
        l.processes = (0..nr_proc)
            .filter(|&p| threads_of(p).contains(&Some(l.node)))
            .count();
    }
    let process_groups = loads.iter().map(|l| l.processes).sum();
    let max = loads.iter().map(|l| l.tasks).max().unwrap_or(0);
    let min = loads.iter().map(|l| l.tasks).min().unwrap_or(0);
    let (mut cmin, mut cmax) = (usize::MAX, 0);
    for p in 0..nr_proc {
        let mut spread: Vec<usize> = threads_of(p).iter().flatten().copied().collect();
        spread.sort_unstable();
        spread.dedup();
        cmin = cmin.min(spread.len());
        cmax = cmax.max(spread.len());
    }
    if nr_proc == 0 {
        cmin = 0;
    }
    let strong = cmin == 1 && cmax == 1;
    let skew_pct = (loops_min > 0 && loops_max > 0)
        .then(|| (1.0 - loops_min as f64 / loops_max as f64) * 100.0);
    Snapshot {
        nodes: loads,
        distance: max - min,
        process_groups,
        loops_min,
        loops_max,
        skew_pct,
        compression: (cmin, cmax),
        strong,
        converged: strong && process_groups == nr_proc,
    }
}

/// A change of state between two looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    None,
    Converged,
    Deconverged,
}

/// Remembers since when the run is converged.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Tracker {
    pub since_s: Option<f64>,
    /// Every change, with the run time it was seen at.
    pub events: Vec<(f64, Change)>,
}

impl Tracker {
    pub(crate) fn update(&mut self, converged: bool, t: f64) -> Change {
        let change = match (converged, self.since_s) {
            (true, None) => {
                self.since_s = Some(t);
                Change::Converged
            }
            (false, Some(_)) => {
                self.since_s = None;
                Change::Deconverged
            }
            _ => Change::None,
        };
        if change != Change::None {
            self.events.push((t, change));
        }
        change
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CPUs 0-3 on node 0, 4-7 on node 1.
    fn node_of(cpu: usize) -> Option<usize> {
        Some(cpu / 4)
    }

    #[test]
    fn two_processes_one_per_node_converge() {
        let s = snapshot(
            &[Some(0), Some(1), Some(4), Some(5)],
            &[3, 4, 4, 4],
            2,
            2,
            &[0, 1],
            &node_of,
        );
        assert!(s.strong && s.converged);
        assert_eq!(s.process_groups, 2);
        assert_eq!(s.distance, 0);
        assert_eq!((s.loops_min, s.loops_max), (3, 4));
        assert_eq!(s.skew_pct, Some(25.0));
        assert_eq!(
            s.nodes[1],
            NodeLoad {
                node: 1,
                tasks: 2,
                processes: 1
            }
        );
    }

    #[test]
    fn a_split_process_is_not_converged() {
        let s = snapshot(
            &[Some(0), Some(4), Some(5), Some(6)],
            &[1, 1, 1, 1],
            2,
            2,
            &[0, 1],
            &node_of,
        );
        assert!(!s.strong && !s.converged);
        assert_eq!(s.compression, (1, 2));
        assert_eq!(s.process_groups, 3);
        assert_eq!(s.distance, 2);
    }

    #[test]
    fn two_processes_sharing_a_node_are_converged_too() {
        // perf's definition: each process on one node and groups == processes.
        let s = snapshot(&[Some(0), Some(1)], &[1, 1], 2, 1, &[0, 1], &node_of);
        assert!(s.converged);
        assert_eq!(s.distance, 2);
    }

    #[test]
    fn tasks_not_seen_yet_are_left_out() {
        let s = snapshot(&[None, Some(0)], &[0, 5], 1, 2, &[0, 1], &node_of);
        assert_eq!(s.nodes[0].tasks, 1);
        assert!(s.converged);
        assert_eq!(s.skew_pct, Some(0.0));
        let none = snapshot(&[None, None], &[0, 0], 1, 2, &[0], &node_of);
        assert!(!none.converged);
        assert_eq!(none.compression, (0, 0));
    }

    #[test]
    fn tracker_reports_converged_then_deconverged() {
        let mut t = Tracker::default();
        assert_eq!(t.update(false, 1.0), Change::None);
        assert_eq!(t.update(true, 2.0), Change::Converged);
        assert_eq!(t.update(true, 3.0), Change::None);
        assert_eq!(t.since_s, Some(2.0));
        assert_eq!(t.update(false, 4.0), Change::Deconverged);
        assert_eq!(t.since_s, None);
        assert_eq!(
            t.events,
            [(2.0, Change::Converged), (4.0, Change::Deconverged)]
        );
    }
}
