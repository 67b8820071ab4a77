//! The probe's pure parts on fixture topologies and the thesis' published
//! figures (Tables 3.4, 5.4 and 5.5).

use super::locate::{
    CpuChoice, GpuInfo, cpu_for_memory_node, find_accelerator, parse_pci_address, same_pci_address,
};
use super::phi::{Phi, PhiSource, better_phi};
use super::records::{gpu_record, mb_s, size_record};
use super::summary::{Best, best_of};
use super::*;
use crate::analysis::classes::ClassOptions;
use crate::analysis::model::PCIE2_X16_MB_S;
use crate::ids::CpuSet;
use crate::results::Record;
use crate::topology::fixture;
use serde_json::Value;

fn p4(x: f64) -> String {
    format!("{x:.4}")
}

#[test]
fn phi_of_a_fixture_gpu_and_its_description() {
    let t = fixture("two-node");
    let acc = find_accelerator(&t, "0000:3B:00.0").unwrap();
    assert_eq!(acc.numa_node, Some(1));
    let phi = Phi::of_link(acc).unwrap();
    assert_eq!(
        phi.describe(),
        "Phi = 31508 MB/s per direction: PCIe link 16 GT/s x16, 128b/130b encoding"
    );
    assert_eq!(
        Phi::given(12_800.0).describe(),
        "Phi = 12800 MB/s, as given with --phi"
    );
    let gen2 = Phi {
        mb_s: 8000.0,
        source: PhiSource::Link {
            speed_gt_s: 5.0,
            width: 16,
        },
    };
    assert!(gen2.describe().contains("5 GT/s x16, 8b/10b"));
    // A GPU with no link figures has no Phi.
    let mut bare = acc.clone();
    bare.link_width = None;
    assert_eq!(Phi::of_link(&bare), None);
}

#[test]
fn the_better_of_two_link_readings_counts() {
    let idle = Phi {
        mb_s: 2000.0,
        source: PhiSource::Link {
            speed_gt_s: 2.5,
            width: 8,
        },
    };
    let busy = Phi::of_link(fixture("two-node").accelerators.last().unwrap()).unwrap();
    assert_eq!(
        better_phi(Some(idle.clone()), Some(busy.clone())),
        Some(busy.clone())
    );
    assert_eq!(
        better_phi(Some(busy.clone()), Some(idle.clone())),
        Some(busy)
    );
    assert_eq!(better_phi(None, Some(idle.clone())), Some(idle));
    assert_eq!(better_phi(None, None), None);
}

#[test]
fn pci_addresses_match_across_case_and_domain_width() {
    assert!(same_pci_address("0000:3B:00.0", "0000:3b:00.0"));
    assert!(same_pci_address("00000000:3B:00.0", "0000:3b:00.0"));
    assert!(same_pci_address("3b:00.0", "0000:3B:00.0"));
    assert!(!same_pci_address("0000:3B:00.1", "0000:3b:00.0"));
    assert!(!same_pci_address("0001:3B:00.0", "0000:3b:00.0"));
    assert!(!same_pci_address("garbage", "garbage"));
    assert!(!same_pci_address("", ""));
    assert_eq!(parse_pci_address("0000:E3:1f.7"), Some((0, 0xe3, 0x1f, 7)));
    assert_eq!(parse_pci_address("0000:3b:00"), None);
    assert_eq!(parse_pci_address("0000:xx:00.0"), None);
    let t = fixture("two-node");
    assert_eq!(
        find_accelerator(&t, "0000:3B:00.0").map(|a| a.pci_address.as_str()),
        Some("0000:3b:00.0")
    );
    assert!(find_accelerator(&t, "0000:3C:00.0").is_none());
}

#[test]
fn a_node_with_cpus_uses_its_own() {
    let t = fixture("two-node");
    assert_eq!(
        cpu_for_memory_node(&t, 0),
        Some(CpuChoice {
            cpu: 0,
            cpu_node: 0
        })
    );
    assert_eq!(
        cpu_for_memory_node(&t, 1),
        Some(CpuChoice {
            cpu: 8,
            cpu_node: 1
        })
    );
    // Only the CPUs of the cpuset count.
    let r = fixture("cpuset-restricted");
    assert_eq!(
        cpu_for_memory_node(&r, 0),
        Some(CpuChoice {
            cpu: 2,
            cpu_node: 0
        })
    );
}

#[test]
fn a_memory_only_node_uses_the_nearest_node_with_cpus() {
    let mut t = fixture("cxl-memonly");
    assert!(t.node(2).unwrap().cpus.is_empty());
    // SLIT 50 to both CPU nodes: the lower id wins.
    assert_eq!(
        cpu_for_memory_node(&t, 2),
        Some(CpuChoice {
            cpu: 0,
            cpu_node: 0
        })
    );
    // Nearer to node 1.
    let n2 = t.nodes.iter_mut().find(|n| n.id == 2).unwrap();
    n2.distances = vec![50, 30, 10];
    assert_eq!(
        cpu_for_memory_node(&t, 2),
        Some(CpuChoice {
            cpu: 4,
            cpu_node: 1
        })
    );
    // No CPU allowed anywhere: no choice.
    t.allowed.cpus = CpuSet::new();
    assert_eq!(cpu_for_memory_node(&t, 2), None);
}

