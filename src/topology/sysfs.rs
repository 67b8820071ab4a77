//! Builds a [`Topology`] from the sysfs and procfs files listed in
//! `docs/sysfs-files.md`.
//!
//! Optional files that are absent mean "not known"; malformed contents are
//! errors naming the file, because a silently wrong topology would make every
//! later figure wrong.

use super::source::{ReadError, SysfsRoot, numbered, value_of};
use super::*;
use crate::ids::IdSet;

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
    /// A FIFO, device or directory where a file belongs, or a file too
    /// large to be a sysfs value.
    #[error("{0}; numabench reads only regular files from sysfs and procfs")]
    Unreadable(ReadError),
}

impl From<ReadError> for TopologyError {
    fn from(e: ReadError) -> Self {
        Self::Unreadable(e)
    }
}

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
    let cpus = read_cpus(src, &cpus_online, &nodes)?;
    let caches = read_caches(src, &cpus_online)?;
    let memory_tiers = read_tiers(src, &mut nodes)?;
    let allowed = read_allowed(src, &cpus_online, &nodes)?;
    Ok(Topology {
        hostname: text(src, "proc/sys/kernel/hostname")?,
        kernel: text(src, "proc/sys/kernel/osrelease")?,
        cpu_model: cpu_model(src.read("proc/cpuinfo")?.as_deref().unwrap_or("")),
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
        accelerators: read_accelerators(src)?,
        system_mem_total_bytes: meminfo.total_free()?.map(|m| m.0),
        system_mem_free_bytes: meminfo.total_free()?.map(|m| m.1),
        numa_sysfs,
        notes,
    })
}

