//! Synthetic trees of machines bigger than any captured fixture (8 to 64
//! nodes, up to 1024 CPUs), read by `numabench topo` as a user would: the
//! reader reports the nodes, CPUs, distances, memory and caches the shape
//! describes.

use crate::synthetic::{CORE_CACHES, L3, Shape};
use crate::util::*;
use serde_json::Value;
use std::path::Path;

fn ids(v: &Value) -> Vec<usize> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as usize)
        .collect()
}

/// Two runs of ids, as a list: `runs(0..2, 8..10)` is 0, 1, 8, 9.
fn runs(a: std::ops::Range<usize>, b: std::ops::Range<usize>) -> Vec<usize> {
    a.chain(b).collect()
}

fn written(shape: &Shape) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    shape.write(dir.path()).unwrap();
    dir
}

/// Everything `topo --json` says that the shape decides.
fn check_shape(shape: &Shape, got: &Value) {
    let what = shape.model_name();
    assert_eq!(got["hostname"], shape.hostname().as_str(), "{what}");
    assert_eq!(got["cpu_model"], what.as_str());
    let nodes = got["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), shape.nodes(), "{what}");
    let (total_kb, free_kb) = shape.node_mem_kb();
    for (i, n) in nodes.iter().enumerate() {
        assert_eq!(n["id"], i, "{what}");
        assert_eq!(ids(&n["cpus"]), shape.node_cpus(i), "{what}: node {i}");
        assert_eq!(n["has_cpu"], i < shape.cpu_nodes(), "{what}: node {i}");
        assert_eq!(n["has_memory"], true);
        assert_eq!(n["mem_total_bytes"], total_kb * 1024, "{what}: node {i}");
        assert_eq!(n["mem_free_bytes"], free_kb * 1024, "{what}: node {i}");
        let row: Vec<u64> = (0..shape.nodes())
            .map(|j| u64::from(shape.distance(i, j)))
            .collect();
        let got_row: Vec<u64> = n["distances"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap())
            .collect();
        assert_eq!(got_row, row, "{what}: distances of node {i}");
    }
    let cpus = got["cpus"].as_array().unwrap();
    assert_eq!(cpus.len(), shape.cpus(), "{what}");
    for c in cpus {
        let node = c["node"].as_u64().unwrap() as usize;
        assert_eq!(c["package"], shape.socket_of(node), "{what}: {c}");
        assert_eq!(ids(&c["smt_siblings"]).len(), shape.smt, "{what}: {c}");
    }
    let caches = got["caches"].as_array().unwrap();
    let cores = shape.cpus() / shape.smt;
    for (level, kind, kb) in CORE_CACHES {
        let of_kind: Vec<&Value> = caches
            .iter()
            .filter(|c| c["level"] == level && c["type"] == kind)
            .collect();
        assert_eq!(of_kind.len(), cores, "{what}: L{level} {kind}");
        assert!(of_kind.iter().all(|c| c["size_bytes"] == kb * 1024));
    }
    let l3: Vec<&Value> = caches.iter().filter(|c| c["level"] == 3).collect();
    let (count, bytes, per) = match shape.l3 {
        L3::PerNode(b) => (shape.cpu_nodes(), b, shape.cpus_per_node),
        L3::PerSocket(b) => (shape.sockets, b, shape.cpus() / shape.sockets),
    };
    assert_eq!(l3.len(), count, "{what}: L3 caches");
    for c in l3 {
        assert_eq!(c["size_bytes"], bytes, "{what}");
        assert_eq!(ids(&c["cpus"]).len(), per, "{what}");
    }
}

#[test]
fn every_shape_reads_back_as_described() {
    // Each tree is written once (a thousand CPUs are some 30,000 files),
    // then checked against the shape and against facts stated by hand.
    let none: fn(&Path, &Value) = |_, _| {};
    let shapes = [
        (Shape::eight_nodes(), 8, 128, none),
        (
            Shape::sixteen_nodes(),
            16,
            512,
            sixteen_nodes as fn(&Path, &Value),
        ),
        (Shape::thirty_two_nodes(), 32, 1024, thirty_two_nodes),
        (Shape::sixty_four_nodes(), 64, 1024, none),
        (
            Shape::eight_nodes().with_memory_only(2),
            10,
            128,
            memory_only,
        ),
    ];
    for (shape, nodes, cpus, by_hand) in shapes {
        assert_eq!((shape.nodes(), shape.cpus()), (nodes, cpus));
        let dir = written(&shape);
        let got = topo_json(dir.path());
        check_shape(&shape, &got);
        by_hand(dir.path(), &got);
    }
}

/// 32 nodes: numbering, distances and L3 stated by hand, not by the
/// shape's own methods, and `topo`'s table naming the 32 nodes.
fn thirty_two_nodes(dir: &Path, got: &Value) {
    // 512 cores, the second threads numbered after all first ones.
    assert_eq!(ids(&got["nodes"][3]["cpus"]), runs(48..64, 560..576));
    assert_eq!(
        got["cpus"][561]["smt_siblings"],
        serde_json::json!([49, 561])
    );
    assert_eq!(got["cpus"][561]["package"], 0);
    assert_eq!(got["cpus"][64]["package"], 1);
    // Node 0 on socket 0: its SNC siblings at 12, sockets 1, 2, 4 and the
    // opposite corner 7 one hop away (21), sockets 3, 5 and 6 two (32).
    let socket = |d: u64| vec![d; 4];
    let row = [
        vec![10, 12, 12, 12],
        socket(21),
        socket(21),
        socket(32),
        socket(21),
        socket(32),
        socket(32),
        socket(21),
    ]
    .concat();
    assert_eq!(got["nodes"][0]["distances"], serde_json::json!(row));
    assert_eq!(got["nodes"][31]["distances"][0], 21);
    assert_eq!(got["nodes"][13]["distances"][22], 32);
    let l3_of_cpu0: Vec<&Value> = got["caches"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["level"] == 3 && ids(&c["cpus"]).contains(&0))
        .collect();
    assert_eq!(l3_of_cpu0.len(), 1);
    assert_eq!(l3_of_cpu0[0]["size_bytes"], 32 << 20);
    assert_eq!(ids(&l3_of_cpu0[0]["cpus"]), runs(0..16, 512..528));
    topo_lists_the_32_nodes(dir);
}

/// 8 nodes and 2 memory-only ones, hanging off their sockets.
fn memory_only(_: &Path, got: &Value) {
    let cxl = &got["nodes"][8];
    assert_eq!(cxl["cpus"], serde_json::json!([]));
    assert_eq!(cxl["has_cpu"], false);
    // Node 8 on socket 0, node 9 on socket 1.
    assert_eq!(got["nodes"][0]["distances"][8], 50);
    assert_eq!(got["nodes"][4]["distances"][8], 60);
    assert_eq!(got["nodes"][4]["distances"][9], 50);
    assert_eq!(got["nodes"][8]["distances"][9], 60);
    assert_eq!(got["nodes"][0]["distances"][4], 32);
}

/// 16 nodes sharing an L3 by socket.
fn sixteen_nodes(_: &Path, got: &Value) {
    let l3: Vec<&Value> = got["caches"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["level"] == 3)
        .collect();
    assert_eq!(l3.len(), 4);
    assert_eq!(ids(&l3[0]["cpus"]), runs(0..64, 256..320));
    assert_eq!(l3[0]["size_bytes"], 105 << 20);
}

fn topo_lists_the_32_nodes(dir: &Path) {
    let text = topo_text(dir);
    assert!(
        text.contains("8 packages, 512 cores, 1024 CPUs online (2 threads per core)"),
        "{text}"
    );
    let rows: Vec<usize> = text
        .lines()
        .skip_while(|l| !l.starts_with("node  cpus"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(rows, (0..32).collect::<Vec<_>>(), "{text}");
    assert!(text.contains("distance   0   1   2"), "{text}");
}
