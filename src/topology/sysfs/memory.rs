//! Memory of the nodes and the system: meminfo, huge page pools, HMAT
//! figures and memory tiers.

use super::*;

/// A node's or the system's meminfo file, read once.
pub(super) struct Meminfo {
    pub(super) file: String,
    /// `None` when the file is absent: its figures are not known.
    pub(super) text: Option<String>,
}

impl Meminfo {
    pub(super) fn read(src: &SysfsRoot, rel: &str) -> Result<Self, TopologyError> {
        Ok(Self {
            file: rel.to_string(),
            text: src.read(rel)?,
        })
    }

    /// `MemTotal` and `MemFree` in bytes; `None` when the file is absent,
    /// the free figure `None` when the file has no `MemFree` line (some
    /// kernels write only `MemTotal`). More free than total memory is an
    /// error: one of them is wrong.
    pub(super) fn total_free(&self) -> Result<Option<(u64, Option<u64>)>, TopologyError> {
        let Some(total) = self.bytes("MemTotal")? else {
            return Ok(None);
        };
        let free = match &self.text {
            Some(text) if meminfo_value(text, "MemFree").is_none() => None,
            _ => self.bytes("MemFree")?,
        };
        if let Some(free) = free
            && free > total
        {
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
    pub(super) fn bytes(&self, key: &str) -> Result<Option<u64>, TopologyError> {
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
pub(super) fn meminfo_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().find_map(|line| {
        let (before, rest) = line.split_once(&format!("{key}:"))?;
        // Node files prefix each line with "Node N ".
        let before = before.trim();
        (before.is_empty() || before.starts_with("Node")).then_some(rest.trim())
    })
}

/// A `Key: value kB` line of a node's or the system's meminfo.
#[cfg(test)]
pub(super) fn meminfo_kb(text: &str, key: &str) -> Option<u64> {
    meminfo_value(text, key)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Largest huge page size taken from a directory name (16 GiB, the largest
/// any architecture has).
pub(super) const MAX_HUGE_PAGE_KB: u64 = 16 << 20;

pub(super) fn read_hugepages(src: &SysfsRoot, dir: &str) -> Result<Vec<HugePages>, TopologyError> {
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
pub(super) fn read_hmat(
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

/// The memory tiers and the nodes in each. The kernel takes a node out of
/// its tier when the node's memory goes offline, so a tier naming a node
/// that is not online is a damaged capture: those ids are left out with a
/// note, and a tier left with none is not shown.
pub(super) fn read_tiers(
    src: &SysfsRoot,
    nodes: &mut [Node],
    notes: &mut Vec<String>,
) -> Result<Vec<MemoryTier>, TopologyError> {
    let dir = "sys/devices/virtual/memory_tiering";
    let mut tiers = Vec::new();
    let known = IdSet::from_ids(nodes.iter().map(|n| n.id));
    let ids = numbered(&src.list(dir), "memory_tier");
    for id in ids.into_iter().filter_map(|id| u32::try_from(id).ok()) {
        let file = format!("{dir}/memory_tier{id}/nodelist");
        let Some(named) = list(src, &file, Ids::Nodes)? else {
            continue;
        };
        let set = named.intersection(&known);
        let missing = named.difference(&known);
        if !missing.is_empty() {
            let what = if set.is_empty() {
                "the tier is not shown"
            } else {
                "they are left out of it"
            };
            notes.push(format!("{file}: node(s) {missing} are not online; {what}"));
        }
        if set.is_empty() {
            continue;
        }
        for node in nodes.iter_mut().filter(|n| set.contains(n.id)) {
            node.tier = Some(id);
        }
        tiers.push(MemoryTier { id, nodes: set });
    }
    Ok(tiers)
}

/// The kernel's tiering settings; `None` where it shows none of them.
pub(super) fn read_tiering(src: &SysfsRoot) -> Result<Option<Tiering>, TopologyError> {
    let demotion = match src
        .read_trimmed("sys/kernel/mm/numa/demotion_enabled")?
        .as_deref()
    {
        None => None,
        Some("true" | "1") => Some(true),
        Some("false" | "0") => Some(false),
        Some(other) => {
            return Err(malformed(
                "sys/kernel/mm/numa/demotion_enabled",
                format!("'{other}' is neither true nor false"),
            ));
        }
    };
    let rate = number(
        src,
        "proc/sys/kernel/numa_balancing_promote_rate_limit_MBps",
    )?;
    // debugfs is root's: a file that cannot be read is not there.
    let hot = number(
        src,
        "sys/kernel/debug/sched/numa_balancing/hot_threshold_ms",
    )
    .unwrap_or(None);
    let t = Tiering {
        demotion_enabled: demotion,
        promote_rate_limit_mb_s: rate,
        hot_threshold_ms: hot,
    };
    Ok((t != Tiering::default()).then_some(t))
}
