//! Synthetic sysfs/procfs trees of big machines, for tests: a [`Shape`]
//! (sockets, nodes per socket, CPUs per node, SMT, memory, L3, SLIT
//! distances) written out as the files the topology reader uses
//! (`docs/sysfs-files.md`), laid out as a Linux 6.x kernel writes them.
//!
//! The captured fixtures stop at 16 nodes; these trees stand in for the 32-
//! and 64-node machines no one has captured. The file depends on std alone:
//! the library's unit tests declare it under `topology`, the integration
//! tests include the same file by path. The caller makes the directory
//! (a temporary one) and hands it to [`Shape::write`].
//!
//! Numbering follows Linux on x86: CPU nodes are numbered socket by socket,
//! the first hardware thread of every core comes first (node 0's cores,
//! then node 1's, ...), the second threads after all of them (with 2 nodes
//! of 4 cores, node 0 is `0-3,8-11`). Memory-only nodes (CXL) follow the
//! CPU nodes, memory-only node `i` hanging off socket `i % sockets`.

// Each of the two test crates that include this file uses part of it.
#![allow(dead_code)]

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::Path;

/// Where the L3 is shared: by a node's CPUs (AMD NPS, Intel SNC: one slice
/// group per node) or by a whole socket's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum L3 {
    PerNode(u64),
    PerSocket(u64),
}

/// SLIT distances of a shape.
///
/// Sockets talk over links: up to 4 sockets are fully connected (one hop
/// apart). From 5 sockets on they sit at the corners of a folded hypercube
/// (the 3-cube for 8 sockets, with a link also between opposite corners,
/// like the twisted hypercubes of 8-socket Xeon boards): sockets `a` and
/// `b` are one hop apart when `a ^ b` has one bit set or all of them, else
/// two (at most two for up to 16 sockets). One hop is `other_socket`, two
/// or more `two_hops`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Distances {
    /// A node to itself.
    pub(crate) local: u32,
    /// Between nodes of one socket (SNC/NPS clusters).
    pub(crate) same_socket: u32,
    /// Between sockets one hop apart.
    pub(crate) other_socket: u32,
    /// Between sockets two hops apart.
    pub(crate) two_hops: u32,
    /// From a CPU node to a memory-only node on its own socket.
    pub(crate) memory_only: u32,
    /// From a CPU node to a memory-only node on another socket, and
    /// between two memory-only nodes.
    pub(crate) memory_only_remote: u32,
}

impl Default for Distances {
    fn default() -> Self {
        Self {
            local: 10,
            same_socket: 12,
            other_socket: 21,
            two_hops: 32,
            memory_only: 50,
            memory_only_remote: 60,
        }
    }
}

/// A machine to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shape {
    pub(crate) sockets: usize,
    /// NUMA nodes with CPUs per socket (SNC or NPS setting).
    pub(crate) nodes_per_socket: usize,
    /// Logical CPUs per node, SMT threads included.
    pub(crate) cpus_per_node: usize,
    /// Hardware threads per core: 1 or 2.
    pub(crate) smt: usize,
    pub(crate) mem_per_node_bytes: u64,
    pub(crate) l3: L3,
    pub(crate) distances: Distances,
    /// Memory-only nodes (CXL), after the CPU nodes.
    pub(crate) memory_only_nodes: usize,
}

/// The CPU lists of each socket and each node, in kernel list syntax.
struct Lists {
    socket: Vec<String>,
    node: Vec<String>,
}

/// Private caches of every core: (level, type, size in KiB).
pub(crate) const CORE_CACHES: [(u32, &str, u64); 3] = [
    (1, "Data", 48),
    (1, "Instruction", 32),
    (2, "Unified", 2048),
];

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

impl Shape {
    /// `sockets` x `nodes_per_socket` nodes of `cpus_per_node` CPUs, 2-way
    /// SMT, 64 GiB and 32 MiB of L3 per node, default distances.
    pub(crate) fn new(sockets: usize, nodes_per_socket: usize, cpus_per_node: usize) -> Self {
        Self {
            sockets,
            nodes_per_socket,
            cpus_per_node,
            smt: 2,
            mem_per_node_bytes: 64 * GIB,
            l3: L3::PerNode(32 * MIB),
            distances: Distances::default(),
            memory_only_nodes: 0,
        }
    }

