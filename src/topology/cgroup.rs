//! The mount table and the process's own cgroups as procfs shows them,
//! shared by the memory limit and the cpuset readers.

use super::source::{MAX_PATH_BYTES, MAX_PATH_DEPTH, SysfsRoot};

/// One mounted file system.
#[derive(Debug, PartialEq)]
pub(super) struct Mount {
    /// The folder of the file system shown at the mount point: `/` but in a
    /// cgroup namespace or a bind mount.
    pub root: String,
    /// The mount point without the leading `/`, so it reads under the
    /// topology's root.
    pub point: String,
    pub fs: String,
    /// The file system's options: for a v1 cgroup, its controllers.
    pub options: Vec<String>,
}

impl Mount {
    pub(super) fn has_option(&self, name: &str) -> bool {
        self.options.iter().any(|o| o == name)
    }

    /// The process's cgroup, relative to this mount.
    pub(super) fn relative<'a>(&self, path: &'a str) -> &'a str {
        let rel = match path.strip_prefix(self.root.as_str()) {
            Some(rest) if self.root != "/" => rest,
            _ => path,
        };
        rel.trim_matches('/')
    }
}

/// The mounts in `/proc/self/mountinfo`.
pub(super) fn mountinfo(text: &str) -> Vec<Mount> {
    text.lines().filter_map(mountinfo_line).collect()
}

/// Lines of mountinfo that name no mount: a damaged file.
pub(super) fn malformed_mountinfo_lines(text: &str) -> usize {
    text.lines().filter(|l| mountinfo_line(l).is_none()).count()
}

fn mountinfo_line(line: &str) -> Option<Mount> {
    let (left, right) = line.split_once(" - ")?;
    let l: Vec<&str> = left.split(' ').collect();
    let r: Vec<&str> = right.split(' ').collect();
    let (Some(root), Some(point), Some(fs)) = (l.get(3), l.get(4), r.first()) else {
        return None;
    };
    Some(Mount {
        root: unescape(root),
        point: unescape(point).trim_start_matches('/').to_string(),
        fs: fs.to_string(),
        options: options(r.get(2).copied().unwrap_or_default()),
    })
}

/// The mounts in `/proc/mounts` (`fstab` format), which older captures
/// carry instead of mountinfo; it does not show a mount's root.
pub(super) fn mounts(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            Some(Mount {
                root: "/".into(),
                point: unescape(f.get(1)?).trim_start_matches('/').to_string(),
                fs: f.get(2)?.to_string(),
                options: options(f.get(3)?),
            })
        })
        .collect()
}

/// The mount table of the captured process: mountinfo where there is one.
pub(super) fn mount_table(src: &SysfsRoot) -> Vec<Mount> {
    let read = |rel: &str| src.read(rel).ok().flatten();
    if let Some(text) = read("proc/self/mountinfo") {
        return mountinfo(&text);
    }
    ["proc/self/mounts", "proc/mounts"]
        .into_iter()
        .find_map(read)
        .map(|text| mounts(&text))
        .unwrap_or_default()
}

fn options(text: &str) -> Vec<String> {
    text.split(',').map(str::to_string).collect()
}

/// The process's path in a hierarchy from `/proc/self/cgroup`: the v2 line
/// is `0::/path`, a v1 line names its controllers. A path longer than
/// `PATH_MAX` or deeper than any file the reader opens is no kernel's: it is
/// an error that names it, for a note, rather than a path to walk.
pub(super) fn own_path<'a>(
    cgroups: &'a str,
    v2: bool,
    controller: &str,
) -> Option<Result<&'a str, String>> {
    let path = cgroups.lines().find_map(|c| {
        let mut f = c.splitn(3, ':');
        let (_, controllers, path) = (f.next()?, f.next()?, f.next()?);
        let ours = if v2 {
            controllers.is_empty()
        } else {
            controllers.split(',').any(|c| c == controller)
        };
        ours.then_some(path)
    })?;
    let depth = path.split('/').count();
    if path.len() > MAX_PATH_BYTES || depth > MAX_PATH_DEPTH {
        return Some(Err(format!(
            "ignored the {} cgroup path in proc/self/cgroup: {} bytes in {depth} components, \
             more than {MAX_PATH_BYTES} bytes or {MAX_PATH_DEPTH} components",
            if v2 { "v2" } else { controller },
            path.len(),
        )));
    }
    Some(Ok(path))
}

