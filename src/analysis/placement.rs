//! The data-access model applied to a measured atlas: bandwidth classes per
//! CPU node and system-wide, their alpha values against the peak Gamma,
//! where the firmware's distances disagree with the measured classes, and
//! predictions for a process's pages.

use super::atlas::Atlas;
use super::classes::{Classes, classify};
use super::model::{self, Peak, PeakSource};
use crate::topology::Topology;
use std::collections::BTreeMap;

/// Classes seen from one CPU node (a class only means something from where
/// the task runs).
#[derive(Debug, Clone)]
pub(crate) struct RowClasses {
    pub cpu_node: usize,
    /// Memory nodes in the order of the values classified.
    pub mem_nodes: Vec<usize>,
    pub classes: Classes,
}

impl RowClasses {
    /// The class of memory node `m` from this row, 0 = fastest.
    pub(crate) fn class_of(&self, m: usize) -> Option<usize> {
        let i = self.mem_nodes.iter().position(|&n| n == m)?;
        self.classes.assignment.get(i).copied().flatten()
    }

    /// Memory nodes in class `k`.
    pub(crate) fn members(&self, k: usize) -> Vec<usize> {
        self.mem_nodes
            .iter()
            .filter(|&&m| self.class_of(m) == Some(k))
            .copied()
            .collect()
    }
}

pub(crate) fn row_classes(a: &Atlas, cpu_node: usize) -> RowClasses {
    let row = a.single.row(cpu_node);
    let values: Vec<f64> = row.iter().map(|r| r.1).collect();
    RowClasses {
        cpu_node,
        mem_nodes: row.iter().map(|r| r.0).collect(),
        classes: classify(&values, &a.class_options),
    }
}

/// Classes over every cell of the single-thread matrix.
pub(crate) fn system_classes(a: &Atlas) -> (Vec<(usize, usize)>, Classes) {
    let cells: Vec<((usize, usize), f64)> = a.single.values.iter().map(|(k, v)| (*k, *v)).collect();
    let values: Vec<f64> = cells.iter().map(|c| c.1).collect();
    (
        cells.iter().map(|c| c.0).collect(),
        classify(&values, &a.class_options),
    )
}

/// Gamma: the user's figure, else the one recorded with the measurement
/// (from DMI), else the best measured bandwidth.
pub(crate) fn peak(a: &Atlas, given: Option<f64>, recorded: Option<Peak>) -> Option<Peak> {
    if let Some(mb_s) = given {
        return Some(Peak {
            mb_s,
            source: PeakSource::Given,
        });
    }
    if recorded.is_some() {
        return recorded;
    }
    // The best cell, normally a local one; taking the best of all keeps
    // every alpha at or under 1 where a remote cell measured higher.
    // Only a positive figure can be a bandwidth (a damaged file may hold
    // a negative or zero one); with none, Gamma is unknown.
    let best = a
        .single
        .values
        .values()
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0)
        .reduce(f64::max)?;
    Some(Peak {
        mb_s: best,
        source: PeakSource::MeasuredLocal,
    })
}

/// Where the firmware's SLIT ranks two memory nodes differently from the
/// measured bandwidth classes of one row: equal distances in different
/// classes, or the nearer node in the slower class.
pub(crate) fn slit_disagreements(topo: &Topology, rc: &RowClasses) -> Vec<String> {
    let c = rc.cpu_node;
    rank_disagreements(rc, "SLIT distance", |m| {
        topo.distance(c, m).map(|d| -f64::from(d))
    })
}

/// The same check against HMAT read bandwidth, where the firmware
/// publishes it for this row's node.
pub(crate) fn hmat_disagreements(topo: &Topology, rc: &RowClasses) -> Vec<String> {
    let c = rc.cpu_node;
    rank_disagreements(rc, "HMAT read bandwidth", |m| {
        let h = topo.node(m)?.hmat.as_ref()?;
        h.initiators
            .contains(c)
            .then_some(h.read_bandwidth_mb_s? as f64)
    })
}

