//! Builds a [`Topology`] from the sysfs and procfs files listed in
//! `docs/sysfs-files.md`.
//!
//! Optional files that are absent mean "not known"; malformed contents are
//! errors naming the file, because a silently wrong topology would make every
//! later figure wrong.

use super::source::{ReadError, SysfsRoot, numbered, value_of};
use super::*;
use crate::ids::IdSet;

mod cpuinfo;
mod damon;
mod devices;
mod memory;
#[cfg(test)]
mod tests;
mod virt;

use cpuinfo::*;
use damon::read_damon;
use devices::*;
use memory::*;
use virt::read_virtual_machine;

/// Highest CPU count read from a tree: CPU ids must be below it. Linux
/// allows at most 8192 CPUs (`NR_CPUS` with `CONFIG_MAXSMP`), and each CPU
/// carries sets sized by the highest id, so a larger count is a damaged or
/// hostile file that would otherwise take memory quadratic in it.
pub const MAX_CPUS: usize = crate::ids::MAX_CPUS;
/// Highest node count read from a tree: node ids must be below it. Linux
/// allows at most 1024 nodes (`NODES_SHIFT` of 10); each node carries a
/// distance row as long as the node count.
pub const MAX_NODES: usize = 1024;
/// Largest memory size taken from a file (1 EiB): more is a damaged value,
/// and sums or products of such figures would overflow.
pub const MAX_BYTES: u64 = 1 << 60;

#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    /// The root override does not point at a captured machine.
    #[error("sysfs root {path} (from --sysfs-root or {ROOT}): {reason}", ROOT = super::ROOT_ENV)]
    BadRoot { path: String, reason: String },
    #[error("cannot parse {file}: {reason}")]
    Malformed { file: String, reason: String },
    /// A FIFO, device or directory where a file belongs, a file too large
    /// to be a sysfs value, or a loop of links.
    #[error("{}{}", .0, .0.hint())]
    Unreadable(ReadError),
}

impl From<ReadError> for TopologyError {
    fn from(e: ReadError) -> Self {
        Self::Unreadable(e)
    }
}

/// The deepest cache level believed: x86 shows up to 4 (an eDRAM L4), and
/// firmware tables (ACPI PPTT) may describe a system cache below that. A
/// level past this, like a level of 0, is a damaged capture.
const MAX_CACHE_LEVEL: u32 = 8;
const NODE_DIR: &str = "sys/devices/system/node";
const CPU_DIR: &str = "sys/devices/system/cpu";

fn malformed(file: &str, reason: impl ToString) -> TopologyError {
    TopologyError::Malformed {
        file: crate::text::escape(file).into_owned(),
        reason: shown(&reason.to_string()),
    }
}

/// Text quoting a file's value, which may be megabytes long or hold control
/// characters, as one short line safe for a terminal.
fn shown(text: &str) -> String {
    const MAX_CHARS: usize = 300;
    let mut text = text.to_string();
    if let Some((cut, _)) = text.char_indices().nth(MAX_CHARS) {
        text.truncate(cut);
        text.push_str("...");
    }
    crate::text::escape(&text).into_owned()
}

/// What a list holds, which sets the largest id it may name.
#[derive(Clone, Copy)]
enum Ids {
    Cpus,
    Nodes,
}

impl Ids {
    /// The set, when no id in it is too large.
    fn check(self, file: &str, set: IdSet) -> Result<IdSet, TopologyError> {
        match set.iter().last() {
            Some(last) => self.bound(file, last).map(|()| set),
            None => Ok(set),
        }
    }

    /// A set of the numbers in directory entries (`cpu12`), checked before
    /// the set is built: a planted `cpu99999999999` must not size a bitmap.
    fn entries(self, dir: &str, ids: Vec<usize>) -> Result<IdSet, TopologyError> {
        if let Some(&last) = ids.iter().max() {
            self.bound(dir, last)?;
        }
        Ok(IdSet::from_ids(ids))
    }

    fn bound(self, file: &str, id: usize) -> Result<(), TopologyError> {
        let (max, what, why) = match self {
            Ids::Cpus => (MAX_CPUS, "CPU", "Linux allows at most 8192 CPUs"),
            Ids::Nodes => (MAX_NODES, "node", "Linux allows at most 1024 nodes"),
        };
        if id < max {
            return Ok(());
        }
        Err(malformed(
            file,
            format!(
                "{what} {id} is beyond the largest {what} id numabench accepts ({}; {why})",
                max - 1
            ),
        ))
    }
}

