//! Tests of buffers against the running kernel.

use super::*;
use crate::memory::fill::{DEFAULT_SEED, pattern_word};
use crate::procfs::numa_maps;

const MIB: usize = 1 << 20;

fn first_node() -> usize {
    sys::online_nodes().first().unwrap()
}

#[test]
fn buffers_are_2mib_aligned_and_filled() {
    for (len, shared, kind) in [
        (4096, false, PageKind::Base),
        (3 * MIB + 5, false, PageKind::Thp),
        (MIB, true, PageKind::Base),
        (10 * MIB, true, PageKind::Thp),
    ] {
        let buf = Buffer::new(&BufferOptions::new(len).shared(shared).pages(kind)).unwrap();
        assert_eq!(buf.addr() % ALIGN, 0, "{len} {shared} {kind}");
        assert_eq!(buf.len(), len);
        assert!(buf.mapped_len() >= len && buf.mapped_len().is_multiple_of(buf.page_size()));
        let words = buf.as_slice::<u64>();
        assert_eq!(words.len(), len / 8);
        assert!(words.iter().all(|&w| w != 0), "zero word in {len} {shared}");
        assert!(
            words
                .iter()
                .enumerate()
                .all(|(i, &w)| w == pattern_word(DEFAULT_SEED, i as u64))
        );
    }
}

#[test]
fn pattern_does_not_repeat() {
    let mut words = vec![0u64; 1 << 16];
    fill_pattern(&mut words, 42, 0);
    let distinct: std::collections::HashSet<_> = words.iter().collect();
    assert_eq!(distinct.len(), words.len());
    assert!(words.iter().all(|&w| w != 0));
    // Chunked fills give the same contents as one fill.
    let mut chunked = vec![0u64; 1 << 16];
    for (c, chunk) in chunked.chunks_mut(1000).enumerate() {
        fill_pattern(chunk, 42, c as u64 * 1000);
    }
    assert_eq!(chunked, words);
    // Whole pages differ, so KSM finds nothing to merge.
    let pages: std::collections::HashSet<_> = words.chunks(512).collect();
    assert_eq!(pages.len(), words.len() / 512);
}

#[test]
fn bind_to_first_node_verifies_100_percent() {
    let node = first_node();
    let policy = MemPolicy::Bind(NodeSet::from_ids([node]));
    let buf = Buffer::new(
        &BufferOptions::new(16 * MIB)
            .pages(PageKind::Base)
            .policy(policy.clone()),
    )
    .unwrap();
    assert_eq!(buf.policy(), Some(&policy));
    assert_eq!(
        crate::placement::mempolicy::range_policy(buf.addr()).unwrap(),
        policy
    );
    let p = buf.verify().unwrap();
    assert_eq!(
        p.pages_total,
        (16 * MIB / crate::sys::mmap::base_page_size()) as u64
    );
    assert_eq!(p.pages_checked, p.pages_total);
    assert_eq!(p.pages_by_node, BTreeMap::from([(node, p.pages_total)]));
    assert_eq!(p.on_target_pct, Some(100.0));
    assert_eq!(p.huge_pct, 0.0);
    // Sampling gives the same answer from fewer pages.
    let s = buf.verify_sampled(100).unwrap();
    assert!(s.pages_checked <= 100);
    assert_eq!(s.on_target_pct, Some(100.0));
}

#[test]
fn binding_to_a_missing_node_fails_clearly() {
    let online = sys::online_nodes();
    let missing = online.end();
    let e = Buffer::new(
        &BufferOptions::new(4 * MIB).policy(MemPolicy::Bind(NodeSet::from_ids([missing]))),
    )
    .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.starts_with(&format!("mbind(len=4 MiB, policy=bind:{missing}) failed")),
        "{msg}"
    );
    assert!(
        msg.contains(&format!("not online (online nodes: {online})")),
        "{msg}"
    );
}

#[test]
fn untouched_buffers_have_no_pages_yet() {
    let buf = Buffer::new(
        &BufferOptions::new(8 * MIB)
            .pages(PageKind::Base)
            .touch(false),
    )
    .unwrap();
    let p = buf.verify().unwrap();
    assert!(p.pages_by_node.is_empty(), "{p:?}");
    assert_eq!(p.on_target_pct, None);
    let hist = PageHistogram::from_status(
        &pages::page_nodes(buf.addr(), buf.len(), buf.page_size()).unwrap(),
    );
    assert_eq!(hist.not_present, p.pages_total);
}

