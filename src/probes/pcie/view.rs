//! How the probe's records are shown, from the document alone: what was
//! measured, a table per GPU (a row per memory node: best download and
//! readback, % of Phi, class) with Phi and the classes under it, a node x
//! node table per GPU and direction where the thread also ran on other
//! nodes, every size per GPU and direction where the run asked for it
//! (`--per-size`), and the notes; as CSV, a line per size and per best
//! figure.

use super::summary::{GpuSummary, NodeRow, summarise, use_recorded_classes};
use super::{Direction, LARGE_SIZES, PROBE};
use crate::analysis::classes::ClassOptions;
use crate::ids::NodeSet;
use crate::results::names::pcie::{kind, metric as pm, param as pp};
use crate::results::names::{metric, param};
use crate::results::{Document, Record};
use crate::topology::Topology;
use crate::units::bytes;
use crate::view::{Csv, Section, View};
use std::collections::BTreeMap;

/// The view of the `pcie` probe.
pub(crate) struct PcieView;

/// The flag that asks for the tables of every size; a document shows them
/// when its command line holds it.
const PER_SIZE_FLAG: &str = "--per-size";

impl View for PcieView {
    fn probe(&self) -> &'static str {
        PROBE
    }

    fn intro(&self) -> Option<&'static str> {
        Some(
            "GPU copies to the device (download) and back (readback) with the pinned host buffer on each memory node: the best bandwidth of each node as a share of the link's peak Phi (alpha_p), the classes of nodes that reach the same speed, and, on several nodes, the table of CPU node against memory node.",
        )
    }

    fn sections(&self, doc: &Document, records: &[&Record]) -> Vec<Section> {
        let summaries = summaries_of(records);
        let per_size = doc.command.iter().any(|a| a == PER_SIZE_FLAG);
        let mut secs = vec![about(records)];
        for s in &summaries {
            secs.push(gpu_section(s, &doc.host.topology));
            if !s.pairs.is_empty() {
                for dir in Direction::BOTH {
                    secs.push(pair_section(s, dir));
                }
            }
            if per_size {
                for dir in Direction::BOTH {
                    secs.push(per_size_section(records, s, dir));
                }
            }
        }
        let notes = size_notes(records);
        if !notes.is_empty() {
            let mut sec = Section::new("notes");
            sec.lines = notes;
            secs.push(sec);
        }
        secs
    }

    fn csv(&self, _doc: &Document, records: &[&Record]) -> Option<Csv> {
        Some(csv(records, &summaries_of(records)))
    }
}

/// The summaries a document's records give, with the classes its run
/// recorded.
fn summaries_of(records: &[&Record]) -> Vec<GpuSummary> {
    let mut s = summarise(records.iter().copied(), None, &ClassOptions::default());
    use_recorded_classes(&mut s, records);
    s
}

fn is_kind(rec: &Record, k: &str) -> bool {
    rec.probe == PROBE && rec.str_param(pp::KIND) == Some(k)
}

/// The sizes copied, ascending, and the timed copies per size.
fn sizes_and_tries(records: &[&Record]) -> (Vec<usize>, Option<usize>) {
    let sized = || records.iter().filter(|r| is_kind(r, kind::SIZE));
    let mut sizes: Vec<usize> = sized()
        .filter_map(|r| r.usize_param(param::SIZE_BYTES))
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    (sizes, sized().find_map(|r| r.usize_param(pp::TRIES)))
}