/// Pairs of memory nodes whose firmware figure (`score`, higher = better)
/// disagrees with their measured classes from this row.
fn rank_disagreements(
    rc: &RowClasses,
    what: &str,
    score: impl Fn(usize) -> Option<f64>,
) -> Vec<String> {
    let c = rc.cpu_node;
    let show = |v: f64| format!("{:.0}", v.abs());
    let mut out = Vec::new();
    for (i, &m1) in rc.mem_nodes.iter().enumerate() {
        for &m2 in &rc.mem_nodes[i + 1..] {
            let (Some(s1), Some(s2)) = (score(m1), score(m2)) else {
                continue;
            };
            let (Some(k1), Some(k2)) = (rc.class_of(m1), rc.class_of(m2)) else {
                continue;
            };
            if s1 == s2 && k1 != k2 {
                out.push(format!(
                    "from node {c}: {what} is the same for nodes {m1} and {m2} ({}) but they are in bandwidth classes {k1} and {k2}",
                    show(s1)
                ));
            } else if (s1 > s2 && k1 > k2) || (s2 > s1 && k2 > k1) {
                let (better, worse, sb, sw, kb, kw) = if s1 > s2 {
                    (m1, m2, s1, s2, k1, k2)
                } else {
                    (m2, m1, s2, s1, k2, k1)
                };
                out.push(format!(
                    "from node {c}: {what} ranks node {better} ahead of node {worse} ({} vs {}) but node {better} is in the slower class ({kb} vs {kw})",
                    show(sb),
                    show(sw)
                ));
            }
        }
    }
    out
}

/// Predicted D for running a process on each CPU node, given how many
/// bytes it has on each memory node: theta per node = its share of the
/// bytes, alpha per node = alpha of the node's class from that row.
/// Bytes on nodes the atlas did not measure are reported, not guessed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Prediction {
    pub cpu_node: usize,
    pub d: f64,
    /// Predicted bandwidth, D x Gamma, MB/s.
    pub mb_s: f64,
}

