use super::*;
use crate::kernels::{Mix, Op, Store};
use crate::probes::measure::{Bandwidth, Seen};
use crate::probes::peak::{MixRun, Peak, Target};

/// A run whose best timed run lasted `secs` per MB counted: its STREAM
/// figure is exactly `mb_s`.
fn run(c: usize, target: Target, mix: Mix, store: Store, threads: usize, mb_s: f64) -> MixRun {
    let kernel = crate::kernels::best(mix.op(), store).unwrap_or_else(|| {
        crate::kernels::KERNELS
            .iter()
            .find(|k| k.op == mix.op() && k.store == store)
            .expect("some kernel")
    });
    let array_bytes = 1 << 20;
    let counted =
        threads as f64 * (array_bytes / 8) as f64 * mix.op().stream_bytes_per_element() as f64;
    MixRun {
        cpu_node: c,
        target,
        mix,
        bandwidth: Bandwidth {
            kernel,
            threads,
            array_bytes,
            reps: 1,
            iterations: 4,
            times_s: vec![counted / (mb_s * 1e6), counted / (mb_s * 0.9e6)],
            elapsed_s: 0.1,
            seen: Seen {
                verified_pct: 100.0,
                cpus_seen: vec![0],
                page_kind: "base".into(),
                ..Default::default()
            },
        },
    }
}

fn doc() -> Document {
    let mut runs = Vec::new();
    for (target, scale) in [
        (Target::Node(0), 1.0),
        (Target::Node(1), 0.5),
        (Target::Interleave(vec![0, 1]), 0.75),
    ] {
        for threads in [1, 2] {
            let t = threads as f64;
            runs.push(run(
                0,
                target.clone(),
                Mix::Read,
                Store::Regular,
                threads,
                10_000.0 * t * scale,
            ));
            runs.push(run(
                0,
                target.clone(),
                Mix::R1W1,
                Store::Regular,
                threads,
                9_000.0 * t * scale,
            ));
            if crate::kernels::best(Op::Copy, Store::NonTemporal).is_some() {
                runs.push(run(
                    0,
                    target.clone(),
                    Mix::R1W1,
                    Store::NonTemporal,
                    threads,
                    14_000.0 * t * scale,
                ));
            }
        }
    }
    let peak = Peak {
        runs,
        notes: vec!["a note for the reader".into()],
        conditions: Vec::new(),
        failed: None,
    };
    let mut doc = Document::new(&crate::topology::fixture("two-node"));
    doc.records = peak.records();
    doc
}

#[test]
fn the_best_mix_and_store_kind_is_named_per_target_and_thread_count() {
    let doc = doc();
    let records: Vec<&Record> = doc.records.iter().collect();
    let best = of_kind(&records, kind::BEST);
    assert_eq!(best.len(), 3 * 2, "one per target and thread count");
    let nt = crate::kernels::best(Op::Copy, Store::NonTemporal).is_some();
    for b in &best {
        let (mix, store) = if nt {
            ("1:1", "nontemporal")
        } else {
            ("read", "regular")
        };
        assert_eq!(b.str_param(pk::param::MIX), Some(mix), "{}", b.name);
        assert_eq!(b.str_param(pk::param::STORE), Some(store));
    }
    let local_2t = best
        .iter()
        .find(|r| {
            r.str_param(pk::param::TARGET) == Some("0") && r.u64_param(param::THREADS) == Some(2)
        })
        .unwrap();
    let want = if nt { 28_000.0 } else { 20_000.0 };
    assert!((local_2t.value(metric::BANDWIDTH_MB_S).unwrap() - want).abs() < 1e-6 * want);
    assert!(
        best.iter()
            .any(|r| r.str_param(pk::param::TARGET) == Some("interleave"))
    );
    assert!(
        best.iter().all(|r| r.has_param(param::MEM_NODE)
            != (r.str_param(pk::param::TARGET) == Some("interleave")))
    );
}

#[test]
fn sections_hold_a_table_per_target_with_every_figure() {
    let doc = doc();
    let records: Vec<&Record> = doc.records.iter().collect();
    let sections = PeakView.sections(&doc, &records);
    let titles: Vec<&str> = sections.iter().map(|s| s.title.as_str()).collect();
    assert_eq!(titles[0], "best mix and store kind, MB/s");
    assert!(
        titles.contains(&"CPU node 0 -> memory node 1, MB/s"),
        "{titles:?}"
    );
    assert!(titles.contains(&"CPU node 0 -> interleaved memory, MB/s"));
    let remote = sections
        .iter()
        .find(|s| s.title.contains("node 1"))
        .unwrap();
    assert_eq!(remote.header[0], "mix");
    for col in ["1t regular", "2t regular"] {
        assert!(
            remote.header.iter().any(|h| h == col),
            "{:?}",
            remote.header
        );
    }
    let read = remote.rows.iter().find(|r| r[0] == "read").unwrap();
    assert_eq!(read[1], "5000");
    assert!(
        remote
            .lines
            .iter()
            .any(|l| l.starts_with("best with 2 thread(s)"))
    );
    assert!(remote.lines.iter().any(|l| l.contains("100.0%")));
    assert!(
        sections
            .iter()
            .any(|s| s.lines.contains(&"a note for the reader".to_string()))
    );
}

#[test]
fn html_has_a_heatmap_and_bars_per_target_and_csv_marks_the_best() {
    let doc = doc();
    let records: Vec<&Record> = doc.records.iter().collect();
    let blocks = PeakView.blocks(&doc, &records);
    let bars: Vec<&Bars> = blocks
        .iter()
        .filter_map(|b| match b {
            Block::Bars(b) => Some(b),
            _ => None,
        })
        .collect();
    assert_eq!(bars.len(), 3);
    assert_eq!(bars[0].groups[0].label, "read");
    assert_eq!(bars[0].groups[0].values.len(), bars[0].series.len());
    let Some(Block::Heatmap(h)) = blocks.first() else {
        panic!("the heatmap comes first");
    };
    assert_eq!(h.rows[0].cells.len(), 3);
    assert_eq!(h.rows[0].reference, h.rows[0].cells[0]);
    let csv = PeakView.csv(&doc, &records).unwrap();
    let best_col = csv.header.iter().position(|h| h == "best").unwrap();
    let marked = csv.rows.iter().filter(|r| r[best_col] == "true").count();
    assert_eq!(marked, 6);
}
