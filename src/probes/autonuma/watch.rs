//! The parent's looks at a running test: how much of the test's memory is
//! on each node (`/proc/PID/numa_maps`, one walk of the page tables per
//! process, which stays cheap for gigabytes where `move_pages` over every
//! page would not), and where each worker thread last ran
//! (`/proc/PID/task/TID/stat`). Each look's own CPU time is measured, so
//! the run can say what watching it cost.

use crate::placement::numa_maps::{NumaMapping, read_numa_maps};
use crate::placement::procstat;
use crate::probes::mem::sys::thread_cpu_s;
use crate::topology::Topology;
use std::collections::{BTreeMap, BTreeSet};

/// What one look saw.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Look {
    /// Seconds since the tasks were released.
    pub t: f64,
    /// Bytes of the test's memory per node.
    pub mem: BTreeMap<usize, u64>,
    /// Pages of the test's memory per node (of whatever size backs them).
    pub pages: BTreeMap<usize, u64>,
    /// Worker threads per node, by the CPU each last ran on.
    pub threads: BTreeMap<usize, usize>,
    /// Physical cores whose hardware threads carry two or more of the
    /// test's threads.
    pub doubled_cores: usize,
}

/// The test's memory among a process's mappings: private anonymous ones,
/// which hold the data areas, less the heap and the main stack. What else
/// falls in (thread stacks, allocator arenas, pages inherited from the
/// parent) is a few hundred KiB per process.
pub fn is_test_memory(m: &NumaMapping) -> bool {
    m.file.is_none() && !m.heap && !m.stack && !m.huge
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

/// Every look of one run and what they cost.
#[derive(Debug, Default)]
pub struct Watch {
    map: CpuMap,
    pub looks: Vec<Look>,
    /// CPU seconds the looks took.
    pub cpu_s: f64,
    /// Memory policies seen on the test's mappings that hold pages.
    pub policies: BTreeSet<String>,
    /// CPUs the worker threads were seen on.
    pub cpus_seen: BTreeSet<usize>,
    /// Files that could not be read, e.g. a process that just ended.
    pub unreadable: usize,
    /// Looks dropped because a task left its loop while they were taken.
    pub dropped: usize,
}

impl Watch {
    pub fn new(topo: &Topology) -> Watch {
        Watch {
            map: CpuMap::of(topo),
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
            ..Default::default()
        };
        let mut cpus = Vec::new();
        for &pid in pids {
            match read_numa_maps(pid as u32) {
                Ok(maps) => {
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
                Err(_) => self.unreadable += 1,
            }
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::numa_maps::parse_numa_maps;

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
        // A private anonymous area written here shows up in the look, and
        // the look's CPU time is counted.
        let topo = crate::topology::read_topology(&crate::topology::SysfsRoot::live()).unwrap();
        let mut w = Watch::new(&topo);
        let mut r = crate::probes::mem::sys::Region::map(32 << 20, false, 0).unwrap();
        r.fill_counting(1);
        let me = std::process::id() as i32;
        let look = w.look(1.5, &[me], &|| true).unwrap().clone();
        let total: u64 = look.mem.values().sum();
        assert!(total >= 32 << 20, "{look:?}");
        assert_eq!(look.t, 1.5);
        // Every thread of the test harness but the first is a worker here.
        assert!(look.threads.values().sum::<usize>() >= 1, "{look:?}");
        assert!(w.cpu_s > 0.0);
        assert!(w.policies.contains("default"), "{:?}", w.policies);
        // A look during which a task left its loop is not kept, but costs.
        let before = w.cpu_s;
        assert!(w.look(2.0, &[me], &|| false).is_none());
        assert_eq!((w.looks.len(), w.dropped), (1, 1));
        assert!(w.cpu_s > before);
        drop(r);
    }
}
