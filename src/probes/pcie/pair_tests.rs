//! The node x node table (thread on node i, host memory on node j) on
//! fixture topologies and the thesis' Table 5.5.

use super::locate::{CpuChoice, GpuInfo, thread_seats};
use super::phi::Phi;
use super::records::{gpu_record, pair_size_record, size_record};
use super::summary::{LARGE_SIZES, large_sizes};
use super::*;
use crate::analysis::classes::ClassOptions;
use crate::analysis::model::PCIE2_X16_MB_S;
use crate::results::{Document, Record};
use crate::topology::fixture;
use crate::view::View;

fn choice(cpu: usize, cpu_node: usize) -> CpuChoice {
    CpuChoice { cpu, cpu_node }
}

#[test]
fn the_thread_goes_home_first_then_to_every_other_cpu_node() {
    let t = fixture("two-node");
    assert_eq!(
        thread_seats(&t, 0, &[0, 1]),
        Some((choice(0, 0), vec![choice(8, 1)]))
    );
    assert_eq!(
        thread_seats(&t, 1, &[0, 1]),
        Some((choice(8, 1), vec![choice(0, 0)]))
    );
    // No other node asked for: home alone.
    assert_eq!(thread_seats(&t, 1, &[]), Some((choice(8, 1), vec![])));
    assert_eq!(thread_seats(&t, 1, &[1, 1]), Some((choice(8, 1), vec![])));
    // A memory-only node: home is the nearest CPU node, the other one is
    // a cell of the table; the memory-only node itself has no CPU to use.
    let c = fixture("cxl-memonly");
    assert_eq!(
        thread_seats(&c, 2, &[0, 1, 2]),
        Some((choice(0, 0), vec![choice(4, 1)]))
    );
}

#[test]
fn the_table_copies_the_sizes_the_best_is_taken_from() {
    const M: usize = 1 << 20;
    // The default sizes: 1 KiB to 256 MiB, doubling.
    let default: Vec<usize> = (10..=28).map(|p| 1usize << p).collect();
    assert_eq!(large_sizes(&default), [64 * M, 128 * M, 256 * M]);
    assert_eq!(large_sizes(&[4096, 64 * 1024, M]), [M]);
    assert_eq!(large_sizes(&[M, 3 * M, 4 * M]), [M, 3 * M, 4 * M]);
    assert_eq!(LARGE_SIZES, 4);
    assert!(large_sizes(&[]).is_empty());
}

fn gpu0() -> GpuInfo {
    GpuInfo {
        ordinal: 0,
        name: "Tesla C2050".into(),
        pci_bus_id: "0000:3B:00.0".into(),
    }
}

/// Table 5.5 (device 0, GB/s) as records: the rows the thesis prints
/// (thread on node 0 and on node 3; rows 1 and 2 are elided there), each
/// memory node's own row as `size` records, the rest as `pair_size`
/// records; two sizes each, the smaller one slower.
#[allow(clippy::approx_constant)] // 2.3026 GB/s is the thesis' figure, not ln 10
fn table_5_5_pairs() -> Vec<Record> {
    let download = [
        (0, [5.8503, 5.3153, 2.3481, 2.3192]),
        (3, [5.8114, 5.3190, 2.3458, 2.3026]),
    ];
    let readback = [
        (0, [6.5800, 5.3182, 2.3089, 2.2828]),
        (3, [6.5760, 5.2802, 2.3109, 2.2813]),
    ];
    let gpu = gpu0();
    let mut out = vec![gpu_record(&gpu, None, Some(&Phi::given(PCIE2_X16_MB_S)))];
    for (dir, rows) in [
        (Direction::Download, download),
        (Direction::Readback, readback),
    ] {
        for (cpu_node, values) in rows {
            for (mem_node, gb_s) in values.into_iter().enumerate() {
                let at = choice(cpu_node * 4, cpu_node);
                let make = if cpu_node == mem_node {
                    size_record
                } else {
                    pair_size_record
                };
                for (size, scale) in [(16 << 20, 0.9), (64 << 20, 1.0)] {
                    let best = size as f64 / (gb_s * 1e9 * scale);
                    let times = [best * 1.1, best];
                    out.push(make(&gpu, None, mem_node, at, dir, size, &times));
                }
            }
        }
    }
    out
}

#[test]
fn pair_size_records_name_both_nodes() {
    let r = pair_size_record(
        &gpu0(),
        None,
        2,
        choice(12, 3),
        Direction::Download,
        4096,
        &[1e-6],
    );
    assert_eq!(r.name, "download gpu0 node3->node2 4096");
    assert_eq!(r.params["kind"], "pair_size");
    assert_eq!(r.params["cpu_node"], 3);
    assert_eq!(r.params["mem_node"], 2);
    assert_eq!(r.params["cpu"], 12);
    assert_eq!(r.samples["bandwidth_mb_s"], [4096.0]);
}