    /// 8 nodes: 2 sockets x NPS4 x 16 CPUs (an AMD EPYC pair), distances
    /// 10/12/32 as AMD firmware writes them, 32 MiB L3 per node.
    pub(crate) fn eight_nodes() -> Self {
        let mut s = Self::new(2, 4, 16);
        s.distances.other_socket = 32;
        s
    }

    /// 16 nodes: 4 sockets x SNC4 x 32 CPUs (512 CPUs), 10/12/21, the L3
    /// shared by a socket (105 MiB).
    pub(crate) fn sixteen_nodes() -> Self {
        let mut s = Self::new(4, 4, 32);
        s.l3 = L3::PerSocket(105 * MIB);
        s
    }

    /// 32 nodes: 8 sockets x SNC4 x 32 CPUs (1024 CPUs), 10/12/21/32.
    pub(crate) fn thirty_two_nodes() -> Self {
        Self::new(8, 4, 32)
    }

    /// 64 nodes: 8 sockets x 8 nodes x 16 CPUs (1024 CPUs), 10/12/21/32,
    /// 16 MiB of L3 and 32 GiB per node.
    pub(crate) fn sixty_four_nodes() -> Self {
        let mut s = Self::new(8, 8, 16);
        s.l3 = L3::PerNode(16 * MIB);
        s.mem_per_node_bytes = 32 * GIB;
        s
    }

    /// The same machine with `n` memory-only nodes (CXL) added.
    pub(crate) fn with_memory_only(mut self, n: usize) -> Self {
        self.memory_only_nodes = n;
        self
    }

    /// Nodes with CPUs.
    pub(crate) fn cpu_nodes(&self) -> usize {
        self.sockets * self.nodes_per_socket
    }

    /// All nodes, memory-only ones included.
    pub(crate) fn nodes(&self) -> usize {
        self.cpu_nodes() + self.memory_only_nodes
    }

    pub(crate) fn cpus(&self) -> usize {
        self.cpu_nodes() * self.cpus_per_node
    }

    fn cores_per_node(&self) -> usize {
        self.cpus_per_node / self.smt
    }

    /// The socket a node belongs to (a memory-only node: the one it hangs
    /// off).
    pub(crate) fn socket_of(&self, node: usize) -> usize {
        match node.checked_sub(self.cpu_nodes()) {
            None => node / self.nodes_per_socket,
            Some(i) => i % self.sockets,
        }
    }

    /// Link hops between two sockets (see [`Distances`]).
    pub(crate) fn socket_hops(&self, a: usize, b: usize) -> u32 {
        if a == b {
            return 0;
        }
        if self.sockets <= 4 {
            return 1;
        }
        let mask = self.sockets.next_power_of_two() - 1;
        let x = a ^ b;
        x.count_ones().min(1 + (!x & mask).count_ones())
    }

    /// The SLIT distance from node `a` to node `b`.
    pub(crate) fn distance(&self, a: usize, b: usize) -> u32 {
        let d = &self.distances;
        if a == b {
            return d.local;
        }
        let (sa, sb) = (self.socket_of(a), self.socket_of(b));
        let memory_only = a >= self.cpu_nodes() || b >= self.cpu_nodes();
        match (memory_only, self.socket_hops(sa, sb)) {
            (true, 0) if a.min(b) < self.cpu_nodes() => d.memory_only,
            (true, _) => d.memory_only_remote,
            (false, 0) => d.same_socket,
            (false, 1) => d.other_socket,
            (false, _) => d.two_hops,
        }
    }

    /// The CPUs of `node`, ascending (none for a memory-only node).
    pub(crate) fn node_cpus(&self, node: usize) -> Vec<usize> {
        if node >= self.cpu_nodes() {
            return Vec::new();
        }
        let cores = self.cores_per_node();
        let all_cores = self.cpu_nodes() * cores;
        (0..self.smt)
            .flat_map(|t| (0..cores).map(move |c| t * all_cores + node * cores + c))
            .collect()
    }

    /// The node, package, core id (within the package) and first thread of
    /// the core of `cpu`.
    fn place(&self, cpu: usize) -> (usize, usize, usize, usize) {
        let cores = self.cores_per_node();
        let all_cores = self.cpu_nodes() * cores;
        let first = cpu % all_cores;
        let node = first / cores;
        let core = (node % self.nodes_per_socket) * cores + first % cores;
        (node, self.socket_of(node), core, first)
    }

