//! Tests of the c2c view: summaries, directions, weights, formats.

use super::*;
use crate::probes::c2c::records::records;
use crate::probes::c2c::{Outcome, PairResult, Variant, plan};

fn doc_records(n_cpus: usize) -> Vec<Record> {
    let topo = crate::topology::fixture("amd-4node");
    let cpus: Vec<usize> = topo.cpus.iter().map(|c| c.id).take(n_cpus).collect();
    let plan = plan::plan(&topo, &cpus, 64, 4);
    let results = plan
        .pairs
        .iter()
        .map(|p| PairResult {
            pair: *p,
            variant: Variant::Cas,
            samples: vec![10.0 * (1 + p.class as usize) as f64; 3],
            iterations: 1000,
            seen_a: vec![p.a],
            seen_b: vec![p.b],
            failure: None,
            line_node: p.node_a,
            line_pages: p.node_a.map(|n| crate::memory::Placement {
                pages_by_node: [(n, 9)].into(),
                on_target_pct: Some(100.0),
                huge_pct: 0.0,
                pages_checked: 9,
                pages_total: 9,
            }),
            line_unchecked: None,
        })
        .collect();
    records(&Outcome {
        plan,
        results,
        notes: Vec::new(),
        conditions: Vec::new(),
        failed: None,
        line_home: crate::probes::c2c::LineHome::Cpu,
    })
}

#[test]
fn classes_nodes_and_cpus_are_summarised() {
    let recs = doc_records(usize::MAX);
    let refs: Vec<&Record> = recs.iter().collect();
    let groups = by_variant(&refs);
    assert_eq!(groups.len(), 1);
    let cells = &groups[0].1;
    let classes = class_section("cas", cells);
    let row = |name: &str| classes.rows.iter().find(|r| r[0] == name).unwrap();
    assert_eq!(row("same-package")[2], "40.0");
    assert_eq!(row("remote")[2], "50.0");
    let (nodes, grid) = node_grid(cells);
    assert_eq!(nodes.len(), 4);
    // Off the diagonal: nodes 0 and 1 share a package (40 ns), nodes 0
    // and 2 do not (50 ns).
    assert_eq!(grid[0][1], Some(40.0));
    assert_eq!(grid[1][0], Some(40.0));
    assert_eq!(grid[0][2], Some(50.0));
    assert_eq!(grid[3][1], Some(50.0));
    let (cpus, cg) = cpu_grid(cells);
    assert_eq!(cg.len(), cpus.len());
    for (i, row) in cg.iter().enumerate() {
        assert_eq!(row[i], None, "no figure on the diagonal");
        assert_eq!(row.iter().filter(|v| v.is_some()).count(), cpus.len() - 1);
    }
}

#[test]
fn every_format_part_is_there() {
    let recs = doc_records(4);
    let refs: Vec<&Record> = recs.iter().collect();
    let topo = crate::topology::fixture("amd-4node");
    let doc = Document::new(&topo);
    let secs = C2cView.sections(&doc, &refs);
    let titles: Vec<&str> = secs.iter().map(|s| s.title.as_str()).collect();
    assert!(
        titles.contains(&"cas: CPU x CPU, median of each pair (ns)"),
        "{titles:?}"
    );
    let blocks = C2cView.blocks(&doc, &refs);
    let heat = blocks
        .iter()
        .filter(|b| matches!(b, Block::Heatmap(_)))
        .count();
    assert_eq!(heat, 2);
    let csv = C2cView.csv(&doc, &refs).unwrap();
    assert_eq!(csv.rows.len(), 6);
    assert!(csv.rows.iter().all(|r| r.len() == csv.header.len()));
}

#[test]
fn a_virtual_machine_is_said_beside_the_classes() {
    let recs = doc_records(4);
    let refs: Vec<&Record> = recs.iter().collect();
    let about = |vm: Option<&str>| {
        let mut topo = crate::topology::fixture("amd-4node");
        topo.virtual_machine = vm.map(str::to_string);
        let secs = C2cView.sections(&Document::new(&topo), &refs);
        secs.into_iter()
            .find(|s| s.title == "what was measured")
            .unwrap()
            .lines
    };
    assert!(about(None).iter().all(|l| !l.contains("virtual machine")));
    let lines = about(Some("KVM (DMI product_name)"));
    assert!(
        lines.iter().any(|l| l.starts_with(
            "virtual machine under KVM (DMI product_name): the classes are what the host declares"
        )),
        "{lines:?}"
    );
}

fn cell(a: usize, b: usize, nodes: (usize, usize), class: PairClass, m: f64) -> Cell {
    Cell {
        variant: "cas".into(),
        a,
        b,
        node_a: Some(nodes.0),
        node_b: Some(nodes.1),
        class: Some(class),
        median: Some(m),
        iqr: None,
        min: None,
        mean: None,
        cv: None,
        samples: 3,
        iterations: 1000,
        verified: true,
        group_pairs: None,
        line_home: None,
        line_node: None,
        line_on_node_pct: None,
    }
}