pub(crate) fn predict_for_pages(
    a: &Atlas,
    bytes_by_node: &BTreeMap<usize, u64>,
    gamma: &Peak,
) -> (Vec<Prediction>, Vec<usize>) {
    let total: u64 = bytes_by_node.values().sum();
    let unknown: Vec<usize> = bytes_by_node
        .keys()
        .filter(|m| !a.mem_nodes.contains(m))
        .copied()
        .collect();
    let mut out = Vec::new();
    if total == 0 {
        return (out, unknown);
    }
    for &c in &a.cpu_nodes {
        let rc = row_classes(a, c);
        let mut d = 0.0;
        for (&m, &bytes) in bytes_by_node {
            let Some(k) = rc.class_of(m) else { continue };
            let alpha = model::alpha(rc.classes.classes[k].max, gamma.mb_s);
            d += alpha * bytes as f64 / total as f64;
        }
        out.push(Prediction {
            cpu_node: c,
            d,
            mb_s: d * gamma.mb_s,
        });
    }
    (out, unknown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::fixture;

    /// The thesis' AMD 2P shape: from node 0, node 0 local, node 1 one
    /// hop, nodes 2 and 3 two hops.
    fn atlas() -> Atlas {
        let mut a = Atlas {
            cpu_nodes: vec![0, 1],
            mem_nodes: vec![0, 1, 2, 3],
            ..Default::default()
        };
        for (m, v) in [(0, 9_300.0), (1, 5_600.0), (2, 3_100.0), (3, 3_050.0)] {
            a.single.values.insert((0, m), v);
        }
        for (m, v) in [(0, 5_500.0), (1, 9_200.0), (2, 3_000.0), (3, 3_100.0)] {
            a.single.values.insert((1, m), v);
        }
        a
    }

    #[test]
    fn rows_have_the_thesis_three_classes() {
        let rc = row_classes(&atlas(), 0);
        assert_eq!(rc.classes.classes.len(), 3);
        assert_eq!(rc.class_of(0), Some(0));
        assert_eq!(rc.class_of(1), Some(1));
        assert_eq!(rc.members(2), [2, 3]);
    }

    #[test]
    fn peak_prefers_the_given_then_the_recorded_then_the_measured() {
        let a = atlas();
        assert_eq!(peak(&a, Some(17_066.0), None).unwrap().mb_s, 17_066.0);
        let m = peak(&a, None, None).unwrap();
        assert_eq!(m.mb_s, 9_300.0);
        assert!(matches!(m.source, PeakSource::MeasuredLocal));
        assert!(peak(&Atlas::default(), None, None).is_none());
        // A damaged file's negative or zero cells never stand in for Gamma.
        let mut bad = Atlas::default();
        bad.single.values.insert((0, 0), -5.0);
        bad.single.values.insert((0, 1), 0.0);
        assert!(peak(&bad, None, None).is_none());
        bad.single.values.insert((1, 1), 4_000.0);
        assert_eq!(peak(&bad, None, None).unwrap().mb_s, 4_000.0);
    }

    #[test]
    fn pages_predict_d_per_node() {
        let a = atlas();
        let gamma = Peak {
            mb_s: 17_066.0,
            source: PeakSource::Given,
        };
        // Half on node 0, half on node 1: the thesis' 0.4365 from node 0.
        let bytes = BTreeMap::from([(0, 1 << 30), (1, 1 << 30), (9, 4096)]);
        let (p, unknown) = predict_for_pages(&a, &bytes, &gamma);
        assert_eq!(unknown, [9]);
        let from0 = p.iter().find(|p| p.cpu_node == 0).unwrap();
        // Node 9 holds a sliver of the bytes and counts as nothing.
        assert!((from0.d - 0.4365).abs() < 1e-4, "{from0:?}");
        assert_eq!(p.len(), 2);
    }

    #[test]
    fn slit_that_disagrees_is_flagged() {
        // From node 0 the fixture's SLIT is 10 16 22 22.
        let t = fixture("amd-4node");
        let mut a = Atlas {
            cpu_nodes: vec![0],
            mem_nodes: vec![0, 1, 2, 3],
            ..Default::default()
        };
        let mut set = |vals: [f64; 4]| {
            for (m, v) in vals.into_iter().enumerate() {
                a.single.values.insert((0, m), v);
            }
            slit_disagreements(&t, &row_classes(&a, 0))
        };
        // Agreeing: 16 is faster than 22, and 2 and 3 share a class.
        assert!(set([10_000.0, 6_000.0, 3_000.0, 3_050.0]).is_empty());
        // Nodes 2 and 3 at the same distance in different classes.
        let f = set([10_000.0, 6_000.0, 3_000.0, 1_000.0]);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].contains("the same for nodes 2 and 3 (22)"), "{f:?}");
        // Node 1 nearer (16) but slower than nodes 2 and 3 (22).
        let f = set([10_000.0, 1_000.0, 6_000.0, 6_000.0]);
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(
            f.iter().all(|l| l.contains("ranks node 1 ahead of node")),
            "{f:?}"
        );
    }

    #[test]
    fn hmat_that_disagrees_is_flagged() {
        use crate::ids::NodeSet;
        use crate::topology::Hmat;
        let mut t = fixture("amd-4node");
        for (m, bw) in [(0, 20_000), (1, 12_000), (2, 6_000), (3, 6_000)] {
            t.nodes[m].hmat = Some(Hmat {
                initiators: NodeSet::from_ids([0]),
                read_bandwidth_mb_s: Some(bw),
                write_bandwidth_mb_s: None,
                read_latency_ns: None,
                write_latency_ns: None,
            });
        }
        let mut a = Atlas {
            cpu_nodes: vec![0],
            mem_nodes: vec![0, 1, 2, 3],
            ..Default::default()
        };
        for (m, v) in [(0, 10_000.0), (1, 6_000.0), (2, 3_000.0), (3, 3_050.0)] {
            a.single.values.insert((0, m), v);
        }
        assert!(hmat_disagreements(&t, &row_classes(&a, 0)).is_empty());
        a.single.values.insert((0, 1), 2_000.0);
        let f = hmat_disagreements(&t, &row_classes(&a, 0));
        assert!(!f.is_empty());
        assert!(
            f[0].contains("HMAT read bandwidth ranks node 1 ahead of node 2 (12000 vs 6000)"),
            "{f:?}"
        );
        // Only rows the firmware names as initiators are compared.
        a.cpu_nodes = vec![1];
        let moved: Vec<_> = a
            .single
            .values
            .iter()
            .map(|((_, m), v)| ((1, *m), *v))
            .collect();
        a.single.values = moved.into_iter().collect();
        assert!(hmat_disagreements(&t, &row_classes(&a, 1)).is_empty());
    }
}
