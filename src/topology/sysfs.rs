//! Builds a [`Topology`] from the sysfs and procfs files listed in
//! `docs/sysfs-files.md`.
//!
//! Optional files that are absent mean "not known"; malformed contents are
//! errors naming the file, because a silently wrong topology would make every
//! later figure wrong.

use super::source::{SysfsRoot, numbered};
use super::*;
use crate::placement::IdSet;

#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    /// The root override does not point at a captured machine.
    #[error("sysfs root {path} (from --sysfs-root or {ROOT}): {reason}", ROOT = super::ROOT_ENV)]
    BadRoot { path: String, reason: String },
    #[error("cannot parse {file}: {reason}")]
    Malformed { file: String, reason: String },
}

const NODE_DIR: &str = "sys/devices/system/node";
const CPU_DIR: &str = "sys/devices/system/cpu";

fn malformed(file: &str, reason: impl ToString) -> TopologyError {
    TopologyError::Malformed {
        file: file.to_string(),
        reason: reason.to_string(),
    }
}

fn list(src: &SysfsRoot, rel: &str) -> Result<Option<IdSet>, TopologyError> {
    match src.read(rel) {
        None => Ok(None),
        Some(text) => IdSet::parse_list(&text)
            .map(Some)
            .map_err(|e| malformed(rel, e)),
    }
}

fn number<T: std::str::FromStr>(src: &SysfsRoot, rel: &str) -> Result<Option<T>, TopologyError> {
    match src.read_trimmed(rel) {
        None => Ok(None),
        Some(text) => text
            .parse()
            .map(Some)
            .map_err(|_| malformed(rel, format!("'{text}' is not a number"))),
    }
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
    let cpus_online = match list(src, &format!("{CPU_DIR}/online"))? {
        Some(set) => set,
        None => IdSet::from_ids(numbered(&src.list(CPU_DIR), "cpu")),
    };
    let cpus_possible =
        list(src, &format!("{CPU_DIR}/possible"))?.unwrap_or_else(|| cpus_online.clone());
    let (mut nodes, numa_sysfs) = read_nodes(src, &cpus_online)?;
    let cpus = read_cpus(src, &cpus_online, &nodes)?;
    let caches = read_caches(src, &cpus_online)?;
    let memory_tiers = read_tiers(src, &mut nodes)?;
    let allowed = read_allowed(src, &cpus_online, &nodes)?;
    Ok(Topology {
        hostname: src
            .read_trimmed("proc/sys/kernel/hostname")
            .unwrap_or_default(),
        kernel: src
            .read_trimmed("proc/sys/kernel/osrelease")
            .unwrap_or_default(),
        cpu_model: cpu_model(src.read("proc/cpuinfo").as_deref().unwrap_or("")),
        nodes,
        cpus,
        cpus_possible,
        cpus_online,
        caches,
        allowed,
        thp: Thp {
            enabled: src
                .read("sys/kernel/mm/transparent_hugepage/enabled")
                .and_then(|t| bracketed(&t)),
            defrag: src
                .read("sys/kernel/mm/transparent_hugepage/defrag")
                .and_then(|t| bracketed(&t)),
        },
        numa_balancing: number(src, "proc/sys/kernel/numa_balancing")?,
        memory_tiers,
        accelerators: read_accelerators(src)?,
        system_mem_total_bytes: meminfo_kb(
            &src.read("proc/meminfo").unwrap_or_default(),
            "MemTotal",
        )
        .map(|kb| kb * 1024),
        system_mem_free_bytes: meminfo_kb(&src.read("proc/meminfo").unwrap_or_default(), "MemFree")
            .map(|kb| kb * 1024),
        numa_sysfs,
    })
}

