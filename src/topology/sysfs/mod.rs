//! Builds a [`Topology`] from the sysfs and procfs files listed in
//! `docs/sysfs-files.md`.
//!
//! Optional files that are absent mean "not known"; malformed contents are
//! errors naming the file, because a silently wrong topology would make every
//! later figure wrong.

use super::source::{ReadError, SysfsRoot, numbered, value_of};
use super::*;
use crate::ids::IdSet;

mod caches;
mod cpuinfo;
mod cpus;
mod cpuset;
mod damon;
mod devices;
mod memory;
mod nodes;
#[cfg(test)]
mod tests;
mod virt;

use caches::*;
use cpuinfo::*;
use cpus::*;
use damon::read_damon;
use devices::*;
use memory::*;
use nodes::read_nodes;
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
    // A root that is no capture, or a sysfs file that is malformed, out of
    // range or not a regular file: input, not a failure.
    crate::error::count_as_input::<TopologyError>();
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
    let allowed = read_allowed(src, &cpus_online, &nodes, &mut notes)?;
    let memory_limit = super::limits::read(src, allowed.cpus.len(), &mut notes);
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
        memory_limit,
        numa_sysfs,
        notes,
    })
}

fn read_allowed(
    src: &SysfsRoot,
    cpus_online: &IdSet,
    nodes: &[Node],
    notes: &mut Vec<String>,
) -> Result<Allowed, TopologyError> {
    let status = src.read("proc/self/status")?;
    let text = status.as_deref().unwrap_or_default();
    let field = |key: &str| -> Result<Option<IdSet>, TopologyError> {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .map(|v| IdSet::parse_list(v).map_err(|e| malformed("proc/self/status", e)))
            .transpose()
    };
    let mut cpus = field("Cpus_allowed_list:")?;
    let mut mems = field("Mems_allowed_list:")?;
    if (cpus.is_none() || mems.is_none())
        && let Some(set) = cpuset::read(src)
    {
        let why = match status {
            None => "proc/self/status is absent",
            Some(_) => "proc/self/status does not list them",
        };
        let what = match (cpus.is_none(), mems.is_none()) {
            (true, true) => "CPUs and nodes",
            (true, false) => "CPUs",
            _ => "nodes",
        };
        notes.push(format!(
            "allowed {what} from the cgroup cpuset at {}, as {why}",
            crate::text::escape(&set.dir)
        ));
        cpus = cpus.or(Some(set.cpus));
        mems = mems.or(Some(set.mems));
    }
    // The cpuset is intersected with what is online: any id the list
    // parser accepts is harmless here.
    let all_nodes = IdSet::from_ids(nodes.iter().map(|n| n.id));
    Ok(Allowed {
        cpus: cpus
            .map(|s| s.intersection(cpus_online))
            .unwrap_or_else(|| cpus_online.clone()),
        nodes: mems
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