/// Lines of `/proc/self/cgroup` that are not `id:controllers:/path`: a
/// damaged file, whose limits would otherwise vanish without a word.
pub(super) fn malformed_cgroup_lines(cgroups: &str) -> usize {
    cgroups
        .lines()
        .filter(|l| {
            let mut f = l.splitn(3, ':');
            let id = f.next().unwrap_or_default();
            let ok = !id.is_empty()
                && id.bytes().all(|b| b.is_ascii_digit())
                && f.next().is_some()
                && f.next().is_some_and(|p| p.starts_with('/'));
            !ok
        })
        .count()
}

/// mountinfo writes a space as `\040` (and tab, newline, backslash alike),
/// and each byte of a non-ASCII name in octal: the bytes are gathered and
/// read as UTF-8, so `\303\251` is one `é`, not two Latin-1 letters.
pub(super) fn unescape(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len());
    let mut rest = s.as_bytes();
    while let Some((&first, tail)) = rest.split_first() {
        let code = tail
            .get(..3)
            .filter(|c| c.iter().all(|b| (b'0'..=b'7').contains(b)))
            .and_then(|c| std::str::from_utf8(c).ok())
            .and_then(|c| u8::from_str_radix(c, 8).ok());
        match code {
            Some(b) if first == b'\\' => {
                out.push(b);
                rest = &tail[3..];
            }
            _ => {
                out.push(first);
                rest = tail;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_tables_give_the_same_mount() {
        let a = mountinfo("40 35 0:35 / /sys/fs/cgroup/cpu\\040set rw - cgroup cgroup rw,cpuset\n");
        let b = mounts("cgroup /sys/fs/cgroup/cpu\\040set cgroup rw,cpuset 0 0\n");
        assert_eq!(a, b);
        assert_eq!(a[0].point, "sys/fs/cgroup/cpu set");
        assert!(a[0].has_option("cpuset"));
        assert_eq!(unescape("/mnt/a\\040b"), "/mnt/a b");
    }

    #[test]
    fn a_namespaced_mount_shows_the_subtree_below_its_root() {
        let m = mountinfo("50 1 0:40 /kubepods/pod1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
        let path = own_path("3:cpuset:/x\n0::/kubepods/pod1/c1\n", true, "")
            .unwrap()
            .unwrap();
        assert_eq!(m[0].relative(path), "c1");
        assert_eq!(
            own_path("3:cpu,cpuset:/x\n", false, "cpuset"),
            Some(Ok("/x"))
        );
        assert_eq!(own_path("3:cpu:/x\n", false, "cpuset"), None);
    }

    #[test]
    fn non_ascii_mount_points_are_utf8() {
        assert_eq!(unescape("/mnt/caf\\303\\251"), "/mnt/café");
        assert_eq!(unescape("/a\\134b\\9x\\+12\\"), "/a\\b\\9x\\+12\\");
        let m =
            mountinfo("40 35 0:35 / /sys/fs/cgroup/m\\303\\251m rw - cgroup cgroup rw,memory\n");
        assert_eq!(m[0].point, "sys/fs/cgroup/mém");
    }

    #[test]
    fn overlong_cgroup_paths_and_damaged_lines_are_named() {
        let deep = format!("4:memory:{}\n", "/a".repeat(300));
        let err = own_path(&deep, false, "memory").unwrap().unwrap_err();
        assert!(err.contains("memory cgroup path"), "{err}");
        let long = format!("0::/{}\n", "b".repeat(5000));
        assert!(own_path(&long, true, "").unwrap().is_err());
        assert_eq!(
            malformed_cgroup_lines("4:memory:/x\n0::/\n\u{1}garbage\nx:y:/z\n"),
            2
        );
        let mi = "36 35 0:31 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\nrandom bytes\n";
        assert_eq!(malformed_mountinfo_lines(mi), 1);
    }
}
