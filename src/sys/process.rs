//! Processes: fork, wait, kill, prctl, pids, and the CPU time a process,
//! its children or a thread used.

use std::io;

/// How a child process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChildEnd {
    Exited(i32),
    Signaled(i32),
}

impl std::fmt::Display for ChildEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChildEnd::Exited(code) => write!(f, "exit status {code}"),
            ChildEnd::Signaled(sig) => write!(f, "killed by signal {sig} ({})", signal_name(*sig)),
        }
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGABRT => "SIGABRT",
        _ => "signal",
    }
}

/// Threads of this process, from `/proc/self/status`.
pub(crate) fn thread_count() -> io::Result<usize> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| io::Error::other("no Threads: line in /proc/self/status"))
}

/// `fork()`, refused unless the calling process has exactly one thread.
///
/// Returns `None` in the child and the child's pid in the parent.
pub(crate) fn fork_single_threaded() -> io::Result<Option<libc::pid_t>> {
    let threads = thread_count()?;
    if threads != 1 {
        return Err(io::Error::other(format!(
            "refusing to fork with {threads} threads in this process (only the \
             calling thread would exist in the child, with any locks the others held)"
        )));
    }
    // SAFETY: the process has a single thread (checked just above; nothing
    // between the check and the call starts one), so the child is a complete
    // copy: no lock can be held by a thread that does not exist there.
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => Err(io::Error::last_os_error()),
        0 => Ok(None),
        pid => Ok(Some(pid)),
    }
}

/// `waitpid(pid, &status, nohang ? WNOHANG : 0)`: `None` when `nohang` and
/// the child still runs. Interrupted by a signal: `ErrorKind::Interrupted`.
pub(crate) fn wait_child(pid: libc::pid_t, nohang: bool) -> io::Result<Option<ChildEnd>> {
    let mut status: libc::c_int = 0;
    let flags = if nohang { libc::WNOHANG } else { 0 };
    // SAFETY: the kernel writes one int to `status`, which lives on this frame.
    let ret = unsafe { libc::waitpid(pid, &mut status, flags) };
    if ret < 0 {
        return Err(io::Error::last_os_error());
    }
    if ret == 0 {
        return Ok(None);
    }
    if libc::WIFEXITED(status) {
        Ok(Some(ChildEnd::Exited(libc::WEXITSTATUS(status))))
    } else if libc::WIFSIGNALED(status) {
        Ok(Some(ChildEnd::Signaled(libc::WTERMSIG(status))))
    } else {
        // Stopped or continued: not an end; callers treat it as still running.
        Ok(None)
    }
}

/// `kill(pid, sig)`.
pub(crate) fn kill(pid: libc::pid_t, sig: i32) -> io::Result<()> {
    // SAFETY: sending a signal has no memory effect in this process.
    let ret = unsafe { libc::kill(pid, sig) };
    if ret == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The parent's pid.
pub(crate) fn parent_pid() -> libc::pid_t {
    // SAFETY: getppid cannot fail and touches no memory.
    unsafe { libc::getppid() }
}

/// A resource limit numabench reads.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Rlimit {
    /// `RLIMIT_AS` (`ulimit -v`): the address space.
    AddressSpace,
    /// `RLIMIT_DATA` (`ulimit -d`): private writable memory, anonymous
    /// mappings included since Linux 4.7.
    Data,
}