#[test]
fn a_read_variant_is_shown_one_way_per_cell() {
    use crate::results::names::c2c::variant;
    let mut cells = vec![
        cell(0, 2, (0, 1), PairClass::Remote, 90.0),
        cell(2, 0, (1, 0), PairClass::Remote, 110.0),
    ];
    for c in &mut cells {
        c.variant = variant::CLEAN_READ.into();
    }
    let (_, cg) = cpu_grid(&cells);
    assert_eq!(cg[0][1], Some(90.0), "CPU 0 reading from CPU 2");
    assert_eq!(cg[1][0], Some(110.0), "CPU 2 reading from CPU 0");
    let (_, ng) = node_grid(&cells);
    assert_eq!((ng[0][1], ng[1][0]), (Some(90.0), Some(110.0)));
    // Two ways of one pair are one pair in the class table.
    let classes = class_section(variant::CLEAN_READ, &cells);
    assert_eq!(classes.rows[0][1], "1");
    // A ping-pong figure is the same both ways round.
    let pp = [cell(0, 2, (0, 1), PairClass::Remote, 90.0)];
    let (_, cg) = cpu_grid(&pp);
    assert_eq!((cg[0][1], cg[1][0]), (Some(90.0), Some(90.0)));
}

#[test]
fn sampled_pairs_are_weighted_by_the_pairs_they_stand_for() {
    // One node sampled two pairs of each class, but the machine has 2 SMT
    // pairs, 6 same-L3 pairs and 40 same-node pairs there.
    let mut cells = vec![
        cell(0, 1, (0, 0), PairClass::Smt, 10.0),
        cell(2, 3, (0, 0), PairClass::Smt, 10.0),
        cell(0, 2, (0, 0), PairClass::SameL3, 30.0),
        cell(1, 3, (0, 0), PairClass::SameL3, 30.0),
        cell(0, 8, (0, 0), PairClass::SameNode, 80.0),
        cell(1, 9, (0, 0), PairClass::SameNode, 80.0),
    ];
    let (_, plain) = node_grid(&cells);
    assert_eq!(plain[0][0], Some(30.0), "unweighted: the middle class");
    for c in &mut cells {
        c.group_pairs = Some(match c.class {
            Some(PairClass::Smt) => 2,
            Some(PairClass::SameL3) => 6,
            _ => 40,
        });
    }
    let (_, weighted) = node_grid(&cells);
    assert_eq!(
        weighted[0][0],
        Some(80.0),
        "most of the node's pairs are same-node"
    );
    let refs: Vec<&Cell> = cells.iter().collect();
    assert_eq!(weights(&refs), [1.0, 1.0, 3.0, 3.0, 20.0, 20.0]);
    // Half the weight on each side: between the two middle figures.
    let even = [
        cell(0, 1, (0, 0), PairClass::Smt, 10.0),
        cell(0, 8, (0, 0), PairClass::SameNode, 80.0),
    ];
    let mut even = even.to_vec();
    even[0].group_pairs = Some(3);
    even[1].group_pairs = Some(3);
    let refs: Vec<&Cell> = even.iter().collect();
    assert_eq!(weighted_median(&refs), Some(45.0));
}

#[test]
fn where_the_lines_lived_is_said() {
    let mut recs = doc_records(4);
    let refs: Vec<&Record> = recs.iter().collect();
    let groups = by_variant(&refs);
    let cells: Vec<&Cell> = groups[0].1.iter().collect();
    let line = line_home_line(&cells).unwrap();
    assert!(
        line.starts_with("the lines' memory: bound to the node of each pair's first CPU"),
        "{line}"
    );
    assert!(
        line.ends_with("; every page was found on its node"),
        "{line}"
    );
    assert_eq!(cells[0].line_node, cells[0].node_a);
    // One record with its pages elsewhere, one whose node had no memory
    // (its pages held to no node), one whose pages were not looked up.
    recs[0].placement.as_mut().unwrap().on_target_pct = Some(50.0);
    recs[1].params.remove(param::MEM_NODE);
    recs[1].placement.as_mut().unwrap().on_target_pct = Some(0.0);
    recs[2].placement.as_mut().unwrap().on_target_pct = None;
    let refs: Vec<&Record> = recs.iter().collect();
    let groups = by_variant(&refs);
    let cells: Vec<&Cell> = groups[0].1.iter().collect();
    let line = line_home_line(&cells).unwrap();
    let unbound = "for 1 record(s) that node has no memory this process may use";
    assert!(line.contains(unbound), "{line}");
    let off = "; NOT all on its node for 1 record(s) (see the notes)";
    assert!(line.contains(off), "{line}");
    let unchecked = "; pages not looked up for 1 record(s) (see the notes)";
    assert!(line.ends_with(unchecked), "{line}");
    // Documents from before the lines were bound say nothing.
    for r in &mut recs {
        r.params.remove(cp::LINE_HOME);
    }
    let refs: Vec<&Record> = recs.iter().collect();
    let groups = by_variant(&refs);
    let cells: Vec<&Cell> = groups[0].1.iter().collect();
    assert_eq!(line_home_line(&cells), None);
}
