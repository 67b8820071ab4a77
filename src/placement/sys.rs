//! The raw system calls behind placement, the error they share, and the node
//! files of the running kernel.
//!
//! glibc has no wrappers for the NUMA calls (libnuma provides them), and its
//! `cpu_set_t` stops at 1024 CPUs, so everything here goes through
//! `libc::syscall` with masks sized from the machine. All `unsafe` code of
//! placement lives in this file, each block in a small function whose safe
//! signature carries the invariant the kernel needs; mappings themselves
//! are made in [`crate::sys::mmap`].

use crate::ids::NodeSet;
use std::ffi::c_void;
use std::io;
use std::sync::OnceLock;

pub(crate) const MPOL_DEFAULT: i32 = libc::MPOL_DEFAULT;
pub(crate) const MPOL_PREFERRED: i32 = libc::MPOL_PREFERRED;
pub(crate) const MPOL_BIND: i32 = libc::MPOL_BIND;
pub(crate) const MPOL_INTERLEAVE: i32 = libc::MPOL_INTERLEAVE;
pub(crate) const MPOL_LOCAL: i32 = libc::MPOL_LOCAL;
/// Linux 5.15+.
pub(crate) const MPOL_PREFERRED_MANY: i32 = 5;
/// Linux 6.9+.
pub(crate) const MPOL_WEIGHTED_INTERLEAVE: i32 = 6;

/// The mode word of `get_mempolicy` carries these flags above the mode.
pub(crate) const MPOL_MODE_FLAGS: i32 = (1 << 15) | (1 << 14) | (1 << 13);

#[cfg(test)]
pub(crate) const MPOL_F_NODE: u32 = 1 << 0;
#[cfg(test)]
pub(crate) const MPOL_F_ADDR: u32 = 1 << 1;

pub(crate) const MPOL_MF_STRICT: u32 = 1 << 0;
pub(crate) const MPOL_MF_MOVE: u32 = 1 << 1;

/// Where the kernel describes its NUMA nodes.
pub(crate) const NODE_SYSFS: &str = "/sys/devices/system/node";

/// A placement system call that failed: which call, with what, the errno, and
/// when the cause can be read from the machine, what to do about it.
///
/// Displays as one line, e.g. `mbind(len=1 GiB, policy=bind:3) failed:
/// Invalid argument (os error 22); hint: node 3 is not online (online nodes:
/// 0-1)`. The errno is part of the message rather than a `source`, so a
/// context chain does not print it twice.
#[derive(Debug, thiserror::Error)]
#[error("{call}({args}) failed: {errno}{}", hint_suffix(.hint))]
pub(crate) struct PlacementError {
    pub call: &'static str,
    pub args: String,
    pub errno: io::Error,
    pub hint: Option<String>,
}

fn hint_suffix(hint: &Option<String>) -> String {
    hint.as_ref()
        .map(|h| format!("; hint: {h}"))
        .unwrap_or_default()
}

impl PlacementError {
    pub(crate) fn new(call: &'static str, args: impl Into<String>, errno: io::Error) -> Self {
        Self {
            call,
            args: args.into(),
            errno,
            hint: None,
        }
    }

    pub(crate) fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// The errno, or `None` for a failure found by checking a result (such as
    /// a thread still running on the wrong CPU).
    pub(crate) fn raw_os_error(&self) -> Option<i32> {
        self.errno.raw_os_error()
    }
}

fn read_node_list(name: &str) -> Option<NodeSet> {
    let text = std::fs::read_to_string(format!("{NODE_SYSFS}/{name}")).ok()?;
    NodeSet::parse_list(&text).ok()
}

/// Nodes the running kernel could ever bring online. A kernel built without
/// NUMA has no node directory and behaves as one node 0.
pub(crate) fn possible_nodes() -> NodeSet {
    // Fixed at boot, and every mbind needs it.
    static POSSIBLE: OnceLock<NodeSet> = OnceLock::new();
    POSSIBLE
        .get_or_init(|| read_node_list("possible").unwrap_or_else(|| NodeSet::from_ids([0])))
        .clone()
}

/// Nodes online now (re-read on each call, as nodes can be hot-plugged).
pub(crate) fn online_nodes() -> NodeSet {
    read_node_list("online").unwrap_or_else(|| NodeSet::from_ids([0]))
}

/// Online nodes that have memory; CPU-only nodes are online but cannot hold
/// pages.
pub(crate) fn nodes_with_memory() -> NodeSet {
    read_node_list("has_memory").unwrap_or_else(online_nodes)
}