fn list(src: &SysfsRoot, rel: &str, ids: Ids) -> Result<Option<IdSet>, TopologyError> {
    match src.read(rel)? {
        None => Ok(None),
        Some(text) => {
            let set = IdSet::parse_list(value_of(&text)).map_err(|e| malformed(rel, e))?;
            ids.check(rel, set).map(Some)
        }
    }
}

/// A CPU bitmap as `cpumap` and `thread_siblings` write it: 32-bit hex
/// words separated by commas, most significant first.
fn mask(src: &SysfsRoot, rel: &str) -> Result<Option<IdSet>, TopologyError> {
    let Some(text) = src.read(rel)? else {
        return Ok(None);
    };
    let text = value_of(&text);
    let bad = || malformed(rel, format!("'{text}' is not a CPU mask"));
    let mut ids = Vec::new();
    for (word_index, word) in text.rsplit(',').enumerate() {
        let bits = u32::from_str_radix(word.trim(), 16).map_err(|_| bad())?;
        for bit in 0..32 {
            if bits & (1 << bit) != 0 {
                let id = word_index * 32 + bit;
                Ids::Cpus.bound(rel, id)?;
                ids.push(id);
            }
        }
    }
    Ok(Some(IdSet::from_ids(ids)))
}

/// A CPU list file, or its bitmap twin where old kernels write only that
/// (`cpulist`/`cpumap`, `thread_siblings_list`/`thread_siblings`).
fn list_or_mask(
    src: &SysfsRoot,
    list_file: &str,
    mask_file: &str,
) -> Result<Option<IdSet>, TopologyError> {
    match list(src, list_file, Ids::Cpus)? {
        Some(set) => Ok(Some(set)),
        None => mask(src, mask_file),
    }
}

/// The first of `names` (a CPU file and its newer or older name) that
/// `dir` holds, as a list (`NAME_list`) or else a bitmap (`NAME`).
fn cpus_of(src: &SysfsRoot, dir: &str, names: &[&str]) -> Result<Option<IdSet>, TopologyError> {
    for name in names {
        if let Some(set) = list(src, &format!("{dir}/{name}_list"), Ids::Cpus)? {
            return Ok(Some(set));
        }
    }
    for name in names {
        if let Some(set) = mask(src, &format!("{dir}/{name}"))? {
            return Ok(Some(set));
        }
    }
    Ok(None)
}

fn number<T: std::str::FromStr>(src: &SysfsRoot, rel: &str) -> Result<Option<T>, TopologyError> {
    match src.read_trimmed(rel)? {
        None => Ok(None),
        Some(text) => text
            .parse()
            .map(Some)
            .map_err(|_| malformed(rel, format!("'{text}' is not a number"))),
    }
}

/// A string value shown as is (host name, kernel release): empty when absent.
fn text(src: &SysfsRoot, rel: &str) -> Result<String, TopologyError> {
    Ok(src.read_trimmed(rel)?.unwrap_or_default())
}