#[test]
fn default_policy_targets_the_touching_node() {
    let mut buf = Buffer::new(&BufferOptions::new(4 * MIB).touch(false)).unwrap();
    buf.fill(Fill::FirstWordPerPage);
    let node = buf.touched_node().unwrap();
    let p = buf.verify().unwrap();
    // Single-node machines always agree; elsewhere the thread may migrate.
    if sys::online_nodes().len() == 1 {
        assert_eq!(p.on_target_pct, Some(100.0));
        assert_eq!(p.pages_by_node.keys().copied().collect::<Vec<_>>(), [node]);
    }
    assert_eq!(buf.as_slice::<u64>()[0], pattern_word(DEFAULT_SEED, 0));
    assert_eq!(buf.as_slice::<u64>()[1], 0);
}

#[test]
fn thp_request_gets_huge_pages_when_enabled() {
    let enabled = selected(THP_ENABLED);
    if enabled.is_none() || enabled.as_deref() == Some("never") {
        eprintln!("skipped: transparent huge pages are not available ({enabled:?})");
        return;
    }
    let buf = Buffer::new(&BufferOptions::new(64 * MIB).pages(PageKind::Thp)).unwrap();
    assert_eq!(buf.page_kind(), PageKind::Thp);
    let p = buf.verify().unwrap();
    assert!(p.huge_pct > 0.0, "no huge pages: {p:?}");
    assert!(p.huge_pct <= 100.0);
    // And base pages when asked for them.
    let base = Buffer::new(&BufferOptions::new(64 * MIB).pages(PageKind::Base)).unwrap();
    assert_eq!(base.verify().unwrap().huge_pct, 0.0);
}

#[test]
fn neighbouring_buffers_report_their_own_huge_pages() {
    let enabled = selected(THP_ENABLED);
    if enabled.is_none() || enabled.as_deref() == Some("never") {
        eprintln!("skipped: transparent huge pages are not available ({enabled:?})");
        return;
    }
    // Same flags, mapped one after the other: without guards the kernel
    // merges them and smaps shows their huge pages as one.
    let touched = Buffer::new(&BufferOptions::new(16 * MIB)).unwrap();
    let untouched = Buffer::new(&BufferOptions::new(16 * MIB).touch(false)).unwrap();
    assert!(touched.verify().unwrap().huge_pct > 0.0);
    assert_eq!(untouched.verify().unwrap().huge_pct, 0.0);
}

#[test]
fn guard_pages_surround_the_buffer() {
    let buf = Buffer::new(&BufferOptions::new(3 * MIB).pages(PageKind::Base)).unwrap();
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let perms_at = |addr: usize| {
        maps.lines()
            .find(|l| {
                let (a, b) = l
                    .split_whitespace()
                    .next()
                    .unwrap()
                    .split_once('-')
                    .unwrap();
                let (a, b) = (
                    usize::from_str_radix(a, 16).unwrap(),
                    usize::from_str_radix(b, 16).unwrap(),
                );
                a <= addr && addr < b
            })
            .map(|l| l.split_whitespace().nth(1).unwrap().to_string())
    };
    assert_eq!(perms_at(buf.addr()).as_deref(), Some("rw-p"));
    assert_eq!(perms_at(buf.addr() - 1).as_deref(), Some("---p"));
    assert_eq!(
        perms_at(buf.addr() + buf.mapped_len()).as_deref(),
        Some("---p")
    );
}

#[test]
fn hugetlb_without_a_pool_falls_back_and_says_so() {
    let len = 8 * MIB;
    let free = read_count(&format!("{}/free_hugepages", hugetlb_dir(MIB2))).unwrap_or(0);
    let buf = Buffer::new(&BufferOptions::new(len).pages(PageKind::HugeTlb(MIB2))).unwrap();
    if free >= (len / MIB2) as u64 {
        // A pool exists; it may still be drained by others meanwhile.
        if buf.page_kind() == PageKind::HugeTlb(MIB2) {
            assert_eq!(buf.page_size(), MIB2);
            assert_eq!(buf.verify().unwrap().huge_pct, 100.0);
            return;
        }
    }
    assert_ne!(buf.page_kind(), PageKind::HugeTlb(MIB2));
    let reason = buf.fallback_reason().unwrap();
    assert!(reason.starts_with("hugetlb: "), "{reason}");
    assert!(reason.contains("free_hugepages"), "{reason}");
    assert_eq!(buf.requested_pages(), PageKind::HugeTlb(MIB2));
    assert_eq!(buf.page_size(), crate::sys::mmap::base_page_size());
    // Auto takes the same path.
    let auto = Buffer::new(&BufferOptions::new(len).pages(PageKind::Auto)).unwrap();
    assert_ne!(auto.page_kind(), PageKind::Auto);
    assert!(auto.fallback_reason().is_some());
}

