//! Benchmark buffers: anonymous mappings with a chosen page size and memory
//! policy, placed by a first touch from the calling thread, that can report
//! where their pages ended up.
//!
//! Order matters for placement. The policy is applied with `mbind` right
//! after `mmap`, before any page exists; then the caller's thread (pinned
//! beforehand by the caller) writes every page. Pages written before the
//! policy would stay wherever they were first placed.

use super::fill::{Fill, fill_pattern};
use super::page_kind::{MIB2, PageKind};
use crate::ids::NodeSet;
use crate::placement::pages::{self, PageHistogram};
use crate::placement::sys::{self, PlacementError};
use crate::placement::{MbindFlags, MemPolicy};
use crate::procfs::smaps;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU64;

/// Every buffer starts on a 2 MiB boundary, so THP can back it from the
/// first byte and results do not depend on where the allocator happened to
/// put it.
pub(crate) const ALIGN: usize = 2 << 20;

/// The most pages [`Buffer::verify`] asks about; larger buffers are sampled
/// (1 GiB of 4 KiB pages is checked in full).
pub(crate) const VERIFY_MAX_PAGES: usize = 256 * 1024;

const THP_ENABLED: &str = "/sys/kernel/mm/transparent_hugepage/enabled";
const THP_SHMEM_ENABLED: &str = "/sys/kernel/mm/transparent_hugepage/shmem_enabled";

/// How to build a [`Buffer`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BufferOptions {
    /// Bytes requested; the mapping is rounded up to whole pages.
    pub len: usize,
    /// `MAP_SHARED`: children forked later see the same memory.
    pub shared: bool,
    pub pages: PageKind,
    /// Applied with `mbind` before the first touch; `None` leaves the
    /// thread's policy in charge.
    pub node_policy: Option<MemPolicy>,
    /// Write every page at creation, from the calling thread.
    pub touch: bool,
    pub fill: Fill,
}

impl BufferOptions {
    /// A private, touched buffer on transparent huge pages with the
    /// default pattern and no policy of its own.
    pub(crate) fn new(len: usize) -> Self {
        Self {
            len,
            shared: false,
            pages: PageKind::Thp,
            node_policy: None,
            touch: true,
            fill: Fill::default(),
        }
    }

    #[cfg(test)]
    pub(crate) fn shared(mut self, shared: bool) -> Self {
        self.shared = shared;
        self
    }

    pub(crate) fn pages(mut self, pages: PageKind) -> Self {
        self.pages = pages;
        self
    }

    pub(crate) fn policy(mut self, policy: MemPolicy) -> Self {
        self.node_policy = Some(policy);
        self
    }

    pub(crate) fn touch(mut self, touch: bool) -> Self {
        self.touch = touch;
        self
    }
}

/// Where a buffer's pages are, from [`Buffer::verify`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Placement {
    /// Checked pages per node (a sample when `pages_checked < pages_total`).
    pub pages_by_node: BTreeMap<usize, u64>,
    /// Percent of present checked pages on the nodes the policy targets, or
    /// for `default`/`local`, on the node of the CPU that touched the buffer;
    /// `None` when there is no target or no page is present.
    pub on_target_pct: Option<f64>,
    /// Percent of the mapping backed by huge pages.
    pub huge_pct: f64,
    /// Pages whose node was asked of the kernel.
    pub pages_checked: u64,
    /// Pages in the buffer.
    pub pages_total: u64,
}

/// An anonymous mapping, 2 MiB aligned, unmapped on drop.
#[derive(Debug)]
pub(crate) struct Buffer {
    ptr: NonNull<u8>,
    len: usize,
    map_len: usize,
    guard: usize,
    #[cfg(test)]
    shared: bool,
    #[cfg(test)]
    requested: PageKind,
    used: PageKind,
    page_size: usize,
    fallback: Option<String>,
    policy: Option<MemPolicy>,
    touched_node: Option<usize>,
}

// SAFETY: a Buffer owns its mapping exclusively, like a Box<[u8]>: moving it
// to another thread moves that ownership, and `&Buffer` only allows reads.
unsafe impl Send for Buffer {}
// SAFETY: as above; mutation needs `&mut Buffer`.
unsafe impl Sync for Buffer {}

/// Integer types any bit pattern is valid for, so mapped memory can be
/// viewed as a slice of them.
pub(crate) trait Word: Copy + sealed::Sealed {}

