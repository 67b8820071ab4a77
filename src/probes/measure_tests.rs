//! Bandwidth of teams and latency of chases on this machine.

use super::*;
use crate::kernels::{Op, Store};

fn seat() -> Seat {
    let topo = crate::topology::read_topology(&crate::topology::SysfsRoot::live()).unwrap();
    super::super::seats::spread(&topo, 1)[0]
}

#[test]
fn kernels_on_one_team_each_run_over_their_own_array_size() {
    let read = kernels::best(Op::Read, Store::Regular).unwrap();
    let triad = kernels::best(Op::Triad, Store::Regular).unwrap();
    let timing = Timing {
        tries: 2,
        min_run: Duration::from_millis(2),
    };
    let runs = [(read, 3 << 20), (triad, 1 << 20)];
    let mut asked = Vec::new();
    let out = bandwidths_split(&[seat()], &runs, (PageKind::Base, timing), &[], &mut |i| {
        asked.push(i);
        true
    })
    .unwrap();
    assert_eq!(asked, [0, 1]);
    assert_eq!(out.len(), 2);
    for (b, (kernel, bytes)) in out.iter().zip(runs) {
        assert_eq!(b.kernel.name, kernel.name);
        assert_eq!(b.array_bytes, bytes);
        assert_eq!(b.times_s.len(), 2);
        assert!(b.lm_mb_s().is_finite() && b.lm_mb_s() > 0.0, "{b:?}");
        // Both ran on the one team's memory, placed once.
        assert_eq!(b.seen, out[0].seen);
    }
    // Triad moves 3 arrays' elements per pass, read one: the STREAM
    // count knows the kernel, not just the size.
    let t = &out[1];
    assert!((t.stream_mb_s() / t.lm_mb_s() - 3.0).abs() < 1e-9);
}

#[test]
fn one_chase_buffer_serves_every_thread_that_chases_it() {
    let s = seat();
    for pattern in [Pattern::FullRandom, Pattern::Stride { stride: 64 }] {
        let size = 4 << 20;
        let (a, b) = with_node_chase(s, size, PageKind::Base, &pattern, |chase| {
            Ok((chase.latency_from(s.cpu)?, chase.latency_from(s.cpu)?))
        })
        .unwrap();
        for l in [&a, &b] {
            assert_eq!((l.size_bytes, l.pattern), (size, pattern));
            assert!(l.samples.len() >= MIN_SAMPLES, "{l:?}");
            assert!(l.median_ns() > 0.0, "{l:?}");
            assert_eq!(l.seen.cpus_seen, [s.cpu]);
            assert_eq!(l.seen.verified_pct, 100.0, "{l:?}");
            assert_eq!(l.seen.page_kind, "base");
            // The whole buffer checked each time: 1024 pages of 4 KiB.
            assert_eq!(l.seen.pages_by_node.values().sum::<u64>(), 1024, "{l:?}");
            assert_eq!(l.seen.pages_by_node.keys().collect::<Vec<_>>(), [&s.node]);
        }
    }
}

#[test]
fn teams_of_every_size_measure_on_one_set_of_arrays() {
    let s = seat();
    let triad = kernels::best(Op::Triad, Store::Regular).unwrap();
    let timing = Timing {
        tries: 2,
        min_run: Duration::from_millis(2),
    };
    let ws = 6 << 20;
    let mut arrays = NodeArrays::build((s.node, ws), (3, 2), PageKind::Base, s.cpu).unwrap();
    for n in 1..=2 {
        let seats = vec![s; n];
        let b = bandwidth_on(&seats, &mut arrays, triad, timing).unwrap();
        assert_eq!(b.threads, n);
        // As the per-thread path sizes them: the working set shared.
        assert_eq!(b.array_bytes, super::super::sizing::array_bytes(ws, 3, n));
        assert_eq!(b.times_s.len(), 2);
        assert!(b.stream_mb_s() > 0.0, "{b:?}");
        assert_eq!(b.seen.verified_pct, 100.0, "{b:?}");
        assert_eq!(b.seen.cpus_seen, vec![s.cpu; n]);
        let pages: u64 = b.seen.pages_by_node.values().sum();
        let block = super::super::team::layout_bytes(b.array_bytes, 3);
        assert!(pages as usize * 4096 >= n * block, "{n}: {pages} pages");
    }
    // A kernel of more arrays than they were laid out for is refused.
    let add3 = kernels::best(Op::Add3, Store::Regular).unwrap();
    let refused = bandwidth_on(&[s], &mut arrays, add3, timing).unwrap_err();
    assert!(refused.to_string().contains("laid out for 3"), "{refused}");
}

#[test]
fn runs_end_at_the_first_no() {
    let read = kernels::best(Op::Read, Store::Regular).unwrap();
    let timing = Timing {
        tries: 1,
        min_run: Duration::from_millis(1),
    };
    let runs = [(read, 1 << 20), (read, 2 << 20), (read, 1 << 20)];
    let out = bandwidths_split(&[seat()], &runs, (PageKind::Base, timing), &[], &mut |i| {
        i < 1
    })
    .unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].array_bytes, 1 << 20);
    assert!(
        bandwidths_split(&[seat()], &[], (PageKind::Base, timing), &[], &mut |_| true)
            .unwrap()
            .is_empty()
    );
}
