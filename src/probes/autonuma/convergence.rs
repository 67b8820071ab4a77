//! When a test's memory has converged: every node whose CPUs the test may
//! use holds its share of the memory (the total over the number of such
//! nodes), within a tolerance, from some look to the end of the run.
//!
//! The benchmark's charts call a workload converged when the memory levels
//! of the nodes are equal; a tolerance turns that into a moment. "Until the
//! end" keeps a run that passes through balance on its way elsewhere (or
//! flips back) from counting as converged early.

use std::collections::BTreeMap;

/// Whether `mem` (bytes per node) gives each node of `cpu_nodes` its share
/// of the total within `tolerance_pct` percent of that share. Memory on
/// other nodes counts in the total, so it pulls the shares down. No memory
/// at all is not balanced.
pub(crate) fn balanced(
    mem: &BTreeMap<usize, u64>,
    cpu_nodes: &[usize],
    tolerance_pct: f64,
) -> bool {
    let total: u64 = mem.values().sum();
    if total == 0 || cpu_nodes.is_empty() {
        return false;
    }
    let share = total as f64 / cpu_nodes.len() as f64;
    let slack = share * tolerance_pct / 100.0;
    cpu_nodes.iter().all(|n| {
        let held = mem.get(n).copied().unwrap_or(0) as f64;
        (held - share).abs() <= slack
    })
}

/// The time of the first look from which every look is [`balanced`];
/// `None` when the last one is not (or there are none). `looks` are
/// (seconds, bytes per node) in time order.
pub(crate) fn convergence_time(
    looks: &[(f64, &BTreeMap<usize, u64>)],
    cpu_nodes: &[usize],
    tolerance_pct: f64,
) -> Option<f64> {
    let unbalanced_after = looks
        .iter()
        .rposition(|(_, mem)| !balanced(mem, cpu_nodes, tolerance_pct));
    match unbalanced_after {
        None => looks.first().map(|(t, _)| *t),
        Some(i) => looks.get(i + 1).map(|(t, _)| *t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mem(pairs: &[(usize, u64)]) -> BTreeMap<usize, u64> {
        pairs.iter().copied().collect()
    }

    /// Looks half a second apart from two-node (node 0, node 1) figures.
    fn run(series: &[(u64, u64)]) -> Vec<(f64, BTreeMap<usize, u64>)> {
        series
            .iter()
            .enumerate()
            .map(|(i, &(a, b))| (i as f64 * 0.5, mem(&[(0, a), (1, b)])))
            .collect()
    }

    fn conv(looks: &[(f64, BTreeMap<usize, u64>)], tol: f64) -> Option<f64> {
        let refs: Vec<(f64, &BTreeMap<usize, u64>)> = looks.iter().map(|(t, m)| (*t, m)).collect();
        convergence_time(&refs, &[0, 1], tol)
    }

    #[test]
    fn balance_is_the_share_within_the_tolerance() {
        let nodes = [0, 1];
        // Shares of 50: 45..=55 pass at 10%.
        assert!(balanced(&mem(&[(0, 55), (1, 45)]), &nodes, 10.0));
        assert!(!balanced(&mem(&[(0, 56), (1, 44)]), &nodes, 10.0));
        assert!(balanced(&mem(&[(0, 56), (1, 44)]), &nodes, 20.0));
        // Memory on a node without CPUs lowers both shares' holders.
        assert!(!balanced(&mem(&[(0, 40), (1, 40), (2, 20)]), &nodes, 10.0));
        // A node of the set with nothing on it.
        assert!(!balanced(&mem(&[(0, 100)]), &nodes, 10.0));
        assert!(!balanced(&mem(&[]), &nodes, 10.0));
        // One node: all of it is its share.
        assert!(balanced(&mem(&[(0, 100)]), &[0], 10.0));
    }

    #[test]
    fn a_run_that_converges_gives_the_first_balanced_look() {
        let looks = run(&[(100, 0), (80, 20), (60, 40), (52, 48), (50, 50), (50, 50)]);
        assert_eq!(conv(&looks, 10.0), Some(1.5));
        // A tighter tolerance converges later.
        assert_eq!(conv(&looks, 5.0), Some(1.5));
        assert_eq!(conv(&looks, 1.0), Some(2.0));
    }

    #[test]
    fn a_run_that_deconverges_counts_only_the_last_stretch() {
        // Balanced at 1.0 s, thrown off at 1.5 s, balanced again from 2.5 s.
        let looks = run(&[
            (100, 0),
            (70, 30),
            (50, 50),
            (80, 20),
            (60, 40),
            (51, 49),
            (50, 50),
        ]);
        assert_eq!(conv(&looks, 10.0), Some(2.5));
        // Balanced in the middle but not at the end: never converged.
        let looks = run(&[(100, 0), (50, 50), (50, 50), (100, 0)]);
        assert_eq!(conv(&looks, 10.0), None);
    }

    #[test]
    fn a_run_that_never_converges_has_no_time() {
        let looks = run(&[(100, 0), (100, 0), (99, 1)]);
        assert_eq!(conv(&looks, 10.0), None);
        assert_eq!(conv(&[], 10.0), None);
    }

    #[test]
    fn a_single_node_is_converged_from_the_first_look() {
        let looks: Vec<(f64, BTreeMap<usize, u64>)> =
            (0..4).map(|i| (i as f64, mem(&[(0, 1000)]))).collect();
        let refs: Vec<(f64, &BTreeMap<usize, u64>)> = looks.iter().map(|(t, m)| (*t, m)).collect();
        assert_eq!(convergence_time(&refs, &[0], 10.0), Some(0.0));
    }
}
