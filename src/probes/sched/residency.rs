//! Where a task spent its CPU time, from successive looks at its `stat`
//! line: the CPU time added since the previous look is put on the node of
//! the CPU the task was seen on now (the CPU it ran on last), then the
//! per-node shares, the node it spent most time on and the table's marks.
//!
//! Pure arithmetic: nothing here reads the system.

use std::collections::{BTreeMap, BTreeSet};

/// One look at a task: its CPU and cumulative CPU time in clock ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Look {
    pub cpu: usize,
    pub user_ticks: u64,
    pub system_ticks: u64,
    /// In state `R` (running or waiting for a CPU) when looked at.
    pub runnable: bool,
}

/// A task's CPU time per node, accumulated look by look.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Residency {
    pub user_ticks: BTreeMap<usize, u64>,
    pub system_ticks: BTreeMap<usize, u64>,
    /// Looks that found the task runnable, per node.
    pub runnable_looks: BTreeMap<usize, u64>,
    /// Ticks seen on CPUs that belong to no known node.
    pub unplaced_ticks: u64,
    pub cpus_seen: BTreeSet<usize>,
    /// The cumulative figures of the previous look.
    last: (u64, u64),
}

impl Residency {
    /// Adds one look; `node` is the node of `look.cpu`, if known.
    pub(crate) fn add(&mut self, look: Look, node: Option<usize>) {
        let du = look.user_ticks.saturating_sub(self.last.0);
        let ds = look.system_ticks.saturating_sub(self.last.1);
        // The kernel's figures never go back; a smaller one is kept out of
        // the next difference so that nothing is counted twice.
        self.last = (
            self.last.0.max(look.user_ticks),
            self.last.1.max(look.system_ticks),
        );
        self.cpus_seen.insert(look.cpu);
        match node {
            Some(n) => {
                if du > 0 {
                    *self.user_ticks.entry(n).or_default() += du;
                }
                if ds > 0 {
                    *self.system_ticks.entry(n).or_default() += ds;
                }
                if look.runnable {
                    *self.runnable_looks.entry(n).or_default() += 1;
                }
            }
            None => self.unplaced_ticks += du + ds,
        }
    }

    /// The cumulative user and system ticks of the latest look.
    pub(crate) fn last_ticks(&self) -> (u64, u64) {
        self.last
    }

    /// User plus system ticks counted so far.
    #[cfg(test)]
    pub(crate) fn total_ticks(&self) -> u64 {
        self.user_ticks.values().sum::<u64>()
            + self.system_ticks.values().sum::<u64>()
            + self.unplaced_ticks
    }

    /// The share of the task's time on each of `nodes` (percent, in that
    /// order) and what it was computed from. User time first, as the
    /// original benchmark; a task too short to accrue a user tick falls
    /// back to all CPU time, then to the looks that found it runnable, then
    /// to the node it started on.
    pub(crate) fn shares(&self, nodes: &[usize], start_node: Option<usize>) -> Shares {
        let both: BTreeMap<usize, u64> = self
            .user_ticks
            .keys()
            .chain(self.system_ticks.keys())
            .map(|&n| {
                let t = self.user_ticks.get(&n).copied().unwrap_or(0)
                    + self.system_ticks.get(&n).copied().unwrap_or(0);
                (n, t)
            })
            .collect();
        let from_start = start_node.map(|n| BTreeMap::from([(n, 1u64)]));
        let candidates = [
            (Basis::UserTime, Some(self.user_ticks.clone()), 0),
            (Basis::CpuTime, Some(both), self.unplaced_ticks),
            (Basis::Runnable, Some(self.runnable_looks.clone()), 0),
            (Basis::StartNode, from_start, 0),
        ];
        for (basis, counts, unplaced) in candidates {
            let Some(counts) = counts else { continue };
            let total: u64 = counts.values().sum::<u64>() + unplaced;
            if total == 0 {
                continue;
            }
            let pct = nodes
                .iter()
                .map(|n| counts.get(n).copied().unwrap_or(0) as f64 * 100.0 / total as f64)
                .collect();
            return Shares { pct, basis };
        }
        Shares {
            pct: vec![0.0; nodes.len()],
            basis: Basis::Nothing,
        }
    }
}

/// What the shares were computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Basis {
    /// User-time ticks per node (the usual case).
    UserTime,
    /// User and system ticks: the task accrued no user tick.
    CpuTime,
    /// Looks that found it runnable: it accrued no tick at all.
    Runnable,
    /// Only where it started: it ended before the first look.
    StartNode,
    Nothing,
}

