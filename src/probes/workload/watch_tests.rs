use super::*;
use crate::placement::pages::NOT_PRESENT;
use crate::procfs::numa_maps::parse_numa_maps;

const MAPS: &str = "\
55d0c0000000 default file=/usr/bin/numabench mapped=300 N0=300 kernelpagesize_kB=4
55d0c2000000 default heap anon=40 dirty=40 N0=40 kernelpagesize_kB=4
7f0000000000 default anon=262144 dirty=262144 N0=131072 N1=131072 kernelpagesize_kB=4
7f1000000000 default file=/anon_hugepage\\040(deleted) huge dirty=2 N1=2 kernelpagesize_kB=2048
7f2000000000 default file=/dev/zero\\040(deleted) dirty=1 N0=1 kernelpagesize_kB=4
7ffd00000000 default stack anon=30 dirty=30 N0=30 kernelpagesize_kB=4
";

#[test]
fn only_private_anonymous_data_counts() {
    let maps = parse_numa_maps(MAPS).unwrap();
    let (bytes, pages) = memory_of(&maps);
    // 131072 4 KiB pages = 512 MiB per node; the binary, heap, stack,
    // shared and hugetlb mappings are left out.
    assert_eq!(bytes, [(0, 512 << 20), (1, 512 << 20)].into());
    assert_eq!(pages, [(0, 131072), (1, 131072)].into());
}

/// The same process as `MAPS`, as `/proc/PID/maps` lists it, with a
/// guard page and the kernel's own mappings, which `numa_maps` shows
/// without pages.
const VMAS: &str = "\
55d0c0000000-55d0c012c000 r-xp 00000000 fd:01 1835042                    /usr/bin/numabench
55d0c2000000-55d0c2028000 rw-p 00000000 00:00 0                          [heap]
7f0000000000-7f0040000000 rw-p 00000000 00:00 0 \n\
7f0040000000-7f0040001000 ---p 00000000 00:00 0 \n\
7f1000000000-7f1000400000 rw-p 00000000 00:10 4242                       /anon_hugepage (deleted)
7f2000000000-7f2000001000 rw-s 00000000 00:01 17                         /dev/zero (deleted)
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
7ffd00100000-7ffd00102000 r-xp 00000000 00:00 0                          [vdso]
";

#[test]
fn the_mapping_list_selects_what_numa_maps_counts() {
    let vmas = crate::procfs::maps::parse_maps(VMAS).unwrap();
    let picked: Vec<u64> = vmas
        .iter()
        .filter(|v| is_test_vma(v))
        .map(|v| v.start)
        .collect();
    let counted: Vec<u64> = parse_numa_maps(MAPS)
        .unwrap()
        .iter()
        .filter(|m| is_test_memory(m))
        .map(|m| m.addr)
        .collect();
    assert_eq!(picked, counted);
    assert_eq!(picked, [0x7f00_0000_0000]);
}

#[test]
fn hidden_pages_keep_the_node_they_were_last_seen_on() {
    let sample = |status: [i32; 4]| RangesSample {
        pages: status
            .iter()
            .enumerate()
            .map(|(i, &status)| crate::placement::pages::SampledPage {
                addr: 0x1000 * (i + 1),
                weight: 10,
                status,
            })
            .collect(),
        stride: 10,
        pages_total: 40,
    };
    let efault = -libc::EFAULT;
    let mut last = Vec::new();
    let mut first = Look::default();
    let unplaced = tally(&mut last, &sample([0, 1, NOT_PRESENT, 1]), 4096, &mut first);
    assert_eq!(unplaced, 0, "a page never touched is not hidden");
    assert_eq!(first.pages, [(0, 10), (1, 20)].into());
    assert_eq!((first.sampled_pages, first.carried_pages), (4, 0));
    // Without a node now: the first, second and fourth keep theirs;
    // the third was never seen on one, so it is not there.
    let mut second = Look::default();
    let unplaced = tally(
        &mut last,
        &sample([NOT_PRESENT, efault, NOT_PRESENT, efault]),
        4096,
        &mut second,
    );
    assert_eq!(second.pages, [(0, 10), (1, 20)].into());
    assert_eq!(second.mem, [(0, 40960), (1, 81920)].into());
    assert_eq!(second.carried_pages, 30);
    assert_eq!(unplaced, 0, "every hidden page was seen before");
    // Seen again on another node: it moved.
    let mut third = Look::default();
    tally(
        &mut last,
        &sample([1, NOT_PRESENT, 0, NOT_PRESENT]),
        4096,
        &mut third,
    );
    assert_eq!(third.pages, [(0, 10), (1, 30)].into());
    assert_eq!(third.carried_pages, 20);
    // A process seen for the first time has nothing to carry.
    let mut other = Look::default();
    tally(&mut Vec::new(), &sample([NOT_PRESENT; 4]), 4096, &mut other);
    assert!(other.pages.is_empty(), "{other:?}");
    // Hidden behind a hinting fault at its first look: the sample cannot
    // place those pages, and says how many it stands for.
    let mut hidden = Look::default();
    let unplaced = tally(
        &mut Vec::new(),
        &sample([0, efault, efault, 1]),
        4096,
        &mut hidden,
    );
    assert_eq!(unplaced, 20);
    assert_eq!(hidden.pages, [(0, 10), (1, 10)].into());
}