/// Reads the whole model. With a root other than `/`, the root is checked
/// first so a mistyped path is reported as such.
pub fn read_topology(src: &SysfsRoot) -> Result<Topology, TopologyError> {
    if !src.is_live() {
        src.check().map_err(|e| TopologyError::BadRoot {
            path: src.path().display().to_string(),
            reason: e.to_string(),
        })?;
    }
    let cpus_online = match list(src, &format!("{CPU_DIR}/online"), Ids::Cpus)? {
        Some(set) => set,
        None => online_one_by_one(src)?,
    };
    let cpus_possible = list(src, &format!("{CPU_DIR}/possible"), Ids::Cpus)?
        .unwrap_or_else(|| cpus_online.clone());
    let meminfo = Meminfo::read(src, "proc/meminfo")?;
    let mut notes = Vec::new();
    let (mut nodes, numa_sysfs) = read_nodes(src, &cpus_online, &mut notes)?;
    let cpuinfo = src.read("proc/cpuinfo")?.unwrap_or_default();
    let mut cpus = read_cpus(src, &cpus_online, &nodes, &mut notes)?;
    if amd_without_smt(&cpuinfo) {
        split_compute_units(&mut cpus, &mut notes);
    }
    let caches = read_caches(src, &cpus_online, &mut notes)?;
    let memory_tiers = read_tiers(src, &mut nodes, &mut notes)?;
    let allowed = read_allowed(src, &cpus_online, &nodes)?;
    Ok(Topology {
        hostname: text(src, "proc/sys/kernel/hostname")?,
        kernel: text(src, "proc/sys/kernel/osrelease")?,
        cpu_model: cpu_model(&cpuinfo),
        virtual_machine: read_virtual_machine(src, &cpuinfo),
        nodes,
        cpus,
        cpus_possible,
        cpus_online,
        caches,
        allowed,
        thp: Thp {
            enabled: src
                .read("sys/kernel/mm/transparent_hugepage/enabled")?
                .and_then(|t| bracketed(&t)),
            defrag: src
                .read("sys/kernel/mm/transparent_hugepage/defrag")?
                .and_then(|t| bracketed(&t)),
        },
        numa_balancing: number(src, "proc/sys/kernel/numa_balancing")?,
        memory_tiers,
        tiering: read_tiering(src)?,
        damon: read_damon(src),
        accelerators: read_accelerators(src)?,
        system_mem_total_bytes: meminfo.total_free()?.map(|m| m.0),
        system_mem_free_bytes: meminfo.total_free()?.and_then(|m| m.1),
        memory_limit: super::limits::read(src),
        numa_sysfs,
        notes,
    })
}

/// Without a global `cpu/online` (old kernels), each `cpuN/online` says;
/// a CPU without one (cpu0 often cannot go offline) is online, and so is
/// one whose file is empty (a 128-CPU ia64 machine writes that; hwloc
/// reads it as online too, being no "0").
fn online_one_by_one(src: &SysfsRoot) -> Result<IdSet, TopologyError> {
    let all = Ids::Cpus.entries(CPU_DIR, numbered(&src.list(CPU_DIR), "cpu"))?;
    let mut online = Vec::new();
    for id in all.iter() {
        let file = format!("{CPU_DIR}/cpu{id}/online");
        match src.read_trimmed(&file)?.as_deref() {
            None | Some("1" | "") => online.push(id),
            Some("0") => {}
            Some(other) => {
                return Err(malformed(&file, format!("'{other}' is neither 0 nor 1")));
            }
        }
    }
    Ok(IdSet::from_ids(online))
}

