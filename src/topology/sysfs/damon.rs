//! DAMON, the kernel's data access monitor: the workers (kdamonds) set up
//! through its sysfs interface and the DAMON modules (reclaim, LRU sort,
//! stat), with the actions their schemes take on memory.
//!
//! A benchmark wants to know because some actions move its memory: a
//! `pageout` scheme swaps out what it finds idle for a while, and
//! `migrate_hot`/`migrate_cold` move pages between nodes, which is exactly
//! what a NUMA figure must not have happen under it unnoticed.

use super::*;

const ADMIN: &str = "sys/kernel/mm/damon/admin/kdamonds";
/// More kdamonds, contexts or schemes than this and the rest are not read.
const MAX_LISTED: usize = 64;

/// The DAMON workers and modules this kernel shows, running or not; empty
/// where the kernel has no DAMON. A file that cannot be read (the admin
/// tree is root's on some kernels) is skipped, never an error.
pub(super) fn read_damon(src: &SysfsRoot) -> Vec<Damon> {
    let mut out = Vec::new();
    for id in 0..count(src, &format!("{ADMIN}/nr_kdamonds")) {
        let dir = format!("{ADMIN}/{id}");
        let Some(state) = trimmed(src, &format!("{dir}/state")) else {
            continue;
        };
        let mut d = Damon {
            name: format!("kdamond {id}"),
            on: state == "on",
            operations: Vec::new(),
            actions: Vec::new(),
        };
        for c in 0..count(src, &format!("{dir}/contexts/nr_contexts")) {
            let ctx = format!("{dir}/contexts/{c}");
            push_new(
                &mut d.operations,
                trimmed(src, &format!("{ctx}/operations")),
            );
            for s in 0..count(src, &format!("{ctx}/schemes/nr_schemes")) {
                push_new(
                    &mut d.actions,
                    trimmed(src, &format!("{ctx}/schemes/{s}/action")),
                );
            }
        }
        out.push(d);
    }
    for (module, actions) in [
        ("damon_reclaim", &["pageout"][..]),
        ("damon_lru_sort", &["lru_prio", "lru_deprio"][..]),
        ("damon_stat", &[][..]),
    ] {
        if let Some(enabled) = trimmed(src, &format!("sys/module/{module}/parameters/enabled")) {
            out.push(Damon {
                name: module.into(),
                on: enabled == "Y" || enabled == "1",
                operations: vec!["paddr".into()],
                actions: actions.iter().map(|a| a.to_string()).collect(),
            });
        }
    }
    out
}

fn trimmed(src: &SysfsRoot, rel: &str) -> Option<String> {
    src.read_trimmed(rel).ok().flatten()
}

/// A count file's value, at most [`MAX_LISTED`]; 0 when unreadable.
fn count(src: &SysfsRoot, rel: &str) -> usize {
    trimmed(src, rel)
        .and_then(|t| t.parse::<usize>().ok())
        .unwrap_or(0)
        .min(MAX_LISTED)
}

fn push_new(list: &mut Vec<String>, item: Option<String>) {
    if let Some(item) = item
        && !item.is_empty()
        && !list.contains(&item)
    {
        list.push(item);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &std::path::Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn kdamonds_and_modules_with_their_actions() {
        let tmp = tempfile::tempdir().unwrap();
        let r = tmp.path();
        write(r, &format!("{ADMIN}/nr_kdamonds"), "2\n");
        write(r, &format!("{ADMIN}/0/state"), "on\n");
        write(r, &format!("{ADMIN}/0/contexts/nr_contexts"), "1\n");
        write(r, &format!("{ADMIN}/0/contexts/0/operations"), "paddr\n");
        write(
            r,
            &format!("{ADMIN}/0/contexts/0/schemes/nr_schemes"),
            "2\n",
        );
        write(
            r,
            &format!("{ADMIN}/0/contexts/0/schemes/0/action"),
            "pageout\n",
        );
        write(
            r,
            &format!("{ADMIN}/0/contexts/0/schemes/1/action"),
            "pageout\n",
        );
        write(r, &format!("{ADMIN}/1/state"), "off\n");
        write(r, "sys/module/damon_reclaim/parameters/enabled", "N\n");
        let d = read_damon(&SysfsRoot::new(r));
        assert_eq!(d.len(), 3, "{d:?}");
        assert_eq!(d[0].name, "kdamond 0");
        assert!(d[0].on);
        assert_eq!(d[0].operations, ["paddr"]);
        assert_eq!(d[0].actions, ["pageout"], "listed once");
        assert!(d[0].moves_memory());
        assert!(!d[1].on && d[1].actions.is_empty() && !d[1].moves_memory());
        assert_eq!(d[2].name, "damon_reclaim");
        assert!(!d[2].on && !d[2].moves_memory(), "enabled N is off");
    }

    #[test]
    fn no_damon_and_damaged_counts_read_as_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(read_damon(&SysfsRoot::new(tmp.path())).is_empty());
        write(tmp.path(), &format!("{ADMIN}/nr_kdamonds"), "lots\n");
        assert!(read_damon(&SysfsRoot::new(tmp.path())).is_empty());
        write(tmp.path(), &format!("{ADMIN}/nr_kdamonds"), "99999999\n");
        assert!(
            read_damon(&SysfsRoot::new(tmp.path())).is_empty(),
            "no state files"
        );
    }
}