/// The nodes this process's cpuset allows (`Mems_allowed_list`), if readable.
pub(crate) fn mems_allowed() -> Option<NodeSet> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("Mems_allowed_list:"))?;
    NodeSet::parse_list(line).ok()
}

/// 64-bit words in a nodemask for this kernel: enough for every possible
/// node, at least one.
pub(crate) fn nodemask_words() -> usize {
    possible_nodes().end().div_ceil(64).max(1)
}

/// The kernel release, e.g. `6.1.0-18-amd64`, for messages.
pub(crate) fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// Turns a `syscall` return into a result, reading errno on -1.
fn check(ret: libc::c_long) -> io::Result<libc::c_long> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// `maxnode` for a mask of `words` words. The kernel reads `maxnode - 1`
/// bits, so one more than the mask holds, as libnuma passes.
fn maxnode(words: usize) -> libc::c_ulong {
    (words * 64 + 1) as libc::c_ulong
}

/// `mbind(addr, len, mode, mask, maxnode, flags)`.
///
/// Safe to expose: a policy changes only where future pages come from, and
/// `MPOL_MF_MOVE` migrates pages with their contents, so no memory that Rust
/// code can see changes value.
pub(crate) fn mbind(
    addr: usize,
    len: usize,
    mode: i32,
    mask: &[u64],
    flags: u32,
) -> io::Result<()> {
    let (ptr, words) = if mask.is_empty() {
        (std::ptr::null(), 0)
    } else {
        (mask.as_ptr(), mask.len())
    };
    // SAFETY: the kernel reads `words` u64 words from `ptr` (maxnode - 1
    // bits rounded up to longs), all inside `mask`; a null mask with
    // maxnode 0 reads nothing.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            addr,
            len,
            mode as libc::c_ulong,
            ptr,
            if words == 0 { 0 } else { maxnode(words) },
            flags as libc::c_ulong,
        )
    };
    check(ret).map(drop)
}

/// `set_mempolicy(mode, mask, maxnode)` for the calling thread; an empty mask
/// is passed as NULL.
pub(crate) fn set_mempolicy(mode: i32, mask: &[u64]) -> io::Result<()> {
    let (ptr, nodes) = if mask.is_empty() {
        (std::ptr::null(), 0)
    } else {
        (mask.as_ptr(), maxnode(mask.len()))
    };
    // SAFETY: the kernel reads at most `mask.len()` words from `ptr`, or
    // nothing when it is null and maxnode is 0.
    let ret = unsafe { libc::syscall(libc::SYS_set_mempolicy, mode, ptr, nodes) };
    check(ret).map(drop)
}

/// `get_mempolicy(&mode, mask, maxnode, addr, flags)`. With an empty `mask`
/// no nodes are returned.
pub(crate) fn get_mempolicy(mask: &mut [u64], addr: usize, flags: u32) -> io::Result<i32> {
    let mut mode: libc::c_int = 0;
    let (ptr, nodes) = if mask.is_empty() {
        (std::ptr::null_mut(), 0)
    } else {
        (mask.as_mut_ptr(), maxnode(mask.len()))
    };
    // SAFETY: the kernel writes one int to `mode` and at most `mask.len()`
    // words to `ptr` (it copies ALIGN(maxnode - 1, 64) bits). With
    // MPOL_F_ADDR it only looks up `addr` in this process's page tables,
    // faulting the page in if needed, which does not change its contents.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            &mut mode as *mut libc::c_int,
            ptr,
            nodes,
            addr,
            flags as libc::c_ulong,
        )
    };
    check(ret).map(|_| mode)
}

/// `move_pages(0, n, pages, nodes, status, flags)` on this process.
///
/// With `nodes` = `None` it only reports where each page is; otherwise it
/// migrates each page to its node. Returns how many pages were not migrated.
/// Migration keeps contents, so this is safe for any addresses.
#[cfg(test)]
pub(crate) fn move_pages(
    pages: &[usize],
    nodes: Option<&[i32]>,
    status: &mut [i32],
    flags: u32,
) -> io::Result<usize> {
    move_pages_of(0, pages, nodes, status, flags)
}

