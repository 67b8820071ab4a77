//! The default plan on every captured machine and on generated ones of 8
//! to 64 nodes: under the default budget, each part's share shown, and
//! the buffers and node pairs it measures growing like the nodes, not
//! their square.

use super::plan::{fit, steps, text, total_s};
use super::{DEFAULT_BUDGET_S, Profile};
use crate::probes::REGISTRY;
use crate::results::names::probe;
use crate::topology::synthetic::Shape;
use crate::topology::{SysfsRoot, Topology, read_topology};
use crate::view::{Scope, Trim};

/// `shape` as the topology reader reads it, written where it is quickest
/// (a tree of a thousand CPUs is some 30,000 files).
fn machine(shape: &Shape) -> Topology {
    let shm = std::path::Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(dir) = tempfile::tempdir_in(shm)
        && shape.write(dir.path()).is_ok()
    {
        return read_topology(&SysfsRoot::new(dir.path())).unwrap();
    }
    // No room there (a small /dev/shm): the temporary directory.
    let dir = tempfile::tempdir().unwrap();
    shape.write(dir.path()).unwrap();
    read_topology(&SysfsRoot::new(dir.path())).unwrap()
}

fn fixtures() -> Vec<(String, Topology)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sysfs");
    let mut out: Vec<(String, Topology)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            read_topology(&SysfsRoot::new(e.path()))
                .ok()
                .map(|t| (name, t))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn generated() -> Vec<(String, Topology)> {
    [
        ("8 nodes", Shape::eight_nodes()),
        ("16 nodes", Shape::sixteen_nodes()),
        ("32 nodes", Shape::thirty_two_nodes()),
        ("64 nodes", Shape::sixty_four_nodes()),
        ("8 nodes of 128 CPUs", Shape::new(2, 4, 128)),
    ]
    .into_iter()
    .map(|(name, shape)| (name.to_string(), machine(&shape)))
    .collect()
}

#[test]
fn the_default_plan_of_every_machine_fits_the_default_budget_and_shows_each_share() {
    let machines: Vec<(String, Topology)> = fixtures().into_iter().chain(generated()).collect();
    assert!(machines.len() >= 20, "{}", machines.len());
    for (name, topo) in &machines {
        let (scope, s) = fit(
            topo,
            (Profile::Default, false),
            Some(DEFAULT_BUDGET_S),
            REGISTRY,
        )
        .unwrap_or_else(|least| panic!("{name}: {least} s even trimmed"));
        let total = total_s(&s);
        assert!(total <= DEFAULT_BUDGET_S, "{name}: {total} s");
        let t = text(topo, scope, &s);
        for step in &s {
            assert!(t.contains(&format!("  {}  ", step.probe)), "{name}: {t}");
        }
        assert_eq!(t.matches("%)").count(), s.len(), "{name}: {t}");
    }
}

#[test]
fn builds_grow_with_the_memory_nodes_and_measured_pairs_stay_few_per_node() {
    let scope = Scope::of(Profile::Default);
    for (name, topo) in generated() {
        let nodes = topo.usable_memory_nodes().len();
        let s = steps(&topo, scope, REGISTRY);
        let builds = |p: &str, what: &str| -> usize {
            s.iter()
                .find(|x| x.probe == p)
                .and_then(|x| x.plan.buffers.iter().find(|b| b.what == what))
                .map_or(0, |b| b.count)
        };
        // The matrix: one chase and one set of arrays per memory node,
        // not per cell.
        assert_eq!(builds(probe::MATRIX, "chase"), nodes, "{name}");
        assert_eq!(builds(probe::MATRIX, "bandwidth arrays"), nodes, "{name}");
        // The chase parts: at most one build per memory node and page
        // kind.
        assert!(builds(probe::LATENCY, "chase") <= nodes, "{name}");
        assert!(builds(probe::MLP, "chase") <= nodes, "{name}");
        // Pairs by class: a few per node, where all would be nodes^2.
        let pairs = crate::probes::pairs::plan(
            &topo,
            &topo.usable_cpu_nodes().iter().collect::<Vec<_>>(),
            &topo.usable_memory_nodes().iter().collect::<Vec<_>>(),
            crate::probes::part::selection(scope),
        );
        if nodes > crate::probes::pairs::SAMPLE_ABOVE {
            assert!(
                pairs.measured.len() <= 4 * nodes,
                "{name}: {}",
                pairs.measured.len()
            );
        }
        let latency = s.iter().find(|x| x.probe == probe::LATENCY).unwrap();
        assert!(
            latency
                .plan
                .measures
                .starts_with(&format!("{} pair(s)", pairs.measured.len())),
            "{name}: {}",
            latency.plan.measures
        );
    }
    // Trimmed to the most, still every memory node's chase once at most.
    let topo = machine(&Shape::thirty_two_nodes());
    let most = Scope {
        trim: Trim::Cells,
        ..scope
    };
    let s = steps(&topo, most, REGISTRY);
    let matrix = s.iter().find(|x| x.probe == probe::MATRIX).unwrap();
    let chases = matrix
        .plan
        .buffers
        .iter()
        .find(|b| b.what == "chase")
        .unwrap();
    assert!(chases.count <= 32);
}