#[test]
fn the_cells_of_table_5_5_and_their_records() {
    let s = summarise(&table_5_5_pairs(), None, &ClassOptions::default());
    let s = &s[0];
    // The per-node table holds the memory nodes' own rows only.
    assert_eq!(s.rows.len(), 2);
    assert_eq!(s.rows[1].mem_node, 3);
    assert!((s.rows[1].download.unwrap().mb_s - 2302.6).abs() < 1e-6);
    // The node x node table: 2 rows x 4 columns, the own cells included.
    assert_eq!(s.pairs.len(), 8);
    let cell = |c: usize, m: usize| {
        s.pairs
            .iter()
            .find(|p| (p.cpu_node, p.mem_node) == (Some(c), m))
    };
    let c30 = cell(3, 0).unwrap();
    assert!((c30.download.unwrap().mb_s - 5811.4).abs() < 1e-6);
    assert_eq!(c30.download.unwrap().size_bytes, 64 << 20);
    assert_eq!(c30.cpu, Some(12));
    assert!((cell(0, 0).unwrap().readback.unwrap().mb_s - 6580.0).abs() < 1e-6);
    assert!(cell(1, 1).is_none());

    let recs = best_records(std::slice::from_ref(s));
    let pairs: Vec<&Record> = recs.iter().filter(|r| r.params["kind"] == "pair").collect();
    assert_eq!(pairs.len(), 16);
    assert_eq!(recs.len() - pairs.len(), 4);
    let r = pairs
        .iter()
        .find(|r| r.name == "download gpu0 node3->node0")
        .unwrap();
    assert_eq!(r.params["cpu_node"], 3);
    assert_eq!(r.params["mem_node"], 0);
    assert_eq!(r.params["size_bytes"], 64 << 20);
    assert_eq!(format!("{:.4}", r.metrics["alpha_p"].value), "0.4540");
    // Summarising a document that holds them gives the same.
    let mut all = table_5_5_pairs();
    all.extend(recs.clone());
    assert_eq!(summarise(&all, None, &ClassOptions::default())[0], *s);
}

fn sections(records: Vec<Record>) -> Vec<crate::view::Section> {
    let mut doc = Document::new(&fixture("two-node"));
    let s = summarise(&records, None, &ClassOptions::default());
    doc.records = records;
    doc.records.extend(best_records(&s));
    let refs: Vec<&Record> = doc.records.iter().collect();
    PcieView.sections(&doc, &refs)
}

#[test]
fn the_view_draws_a_node_by_node_table_per_direction() {
    let secs = sections(table_5_5_pairs());
    assert!(secs[0].lines[2].starts_with("node x node tables: the thread on each CPU node"));
    let d = secs
        .iter()
        .find(|s| {
            s.title
                .starts_with("GPU 0 download MB/s (% Phi): thread on CPU node")
        })
        .unwrap();
    assert_eq!(d.header, ["cpu\\mem", "0", "1", "2", "3"]);
    assert_eq!(
        d.rows,
        [
            [
                "0",
                "5850 (45.7%)",
                "5315 (41.5%)",
                "2348 (18.3%)",
                "2319 (18.1%)"
            ],
            [
                "3",
                "5811 (45.4%)",
                "5319 (41.6%)",
                "2346 (18.3%)",
                "2303 (18.0%)"
            ],
        ]
    );
    // Table 5.5's lesson: the memory node decides, the thread hardly.
    assert_eq!(
        d.lines,
        [
            "moving the thread changes a column by at most 0.7% (memory node 3); moving the memory changes a row by at most 60.4% (CPU node 3)"
        ]
    );
    let r = secs
        .iter()
        .find(|s| s.title.starts_with("GPU 0 readback MB/s"))
        .unwrap();
    assert_eq!(r.rows[1][2], "5280 (41.3%)");
    // CSV: the pair_size and pair lines beside the size and best ones.
    let mut doc = Document::new(&fixture("two-node"));
    doc.records = table_5_5_pairs();
    let s = summarise(&doc.records, None, &ClassOptions::default());
    doc.records.extend(best_records(&s));
    let refs: Vec<&Record> = doc.records.iter().collect();
    let csv = PcieView.csv(&doc, &refs).unwrap();
    let kinds = |k: &str| csv.rows.iter().filter(|r| r[8] == k).count();
    assert_eq!(
        (
            kinds("size"),
            kinds("pair_size"),
            kinds("best"),
            kinds("pair")
        ),
        (8, 24, 4, 16)
    );
    assert!(csv.rows.iter().any(|r| r.join("|")
        == "0|Tesla C2050|0000:3B:00.0||0|12|3|download|pair|67108864|5811.4|12800.0|0.4540|"));
}

#[test]
fn without_phi_the_table_has_figures_only() {
    let records: Vec<Record> = table_5_5_pairs()
        .into_iter()
        .map(|mut r| {
            r.metrics.remove("phi_mb_s");
            r
        })
        .collect();
    let secs = sections(records);
    let d = secs
        .iter()
        .find(|s| {
            s.title
                .starts_with("GPU 0 download MB/s: thread on CPU node")
        })
        .unwrap();
    assert_eq!(d.rows[1], ["3", "5811", "5319", "2346", "2303"]);
}

#[test]
fn without_other_nodes_there_is_no_node_by_node_table() {
    let home_only: Vec<Record> = table_5_5_pairs()
        .into_iter()
        .filter(|r| r.params["kind"] != "pair_size")
        .collect();
    let secs = sections(home_only);
    assert!(secs.iter().all(|s| !s.title.contains("thread on CPU node")));
    assert_eq!(secs[0].lines.len(), 2);
}
