//! The process-level system calls behind `numabench mem`: fork, wait, kill,
//! signal handlers, prctl, futexes on shared memory, rusage, shared and
//! private anonymous mappings and `memset` on memory other tasks use.
//!
//! Every `unsafe` block of the mem probe lives here, each in a small function
//! whose safe signature carries what the kernel or libc needs.

use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::time::Duration;

/// How a child process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildEnd {
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
pub fn thread_count() -> io::Result<usize> {
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
pub fn fork_single_threaded() -> io::Result<Option<libc::pid_t>> {
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
pub fn wait_child(pid: libc::pid_t, nohang: bool) -> io::Result<Option<ChildEnd>> {
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
pub fn kill(pid: libc::pid_t, sig: i32) -> io::Result<()> {
    // SAFETY: sending a signal has no memory effect in this process.
    let ret = unsafe { libc::kill(pid, sig) };
    if ret == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The parent's pid.
pub fn parent_pid() -> libc::pid_t {
    // SAFETY: getppid cannot fail and touches no memory.
    unsafe { libc::getppid() }
}

/// This process's pid.
pub fn own_pid() -> libc::pid_t {
    // SAFETY: getpid cannot fail and touches no memory.
    unsafe { libc::getpid() }
}

/// `prctl(PR_SET_PDEATHSIG, SIGKILL)`: the kernel kills this process when
/// the thread that forked it exits.
pub fn die_with_parent() -> io::Result<()> {
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
pub fn set_task_name(name: &str) {
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
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit never returns and has no preconditions.
    unsafe { libc::_exit(code) }
}

pub use crate::interrupt::{StopSignals, catch_stop_signals, child_signal_setup, stop_signals};

/// Waits while `word` holds `expected`, at most `timeout`; returns on a
/// wake, a timeout, a signal, or at once when the value already differs.
/// Works across processes for words in `MAP_SHARED` memory.
pub fn futex_wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
    let ts = timeout.map(|d| libc::timespec {
        tv_sec: d.as_secs().min(i64::MAX as u64) as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    });
    let ts_ptr = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `word` is a valid, aligned 32-bit atomic for the whole call;
    // FUTEX_WAIT only reads it (and compares with `expected`), and reads
    // the timespec on this frame. The shared (non-private) form is used
    // because waiters and wakers live in different processes.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            ts_ptr,
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

/// Wakes every waiter on `word`.
pub fn futex_wake_all(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE only uses the address as a key; nothing is read
    // or written through it.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE,
            i32::MAX,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

/// User and system CPU seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTimes {
    pub user_s: f64,
    pub system_s: f64,
}

/// Whose CPU time [`cpu_times_of`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whose {
    /// This process (`RUSAGE_SELF`).
    Own,
    /// Its children that have been waited for (`RUSAGE_CHILDREN`).
    Children,
}

/// CPU time of this process or of its waited-for children.
pub fn cpu_times_of(whose: Whose) -> CpuTimes {
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
pub fn cpu_times() -> CpuTimes {
    let (a, b) = (cpu_times_of(Whose::Own), cpu_times_of(Whose::Children));
    CpuTimes {
        user_s: a.user_s + b.user_s,
        system_s: a.system_s + b.system_s,
    }
}

/// CPU seconds the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`):
/// precise to the nanosecond, unlike the tick-split `rusage` figures, so a
/// few milliseconds of work between two readings show.
pub fn thread_cpu_s() -> f64 {
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

/// An anonymous mapping used as `u64` words by several threads or (when
/// shared) processes at once. All Rust access goes through atomics; bulk
/// clearing goes through libc's `memset`, as the workload asks.
pub struct Region {
    base: NonNull<u8>,
    map_len: usize,
    offset: usize,
    len: usize,
}

// SAFETY: the region is plain memory that is only ever accessed through
// atomics (`words`, `u32s`) or `memset` of whole words (`zero`), so sharing
// `&Region` between threads introduces no non-atomic Rust access; moving it
// moves ownership of the mapping.
unsafe impl Send for Region {}
// SAFETY: as above.
unsafe impl Sync for Region {}

impl Region {
    /// Maps `len` bytes (plus `align` bytes of slack when `align` > 0) and
    /// starts the usable part at the next multiple of `align`, as perf does
    /// for its 2 MiB-aligned buffers. `shared` maps `MAP_SHARED` (children
    /// forked later see the same memory), else `MAP_PRIVATE`. The memory
    /// reads as zero.
    pub fn map(len: usize, shared: bool, align: usize) -> io::Result<Region> {
        let flags = if shared {
            libc::MAP_SHARED
        } else {
            libc::MAP_PRIVATE
        };
        let map_len = len
            .checked_add(align)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?
            .max(1);
        let m = crate::placement::sys::map_anonymous(map_len, flags)?;
        let start = m.ptr.as_ptr() as usize;
        let aligned = if align > 0 {
            start.next_multiple_of(align)
        } else {
            start
        };
        Ok(Region {
            base: m.ptr,
            map_len: m.len,
            offset: aligned - start,
            len,
        })
    }

    /// Address of the whole mapping (for madvise) and its length.
    pub fn mapping(&self) -> (usize, usize) {
        (self.base.as_ptr() as usize, self.map_len)
    }

    /// Address of the usable, aligned part.
    pub fn addr(&self) -> usize {
        self.base.as_ptr() as usize + self.offset
    }

    /// Usable bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The usable part as `len / 8` atomic words.
    pub fn words(&self) -> &[AtomicU64] {
        // SAFETY: `addr()..addr()+len` lies inside the mapping, which stays
        // mapped while `&self` lives; the address is page aligned plus a
        // multiple of the alignment, so 8-byte aligned; every bit pattern is
        // a valid AtomicU64, and AtomicU64 permits shared mutation.
        unsafe { std::slice::from_raw_parts(self.addr() as *const AtomicU64, self.len / 8) }
    }

    /// The first `n` 32-bit words as atomics. Callers keep the 32-bit and
    /// 64-bit views on disjoint byte ranges.
    pub fn u32s(&self, n: usize) -> &[AtomicU32] {
        assert!(n * 4 <= self.len, "u32 view beyond the region");
        // SAFETY: as for `words`, with 4-byte alignment and `n * 4 <= len`.
        unsafe { std::slice::from_raw_parts(self.addr() as *const AtomicU32, n) }
    }

    /// Writes `off`, `off + 1`, ... over the usable words (perf's `-I`
    /// contents), which also faults every page in from the calling thread.
    pub fn fill_counting(&mut self, off: u64) {
        let n = self.len / 8;
        // SAFETY: the words lie inside the mapping and are 8-byte aligned;
        // `&mut self` means no view of this region exists in this process,
        // and callers fill a region before any other process can see it
        // (private memory, or shared memory before the fork).
        let w = unsafe { std::slice::from_raw_parts_mut(self.addr() as *mut u64, n) };
        for (i, x) in w.iter_mut().enumerate() {
            *x = off.wrapping_add(i as u64);
        }
    }

    /// Zeroes words `start..start+n` with libc's `memset`, as perf's
    /// `bzero` does.
    pub fn zero(&self, start: usize, n: usize) {
        let words = self.len / 8;
        assert!(
            start <= words && n <= words - start,
            "zero beyond the region"
        );
        // SAFETY: the range lies inside the mapping (checked above) and stays
        // mapped while `&self` lives. Rust code only ever reads this memory
        // through atomics and treats any bit pattern as valid, so no Rust
        // value's invariant depends on the bytes memset writes. Other tasks
        // may write the same words concurrently, exactly as the workload
        // perf defines does; the result is some interleaving of whole-word
        // stores, which the benchmark neither reads back nor relies on.
        unsafe {
            libc::memset((self.addr() + start * 8) as *mut libc::c_void, 0, n * 8);
        }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: the mapping is owned by this Region; every view borrowed
        // from it has ended (they borrow `self`), and it is not used again.
        let _ = unsafe { crate::placement::sys::unmap(self.base.as_ptr(), self.map_len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn region_is_aligned_zeroed_and_clearable() {
        let r = Region::map(4 << 20, false, 2 << 20).unwrap();
        assert_eq!(r.addr() % (2 << 20), 0);
        assert_eq!(r.words().len(), (4 << 20) / 8);
        assert!(r.words().iter().all(|w| w.load(Ordering::Relaxed) == 0));
        for w in r.words() {
            w.store(7, Ordering::Relaxed);
        }
        r.zero(10, 20);
        let w = r.words();
        assert_eq!(w[9].load(Ordering::Relaxed), 7);
        assert_eq!(w[10].load(Ordering::Relaxed), 0);
        assert_eq!(w[29].load(Ordering::Relaxed), 0);
        assert_eq!(w[30].load(Ordering::Relaxed), 7);
    }

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

    #[test]
    fn futex_wait_times_out_and_returns_on_changed_value() {
        let word = AtomicU32::new(1);
        let t = std::time::Instant::now();
        futex_wait(&word, 1, Some(Duration::from_millis(20)));
        assert!(t.elapsed() >= Duration::from_millis(15));
        let t = std::time::Instant::now();
        futex_wait(&word, 2, Some(Duration::from_secs(5)));
        assert!(t.elapsed() < Duration::from_secs(1));
    }
}
