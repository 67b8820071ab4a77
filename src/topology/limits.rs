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

/// What the process must keep for itself under a resource limit: the main
/// thread's stack, the heap, the results document. A buffer gets the rest.
const RLIMIT_RESERVE: u64 = 64 << 20;

/// What each thread a probe may start (one per allowed CPU, a few more at
/// most) adds to the address space and to the data segment: a 2 MiB stack,
/// its guard page and thread-local storage, rounded up for the extra ones.
const THREAD_RESERVE: u64 = 8 << 20;

/// The address space glibc reserves (`PROT_NONE`, counted by `RLIMIT_AS`
/// but not `RLIMIT_DATA`) for each malloc arena; one per allocating thread,
/// up to 8 per CPU, unless [`crate::sys::process::malloc_arenas_capped`].
const ARENA_RESERVE: u64 = 64 << 20;

/// A read file's text stays this short in a note.
const SHOWN_VALUE_CHARS: usize = 40;

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

/// The tightest of the cgroup and resource limits, if any applies. `cpus`
/// is how many CPUs the process may run on: its threads' stacks and malloc
/// arenas count against a resource limit. A file that is there but cannot be
/// used is named in `notes`: a limit must not vanish without a word.
pub(super) fn read(src: &SysfsRoot, cpus: usize, notes: &mut Vec<String>) -> Option<MemoryLimit> {
    let mut all = cgroup_limits(src, notes);
    if src.is_live() {
        all.extend(rlimits(cpus));
    }
    all.into_iter().min_by_key(|l| l.headroom_bytes)
}

/// The text of `rel`; one that is there but is no regular file (a FIFO, a
/// directory, a loop of links, a link to a device) is noted and left out.
fn file(src: &SysfsRoot, rel: &str, notes: &mut Vec<String>) -> Option<String> {
    src.read(rel).unwrap_or_else(|e| {
        let what = if rel.starts_with("proc/") {
            "the memory limit's file"
        } else {
            "memory cgroup file"
        };
        notes.push(format!("ignored {what} {}: {e}", crate::text::escape(rel)));
        None
    })
}