#[test]
fn threads_and_doubled_cores() {
    // interleaved-smt: SMT siblings numbered apart.
    let topo = crate::topology::fixture("interleaved-smt");
    let map = CpuMap::of(&topo);
    let c0 = &topo.cpus[0];
    let sibling = c0.smt_siblings.iter().find(|&s| s != c0.id).unwrap();
    let other_core = topo
        .cpus
        .iter()
        .find(|c| !c.smt_siblings.contains(c0.id))
        .unwrap()
        .id;
    assert_eq!(map.doubled_cores(&[c0.id, other_core]), 0);
    assert_eq!(map.doubled_cores(&[c0.id, sibling, other_core]), 1);
    assert_eq!(map.doubled_cores(&[c0.id, c0.id]), 1);
    let per_node = map.threads_per_node(&[c0.id, sibling, other_core]);
    assert_eq!(per_node.values().sum::<usize>(), 3);
    assert_eq!(
        per_node[&c0.node.unwrap()],
        2 + usize::from(topo.cpu(other_core).unwrap().node == c0.node)
    );
}

#[test]
fn a_look_at_this_process_sees_its_memory() {
    // A private anonymous area written here shows up in the look by
    // either method, and the look's CPU time is counted.
    let topo = crate::topology::read_topology(&crate::topology::SysfsRoot::live()).unwrap();
    let mut r = crate::sys::Region::map(32 << 20, false, 0).unwrap();
    r.fill_counting(1);
    let me = std::process::id() as i32;
    // 1024 pages is too few a sample for a walk to cost less: sampled.
    let sampled = Method::Sampled { max_pages: 1024 };
    for method in [sampled, Method::Exact] {
        let mut w = Watch::new(&topo, method);
        let look = w.look(1.5, &[me], &|| true).unwrap().clone();
        let total: u64 = look.mem.values().sum();
        // A sample may miss a window's worth at either end of the area.
        let edges = 2 * look.stride * crate::sys::mmap::base_page_size() as u64;
        assert!(total + edges >= 32 << 20, "{method:?}: {look:?}");
        assert_eq!(look.t, 1.5);
        // Every thread of the test harness but the first is a worker here.
        assert!(look.threads.values().sum::<usize>() >= 1, "{look:?}");
        assert!(w.cpu_s > 0.0);
        assert_eq!(w.method, method, "{:?}", w.fallback);
        if method == Method::Exact {
            assert!(w.policies.contains("default"), "{:?}", w.policies);
            assert_eq!((look.sampled_pages, look.stride), (0, 1));
            assert!(look.exact);
        } else {
            assert!(w.policies.is_empty(), "{:?}", w.policies);
            assert!(!look.exact, "{look:?}");
            assert!(look.sampled_pages > 0 && look.sampled_pages <= 1024 + 64);
            assert!(look.stride > WALK_PAGES_PER_QUERY as u64, "{look:?}");
        }
        // A look during which a task left its loop is not kept, but costs.
        let before = w.cpu_s;
        assert!(w.look(2.0, &[me], &|| false).is_none());
        assert_eq!((w.looks.len(), w.dropped), (1, 1));
        assert!(w.cpu_s > before);
    }
    drop(r);
}

#[test]
fn a_sample_agrees_with_numa_maps_on_the_same_memory() {
    use crate::placement::{MbindFlags, MemPolicy, bind_range};
    use crate::procfs::numa_maps::read_self_numa_maps;
    use std::sync::atomic::Ordering::Relaxed;
    let page = crate::sys::mmap::base_page_size();
    let n = 16 * 1024;
    let r = crate::sys::Region::map((n + 2) * page, false, 0).unwrap();
    let (mid, len) = (r.addr() + page, n * page);
    // A policy of its own makes the range a mapping of its own, apart
    // from its neighbours, and spreads it where there are several nodes;
    // base pages make every page count.
    let nodes = crate::placement::sys::mems_allowed()
        .unwrap_or_else(crate::placement::sys::online_nodes)
        .intersection(&crate::placement::sys::nodes_with_memory());
    bind_range(
        mid,
        len,
        &MemPolicy::Interleave(nodes),
        MbindFlags::default(),
    )
    .unwrap();
    crate::sys::mmap::madvise(mid, len, crate::sys::mmap::Advice::NoHugePage).unwrap();
    // 30% written in one run, then about a third of the rest scattered.
    let words = r.words();
    for i in 0..n {
        let scattered = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
        if i < n * 3 / 10 || scattered.is_multiple_of(3) {
            words[(i + 1) * page / 8].store(i as u64 | 1, Relaxed);
        }
    }
    let exact = read_self_numa_maps()
        .unwrap()
        .into_iter()
        .find(|m| m.addr == mid as u64)
        .expect("the range has a numa_maps line of its own");
    // Every page queried: the same counts as numa_maps.
    let every = sample_ranges_of(0, &[(mid, len)], page, 1).unwrap();
    assert_eq!(every.by_node(), exact.pages_by_node);
    assert_eq!(every.resident() + every.not_resident(), n as u64);
    // 1 page in 4: the resident pages and each node's share of them
    // within 3 percentage points of numa_maps' (the sample's standard
    // error here is about 0.6 points).
    let s = sample_ranges_of(0, &[(mid, len)], page, stride_for(&[n], 4096)).unwrap();
    assert_eq!((s.stride, s.pages.len()), (4, 4096));
    let points = |a: f64, b: f64| (a - b).abs() * 100.0;
    let (got, want) = (s.resident() as f64, exact.pages() as f64);
    assert!(
        points(got / n as f64, want / n as f64) <= 3.0,
        "{got} vs {want} of {n}"
    );
    for (node, &p) in &exact.pages_by_node {
        let sampled = s.by_node().get(node).copied().unwrap_or(0) as f64;
        assert!(
            points(sampled / got, p as f64 / want) <= 3.0,
            "node {node}: {s:?} vs {exact:?}"
        );
    }
    drop(r);
}
