//! Peak injection measured: the targets, the thread counts, the kernels
//! and the notes of a cut.

use super::*;
use crate::kernels::Op;

#[test]
fn thread_counts_are_capped_at_the_node_and_measured_once() {
    let cfg = PeakConfig {
        threads: vec![
            ThreadCount::All,
            ThreadCount::Some(8),
            ThreadCount::Some(1),
            ThreadCount::Some(2),
        ],
        ..PeakConfig::default()
    };
    assert_eq!(counts(&cfg, 4), [1, 2, 4]);
    assert_eq!(counts(&cfg, 16), [1, 2, 8, 16]);
    assert_eq!(counts(&PeakConfig::default(), 1), [1]);
}

#[test]
fn every_mix_has_both_access_kinds_or_the_missing_ones_are_named() {
    let (ks, notes) = kernels_for(&Mix::ALL, &[Store::Regular, Store::NonTemporal]);
    assert!(ks.iter().all(|(m, k)| k.op == m.op()));
    let regular = ks.iter().filter(|(_, k)| k.store == Store::Regular).count();
    assert_eq!(regular, Mix::ALL.len());
    let nt = ks.len() - regular;
    if nt == 0 {
        assert!(notes[0].contains("read nontemporal"), "{notes:?}");
        assert!(notes[0].contains("write nontemporal"), "{notes:?}");
    } else {
        assert_eq!(nt, Mix::ALL.len());
        assert!(
            ks.iter()
                .any(|(m, k)| *m == Mix::Read && k.access() == "non-temporal loads")
        );
        assert!(notes.is_empty());
    }
}

#[test]
fn interleave_is_a_target_only_over_two_nodes_or_more() {
    assert_eq!(targets(&[0], true), [Target::Node(0)]);
    let t = targets(&[0, 2], true);
    assert_eq!(t.len(), 3);
    assert_eq!(t[2], Target::Interleave(vec![0, 2]));
    assert_eq!(t[2].name(), "interleave");
    assert_eq!(targets(&[0, 2], false).len(), 2);
}

#[test]
fn interleaved_working_set_is_capped_by_each_nodes_share() {
    let mut t = crate::topology::fixture("two-node");
    let cpus = node_cpus(&t, 0);
    let cfg = PeakConfig::default();
    let both = Target::Interleave(vec![0, 1]);
    let (full, note, _) = working_set(&t, &cfg, &cpus, &both);
    assert!(note.is_none());
    t.nodes[1].mem_free_bytes = Some(32 << 20);
    let (capped, note, condition) = working_set(&t, &cfg, &cpus, &both);
    assert_eq!(condition, None, "the node, not a limit, was short");
    assert_eq!(capped, 2 * (16 << 20));
    assert!(capped < full && note.unwrap().contains("node 1"));
    // Where the memory limit is what is short, the cut says so as data.
    t.memory_limit = Some(crate::topology::MemoryLimit {
        headroom_bytes: 16 << 20,
        limit_bytes: 64 << 20,
        source: "memory cgroup /x (memory.max)".into(),
    });
    let (_, note, condition) = working_set(&t, &cfg, &cpus, &both);
    assert!(note.unwrap().contains("memory cgroup /x"));
    assert_eq!(
        condition,
        Some(Condition::ScaledByMemoryLimit {
            source: "memory cgroup /x (memory.max)".into()
        })
    );
}

#[test]
fn a_run_its_time_limit_cut_carries_the_limit_on_its_first_record() {
    let limit = Some(Duration::from_secs(20));
    assert!(short_note(12, 12, limit).is_none());
    assert!(short_note(4, 12, None).is_none());
    let (note, condition) = short_note(4, 12, limit).unwrap();
    assert_eq!(
        note,
        "time limit of 20 s reached: 4 of 12 measurement(s) made"
    );
    let one = kernels::best(Op::Read, Store::Regular).unwrap();
    let peak = Peak {
        runs: vec![MixRun {
            cpu_node: 0,
            target: Target::Node(0),
            mix: Mix::Read,
            bandwidth: measured(one, 100.0),
        }],
        notes: vec![note.clone()],
        conditions: vec![condition],
        failed: None,
    };
    let records = peak.records();
    assert_eq!(records[0].cut_by_time_limit(), Some(20.0));
    assert_eq!(records[0].notes, [note]);
    assert!(records[1..].iter().all(|r| r.conditions.is_empty()));
}

/// A bandwidth run of `kernel` whose STREAM figure is `mb_s`.
fn measured(kernel: &'static KernelSpec, mb_s: f64) -> Bandwidth {
    let array_bytes = 1 << 20;
    let counted = (array_bytes / 8) as f64 * kernel.op.stream_bytes_per_element() as f64;
    Bandwidth {
        kernel,
        threads: 1,
        array_bytes,
        reps: 1,
        iterations: 2,
        times_s: vec![counted / (mb_s * 1e6)],
        elapsed_s: 0.1,
        seen: Default::default(),
    }
}

#[test]
fn a_read_is_measured_in_one_pass_and_in_streams_and_the_faster_kept() {
    let stores = [Store::Regular, Store::NonTemporal];
    let (ks, notes) = peak_kernels(&[Mix::Read, Mix::R1W1], &stores);
    let (plain, _) = kernels_for(&[Mix::Read, Mix::R1W1], &stores);
    let streamed: Vec<_> = ks.iter().filter(|(_, k)| k.streams > 1).collect();
    // The portable build has a regular multi-stream read everywhere.
    assert!(!streamed.is_empty());
    assert!(
        streamed
            .iter()
            .all(|(m, k)| (*m == Mix::Read && k.op == Op::Read)
                || (*m == Mix::R1W1 && k.op == Op::Copy && k.store == Store::NonTemporal))
    );
    assert_eq!(ks.len(), plain.len() + streamed.len());
    assert_eq!(keep_fastest_count(&ks), plain.len());
    assert!(notes.iter().any(|n| n.contains("read_s8_")), "{notes:?}");
    // Where the CPU streams stores, the 1:1 copy is tried in streams too.
    let copies = streamed.iter().filter(|(m, _)| *m == Mix::R1W1).count();
    let nt_copy = kernels::best_streams(Op::Copy, Store::NonTemporal);
    assert_eq!(copies, usize::from(nt_copy.is_some()));
    assert_eq!(
        notes.iter().any(|n| n.contains("copy_s4_nt_")),
        nt_copy.is_some(),
        "{notes:?}"
    );

    let one = kernels::best(Op::Read, Store::Regular).unwrap();
    let many = kernels::best_streams(Op::Read, Store::Regular).unwrap();
    let copy = kernels::best(Op::Copy, Store::Regular).unwrap();
    let kept = keep_fastest(vec![
        (Mix::Read, measured(one, 100.0)),
        (Mix::R1W1, measured(copy, 50.0)),
        (Mix::Read, measured(many, 150.0)),
    ]);
    assert_eq!(kept.len(), 2);
    assert_eq!(
        kept[0].1.kernel.name, many.name,
        "the faster, in the first's place"
    );
    assert_eq!(kept[1].1.kernel.name, copy.name);
    let kept = keep_fastest(vec![
        (Mix::Read, measured(one, 100.0)),
        (Mix::Read, measured(many, 90.0)),
    ]);
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].1.kernel.name, one.name);
}

#[test]
fn best_ignores_figures_that_are_not_finite() {
    let v = [1.0, f64::NAN, 3.0, 2.0];
    assert_eq!(best(&v, |x| *x), Some(&3.0));
    assert_eq!(best(&[] as &[f64], |x| *x), None);
}