fn gpu0() -> GpuInfo {
    GpuInfo {
        ordinal: 0,
        name: "Tesla C2050".into(),
        pci_bus_id: "0000:3B:00.0".into(),
    }
}

/// Records as a measurement of the thesis' AMD 2P machine would give
/// them: Table 5.5 (Cbench, SHOC CUDA, device 0, from nodes 0-3), GB/s
/// written as MB/s, each at two sizes (the smaller one slower).
fn table_5_5() -> Vec<Record> {
    let download = [5.8503, 5.3153, 2.3481, 2.3192];
    let readback = [6.5800, 5.3182, 2.3089, 2.2828];
    let gpu = gpu0();
    let mut out = vec![gpu_record(&gpu, None, Some(&Phi::given(PCIE2_X16_MB_S)))];
    for (dir, values) in [
        (Direction::Download, download),
        (Direction::Readback, readback),
    ] {
        for (node, gb_s) in values.into_iter().enumerate() {
            let choice = CpuChoice {
                cpu: node * 4,
                cpu_node: node,
            };
            for (size, scale) in [(1 << 20, 0.5), (64 << 20, 1.0)] {
                // Three copies, the best at gb_s.
                let best = size as f64 / (gb_s * 1e9 * scale);
                let times = [best * 1.1, best, best * 1.05];
                out.push(size_record(&gpu, None, node, choice, dir, size, &times));
            }
        }
    }
    out
}

#[test]
fn size_records_keep_every_copy_and_the_best() {
    let choice = CpuChoice {
        cpu: 3,
        cpu_node: 1,
    };
    let rec = size_record(
        &gpu0(),
        None,
        1,
        choice,
        Direction::Readback,
        1_000_000,
        &[0.001, 0.0005, 0.0],
    );
    assert_eq!(rec.name, "readback gpu0 node1 1000000");
    assert_eq!(rec.metrics["bandwidth_mb_s"].value, 2000.0);
    assert_eq!(rec.samples["bandwidth_mb_s"], [1000.0, 2000.0]);
    assert_eq!(rec.params["direction"], "readback");
    assert_eq!(rec.params["pci_bus_id"], "0000:3B:00.0");
    assert_eq!(rec.params["gpu_node"], Value::Null);
    assert_eq!(rec.params["cpu"], 3);
    let none = size_record(&gpu0(), None, 1, choice, Direction::Download, 8, &[0.0]);
    assert!(none.metrics.is_empty());
    assert_eq!(none.notes.len(), 1);
    assert_eq!(mb_s(1_000_000, 0.001), Some(1000.0));
    assert_eq!(mb_s(1, f64::NAN), None);
}

#[test]
fn alpha_p_and_classes_of_the_thesis_table_5_5() {
    let s = summarise(&table_5_5(), None, &ClassOptions::default());
    assert_eq!(s.len(), 1);
    let s = &s[0];
    assert_eq!(s.phi, Some(Phi::given(PCIE2_X16_MB_S)));
    assert_eq!(s.rows.len(), 4);
    // The best is at the largest size.
    assert!(
        s.rows
            .iter()
            .all(|r| r.download.unwrap().size_bytes == 64 << 20)
    );
    assert!((s.rows[0].download.unwrap().mb_s - 5850.3).abs() < 1e-6);
    // Table 5.4: class 0 download 5.85 GB/s (0.4571), readback 6.58
    // (0.5141); class 2 readback 2.31 (0.1804 of node 2's 2.3089).
    assert_eq!(p4(s.alpha_p(0, Direction::Download).unwrap()), "0.4571");
    assert_eq!(p4(s.alpha_p(0, Direction::Readback).unwrap()), "0.5141");
    assert_eq!(p4(s.alpha_p(1, Direction::Readback).unwrap()), "0.4155");
    // Readback: three classes, nodes 2 and 3 sharing the slowest.
    let r = &s.readback;
    assert_eq!(r.len(), 3);
    assert_eq!(r.assignment, [Some(0), Some(1), Some(2), Some(2)]);
    // Download: node 1 (5315) is within 10% of node 0 (5850) but 9% below
    // it, a gap wider than half the tolerance: two classes, as the thesis
    // has them.
    assert_eq!(s.download.assignment, [Some(0), Some(1), Some(2), Some(2)]);
    // Merging close classes joins them.
    let merged = ClassOptions {
        merge_close: true,
        ..ClassOptions::default()
    };
    let m = summarise(&table_5_5(), None, &merged);
    assert_eq!(
        m[0].download.assignment,
        [Some(0), Some(0), Some(1), Some(1)]
    );
}

