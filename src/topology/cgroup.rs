//! The mount table and the process's own cgroups as procfs shows them,
//! shared by the memory limit and the cpuset readers.

use super::source::SysfsRoot;

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
    pub fn has_option(&self, name: &str) -> bool {
        self.options.iter().any(|o| o == name)
    }

    /// The process's cgroup, relative to this mount.
    pub fn relative<'a>(&self, path: &'a str) -> &'a str {
        let rel = match path.strip_prefix(self.root.as_str()) {
            Some(rest) if self.root != "/" => rest,
            _ => path,
        };
        rel.trim_matches('/')
    }
}

/// The mounts in `/proc/self/mountinfo`.
pub(super) fn mountinfo(text: &str) -> Vec<Mount> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let l: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        let (Some(root), Some(point), Some(fs)) = (l.get(3), l.get(4), r.first()) else {
            continue;
        };
        out.push(Mount {
            root: unescape(root),
            point: unescape(point).trim_start_matches('/').to_string(),
            fs: fs.to_string(),
            options: options(r.get(2).copied().unwrap_or_default()),
        });
    }
    out
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
/// is `0::/path`, a v1 line names its controllers.
pub(super) fn own_path<'a>(cgroups: &'a str, v2: bool, controller: &str) -> Option<&'a str> {
    cgroups.lines().find_map(|c| {
        let mut f = c.splitn(3, ':');
        let (_, controllers, path) = (f.next()?, f.next()?, f.next()?);
        let ours = if v2 {
            controllers.is_empty()
        } else {
            controllers.split(',').any(|c| c == controller)
        };
        ours.then_some(path)
    })
}

/// mountinfo writes a space as `\040` (and tab, newline, backslash alike).
pub(super) fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let code = rest.get(i + 1..i + 4);
        match code.and_then(|c| u8::from_str_radix(c, 8).ok()) {
            Some(b) => {
                out.push(char::from(b));
                rest = &rest[i + 4..];
            }
            None => {
                out.push('\\');
                rest = &rest[i + 1..];
            }
        }
    }
    out.push_str(rest);
    out
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
        let path = own_path("3:cpuset:/x\n0::/kubepods/pod1/c1\n", true, "").unwrap();
        assert_eq!(m[0].relative(path), "c1");
        assert_eq!(own_path("3:cpu,cpuset:/x\n", false, "cpuset"), Some("/x"));
        assert_eq!(own_path("3:cpu:/x\n", false, "cpuset"), None);
    }
}