fn read_nodes(
    src: &SysfsRoot,
    cpus_online: &IdSet,
    notes: &mut Vec<String>,
) -> Result<(Vec<Node>, bool), TopologyError> {
    let names = src.list(NODE_DIR);
    let online = list(src, &format!("{NODE_DIR}/online"), Ids::Nodes)?;
    for name in absurd_node_dirs(&names) {
        let dir = format!("{NODE_DIR}/{name}");
        let why = format!(
            "a node id beyond {}, which no kernel writes (Linux allows at most 1024 nodes)",
            MAX_NODES - 1
        );
        // With `node/online` saying which nodes there are, the stray
        // directory is not one of them; without it, no list can be trusted.
        if online.is_none() {
            return Err(malformed(&dir, why));
        }
        notes.push(format!("{}: {why}; the directory is ignored", shown(&dir)));
    }
    let ids = match online {
        Some(set) => set,
        None => Ids::Nodes.entries(NODE_DIR, numbered(&names, "node"))?,
    };
    if ids.is_empty() {
        // A kernel built without NUMA: one node holding everything.
        let meminfo = Meminfo::read(src, "proc/meminfo")?;
        return Ok((
            vec![Node {
                id: 0,
                cpus: cpus_online.clone(),
                has_cpu: true,
                has_memory: true,
                mem_total_bytes: meminfo.total_free()?.map_or(0, |m| m.0),
                mem_free_bytes: meminfo.total_free()?.map_or(Some(0), |m| m.1),
                distances: vec![10],
                hugepages: Vec::new(),
                hmat: None,
                tier: None,
            }],
            false,
        ));
    }
    let has_cpu = list(src, &format!("{NODE_DIR}/has_cpu"), Ids::Nodes)?;
    let has_memory = list(src, &format!("{NODE_DIR}/has_memory"), Ids::Nodes)?;
    let mut nodes = Vec::new();
    let mut free_unknown = Vec::new();
    for id in ids.iter() {
        let dir = format!("{NODE_DIR}/node{id}");
        let cpus = list_or_mask(src, &format!("{dir}/cpulist"), &format!("{dir}/cpumap"))?
            .unwrap_or_default()
            .intersection(cpus_online);
        let meminfo = Meminfo::read(src, &format!("{dir}/meminfo"))?;
        let (mem_total_bytes, mem_free_bytes) = meminfo.total_free()?.unwrap_or((0, Some(0)));
        if mem_free_bytes.is_none() {
            free_unknown.push(id);
        }
        let distance_file = format!("{dir}/distance");
        let distances = match src.read(&distance_file)? {
            Some(text) => value_of(&text)
                .split_whitespace()
                .take(MAX_NODES + 1)
                .map(|d| {
                    d.parse::<u32>()
                        .map_err(|_| malformed(&distance_file, format!("'{d}' is not a distance")))
                })
                .collect::<Result<Vec<_>, _>>()?,
            None => Vec::new(),
        };
        let distances = plausible_distances(&distance_file, distances, notes);
        let distances = online_distances(src, &distance_file, distances, &ids, notes)?;
        nodes.push(Node {
            id,
            // The node's own CPU list wins over an empty or stale
            // `has_cpu` (a 3.10 kernel writes it empty).
            has_cpu: !cpus.is_empty() || has_cpu.as_ref().is_some_and(|s| s.contains(id)),
            has_memory: has_memory
                .as_ref()
                .map_or(mem_total_bytes > 0, |s| s.contains(id)),
            cpus,
            mem_total_bytes,
            mem_free_bytes,
            distances,
            hugepages: read_hugepages(src, &format!("{dir}/hugepages"))?,
            hmat: read_hmat(src, &dir, notes)?,
            tier: None,
        });
    }
    if !free_unknown.is_empty() {
        notes.push(format!(
            "the meminfo of node(s) {} has no MemFree line: their free memory is unknown, and runs are sized and admitted against their total memory (or the system's free memory, where less)",
            IdSet::from_ids(free_unknown)
        ));
    }
    claim_cpus_once(&mut nodes, notes);
    Ok((nodes, true))
}

/// `nodeN` directories whose N is no node id: beyond [`MAX_NODES`], or too
/// long to be a number at all.
fn absurd_node_dirs(names: &[String]) -> impl Iterator<Item = &String> {
    names.iter().filter(|name| {
        name.strip_prefix("node").is_some_and(|digits| {
            !digits.is_empty()
                && digits.bytes().all(|b| b.is_ascii_digit())
                && digits.parse::<usize>().map_or(true, |id| id >= MAX_NODES)
        })
    })
}

/// A distance row whose figures a kernel could have written: Linux keeps
/// each distance in a byte and refuses firmware tables with one under 10
/// (the local distance), so a 0 or a 4294967295 is a damaged capture, and
/// the row is left out with a note rather than ranked.
fn plausible_distances(file: &str, row: Vec<u32>, notes: &mut Vec<String>) -> Vec<u32> {
    match row.iter().find(|d| !(10..=255).contains(*d)) {
        None => row,
        Some(d) => {
            notes.push(format!(
                "{file}: distance {d} is not one Linux writes (10 to 255); the row is left out"
            ));
            Vec::new()
        }
    }
}

/// A node's distance row as long as the online nodes. A row longer than
/// that (a node was offlined after boot) is cut to the online nodes'
/// columns when it has one per possible node, else left out with a note:
/// a wrong column would be worse than none.
fn online_distances(
    src: &SysfsRoot,
    file: &str,
    row: Vec<u32>,
    online: &IdSet,
    notes: &mut Vec<String>,
) -> Result<Vec<u32>, TopologyError> {
    if row.is_empty() || row.len() == online.len() {
        return Ok(row);
    }
    let possible = list(src, &format!("{NODE_DIR}/possible"), Ids::Nodes)?;
    if let Some(possible) = possible
        && possible.len() == row.len()
        && online.iter().all(|n| possible.contains(n))
    {
        let columns: Vec<usize> = possible.iter().collect();
        let cut: Vec<u32> = columns
            .iter()
            .zip(&row)
            .filter(|(n, _)| online.contains(**n))
            .map(|(_, d)| *d)
            .collect();
        let note = format!(
            "distance rows list {} possible nodes, {} are online: the online nodes' columns are used",
            row.len(),
            online.len()
        );
        if !notes.contains(&note) {
            notes.push(note);
        }
        return Ok(cut);
    }
    notes.push(format!(
        "{file}: {} distances for {} online nodes; the row is left out",
        row.len(),
        online.len()
    ));
    Ok(Vec::new())
}

