//! The parent's looks at a running test: how much of the test's memory is
//! on each node, and where each worker thread last ran
//! (`/proc/PID/task/TID/stat`). Each look's own CPU time is measured, so
//! the run can say what watching it cost.
//!
//! Memory per node comes from a sample by default: the test's mappings
//! from `/proc/PID/maps` (a list, no page walk) and `move_pages` queries of
//! a fixed number of their pages, spread evenly over all of them, each
//! counting for the pages of its window. A look then costs the same for
//! 1 GiB or 100 GiB. `/proc/PID/numa_maps` counts every page exactly (and
//! shows the mappings' memory policies) but walks every page-table entry
//! of every mapping at each look, which for gigabytes of base pages costs
//! more than the 1% of the run that watching should.

use crate::placement::numa_maps::{NumaMapping, read_numa_maps};
use crate::placement::pages::{RangesSample, sample_ranges_of, stride_for};
use crate::placement::proc_maps::{Vma, read_maps};
use crate::placement::{PlacementError, procstat, sys};
use crate::probes::mem::sys::thread_cpu_s;
use crate::topology::Topology;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Pages whose node a sampled look queries by default: 2-3 ms of
/// `move_pages` on the development machine (0.2-0.5% of a numa02 run's CPU
/// time at one look every 0.5 s, where 16384 pages took 0.6-2%), and a
/// node's share known to within a percentage point (the standard error of
/// 4096 independent pages is 0.8 points at worst; memory placed in runs, as
/// the kernel migrates it, is known far better).
pub const DEFAULT_SAMPLE_PAGES: usize = 4 * 1024;

/// Pages of mappings that `numa_maps` walks for the CPU time of one
/// `move_pages` query. Measured on the development machine: 8 ms per GiB of
/// written 4 KiB pages (32 ns a page) for the walk, 115-290 ns a page for
/// queries one per 16 to 96 pages. Up to this many pages per sampled page
/// a look walks: exact, and no dearer.
pub const WALK_PAGES_PER_QUERY: usize = 4;

/// How a look finds where the test's memory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `move_pages` on at most this many pages per look over all the
    /// processes; `numa_maps` where their mappings hold no more than
    /// [`WALK_PAGES_PER_QUERY`] times that.
    Sampled { max_pages: usize },
    /// `numa_maps`: every page, and the mappings' policies.
    Exact,
}

impl Default for Method {
    fn default() -> Method {
        Method::Sampled {
            max_pages: DEFAULT_SAMPLE_PAGES,
        }
    }
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Sampled { .. } => "sampled",
            Method::Exact => "exact",
        }
    }
}

/// What one look saw.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Look {
    /// Seconds since the tasks were released.
    pub t: f64,
    /// Bytes of the test's memory per node.
    pub mem: BTreeMap<usize, u64>,
    /// Pages of the test's memory per node: base pages when sampled; of
    /// whatever size backs them when exact.
    pub pages: BTreeMap<usize, u64>,
    /// Worker threads per node, by the CPU each last ran on.
    pub threads: BTreeMap<usize, usize>,
    /// Physical cores whose hardware threads carry two or more of the
    /// test's threads.
    pub doubled_cores: usize,
    /// Pages whose node was queried (0 for an exact look).
    pub sampled_pages: u64,
    /// Pages each queried page stood for (1: every page, or exact).
    pub stride: u64,
    /// Pages counted on the node a queried page was last seen on, because
    /// the kernel reported it without a node at this look (see [`tally`]).
    pub carried_pages: u64,
    /// Some or all of the memory was counted from `numa_maps`.
    pub exact: bool,
}

/// The test's memory among a process's mappings: private anonymous ones,
/// which hold the data areas, less the heap and the main stack. What else
/// falls in (thread stacks, allocator arenas, pages inherited from the
/// parent) is a few hundred KiB per process.
pub fn is_test_memory(m: &NumaMapping) -> bool {
    m.file.is_none() && !m.heap && !m.stack && !m.huge
}

