//! The process's cgroup cpuset, read as hwloc's Linux backend reads it.
//! Captured trees without `proc/self/status` (hwloc's test machines among
//! them) still carry the cpuset that bounded the captured process; without
//! it every CPU and node would count as allowed.
//!
//! Anything missing or malformed means no cpuset: it only narrows a
//! default, so it never fails the topology.

use super::super::cgroup::{self, Mount};
use super::{Ids, list};
use crate::ids::IdSet;
use crate::topology::SysfsRoot;

/// The CPUs and memory nodes a cpuset allows.
#[derive(Debug, PartialEq)]
pub(super) struct Cpuset {
    pub cpus: IdSet,
    pub mems: IdSet,
    /// The cpuset's folder, absolute as on the captured machine.
    pub dir: String,
}

/// How a cpuset hierarchy is mounted, which names its files.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// cgroup v2: the effective sets already hold what the ancestors allow.
    V2,
    /// cgroup v1 with the cpuset controller: `cpuset.cpus`.
    V1,
    /// The cpuset file system, or cgroup v1 mounted with `noprefix`: `cpus`.
    Bare,
}

impl Kind {
    fn files(self) -> (&'static str, &'static str) {
        match self {
            Kind::V2 => ("cpuset.cpus.effective", "cpuset.mems.effective"),
            Kind::V1 => ("cpuset.cpus", "cpuset.mems"),
            Kind::Bare => ("cpus", "mems"),
        }
    }
}

/// The first mount holding cpusets, in mount order as hwloc takes it. A
/// v2 hierarchy counts only where its controllers include cpuset: on a
/// hybrid system the v2 mount comes first and holds none.
fn cpuset_mount(src: &SysfsRoot, table: Vec<Mount>) -> Option<(Kind, Mount)> {
    table.into_iter().find_map(|m| {
        let kind = match m.fs.as_str() {
            "cgroup2" => {
                let rel = format!("{}/cgroup.controllers", m.point);
                let ctrls = src.read(&rel).ok().flatten()?;
                ctrls
                    .split_whitespace()
                    .any(|c| c == "cpuset")
                    .then_some(Kind::V2)?
            }
            "cpuset" => Kind::Bare,
            "cgroup" if m.has_option("cpuset") && m.has_option("noprefix") => Kind::Bare,
            "cgroup" if m.has_option("cpuset") => Kind::V1,
            _ => return None,
        };
        Some((kind, m))
    })
}

/// The process's cpuset path: its line in `/proc/self/cgroup`, else the
/// legacy `/proc/self/cpuset` that kernels before cgroups wrote.
fn own_path(src: &SysfsRoot, kind: Kind) -> Option<String> {
    let read = |rel: &str| src.read(rel).ok().flatten();
    let from_cgroup = read("proc/self/cgroup").and_then(|c| {
        Some(
            cgroup::own_path(&c, kind == Kind::V2, "cpuset")?
                .ok()?
                .to_string(),
        )
    });
    let path = match from_cgroup {
        Some(p) => p,
        None => read("proc/self/cpuset")?.lines().next()?.to_string(),
    };
    path.starts_with('/').then_some(path)
}

