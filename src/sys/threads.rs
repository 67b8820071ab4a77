//! Starting threads where the system may refuse one: a pids cgroup
//! (systemd's TasksMax, a container, a batch scheduler's job) or `ulimit
//! -u` caps the tasks of a process. A refused thread is an error naming
//! the limit, never a panic; threads that started before it wait at a
//! [`StartGate`] so none of them is left waiting for a partner that never
//! came.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};
use std::thread::{Builder, JoinHandle, Scope, ScopedJoinHandle};

/// Holds started threads until every thread of their group has started:
/// then they all go on, or, where one could not start, all turn back.
#[derive(Default)]
pub(crate) struct StartGate {
    state: Mutex<Option<bool>>,
    opened: Condvar,
}

impl StartGate {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Lets the waiting threads (and any that come later) go on (`go`) or
    /// turn back.
    pub(crate) fn open(&self, go: bool) {
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = Some(go);
        self.opened.notify_all();
    }

    /// Waits until the gate opens; whether to go on.
    pub(crate) fn wait(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(go) = *state {
                return go;
            }
            state = self.opened.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// A thread (or, with [`CannotStart::process`], a forked process) the
/// system would not start: which one of how many, and why.
#[derive(Debug)]
pub(crate) struct CannotStart {
    /// 0-based.
    pub index: usize,
    pub total: usize,
    pub error: io::Error,
    /// "thread" or "process".
    pub what: &'static str,
}

impl CannotStart {
    /// Process `index` of `total` could not be forked.
    pub(crate) fn process(index: usize, total: usize, error: io::Error) -> Self {
        Self {
            index,
            total,
            error,
            what: "process",
        }
    }

    fn thread(index: usize, total: usize, error: io::Error) -> Self {
        Self {
            index,
            total,
            error,
            what: "thread",
        }
    }
}

impl std::fmt::Display for CannotStart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let why = self.error.to_string();
        let why = why.split(" (os error").next().unwrap_or(&why);
        let (what, n, total) = (self.what, self.index + 1, self.total);
        write!(f, "cannot start {what} {n} of {total} ({why})")?;
        // fork and clone say EAGAIN for a task limit; anything else (ENOMEM
        // for a fork's page tables, say) has another cause.
        if self.error.raw_os_error() == Some(libc::EAGAIN) || what == "thread" {
            let whats = if what == "process" {
                "processes"
            } else {
                "threads"
            };
            write!(
                f,
                ": the task limit is reached ({}); use fewer {whats} or raise the limit",
                task_limits()
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for CannotStart {}

/// Starts thread `index` of `total` in `scope`.
pub(crate) fn spawn_scoped<'scope, 'env, F, T>(
    scope: &'scope Scope<'scope, 'env>,
    (index, total): (usize, usize),
    f: F,
) -> Result<ScopedJoinHandle<'scope, T>, CannotStart>
where
    F: FnOnce() -> T + Send + 'scope,
    T: Send + 'scope,
{
    Builder::new()
        .spawn_scoped(scope, f)
        .map_err(|error| CannotStart::thread(index, total, error))
}

/// Starts thread `index` of `total`, detached from any scope.
pub(crate) fn spawn<F, T>(
    (index, total): (usize, usize),
    f: F,
) -> Result<JoinHandle<T>, CannotStart>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    Builder::new()
        .spawn(f)
        .map_err(|error| CannotStart::thread(index, total, error))
}

/// The limits on this process's tasks, for a message: "pids.max 3 in
/// cgroup /x, or ulimit -u 4096", naming only those that are set.
pub(crate) fn task_limits() -> String {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mut parts = Vec::new();
    if let Some((max, group)) = pids_max(&cgroups, Path::new("/sys/fs/cgroup")) {
        parts.push(format!(
            "pids.max {max} in cgroup {}",
            crate::text::escape(&group)
        ));
    }
    if let Some(n) = nproc_limit() {
        parts.push(format!("ulimit -u {n}"));
    }
    if parts.is_empty() {
        "no pids.max or ulimit -u applies: kernel.threads-max, or memory for thread stacks".into()
    } else {
        parts.join(", or ")
    }
}

/// The lowest `pids.max` over the process's pids cgroup and its
/// ancestors, with the cgroup that sets it, from `/proc/self/cgroup`'s
/// text: a v1 line `N:pids:/path` (`root/pids/path/pids.max`) or the v2
/// line `0::/path` (`root/path/pids.max`, or under `root/unified` on a
/// hybrid system).
pub(crate) fn pids_max(proc_cgroup: &str, root: &Path) -> Option<(u64, String)> {
    let mut found = None;
    for line in proc_cgroup.lines() {
        let mut f = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let bases: Vec<PathBuf> = if controllers.is_empty() {
            vec![root.to_path_buf(), root.join("unified")]
        } else if controllers.split(',').any(|c| c == "pids") {
            vec![root.join("pids")]
        } else {
            continue;
        };
        for base in bases {
            let mut group = Path::new(path);
            loop {
                let rel = group.strip_prefix("/").unwrap_or(group);
                let max = std::fs::read_to_string(base.join(rel).join("pids.max"))
                    .ok()
                    .and_then(|t| t.trim().parse::<u64>().ok());
                if let Some(max) = max
                    && found.as_ref().is_none_or(|(m, _)| max < *m)
                {
                    found = Some((max, group.display().to_string()));
                }
                match group.parent() {
                    Some(p) => group = p,
                    None => break,
                }
            }
        }
    }
    found
}

/// RLIMIT_NPROC where it is finite.
fn nproc_limit() -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into `lim`, which lives on this
    // frame for the call.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut lim) };
    (rc == 0 && lim.rlim_cur != libc::RLIM_INFINITY).then_some(lim.rlim_cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pids_max_is_the_lowest_over_the_group_and_its_ancestors() {
        let root = std::env::temp_dir().join(format!("numabench-pids-{}", std::process::id()));
        let v1 = root.join("pids/a/b");
        std::fs::create_dir_all(&v1).unwrap();
        std::fs::write(root.join("pids/pids.max"), "max\n").unwrap();
        std::fs::write(root.join("pids/a/pids.max"), "7\n").unwrap();
        std::fs::write(v1.join("pids.max"), "max\n").unwrap();
        let text = "12:memory:/a\n5:pids:/a/b\n0::/other\n";
        assert_eq!(pids_max(text, &root), Some((7, "/a".into())));
        std::fs::write(v1.join("pids.max"), "3\n").unwrap();
        assert_eq!(pids_max(text, &root), Some((3, "/a/b".into())));
        // v2: the unified line alone.
        let v2 = root.join("x/y");
        std::fs::create_dir_all(&v2).unwrap();
        std::fs::write(v2.join("pids.max"), "5\n").unwrap();
        assert_eq!(pids_max("0::/x/y\n", &root), Some((5, "/x/y".into())));
        assert_eq!(pids_max("0::/none\n3:cpu:/x/y\n", &root), None);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_gate_lets_all_go_or_turns_all_back() {
        for go in [true, false] {
            let gate = StartGate::new();
            let went = std::thread::scope(|s| {
                let hs: Vec<_> = (0..3).map(|_| s.spawn(|| gate.wait())).collect();
                gate.open(go);
                hs.into_iter()
                    .map(|h| h.join().unwrap())
                    .collect::<Vec<_>>()
            });
            assert_eq!(went, [go; 3]);
            assert_eq!(gate.wait(), go, "a late thread sees the same");
        }
    }

    #[test]
    fn the_message_names_the_thread_the_cause_and_the_limit() {
        let e = CannotStart::thread(2, 8, io::Error::from_raw_os_error(libc::EAGAIN));
        let text = e.to_string();
        assert!(
            text.starts_with("cannot start thread 3 of 8 (Resource temporarily unavailable): the task limit is reached ("),
            "{text}"
        );
        assert!(!text.contains("os error"), "{text}");
        assert!(
            text.ends_with("use fewer threads or raise the limit"),
            "{text}"
        );
        let fork = CannotStart::process(1, 2, io::Error::from_raw_os_error(libc::EAGAIN));
        let text = fork.to_string();
        assert!(
            text.starts_with("cannot start process 2 of 2 (Resource temporarily unavailable): the task limit is reached ("),
            "{text}"
        );
        assert!(text.ends_with("use fewer processes or raise the limit"));
        let other = CannotStart::process(0, 2, io::Error::from_raw_os_error(libc::ENOMEM));
        assert!(!other.to_string().contains("task limit"), "{other}");
    }
}