/// A CPU is on one node (the kernel keeps one node per CPU), but firmware
/// may list the same CPUs under several nodes. The lowest such node keeps
/// them and the later ones become memory without CPUs: their memory is
/// still there to bind, but measuring "node 3's CPUs" would measure node
/// 0's again, and per-node CPU figures would repeat one node's as though
/// the nodes were distinct.
fn claim_cpus_once(nodes: &mut [Node], notes: &mut Vec<String>) {
    let mut claimed = IdSet::new();
    // (copy, owner) for nodes listing exactly an earlier node's CPUs.
    let mut copies: Vec<(usize, usize)> = Vec::new();
    for i in 0..nodes.len() {
        let taken = nodes[i].cpus.intersection(&claimed);
        if !taken.is_empty() {
            let owners: Vec<usize> = nodes[..i]
                .iter()
                .filter(|o| !o.cpus.intersection(&taken).is_empty())
                .map(|o| o.id)
                .collect();
            match owners.as_slice() {
                [owner] if nodes[i].cpus == taken && node_cpus(nodes, *owner) == taken => {
                    copies.push((nodes[i].id, *owner));
                }
                _ => notes.push(format!(
                    "firmware bug: node {} lists CPUs {taken} that node(s) {} list too; a CPU is on one node, so they are taken as the lower node's",
                    nodes[i].id,
                    IdSet::from_ids(owners)
                )),
            }
            let n = &mut nodes[i];
            n.cpus = n.cpus.difference(&taken);
            if n.cpus.is_empty() {
                n.has_cpu = false;
            }
        }
        claimed = claimed.union(&nodes[i].cpus);
    }
    let mut owners: Vec<usize> = copies.iter().map(|c| c.1).collect();
    owners.sort_unstable();
    owners.dedup();
    for owner in owners {
        let of: Vec<usize> = copies
            .iter()
            .filter(|c| c.1 == owner)
            .map(|c| c.0)
            .collect();
        let all = IdSet::from_ids(of.iter().copied().chain([owner]));
        notes.push(format!(
            "firmware bug: nodes {all} list the same CPUs ({}); they are taken as node {owner}'s, and nodes {} as memory without CPUs: measuring from their CPUs would measure node {owner}'s again",
            node_cpus(nodes, owner),
            IdSet::from_ids(of)
        ));
    }
}

fn node_cpus(nodes: &[Node], id: usize) -> IdSet {
    nodes
        .iter()
        .find(|n| n.id == id)
        .map(|n| n.cpus.clone())
        .unwrap_or_default()
}

fn read_cpus(
    src: &SysfsRoot,
    online: &IdSet,
    nodes: &[Node],
    notes: &mut Vec<String>,
) -> Result<Vec<Cpu>, TopologyError> {
    let mut cpus = Vec::new();
    let mut package_masks = Vec::new();
    let mut node_of = std::collections::HashMap::new();
    for n in nodes {
        for cpu in n.cpus.iter() {
            node_of.entry(cpu).or_insert(n.id);
        }
    }
    for id in online.iter() {
        let dir = format!("{CPU_DIR}/cpu{id}/topology");
        // Some kernels report an unknown die or cluster as -1 or 65535;
        // package and core ids are any 32-bit number (ia64 numbers its
        // packages from 65535 up), -1 being "unknown".
        let small_id = |v: Option<i64>| v.filter(|&v| (0..65535).contains(&v)).map(|v| v as u32);
        let any_id = |v: Option<i64>| v.and_then(|v| u32::try_from(v).ok());
        cpus.push(Cpu {
            id,
            node: node_of.get(&id).copied(),
            package: any_id(number(src, &format!("{dir}/physical_package_id"))?),
            die: small_id(number(src, &format!("{dir}/die_id"))?),
            core: any_id(number(src, &format!("{dir}/core_id"))?),
            // The kernel drops an offlined sibling from the list; a list
            // naming CPUs that are not online (a damaged capture says
            // 0-8191) would make one core of thousands of threads.
            // `core_cpus` is the name since Linux 5.4, and the only one
            // some captures hold.
            smt_siblings: cpus_of(src, &dir, &["thread_siblings", "core_cpus"])?
                .map(|s| {
                    let mut s = s.intersection(online);
                    s.insert(id);
                    s
                })
                .unwrap_or_default(),
        });
        let package = cpus_of(src, &dir, &["package_cpus", "core_siblings"])?;
        package_masks.push(package.map(|s| s.intersection(online)));
    }
    siblings_from_core_ids(&mut cpus);
    packages_from_masks(&mut cpus, &package_masks, notes);
    Ok(cpus)
}

