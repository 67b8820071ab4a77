//! The pair selection on the fixture machines and on synthetic ones of
//! 32 and 64 nodes.

use super::*;
use crate::topology::synthetic::Shape;
use crate::topology::{SysfsRoot, fixture, read_topology};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

/// A synthetic machine as the topology reader reads it, with 2 CPUs per
/// node: the selection looks at nodes, sockets and distances only, and a
/// tree of a thousand CPUs is some 30,000 files. Each shape is written
/// and read once for all the tests.
fn machine(shape: &Shape) -> Topology {
    static READ: Mutex<BTreeMap<String, Topology>> = Mutex::new(BTreeMap::new());
    let shape = &Shape {
        cpus_per_node: 2,
        smt: 2,
        ..shape.clone()
    };
    let key = format!("{shape:?}");
    let mut read = READ.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(topo) = read.get(&key) {
        return topo.clone();
    }
    let dir = tempfile::tempdir().unwrap();
    shape.write(dir.path()).unwrap();
    let topo = read_topology(&SysfsRoot::new(dir.path())).unwrap();
    assert_eq!(topo.nodes.len(), shape.nodes());
    assert_eq!(topo.cpus.len(), shape.cpus());
    read.insert(key, topo.clone());
    topo
}

fn by_class(above: usize) -> Selection {
    Selection::ByClass { above }
}

fn usable(topo: &Topology) -> (Vec<usize>, Vec<usize>) {
    (
        topo.usable_cpu_nodes().iter().collect(),
        topo.usable_memory_nodes().iter().collect(),
    )
}

/// What every plan must hold, whatever the machine.
fn check(topo: &Topology, got: &PairPlan, cpus: &[usize], mems: &[usize]) {
    let measured: BTreeSet<Pair> = got.measured.iter().copied().collect();
    assert_eq!(measured.len(), got.measured.len(), "a pair measured twice");
    let inferred: BTreeSet<Pair> = got.inferred.iter().map(|i| i.pair).collect();
    assert_eq!(inferred.len(), got.inferred.len(), "a pair inferred twice");
    assert!(measured.is_disjoint(&inferred));
    let all: BTreeSet<Pair> = cpus
        .iter()
        .flat_map(|&c| mems.iter().map(move |&m| (c, m)))
        .collect();
    let planned: BTreeSet<Pair> = measured.union(&inferred).copied().collect();
    assert_eq!(planned, all, "every pair is measured or inferred");
    for &(c, m) in &all {
        let d = topo.distance(c, m);
        let cpuless = topo.node(m).unwrap().cpus.is_empty();
        if c == m || d.is_none() || d == topo.distance(c, c) || cpuless {
            assert!(measured.contains(&(c, m)), "({c}, {m}) must be measured");
        }
    }
    for i in &got.inferred {
        assert_eq!(topo.distance(i.pair.0, i.pair.1), Some(i.class_distance));
        assert!(i.from.len() >= 2, "{i:?}");
        for f in &i.from {
            assert!(measured.contains(f), "{f:?} is not measured");
            assert_eq!(topo.distance(f.0, f.1), Some(i.class_distance));
        }
    }
    assert_eq!(
        got.classes.iter().map(|c| c.pairs).sum::<usize>(),
        all.len()
    );
    for c in &got.classes {
        assert!(c.measured >= 1 && c.measured <= c.pairs, "{c:?}");
        let want = all
            .iter()
            .filter(|p| topo.distance(p.0, p.1) == c.distance)
            .count();
        assert_eq!(c.pairs, want, "{c:?}");
    }
}

fn summary(got: &PairPlan) -> Vec<(Option<u32>, usize, usize)> {
    got.classes
        .iter()
        .map(|c| (c.distance, c.pairs, c.measured))
        .collect()
}

#[test]
fn sample_sizes_grow_like_the_root_of_the_class() {
    let sizes: Vec<usize> = [0, 1, 2, 3, 4, 5, 9, 10, 112, 448, 2048]
        .iter()
        .map(|&n| sample_size(n))
        .collect();
    assert_eq!(sizes, [0, 1, 2, 2, 2, 3, 3, 4, 11, 22, 46]);
}

#[test]
fn small_fixtures_are_measured_whole_by_default() {
    for name in ["two-node", "amd-4node", "cxl-memonly", "interleaved-smt"] {
        let topo = fixture(name);
        let (cpus, mems) = usable(&topo);
        let got = PairPlan::for_usable(&topo, Selection::default());
        check(&topo, &got, &cpus, &mems);
        assert!(!got.is_sampled(), "{name}");
        assert_eq!(got.measured.len(), cpus.len() * mems.len(), "{name}");
    }
}

