//! Pinning the calling thread to CPUs, and checking where it runs.
//!
//! Masks are sized from the set rather than from `cpu_set_t`, so machines with
//! more than 1024 CPUs work. Pinning acts on the calling thread only: a probe
//! pins each worker from inside that worker, before it touches memory.

use super::sys::{self, PlacementError};
use crate::ids::CpuSet;
use std::io;

/// Restricts the calling thread to `cpus`.
///
/// The kernel intersects the mask with the CPUs online and allowed by the
/// cpuset, and fails only when nothing is left; read [`current_affinity`]
/// afterwards if a partly applied mask matters.
pub(crate) fn pin_current_thread(cpus: &CpuSet) -> Result<(), PlacementError> {
    let args = || format!("cpus={}", cpus.to_list());
    if cpus.is_empty() {
        return Err(PlacementError::new(
            "sched_setaffinity",
            args(),
            io::Error::from_raw_os_error(libc::EINVAL),
        )
        .with_hint("the CPU set is empty"));
    }
    sys::sched_setaffinity(&cpus.to_words(1)).map_err(|e| {
        let hint = affinity_hint(cpus, &e);
        let err = PlacementError::new("sched_setaffinity", args(), e);
        match hint {
            Some(h) => err.with_hint(h),
            None => err,
        }
    })
}

fn affinity_hint(cpus: &CpuSet, err: &io::Error) -> Option<String> {
    match err.raw_os_error()? {
        libc::EINVAL => {
            let online = read_cpu_list("/sys/devices/system/cpu/online")
                .map_or("unknown".into(), |s| s.to_list());
            let allowed = match cpuset_cpus() {
                Some(set) => format!("cpuset allows: {set}"),
                None => format!(
                    "Cpus_allowed_list: {}",
                    process_cpus_allowed().map_or("unknown".into(), |s| s.to_list())
                ),
            };
            Some(format!(
                "none of CPUs {} is both online and allowed for this process \
                 (online: {online}, {allowed})",
                cpus.to_list(),
            ))
        }
        libc::EPERM => Some(
            "the cpuset or a security policy forbids changing affinity; \
             CAP_SYS_NICE may be needed"
                .into(),
        ),
        _ => None,
    }
}

fn read_cpu_list(path: &str) -> Option<CpuSet> {
    CpuSet::parse_list(&std::fs::read_to_string(path).ok()?).ok()
}

/// `Cpus_allowed_list` of the process: the main thread's affinity, which
/// only equals the cpuset until someone narrows it.
fn process_cpus_allowed() -> Option<CpuSet> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
    CpuSet::parse_list(list).ok()
}

/// The CPUs this process's cpuset cgroup allows, from cgroup v2
/// (`cpuset.cpus.effective`) or v1 (`cpuset.effective_cpus`), walking up
/// to the nearest cgroup that has the file.
fn cpuset_cpus() -> Option<CpuSet> {
    let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut candidates = Vec::new();
    for line in groups.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        if controllers.is_empty() {
            for root in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] {
                candidates.push((root, path, "cpuset.cpus.effective"));
            }
        } else if controllers.split(',').any(|c| c == "cpuset") {
            candidates.push(("/sys/fs/cgroup/cpuset", path, "cpuset.effective_cpus"));
        }
    }
    candidates.into_iter().find_map(|(root, path, file)| {
        let mut dir = std::path::PathBuf::from(format!("{root}{path}"));
        loop {
            if let Some(set) = read_cpu_list(&dir.join(file).to_string_lossy()) {
                return Some(set);
            }
            if dir.as_os_str().len() <= root.len() || !dir.pop() {
                return None;
            }
        }
    })
}

/// The CPUs the calling thread may run on.
pub(crate) fn current_affinity() -> Result<CpuSet, PlacementError> {
    let possible = read_cpu_list("/sys/devices/system/cpu/possible").map_or(1024, |s| s.end());
    let mut words = possible.div_ceil(64).max(1);
    loop {
        let mut mask = vec![0u64; words];
        match sys::sched_getaffinity(&mut mask) {
            Ok(bytes) => {
                let used = bytes.div_ceil(8).min(mask.len());
                return Ok(CpuSet::from_words(&mask[..used]));
            }
            // The kernel refuses a mask shorter than its CPU count; grow it.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && words < (1 << 14) => words *= 2,
            Err(e) => {
                return Err(PlacementError::new(
                    "sched_getaffinity",
                    format!("bytes={}", words * 8),
                    e,
                ));
            }
        }
    }
}

/// The CPU the calling thread is running on now. Without pinning the answer
/// can be stale by the time it is used. Returns 0 only if the kernel refuses
/// both `sched_getcpu` and `getcpu`, which happens only under seccomp filters.
pub(crate) fn current_cpu() -> usize {
    sys::sched_getcpu().unwrap_or(0)
}

/// The node of the CPU the calling thread is running on now.
#[cfg(test)]
pub(crate) fn current_node() -> Result<usize, PlacementError> {
    sys::getcpu()
        .map(|(_, node)| node)
        .map_err(|e| PlacementError::new("getcpu", "", e))
}