static ARENAS_CAPPED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Under `RLIMIT_AS`, keeps glibc's malloc to one arena, before any thread
/// starts. Each further arena reserves 64 MiB of address space (128 MiB for
/// a moment, to align it), up to 8 per CPU: on a machine of many CPUs that
/// is gigabytes the limit counts though nothing uses them, and a buffer
/// sized to the headroom fails to map once the probe's threads have made
/// theirs. A reserve per CPU alone would leave little of a tight limit to
/// measure with; with one arena, what threads add is their stacks. Probes
/// map their buffers directly and allocate little on their threads, so the
/// shared arena's lock costs nothing measured. Other C libraries reserve no
/// arenas.
pub(crate) fn cap_malloc_arenas_under_rlimit_as() {
    #[cfg(target_env = "gnu")]
    if soft_rlimit(Rlimit::AddressSpace).is_some() {
        // SAFETY: mallopt only sets a tunable of the allocator.
        let ok = unsafe { libc::mallopt(libc::M_ARENA_MAX, 1) } == 1;
        ARENAS_CAPPED.store(ok, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Whether [`cap_malloc_arenas_under_rlimit_as`] kept malloc to one arena.
pub(crate) fn malloc_arenas_capped() -> bool {
    ARENAS_CAPPED.load(std::sync::atomic::Ordering::Relaxed)
}

/// The soft limit of `which`, `None` when unlimited or unknown.
pub(crate) fn soft_rlimit(which: Rlimit) -> Option<u64> {
    let resource = match which {
        Rlimit::AddressSpace => libc::RLIMIT_AS,
        Rlimit::Data => libc::RLIMIT_DATA,
    };
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one struct rlimit into `lim`, which lives on
    // this frame for the call.
    let ret = unsafe { libc::getrlimit(resource, &mut lim) };
    (ret == 0 && lim.rlim_cur != libc::RLIM_INFINITY).then_some(lim.rlim_cur)
}

/// This process's pid.
pub(crate) fn own_pid() -> libc::pid_t {
    // SAFETY: getpid cannot fail and touches no memory.
    unsafe { libc::getpid() }
}

/// `prctl(PR_SET_PDEATHSIG, SIGKILL)`: the kernel kills this process when
/// the thread that forked it exits.
pub(crate) fn die_with_parent() -> io::Result<()> {
    // SAFETY: PR_SET_PDEATHSIG reads only its integer argument.
    let ret = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) };
    if ret == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `prctl(PR_SET_NAME, name)` for the calling thread (the kernel keeps 15
/// bytes).
pub(crate) fn set_task_name(name: &str) {
    let mut buf = [0u8; 16];
    for (d, s) in buf
        .iter_mut()
        .zip(name.bytes().filter(|&b| b != 0).take(15))
    {
        *d = s;
    }
    // SAFETY: `buf` is NUL-terminated (its 16th byte stays 0) and outlives
    // the call; the kernel copies at most 16 bytes from it.
    unsafe { libc::prctl(libc::PR_SET_NAME, buf.as_ptr() as libc::c_ulong) };
}

/// Ends the calling process at once with `code`, running no destructors or
/// atexit handlers: a forked child must not flush buffers or unmap memory
/// that belong to its parent's copy of the program state.
pub(crate) fn exit_now(code: i32) -> ! {
    // SAFETY: _exit never returns and has no preconditions.
    unsafe { libc::_exit(code) }
}

/// User and system CPU seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct CpuTimes {
    pub user_s: f64,
    pub system_s: f64,
}

/// Whose CPU time [`cpu_times_of`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Whose {
    /// This process (`RUSAGE_SELF`).
    Own,
    /// Its children that have been waited for (`RUSAGE_CHILDREN`).
    Children,
}

/// CPU time of this process or of its waited-for children.
pub(crate) fn cpu_times_of(whose: Whose) -> CpuTimes {
    let who = match whose {
        Whose::Own => libc::RUSAGE_SELF,
        Whose::Children => libc::RUSAGE_CHILDREN,
    };
    // SAFETY: the kernel fills the rusage struct on this frame.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::getrusage(who, &mut ru) } != 0 {
        return CpuTimes::default();
    }
    let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    CpuTimes {
        user_s: secs(ru.ru_utime),
        system_s: secs(ru.ru_stime),
    }
}

/// CPU time of this process (`RUSAGE_SELF`) plus its waited-for children
/// (`RUSAGE_CHILDREN`).
pub(crate) fn cpu_times() -> CpuTimes {
    let (a, b) = (cpu_times_of(Whose::Own), cpu_times_of(Whose::Children));
    CpuTimes {
        user_s: a.user_s + b.user_s,
        system_s: a.system_s + b.system_s,
    }
}

/// CPU seconds the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`):
/// precise to the nanosecond, unlike the tick-split `rusage` figures, so a
/// few milliseconds of work between two readings show.
pub(crate) fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: the kernel writes one timespec, which lives on this frame.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_times_grow() {
        let a = cpu_times();
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        std::hint::black_box(x);
        let b = cpu_times();
        assert!(b.user_s + b.system_s > a.user_s + a.system_s);
    }
}
