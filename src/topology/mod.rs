//! What the machine has: nodes, CPUs, caches, distances, huge pages, HMAT,
//! memory tiers, accelerators, and what this process may use.
//!
//! Everything is read from sysfs and procfs under a root directory (`/` in
//! production, a captured tree in tests and bug reports; see
//! `docs/sysfs-files.md`). The model is plain data: every probe asks it which
//! CPUs belong to a node instead of doing arithmetic on CPU numbers, because
//! numbering is often interleaved across sockets.

mod cgroup;
pub mod dmi;
mod limits;
pub mod pcie_link;
pub mod peak;
mod source;
mod sysfs;

pub use limits::MemoryLimit;

/// A captured tree of `files` (path relative to the root, contents) for
/// the readers' tests.
#[cfg(test)]
pub(crate) fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// Fits malloc to a resource limit on the address space; first thing in
/// `main`, before any thread allocates (see
/// `sys::process::cap_malloc_arenas_under_rlimit_as`).
pub fn fit_malloc_to_rlimits() {
    crate::sys::process::cap_malloc_arenas_under_rlimit_as();
}

/// The tightest memory limit on this process now (see [`MemoryLimit`]).
pub fn process_memory_limit() -> Option<MemoryLimit> {
    let src = SysfsRoot::live();
    let status = src
        .read("proc/self/status")
        .ok()
        .flatten()
        .unwrap_or_default();
    let cpus = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .and_then(|v| crate::ids::IdSet::parse_list(v).ok())
        .map_or(1, |s| s.len());
    limits::read(&src, cpus, &mut Vec::new())
}
pub use source::{ROOT_ENV, SysfsRoot};
pub use sysfs::{MAX_BYTES, MAX_CPUS, MAX_NODES, TopologyError, read_topology};

use crate::ids::{CpuSet, NodeSet};
use serde::{Deserialize, Serialize};

/// The machine as this process sees it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Topology {
    /// Host name (`/proc/sys/kernel/hostname`).
    pub hostname: String,
    /// Kernel release (`/proc/sys/kernel/osrelease`).
    pub kernel: String,
    /// CPU model from `/proc/cpuinfo`.
    pub cpu_model: String,
    /// Online NUMA nodes in ascending id order.
    #[serde(deserialize_with = "at_most::<_, _, MAX_NODES>")]
    pub nodes: Vec<Node>,
    /// Online CPUs in ascending id order.
    #[serde(deserialize_with = "at_most::<_, _, MAX_CPUS>")]
    pub cpus: Vec<Cpu>,
    /// CPUs the kernel could ever bring online.
    pub cpus_possible: CpuSet,
    /// CPUs online now.
    pub cpus_online: CpuSet,
    /// Distinct caches, each listed once with the CPUs that share it.
    #[serde(deserialize_with = "at_most::<_, _, MAX_CACHES>")]
    pub caches: Vec<Cache>,
    /// The cpuset of this process.
    pub allowed: Allowed,
    /// Transparent huge page settings.
    pub thp: Thp,
    /// `kernel.numa_balancing`: 0 off, 1 normal, 2 memory tiering, 3 both.
    pub numa_balancing: Option<u32>,
    /// Memory tiers, fastest (lowest id) first.
    #[serde(deserialize_with = "at_most::<_, _, MAX_NODES>")]
    pub memory_tiers: Vec<MemoryTier>,
    /// The kernel's memory-tiering settings, where it shows them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tiering: Option<Tiering>,
    /// DAMON workers and modules, running or not (empty without DAMON).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "at_most::<_, _, MAX_DAMON>"
    )]
    pub damon: Vec<Damon>,
    /// Which hypervisor runs this kernel and how that is known, where
    /// something says so: its CPUs, caches and nodes are then what the
    /// host declares, and the host places the virtual CPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub virtual_machine: Option<String>,
    /// GPUs and other PCI accelerators.
    pub accelerators: Vec<Accelerator>,
    /// `MemTotal` of `/proc/meminfo`, to check the per-node figures against.
    pub system_mem_total_bytes: Option<u64>,
    /// `MemFree` of `/proc/meminfo`.
    #[serde(default)]
    pub system_mem_free_bytes: Option<u64>,
    /// The tightest memory cgroup or resource limit on this process: what
    /// the nodes have free is then not all it may map.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit: Option<MemoryLimit>,
    /// False when the kernel exposes no NUMA information (one node assumed).
    pub numa_sysfs: bool,
    /// What the reader found wrong with the firmware's or the kernel's view
    /// and how it read it instead (a distance row for nodes that are gone,
    /// nodes that are copies of each other, HMAT figures of 0).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Most DAMON workers and modules a topology in a document may list.