/// The cpuset bounding the captured process, if the tree shows one whole.
pub(super) fn read(src: &SysfsRoot) -> Option<Cpuset> {
    let (kind, mount) = cpuset_mount(src, cgroup::mount_table(src))?;
    let path = own_path(src, kind)?;
    let rel = mount.relative(&path);
    // A path climbing out of the mount is not a cpuset folder.
    if rel.split('/').any(|c| c == "..") {
        return None;
    }
    let dir = [mount.point.as_str(), rel]
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("/");
    let (cpus_file, mems_file) = kind.files();
    let cpus = list(src, &format!("{dir}/{cpus_file}"), Ids::Cpus).ok()??;
    let mems = list(src, &format!("{dir}/{mems_file}"), Ids::Nodes).ok()??;
    // A process always has a CPU and a node to run on: empty sets are a
    // cpuset it cannot be in.
    if cpus.is_empty() || mems.is_empty() {
        return None;
    }
    Some(Cpuset {
        cpus,
        mems,
        dir: format!("/{dir}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::tree;

    fn cpuset(files: &[(&str, &str)]) -> Option<Cpuset> {
        let d = tree(files);
        read(&SysfsRoot::new(d.path()))
    }

    fn ids(list: &str) -> IdSet {
        IdSet::parse_list(list).unwrap()
    }

    #[test]
    fn v1_reads_prefixed_files_at_the_controller_line_path() {
        let c = cpuset(&[
            (
                "proc/self/mountinfo",
                "36 35 0:31 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n\
                 40 35 0:35 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n",
            ),
            ("proc/self/cgroup", "5:cpuset:/job_7\n0::/user.slice\n"),
            ("sys/fs/cgroup/unified/cgroup.controllers", ""),
            ("sys/fs/cgroup/cpuset/job_7/cpuset.cpus", "2-5\n"),
            ("sys/fs/cgroup/cpuset/job_7/cpuset.mems", "1\n"),
        ])
        .unwrap();
        assert_eq!(c.cpus, ids("2-5"));
        assert_eq!(c.mems, ids("1"));
        assert_eq!(c.dir, "/sys/fs/cgroup/cpuset/job_7");
    }

    #[test]
    fn v1_noprefix_reads_bare_files_from_proc_mounts_and_the_legacy_path() {
        let c = cpuset(&[
            (
                "proc/mounts",
                "none /dev/cpuset cgroup rw,relatime,cpuset,noprefix 0 0\n",
            ),
            ("proc/self/cpuset", "/prout\n"),
            ("dev/cpuset/prout/cpus", "0-3\n"),
            ("dev/cpuset/prout/mems", "2-3\n"),
            ("dev/cpuset/prout/cpuset.cpus", "0-15\n"),
        ])
        .unwrap();
        assert_eq!((c.cpus, c.mems), (ids("0-3"), ids("2-3")));
        assert_eq!(c.dir, "/dev/cpuset/prout");
    }

    #[test]
    fn the_cpuset_file_system_reads_bare_files() {
        let c = cpuset(&[
            ("proc/mounts", "none /dev/cpuset cpuset rw 0 0\n"),
            ("proc/self/cpuset", "/\n"),
            ("dev/cpuset/cpus", "0,8\n"),
            ("dev/cpuset/mems", "0\n"),
        ])
        .unwrap();
        assert_eq!((c.cpus, c.dir.as_str()), (ids("0,8"), "/dev/cpuset"));
    }

    #[test]
    fn v2_reads_effective_sets_only_where_cpuset_is_a_controller() {
        let base = [
            ("proc/mounts", "none /cgroup/unified cgroup2 rw 0 0\n"),
            ("proc/self/cgroup", "4:memory:/m\n0::/uid_1/job_2\n"),
            ("cgroup/unified/uid_1/job_2/cpuset.cpus.effective", "0-5\n"),
            ("cgroup/unified/uid_1/job_2/cpuset.mems.effective", "0-1\n"),
        ];
        let mut files = base.to_vec();
        files.push(("cgroup/unified/cgroup.controllers", "cpu cpuset memory\n"));
        let c = cpuset(&files).unwrap();
        assert_eq!((c.cpus, c.mems), (ids("0-5"), ids("0-1")));
        let mut files = base.to_vec();
        files.push(("cgroup/unified/cgroup.controllers", "cpu memory\n"));
        assert_eq!(cpuset(&files), None);
    }

    #[test]
    fn a_malformed_or_missing_piece_means_no_cpuset() {
        let mounts = ("proc/mounts", "none /dev/cpuset cpuset rw 0 0\n");
        let good = [
            mounts,
            ("proc/self/cpuset", "/a\n"),
            ("dev/cpuset/a/cpus", "0-3\n"),
            ("dev/cpuset/a/mems", "0\n"),
        ];
        assert!(cpuset(&good).is_some());
        let broken: [&[(&str, &str)]; 5] = [
            &[good[0], good[1], good[2], ("dev/cpuset/a/mems", "zero\n")],
            &[good[0], good[1], good[2]],
            &[good[0], good[1], good[2], ("dev/cpuset/a/mems", "\n")],
            &[good[0], ("proc/self/cpuset", "a\n"), good[2], good[3]],
            &[good[1], good[2], good[3]],
        ];
        for files in broken {
            assert_eq!(cpuset(files), None, "{files:?}");
        }
        let escape = [
            mounts,
            ("proc/self/cpuset", "/../x\n"),
            ("dev/x/cpus", "0\n"),
            ("dev/x/mems", "0\n"),
        ];
        assert_eq!(cpuset(&escape), None);
    }

    #[test]
    fn the_cpuset_stands_in_only_for_what_status_does_not_list() {
        let files = [
            ("proc/mounts", "none /dev/cpuset cpuset rw 0 0\n"),
            ("proc/self/cpuset", "/a\n"),
            ("dev/cpuset/a/cpus", "1-2\n"),
            ("dev/cpuset/a/mems", "0\n"),
        ];
        let online = ids("0-3");
        let allowed = |extra: &[(&str, &str)]| {
            let mut all = files.to_vec();
            all.extend_from_slice(extra);
            let d = tree(&all);
            let mut notes = Vec::new();
            let a = super::super::read_allowed(&SysfsRoot::new(d.path()), &online, &[], &mut notes)
                .unwrap();
            (a.cpus, notes)
        };
        let (cpus, notes) = allowed(&[]);
        assert_eq!(cpus, ids("1-2"));
        assert_eq!(
            notes,
            [
                "allowed CPUs and nodes from the cgroup cpuset at /dev/cpuset/a, \
              as proc/self/status is absent"
            ]
        );
        let status = "Cpus_allowed_list:\t0-3\nMems_allowed_list:\t0\n";
        let (cpus, notes) = allowed(&[("proc/self/status", status)]);
        assert_eq!((cpus, notes.len()), (online.clone(), 0));
        let (cpus, notes) = allowed(&[("proc/self/status", "Mems_allowed_list:\t0\n")]);
        assert_eq!(cpus, ids("1-2"));
        assert!(notes[0].starts_with("allowed CPUs from"), "{notes:?}");
    }
}