/// Without a global `cpu/online` (old kernels), each `cpuN/online` says;
/// a CPU without one (cpu0 often cannot go offline) is online.
fn online_one_by_one(src: &SysfsRoot) -> Result<IdSet, TopologyError> {
    let all = Ids::Cpus.entries(CPU_DIR, numbered(&src.list(CPU_DIR), "cpu"))?;
    let mut online = Vec::new();
    for id in all.iter() {
        let file = format!("{CPU_DIR}/cpu{id}/online");
        match src.read_trimmed(&file)?.as_deref() {
            None | Some("1") => online.push(id),
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
    let ids = match list(src, &format!("{NODE_DIR}/online"), Ids::Nodes)? {
        Some(set) => set,
        None => Ids::Nodes.entries(NODE_DIR, numbered(&src.list(NODE_DIR), "node"))?,
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
                mem_free_bytes: meminfo.total_free()?.map_or(0, |m| m.1),
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
    for id in ids.iter() {
        let dir = format!("{NODE_DIR}/node{id}");
        let cpus = list_or_mask(src, &format!("{dir}/cpulist"), &format!("{dir}/cpumap"))?
            .unwrap_or_default()
            .intersection(cpus_online);
        let meminfo = Meminfo::read(src, &format!("{dir}/meminfo"))?;
        let (mem_total_bytes, mem_free_bytes) = meminfo.total_free()?.unwrap_or((0, 0));
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
    note_copies(&nodes, notes);
    Ok((nodes, true))
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

/// Firmware that lists the same CPUs and memory under several nodes, all
/// at distance 10 from each other, describes one node several times.
fn note_copies(nodes: &[Node], notes: &mut Vec<String>) {
    let copies: Vec<usize> = nodes
        .iter()
        .filter(|a| {
            nodes.iter().any(|b| {
                b.id != a.id
                    && !a.cpus.is_empty()
                    && a.cpus == b.cpus
                    && a.distances.iter().all(|&d| d == 10)
            })
        })
        .map(|n| n.id)
        .collect();
    if !copies.is_empty() {
        notes.push(format!(
            "firmware bug: nodes {} list the same CPUs at distance 10 from each other; they are one node described several times, and per-node figures repeat",
            IdSet::from_ids(copies)
        ));
    }
}

/// A node's or the system's meminfo file, read once.
struct Meminfo {
    file: String,
    /// `None` when the file is absent: its figures are not known.
    text: Option<String>,
}

impl Meminfo {
    fn read(src: &SysfsRoot, rel: &str) -> Result<Self, TopologyError> {
        Ok(Self {
            file: rel.to_string(),
            text: src.read(rel)?,
        })
    }

    /// `MemTotal` and `MemFree` in bytes; `None` when the file is absent.
    /// More free than total memory is an error: one of them is wrong.
    fn total_free(&self) -> Result<Option<(u64, u64)>, TopologyError> {
        let (Some(total), Some(free)) = (self.bytes("MemTotal")?, self.bytes("MemFree")?) else {
            return Ok(None);
        };
        if free > total {
            return Err(malformed(
                &self.file,
                format!(
                    "MemFree of {} kB is more than MemTotal of {} kB",
                    free / 1024,
                    total / 1024
                ),
            ));
        }
        Ok(Some((total, free)))
    }

    /// The `key` line in bytes; `None` when the file is absent. A file
    /// without the line, a value that is not a size in kB, or one above
    /// [`MAX_BYTES`], is an error: a node shown with 0 B or 16 EiB would be
    /// silently wrong.
    fn bytes(&self, key: &str) -> Result<Option<u64>, TopologyError> {
        let Some(text) = &self.text else {
            return Ok(None);
        };
        let Some(value) = meminfo_value(text, key) else {
            let first = text.lines().next().unwrap_or("").trim();
            return Err(malformed(
                &self.file,
                format!("no '{key}:' line (the file begins '{first}')"),
            ));
        };
        let bad = || malformed(&self.file, format!("{key} '{value}' is not a size in kB"));
        let mut words = value.split_whitespace();
        let kb: u64 = words.next().ok_or_else(bad)?.parse().map_err(|_| bad())?;
        if !matches!(words.next(), None | Some("kB")) || words.next().is_some() {
            return Err(bad());
        }
        match kb.checked_mul(1024) {
            Some(b) if b <= MAX_BYTES => Ok(Some(b)),
            _ => Err(malformed(
                &self.file,
                format!("{key} of {kb} kB is beyond the 1 EiB numabench accepts"),
            )),
        }
    }
}

/// The text after `key:` on its line of a node's or the system's meminfo.
fn meminfo_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().find_map(|line| {
        let (before, rest) = line.split_once(&format!("{key}:"))?;
        // Node files prefix each line with "Node N ".
        let before = before.trim();
        (before.is_empty() || before.starts_with("Node")).then_some(rest.trim())
    })
}

/// A `Key: value kB` line of a node's or the system's meminfo.
#[cfg(test)]
fn meminfo_kb(text: &str, key: &str) -> Option<u64> {
    meminfo_value(text, key)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Largest huge page size taken from a directory name (16 GiB, the largest
/// any architecture has).
const MAX_HUGE_PAGE_KB: u64 = 16 << 20;

fn read_hugepages(src: &SysfsRoot, dir: &str) -> Result<Vec<HugePages>, TopologyError> {
    let mut out = Vec::new();
    for name in src.list(dir) {
        let Some(size_kb) = name
            .strip_prefix("hugepages-")
            .and_then(|s| s.strip_suffix("kB"))
            .and_then(|s| s.parse::<u64>().ok())
        else {
            continue;
        };
        if size_kb == 0 || size_kb > MAX_HUGE_PAGE_KB {
            return Err(malformed(
                &format!("{dir}/{name}"),
                format!("{size_kb} kB is not a huge page size (at most 16 GiB)"),
            ));
        }
        // A pool larger than MAX_BYTES is a damaged count.
        let max_pages = MAX_BYTES / (size_kb * 1024);
        let pages = |file: &str| -> Result<u64, TopologyError> {
            let rel = format!("{dir}/{name}/{file}");
            let n: u64 = number(src, &rel)?.unwrap_or(0);
            if n > max_pages {
                return Err(malformed(
                    &rel,
                    format!("{n} pages of {size_kb} kB are beyond the 1 EiB numabench accepts"),
                ));
            }
            Ok(n)
        };
        out.push(HugePages {
            size_kb,
            total: pages("nr_hugepages")?,
            free: pages("free_hugepages")?,
        });
    }
    out.sort_by_key(|h| h.size_kb);
    Ok(out)
}

/// HMAT figures of a node as CPUs see it: `access1` holds the CPU
/// initiators (`access0` may name a CPU-less node as the best initiator);
/// older kernels have only `access0`. A figure of 0 means "not reported".
fn read_hmat(
    src: &SysfsRoot,
    node_dir: &str,
    notes: &mut Vec<String>,
) -> Result<Option<Hmat>, TopologyError> {
    let access1 = format!("{node_dir}/access1/initiators");
    let dir = if src.list(&access1).is_empty() {
        format!("{node_dir}/access0/initiators")
    } else {
        access1
    };
    let dir = dir.as_str();
    let names = src.list(dir);
    if names.is_empty() {
        return Ok(None);
    }
    let initiators = Ids::Nodes.entries(dir, numbered(&names, "node"))?;
    for id in initiators.iter() {
        src.mark(&format!("{dir}/node{id}"));
    }
    let mut zeros = Vec::new();
    let mut figure = |name: &str| -> Result<Option<u64>, TopologyError> {
        let v: Option<u64> = number(src, &format!("{dir}/{name}"))?;
        if v == Some(0) {
            zeros.push(name.to_string());
            return Ok(None);
        }
        Ok(v)
    };
    let hmat = Hmat {
        initiators,
        read_bandwidth_mb_s: figure("read_bandwidth")?,
        write_bandwidth_mb_s: figure("write_bandwidth")?,
        read_latency_ns: figure("read_latency")?,
        write_latency_ns: figure("write_latency")?,
    };
    if !zeros.is_empty() {
        notes.push(format!(
            "firmware bug: HMAT gives 0 for {} of {dir}; shown as not reported",
            zeros.join(", ")
        ));
    }
    let any = hmat.read_bandwidth_mb_s.is_some() || hmat.read_latency_ns.is_some();
    Ok(any.then_some(hmat))
}

fn read_cpus(src: &SysfsRoot, online: &IdSet, nodes: &[Node]) -> Result<Vec<Cpu>, TopologyError> {
    let mut cpus = Vec::new();
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
            smt_siblings: list_or_mask(
                src,
                &format!("{dir}/thread_siblings_list"),
                &format!("{dir}/thread_siblings"),
            )?
            .unwrap_or_default(),
        });
        // Read for completeness of a capture; the package set is derived.
        let _ = src.read(&format!("{dir}/core_siblings_list"))?;
    }
    siblings_from_core_ids(&mut cpus);
    Ok(cpus)
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

fn read_caches(src: &SysfsRoot, online: &IdSet) -> Result<Vec<Cache>, TopologyError> {
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
            let Some(level) = number::<u32>(src, &format!("{d}/level"))? else {
                continue;
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
            let cpus = shared.unwrap_or_else(|| IdSet::from_ids([cpu]));
            let cache = Cache {
                level,
                kind,
                size_bytes,
                line_bytes: number(src, &format!("{d}/coherency_line_size"))?,
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

fn read_tiers(src: &SysfsRoot, nodes: &mut [Node]) -> Result<Vec<MemoryTier>, TopologyError> {
    let dir = "sys/devices/virtual/memory_tiering";
    let mut tiers = Vec::new();
    let ids = numbered(&src.list(dir), "memory_tier");
    for id in ids.into_iter().filter_map(|id| u32::try_from(id).ok()) {
        let Some(set) = list(src, &format!("{dir}/memory_tier{id}/nodelist"), Ids::Nodes)? else {
            continue;
        };
        for node in nodes.iter_mut().filter(|n| set.contains(n.id)) {
            node.tier = Some(id);
        }
        tiers.push(MemoryTier { id, nodes: set });
    }
    Ok(tiers)
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

fn cpu_model(cpuinfo: &str) -> String {
    let value = |key: &str| {
        cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.trim().to_string())
        })
    };
    // x86 and ia64 say "model name"; POWER and SPARC "cpu"; ARM boards
    // "Hardware" or only a part number; MIPS "cpu model"; older ia64
    // "family"; s390 a vendor and a machine type on its "processor" lines.
    value("model name")
        .or_else(|| value("cpu"))
        .or_else(|| value("Hardware"))
        .or_else(|| value("CPU part").map(|p| format!("CPU part {p}")))
        .or_else(|| value("cpu model"))
        .or_else(|| value("family"))
        .or_else(|| s390_model(cpuinfo))
        .unwrap_or_default()
}

/// "IBM/S390 machine 8561" from `vendor_id` and the first
/// `processor N: version = .., identification = .., machine = 8561` line.
fn s390_model(cpuinfo: &str) -> Option<String> {
    let vendor = cpuinfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == "vendor_id").then(|| v.trim().to_string())
    })?;
    let machine = cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor "))
        .find_map(|l| l.split("machine = ").nth(1))
        .map(|m| m.split([',', ' ']).next().unwrap_or("").to_string());
    Some(match machine {
        Some(m) if !m.is_empty() => format!("{vendor} machine {m}"),
        _ => vendor,
    })
}

/// PCI class codes of devices that compute: display controllers (GPUs),
/// co-processors and processing accelerators. A plain VGA controller counts
/// only from GPU vendors: nearly every server has a BMC display adapter
/// (ASPEED, Matrox) of that class.
fn accelerator_kind(class: u32, vendor: &str) -> Option<&'static str> {
    const GPU_VENDORS: [&str; 3] = ["0x10de", "0x1002", "0x8086"];
    match class >> 8 {
        0x0300 if GPU_VENDORS.contains(&vendor) => Some("VGA controller"),
        0x0302 => Some("3D controller"),
        0x0380 => Some("display controller"),
        0x0b40 => Some("co-processor"),
        0x1200 => Some("processing accelerator"),
        _ => None,
    }
}

/// The speed of a `*_link_speed` file: `Ok(None)` for the kernel's
/// `Unknown`; an error for anything that is not a positive, finite speed
/// up to 256 GT/s (PCIe 7.0 runs at 128), so no NaN or negative peak is
/// ever computed from it.
fn parse_link_speed(text: &str) -> Result<Option<f64>, ()> {
    let first = text.split_whitespace().next().ok_or(())?;
    if first.eq_ignore_ascii_case("unknown") {
        return Ok(None);
    }
    let gt: f64 = first.parse().map_err(|_| ())?;
    if gt.is_finite() && gt > 0.0 && gt <= 256.0 {
        Ok(Some(gt))
    } else {
        Err(())
    }
}

/// The lanes of a `*_link_width` file: 0 is the kernel's "unknown"; more
/// than 32 lanes (the widest link PCIe defines) is an error.
fn parse_link_width(text: &str) -> Result<Option<u32>, ()> {
    match text.trim().parse::<u32>() {
        Ok(0) => Ok(None),
        Ok(w) if w <= 32 => Ok(Some(w)),
        _ => Err(()),
    }
}

/// An optional value (a link speed, a device's node) that does not parse
/// is shown as unknown, with a warning naming the file and the value.
fn optional<T>(
    src: &SysfsRoot,
    rel: &str,
    what: &str,
    parse: impl Fn(&str) -> Result<Option<T>, ()>,
) -> Result<Option<T>, TopologyError> {
    let Some(text) = src.read_trimmed(rel)? else {
        return Ok(None);
    };
    match parse(&text) {
        Ok(v) => Ok(v),
        Err(()) => {
            crate::console::err(&format!(
                "numabench: warning: {}: '{}' is not {what}; shown as unknown\n",
                crate::text::escape(rel),
                shown(&text)
            ));
            Ok(None)
        }
    }
}

fn read_accelerators(src: &SysfsRoot) -> Result<Vec<Accelerator>, TopologyError> {
    let dir = "sys/bus/pci/devices";
    let mut out = Vec::new();
    for bdf in src.list(dir) {
        let d = format!("{dir}/{bdf}");
        let Some(class_text) = src.read_trimmed(&format!("{d}/class"))? else {
            continue;
        };
        let class = u32::from_str_radix(class_text.trim_start_matches("0x"), 16).map_err(|_| {
            malformed(
                &format!("{d}/class"),
                format!("'{class_text}' is not a class code"),
            )
        })?;
        let vendor = text(src, &format!("{d}/vendor"))?;
        let Some(kind) = accelerator_kind(class, &vendor) else {
            continue;
        };
        // -1: the firmware does not say.
        let node = |t: &str| match t.parse::<i64>() {
            Ok(-1) => Ok(None),
            Ok(n) if (0..MAX_NODES as i64).contains(&n) => Ok(Some(n as usize)),
            _ => Err(()),
        };
        let speed = "a PCIe link speed (e.g. '16.0 GT/s PCIe')";
        let width = "a PCIe link width (1 to 32 lanes)";
        out.push(Accelerator {
            pci_address: bdf.clone(),
            vendor,
            device: text(src, &format!("{d}/device"))?,
            class: class_text,
            kind: kind.to_string(),
            numa_node: optional(src, &format!("{d}/numa_node"), "a node number", node)?,
            link_speed_gt_s: optional(
                src,
                &format!("{d}/current_link_speed"),
                speed,
                parse_link_speed,
            )?,
            link_width: optional(
                src,
                &format!("{d}/current_link_width"),
                width,
                parse_link_width,
            )?,
            max_link_speed_gt_s: optional(
                src,
                &format!("{d}/max_link_speed"),
                speed,
                parse_link_speed,
            )?,
            max_link_width: optional(src, &format!("{d}/max_link_width"), width, parse_link_width)?,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_as_sysfs_writes_them() {
        assert_eq!(parse_size("48K"), Some(48 << 10));
        assert_eq!(parse_size("32M"), Some(32 << 20));
        assert_eq!(parse_size("1024"), Some(1024));
        assert_eq!(parse_size("K"), None);
        assert_eq!(parse_size("x"), None);
    }

    #[test]
    fn bracketed_choice() {
        assert_eq!(
            bracketed("always [madvise] never\n").as_deref(),
            Some("madvise")
        );
        assert_eq!(bracketed("always madvise never"), None);
    }

    #[test]
    fn node_meminfo_lines() {
        let text = "Node 1 MemTotal:       65854000 kB\nNode 1 MemFree:        60000000 kB\nNode 1 HugePages_Total:     0\n";
        assert_eq!(meminfo_kb(text, "MemTotal"), Some(65_854_000));
        assert_eq!(meminfo_kb(text, "MemFree"), Some(60_000_000));
        assert_eq!(meminfo_kb("MemTotal: 10 kB\n", "MemTotal"), Some(10));
        assert_eq!(meminfo_kb(text, "Active"), None);
    }

    #[test]
    fn cpu_models() {
        assert_eq!(
            cpu_model("processor: 0\nmodel name\t: AMD EPYC\n"),
            "AMD EPYC"
        );
        assert_eq!(cpu_model("CPU part\t: 0xd0c\n"), "CPU part 0xd0c");
        assert_eq!(cpu_model(""), "");
        assert_eq!(
            cpu_model(
                "processor\t: 0\ncpu\t\t: POWER9 (raw), altivec supported\nclock\t\t: 3800.000000MHz\n"
            ),
            "POWER9 (raw), altivec supported"
        );
        assert_eq!(
            cpu_model(
                "processor  : 0\nvendor     : GenuineIntel\narch       : IA-64\nfamily     : Itanium 2\nmodel      : 2\n"
            ),
            "Itanium 2"
        );
        assert_eq!(
            cpu_model(
                "vendor_id       : IBM/S390\n# processors    : 4\nprocessor 0: version = FF,  identification = 0D7A28,  machine = 8561\n"
            ),
            "IBM/S390 machine 8561"
        );
    }

    #[test]
    fn pcie_links() {
        assert_eq!(parse_link_speed("16.0 GT/s PCIe\n"), Ok(Some(16.0)));
        assert_eq!(parse_link_speed("Unknown\n"), Ok(None));
        for bad in ["NaN GT/s", "-16 GT/s", "inf", "0 GT/s", "1e9", "fast", ""] {
            assert_eq!(parse_link_speed(bad), Err(()), "{bad}");
        }
        assert_eq!(parse_link_width("16"), Ok(Some(16)));
        assert_eq!(parse_link_width("0"), Ok(None));
        assert_eq!(parse_link_width("-16"), Err(()));
        assert_eq!(parse_link_width("64"), Err(()));
        let gpu = Accelerator {
            pci_address: String::new(),
            vendor: String::new(),
            device: String::new(),
            class: String::new(),
            kind: String::new(),
            numa_node: None,
            link_speed_gt_s: Some(16.0),
            link_width: Some(16),
            max_link_speed_gt_s: None,
            max_link_width: None,
        };
        // PCIe 4.0 x16: 31.5 GB/s per direction after 128b/130b encoding.
        let peak = gpu.link_peak_mb_s().unwrap();
        assert!((peak - 31_507.7).abs() < 1.0, "{peak}");
    }
}

#[cfg(test)]
mod value_parsers {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any text is a speed or width in range, unknown, or an error:
        /// never a panic, NaN, or a negative or infinite figure.
        #[test]
        fn link_values_are_in_range_or_refused(text in "\\PC{0,24}|-?[0-9.eE+]{1,12} GT/s|NaN|inf") {
            if let Ok(Some(gt)) = parse_link_speed(&text) {
                prop_assert!(gt.is_finite() && gt > 0.0 && gt <= 256.0);
            }
            if let Ok(Some(w)) = parse_link_width(&text) {
                prop_assert!((1..=32).contains(&w));
            }
        }

        /// Any meminfo text gives sizes up to 1 EiB with free <= total, or an
        /// error naming the file.
        #[test]
        fn meminfo_is_a_size_or_an_error(
            total in "\\PC{0,12}|[0-9]{1,22}( kB)?",
            free in "\\PC{0,12}|[0-9]{1,22}( kB)?",
        ) {
            let m = Meminfo {
                file: "proc/meminfo".into(),
                text: Some(format!("MemTotal: {total}\nMemFree: {free}\n")),
            };
            match m.total_free() {
                Ok(Some((t, f))) => prop_assert!(f <= t && t <= MAX_BYTES),
                Ok(None) => prop_assert!(false, "a present file is never unknown"),
                Err(TopologyError::Malformed { file, .. }) => prop_assert_eq!(file, "proc/meminfo"),
                Err(e) => prop_assert!(false, "{e}"),
            }
        }
    }
}

#[cfg(test)]
mod damaged_trees {
    use super::*;
    use proptest::prelude::*;
    use std::path::Path;

    fn copy_tree(from: &Path, to: &Path) {
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            let kind = entry.file_type().unwrap();
            if kind.is_symlink() {
                std::os::unix::fs::symlink(std::fs::read_link(entry.path()).unwrap(), &target)
                    .unwrap();
            } else if kind.is_dir() {
                std::fs::create_dir(&target).unwrap();
                copy_tree(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), &target).unwrap();
            }
        }
    }

    fn copy_of(fixture: &str) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        let from = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/sysfs")
            .join(fixture);
        copy_tree(&from, tmp.path());
        tmp
    }

    #[test]
    fn zero_hmat_figures_are_not_reported_and_noted() {
        let tmp = copy_of("cxl-memonly");
        let dir = tmp
            .path()
            .join("sys/devices/system/node/node2/access0/initiators");
        std::fs::write(dir.join("read_latency"), "0\n").unwrap();
        std::fs::write(dir.join("write_bandwidth"), "0\n").unwrap();
        let topo = read_topology(&SysfsRoot::new(tmp.path())).unwrap();
        let hmat = topo.node(2).unwrap().hmat.as_ref().unwrap();
        assert_eq!(hmat.read_latency_ns, None);
        assert_eq!(hmat.write_bandwidth_mb_s, None);
        assert!(hmat.read_bandwidth_mb_s.is_some());
        let notes = topo.notes.join("\n");
        assert!(
            notes.contains("HMAT gives 0 for write_bandwidth, read_latency"),
            "{notes}"
        );
    }

    #[test]
    fn cpu_initiators_come_from_access1() {
        let tmp = copy_of("cxl-memonly");
        let node2 = tmp.path().join("sys/devices/system/node/node2");
        // access0 names the CPU-less node 3 (say) as its best initiator;
        // access1, the best CPU initiator, is node 0 at other figures.
        let a1 = node2.join("access1/initiators");
        std::fs::create_dir_all(a1.join("node0")).unwrap();
        for (f, v) in [
            ("read_bandwidth", "11111"),
            ("write_bandwidth", "11112"),
            ("read_latency", "333"),
            ("write_latency", "334"),
        ] {
            std::fs::write(a1.join(f), format!("{v}\n")).unwrap();
        }
        let topo = read_topology(&SysfsRoot::new(tmp.path())).unwrap();
        let hmat = topo.node(2).unwrap().hmat.as_ref().unwrap();
        assert_eq!(hmat.initiators.to_list(), "0");
        assert_eq!(hmat.read_bandwidth_mb_s, Some(11111));
        assert_eq!(hmat.read_latency_ns, Some(333));
    }

    #[test]
    fn nodes_that_copy_each_other_are_a_firmware_bug_note() {
        let tmp = copy_of("two-node");
        let node = tmp.path().join("sys/devices/system/node");
        std::fs::write(node.join("node1/cpulist"), "0-7\n").unwrap();
        std::fs::write(node.join("node0/distance"), "10 10\n").unwrap();
        std::fs::write(node.join("node1/distance"), "10 10\n").unwrap();
        let topo = read_topology(&SysfsRoot::new(tmp.path())).unwrap();
        let notes = topo.notes.join("\n");
        assert!(
            notes.contains("firmware bug: nodes 0-1 list the same CPUs"),
            "{notes}"
        );
        assert!(topo.warnings().iter().any(|w| w.contains("firmware bug")));
        // The clean machine has no such note.
        let clean = copy_of("two-node");
        let topo = read_topology(&SysfsRoot::new(clean.path())).unwrap();
        assert!(topo.notes.is_empty(), "{:?}", topo.notes);
    }

    #[test]
    fn a_distance_row_that_fits_no_node_set_is_left_out_with_a_note() {
        let tmp = copy_of("two-node");
        let node = tmp.path().join("sys/devices/system/node");
        std::fs::write(node.join("node0/distance"), "10 21 31\n").unwrap();
        let topo = read_topology(&SysfsRoot::new(tmp.path())).unwrap();
        assert!(topo.node(0).unwrap().distances.is_empty());
        assert_eq!(topo.node(1).unwrap().distances, [21, 10]);
        let notes = topo.notes.join("\n");
        assert!(notes.contains("3 distances for 2 online nodes"), "{notes}");
    }

    #[test]
    fn an_invisible_byte_in_a_list_is_shown_escaped() {
        let tmp = copy_of("two-node");
        let node = tmp.path().join("sys/devices/system/node");
        std::fs::write(node.join("online"), "0-1\u{1}\n").unwrap();
        let e = read_topology(&SysfsRoot::new(tmp.path()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("\\x01") || e.contains("\\u{1}"), "{e}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Any file of a capture replaced by arbitrary bytes gives a topology
        /// or an error naming the file, never a panic.
        #[test]
        fn any_damaged_file_is_an_error_not_a_panic(pick in 0usize..10_000, junk in proptest::collection::vec(any::<u8>(), 0..64)) {
            let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sysfs/cxl-memonly");
            let files: Vec<String> = {
                let src = SysfsRoot::new(&fixture);
                read_topology(&src).unwrap();
                src.accessed().files.into_iter().collect()
            };
            let tmp = tempfile::tempdir().unwrap();
            copy_tree(&fixture, tmp.path());
            let victim = &files[pick % files.len()];
            std::fs::write(tmp.path().join(victim), &junk).unwrap();
            match read_topology(&SysfsRoot::new(tmp.path())) {
                Ok(_) => {}
                Err(TopologyError::Malformed { file, .. }) => prop_assert_eq!(&file, victim),
                Err(e) => prop_assert!(false, "unexpected error {e}"),
            }
        }
    }
}