mod sealed {
    pub(crate) trait Sealed {}
}

macro_rules! words {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Word for $t {}
    )*};
}
words!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize
);

/// A buffer seen only as 64-bit atomics: memory that threads share while
/// they run (cache lines handed between CPUs). It owns the buffer, so no
/// plain view of the same memory can exist beside the atomic one.
#[derive(Debug)]
pub(crate) struct AtomicWords {
    buf: Buffer,
}

impl AtomicWords {
    pub(crate) fn new(buf: Buffer) -> Self {
        AtomicWords { buf }
    }

    /// The words, `len / 8` of them.
    pub(crate) fn words(&self) -> &[AtomicU64] {
        let n = self.buf.len / std::mem::size_of::<AtomicU64>();
        // SAFETY: AtomicU64 has the size, alignment and bit validity of
        // u64, and the mapping is readable and writable for map_len >= len
        // bytes, 4 KiB aligned, for as long as `&self` keeps the Buffer.
        // Every access to the memory goes through this view (the Buffer is
        // private and never lent out), and every such access is atomic, so
        // threads sharing `&self` do not race.
        unsafe { std::slice::from_raw_parts(self.buf.ptr.as_ptr().cast::<AtomicU64>(), n) }
    }

    /// Where the pages are; see [`Buffer::verify`].
    pub(crate) fn verify(&self) -> Result<Placement, PlacementError> {
        self.buf.verify()
    }
}

/// A mapping made, not yet owned by a Buffer.
struct Mapped {
    mapping: crate::sys::mmap::Mapping,
    /// `PROT_NONE` bytes mapped on each side of `mapping`.
    guard: usize,
    used: PageKind,
    page_size: usize,
}

impl Buffer {
    /// Maps, binds and (if asked) touches a buffer.
    ///
    /// Huge pages fall back rather than fail: hugetlb → THP → base pages,
    /// with the reason kept in [`Buffer::fallback_reason`] and the kind used
    /// in [`Buffer::page_kind`]. A policy that cannot be applied is an error.
    pub(crate) fn new(opts: &BufferOptions) -> Result<Buffer, PlacementError> {
        if opts.len == 0 {
            return Err(PlacementError::new(
                "mmap",
                "len=0",
                io::Error::from_raw_os_error(libc::EINVAL),
            )
            .with_hint("a buffer needs at least one byte"));
        }
        let mut reasons = Vec::new();
        let mapped = map_with_fallback(opts, &mut reasons)?;
        let mut buf = Buffer {
            ptr: mapped.mapping.ptr,
            len: opts.len,
            map_len: mapped.mapping.len,
            guard: mapped.guard,
            #[cfg(test)]
            shared: opts.shared,
            #[cfg(test)]
            requested: opts.pages,
            used: mapped.used,
            page_size: mapped.page_size,
            fallback: (!reasons.is_empty()).then(|| reasons.join("; ")),
            policy: None,
            touched_node: None,
        };
        if let Some(policy) = &opts.node_policy {
            // On error `buf` drops here and unmaps.
            let applied = crate::placement::bind_range(
                buf.addr(),
                buf.map_len,
                policy,
                MbindFlags::default(),
            )?;
            buf.policy = Some(applied);
        }
        if opts.touch {
            buf.fill(opts.fill);
        }
        Ok(buf)
    }

    /// Writes `fill` over the buffer from the calling thread, placing any
    /// pages not yet present, and records the node this thread runs on.
    pub(crate) fn fill(&mut self, fill: Fill) {
        self.touched_node = sys::getcpu().ok().map(|(_, node)| node);
        match fill {
            Fill::Pattern { seed } => fill_pattern(self.as_mut_slice::<u64>(), seed, 0),
            #[cfg(test)]
            Fill::FirstWordPerPage => {
                let step = crate::sys::mmap::base_page_size() / 8;
                let words = self.as_mut_slice::<u64>();
                let seed = std::hint::black_box(super::fill::DEFAULT_SEED);
                for (i, w) in words.iter_mut().step_by(step).enumerate() {
                    *w = super::fill::pattern_word(seed, i as u64);
                }
                std::hint::black_box(words);
            }
        }
    }

    pub(crate) fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// The start address, for system calls and messages.
    pub(crate) fn addr(&self) -> usize {
        self.ptr.as_ptr() as usize
    }