    fn check(&self) -> io::Result<()> {
        let ok = self.sockets > 0
            && self.nodes_per_socket > 0
            && matches!(self.smt, 1 | 2)
            && self.cpus_per_node >= self.smt
            && self.cpus_per_node.is_multiple_of(self.smt)
            && self.mem_per_node_bytes >= 64 * MIB
            && self.cpus() <= 8192
            && self.nodes() <= 1024;
        if ok {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("not a machine Linux could have: {self:?}"),
            ))
        }
    }

    /// Writes the machine's `sys/` and `proc/` under `root`, an empty
    /// directory (made if missing).
    pub(crate) fn write(&self, root: &Path) -> io::Result<()> {
        self.check()?;
        self.write_cpus(root)?;
        self.write_nodes(root)?;
        self.write_proc(root)
    }

    fn write_cpus(&self, root: &Path) -> io::Result<()> {
        let dir = root.join("sys/devices/system/cpu");
        fs::create_dir_all(&dir)?;
        let all = klist((0..self.cpus()).collect());
        for name in ["possible", "present", "online"] {
            fs::write(dir.join(name), format!("{all}\n"))?;
        }
        let socket_lists: Vec<String> = (0..self.sockets)
            .map(|s| {
                klist(
                    (s * self.nodes_per_socket..(s + 1) * self.nodes_per_socket)
                        .flat_map(|n| self.node_cpus(n))
                        .collect(),
                )
            })
            .collect();
        let node_lists: Vec<String> = (0..self.cpu_nodes())
            .map(|n| klist(self.node_cpus(n)))
            .collect();
        let lists = Lists {
            socket: socket_lists,
            node: node_lists,
        };
        // Thousands of small files: written by as many threads as there
        // are CPUs here, each taking every n-th CPU.
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(16));
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|k| {
                    let (dir, lists) = (&dir, &lists);
                    scope.spawn(move || {
                        (k..self.cpus())
                            .step_by(threads)
                            .try_for_each(|cpu| self.write_cpu(dir, lists, cpu))
                    })
                })
                .collect();
            workers
                .into_iter()
                .try_for_each(|w| w.join().expect("a writer thread panicked"))
        })
    }

    /// `cpu<N>/topology` and `cpu<N>/cache` of one CPU.
    fn write_cpu(&self, dir: &Path, lists: &Lists, cpu: usize) -> io::Result<()> {
        let all_cores = self.cpu_nodes() * self.cores_per_node();
        let (node, socket, core, first) = self.place(cpu);
        let threads = klist((0..self.smt).map(|t| first + t * all_cores).collect());
        let c = dir.join(format!("cpu{cpu}"));
        fs::create_dir(&c)?;
        let t = c.join("topology");
        fs::create_dir(&t)?;
        fs::write(t.join("physical_package_id"), format!("{socket}\n"))?;
        fs::write(t.join("die_id"), "0\n")?;
        fs::write(t.join("core_id"), format!("{core}\n"))?;
        fs::write(t.join("thread_siblings_list"), format!("{threads}\n"))?;
        fs::write(
            t.join("core_siblings_list"),
            format!("{}\n", lists.socket[socket]),
        )?;
        let (l3_bytes, l3_cpus) = match self.l3 {
            L3::PerNode(b) => (b, &lists.node[node]),
            L3::PerSocket(b) => (b, &lists.socket[socket]),
        };
        let caches = CORE_CACHES
            .iter()
            .map(|&(level, kind, kb)| (level, kind, kb, &threads))
            .chain([(3, "Unified", l3_bytes >> 10, l3_cpus)]);
        fs::create_dir(c.join("cache"))?;
        for (index, (level, kind, kb, shared)) in caches.enumerate() {
            let d = c.join(format!("cache/index{index}"));
            fs::create_dir(&d)?;
            fs::write(d.join("level"), format!("{level}\n"))?;
            fs::write(d.join("type"), format!("{kind}\n"))?;
            fs::write(d.join("size"), format!("{kb}K\n"))?;
            fs::write(d.join("shared_cpu_list"), format!("{shared}\n"))?;
            fs::write(d.join("coherency_line_size"), "64\n")?;
        }
        Ok(())
    }

    /// Each node's memory: (total, free) in kB, 7/8 of it free.
    pub(crate) fn node_mem_kb(&self) -> (u64, u64) {
        let total = self.mem_per_node_bytes >> 10;
        (total, total / 8 * 7 / 4 * 4)
    }

    fn write_nodes(&self, root: &Path) -> io::Result<()> {
        let dir = root.join("sys/devices/system/node");
        fs::create_dir_all(&dir)?;
        let nodes = klist((0..self.nodes()).collect());
        for name in ["possible", "online", "has_memory"] {
            fs::write(dir.join(name), format!("{nodes}\n"))?;
        }
        let with_cpus = klist((0..self.cpu_nodes()).collect());
        fs::write(dir.join("has_cpu"), format!("{with_cpus}\n"))?;
        let (total, free) = self.node_mem_kb();
        for n in 0..self.nodes() {
            let d = dir.join(format!("node{n}"));
            fs::create_dir_all(&d)?;
            fs::write(d.join("cpulist"), format!("{}\n", klist(self.node_cpus(n))))?;
            let mut row = String::new();
            for m in 0..self.nodes() {
                let sep = if m == 0 { "" } else { " " };
                let _ = write!(row, "{sep}{}", self.distance(n, m));
            }
            fs::write(d.join("distance"), format!("{row}\n"))?;
            let meminfo = format!(
                "Node {n} MemTotal:       {total:8} kB\nNode {n} MemFree:        {free:8} kB\nNode {n} MemUsed:        {:8} kB\n",
                total - free
            );
            fs::write(d.join("meminfo"), meminfo)?;
            let h = d.join("hugepages/hugepages-2048kB");
            fs::create_dir_all(&h)?;
            fs::write(h.join("nr_hugepages"), "0\n")?;
            fs::write(h.join("free_hugepages"), "0\n")?;
        }
        Ok(())
    }

    fn write_proc(&self, root: &Path) -> io::Result<()> {
        let sys = root.join("sys/kernel/mm/transparent_hugepage");
        fs::create_dir_all(&sys)?;
        fs::write(sys.join("enabled"), "always [madvise] never\n")?;
        fs::write(
            sys.join("defrag"),
            "always defer defer+madvise [madvise] never\n",
        )?;
        let kernel = root.join("proc/sys/kernel");
        fs::create_dir_all(&kernel)?;
        fs::write(kernel.join("numa_balancing"), "0\n")?;
        fs::write(kernel.join("osrelease"), "6.8.0-synthetic\n")?;
        fs::write(kernel.join("hostname"), format!("{}\n", self.hostname()))?;
        let proc = root.join("proc");
        let mut cpuinfo = String::new();
        for cpu in 0..self.cpus() {
            let (_, socket, core, _) = self.place(cpu);
            let _ = write!(
                cpuinfo,
                "processor\t: {cpu}\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel name\t: {}\nphysical id\t: {socket}\ncore id\t\t: {core}\n\n",
                self.model_name()
            );
        }
        fs::write(proc.join("cpuinfo"), cpuinfo)?;
        let (total, free) = self.node_mem_kb();
        let n = self.nodes() as u64;
        fs::write(
            proc.join("meminfo"),
            format!(
                "MemTotal:       {:8} kB\nMemFree:        {:8} kB\n",
                total * n,
                free * n
            ),
        )?;
        fs::create_dir_all(proc.join("self"))?;
        fs::write(
            proc.join("self/status"),
            format!(
                "Name:\tnumabench\nCpus_allowed_list:\t{}\nMems_allowed_list:\t{}\n",
                klist((0..self.cpus()).collect()),
                klist((0..self.nodes()).collect())
            ),
        )
    }

    /// `synthetic-<nodes>n`.
    pub(crate) fn hostname(&self) -> String {
        format!("synthetic-{}n", self.nodes())
    }

    pub(crate) fn model_name(&self) -> String {
        format!(
            "Synthetic {} sockets x {} nodes x {} CPUs",
            self.sockets, self.nodes_per_socket, self.cpus_per_node
        )
    }
}

/// Kernel list syntax (`%*pbl`): ascending, runs of two or more as `a-b`.
pub(crate) fn klist(mut ids: Vec<usize>) -> String {
    ids.sort_unstable();
    ids.dedup();
    let mut out = String::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        let sep = if out.is_empty() { "" } else { "," };
        let _ = if i == j {
            write!(out, "{sep}{}", ids[i])
        } else {
            write!(out, "{sep}{}-{}", ids[i], ids[j])
        };
        i = j + 1;
    }
    out
}