#[test]
fn drop_unmaps() {
    // Shared mappings never merge with neighbours, so the exact range is
    // visible in /proc/self/maps while the buffer lives.
    let len = 6 * MIB + 3 * 4096;
    let buf = Buffer::new(&BufferOptions::new(len).shared(true).pages(PageKind::Base)).unwrap();
    let range = format!("{:x}-{:x} ", buf.addr(), buf.addr() + buf.mapped_len());
    let listed = || {
        std::fs::read_to_string("/proc/self/maps")
            .unwrap()
            .lines()
            .any(|l| l.starts_with(&range))
    };
    assert!(listed(), "{range} not in maps");
    drop(buf);
    assert!(!listed(), "{range} still mapped");
}

#[test]
fn numa_maps_shows_the_bound_buffer() {
    let node = first_node();
    let buf = Buffer::new(
        &BufferOptions::new(8 * MIB)
            .pages(PageKind::Base)
            .policy(MemPolicy::Bind(NodeSet::from_ids([node]))),
    )
    .unwrap();
    let maps = numa_maps::read_self_numa_maps().unwrap();
    let m = maps
        .iter()
        .find(|m| m.addr == buf.addr() as u64)
        .expect("buffer mapping in numa_maps");
    assert_eq!(m.policy, format!("bind:{node}"));
    assert!(m.anon);
    assert_eq!(m.page_size_kb, 4);
    let pages = (8 * MIB / 4096) as u64;
    assert_eq!(m.pages_by_node, BTreeMap::from([(node, pages)]));
    assert_eq!(m.dirty_pages, pages);
}

#[test]
fn numa_maps_names_every_policy_the_kernel_applies() {
    let node = first_node();
    let one = NodeSet::from_ids([node]);
    let mut cases = vec![
        (MemPolicy::Bind(one.clone()), format!("bind:{node}")),
        (
            MemPolicy::Interleave(one.clone()),
            format!("interleave:{node}"),
        ),
        (MemPolicy::Preferred(node), format!("prefer:{node}")),
        (MemPolicy::Local, "local".to_string()),
    ];
    if crate::placement::mempolicy::weighted_interleave_supported() {
        cases.push((
            MemPolicy::WeightedInterleave(one.clone()),
            format!("weighted interleave:{node}"),
        ));
    }
    let many = MemPolicy::PreferredMany(one.clone());
    for (policy, written) in cases.into_iter().chain([(many, String::new())]) {
        let buf = Buffer::new(
            &BufferOptions::new(2 * MIB)
                .pages(PageKind::Base)
                .policy(policy.clone()),
        )
        .unwrap();
        let applied = buf.policy().unwrap().clone();
        let maps = numa_maps::read_self_numa_maps().unwrap();
        let m = maps.iter().find(|m| m.addr == buf.addr() as u64).unwrap();
        match applied {
            // preferred-many is written `prefer (many)`, or falls back to
            // `prefer` on kernels before 5.15.
            MemPolicy::PreferredMany(_) => {
                assert_eq!(m.policy, format!("prefer (many):{node}"))
            }
            MemPolicy::Preferred(_) if written.is_empty() => {
                assert_eq!(m.policy, format!("prefer:{node}"))
            }
            _ => assert_eq!(m.policy, written),
        }
        assert_eq!(m.policy_nodes(), policy.nodes());
        assert_eq!(m.pages_by_node, BTreeMap::from([(node, 512)]), "{policy}");
    }
}

#[test]
fn a_range_policy_can_be_reset() {
    let node = first_node();
    let buf = Buffer::new(
        &BufferOptions::new(2 * MIB)
            .pages(PageKind::Base)
            .policy(MemPolicy::Bind(NodeSet::from_ids([node]))),
    )
    .unwrap();
    let reset = crate::placement::bind_range(
        buf.addr(),
        buf.mapped_len(),
        &MemPolicy::Default,
        MbindFlags::default(),
    )
    .unwrap();
    assert_eq!(reset, MemPolicy::Default);
    assert_eq!(
        crate::placement::mempolicy::range_policy(buf.addr()).unwrap(),
        MemPolicy::Default
    );
    // Strict re-binding to the node the pages are on succeeds.
    let strict = MbindFlags {
        strict: true,
        move_pages: true,
    };
    let policy = MemPolicy::Bind(NodeSet::from_ids([node]));
    assert_eq!(
        crate::placement::bind_range(buf.addr(), buf.mapped_len(), &policy, strict).unwrap(),
        policy
    );
}

