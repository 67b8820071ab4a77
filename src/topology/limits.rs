//! Limits on the memory this process may use besides what the nodes have
//! free: the memory cgroup it runs in (Slurm's `ConstrainRAMSpace`, systemd's
//! `MemoryMax`, a container's limit) and, on the live machine, its
//! `RLIMIT_AS`/`RLIMIT_DATA`. Free memory on a node is no promise when a
//! cgroup of 512 MiB holds the process: the OOM killer ends it first.
//!
//! The cgroup files are read under the topology's root, so captured trees
//! can carry a limit; resource limits belong to this process and are read
//! only on the live machine.

use super::cgroup;
use super::source::{SysfsRoot, value_of};
use crate::sys::process::Rlimit;
use serde::{Deserialize, Serialize};

/// A v1 limit at or above this is "no limit": the kernel shows an unlimited
/// cgroup as `PAGE_COUNTER_MAX` pages, about 2^63 bytes.
const V1_UNLIMITED: u64 = 1 << 62;

/// What the process must keep for itself under a resource limit: thread
/// stacks, the heap, the results document. A buffer gets the rest.
const RLIMIT_RESERVE: u64 = 64 << 20;

/// The tightest limit on the memory this process may still map.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MemoryLimit {
    /// Bytes the process may still map under it.
    pub headroom_bytes: u64,
    /// The limit itself, in bytes.
    pub limit_bytes: u64,
    /// What it is, for messages: "memory cgroup /slurm/job_12 (memory.max)".
    pub source: String,
}

impl MemoryLimit {
    /// The limit as a message names it: "the 480 MiB left under memory
    /// cgroup /x (memory.max 512 MiB)".
    pub fn describe(&self) -> String {
        format!(
            "{} left under {} of {}",
            crate::units::bytes(self.headroom_bytes),
            self.source,
            crate::units::bytes(self.limit_bytes)
        )
    }
}

/// The tightest of the cgroup and resource limits, if any applies.
pub fn read(src: &SysfsRoot) -> Option<MemoryLimit> {
    let mut all = cgroup_limits(src);
    if src.is_live() {
        all.extend(rlimits());
    }
    all.into_iter().min_by_key(|l| l.headroom_bytes)
}

fn file(src: &SysfsRoot, rel: &str) -> Option<String> {
    src.read(rel).ok().flatten()
}

fn number(src: &SysfsRoot, rel: &str) -> Option<u64> {
    value_of(&file(src, rel)?).parse().ok()
}

/// A memory cgroup hierarchy this process is in: where it is mounted
/// (relative to the root) and the process's folder in it.
#[derive(Debug, PartialEq)]
struct Hierarchy {
    v2: bool,
    /// Mount point without the leading `/`.
    mount: String,
    /// The process's cgroup, relative to the mount.
    path: String,
}

/// The memory hierarchies from `/proc/self/mountinfo` and
/// `/proc/self/cgroup`.
fn hierarchies(mountinfo: &str, cgroups: &str) -> Vec<Hierarchy> {
    let mut out = Vec::new();
    for m in cgroup::mountinfo(mountinfo) {
        let v2 = m.fs == "cgroup2";
        let memory_v1 = m.fs == "cgroup" && m.has_option("memory");
        if !v2 && !memory_v1 {
            continue;
        }
        let Some(path) = cgroup::own_path(cgroups, v2, "memory") else {
            continue;
        };
        out.push(Hierarchy {
            v2,
            path: m.relative(path).to_string(),
            mount: m.point,
        });
    }
    out
}

/// The limit of each memory cgroup from the process's own up to the top:
/// a parent's limit holds its children too.
fn cgroup_limits(src: &SysfsRoot) -> Vec<MemoryLimit> {
    let (Some(mountinfo), Some(cgroups)) = (
        file(src, "proc/self/mountinfo"),
        file(src, "proc/self/cgroup"),
    ) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for h in hierarchies(&mountinfo, &cgroups) {
        let mut path = h.path.as_str();
        loop {
            let dir = if path.is_empty() {
                h.mount.clone()
            } else {
                format!("{}/{path}", h.mount)
            };
            out.extend(one_cgroup(src, &dir, &h, path));
            match path.rfind('/') {
                Some(i) => path = &path[..i],
                None if !path.is_empty() => path = "",
                None => break,
            }
        }
    }
    out
}

/// One cgroup's limit and what is left under it. Inactive file pages count
/// as free: the kernel drops them before it calls the OOM killer.
fn one_cgroup(src: &SysfsRoot, dir: &str, h: &Hierarchy, path: &str) -> Option<MemoryLimit> {
    let (limit_file, usage_file, inactive_key) = if h.v2 {
        ("memory.max", "memory.current", "inactive_file")
    } else {
        (
            "memory.limit_in_bytes",
            "memory.usage_in_bytes",
            "total_inactive_file",
        )
    };
    // v2 writes "max" for no limit, which does not parse.
    let limit = number(src, &format!("{dir}/{limit_file}"))?;
    if !h.v2 && limit >= V1_UNLIMITED {
        return None;
    }
    let usage = number(src, &format!("{dir}/{usage_file}")).unwrap_or(0);
    let inactive = file(src, &format!("{dir}/memory.stat"))
        .and_then(|stat| {
            stat.lines().find_map(|l| {
                let (k, v) = l.split_once(' ')?;
                (k == inactive_key).then(|| v.trim().parse::<u64>().ok())?
            })
        })
        .unwrap_or(0);
    let used = usage.saturating_sub(inactive);
    Some(MemoryLimit {
        headroom_bytes: limit.saturating_sub(used),
        limit_bytes: limit,
        source: format!(
            "memory cgroup /{} ({limit_file})",
            crate::text::escape(path)
        ),
    })
}