/// `move_pages` on process `pid` (0: this one). The kernel allows it where
/// this process may read the other's memory (ptrace read access: its own
/// children, same user); pages of another process are only ever read or
/// moved with their contents, never changed.
pub(crate) fn move_pages_of(
    pid: libc::pid_t,
    pages: &[usize],
    nodes: Option<&[i32]>,
    status: &mut [i32],
    flags: u32,
) -> io::Result<usize> {
    assert_eq!(pages.len(), status.len(), "one status per page");
    if let Some(n) = nodes {
        assert_eq!(n.len(), pages.len(), "one target node per page");
    }
    let nodes_ptr = nodes.map_or(std::ptr::null(), |n| n.as_ptr());
    // SAFETY: `pages`, `nodes` and `status` each hold `pages.len()` elements
    // (checked above); the kernel reads the first two and writes the third.
    // `usize` has the layout of `void *` on Linux.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_move_pages,
            pid,
            pages.len() as libc::c_ulong,
            pages.as_ptr() as *const *const c_void,
            nodes_ptr,
            status.as_mut_ptr(),
            flags as libc::c_int,
        )
    };
    check(ret).map(|n| n as usize)
}

/// Whether this kernel has the memory-policy calls. One built without NUMA
/// (`CONFIG_NUMA` off, as on some small Arm boards and minimal guests)
/// answers `mbind`, `set_mempolicy`, `get_mempolicy` and `move_pages` with
/// ENOSYS; node 0 is then the only node and holds every page. The calls
/// count as missing only where node 0 is the only online node too: on a
/// machine with more, a filter that answers ENOSYS is hiding them, and
/// their errors must reach the user.
pub(crate) fn kernel_has_numa() -> bool {
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        let missing =
            get_mempolicy(&mut [], 0, 0).map_err(|e| e.raw_os_error()) == Err(Some(libc::ENOSYS));
        !(missing && online_nodes() == NodeSet::from_ids([0]))
    })
}

/// Where each page is on a kernel without NUMA, in `move_pages`' terms,
/// into `status` (one per address): 0 (node 0, the only one) for a page
/// `mincore` finds resident, `-ENOENT` for one not resident, `-EFAULT` for
/// an address not mapped. Each address stands for the base page that holds
/// it. One difference: a page only ever read maps the shared zero page,
/// which `mincore` counts resident where `move_pages` says `-EFAULT`; the
/// buffers numabench checks are written first.
pub(crate) fn residency(addrs: &[usize], status: &mut [i32]) {
    assert_eq!(addrs.len(), status.len(), "one status per page");
    let page = crate::sys::mmap::base_page_size();
    let mut i = 0;
    while i < addrs.len() {
        // One call for each run of addresses a page apart.
        let first = addrs[i] - addrs[i] % page;
        let mut n = 1;
        while i + n < addrs.len() && addrs[i + n] - addrs[i + n] % page == first + n * page {
            n += 1;
        }
        let out = &mut status[i..i + n];
        if mincore(first, out).is_err() {
            // A hole in the run: page by page, each unmapped one -EFAULT.
            for (k, s) in out.iter_mut().enumerate() {
                if mincore(first + k * page, std::slice::from_mut(s)).is_err() {
                    *s = -libc::EFAULT;
                }
            }
        }
        i += n;
    }
}

/// `mincore` over `status.len()` pages from the page-aligned `addr`: each
/// status 0 (resident) or -ENOENT.
fn mincore(addr: usize, status: &mut [i32]) -> io::Result<()> {
    let page = crate::sys::mmap::base_page_size();
    let mut vec = vec![0u8; status.len()];
    // SAFETY: mincore only reads this process's page tables for the
    // `status.len()` pages from `addr` and writes one byte per page into
    // `vec`, which holds that many; an unmapped page is an error (ENOMEM),
    // not a fault.
    let ret = unsafe {
        libc::mincore(
            addr as *mut c_void,
            status.len() * page,
            vec.as_mut_ptr() as *mut libc::c_uchar,
        )
    };
    if ret != 0 {
        return Err(io::Error::last_os_error());
    }
    for (s, v) in status.iter_mut().zip(vec) {
        *s = if v & 1 == 1 { 0 } else { -libc::ENOENT };
    }
    Ok(())
}

/// Raw `sched_setaffinity(0, bytes, mask)` for the calling thread, free of
/// `cpu_set_t`'s 1024-CPU limit.
pub(crate) fn sched_setaffinity(mask: &[u64]) -> io::Result<()> {
    // SAFETY: the kernel reads `mask.len() * 8` bytes from the mask.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_sched_setaffinity,
            0 as libc::pid_t,
            std::mem::size_of_val(mask),
            mask.as_ptr(),
        )
    };
    check(ret).map(drop)
}

/// Raw `sched_getaffinity(0, bytes, mask)`; returns the bytes written. Fails
/// with EINVAL when the mask is smaller than the kernel's CPU count.
pub(crate) fn sched_getaffinity(mask: &mut [u64]) -> io::Result<usize> {
    // SAFETY: the kernel writes at most `mask.len() * 8` bytes to the mask.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_sched_getaffinity,
            0 as libc::pid_t,
            std::mem::size_of_val(mask),
            mask.as_mut_ptr(),
        )
    };
    check(ret).map(|n| n as usize)
}

