//! A cgroup of a test's own, to run numabench under a limit: v1 or v2,
//! the `pids` or the `memory` controller. Made only by root where the
//! controller's hierarchy is writable; removed when dropped (the processes
//! run in it have exited by then).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

static MADE: AtomicUsize = AtomicUsize::new(0);

pub struct Cgroup {
    dir: PathBuf,
    v2: bool,
}

/// The directory a controller's cgroups go in, and whether it is v2.
fn hierarchy(controller: &str) -> Option<(PathBuf, bool)> {
    let root = Path::new("/sys/fs/cgroup");
    let v1 = root.join(controller);
    if v1.join("cgroup.procs").is_file() {
        return Some((v1, false));
    }
    for base in [root.to_path_buf(), root.join("unified")] {
        let has = std::fs::read_to_string(base.join("cgroup.controllers"))
            .is_ok_and(|c| c.split_whitespace().any(|c| c == controller));
        if has {
            // Children get the controller only where the parent hands it on.
            let _ = std::fs::write(
                base.join("cgroup.subtree_control"),
                format!("+{controller}"),
            );
            return Some((base, true));
        }
    }
    None
}

/// A v1 file's name under v2.
fn v2_name(file: &str) -> &str {
    match file {
        "memory.limit_in_bytes" => "memory.max",
        "memory.memsw.limit_in_bytes" => "memory.swap.max",
        other => other,
    }
}

impl Cgroup {
    /// A new cgroup of `controller` with each (file, value) of `files`
    /// written (v1 names; the v2 equivalents where the machine has v2);
    /// `None`, with a note printed, where that cannot be done here.
    pub fn new(controller: &str, files: &[(&str, &str)]) -> Option<Cgroup> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("note: not root, no {controller} cgroup: skipped");
            return None;
        }
        let Some((base, v2)) = hierarchy(controller) else {
            eprintln!("note: no {controller} cgroup hierarchy here: skipped");
            return None;
        };
        let name = format!(
            "numabench-test-{}-{}",
            std::process::id(),
            MADE.fetch_add(1, Ordering::SeqCst)
        );
        let dir = base.join(name);
        if let Err(e) = std::fs::create_dir(&dir) {
            eprintln!("note: cannot make {}: {e}: skipped", dir.display());
            return None;
        }
        let group = Cgroup { dir, v2 };
        for (file, value) in files {
            if let Err(e) = group.set(file, value) {
                eprintln!("note: cannot write {file} = {value}: {e}: skipped");
                return None;
            }
        }
        Some(group)
    }

    /// Writes `value` to the cgroup's `file` (a v1 name).
    pub fn set(&self, file: &str, value: &str) -> std::io::Result<()> {
        let file = if self.v2 { v2_name(file) } else { file };
        std::fs::write(self.dir.join(file), value)
    }

    /// `bin` run inside the cgroup: a shell moves itself in, then execs
    /// `bin` with the arguments given to the command.
    pub fn command(&self, bin: &Path) -> Command {
        let procs = self.dir.join("cgroup.procs");
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!(
                "echo $$ > '{}' && exec \"$0\" \"$@\"",
                procs.display()
            ))
            .arg(bin);
        cmd
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // A task that just exited may still count for a moment.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        eprintln!("note: could not remove {}", self.dir.display());
    }
}