impl Basis {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Basis::UserTime => "user time",
            Basis::CpuTime => "cpu time",
            Basis::Runnable => "runnable looks",
            Basis::StartNode => "start node",
            Basis::Nothing => "nothing",
        }
    }
}

/// A task's time per node in percent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Shares {
    pub pct: Vec<f64>,
    pub basis: Basis,
}

/// The node with the largest share (MSched); the lowest id on a tie, as
/// the original report's strict `>` scan; `None` when every share is 0.
pub(crate) fn most_time_node(nodes: &[usize], pct: &[f64]) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (&n, &p) in nodes.iter().zip(pct) {
        if p > best.map_or(0.0, |b| b.1) {
            best = Some((n, p));
        }
    }
    best.map(|b| b.0)
}

/// The node holding most of the pages; the lowest id on a tie; `None`
/// without pages.
pub(crate) fn majority_node(pages: &BTreeMap<usize, u64>) -> Option<usize> {
    let mut best: Option<(usize, u64)> = None;
    for (&n, &c) in pages {
        if c > best.map_or(0, |b| b.1) {
            best = Some((n, c));
        }
    }
    best.map(|b| b.0)
}

/// The marks of a task's row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Marks {
    /// `*`: most of its time on another node than the one it started on.
    pub moved: bool,
    /// `!`: most of its time away from the node holding most of its memory.
    pub away_from_memory: bool,
}

/// A mark needs both nodes known: an unknown one proves nothing.
pub(crate) fn marks(start: Option<usize>, most: Option<usize>, memory: Option<usize>) -> Marks {
    let differ =
        |a: Option<usize>, b: Option<usize>| matches!((a, b), (Some(x), Some(y)) if x != y);
    Marks {
        moved: differ(start, most),
        away_from_memory: differ(most, memory),
    }
}