/// [`is_test_memory`] for a line of `maps`. Hugetlb memory has a stand-in
/// file there, so it is left out as in `numa_maps`. Beyond that selection
/// this leaves out mappings with no access at all (guard pages, the
/// reserved part of allocator arenas: no pages, but they would take a share
/// of the sample) and the kernel's own (`[vdso]`: a few KiB).
pub fn is_test_vma(v: &Vma) -> bool {
    v.is_private_anonymous()
        && !v.is_heap()
        && !v.is_stack()
        && !v.is_special()
        && !v.is_inaccessible()
}

/// Bytes and pages per node of the test's memory among `maps`.
pub fn memory_of(maps: &[NumaMapping]) -> (BTreeMap<usize, u64>, BTreeMap<usize, u64>) {
    let (mut bytes, mut pages) = (BTreeMap::new(), BTreeMap::new());
    for m in maps.iter().filter(|m| is_test_memory(m)) {
        for (node, b) in m.bytes_by_node() {
            *bytes.entry(node).or_insert(0u64) += b;
        }
        for (&node, &p) in &m.pages_by_node {
            *pages.entry(node).or_insert(0u64) += p;
        }
    }
    (bytes, pages)
}

/// `move_pages` refused by the system rather than failed for a process that
/// just ended (`ESRCH`, or `EINVAL` for one with no memory left).
fn refused(e: &PlacementError) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EPERM) | Some(libc::EACCES) | Some(libc::ENOSYS)
    )
}

/// Each CPU's node and physical core (an index shared by SMT siblings).
#[derive(Debug, Clone, Default)]
pub struct CpuMap {
    node: BTreeMap<usize, usize>,
    core: BTreeMap<usize, usize>,
}

impl CpuMap {
    pub fn of(topo: &Topology) -> CpuMap {
        let mut cores: Vec<String> = Vec::new();
        let mut map = CpuMap::default();
        for c in &topo.cpus {
            if let Some(n) = c.node {
                map.node.insert(c.id, n);
            }
            // A CPU without sibling information is a core of its own.
            let key = if c.smt_siblings.is_empty() {
                format!("cpu{}", c.id)
            } else {
                c.smt_siblings.to_list()
            };
            let idx = cores.iter().position(|k| *k == key).unwrap_or_else(|| {
                cores.push(key);
                cores.len() - 1
            });
            map.core.insert(c.id, idx);
        }
        map
    }

    /// Threads per node for threads last seen on `cpus`.
    pub fn threads_per_node(&self, cpus: &[usize]) -> BTreeMap<usize, usize> {
        let mut out = BTreeMap::new();
        for c in cpus {
            if let Some(&n) = self.node.get(c) {
                *out.entry(n).or_insert(0) += 1;
            }
        }
        out
    }

    /// Cores that carry two or more of the threads last seen on `cpus`.
    pub fn doubled_cores(&self, cpus: &[usize]) -> usize {
        let mut per_core: BTreeMap<usize, usize> = BTreeMap::new();
        for c in cpus {
            let core = self.core.get(c).copied().unwrap_or(usize::MAX - c);
            *per_core.entry(core).or_insert(0) += 1;
        }
        per_core.values().filter(|&&n| n >= 2).count()
    }
}

/// Adds a process's sample to `look`. A queried page the kernel reports
/// without a node after an earlier look saw it on one counts on that node:
/// pages that NUMA balancing has marked for a hinting fault (some kernels,
/// 6.1 among them, report those as unmapped, `-EFAULT`, until the next
/// access) and pages in the middle of a migration are still there, and the
/// test frees none of its memory while the looks go on. `last` holds the
/// node each sampled page of the process was last seen on, by address; the
/// same mappings give the same sampled pages at every look.
fn tally(last: &mut Vec<(usize, usize)>, s: &RangesSample, page_size: u64, look: &mut Look) {
    look.sampled_pages += s.pages.len() as u64;
    let mut seen = Vec::with_capacity(s.pages.len());
    for p in &s.pages {
        let node = match usize::try_from(p.status) {
            Ok(n) => Some(n),
            Err(_) => {
                let before = last
                    .binary_search_by_key(&p.addr, |&(a, _)| a)
                    .ok()
                    .map(|i| last[i].1);
                if before.is_some() {
                    look.carried_pages += p.weight;
                }
                before
            }
        };
        if let Some(n) = node {
            seen.push((p.addr, n));
            *look.pages.entry(n).or_insert(0) += p.weight;
            *look.mem.entry(n).or_insert(0) += p.weight * page_size;
        }
    }
    // Already in order: mappings and windows are listed by address.
    seen.sort_unstable();
    *last = seen;
}

