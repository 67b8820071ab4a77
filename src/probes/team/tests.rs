//! The team on memory of its own and on memory it was handed.

use super::*;

#[test]
fn split_pattern_repeats_nodes_by_weight() {
    assert_eq!(split_pattern(&[(0, 3), (1, 1)]), [0, 0, 0, 1]);
    assert_eq!(split_pattern(&[(2, 1), (0, 2)]), [2, 0, 0]);
    assert!(split_pattern(&[]).is_empty());
    assert_eq!(split_pattern(&[(1, 0), (3, 1)]), [3]);
}

/// Up to `n` seats on this machine's first usable node, CPUs repeated
/// where it has fewer.
fn local_seats(n: usize) -> Vec<Seat> {
    let topo = crate::topology::read_topology(&crate::topology::SysfsRoot::live()).unwrap();
    let first = super::super::seats::spread(&topo, 1)[0];
    let cpus = super::super::seats::node_cpus(&topo, first.node);
    (0..n)
        .map(|i| Seat {
            cpu: cpus[i % cpus.len()],
            node: first.node,
        })
        .collect()
}

#[test]
fn a_team_on_handed_memory_runs_each_thread_in_its_own_block() {
    let max = 4;
    let seats = local_seats(max);
    let node = seats[0].node;
    let triad = crate::kernels::best(Op::Triad, crate::kernels::Store::Regular).unwrap();
    let ws = 3 << 20;
    let mut arrays = NodeArrays::build((node, ws), (3, max), PageKind::Base, seats[0].cpu).unwrap();
    let region = arrays.span();
    let region = region.addr..region.addr + region.len;
    for n in 1..=max {
        let array_bytes = arrays.array_bytes(n);
        let (spans, runs) = with_team_on(&seats[..n], &mut arrays, |team, setup| {
            for (p, seat) in setup.placements.iter().zip(&seats) {
                assert_eq!(p.on_target_pct, Some(100.0), "{n}: {p:?}");
                assert_eq!(p.pages_by_node.keys().collect::<Vec<_>>(), [&seat.node]);
            }
            let want: Vec<usize> = seats[..n].iter().map(|s| s.cpu).collect();
            assert_eq!(setup.cpus_seen, want);
            let runs = team.run(triad, array_bytes, 2, 0).spans.len();
            Ok((setup.spans.clone(), runs))
        })
        .unwrap();
        assert_eq!((spans.len(), runs), (n, n));
        let mut sorted = spans.clone();
        sorted.sort_by_key(|s| s.start);
        for (i, s) in sorted.iter().enumerate() {
            assert!(region.start <= s.start && s.end <= region.end, "{n}: {s:?}");
            assert!(s.len() >= layout_bytes(array_bytes, 3), "{n}: {s:?}");
            if let Some(next) = sorted.get(i + 1) {
                assert!(s.end <= next.start, "{n}: {s:?} overlaps {next:?}");
            }
        }
    }
    // A seat elsewhere than the arrays, or more seats than they were
    // laid out for, is refused before any thread starts.
    let mut off = seats[0];
    off.node += 1;
    let refused = with_team_on(&[off], &mut arrays, |_, _| Ok(())).unwrap_err();
    assert!(
        refused.to_string().contains("arrays are on node"),
        "{refused}"
    );
    let five = local_seats(max + 1);
    let refused = with_team_on(&five, &mut arrays, |_, _| Ok(())).unwrap_err();
    assert!(
        refused.to_string().contains("1 to 4 thread(s)"),
        "{refused}"
    );
}

#[test]
fn a_team_of_its_own_memory_reports_where_each_thread_mapped_it() {
    let seats = local_seats(2);
    let memory = TeamMemory {
        array_bytes: 1 << 20,
        arrays: 2,
        pages: PageKind::Base,
        split: Vec::new(),
    };
    let spans = with_team(&seats, &memory, |_, setup| Ok(setup.spans.clone())).unwrap();
    assert_eq!(spans.len(), 2);
    assert!(spans.iter().all(|s| s.len() >= memory.thread_bytes()));
    assert!(spans[0].end <= spans[1].start || spans[1].end <= spans[0].start);
}

#[test]
fn arrays_fit_the_memory_laid_out_for_the_largest() {
    let memory = TeamMemory {
        array_bytes: 3 << 20,
        arrays: 1,
        pages: PageKind::Base,
        split: Vec::new(),
    };
    assert_eq!(memory.thread_bytes(), (3 << 20) + layout::ARRAY_GAP);
    assert!(fits(memory.thread_bytes(), 3 << 20, 1));
    assert!(fits(memory.thread_bytes(), 1 << 20, 3) == (3 * stride(1 << 20) <= stride(3 << 20)));
    assert!(!fits(memory.thread_bytes(), 1 << 20, 4));
    assert!(!fits(memory.thread_bytes(), (3 << 20) + 1, 1));
}