/// Packages from the CPUs each CPU's package holds, where the package ids
/// cannot say: POWER and s390 write -1, and some ia64 kernels give two
/// sockets one id. When every CPU has a non-empty mask and the ids are
/// missing or do not match the masks, each distinct mask is a package,
/// numbered in the order of its first CPU (as hwloc groups them).
fn packages_from_masks(cpus: &mut [Cpu], masks: &[Option<IdSet>], notes: &mut Vec<String>) {
    let Some(masks) = masks
        .iter()
        .map(|m| m.as_ref().filter(|m| !m.is_empty()))
        .collect::<Option<Vec<&IdSet>>>()
    else {
        return;
    };
    if masks.is_empty() {
        return;
    }
    let mut distinct: Vec<&IdSet> = masks.clone();
    distinct.sort_by_key(|m| m.first());
    distinct.dedup();
    let mut id_of_mask = std::collections::HashMap::new();
    let mut conflict = false;
    for (c, m) in cpus.iter().zip(&masks) {
        match (c.package, id_of_mask.insert(m.to_list(), c.package)) {
            (None, _) => conflict = true,
            (id, Some(before)) if before != id => conflict = true,
            _ => {}
        }
    }
    let ids: std::collections::HashSet<Option<u32>> = cpus.iter().map(|c| c.package).collect();
    if !conflict && ids.len() == distinct.len() {
        return;
    }
    let known = cpus.iter().any(|c| c.package.is_some());
    for (c, m) in cpus.iter_mut().zip(&masks) {
        c.package = distinct.iter().position(|d| d == m).map(|i| i as u32);
    }
    if known {
        notes.push(format!(
            "physical_package_id does not match the CPUs each package lists (core_siblings_list); the {} packages are taken from those lists",
            distinct.len()
        ));
    }
}

/// On AMD families without SMT, thread siblings are the cores of one
/// compute unit: each CPU is a core of its own, so that scaling adds them
/// as cores and cache-to-cache figures do not call them SMT siblings.
fn split_compute_units(cpus: &mut [Cpu], notes: &mut Vec<String>) {
    let mut paired = 0;
    for c in cpus.iter_mut().filter(|c| c.smt_siblings.len() > 1) {
        c.smt_siblings = IdSet::from_ids([c.id]);
        paired += 1;
    }
    if paired > 0 {
        notes.push(format!(
            "AMD family 15h/16h has no SMT: the {paired} CPUs the kernel lists as thread siblings are the cores of compute units (two cores sharing a front end, FPU and L2), counted here as cores"
        ));
    }
}

/// Where a kernel writes neither sibling file (RHEL5-era trees), the CPUs
/// sharing a package and core id are one core's threads; a CPU without
/// both ids is a core of its own.
fn siblings_from_core_ids(cpus: &mut [Cpu]) {
    let mut by_core: std::collections::HashMap<(u32, u32), Vec<usize>> =
        std::collections::HashMap::new();
    for c in cpus.iter() {
        if let (Some(p), Some(k)) = (c.package, c.core) {
            by_core.entry((p, k)).or_default().push(c.id);
        }
    }
    for c in cpus.iter_mut().filter(|c| c.smt_siblings.is_empty()) {
        c.smt_siblings = match (c.package, c.core) {
            (Some(p), Some(k)) => IdSet::from_ids(by_core[&(p, k)].iter().copied()),
            _ => IdSet::from_ids([c.id]),
        };
    }
}

