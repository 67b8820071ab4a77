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

use crate::placement::PlacementError;
use crate::placement::pages::{RangesSample, sample_ranges_of, stride_for};
use crate::procfs::maps::{Vma, read_maps};
use crate::procfs::numa_maps::{NumaMapping, read_numa_maps};
use crate::procfs::stat as procstat;
use crate::sys::thread_cpu_s;
use crate::topology::Topology;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Pages whose node a sampled look queries by default: 2-3 ms of
/// `move_pages` on the development machine (0.2-0.5% of a numa02 run's CPU
/// time at one look every 0.5 s, where 16384 pages took 0.6-2%), and a
/// node's share known to within a percentage point (the standard error of
/// 4096 independent pages is 0.8 points at worst; memory placed in runs, as
/// the kernel migrates it, is known far better).
pub(crate) const DEFAULT_SAMPLE_PAGES: usize = 4 * 1024;

/// Pages of mappings that `numa_maps` walks for the CPU time of one
/// `move_pages` query. Measured on the development machine: 8 ms per GiB of
/// written 4 KiB pages (32 ns a page) for the walk, 115-290 ns a page for
/// queries one per 16 to 96 pages. Up to this many pages per sampled page
/// a look walks: exact, and no dearer.
pub(crate) const WALK_PAGES_PER_QUERY: usize = 4;

/// How a look finds where the test's memory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
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
    pub(crate) fn name(self) -> &'static str {
        match self {
            Method::Sampled { .. } => "sampled",
            Method::Exact => "exact",
        }
    }
}

/// What one look saw.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Look {
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
pub(crate) fn is_test_memory(m: &NumaMapping) -> bool {
    m.file.is_none() && !m.heap && !m.stack && !m.huge
}

/// [`is_test_memory`] for a line of `maps`. Hugetlb memory has a stand-in
/// file there, so it is left out as in `numa_maps`. Beyond that selection
/// this leaves out mappings with no access at all (guard pages, the
/// reserved part of allocator arenas: no pages, but they would take a share
/// of the sample) and the kernel's own (`[vdso]`: a few KiB).
pub(crate) fn is_test_vma(v: &Vma) -> bool {
    v.is_private_anonymous()
        && !v.is_heap()
        && !v.is_stack()
        && !v.is_special()
        && !v.is_inaccessible()
}

/// Bytes and pages per node of the test's memory among `maps`.
pub(crate) fn memory_of(maps: &[NumaMapping]) -> (BTreeMap<usize, u64>, BTreeMap<usize, u64>) {
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
pub(crate) struct CpuMap {
    node: BTreeMap<usize, usize>,
    core: BTreeMap<usize, usize>,
}

impl CpuMap {
    pub(crate) fn of(topo: &Topology) -> CpuMap {
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
    pub(crate) fn threads_per_node(&self, cpus: &[usize]) -> BTreeMap<usize, usize> {
        let mut out = BTreeMap::new();
        for c in cpus {
            if let Some(&n) = self.node.get(c) {
                *out.entry(n).or_insert(0) += 1;
            }
        }
        out
    }

    /// Cores that carry two or more of the threads last seen on `cpus`.
    pub(crate) fn doubled_cores(&self, cpus: &[usize]) -> usize {
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
///
/// Returns the pages hidden behind a hinting fault (`-EFAULT`) that no
/// earlier look saw on a node: the sample cannot place those.
fn tally(last: &mut Vec<(usize, usize)>, s: &RangesSample, page_size: u64, look: &mut Look) -> u64 {
    look.sampled_pages += s.pages.len() as u64;
    let mut seen = Vec::with_capacity(s.pages.len());
    let mut unplaced = 0;
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
                } else if p.status == -libc::EFAULT {
                    unplaced += p.weight;
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
    unplaced
}

/// Every look of one run and what they cost.
#[derive(Debug, Default)]
pub(crate) struct Watch {
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
    pub(crate) fn new(topo: &Topology, method: Method) -> Watch {
        Watch {
            map: CpuMap::of(topo),
            method,
            ..Default::default()
        }
    }

    /// Looks at the processes `pids` at `t` seconds; keeps the look only if
    /// `intact()` still holds afterwards (no task began to free its memory
    /// meanwhile).
    pub(crate) fn look(
        &mut self,
        t: f64,
        pids: &[i32],
        intact: &dyn Fn() -> bool,
    ) -> Option<&Look> {
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

    /// Adds `pid`'s sample to `look`, or, where the sample holds hidden
    /// pages no earlier look placed (balancing's scan marked them before
    /// this process was first looked at, as on a slow start), the process's
    /// exact figures from `numa_maps`, which counts marked pages where they
    /// are. The sample still records where its other pages were seen.
    fn add_sample(&mut self, pid: i32, s: &RangesSample, page_size: u64, look: &mut Look) {
        let mut own = Look::default();
        let unplaced = tally(
            self.last_node.entry(pid).or_default(),
            s,
            page_size,
            &mut own,
        );
        look.sampled_pages += own.sampled_pages;
        if unplaced > 0 {
            self.exact(pid, look);
            return;
        }
        look.carried_pages += own.carried_pages;
        for (n, p) in own.pages {
            *look.pages.entry(n).or_insert(0) += p;
        }
        for (n, b) in own.mem {
            *look.mem.entry(n).or_insert(0) += b;
        }
    }

    /// A sample of at most `max_pages` pages of all the processes' test
    /// memory together, so the look costs the same for one process or many;
    /// every page from `numa_maps` where that costs no more.
    fn sampled(&mut self, pids: &[i32], max_pages: usize, look: &mut Look) {
        let page = crate::sys::mmap::base_page_size();
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
                Ok(s) => self.add_sample(pid, &s, page as u64, look),
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
#[path = "watch_tests.rs"]
mod tests;