/// What was measured, in words.
fn about(records: &[&Record]) -> Section {
    let (sizes, tries) = sizes_and_tries(records);
    let range = match (sizes.first(), sizes.last()) {
        (Some(a), Some(b)) if a != b => format!("{} to {}", bytes(*a as u64), bytes(*b as u64)),
        (Some(a), _) => bytes(*a as u64),
        _ => "-".into(),
    };
    let mut about = Section::new("what was measured");
    about.lines.push(format!(
        "copies from page-locked host memory bound to each memory node: download = host to GPU, readback = GPU to host; MB/s = 10^6 bytes/s; sizes {range} ({} sizes), each the best of {} timed copies; a node's figure is the best of the largest sizes (at least 1/{} of the largest)",
        sizes.len(),
        opt_text(tries),
        LARGE_SIZES
    ));
    about.lines.push(
        "% Phi is alpha_p = bandwidth / Phi (Braithwaite, eq. 4.3); classes group memory nodes whose best figures are close".into(),
    );
    if records.iter().any(|r| is_kind(r, kind::PAIR_SIZE)) {
        about.lines.push(
            "node x node tables: the thread on each CPU node (rows), the host buffer on each memory node (columns), as Braithwaite's Table 5.5; the largest sizes only".into(),
        );
    }
    about
}

/// The notes of the size records, each once.
fn size_notes(records: &[&Record]) -> Vec<String> {
    let mut n: Vec<String> = records
        .iter()
        .filter(|r| is_kind(r, kind::SIZE) || is_kind(r, kind::PAIR_SIZE))
        .flat_map(|r| r.notes.iter().cloned())
        .collect();
    n.sort();
    n.dedup();
    n
}

fn opt_text<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

/// The table of one GPU: a row per memory node, best download and
/// readback with % of Phi and class; then Phi, the classes and notes.
fn gpu_section(s: &GpuSummary, topo: &Topology) -> Section {
    let mut sec = Section::new(format!(
        "GPU {}: {} ({}), attached to {}",
        s.gpu,
        s.name,
        s.pci_bus_id,
        s.gpu_node
            .map_or("an unknown node".into(), |n| format!("node {n}"))
    ));
    sec.header = [
        "mem node",
        "cpu",
        "SLIT to GPU",
        "download MB/s",
        "% Phi",
        "class",
        "readback MB/s",
        "% Phi",
        "class",
    ]
    .map(String::from)
    .to_vec();
    for (i, row) in s.rows.iter().enumerate() {
        let mut cells = vec![
            row.mem_node.to_string(),
            match (row.cpu, row.cpu_node) {
                (Some(c), Some(n)) if n != row.mem_node => format!("{c} (node {n})"),
                (c, _) => opt_text(c),
            },
            opt_text(s.gpu_node.and_then(|g| topo.distance(row.mem_node, g))),
        ];
        for dir in Direction::BOTH {
            cells.push(opt_text(row.best(dir).map(|b| format!("{:.0}", b.mb_s))));
            cells.push(opt_text(
                s.alpha_p(i, dir).map(|a| format!("{:.1}%", 100.0 * a)),
            ));
            cells.push(opt_text(s.classes(dir).class_of(i)));
        }
        sec.rows.push(cells);
    }
    sec.lines.push(match &s.phi {
        Some(p) => p.describe(),
        None => "Phi unknown, so no alpha_p (give --phi)".into(),
    });
    for dir in Direction::BOTH {
        if let Some(line) = classes_line(s, dir) {
            sec.lines.push(line);
        }
    }
    for n in &s.notes {
        sec.lines.push(format!("note: {n}"));
    }
    sec
}

/// The classes of one direction in a line: each one's maximum, alpha_p
/// and memory nodes.
fn classes_line(s: &GpuSummary, dir: Direction) -> Option<String> {
    let classes = s.classes(dir);
    if classes.is_empty() {
        return None;
    }
    let parts: Vec<String> = classes
        .classes
        .iter()
        .map(|c| {
            let nodes = NodeSet::from_ids(c.members.iter().map(|&i| s.rows[i].mem_node));
            let alpha = s.phi.as_ref().map_or(String::new(), |p| {
                format!(" (alpha_p {:.4})", c.max / p.mb_s)
            });
            format!(
                "class {}: <= {:.0} MB/s{alpha}, nodes {nodes}",
                c.index, c.max
            )
        })
        .collect();
    Some(format!("{} classes: {}", dir.name(), parts.join("; ")))
}