fn read_caches(
    src: &SysfsRoot,
    online: &IdSet,
    notes: &mut Vec<String>,
) -> Result<Vec<Cache>, TopologyError> {
    let mut caches: Vec<Cache> = Vec::new();
    // Each CPU lists its shared caches again; a set finds repeats in
    // constant time where a scan of `caches` would be quadratic in CPUs.
    let mut seen = std::collections::HashSet::new();
    for cpu in online.iter() {
        let dir = format!("{CPU_DIR}/cpu{cpu}/cache");
        for index in numbered(&src.list(&dir), "index") {
            let d = format!("{dir}/index{index}");
            let shared = list(src, &format!("{d}/shared_cpu_list"), Ids::Cpus)?;
            // A cache shared with an online CPU of a lower id was read from
            // that CPU already: on a 256-CPU machine this skips most reads.
            if let Some(first) = shared.as_ref().and_then(IdSet::first)
                && first < cpu
                && online.contains(first)
            {
                continue;
            }
            // The kernel hides a cache's level, size and line size where
            // they are 0, so a 0 is a damaged capture, not a real cache.
            let level_file = format!("{d}/level");
            let level = match number::<u32>(src, &level_file)? {
                None => continue,
                Some(l @ 1..=MAX_CACHE_LEVEL) => l,
                Some(l) => {
                    notes.push(format!(
                        "{level_file}: level {l} is not one a cache has (1 to {MAX_CACHE_LEVEL}); that cache is not shown"
                    ));
                    continue;
                }
            };
            let kind = src
                .read_trimmed(&format!("{d}/type"))?
                .unwrap_or_else(|| "Unified".into());
            let size_file = format!("{d}/size");
            let size_bytes = match src.read_trimmed(&size_file)? {
                Some(text) => parse_size(&text)
                    .filter(|&b| b <= MAX_BYTES)
                    .ok_or_else(|| malformed(&size_file, format!("'{text}' is not a size")))?,
                None => continue,
            };
            if size_bytes == 0 {
                notes.push(format!("{size_file}: a size of 0; that cache is not shown"));
                continue;
            }
            let line_file = format!("{d}/coherency_line_size");
            let line_bytes = match number::<u32>(src, &line_file)? {
                Some(0) => {
                    notes.push(format!("{line_file}: a line of 0 B; shown as not reported"));
                    None
                }
                other => other,
            };
            let cpus = shared.unwrap_or_else(|| IdSet::from_ids([cpu]));
            let cache = Cache {
                level,
                kind,
                size_bytes,
                line_bytes,
                cpus,
            };
            let key = (
                cache.level,
                cache.kind.clone(),
                cache.size_bytes,
                cache.line_bytes,
                cache.cpus.clone(),
            );
            if seen.insert(key) {
                caches.push(cache);
            }
        }
    }
    caches.sort_by(|a, b| {
        (a.level, &a.kind, a.cpus.first()).cmp(&(b.level, &b.kind, b.cpus.first()))
    });
    Ok(caches)
}

/// Sizes as sysfs writes them: `48K`, `2048K`, `32M`, or plain bytes.
pub(crate) fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (digits, mult) = match t.chars().last()? {
        'K' | 'k' => (&t[..t.len() - 1], 1u64 << 10),
        'M' | 'm' => (&t[..t.len() - 1], 1 << 20),
        'G' | 'g' => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(mult)
}

fn read_allowed(
    src: &SysfsRoot,
    cpus_online: &IdSet,
    nodes: &[Node],
) -> Result<Allowed, TopologyError> {
    let status = src.read("proc/self/status")?.unwrap_or_default();
    let field = |key: &str| -> Result<Option<IdSet>, TopologyError> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .map(|v| IdSet::parse_list(v).map_err(|e| malformed("proc/self/status", e)))
            .transpose()
    };
    // The cpuset is intersected with what is online: any id the list
    // parser accepts is harmless here.
    let all_nodes = IdSet::from_ids(nodes.iter().map(|n| n.id));
    Ok(Allowed {
        cpus: field("Cpus_allowed_list:")?
            .map(|s| s.intersection(cpus_online))
            .unwrap_or_else(|| cpus_online.clone()),
        nodes: field("Mems_allowed_list:")?
            .map(|s| s.intersection(&all_nodes))
            .unwrap_or(all_nodes),
    })
}

/// The word in brackets of a sysfs choice file: `always [madvise] never`.
fn bracketed(text: &str) -> Option<String> {
    let start = text.find('[')? + 1;
    let end = start + text[start..].find(']')?;
    Some(text[start..end].to_string())
}