const MAX_DAMON: usize = 256;

/// A DAMON worker (`kdamond N`, set up through sysfs) or DAMON module
/// (`damon_reclaim`, `damon_lru_sort`, `damon_stat`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Damon {
    pub name: String,
    /// Running now.
    pub on: bool,
    /// The address spaces it watches: `vaddr`, `fvaddr` or `paddr`.
    pub operations: Vec<String>,
    /// What its schemes do to the memory they match: `pageout`,
    /// `migrate_hot`, `migrate_cold`, `lru_prio`, `stat`, ...
    pub actions: Vec<String>,
}

impl Damon {
    /// Running with an action that takes pages out of memory or moves them
    /// between nodes under a benchmark.
    pub fn moves_memory(&self) -> bool {
        self.on
            && self
                .actions
                .iter()
                .any(|a| matches!(a.as_str(), "pageout" | "migrate_hot" | "migrate_cold"))
    }

    /// How to stop it, as a command line.
    pub fn stop_command(&self) -> String {
        match self.name.strip_prefix("kdamond ") {
            Some(id) => format!("echo off > /sys/kernel/mm/damon/admin/kdamonds/{id}/state"),
            None => format!("echo N > /sys/module/{}/parameters/enabled", self.name),
        }
    }
}

/// Most caches a topology in a document may list: every CPU with its own
/// instance of eight cache levels and types.
const MAX_CACHES: usize = 8 * MAX_CPUS;