fn read_nodes(src: &SysfsRoot, cpus_online: &IdSet) -> Result<(Vec<Node>, bool), TopologyError> {
    let ids = match list(src, &format!("{NODE_DIR}/online"))? {
        Some(set) => set,
        None => IdSet::from_ids(numbered(&src.list(NODE_DIR), "node")),
    };
    if ids.is_empty() {
        // A kernel built without NUMA: one node holding everything.
        let meminfo = src.read("proc/meminfo").unwrap_or_default();
        return Ok((
            vec![Node {
                id: 0,
                cpus: cpus_online.clone(),
                has_cpu: true,
                has_memory: true,
                mem_total_bytes: meminfo_kb(&meminfo, "MemTotal").unwrap_or(0) * 1024,
                mem_free_bytes: meminfo_kb(&meminfo, "MemFree").unwrap_or(0) * 1024,
                distances: vec![10],
                hugepages: Vec::new(),
                hmat: None,
                tier: None,
            }],
            false,
        ));
    }
    let has_cpu = list(src, &format!("{NODE_DIR}/has_cpu"))?;
    let has_memory = list(src, &format!("{NODE_DIR}/has_memory"))?;
    let mut nodes = Vec::new();
    for id in ids.iter() {
        let dir = format!("{NODE_DIR}/node{id}");
        let cpus = list(src, &format!("{dir}/cpulist"))?
            .unwrap_or_default()
            .intersection(cpus_online);
        let meminfo_file = format!("{dir}/meminfo");
        let meminfo = src.read(&meminfo_file).unwrap_or_default();
        let mem_total_bytes = meminfo_kb(&meminfo, "MemTotal").unwrap_or(0) * 1024;
        let distance_file = format!("{dir}/distance");
        let distances = match src.read(&distance_file) {
            Some(text) => text
                .split_whitespace()
                .map(|d| {
                    d.parse::<u32>()
                        .map_err(|_| malformed(&distance_file, format!("'{d}' is not a distance")))
                })
                .collect::<Result<Vec<_>, _>>()?,
            None => Vec::new(),
        };
        if !distances.is_empty() && distances.len() != ids.len() {
            return Err(malformed(
                &distance_file,
                format!(
                    "{} distances for {} online nodes",
                    distances.len(),
                    ids.len()
                ),
            ));
        }
        nodes.push(Node {
            id,
            has_cpu: has_cpu
                .as_ref()
                .map_or(!cpus.is_empty(), |s| s.contains(id)),
            has_memory: has_memory
                .as_ref()
                .map_or(mem_total_bytes > 0, |s| s.contains(id)),
            cpus,
            mem_total_bytes,
            mem_free_bytes: meminfo_kb(&meminfo, "MemFree").unwrap_or(0) * 1024,
            distances,
            hugepages: read_hugepages(src, &format!("{dir}/hugepages"))?,
            hmat: read_hmat(src, &format!("{dir}/access0/initiators"))?,
            tier: None,
        });
    }
    Ok((nodes, true))
}

/// A `Key: value kB` line of a node's or the system's meminfo.
fn meminfo_kb(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        // Node files prefix each line with "Node N ".
        let rest = line.split_once(&format!("{key}:"))?.1;
        let before = line.split_once(&format!("{key}:"))?.0.trim();
        if !(before.is_empty() || before.starts_with("Node")) {
            return None;
        }
        rest.split_whitespace().next()?.parse().ok()
    })
}

fn read_hugepages(src: &SysfsRoot, dir: &str) -> Result<Vec<HugePages>, TopologyError> {
    let mut out = Vec::new();
    for name in src.list(dir) {
        let Some(size_kb) = name
            .strip_prefix("hugepages-")
            .and_then(|s| s.strip_suffix("kB"))
            .and_then(|s| s.parse().ok())
        else {
            continue;
        };
        out.push(HugePages {
            size_kb,
            total: number(src, &format!("{dir}/{name}/nr_hugepages"))?.unwrap_or(0),
            free: number(src, &format!("{dir}/{name}/free_hugepages"))?.unwrap_or(0),
        });
    }
    out.sort_by_key(|h| h.size_kb);
    Ok(out)
}

fn read_hmat(src: &SysfsRoot, dir: &str) -> Result<Option<Hmat>, TopologyError> {
    let names = src.list(dir);
    if names.is_empty() {
        return Ok(None);
    }
    let initiators = IdSet::from_ids(numbered(&names, "node"));
    for id in initiators.iter() {
        src.mark(&format!("{dir}/node{id}"));
    }
    let hmat = Hmat {
        initiators,
        read_bandwidth_mb_s: number(src, &format!("{dir}/read_bandwidth"))?,
        write_bandwidth_mb_s: number(src, &format!("{dir}/write_bandwidth"))?,
        read_latency_ns: number(src, &format!("{dir}/read_latency"))?,
        write_latency_ns: number(src, &format!("{dir}/write_latency"))?,
    };
    let any = hmat.read_bandwidth_mb_s.is_some() || hmat.read_latency_ns.is_some();
    Ok(any.then_some(hmat))
}

fn read_cpus(src: &SysfsRoot, online: &IdSet, nodes: &[Node]) -> Result<Vec<Cpu>, TopologyError> {
    let mut cpus = Vec::new();
    for id in online.iter() {
        let dir = format!("{CPU_DIR}/cpu{id}/topology");
        // Some kernels report an unknown die or cluster as -1 or 65535.
        let id_or_none = |v: Option<i64>| v.filter(|&v| (0..65535).contains(&v)).map(|v| v as u32);
        cpus.push(Cpu {
            id,
            node: nodes.iter().find(|n| n.cpus.contains(id)).map(|n| n.id),
            package: id_or_none(number(src, &format!("{dir}/physical_package_id"))?),
            die: id_or_none(number(src, &format!("{dir}/die_id"))?),
            core: id_or_none(number(src, &format!("{dir}/core_id"))?),
            smt_siblings: list(src, &format!("{dir}/thread_siblings_list"))?
                .unwrap_or_else(|| IdSet::from_ids([id])),
        });
        // Read for completeness of a capture; the package set is derived.
        let _ = src.read(&format!("{dir}/core_siblings_list"));
    }
    Ok(cpus)
}