/// `(time, tasks runnable per node)` looks averaged into at most `max`
/// points of equal duration, so a long run's series stays small.
pub(crate) fn downsample(points: &[(f64, Vec<f64>)], max: usize) -> Vec<(f64, Vec<f64>)> {
    let max = max.max(1);
    if points.len() <= max {
        return points.to_vec();
    }
    let per = points.len().div_ceil(max);
    points
        .chunks(per)
        .map(|c| {
            let n = c.len() as f64;
            let t = c.iter().map(|p| p.0).sum::<f64>() / n;
            let width = c.iter().map(|p| p.1.len()).max().unwrap_or(0);
            let y = (0..width)
                .map(|i| {
                    c.iter()
                        .map(|p| p.1.get(i).copied().unwrap_or(0.0))
                        .sum::<f64>()
                        / n
                })
                .collect();
            (t, y)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn look(cpu: usize, user: u64, system: u64) -> Look {
        Look {
            cpu,
            user_ticks: user,
            system_ticks: system,
            runnable: true,
        }
    }

    /// CPUs 0-1 on node 0, 2-3 on node 1.
    fn node(cpu: usize) -> Option<usize> {
        (cpu < 4).then_some(cpu / 2)
    }

    fn residency(looks: &[Look]) -> Residency {
        let mut r = Residency::default();
        for l in looks {
            r.add(*l, node(l.cpu));
        }
        r
    }

    #[test]
    fn each_increase_goes_to_the_node_seen_at_the_end_of_its_interval() {
        // 3 ticks before the first look (on node 0), 1 more there, then 6 on
        // node 1, and a look with no increase that must add nothing.
        let r = residency(&[
            look(1, 3, 0),
            look(0, 4, 1),
            look(2, 7, 1),
            look(3, 10, 1),
            look(1, 10, 1),
        ]);
        assert_eq!(r.user_ticks, BTreeMap::from([(0, 4), (1, 6)]));
        assert_eq!(r.system_ticks, BTreeMap::from([(0, 1)]));
        assert_eq!(r.total_ticks(), 11);
        assert_eq!(r.last_ticks(), (10, 1));
        assert_eq!(r.cpus_seen, BTreeSet::from([0, 1, 2, 3]));
        let s = r.shares(&[0, 1], Some(0));
        assert_eq!(s.basis, Basis::UserTime);
        assert_eq!(s.pct, vec![40.0, 60.0]);
        assert_eq!(most_time_node(&[0, 1], &s.pct), Some(1));
    }

    #[test]
    fn a_counter_that_goes_back_is_not_counted_twice() {
        let r = residency(&[look(0, 5, 0), look(0, 4, 0), look(2, 6, 0)]);
        assert_eq!(r.user_ticks, BTreeMap::from([(0, 5), (1, 1)]));
    }

    #[test]
    fn shares_sum_to_100_and_keep_the_column_order() {
        let r = residency(&[look(2, 1, 0), look(0, 2, 0), look(0, 3, 0)]);
        let s = r.shares(&[1, 0], None);
        assert_eq!(s.pct, vec![100.0 / 3.0, 200.0 / 3.0]);
        assert!((s.pct.iter().sum::<f64>() - 100.0).abs() < 1e-9);
        // A node without time still gets its column.
        let s = r.shares(&[0, 1, 7], None);
        assert_eq!(s.pct.len(), 3);
        assert_eq!(s.pct[2], 0.0);
    }

    #[test]
    fn time_on_an_unknown_cpu_lowers_the_known_shares() {
        let mut r = residency(&[look(0, 0, 2)]);
        r.add(look(99, 0, 6), None);
        assert_eq!(r.unplaced_ticks, 4);
        let s = r.shares(&[0, 1], None);
        assert_eq!(s.basis, Basis::CpuTime);
        assert!((s.pct[0] - 100.0 / 3.0).abs() < 1e-9, "{:?}", s.pct);
    }

    #[test]
    fn short_tasks_fall_back_step_by_step() {
        // System ticks only.
        let r = residency(&[look(2, 0, 1)]);
        let s = r.shares(&[0, 1], Some(0));
        assert_eq!((s.basis, s.pct.clone()), (Basis::CpuTime, vec![0.0, 100.0]));
        // No tick: the looks that found it runnable.
        let r = residency(&[look(0, 0, 0), look(2, 0, 0), look(3, 0, 0)]);
        let s = r.shares(&[0, 1], Some(0));
        assert_eq!(s.basis, Basis::Runnable);
        assert!((s.pct[1] - 200.0 / 3.0).abs() < 1e-9);
        // Never looked at: where it started.
        let s = Residency::default().shares(&[0, 1], Some(1));
        assert_eq!((s.basis, s.pct), (Basis::StartNode, vec![0.0, 100.0]));
        let s = Residency::default().shares(&[0, 1], None);
        assert_eq!((s.basis, s.pct), (Basis::Nothing, vec![0.0, 0.0]));
    }

    #[test]
    fn most_time_node_takes_the_lowest_id_on_a_tie_and_none_for_nothing() {
        assert_eq!(most_time_node(&[0, 1, 2], &[25.0, 50.0, 25.0]), Some(1));
        assert_eq!(most_time_node(&[3, 5], &[50.0, 50.0]), Some(3));
        assert_eq!(most_time_node(&[0, 1], &[0.0, 0.0]), None);
        assert_eq!(majority_node(&BTreeMap::from([(0, 10), (1, 30)])), Some(1));
        assert_eq!(majority_node(&BTreeMap::from([(2, 5), (4, 5)])), Some(2));
        assert_eq!(majority_node(&BTreeMap::new()), None);
    }

    #[test]
    fn marks_compare_start_most_and_memory() {
        let m = marks(Some(0), Some(1), Some(0));
        assert!(m.moved && m.away_from_memory);
        let m = marks(Some(0), Some(0), Some(0));
        assert_eq!(m, Marks::default());
        // Moved to where its memory is: only '*'.
        let m = marks(Some(1), Some(0), Some(0));
        assert!(m.moved && !m.away_from_memory);
        // Unknown memory node: no '!'.
        let m = marks(Some(0), Some(1), None);
        assert!(m.moved && !m.away_from_memory);
        assert_eq!(marks(None, None, None), Marks::default());
    }

    #[test]
    fn downsampling_averages_equal_chunks() {
        let pts: Vec<(f64, Vec<f64>)> = (0..10).map(|i| (i as f64, vec![i as f64, 1.0])).collect();
        assert_eq!(downsample(&pts, 20), pts);
        let d = downsample(&pts, 5);
        assert_eq!(d.len(), 5);
        assert_eq!(d[0], (0.5, vec![0.5, 1.0]));
        assert_eq!(d[4], (8.5, vec![8.5, 1.0]));
        let d = downsample(&pts, 3);
        assert_eq!(d.len(), 3);
        assert_eq!(d[2], (8.5, vec![8.5, 1.0]));
    }
}