/// A list from a document (a results file's topology) of at most `N`
/// entries. Each entry of these lists holds sets of up to [`MAX_CPUS`] bits,
/// so the count is what keeps a hostile file's memory bounded; a real
/// machine's list is far shorter.
fn at_most<'de, D, T, const N: usize>(d: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct Bounded<T, const N: usize>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>, const N: usize> serde::de::Visitor<'de> for Bounded<T, N> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            write!(f, "a list of at most {N} entries")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let mut out = Vec::new();
            while let Some(item) = seq.next_element()? {
                if out.len() == N {
                    return Err(serde::de::Error::custom(format!(
                        "more than {N} entries, more than any machine has"
                    )));
                }
                out.push(item);
            }
            Ok(out)
        }
    }
    d.deserialize_seq(Bounded::<T, N>(std::marker::PhantomData))
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Node {
    pub id: usize,
    /// CPUs of the node (empty for a memory-only node such as CXL or HBM).
    pub cpus: CpuSet,
    pub has_cpu: bool,
    pub has_memory: bool,
    pub mem_total_bytes: u64,
    /// `None` where the node's meminfo has no `MemFree` line (some kernels
    /// write only `MemTotal`): how much is free is then not known.
    pub mem_free_bytes: Option<u64>,
    /// SLIT distances to every node of [`Topology::nodes`], in the same order.
    pub distances: Vec<u32>,
    /// Huge page pools by page size, smallest first.
    pub hugepages: Vec<HugePages>,
    /// HMAT figures for the best initiators of this memory, when present.
    pub hmat: Option<Hmat>,
    /// Memory tier id, when the kernel has memory tiering.
    pub tier: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HugePages {
    pub size_kb: u64,
    pub total: u64,
    pub free: u64,
}

/// Access figures the firmware reports (ACPI HMAT, `access0` class).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Hmat {
    /// Nodes whose CPUs get these figures.
    pub initiators: NodeSet,
    pub read_bandwidth_mb_s: Option<u64>,
    pub write_bandwidth_mb_s: Option<u64>,
    pub read_latency_ns: Option<u64>,
    pub write_latency_ns: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Cpu {
    pub id: usize,
    /// The node holding this CPU; `None` if no node lists it.
    pub node: Option<usize>,
    pub package: Option<u32>,
    pub die: Option<u32>,
    pub core: Option<u32>,
    /// Hardware threads of this CPU's core, itself included.
    pub smt_siblings: CpuSet,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Cache {
    pub level: u32,
    /// `Data`, `Instruction` or `Unified`.
    #[serde(rename = "type")]
    pub kind: String,
    pub size_bytes: u64,
    pub line_bytes: Option<u32>,
    /// CPUs sharing this cache.
    pub cpus: CpuSet,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Allowed {
    /// `Cpus_allowed_list` of this process.
    pub cpus: CpuSet,
    /// `Mems_allowed_list` of this process.
    pub nodes: NodeSet,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Thp {
    /// `always`, `madvise` or `never`; `None` without THP support.
    pub enabled: Option<String>,
    pub defrag: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MemoryTier {
    pub id: u32,
    pub nodes: NodeSet,
}

/// What the kernel says of its own tiering (Linux 5.18 and later): whether
/// reclaim may demote pages to a lower tier, and how fast NUMA balancing
/// in mode 2 may promote them.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Tiering {
    /// `/sys/kernel/mm/numa/demotion_enabled`.
    pub demotion_enabled: Option<bool>,
    /// `kernel.numa_balancing_promote_rate_limit_MBps`.
    pub promote_rate_limit_mb_s: Option<u64>,
    /// debugfs `sched/numa_balancing/hot_threshold_ms`: a slow-tier page
    /// faulting sooner than this after the scan marked it counts as hot
    /// (root only, with debugfs mounted).
    pub hot_threshold_ms: Option<u64>,
}

impl MemoryTier {
    /// The abstract distances this tier holds: the kernel puts a node of
    /// abstract distance `a` in tier `a >> 7` (chunks of 128; DRAM is
    /// 576, tier 4).
    pub fn abstract_distances(&self) -> (u32, u32) {
        (
            self.id.saturating_mul(128),
            self.id.saturating_mul(128) + 127,
        )
    }
}

impl Topology {
    /// The nodes of lower tiers than `node`'s that hold memory, nearest
    /// (by SLIT distance) first: where the kernel demotes `node`'s pages
    /// (the first is its preferred target). Empty for a node of the lowest
    /// tier or without a tier.
    pub fn demotion_targets(&self, node: usize) -> Vec<usize> {
        let Some(tier) = self.node(node).and_then(|n| n.tier) else {
            return Vec::new();
        };
        let mut out: Vec<(u32, usize)> = self
            .nodes
            .iter()
            .filter(|n| n.has_memory && n.tier.is_some_and(|t| t > tier))
            .map(|n| (self.distance(node, n.id).unwrap_or(u32::MAX), n.id))
            .collect();
        out.sort_unstable();
        out.into_iter().map(|(_, n)| n).collect()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Accelerator {
    pub pci_address: String,
    pub vendor: String,
    pub device: String,
    pub class: String,
    /// What the class code means, e.g. `3D controller`.
    pub kind: String,
    /// `None` when the firmware does not say (`numa_node` = -1).
    pub numa_node: Option<usize>,
    pub link_speed_gt_s: Option<f64>,
    pub link_width: Option<u32>,
    pub max_link_speed_gt_s: Option<f64>,
    pub max_link_width: Option<u32>,
}

impl Accelerator {
    /// Theoretical one-direction bandwidth of the current link in MB/s,
    /// after line encoding (8b/10b up to 5 GT/s, 128b/130b from 8 GT/s).
    pub fn link_peak_mb_s(&self) -> Option<f64> {
        pcie_link::phi_mb_s(self.link_speed_gt_s?, self.link_width?)
    }
}

impl Topology {
    /// Warnings a reader of per-node figures should see.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        let nodes_total = self.nodes_mem_total_bytes();
        if let Some(sys) = self.system_mem_total_bytes
            && self.node_memory_incomplete()
        {
            out.push(format!(
                    "the nodes' meminfo files add up to {} but /proc/meminfo reports {}; per-node memory figures are incomplete on this kernel",
                    crate::units::bytes(nodes_total),
                    crate::units::bytes(sys)
                ));
        }
        out.extend(self.notes.iter().cloned());
        if self.allowed.cpus.is_empty() {
            out.push("this process may run on no online CPU (check the cpuset)".into());
        }
        out
    }

    /// Memory of all nodes together. Saturating: a document edited by hand
    /// may hold any figure, and a sum past `u64::MAX` is still "more than
    /// the system has".
    fn nodes_mem_total_bytes(&self) -> u64 {
        self.nodes
            .iter()
            .fold(0u64, |sum, n| sum.saturating_add(n.mem_total_bytes))
    }

    /// True when the nodes' meminfo files cover less than 90% of the
    /// system's memory (some virtualised kernels report only part).
    pub fn node_memory_incomplete(&self) -> bool {
        let nodes_total = self.nodes_mem_total_bytes();
        self.system_mem_total_bytes
            .is_some_and(|sys| sys > 0 && (nodes_total as f64) < 0.9 * sys as f64)
    }

    /// Free bytes on `node` for sizing buffers. Where the per-node figures
    /// are incomplete and one node holds all memory, the system's free
    /// memory is the node's. Where the kernel does not say what is free on
    /// the node, the most that can be: its total memory, or the system's
    /// free memory where that is less ([`Self::node_free_unknown`] tells).
    /// A memory cgroup or resource limit tighter than that is the node's
    /// figure too: it is all this process may map there.
    pub fn node_free_bytes(&self, node: usize) -> u64 {
        self.within_limit(self.node_free_unlimited(node))
    }

    /// Free bytes on `node` as the kernel counts them, whatever limits this
    /// process.
    pub fn node_free_unlimited(&self, node: usize) -> u64 {
        let memory_nodes = self.nodes.iter().filter(|n| n.has_memory).count();
        let own = self.node(node).map_or(0, |n| match n.mem_free_bytes {
            Some(free) => free,
            None => self
                .system_mem_free_bytes
                .map_or(n.mem_total_bytes, |sys| sys.min(n.mem_total_bytes)),
        });
        match self.system_mem_free_bytes {
            Some(sys) if memory_nodes == 1 && self.node_memory_incomplete() => own.max(sys),
            _ => own,
        }
    }

    /// `free` bytes, or what [`Topology::memory_limit`] leaves if less.
    pub fn within_limit(&self, free: u64) -> u64 {
        self.memory_limit
            .as_ref()
            .map_or(free, |l| free.min(l.headroom_bytes))
    }

    /// True when the kernel does not say how much of `node`'s memory is
    /// free: [`Self::node_free_bytes`] is then only an upper bound.
    pub fn node_free_unknown(&self, node: usize) -> bool {
        self.node(node).is_some_and(|n| n.mem_free_bytes.is_none())
    }

    pub fn node(&self, id: usize) -> Option<&Node> {
        self.nodes.iter().find(|n| n.id == id)
    }

    pub fn cpu(&self, id: usize) -> Option<&Cpu> {
        // The reader lists CPUs by id: a search, not a walk, on a machine
        // of a thousand CPUs (c2c's plan asks for every pair); a list in
        // another order is still walked.
        match self.cpus.binary_search_by_key(&id, |c| c.id) {
            Ok(i) => Some(&self.cpus[i]),
            Err(_) => self.cpus.iter().find(|c| c.id == id),
        }
    }

    pub fn node_ids(&self) -> NodeSet {
        NodeSet::from_ids(self.nodes.iter().map(|n| n.id))
    }

    /// SLIT distance from node `from` to node `to`.
    pub fn distance(&self, from: usize, to: usize) -> Option<u32> {
        let idx = self.nodes.iter().position(|n| n.id == to)?;
        self.node(from)?.distances.get(idx).copied()
    }

    /// Number of distinct packages (sockets).
    /// CPUs without a package id count as one package only when no CPU
    /// has one.
    pub fn packages(&self) -> usize {
        let mut ids: Vec<u32> = self.cpus.iter().filter_map(|c| c.package).collect();
        ids.sort_unstable();
        ids.dedup();
        if ids.is_empty() {
            usize::from(!self.cpus.is_empty())
        } else {
            ids.len()
        }
    }

    /// Number of physical cores: CPUs grouped by their SMT sibling set.
    pub fn cores(&self) -> usize {
        let mut sets: Vec<String> = self.cpus.iter().map(|c| c.smt_siblings.to_list()).collect();
        sets.sort();
        sets.dedup();
        sets.len()
    }

    pub fn threads_per_core(&self) -> usize {
        self.cpus
            .iter()
            .map(|c| c.smt_siblings.len().max(1))
            .max()
            .unwrap_or(1)
    }

    /// Caches that include `cpu`, by level then type.
    pub fn caches_of(&self, cpu: usize) -> Vec<&Cache> {
        let mut out: Vec<&Cache> = self
            .caches
            .iter()
            .filter(|c| c.cpus.contains(cpu))
            .collect();
        out.sort_by(|a, b| (a.level, &a.kind).cmp(&(b.level, &b.kind)));
        out
    }

    /// Nodes with memory that this process may allocate from.
    pub fn usable_memory_nodes(&self) -> NodeSet {
        NodeSet::from_ids(
            self.nodes
                .iter()
                .filter(|n| n.has_memory && self.allowed.nodes.contains(n.id))
                .map(|n| n.id),
        )
    }

    /// CPUs of `node` that this process may run on.
    pub fn usable_cpus_of(&self, node: usize) -> CpuSet {
        self.node(node)
            .map(|n| n.cpus.intersection(&self.allowed.cpus))
            .unwrap_or_default()
    }

    /// Nodes with at least one CPU this process may run on.
    pub fn usable_cpu_nodes(&self) -> NodeSet {
        NodeSet::from_ids(
            self.nodes
                .iter()
                .filter(|n| !self.usable_cpus_of(n.id).is_empty())
                .map(|n| n.id),
        )
    }

    /// CPUs of `cpus` ordered one per physical core first, then the SMT
    /// siblings: the order in which threads are added when scaling, so that a
    /// second hardware thread is used only when every core already has one.
    pub fn cores_first(&self, cpus: &CpuSet) -> Vec<usize> {
        let mut first = Vec::new();
        let mut rest = Vec::new();
        let mut seen_cores = Vec::<String>::new();
        for id in cpus.iter() {
            let key = self
                .cpu(id)
                .map_or_else(|| id.to_string(), |c| c.smt_siblings.to_list());
            if seen_cores.contains(&key) {
                rest.push(id);
            } else {
                seen_cores.push(key);
                first.push(id);
            }
        }
        first.extend(rest);
        first
    }
}

/// A fixture machine from `tests/fixtures/sysfs`, for unit tests.
#[cfg(test)]
pub fn fixture(name: &str) -> Topology {
    let root = format!("{}/tests/fixtures/sysfs/{name}", env!("CARGO_MANIFEST_DIR"));
    read_topology(&SysfsRoot::new(root)).unwrap()
}

#[cfg(test)]
pub(crate) mod synthetic;

#[cfg(test)]
mod tests {
    use super::fixture;

    #[test]
    fn one_node_with_incomplete_meminfo_uses_the_system_figure() {
        let mut topo = fixture("local-1node");
        let node_free = topo.nodes[0].mem_free_bytes.unwrap();
        let node_total = topo.nodes[0].mem_total_bytes;
        topo.system_mem_total_bytes = Some(node_total);
        topo.system_mem_free_bytes = Some(node_free * 4);
        assert!(!topo.node_memory_incomplete());
        assert_eq!(topo.node_free_bytes(0), node_free);
        topo.system_mem_total_bytes = Some(node_total * 4);
        assert!(topo.node_memory_incomplete());
        assert_eq!(topo.node_free_bytes(0), node_free * 4);
    }

    #[test]
    fn several_nodes_keep_their_own_figures() {
        let mut topo = fixture("two-node");
        let total: u64 = topo.nodes.iter().map(|n| n.mem_total_bytes).sum();
        topo.system_mem_total_bytes = Some(total * 4);
        topo.system_mem_free_bytes = Some(total * 4);
        assert_eq!(Some(topo.node_free_bytes(1)), topo.nodes[1].mem_free_bytes);
    }

    #[test]
    fn node_memory_past_u64_max_saturates() {
        let mut topo = fixture("two-node");
        for n in &mut topo.nodes {
            n.mem_total_bytes = u64::MAX;
        }
        topo.system_mem_total_bytes = Some(u64::MAX);
        assert!(!topo.node_memory_incomplete());
        assert!(topo.warnings().iter().all(|w| !w.contains("meminfo")));
        topo.nodes[0].mem_total_bytes = 1;
        topo.nodes[1].mem_total_bytes = 2;
        let w = topo.warnings();
        assert!(
            w[0].contains("add up to 3 B but /proc/meminfo reports 16 EiB"),
            "{w:?}"
        );
    }
}