fn read_caches(src: &SysfsRoot, online: &IdSet) -> Result<Vec<Cache>, TopologyError> {
    let mut caches: Vec<Cache> = Vec::new();
    for cpu in online.iter() {
        let dir = format!("{CPU_DIR}/cpu{cpu}/cache");
        for index in numbered(&src.list(&dir), "index") {
            let d = format!("{dir}/index{index}");
            let Some(level) = number::<u32>(src, &format!("{d}/level"))? else {
                continue;
            };
            let kind = src
                .read_trimmed(&format!("{d}/type"))
                .unwrap_or_else(|| "Unified".into());
            let size_file = format!("{d}/size");
            let size_bytes = match src.read_trimmed(&size_file) {
                Some(text) => parse_size(&text)
                    .ok_or_else(|| malformed(&size_file, format!("'{text}' is not a size")))?,
                None => continue,
            };
            let cpus = list(src, &format!("{d}/shared_cpu_list"))?
                .unwrap_or_else(|| IdSet::from_ids([cpu]));
            let cache = Cache {
                level,
                kind,
                size_bytes,
                line_bytes: number(src, &format!("{d}/coherency_line_size"))?,
                cpus,
            };
            if !caches.contains(&cache) {
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
    for id in numbered(&src.list(dir), "memory_tier") {
        let Some(set) = list(src, &format!("{dir}/memory_tier{id}/nodelist"))? else {
            continue;
        };
        for node in nodes.iter_mut().filter(|n| set.contains(n.id)) {
            node.tier = Some(id as u32);
        }
        tiers.push(MemoryTier {
            id: id as u32,
            nodes: set,
        });
    }
    Ok(tiers)
}

fn read_allowed(
    src: &SysfsRoot,
    cpus_online: &IdSet,
    nodes: &[Node],
) -> Result<Allowed, TopologyError> {
    let status = src.read("proc/self/status").unwrap_or_default();
    let field = |key: &str| -> Result<Option<IdSet>, TopologyError> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .map(|v| IdSet::parse_list(v).map_err(|e| malformed("proc/self/status", e)))
            .transpose()
    };
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
    value("model name")
        .or_else(|| value("Hardware"))
        .or_else(|| value("CPU part").map(|p| format!("CPU part {p}")))
        .or_else(|| value("cpu model"))
        .unwrap_or_default()
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

/// `16.0 GT/s PCIe` → 16.0; `Unknown` or absent → None.
fn link_speed(text: Option<String>) -> Option<f64> {
    text?.split_whitespace().next()?.parse().ok()
}

fn read_accelerators(src: &SysfsRoot) -> Result<Vec<Accelerator>, TopologyError> {
    let dir = "sys/bus/pci/devices";
    let mut out = Vec::new();
    for bdf in src.list(dir) {
        let d = format!("{dir}/{bdf}");
        let Some(class_text) = src.read_trimmed(&format!("{d}/class")) else {
            continue;
        };
        let class = u32::from_str_radix(class_text.trim_start_matches("0x"), 16).map_err(|_| {
            malformed(
                &format!("{d}/class"),
                format!("'{class_text}' is not a class code"),
            )
        })?;
        let vendor = src.read_trimmed(&format!("{d}/vendor")).unwrap_or_default();
        let Some(kind) = accelerator_kind(class, &vendor) else {
            continue;
        };
        let node: Option<i64> = number(src, &format!("{d}/numa_node"))?;
        out.push(Accelerator {
            pci_address: bdf.clone(),
            vendor,
            device: src.read_trimmed(&format!("{d}/device")).unwrap_or_default(),
            class: class_text,
            kind: kind.to_string(),
            numa_node: node.filter(|&n| n >= 0).map(|n| n as usize),
            link_speed_gt_s: link_speed(src.read(&format!("{d}/current_link_speed"))),
            link_width: src
                .read_trimmed(&format!("{d}/current_link_width"))
                .and_then(|w| w.parse().ok())
                .filter(|&w| w > 0),
            max_link_speed_gt_s: link_speed(src.read(&format!("{d}/max_link_speed"))),
            max_link_width: src
                .read_trimmed(&format!("{d}/max_link_width"))
                .and_then(|w| w.parse().ok())
                .filter(|&w| w > 0),
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
    }

    #[test]
    fn pcie_links() {
        assert_eq!(link_speed(Some("16.0 GT/s PCIe\n".into())), Some(16.0));
        assert_eq!(link_speed(Some("Unknown\n".into())), None);
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