/// `RLIMIT_AS` against the address space in use and `RLIMIT_DATA` against
/// the private writable memory (which every anonymous buffer is), each less
/// [`RLIMIT_RESERVE`].
fn rlimits() -> Vec<MemoryLimit> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb = |key: &str| -> u64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .map_or(0, |k| k * 1024)
    };
    let mut out = Vec::new();
    for (resource, name, used) in [
        (Rlimit::AddressSpace, "RLIMIT_AS (ulimit -v)", kb("VmSize:")),
        (Rlimit::Data, "RLIMIT_DATA (ulimit -d)", kb("VmData:")),
    ] {
        if let Some(limit) = crate::sys::process::soft_rlimit(resource) {
            out.push(MemoryLimit {
                headroom_bytes: limit.saturating_sub(used).saturating_sub(RLIMIT_RESERVE),
                limit_bytes: limit,
                source: name.to_string(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
24 30 0:22 / /sys rw,nosuid - sysfs sysfs rw
35 24 0:30 / /sys/fs/cgroup ro - tmpfs tmpfs ro,mode=755
36 35 0:31 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw
40 35 0:35 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
41 35 0:36 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids
";
    const CGROUP: &str = "4:memory:/slurm/uid_0/job_7\n8:pids:/\n0::/user.slice\n";

    #[test]
    fn both_hierarchies_with_the_process_folder_in_each() {
        let h = hierarchies(MOUNTINFO, CGROUP);
        assert_eq!(
            h,
            [
                Hierarchy {
                    v2: true,
                    mount: "sys/fs/cgroup/unified".into(),
                    path: "user.slice".into()
                },
                Hierarchy {
                    v2: false,
                    mount: "sys/fs/cgroup/memory".into(),
                    path: "slurm/uid_0/job_7".into()
                },
            ]
        );
    }

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (rel, text) in files {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    #[test]
    fn the_tightest_ancestor_decides_and_inactive_file_pages_count_as_free() {
        let d = tree(&[
            ("proc/self/mountinfo", MOUNTINFO),
            ("proc/self/cgroup", CGROUP),
            (
                "sys/fs/cgroup/memory/memory.limit_in_bytes",
                "9223372036854771712\n",
            ),
            (
                "sys/fs/cgroup/memory/slurm/memory.limit_in_bytes",
                "8589934592\n",
            ),
            (
                "sys/fs/cgroup/memory/slurm/memory.usage_in_bytes",
                "1073741824\n",
            ),
            (
                "sys/fs/cgroup/memory/slurm/uid_0/job_7/memory.limit_in_bytes",
                "536870912\n",
            ),
            (
                "sys/fs/cgroup/memory/slurm/uid_0/job_7/memory.usage_in_bytes",
                "134217728\n",
            ),
            (
                "sys/fs/cgroup/memory/slurm/uid_0/job_7/memory.stat",
                "cache 100\ntotal_inactive_file 33554432\n",
            ),
            ("sys/fs/cgroup/unified/user.slice/memory.max", "max\n"),
        ]);
        let l = read(&SysfsRoot::new(d.path())).unwrap();
        assert_eq!(l.limit_bytes, 512 << 20);
        assert_eq!(l.headroom_bytes, (512 - 128 + 32) << 20);
        assert_eq!(
            l.source,
            "memory cgroup /slurm/uid_0/job_7 (memory.limit_in_bytes)"
        );
        assert!(
            l.describe().contains("416 MiB left under"),
            "{}",
            l.describe()
        );
    }

    #[test]
    fn v2_limits_are_read_and_max_is_none() {
        let mi = "36 35 0:31 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        let d = tree(&[
            ("proc/self/mountinfo", mi),
            ("proc/self/cgroup", "0::/system.slice/x.service\n"),
            ("sys/fs/cgroup/system.slice/memory.max", "max\n"),
            (
                "sys/fs/cgroup/system.slice/x.service/memory.max",
                "1073741824\n",
            ),
            (
                "sys/fs/cgroup/system.slice/x.service/memory.current",
                "2147483648\n",
            ),
        ]);
        let l = read(&SysfsRoot::new(d.path())).unwrap();
        assert_eq!(l.headroom_bytes, 0, "usage above the limit leaves nothing");
        assert!(l.source.contains("memory.max"));
        let d = tree(&[("proc/self/mountinfo", mi), ("proc/self/cgroup", "0::/\n")]);
        assert_eq!(read(&SysfsRoot::new(d.path())), None);
    }
}