/// The node x node table of one GPU and direction: a row per CPU node, a
/// column per memory node, the best figure with its % of Phi; under it how
/// far the figures spread along a column (the thread moved) and along a
/// row (the memory moved).
fn pair_section(s: &GpuSummary, dir: Direction) -> Section {
    let mut cpu_nodes: Vec<usize> = s.pairs.iter().filter_map(|p| p.cpu_node).collect();
    let mut mem_nodes: Vec<usize> = s.pairs.iter().map(|p| p.mem_node).collect();
    for v in [&mut cpu_nodes, &mut mem_nodes] {
        v.sort_unstable();
        v.dedup();
    }
    let cell = |c: usize, m: usize| {
        s.pairs
            .iter()
            .find(|p| p.cpu_node == Some(c) && p.mem_node == m)
    };
    let mut sec = Section::new(format!(
        "GPU {} {} MB/s{}: thread on CPU node (rows), host memory on node (columns)",
        s.gpu,
        dir.name(),
        if s.phi.is_some() { " (% Phi)" } else { "" }
    ));
    sec.header = std::iter::once("cpu\\mem".to_string())
        .chain(mem_nodes.iter().map(|m| m.to_string()))
        .collect();
    for &c in &cpu_nodes {
        let mut row = vec![c.to_string()];
        for &m in &mem_nodes {
            row.push(cell(c, m).map_or("-".into(), |p| pair_text(s, p, dir)));
        }
        sec.rows.push(row);
    }
    let spread = |pick: &dyn Fn(&NodeRow) -> Option<usize>, keys: &[usize]| {
        keys.iter()
            .filter_map(|&k| {
                let v: Vec<f64> = s
                    .pairs
                    .iter()
                    .filter(|p| pick(p) == Some(k))
                    .filter_map(|p| p.best(dir).map(|b| b.mb_s))
                    .collect();
                let max = v.iter().copied().fold(f64::NAN, f64::max);
                let min = v.iter().copied().fold(f64::NAN, f64::min);
                (v.len() > 1 && max > 0.0).then(|| (100.0 * (max - min) / max, k))
            })
            .max_by(|a, b| a.0.total_cmp(&b.0))
    };
    let mut parts = Vec::new();
    if let Some((pct, n)) = spread(&|p: &NodeRow| Some(p.mem_node), &mem_nodes) {
        parts.push(format!(
            "moving the thread changes a column by at most {pct:.1}% (memory node {n})"
        ));
    }
    if let Some((pct, n)) = spread(&|p: &NodeRow| p.cpu_node, &cpu_nodes) {
        parts.push(format!(
            "moving the memory changes a row by at most {pct:.1}% (CPU node {n})"
        ));
    }
    if !parts.is_empty() {
        sec.lines.push(parts.join("; "));
    }
    sec
}

/// A cell of the node x node table: MB/s, and % of Phi where known.
fn pair_text(s: &GpuSummary, p: &NodeRow, dir: Direction) -> String {
    match (p.best(dir), s.alpha_p_of(p, dir)) {
        (Some(b), Some(a)) => format!("{:.0} ({:.1}%)", b.mb_s, 100.0 * a),
        (Some(b), None) => format!("{:.0}", b.mb_s),
        (None, _) => "-".into(),
    }
}