#[test]
fn alpha_p_of_the_thesis_table_3_4_classes() {
    // Table 3.4 (AMD, SHOC): download 5.8/5.3/2.3, readback 6.6/5.3/2.3
    // GB/s, one memory node per class; Phi = 12.8 GB/s.
    let gpu = gpu0();
    let mut recs = vec![gpu_record(&gpu, None, None)];
    for (dir, values) in [
        (Direction::Download, [5.8, 5.3, 2.3]),
        (Direction::Readback, [6.6, 5.3, 2.3]),
    ] {
        for (node, gb_s) in values.into_iter().enumerate() {
            let choice = CpuChoice {
                cpu: node,
                cpu_node: node,
            };
            let t = (1 << 26) as f64 / (gb_s * 1e9);
            recs.push(size_record(&gpu, None, node, choice, dir, 1 << 26, &[t]));
        }
    }
    // No Phi recorded: no alpha_p.
    let s = summarise(&recs, None, &ClassOptions::default());
    assert_eq!(s[0].alpha_p(0, Direction::Readback), None);
    // --phi 12800 gives the thesis' eq. 4.15 and 4.16.
    let s = summarise(&recs, Some(PCIE2_X16_MB_S), &ClassOptions::default());
    let a = |dir| -> Vec<String> { (0..3).map(|i| p4(s[0].alpha_p(i, dir).unwrap())).collect() };
    assert_eq!(a(Direction::Readback), ["0.5156", "0.4141", "0.1797"]);
    assert_eq!(a(Direction::Download), ["0.4531", "0.4141", "0.1797"]);
    assert_eq!(s[0].readback.len(), 3);
    let maxima: Vec<f64> = s[0].readback.classes.iter().map(|c| c.max).collect();
    for (got, want) in maxima.iter().zip([6600.0, 5300.0, 2300.0]) {
        assert!((got - want).abs() < 1e-6, "{maxima:?}");
    }
}

#[test]
fn best_records_carry_class_and_alpha_p() {
    let s = summarise(&table_5_5(), None, &ClassOptions::default());
    let best = best_records(&s);
    assert_eq!(best.len(), 8);
    let r = best
        .iter()
        .find(|r| r.name == "readback gpu0 node2")
        .unwrap();
    assert_eq!(r.params["kind"], "best");
    assert_eq!(r.params["class"], 2);
    assert_eq!(r.params["size_bytes"], 64 << 20);
    assert_eq!(p4(r.metrics["alpha_p"].value), "0.1804");
    assert_eq!(r.params["phi_mb_s"], 12_800.0);
    // Summarising a document that already holds best records gives
    // the same.
    let mut all = table_5_5();
    all.extend(best.clone());
    assert_eq!(summarise(&all, None, &ClassOptions::default()), s);
}

#[test]
fn the_best_comes_from_the_largest_sizes() {
    const M: usize = 1 << 20;
    // A small copy timed at a few event ticks looks fast; it does not
    // count.
    let figures = [
        (16 << 10, 90_000.0),
        (16 * M, 24_000.0),
        (64 * M, 25_500.0),
        (128 * M, 25_000.0),
        (256 * M, 25_100.0),
    ];
    assert_eq!(
        best_of(&figures),
        Some(Best {
            mb_s: 25_500.0,
            size_bytes: 64 * M
        })
    );
    // Ties go to the larger size; unusable figures are skipped.
    assert_eq!(
        best_of(&[(M, 10.0), (2 * M, 10.0), (4 * M, f64::NAN)]),
        Some(Best {
            mb_s: 10.0,
            size_bytes: 2 * M
        })
    );
    assert_eq!(
        best_of(&[(4096, 1.0)]),
        Some(Best {
            mb_s: 1.0,
            size_bytes: 4096
        })
    );
    assert_eq!(best_of(&[]), None);
    assert_eq!(best_of(&[(4096, 0.0)]), None);
}

#[test]
fn gpu_records_say_what_is_unknown() {
    let gpu = gpu0();
    let none = gpu_record(&gpu, None, None);
    assert_eq!(none.params["kind"], "gpu");
    assert!(none.metrics.is_empty());
    assert_eq!(none.notes.len(), 1, "{:?}", none.notes);
    assert!(none.notes[0].contains("not in sysfs"));
    let t = fixture("two-node");
    let mut acc = find_accelerator(&t, &gpu.pci_bus_id).unwrap().clone();
    acc.max_link_speed_gt_s = Some(32.0);
    let phi = Phi::of_link(&acc);
    let rec = gpu_record(&gpu, Some(&acc), phi.as_ref());
    assert_eq!(rec.params["gpu_node"], 1);
    assert_eq!(rec.params["phi_source"], "link");
    assert!((rec.metrics["phi_mb_s"].value - 31_507.69).abs() < 0.01);
    assert_eq!(rec.notes.len(), 1);
    assert!(
        rec.notes[0].contains("can do 32 GT/s x16"),
        "{:?}",
        rec.notes
    );
    // Phi read back from the record.
    let s = summarise(&[rec], None, &ClassOptions::default());
    assert_eq!(s[0].phi, phi);
    assert_eq!(s[0].gpu_node, Some(1));
    assert!(s[0].rows.is_empty());
}
