//! The chase parts' buffers and every part's time limit, sized to the
//! machine.

use crate::results::names::probe;
use crate::topology::Topology;
use crate::view::Part;

/// The run part of the registry's probe `name`.
fn part(name: &str) -> Part {
    crate::probes::REGISTRY
        .iter()
        .find(|p| p.probe() == name)
        .and_then(|p| p.part())
        .unwrap()
}

fn size_arg(part: &Part, topo: &Topology) -> String {
    let args = (part.args)(topo, crate::view::Scope::of(crate::view::Profile::Default));
    let at = args.iter().position(|a| a == "-s").expect("a -s argument");
    args[at + 1].clone()
}

fn limit_arg(part: &Part, topo: &Topology) -> u64 {
    let args = (part.args)(topo, crate::view::Scope::of(crate::view::Profile::Default));
    let at = args
        .iter()
        .position(|a| a == "-t" || a == "--time-limit")
        .expect("a time limit");
    args[at + 1].parse().unwrap()
}

#[test]
fn time_limits_grow_with_the_pairs_to_measure() {
    let one = crate::topology::fixture("two-node");
    let four = crate::topology::fixture("amd-4node");
    let pairs = |t: &Topology| t.usable_cpu_nodes().len() * t.usable_memory_nodes().len();
    assert!(pairs(&four) >= 16, "{}", pairs(&four));
    for name in [probe::LATENCY, probe::MLP, probe::PEAK] {
        let (small, big) = (limit_arg(&part(name), &one), limit_arg(&part(name), &four));
        assert!(
            big > small,
            "{name}: {big} s for four nodes, {small} s for two"
        );
        assert!(big >= 2 * pairs(&four) as u64, "{name}: {big} s");
    }
}

#[test]
fn chase_limits_grow_with_the_buffer_and_page_local_comes_first() {
    let mut topo = crate::topology::fixture("two-node");
    let small: Vec<u64> = [probe::LATENCY, probe::MLP]
        .iter()
        .map(|n| limit_arg(&part(n), &topo))
        .collect();
    let last = topo.caches.iter().map(|c| c.level).max().unwrap();
    for c in topo.caches.iter_mut().filter(|c| c.level == last) {
        c.size_bytes = 480 << 20;
    }
    for node in topo.nodes.iter_mut() {
        node.mem_free_bytes = Some(64 << 30);
    }
    // 16x the L3 would be 7.5 GiB: capped by time at 4 GiB.
    assert_eq!(size_arg(&part(probe::LATENCY), &topo), "4096M");
    for (name, before) in [probe::LATENCY, probe::MLP].iter().zip(small) {
        let after = limit_arg(&part(name), &topo);
        assert!(
            after > before,
            "{name}: {after} s at 4 GiB, {before} s at 1 GiB"
        );
    }
    // Two patterns on each of the fixture's pairs, each allowed the
    // 7.7 s a first touch of 4 GiB takes at the 14.5 s that 7.5 GiB took.
    let pairs = topo.usable_cpu_nodes().len() * topo.usable_memory_nodes().len();
    assert!(limit_arg(&part(probe::LATENCY), &topo) as f64 >= 2.0 * pairs as f64 * 7.7);
    let args =
        (part(probe::LATENCY).args)(&topo, crate::view::Scope::of(crate::view::Profile::Default));
    let at = args.iter().position(|a| a == "--pattern").unwrap();
    assert_eq!(args[at + 1], "page-local,full-random");
    let args =
        (part(probe::LOADED).args)(&topo, crate::view::Scope::of(crate::view::Profile::Default));
    let at = args.iter().position(|a| a == "--pattern").unwrap();
    assert_eq!(args[at + 1], "page-local");
}

#[test]
fn the_chase_parts_use_the_matrix_idle_latency_buffer() {
    let mut topo = crate::topology::fixture("two-node");
    let last = topo.caches.iter().map(|c| c.level).max().unwrap();
    for c in topo.caches.iter_mut().filter(|c| c.level == last) {
        c.size_bytes = 100 << 20;
    }
    let cpu = topo.allowed.cpus.iter().next().unwrap();
    assert_eq!(crate::probes::sizing::chase_bytes(&topo, cpu), 1600 << 20);
    for name in [probe::LATENCY, probe::MLP] {
        assert_eq!(size_arg(&part(name), &topo), "1600M", "{name}");
    }
    // Small caches: the 1 GiB floor.
    let small = crate::topology::fixture("two-node");
    assert_eq!(size_arg(&part(probe::LATENCY), &small), "1024M");
    // Little free memory on one node: the matrix's cap, half of it.
    let tight = topo.nodes.iter().find(|n| n.has_memory).unwrap().id;
    topo.nodes
        .iter_mut()
        .find(|n| n.id == tight)
        .unwrap()
        .mem_free_bytes = Some(1 << 30);
    assert_eq!(topo.node_free_bytes(tight), 1 << 30);
    for name in [probe::LATENCY, probe::MLP] {
        assert_eq!(size_arg(&part(name), &topo), "512M", "{name}");
    }
}