/// Every size of one GPU and direction: a row per size, a column per
/// memory node.
fn per_size_section(records: &[&Record], s: &GpuSummary, dir: Direction) -> Section {
    let mut cells: BTreeMap<usize, BTreeMap<usize, f64>> = BTreeMap::new();
    for rec in records.iter().filter(|r| {
        is_kind(r, kind::SIZE)
            && r.usize_param(pp::GPU) == Some(s.gpu)
            && r.str_param(pp::DIRECTION) == Some(dir.name())
    }) {
        if let (Some(size), Some(node), Some(m)) = (
            rec.usize_param(param::SIZE_BYTES),
            rec.usize_param(param::MEM_NODE),
            rec.value(metric::BANDWIDTH_MB_S),
        ) {
            cells.entry(size).or_default().insert(node, m);
        }
    }
    let mut sec = Section::new(format!("GPU {} {} MB/s by size", s.gpu, dir.name()));
    sec.header = std::iter::once("size".to_string())
        .chain(s.rows.iter().map(|r| format!("node {}", r.mem_node)))
        .collect();
    for (size, by_node) in &cells {
        let mut row = vec![bytes(*size as u64)];
        row.extend(
            s.rows
                .iter()
                .map(|r| opt_text(by_node.get(&r.mem_node).map(|v| format!("{v:.0}")))),
        );
        sec.rows.push(row);
    }
    sec
}

/// The CSV columns.
pub(crate) const CSV_HEADER: [&str; 14] = [
    pp::GPU,
    pp::GPU_NAME,
    pp::PCI_BUS_ID,
    pp::GPU_NODE,
    param::MEM_NODE,
    param::CPU,
    param::CPU_NODE,
    pp::DIRECTION,
    pp::KIND,
    param::SIZE_BYTES,
    metric::BANDWIDTH_MB_S,
    pp::PHI_MB_S,
    pm::ALPHA_P,
    pp::CLASS,
];

/// The CSV of a run that measured nothing: the header alone.
pub(crate) fn empty_csv() -> Csv {
    Csv {
        header: CSV_HEADER.map(String::from).to_vec(),
        ..Default::default()
    }
}

/// One line per size and per best figure (the node x node table's too),
/// with Phi and alpha_p where known.
fn csv(records: &[&Record], summaries: &[GpuSummary]) -> Csv {
    let mut out = empty_csv();
    let phi_of = |rec: &Record| {
        let g = rec.usize_param(pp::GPU)?;
        summaries
            .iter()
            .find(|s| s.gpu == g)?
            .phi
            .as_ref()
            .map(|p| p.mb_s)
    };
    for rec in records.iter().filter(|r| {
        [kind::SIZE, kind::BEST, kind::PAIR_SIZE, kind::PAIR]
            .iter()
            .any(|k| is_kind(r, k))
    }) {
        let bw = rec.value(metric::BANDWIDTH_MB_S);
        let phi = phi_of(rec);
        let alpha_p = bw.zip(phi).map(|(b, p)| b / p);
        let mut row: Vec<String> = CSV_HEADER[..10]
            .iter()
            .map(|k| rec.param_shown(k).unwrap_or_default())
            .collect();
        row.push(bw.map_or(String::new(), |b| format!("{b:.1}")));
        row.push(phi.map_or(String::new(), |p| format!("{p:.1}")));
        row.push(alpha_p.map_or(String::new(), |a| format!("{a:.4}")));
        row.push(rec.param_shown(pp::CLASS).unwrap_or_default());
        out.rows.push(row);
    }
    out
}

/// Shown in reports only: no part in `run`, no fleet figure.
impl crate::view::Probe for PcieView {}

#[cfg(test)]
mod tests {
    use super::super::best_records;
    use super::super::locate::{CpuChoice, GpuInfo, find_accelerator};
    use super::super::phi::Phi;
    use super::super::records::{gpu_record, size_record};
    use super::*;
    use crate::topology::fixture;