/// Every look of one run and what they cost.
#[derive(Debug, Default)]
pub struct Watch {
    map: CpuMap,
    /// How the looks are taken now: as asked, or exact after a refusal.
    pub method: Method,
    pub looks: Vec<Look>,
    /// CPU seconds the looks took.
    pub cpu_s: f64,
    /// Memory policies seen on the test's mappings that hold pages (exact
    /// looks only).
    pub policies: BTreeSet<String>,
    /// CPUs the worker threads were seen on.
    pub cpus_seen: BTreeSet<usize>,
    /// Files that could not be read or processes that could not be
    /// queried, e.g. a process that just ended.
    pub unreadable: usize,
    /// Looks dropped because a task left its loop while they were taken.
    pub dropped: usize,
    /// Why sampled looks gave way to exact ones.
    pub fallback: Option<String>,
    /// Per process, the node each sampled page was last seen on.
    last_node: HashMap<i32, Vec<(usize, usize)>>,
}

impl Watch {
    pub fn new(topo: &Topology, method: Method) -> Watch {
        Watch {
            map: CpuMap::of(topo),
            method,
            ..Default::default()
        }
    }

    /// Looks at the processes `pids` at `t` seconds; keeps the look only if
    /// `intact()` still holds afterwards (no task began to free its memory
    /// meanwhile).
    pub fn look(&mut self, t: f64, pids: &[i32], intact: &dyn Fn() -> bool) -> Option<&Look> {
        let cpu0 = thread_cpu_s();
        let mut look = Look {
            t,
            stride: 1,
            ..Default::default()
        };
        match self.method {
            Method::Sampled { max_pages } => self.sampled(pids, max_pages, &mut look),
            Method::Exact => {
                for &pid in pids {
                    self.exact(pid, &mut look);
                }
            }
        }
        let mut cpus = Vec::new();
        for &pid in pids {
            // The process's first thread only waits for its workers.
            let Ok(tids) = procstat::thread_ids(pid) else {
                self.unreadable += 1;
                continue;
            };
            for tid in tids.into_iter().filter(|&tid| tid != pid) {
                match procstat::thread_stat(pid, tid) {
                    Ok(s) => cpus.push(s.cpu),
                    Err(_) => self.unreadable += 1,
                }
            }
        }
        look.threads = self.map.threads_per_node(&cpus);
        look.doubled_cores = self.map.doubled_cores(&cpus);
        let keep = intact();
        if keep {
            self.cpus_seen.extend(cpus);
            self.looks.push(look);
        } else {
            self.dropped += 1;
        }
        self.cpu_s += (thread_cpu_s() - cpu0).max(0.0);
        if keep { self.looks.last() } else { None }
    }

    /// Every page of `pid`'s test memory from `numa_maps`.
    fn exact(&mut self, pid: i32, look: &mut Look) {
        look.exact = true;
        let Ok(maps) = read_numa_maps(pid as u32) else {
            self.unreadable += 1;
            return;
        };
        for m in maps.iter().filter(|m| is_test_memory(m) && m.pages() > 0) {
            self.policies.insert(m.policy.clone());
        }
        let (bytes, pages) = memory_of(&maps);
        for (n, b) in bytes {
            *look.mem.entry(n).or_insert(0) += b;
        }
        for (n, p) in pages {
            *look.pages.entry(n).or_insert(0) += p;
        }
    }