/// The CPU and node the calling thread is running on now.
pub(crate) fn getcpu() -> io::Result<(usize, usize)> {
    let mut cpu: libc::c_uint = 0;
    let mut node: libc::c_uint = 0;
    // SAFETY: the kernel writes one unsigned int to each pointer; the third
    // argument (an unused cache) may be null.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_getcpu,
            &mut cpu as *mut libc::c_uint,
            &mut node as *mut libc::c_uint,
            std::ptr::null_mut::<c_void>(),
        )
    };
    check(ret).map(|_| (cpu as usize, node as usize))
}

/// The CPU the calling thread is running on (the vDSO, so cheap enough for
/// loops). Falls back to the `getcpu` syscall if the library call fails.
pub(crate) fn sched_getcpu() -> io::Result<usize> {
    // SAFETY: no arguments, no memory effects.
    let cpu = unsafe { libc::sched_getcpu() };
    match usize::try_from(cpu) {
        Ok(c) => Ok(c),
        Err(_) => getcpu().map(|(c, _)| c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn residency_agrees_with_move_pages() {
        let page = crate::sys::mmap::base_page_size();
        let mut v = vec![0u8; 64 * page];
        let start = (v.as_ptr() as usize).next_multiple_of(page);
        // Touch every other page of the page-aligned part.
        let base = start - v.as_ptr() as usize;
        for i in (0..62).step_by(2) {
            v[base + i * page] = 1;
        }
        let addrs: Vec<usize> = (0..62).map(|i| start + i * page).collect();
        let mut by_mincore = vec![0; addrs.len()];
        residency(&addrs, &mut by_mincore);
        for i in (0..62).step_by(2) {
            assert_eq!(by_mincore[i], 0, "a touched page is resident");
        }
        if kernel_has_numa() {
            let mut status = vec![0; addrs.len()];
            move_pages(&addrs, None, &mut status, 0).unwrap();
            let present = |s: i32| s >= 0;
            for (i, (&m, &k)) in by_mincore.iter().zip(&status).enumerate() {
                assert_eq!(
                    present(m),
                    present(k),
                    "page {i}: mincore {m}, move_pages {k}"
                );
            }
        }
        // A run with a hole in it: the hole is unmapped, its neighbours not.
        // SAFETY: a fresh private anonymous mapping of three pages, written
        // and unmapped only here, never used as Rust memory.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                3 * page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            ) as usize;
            assert_ne!(p, libc::MAP_FAILED as usize);
            *(p as *mut u8) = 1;
            assert_eq!(libc::munmap((p + page) as *mut c_void, page), 0);
            let mut run = [7; 3];
            residency(&[p, p + page, p + 2 * page], &mut run);
            assert_eq!(run, [0, -libc::EFAULT, -libc::ENOENT]);
            libc::munmap(p as *mut c_void, page);
            libc::munmap((p + 2 * page) as *mut c_void, page);
        }
        // An address nobody mapped reads as unmapped.
        let mut unmapped = [0];
        residency(&[page], &mut unmapped);
        assert_eq!(unmapped, [-libc::EFAULT]);
        std::hint::black_box(&v);
    }

    #[test]
    fn node_files_of_this_kernel() {
        let possible = possible_nodes();
        let online = online_nodes();
        assert!(!possible.is_empty());
        assert!(online.is_subset(&possible), "{online} vs {possible}");
        assert!(nodes_with_memory().is_subset(&online));
        assert!(nodemask_words() >= 1);
        assert_eq!(nodemask_words(), possible.end().div_ceil(64).max(1));
    }

    #[test]
    fn error_display_is_one_line_with_hint() {
        let e = PlacementError::new(
            "mbind",
            "len=1 GiB, policy=bind:3",
            io::Error::from_raw_os_error(libc::EINVAL),
        )
        .with_hint("node 3 is not online (online nodes: 0-1)");
        assert_eq!(
            e.to_string(),
            "mbind(len=1 GiB, policy=bind:3) failed: Invalid argument (os error 22); \
             hint: node 3 is not online (online nodes: 0-1)"
        );
        assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    }

    #[test]
    fn getcpu_agrees_with_affinity() {
        let (cpu, node) = getcpu().unwrap();
        assert!(possible_nodes().contains(node));
        let mut mask = vec![0u64; 1024];
        sched_getaffinity(&mut mask).unwrap();
        // The thread may migrate between the two calls, but only within its mask.
        assert!(crate::ids::CpuSet::from_words(&mask).contains(cpu));
    }
}