    /// A measured-looking document of the two-node fixture: its GPU on node
    /// 1 is faster from node 1; classes found with `tolerance`.
    fn measured(tolerance: f64) -> Document {
        let t = fixture("two-node");
        let gpu = GpuInfo {
            ordinal: 0,
            name: "Tesla, \"test\"".into(),
            pci_bus_id: "0000:3B:00.0".into(),
        };
        let acc = find_accelerator(&t, &gpu.pci_bus_id).cloned();
        let phi = acc.as_ref().and_then(Phi::of_link);
        let mut doc = Document::new(&t);
        doc.records
            .push(gpu_record(&gpu, acc.as_ref(), phi.as_ref()));
        for dir in Direction::BOTH {
            for node in [0usize, 1] {
                let choice = CpuChoice {
                    cpu: node * 8,
                    cpu_node: node,
                };
                for size in [1 << 20, 64 << 20] {
                    let gb_s =
                        if node == 1 { 25.0 } else { 20.0 } * size as f64 / (64 << 20) as f64;
                    let t = size as f64 / (gb_s * 1e9);
                    let times = [t * 1.2, t];
                    let rec = size_record(&gpu, acc.as_ref(), node, choice, dir, size, &times);
                    doc.records.push(rec);
                }
            }
        }
        let s = summarise(&doc.records, None, &ClassOptions::tolerance(tolerance));
        doc.records.extend(best_records(&s));
        doc
    }

    fn sections_of(doc: &Document) -> Vec<Section> {
        let records: Vec<&Record> = doc.records.iter().collect();
        PcieView.sections(doc, &records)
    }

    #[test]
    fn the_table_shows_phi_alpha_p_and_classes() {
        let mut doc = measured(0.10);
        let secs = sections_of(&doc);
        assert_eq!(secs.len(), 2, "{secs:?}");
        assert!(secs[0].lines[0].contains("sizes 1 MiB to 64 MiB (2 sizes), each the best of 2"));
        let g = &secs[1];
        assert_eq!(
            g.title,
            "GPU 0: Tesla, \"test\" (0000:3B:00.0), attached to node 1"
        );
        // Node 1: 25000 MB/s = 79.3% of Phi, class 0; node 0 class 1.
        assert_eq!(
            g.rows[1],
            ["1", "8", "10", "25000", "79.3%", "0", "25000", "79.3%", "0"]
        );
        assert_eq!(g.rows[0][3..6], ["20000", "63.5%", "1"]);
        assert!(g.lines[0].starts_with("Phi = 31508 MB/s per direction"));
        assert_eq!(
            g.lines[1],
            "download classes: class 0: <= 25000 MB/s (alpha_p 0.7935), nodes 1; class 1: <= 20000 MB/s (alpha_p 0.6348), nodes 0"
        );
        // The tables of every size where the command asked for them.
        doc.command.push(PER_SIZE_FLAG.into());
        let secs = sections_of(&doc);
        assert_eq!(secs.len(), 4);
        assert_eq!(secs[3].title, "GPU 0 readback MB/s by size");
        assert_eq!(secs[3].rows[1], ["64 MiB", "20000", "25000"]);
    }

    #[test]
    fn the_classes_are_the_ones_the_run_recorded() {
        // At 50% tolerance the run put both nodes in one class; a document
        // shows that, not what the default 10% would give.
        let doc = measured(0.50);
        let g = &sections_of(&doc)[1];
        assert_eq!(g.rows[0][5], "0");
        assert_eq!(
            g.lines[1],
            "download classes: class 0: <= 25000 MB/s (alpha_p 0.7935), nodes 0-1"
        );
    }

    #[test]
    fn csv_has_every_size_and_best_with_alpha_p() {
        let doc = measured(0.10);
        let records: Vec<&Record> = doc.records.iter().collect();
        let c = PcieView.csv(&doc, &records).unwrap();
        assert_eq!(c.header.len(), 14);
        assert_eq!(c.header[0], "gpu");
        // 2 directions x 2 nodes x (2 sizes + best).
        assert_eq!(c.rows.len(), 12);
        let row = |s: &str| s.split('|').map(String::from).collect::<Vec<_>>();
        assert!(c.rows.contains(&row(
            "0|Tesla, \"test\"|0000:3B:00.0|1|1|8|1|download|best|67108864|25000.0|31507.7|0.7935|0"
        )));
        assert!(c.rows.contains(&row(
            "0|Tesla, \"test\"|0000:3B:00.0|1|0|0|0|readback|size|1048576|312.5|31507.7|0.0099|"
        )));
        assert_eq!(empty_csv().rows.len(), 0);
    }
}