    /// The requested length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The mapped length: `len` rounded up to whole pages of the kind used.
    pub(crate) fn mapped_len(&self) -> usize {
        self.map_len
    }

    /// The buffer as `len / size_of::<T>()` elements. For a shared buffer,
    /// a forked child writing meanwhile changes what the slice shows; read
    /// such memory through raw pointers or atomics while children run.
    pub(crate) fn as_slice<T: Word>(&self) -> &[T] {
        let n = self.len / std::mem::size_of::<T>();
        // SAFETY: the mapping is readable for map_len >= len bytes, aligned
        // to at least 4 KiB (more than any Word's alignment), every bit
        // pattern is a valid Word, and `&self` keeps it mapped.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().cast::<T>(), n) }
    }

    /// The buffer as mutable `T`s; see [`Buffer::as_slice`].
    pub(crate) fn as_mut_slice<T: Word>(&mut self) -> &mut [T] {
        let n = self.len / std::mem::size_of::<T>();
        // SAFETY: as for `as_slice`, and `&mut self` makes the view unique
        // within this process.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().cast::<T>(), n) }
    }

    /// The page size in use: the hugetlb size for hugetlb buffers, the base
    /// page size otherwise (THP coverage is reported by
    /// [`Placement::huge_pct`], as the kernel may back any part with base
    /// pages).
    pub(crate) fn page_size(&self) -> usize {
        self.page_size
    }

    /// The page kind asked for.
    #[cfg(test)]
    pub(crate) fn requested_pages(&self) -> PageKind {
        self.requested
    }

    /// The page kind used: never `Auto`.
    pub(crate) fn page_kind(&self) -> PageKind {
        self.used
    }

    /// Why the page kind used differs from the one requested (or why THP
    /// cannot help), if it does.
    pub(crate) fn fallback_reason(&self) -> Option<&str> {
        self.fallback.as_deref()
    }

    /// The policy applied to the range, which may differ from the one asked
    /// for (see [`crate::placement::bind_range`]).
    pub(crate) fn policy(&self) -> Option<&MemPolicy> {
        self.policy.as_ref()
    }

    #[cfg(test)]
    pub(crate) fn is_shared(&self) -> bool {
        self.shared
    }

    /// The node of the CPU that last filled the buffer.
    #[cfg(test)]
    pub(crate) fn touched_node(&self) -> Option<usize> {
        self.touched_node
    }

    /// Where the pages are, checking at most [`VERIFY_MAX_PAGES`] pages.
    pub(crate) fn verify(&self) -> Result<Placement, PlacementError> {
        self.verify_sampled(VERIFY_MAX_PAGES)
    }

    /// Where the pages are, checking at most `max_pages` pages spread over
    /// the buffer (see [`pages::page_nodes_sampled`]).
    pub(crate) fn verify_sampled(&self, max_pages: usize) -> Result<Placement, PlacementError> {
        let sample = pages::page_nodes_sampled(self.addr(), self.len, self.page_size, max_pages)?;
        let hist: PageHistogram = sample.histogram();
        let target = match self.policy.as_ref().and_then(MemPolicy::target_nodes) {
            Some(nodes) => Some(nodes),
            None => self.touched_node.map(|n| NodeSet::from_ids([n])),
        };
        let on_target_pct = target.and_then(|t| hist.on_nodes_pct(&t));
        let huge_pct = match self.used {
            PageKind::HugeTlb(_) => 100.0,
            _ => {
                let start = self.addr() as u64;
                let huge = smaps::self_huge_bytes(start, start + self.map_len as u64);
                (huge as f64 * 100.0 / self.map_len as f64).min(100.0)
            }
        };
        Ok(Placement {
            pages_by_node: hist.by_node,
            on_target_pct,
            huge_pct,
            pages_checked: sample.status.len() as u64,
            pages_total: sample.pages_total,
        })
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: the mapping and its guards are owned by this Buffer, every
        // slice borrowed from it has ended (they borrow `self`), and it is never used again.
        let result = unsafe {
            crate::sys::mmap::unmap(
                self.ptr.as_ptr().wrapping_sub(self.guard),
                self.map_len + 2 * self.guard,
            )
        };
        debug_assert!(result.is_ok(), "munmap failed: {result:?}");
    }
}