#[test]
fn amd_4node_samples_each_class_across_both_sockets() {
    let topo = fixture("amd-4node");
    let (cpus, mems) = usable(&topo);
    let got = plan(&topo, &cpus, &mems, by_class(0));
    check(&topo, &got, &cpus, &mems);
    assert_eq!(
        summary(&got),
        [(Some(10), 4, 4), (Some(16), 4, 2), (Some(22), 8, 3)]
    );
    // The neighbour class: one pair on each socket, not (0,1) and (1,0).
    assert_eq!(got.sample(16), [(0, 1), (2, 3)]);
    let far = got.sample(22);
    let far_cpus: BTreeSet<usize> = far.iter().map(|p| p.0).collect();
    let far_mems: BTreeSet<usize> = far.iter().map(|p| p.1).collect();
    assert_eq!((far_cpus.len(), far_mems.len()), (3, 3), "{far:?}");
}

#[test]
fn big_16node_measures_local_pairs_and_a_sample_of_each_socket_class() {
    let topo = fixture("big-16node");
    let (cpus, mems) = usable(&topo);
    let got = PairPlan::for_usable(&topo, Selection::default());
    check(&topo, &got, &cpus, &mems);
    assert_eq!(
        summary(&got),
        [(Some(10), 16, 16), (Some(12), 112, 11), (Some(32), 128, 12)]
    );
    assert_eq!(got.measured.len(), 39);
    // In measuring order: by CPU node, then memory node.
    let mut sorted = got.measured.clone();
    sorted.sort_unstable();
    assert_eq!(got.measured, sorted);
}

#[test]
fn memory_only_nodes_are_measured_from_every_cpu_node() {
    let topo = fixture("cxl-memonly");
    let (cpus, mems) = usable(&topo);
    assert_eq!(
        (cpus.as_slice(), mems.as_slice()),
        ([0, 1].as_slice(), [0, 1, 2].as_slice())
    );
    let got = plan(&topo, &cpus, &mems, by_class(0));
    check(&topo, &got, &cpus, &mems);
    assert!(got.measured.contains(&(0, 2)) && got.measured.contains(&(1, 2)));

    let shape = Shape::thirty_two_nodes().with_memory_only(4);
    let topo = machine(&shape);
    let (cpus, mems) = usable(&topo);
    assert_eq!((cpus.len(), mems.len()), (32, 36));
    let got = plan(&topo, &cpus, &mems, Selection::default());
    check(&topo, &got, &cpus, &mems);
    let cxl = got.measured.iter().filter(|p| p.1 >= 32).count();
    assert_eq!(cxl, 32 * 4);
    assert!(got.inferred.iter().all(|i| i.pair.1 < 32));
}

#[test]
fn big_synthetic_machines_measure_a_few_pairs_per_node() {
    // (shape, classes by distance: pairs, measured)
    let cases = [
        (
            Shape::thirty_two_nodes(),
            vec![(10, 32, 32), (12, 96, 10), (21, 512, 23), (32, 384, 20)],
        ),
        (
            Shape::sixty_four_nodes(),
            vec![(10, 64, 64), (12, 448, 22), (21, 2048, 46), (32, 1536, 40)],
        ),
    ];
    for (shape, want) in cases {
        let topo = machine(&shape);
        let (cpus, mems) = usable(&topo);
        let got = PairPlan::for_usable(&topo, Selection::default());
        check(&topo, &got, &cpus, &mems);
        let want: Vec<_> = want.into_iter().map(|(d, p, m)| (Some(d), p, m)).collect();
        assert_eq!(summary(&got), want);
        let n = shape.nodes();
        let sampled_classes = got.classes.len() - 1;
        assert!(got.measured.len() <= n + sampled_classes * n);
        // Every sampled class reaches every socket, from and to.
        let socket = |node: usize| shape.socket_of(node);
        for class in &got.classes[1..] {
            let sample = got.sample(class.distance.unwrap());
            let from: BTreeSet<usize> = sample.iter().map(|p| socket(p.0)).collect();
            let to: BTreeSet<usize> = sample.iter().map(|p| socket(p.1)).collect();
            assert_eq!((from.len(), to.len()), (8, 8), "{class:?}: {sample:?}");
            let cpu_nodes: BTreeSet<usize> = sample.iter().map(|p| p.0).collect();
            assert_eq!(cpu_nodes.len(), sample.len(), "{class:?}: {sample:?}");
        }
    }
}