#[test]
fn impossible_sizes_fail_with_the_size() {
    let e = Buffer::new(&BufferOptions::new(1 << 60).pages(PageKind::Base)).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.starts_with("mmap(len=1 EiB, private, pages=base) failed"),
        "{msg}"
    );
    assert_eq!(e.raw_os_error(), Some(libc::ENOMEM));
    assert!(msg.contains("not enough memory"), "{msg}");
    let e = Buffer::new(&BufferOptions::new(0)).unwrap_err();
    assert!(e.to_string().contains("at least one byte"), "{e}");
}

#[test]
fn shared_buffers_are_shared_mappings() {
    let perms = |buf: &Buffer| {
        let start = format!("{:x}-", buf.addr());
        std::fs::read_to_string("/proc/self/maps")
            .unwrap()
            .lines()
            .find(|l| l.starts_with(&start))
            .and_then(|l| l.split_whitespace().nth(1).map(str::to_string))
            .unwrap()
    };
    let shared = Buffer::new(&BufferOptions::new(MIB).shared(true).pages(PageKind::Base)).unwrap();
    assert!(shared.is_shared());
    assert_eq!(perms(&shared), "rw-s");
    let private = Buffer::new(
        &BufferOptions::new(MIB)
            .pages(PageKind::Base)
            .policy(MemPolicy::Local),
    )
    .unwrap();
    assert_eq!(perms(&private), "rw-p");
}

#[test]
fn page_kinds_parse_and_print() {
    for (text, kind) in [
        ("base", PageKind::Base),
        ("thp", PageKind::Thp),
        ("auto", PageKind::Auto),
        ("hugetlb:2M", PageKind::HugeTlb(MIB2)),
        ("hugetlb:1G", PageKind::HugeTlb(1 << 30)),
    ] {
        assert_eq!(kind.to_string(), text);
        assert_eq!(text.parse::<PageKind>().unwrap(), kind);
    }
    assert_eq!(
        "hugetlb".parse::<PageKind>().unwrap(),
        PageKind::HugeTlb(MIB2)
    );
    assert_eq!(
        "HugeTLB:1GiB".parse::<PageKind>().unwrap(),
        PageKind::HugeTlb(1 << 30)
    );
    for (text, says) in [
        ("hugetlb:3M", "powers of two"),
        ("hugetlb:2", "needs a unit"),
        ("hugetlb:1T", "huge pages come in K, M or G sizes"),
        ("thp:2M", "takes no size"),
    ] {
        let reason = text.parse::<PageKind>().unwrap_err().reason;
        assert!(reason.contains(says), "{text}: {reason}");
    }
    assert!("huge".parse::<PageKind>().is_err());
    assert_eq!(
        serde_json::to_string(&PageKind::HugeTlb(1 << 30)).unwrap(),
        "\"hugetlb:1G\""
    );
}

#[test]
fn placement_json_has_the_documented_names() {
    let p = Placement {
        pages_by_node: BTreeMap::from([(0, 10), (1, 2)]),
        on_target_pct: Some(83.5),
        huge_pct: 50.0,
        pages_checked: 12,
        pages_total: 12,
    };
    let json = serde_json::to_value(&p).unwrap();
    assert_eq!(json["pages_by_node"]["0"], 10);
    assert_eq!(json["pages_by_node"]["1"], 2);
    assert_eq!(json["on_target_pct"], 83.5);
    assert_eq!(json["huge_pct"], 50.0);
    let back: Placement = serde_json::from_value(json).unwrap();
    assert_eq!(back, p);
}

#[test]
fn the_atomic_view_is_the_same_memory() {
    let mut buf = Buffer::new(&BufferOptions::new(64 * 1024).pages(PageKind::Base)).unwrap();
    buf.as_mut_slice::<u64>()[9] = 41;
    let atoms = AtomicWords::new(buf);
    let words = atoms.words();
    assert_eq!(words.len(), 64 * 1024 / 8);
    assert_eq!(
        words[9].fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        41
    );
    assert_eq!(words[9].load(std::sync::atomic::Ordering::Relaxed), 42);
    let pages = 64 * 1024 / crate::sys::mmap::base_page_size();
    assert_eq!(atoms.verify().unwrap().pages_total, pages as u64);
}