/// The first value in brackets of a sysfs selector such as
/// `always [madvise] never`.
fn selected(path: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let start = text.find('[')? + 1;
    let end = start + text[start..].find(']')?;
    Some(text[start..end].to_string())
}

fn hugetlb_dir(size: usize) -> String {
    format!("/sys/kernel/mm/hugepages/hugepages-{}kB", size >> 10)
}

fn read_count(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Free hugetlb pages of `size` on each of `nodes`.
fn node_free_huge(size: usize, nodes: &NodeSet) -> u64 {
    nodes
        .iter()
        .map(|n| {
            read_count(&format!(
                "{}/node{n}/hugepages/hugepages-{}kB/free_hugepages",
                sys::NODE_SYSFS,
                size >> 10
            ))
            .unwrap_or(0)
        })
        .sum()
}

/// mmap at an [`ALIGN`] boundary, with `guard` bytes of `PROT_NONE` on
/// each side when `guard` is non-zero.
///
/// The guards keep the kernel from merging the buffer with a neighbouring
/// mapping of the same flags (such as the previous buffer), which would make
/// smaps report their huge pages together, and turn an overrun by a probe
/// into a fault instead of silent corruption. Hugetlb mappings cannot be
/// split at base-page granularity, so they get no guards; they are aligned
/// by the kernel.
fn map_aligned(map_len: usize, flags: i32, guard: usize) -> io::Result<crate::sys::mmap::Mapping> {
    if guard == 0 {
        let first = crate::sys::mmap::map_anonymous(map_len, flags)?;
        if (first.ptr.as_ptr() as usize).is_multiple_of(ALIGN) {
            return Ok(first);
        }
        // SAFETY: just mapped above and not shared with anyone.
        unsafe { crate::sys::mmap::unmap(first.ptr.as_ptr(), first.len)? };
    }
    let padded = map_len
        .checked_add(ALIGN + 2 * guard)
        .ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?;
    let wide = crate::sys::mmap::map_anonymous(padded, flags)?;
    let base = wide.ptr.as_ptr() as usize;
    let start = (base + guard).next_multiple_of(ALIGN);
    let (lo, hi) = (start - guard, start + map_len + guard);
    // SAFETY: every range below lies inside the mapping made just above,
    // and nothing refers to any of it yet; on failure all of it goes.
    let trimmed = unsafe {
        (|| {
            if lo > base {
                crate::sys::mmap::unmap(base as *mut u8, lo - base)?;
            }
            if base + padded > hi {
                crate::sys::mmap::unmap(hi as *mut u8, base + padded - hi)?;
            }
            if guard > 0 {
                crate::sys::mmap::protect_none(lo as *mut u8, guard)?;
                crate::sys::mmap::protect_none((start + map_len) as *mut u8, guard)?;
            }
            Ok(())
        })()
    };
    if let Err(e) = trimmed {
        // SAFETY: as above; munmap accepts ranges with holes.
        let _ = unsafe { crate::sys::mmap::unmap(base as *mut u8, padded) };
        return Err(e);
    }
    let ptr = NonNull::new(start as *mut u8).ok_or_else(|| io::Error::other("null mapping"))?;
    Ok(crate::sys::mmap::Mapping { ptr, len: map_len })
}

fn map_args(opts: &BufferOptions, kind: PageKind) -> String {
    format!(
        "len={}, {}, pages={kind}",
        crate::units::bytes(opts.len as u64),
        if opts.shared { "shared" } else { "private" }
    )
}

/// Tries the page kinds in order, recording why each one skipped was
/// skipped.
fn map_with_fallback(
    opts: &BufferOptions,
    reasons: &mut Vec<String>,
) -> Result<Mapped, PlacementError> {
    let base = crate::sys::mmap::base_page_size();
    let share = if opts.shared {
        libc::MAP_SHARED
    } else {
        libc::MAP_PRIVATE
    };
    let mut want = opts.pages;
    if let PageKind::Auto = want {
        want = PageKind::HugeTlb(MIB2);
    }
    if let PageKind::HugeTlb(size) = want {
        match try_hugetlb(opts, size, share) {
            Ok(m) => return Ok(m),
            Err(reason) => {
                reasons.push(reason);
                want = PageKind::Thp;
            }
        }
    }
    let map_len = opts.len.checked_next_multiple_of(base).ok_or_else(|| {
        PlacementError::new(
            "mmap",
            map_args(opts, want),
            io::Error::from_raw_os_error(libc::ENOMEM),
        )
        .with_hint("the length does not fit in the address space")
    })?;
    let mapping = map_aligned(map_len, share, base).map_err(|e| {
        let enomem = e.raw_os_error() == Some(libc::ENOMEM);
        let err = PlacementError::new("mmap", map_args(opts, want), e);
        if enomem {
            err.with_hint(super::enomem::hint(opts.node_policy.as_ref()))
        } else {
            err
        }
    })?;
    let addr = mapping.ptr.as_ptr() as usize;
    let thp = selected(THP_ENABLED);
    let used = match want {
        PageKind::Thp => match thp_refusal(opts.shared, thp.as_deref()) {
            Some(reason) => {
                reasons.push(reason);
                PageKind::Base
            }
            None => {
                match crate::sys::mmap::madvise(addr, map_len, crate::sys::mmap::Advice::HugePage) {
                    Ok(()) => PageKind::Thp,
                    Err(e) => {
                        reasons.push(format!("thp: madvise(MADV_HUGEPAGE) failed: {e}"));
                        PageKind::Base
                    }
                }
            }
        },
        _ => {
            // With THP set to `always` the kernel would use huge pages anyway.
            if thp.is_some() {
                let _ =
                    crate::sys::mmap::madvise(addr, map_len, crate::sys::mmap::Advice::NoHugePage);
            }
            PageKind::Base
        }
    };
    Ok(Mapped {
        mapping,
        guard: base,
        used,
        page_size: base,
    })
}

/// Why THP cannot back this buffer, if it cannot.
fn thp_refusal(shared: bool, enabled: Option<&str>) -> Option<String> {
    let Some(enabled) = enabled else {
        return Some("thp: this kernel has no transparent huge pages".into());
    };
    if shared {
        // Shared anonymous memory is shmem, governed by its own setting.
        return match selected(THP_SHMEM_ENABLED).as_deref() {
            Some(mode @ ("never" | "deny")) => Some(format!(
                "thp: shared memory gets no transparent huge pages \
                 ({THP_SHMEM_ENABLED} is [{mode}])"
            )),
            _ => None,
        };
    }
    (enabled == "never")
        .then(|| format!("thp: transparent huge pages are disabled ({THP_ENABLED} is [never])"))
}

/// Maps hugetlb pages of `size`, or says why not.
fn try_hugetlb(opts: &BufferOptions, size: usize, share: i32) -> Result<Mapped, String> {
    let name = crate::units::bytes(size as u64);
    let dir = hugetlb_dir(size);
    if !size.is_power_of_two() || size < crate::sys::mmap::base_page_size() {
        return Err(format!("hugetlb: {name} is not a page size"));
    }
    if !std::path::Path::new(&dir).is_dir() {
        return Err(format!(
            "hugetlb: this kernel has no {name} huge pages ({dir} is missing)"
        ));
    }
    let map_len = opts.len.checked_next_multiple_of(size).ok_or_else(|| {
        format!(
            "hugetlb: {} does not fit",
            crate::units::bytes(opts.len as u64)
        )
    })?;
    let needed = (map_len / size) as u64;
    let free = read_count(&format!("{dir}/free_hugepages")).unwrap_or(0);
    // The pool reservation made by mmap is global; a bind policy restricts
    // where pages may come from, and a node without free pages would only
    // show up as SIGBUS at the first touch.
    if let Some(MemPolicy::Bind(nodes)) = &opts.node_policy {
        let on_nodes = node_free_huge(size, nodes);
        if on_nodes < needed {
            return Err(format!(
                "hugetlb: need {needed} free {name} pages on nodes {nodes} for bind, \
                 found {on_nodes}"
            ));
        }
    }
    let flags =
        share | libc::MAP_HUGETLB | ((size.trailing_zeros() as i32) << libc::MAP_HUGE_SHIFT);
    match map_aligned(map_len, flags, 0) {
        Ok(mapping) => Ok(Mapped {
            mapping,
            guard: 0,
            used: PageKind::HugeTlb(size),
            page_size: size,
        }),
        Err(e) => Err(format!(
            "hugetlb: mmap of {needed} {name} pages failed ({e}); {free} free in the pool \
             ({dir}/free_hugepages), reserve more with {dir}/nr_hugepages"
        )),
    }
}

#[cfg(test)]
#[path = "buffer_tests.rs"]
mod tests;