    /// A sample of at most `max_pages` pages of all the processes' test
    /// memory together, so the look costs the same for one process or many;
    /// every page from `numa_maps` where that costs no more.
    fn sampled(&mut self, pids: &[i32], max_pages: usize, look: &mut Look) {
        let page = sys::base_page_size();
        let mut listed: Vec<(i32, Vec<(usize, usize)>)> = Vec::new();
        for &pid in pids {
            match read_maps(pid as u32) {
                Ok(vmas) => listed.push((
                    pid,
                    vmas.iter()
                        .filter(|v| is_test_vma(v))
                        .map(|v| (v.start as usize, v.len() as usize))
                        .collect(),
                )),
                Err(_) => self.unreadable += 1,
            }
        }
        let counts: Vec<usize> = listed
            .iter()
            .flat_map(|(_, r)| r.iter().map(|&(_, len)| len / page))
            .collect();
        let walk = counts.iter().sum::<usize>() <= WALK_PAGES_PER_QUERY * max_pages;
        let stride = if walk {
            1
        } else {
            stride_for(&counts, max_pages)
        };
        look.stride = stride as u64;
        for (pid, ranges) in listed {
            if walk || self.method == Method::Exact {
                self.exact(pid, look);
                continue;
            }
            match sample_ranges_of(pid, &ranges, page, stride) {
                Ok(s) => tally(
                    self.last_node.entry(pid).or_default(),
                    &s,
                    page as u64,
                    look,
                ),
                Err(e) if refused(&e) => {
                    if look.sampled_pages == 0 {
                        look.stride = 1;
                    }
                    self.fallback = Some(format!("{e}: the looks read numa_maps instead"));
                    self.method = Method::Exact;
                    self.exact(pid, look);
                }
                Err(_) => self.unreadable += 1,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::numa_maps::parse_numa_maps;
    use crate::placement::pages::NOT_PRESENT;

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
        let vmas = crate::placement::proc_maps::parse_maps(VMAS).unwrap();
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
        tally(&mut last, &sample([0, 1, NOT_PRESENT, 1]), 4096, &mut first);
        assert_eq!(first.pages, [(0, 10), (1, 20)].into());
        assert_eq!((first.sampled_pages, first.carried_pages), (4, 0));
        // Without a node now: the first, second and fourth keep theirs;
        // the third was never seen on one, so it is not there.
        let mut second = Look::default();
        tally(
            &mut last,
            &sample([NOT_PRESENT, efault, NOT_PRESENT, efault]),
            4096,
            &mut second,
        );
        assert_eq!(second.pages, [(0, 10), (1, 20)].into());
        assert_eq!(second.mem, [(0, 40960), (1, 81920)].into());
        assert_eq!(second.carried_pages, 30);
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
        let mut r = crate::probes::mem::sys::Region::map(32 << 20, false, 0).unwrap();
        r.fill_counting(1);
        let me = std::process::id() as i32;
        // 1024 pages is too few a sample for a walk to cost less: sampled.
        let sampled = Method::Sampled { max_pages: 1024 };
        for method in [sampled, Method::Exact] {
            let mut w = Watch::new(&topo, method);
            let look = w.look(1.5, &[me], &|| true).unwrap().clone();
            let total: u64 = look.mem.values().sum();
            // A sample may miss a window's worth at either end of the area.
            let edges = 2 * look.stride * sys::base_page_size() as u64;
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
        use crate::placement::numa_maps::read_self_numa_maps;
        use crate::placement::{MbindFlags, MemPolicy, bind_range};
        use std::sync::atomic::Ordering::Relaxed;
        let page = sys::base_page_size();
        let n = 16 * 1024;
        let r = crate::probes::mem::sys::Region::map((n + 2) * page, false, 0).unwrap();
        let (mid, len) = (r.addr() + page, n * page);
        // A policy of its own makes the range a mapping of its own, apart
        // from its neighbours, and spreads it where there are several nodes;
        // base pages make every page count.
        let nodes = sys::mems_allowed()
            .unwrap_or_else(sys::online_nodes)
            .intersection(&sys::nodes_with_memory());
        bind_range(
            mid,
            len,
            &MemPolicy::Interleave(nodes),
            MbindFlags::default(),
        )
        .unwrap();
        sys::madvise(mid, len, sys::Advice::NoHugePage).unwrap();
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
}