/// A byte count in `rel`: `None` when the file is absent, holds v2's `max`
/// (no limit), or holds anything but a count, which is noted.
fn byte_count(src: &SysfsRoot, rel: &str, notes: &mut Vec<String>) -> Option<u64> {
    let text = file(src, rel, notes)?;
    let value = value_of(&text);
    if value == "max" && rel.ends_with("memory.max") {
        return None;
    }
    let parsed = value.parse().ok();
    if parsed.is_none() {
        let mut shown: String = value.chars().take(SHOWN_VALUE_CHARS).collect();
        if shown.len() < value.len() {
            shown.push_str("...");
        }
        notes.push(format!(
            "ignored memory cgroup file {}: '{}' is not a byte count",
            crate::text::escape(rel),
            crate::text::escape(&shown)
        ));
    }
    parsed
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

impl Hierarchy {
    /// The process's cgroup and each parent up to the top, as (folder under
    /// the root, path in the hierarchy).
    fn levels(&self) -> Vec<(String, &str)> {
        let mut out = Vec::new();
        let mut path = self.path.as_str();
        loop {
            let dir = if path.is_empty() {
                self.mount.clone()
            } else {
                format!("{}/{path}", self.mount)
            };
            out.push((dir, path));
            match path.rfind('/') {
                Some(i) => path = &path[..i],
                None if !path.is_empty() => path = "",
                None => return out,
            }
        }
    }

    fn files(&self) -> (&'static str, &'static str, &'static str) {
        if self.v2 {
            ("memory.max", "memory.current", "inactive_file")
        } else {
            (
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
                "total_inactive_file",
            )
        }
    }
}

/// The memory hierarchies from `/proc/self/mountinfo` and
/// `/proc/self/cgroup`; damaged lines and paths are noted.
fn hierarchies(mountinfo: &str, cgroups: &str, notes: &mut Vec<String>) -> Vec<Hierarchy> {
    for (bad, file) in [
        (
            cgroup::malformed_mountinfo_lines(mountinfo),
            "proc/self/mountinfo",
        ),
        (cgroup::malformed_cgroup_lines(cgroups), "proc/self/cgroup"),
    ] {
        if bad > 0 {
            notes.push(format!(
                "ignored {bad} malformed line(s) of {file}: a memory cgroup limit there is unknown"
            ));
        }
    }
    let mut out = Vec::new();
    for m in cgroup::mountinfo(mountinfo) {
        let v2 = m.fs == "cgroup2";
        let memory_v1 = m.fs == "cgroup" && m.has_option("memory");
        if !v2 && !memory_v1 {
            continue;
        }
        let path = match cgroup::own_path(cgroups, v2, "memory") {
            Some(Ok(path)) => path,
            Some(Err(note)) => {
                notes.push(note);
                continue;
            }
            None => continue,
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
fn cgroup_limits(src: &SysfsRoot, notes: &mut Vec<String>) -> Vec<MemoryLimit> {
    let mountinfo = file(src, "proc/self/mountinfo", notes);
    let cgroups = file(src, "proc/self/cgroup", notes);
    let (Some(mountinfo), Some(cgroups)) = (mountinfo, cgroups) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for h in hierarchies(&mountinfo, &cgroups, notes) {
        let levels = h.levels();
        for i in 0..levels.len() {
            out.extend(one_cgroup(src, &h, &levels[i..], notes));
        }
    }
    out
}

/// One cgroup's limit and what is left under it; `levels` are it and its
/// parents. Inactive file pages count as free: the kernel drops them before
/// it calls the OOM killer. Where its usage cannot be read, the nearest
/// parent's stands in: a parent's usage holds its children's, so the
/// headroom is understated, never overstated. With no usage known at all
/// the whole limit is taken as headroom, and the note says so.
fn one_cgroup(
    src: &SysfsRoot,
    h: &Hierarchy,
    levels: &[(String, &str)],
    notes: &mut Vec<String>,
) -> Option<MemoryLimit> {
    let (dir, path) = (levels[0].0.as_str(), levels[0].1);
    let (limit_file, usage_file, _) = h.files();
    let limit = byte_count(src, &format!("{dir}/{limit_file}"), notes)?;
    if !h.v2 && limit >= V1_UNLIMITED {
        return None;
    }
    let mut used = None;
    for (n, (level, _)) in levels.iter().enumerate() {
        // Only the cgroup's own file is worth a note; a parent's is a
        // stand-in.
        let mut quiet = Vec::new();
        let sink = if n == 0 { &mut *notes } else { &mut quiet };
        if let Some(u) = used_bytes(src, h, level, sink) {
            used = Some((u, n));
            break;
        }
    }
    let shown = format!("{dir}/{usage_file}");
    match used {
        Some((_, 0)) => {}
        Some((_, n)) => notes.push(format!(
            "the usage of memory cgroup /{} is unknown ({} not read): its parent /{}'s stands in",
            crate::text::escape(path),
            crate::text::escape(&shown),
            crate::text::escape(levels[n].1),
        )),
        None => notes.push(format!(
            "the usage of memory cgroup /{} is unknown ({} not read): its whole limit is taken as free",
            crate::text::escape(path),
            crate::text::escape(&shown),
        )),
    }
    let used = used.map_or(0, |(u, _)| u);
    Some(MemoryLimit {
        headroom_bytes: limit.saturating_sub(used),
        limit_bytes: limit,
        source: format!(
            "memory cgroup /{} ({limit_file})",
            crate::text::escape(path)
        ),
    })
}

/// What a cgroup holds that the kernel cannot drop: its usage less its
/// inactive file pages.
fn used_bytes(src: &SysfsRoot, h: &Hierarchy, dir: &str, notes: &mut Vec<String>) -> Option<u64> {
    let (_, usage_file, inactive_key) = h.files();
    let usage = byte_count(src, &format!("{dir}/{usage_file}"), notes)?;
    let inactive = src
        .read(&format!("{dir}/memory.stat"))
        .ok()
        .flatten()
        .and_then(|stat| {
            stat.lines().find_map(|l| {
                let (k, v) = l.split_once(' ')?;
                (k == inactive_key).then(|| v.trim().parse::<u64>().ok())?
            })
        })
        .unwrap_or(0);
    Some(usage.saturating_sub(inactive))
}

/// `RLIMIT_AS` against the address space in use and `RLIMIT_DATA` against
/// the private writable memory (which every anonymous buffer is), each less
/// what the process keeps for itself and for the threads a probe may start.
fn rlimits(cpus: usize) -> Vec<MemoryLimit> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb = |key: &str| -> u64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .map_or(0, |k| k * 1024)
    };
    let capped = crate::sys::process::malloc_arenas_capped();
    let mut out = Vec::new();
    for (resource, name, used) in [
        (Rlimit::AddressSpace, "RLIMIT_AS (ulimit -v)", kb("VmSize:")),
        (Rlimit::Data, "RLIMIT_DATA (ulimit -d)", kb("VmData:")),
    ] {
        if let Some(limit) = crate::sys::process::soft_rlimit(resource) {
            out.push(MemoryLimit {
                headroom_bytes: limit
                    .saturating_sub(used)
                    .saturating_sub(reserve(resource, cpus, capped)),
                limit_bytes: limit,
                source: name.to_string(),
            });
        }
    }
    out
}

/// What is kept back under `resource` for the process and the threads a
/// probe may start on `cpus` CPUs.
fn reserve(resource: Rlimit, cpus: usize, arenas_capped: bool) -> u64 {
    let arenas = cfg!(target_env = "gnu") && !arenas_capped;
    let per_thread = match resource {
        Rlimit::AddressSpace if arenas => THREAD_RESERVE + ARENA_RESERVE,
        _ => THREAD_RESERVE,
    };
    RLIMIT_RESERVE.saturating_add(per_thread.saturating_mul(cpus.max(1) as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::tree;

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
        let h = hierarchies(MOUNTINFO, CGROUP, &mut Vec::new());
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
        let l = read(&SysfsRoot::new(d.path()), 1, &mut Vec::new()).unwrap();
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
        let l = read(&SysfsRoot::new(d.path()), 1, &mut Vec::new()).unwrap();
        assert_eq!(l.headroom_bytes, 0, "usage above the limit leaves nothing");
        assert!(l.source.contains("memory.max"));
        let d = tree(&[("proc/self/mountinfo", mi), ("proc/self/cgroup", "0::/\n")]);
        assert_eq!(read(&SysfsRoot::new(d.path()), 1, &mut Vec::new()), None);
    }

    const JOB: &str = "sys/fs/cgroup/memory/slurm/uid_0/job_7";

    /// The v1 tree of the first test, with `job` files replaced.
    fn v1_tree(job: &[(&str, &str)]) -> tempfile::TempDir {
        let mut files = vec![
            ("proc/self/mountinfo", MOUNTINFO),
            ("proc/self/cgroup", CGROUP),
            (
                "sys/fs/cgroup/memory/slurm/memory.limit_in_bytes",
                "8589934592\n",
            ),
            (
                "sys/fs/cgroup/memory/slurm/memory.usage_in_bytes",
                "1073741824\n",
            ),
        ];
        let owned: Vec<(String, &str)> = job
            .iter()
            .map(|(f, t)| (format!("{JOB}/{f}"), *t))
            .collect();
        files.extend(owned.iter().map(|(f, t)| (f.as_str(), *t)));
        tree(&files)
    }

    fn read_noted(d: &tempfile::TempDir) -> (Option<MemoryLimit>, Vec<String>) {
        let mut notes = Vec::new();
        let l = read(&SysfsRoot::new(d.path()), 4, &mut notes);
        (l, notes)
    }

    #[test]
    fn a_limit_that_is_no_byte_count_is_named_not_dropped() {
        for bad in ["abc", "-5", "99999999999999999999999", "max"] {
            let d = v1_tree(&[
                ("memory.limit_in_bytes", bad),
                ("memory.usage_in_bytes", "0"),
            ]);
            let (l, notes) = read_noted(&d);
            assert_eq!(l.unwrap().limit_bytes, 8 << 30, "the parent's still holds");
            let want = format!(
                "ignored memory cgroup file {JOB}/memory.limit_in_bytes: '{bad}' is not a byte count"
            );
            assert_eq!(notes, [want]);
        }
    }

    #[test]
    fn a_limit_file_that_is_no_regular_file_is_named() {
        let d = v1_tree(&[("memory.usage_in_bytes", "0")]);
        let limit = d.path().join(JOB).join("memory.limit_in_bytes");
        std::fs::create_dir(&limit).unwrap();
        let (_, notes) = read_noted(&d);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("is not a regular file"), "{notes:?}");
        std::fs::remove_dir(&limit).unwrap();
        std::os::unix::fs::symlink("memory.limit_in_bytes", &limit).unwrap();
        let (_, notes) = read_noted(&d);
        assert!(notes[0].contains("loop of symbolic links"), "{notes:?}");
    }

    #[test]
    fn an_unreadable_usage_takes_the_parents_and_none_known_the_whole_limit() {
        let d = v1_tree(&[
            ("memory.limit_in_bytes", "4294967296"),
            ("memory.usage_in_bytes", "lots"),
        ]);
        let (l, notes) = read_noted(&d);
        assert_eq!(
            l.unwrap().headroom_bytes,
            3 << 30,
            "less the parent's 1 GiB"
        );
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].contains("'lots' is not a byte count"), "{notes:?}");
        assert!(
            notes[1].contains("its parent /slurm's stands in"),
            "{notes:?}"
        );
        std::fs::remove_file(
            d.path()
                .join("sys/fs/cgroup/memory/slurm/memory.usage_in_bytes"),
        )
        .unwrap();
        let (l, notes) = read_noted(&d);
        assert_eq!(l.unwrap().headroom_bytes, 4 << 30);
        assert!(
            notes
                .iter()
                .any(|n| n.contains("whole limit is taken as free")),
            "{notes:?}"
        );
    }

    #[test]
    fn a_damaged_mount_or_cgroup_table_is_named() {
        let d = tree(&[("proc/self/cgroup", CGROUP)]);
        std::fs::create_dir_all(d.path().join("proc/self/mountinfo")).unwrap();
        let (l, notes) = read_noted(&d);
        assert_eq!(l, None);
        assert!(notes[0].contains("proc/self/mountinfo"), "{notes:?}");
        let d = tree(&[
            ("proc/self/mountinfo", MOUNTINFO),
            ("proc/self/cgroup", "\u{7f}\u{1}x\n"),
        ]);
        let (_, notes) = read_noted(&d);
        assert!(
            notes[0].contains("1 malformed line(s) of proc/self/cgroup"),
            "{notes:?}"
        );
        let deep = format!("4:memory:{}\n", "/a".repeat(10_000));
        let d = tree(&[
            ("proc/self/mountinfo", MOUNTINFO),
            ("proc/self/cgroup", &deep),
        ]);
        let (_, notes) = read_noted(&d);
        assert!(
            notes[0].contains("memory cgroup path in proc/self/cgroup"),
            "{notes:?}"
        );
    }

    #[test]
    fn the_rlimit_reserve_grows_with_the_cpus_and_the_arenas() {
        let mib = |m: u64| m << 20;
        assert_eq!(reserve(Rlimit::Data, 4, false), mib(64 + 4 * 8));
        assert_eq!(reserve(Rlimit::AddressSpace, 4, true), mib(64 + 4 * 8));
        assert_eq!(reserve(Rlimit::Data, 0, true), mib(64 + 8));
        if cfg!(target_env = "gnu") {
            assert_eq!(reserve(Rlimit::AddressSpace, 4, false), mib(64 + 4 * 72));
        }
    }
}