/// Pins the calling thread to `cpu` and confirms it runs there, returning the
/// CPU seen.
///
/// `sched_setaffinity` migrates the caller before it returns, so the first
/// look normally agrees; a few yields cover a scheduler that has not finished
/// moving it. A thread still elsewhere after that means the pin did not take,
/// and measurements made on it would be attributed to the wrong CPU.
pub(crate) fn pin_and_check(cpu: usize) -> Result<usize, PlacementError> {
    const TRIES: usize = 5;
    pin_current_thread(&CpuSet::from_ids([cpu]))?;
    let mut seen = current_cpu();
    for _ in 0..TRIES {
        if seen == cpu {
            return Ok(seen);
        }
        std::thread::yield_now();
        seen = current_cpu();
    }
    if seen == cpu {
        return Ok(seen);
    }
    Err(PlacementError::new(
        "sched_getcpu",
        format!("after pinning to CPU {cpu}"),
        io::Error::other(format!(
            "the thread still runs on CPU {seen} after {TRIES} yields"
        )),
    ))
}

/// Restores the thread's previous affinity when dropped, so a pinned section
/// does not leak its pin to whatever runs on the thread next.
#[must_use = "the previous affinity is restored when the guard is dropped"]
pub(crate) struct AffinityGuard {
    previous: CpuSet,
}

impl AffinityGuard {
    /// The affinity that will be restored.
    #[cfg(test)]
    pub(crate) fn previous(&self) -> &CpuSet {
        &self.previous
    }
}

impl Drop for AffinityGuard {
    fn drop(&mut self) {
        // Restoring a mask the thread had a moment ago fails only if CPUs went
        // offline meanwhile; the thread then keeps its pin, which is harmless.
        let _ = pin_current_thread(&self.previous);
    }
}

/// Pins the calling thread to `cpus` until the guard is dropped.
pub(crate) fn pin_scoped(cpus: &CpuSet) -> Result<AffinityGuard, PlacementError> {
    let previous = current_affinity()?;
    pin_current_thread(cpus)?;
    Ok(AffinityGuard { previous })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affinity_is_a_nonempty_set_of_online_cpus() {
        let cpus = current_affinity().unwrap();
        assert!(!cpus.is_empty());
        if let Some(online) = read_cpu_list("/sys/devices/system/cpu/online") {
            assert!(cpus.is_subset(&online), "{cpus} not within {online}");
        }
    }

    #[test]
    fn pinned_thread_reads_back_each_allowed_cpu() {
        // A fresh thread, so the test harness thread keeps its affinity.
        std::thread::spawn(|| {
            let allowed = current_affinity().unwrap();
            for cpu in allowed.iter() {
                assert_eq!(pin_and_check(cpu).unwrap(), cpu);
                assert_eq!(current_affinity().unwrap(), CpuSet::from_ids([cpu]));
                assert_eq!(current_cpu(), cpu);
            }
            pin_current_thread(&allowed).unwrap();
            assert_eq!(current_affinity().unwrap(), allowed);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn scoped_pin_restores_the_previous_mask() {
        std::thread::spawn(|| {
            let before = current_affinity().unwrap();
            let first = before.first().unwrap();
            {
                let guard = pin_scoped(&CpuSet::from_ids([first])).unwrap();
                assert_eq!(guard.previous(), &before);
                assert_eq!(current_affinity().unwrap().to_list(), first.to_string());
            }
            assert_eq!(current_affinity().unwrap(), before);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn large_cpu_ids_go_through_the_raw_call() {
        std::thread::spawn(|| {
            let allowed = current_affinity().unwrap();
            // A mask wider than cpu_set_t: CPU 5000 is ignored by the kernel,
            // the allowed CPUs remain.
            let mut wide = allowed.clone();
            wide.insert(5000);
            pin_current_thread(&wide).unwrap();
            assert_eq!(current_affinity().unwrap(), allowed);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn impossible_pins_fail_with_a_hint() {
        std::thread::spawn(|| {
            let e = pin_current_thread(&CpuSet::new()).unwrap_err();
            assert!(e.to_string().contains("the CPU set is empty"), "{e}");
            let e = pin_current_thread(&CpuSet::from_ids([100_000])).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
            let msg = e.to_string();
            assert!(
                msg.starts_with("sched_setaffinity(cpus=100000) failed"),
                "{msg}"
            );
            assert!(msg.contains("online and allowed"), "{msg}");
            // The thread's own narrowed mask is not reported as the limit.
            if let Some(set) = cpuset_cpus() {
                assert!(msg.contains(&format!("cpuset allows: {set}")), "{msg}");
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn cpuset_covers_the_affinity() {
        if let Some(set) = cpuset_cpus() {
            assert!(current_affinity().unwrap().is_subset(&set));
        }
    }

    #[test]
    fn current_node_is_a_possible_node() {
        assert!(sys::possible_nodes().contains(current_node().unwrap()));
    }
}