#[test]
fn measured_pairs_grow_linearly_with_nodes() {
    let mut per_node = Vec::new();
    for shape in [
        Shape::eight_nodes(),
        Shape::sixteen_nodes(),
        Shape::thirty_two_nodes(),
        Shape::sixty_four_nodes(),
    ] {
        let topo = machine(&shape);
        let got = PairPlan::for_usable(&topo, by_class(0));
        let n = shape.nodes();
        per_node.push(got.measured.len() as f64 / n as f64);
        if n == 64 {
            assert!(got.measured.len() * 20 < n * n, "{}", got.measured.len());
        }
    }
    // N² pairs would double this ratio with each doubling of nodes.
    assert!(
        per_node.iter().all(|&r| (2.0..=3.5).contains(&r)),
        "{per_node:?}"
    );
}

#[test]
fn all_measures_every_pair_in_order() {
    let topo = machine(&Shape::sixty_four_nodes());
    let (cpus, mems) = usable(&topo);
    let got = plan(&topo, &cpus, &mems, Selection::All);
    check(&topo, &got, &cpus, &mems);
    assert!(got.inferred.is_empty());
    assert_eq!(got.measured.len(), 4096);
    assert_eq!(got.measured[..3], [(0, 0), (0, 1), (0, 2)]);
    assert!(got.classes.iter().all(|c| c.measured == c.pairs));
}

#[test]
fn selection_is_deterministic() {
    let shape = Shape::thirty_two_nodes();
    let first = PairPlan::for_usable(&machine(&shape), Selection::default());
    let again = PairPlan::for_usable(&machine(&shape), Selection::default());
    assert_eq!(first, again);
    // Repeated node ids are one node.
    let topo = machine(&shape);
    let (cpus, mems) = usable(&topo);
    let doubled: Vec<usize> = mems.iter().chain(&mems).copied().collect();
    assert_eq!(plan(&topo, &cpus, &doubled, Selection::default()), first);
}

#[test]
fn pairs_at_the_nodes_own_distance_and_of_unknown_distance_are_measured() {
    let mut topo = machine(&Shape::thirty_two_nodes());
    // Firmware listing node 5 at node 0's own distance from it.
    topo.nodes[0].distances[5] = 10;
    // And a distance row left out.
    topo.nodes[7].distances.clear();
    let (cpus, mems) = usable(&topo);
    let got = plan(&topo, &cpus, &mems, Selection::default());
    check(&topo, &got, &cpus, &mems);
    assert!(got.measured.contains(&(0, 5)));
    assert_eq!(got.measured.iter().filter(|p| p.0 == 7).count(), 32);
    assert_eq!(got.classes.last().unwrap().distance, None);
    assert_eq!(got.classes.last().unwrap().pairs, 32);
}

#[test]
fn a_class_holds_within_ten_percent() {
    assert!(class_holds(&[100.0, 105.0, 110.0]));
    assert!(class_holds(&[250.0]));
    assert!(!class_holds(&[100.0, 111.0]));
    assert!(!class_holds(&[111.0, 100.0, 105.0]));
    assert!(!class_holds(&[]));
    assert!(!class_holds(&[100.0, f64::NAN]));
    assert!(!class_holds(&[100.0, f64::INFINITY]));
    assert!(!class_holds(&[0.0, 0.0]));
    assert!(!class_holds(&[-5.0, -5.0]));
}

#[test]
fn a_class_that_does_not_hold_is_widened_to_all_its_pairs() {
    let topo = machine(&Shape::sixty_four_nodes());
    let (cpus, mems) = usable(&topo);
    let mut got = plan(&topo, &cpus, &mems, Selection::default());
    let before = got.clone();
    let sample = got.sample(21).to_vec();
    assert_eq!(sample.len(), 46);
    let holding = vec![90.0; sample.len()];
    assert!(got.spot_check(21, &holding).is_empty());
    assert_eq!(got, before);

    let mut spread = holding;
    spread[0] = 130.0;
    let rest = got.spot_check(21, &spread);
    assert_eq!(rest.len(), 2048 - 46);
    assert!(rest.iter().all(|p| topo.distance(p.0, p.1) == Some(21)));
    assert!(rest.iter().all(|p| !before.measured.contains(p)));
    check(&topo, &got, &cpus, &mems);
    assert_eq!(got.measured[..before.measured.len()], before.measured);
    let class = got.classes.iter().find(|c| c.distance == Some(21)).unwrap();
    assert_eq!((class.pairs, class.measured), (2048, 2048));
    assert!(got.inferred.iter().all(|i| i.class_distance != 21));
    assert!(got.sample(21).is_empty());
    // The other classes are still sampled.
    assert_eq!(got.inferred.len(), before.inferred.len() - rest.len());
    assert!(got.widen(21).is_empty());
}
