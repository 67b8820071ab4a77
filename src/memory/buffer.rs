//! Benchmark buffers: anonymous mappings with a chosen page size and memory
//! policy, placed by a first touch from the calling thread, that can report
//! where their pages ended up.
//!
//! Order matters for placement. The policy is applied with `mbind` right
//! after `mmap`, before any page exists; then the caller's thread (pinned
//! beforehand by the caller) writes every page. Pages written before the
//! policy would stay wherever they were first placed.

use crate::placement::pages::{self, PageHistogram};
use crate::placement::sys::{self, PlacementError};
use crate::placement::{MbindFlags, MemPolicy, NodeSet};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::ptr::NonNull;
use std::str::FromStr;

/// Every buffer starts on a 2 MiB boundary, so THP can back it from the
/// first byte and results do not depend on where the allocator happened to
/// put it.
pub const ALIGN: usize = 2 << 20;

/// The most pages [`Buffer::verify`] asks about; larger buffers are sampled
/// (1 GiB of 4 KiB pages is checked in full).
pub const VERIFY_MAX_PAGES: usize = 256 * 1024;

const MIB2: usize = 2 << 20;
const THP_ENABLED: &str = "/sys/kernel/mm/transparent_hugepage/enabled";
const THP_SHMEM_ENABLED: &str = "/sys/kernel/mm/transparent_hugepage/shmem_enabled";

/// Which pages back a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PageKind {
    /// Base pages only (THP switched off for the range).
    Base,
    /// Transparent huge pages where the kernel can provide them.
    Thp,
    /// Pages from the hugetlb pool of this size in bytes (2 MiB, 1 GiB, ...).
    HugeTlb(usize),
    /// The best available: hugetlb 2 MiB, else THP, else base pages.
    Auto,
}

impl fmt::Display for PageKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PageKind::Base => f.write_str("base"),
            PageKind::Thp => f.write_str("thp"),
            PageKind::Auto => f.write_str("auto"),
            PageKind::HugeTlb(size) => {
                let (n, unit) = if size % (1 << 30) == 0 {
                    (size >> 30, "G")
                } else if size % (1 << 20) == 0 {
                    (size >> 20, "M")
                } else {
                    (size >> 10, "K")
                };
                write!(f, "hugetlb:{n}{unit}")
            }
        }
    }
}

/// Why a page kind was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid page kind '{input}': {reason}")]
pub struct PageKindParseError {
    pub input: String,
    pub reason: String,
}

impl FromStr for PageKind {
    type Err = PageKindParseError;

    /// `base`, `thp`, `auto`, `hugetlb` (2 MiB) or `hugetlb:SIZE` with SIZE
    /// such as `2M`, `1G`, `1GiB`, `64K`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let text = s.trim();
        let fail = |reason: String| PageKindParseError {
            input: text.to_string(),
            reason,
        };
        let lower = text.to_ascii_lowercase();
        let (kind, size) = match lower.split_once(':') {
            Some((k, sz)) => (k.trim(), Some(sz.trim())),
            None => (lower.as_str(), None),
        };
        match (kind, size) {
            ("base", None) => Ok(PageKind::Base),
            ("thp", None) => Ok(PageKind::Thp),
            ("auto", None) => Ok(PageKind::Auto),
            ("hugetlb", None) => Ok(PageKind::HugeTlb(MIB2)),
            ("hugetlb", Some(sz)) => parse_page_size(sz).map(PageKind::HugeTlb).map_err(fail),
            ("base" | "thp" | "auto", Some(_)) => Err(fail(format!(
                "'{kind}' takes no size; only 'hugetlb:SIZE' does (e.g. 'hugetlb:1G')"
            ))),
            _ => Err(fail(
                "expected base, thp, auto, hugetlb or hugetlb:SIZE (e.g. hugetlb:1G)".into(),
            )),
        }
    }
}

fn parse_page_size(text: &str) -> Result<usize, String> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let (num, unit) = text.split_at(digits);
    let shift = match unit.trim_end_matches("ib").trim_end_matches('b') {
        "k" => 10,
        "m" => 20,
        "g" => 30,
        _ => return Err(format!("'{text}' needs a unit: K, M or G (e.g. 2M)")),
    };
    let n: usize = num
        .parse()
        .map_err(|_| format!("'{text}' does not start with a number"))?;
    let size = n
        .checked_shl(shift)
        .filter(|s| s >> shift == n)
        .ok_or_else(|| format!("'{text}' is too large"))?;
    if !size.is_power_of_two() || size < sys::base_page_size() {
        return Err(format!(
            "huge page sizes are powers of two of at least the base page; '{text}' is not"
        ));
    }
    Ok(size)
}

impl Serialize for PageKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for PageKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// What the first touch writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fill {
    /// Every 64-bit word gets [`pattern_word`]`(seed, index)`: non-zero and
    /// different from its neighbours, so neither the shared zero page, KSM
    /// merging nor compressing memory hardware can stand in for real memory
    /// traffic.
    Pattern { seed: u64 },
    /// One non-zero word per base page: places every page at a fraction of
    /// the cost, for probes that write their own data next.
    FirstWordPerPage,
}

impl Default for Fill {
    fn default() -> Self {
        Fill::Pattern { seed: DEFAULT_SEED }
    }
}

pub const DEFAULT_SEED: u64 = 0x6E75_6D61_6265_6E63;

/// The value [`Fill::Pattern`] writes at word `index`: the index spread by an
/// odd multiplier and one xorshift round. Distinct indexes give distinct
/// values (both steps are bijections) except where that is 0, which becomes 1.
#[inline]
pub fn pattern_word(seed: u64, index: u64) -> u64 {
    let mut x = seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x.max(1)
}

/// Writes the pattern into `words`, numbering them from `first_index`, so
/// threads touching disjoint chunks of one buffer produce the same contents
/// as one thread touching it all.
pub fn fill_pattern(words: &mut [u64], seed: u64, first_index: u64) {
    // The seed is opaque to the optimiser, so the stores cannot be folded
    // into a constant memset or precomputed.
    let seed = std::hint::black_box(seed);
    for (i, w) in words.iter_mut().enumerate() {
        *w = pattern_word(seed, first_index + i as u64);
    }
    std::hint::black_box(words);
}

/// How to build a [`Buffer`].
#[derive(Debug, Clone, PartialEq)]
pub struct BufferOptions {
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
    pub fn new(len: usize) -> Self {
        Self {
            len,
            shared: false,
            pages: PageKind::Thp,
            node_policy: None,
            touch: true,
            fill: Fill::default(),
        }
    }

    pub fn shared(mut self, shared: bool) -> Self {
        self.shared = shared;
        self
    }

    pub fn pages(mut self, pages: PageKind) -> Self {
        self.pages = pages;
        self
    }

    pub fn policy(mut self, policy: MemPolicy) -> Self {
        self.node_policy = Some(policy);
        self
    }

    pub fn touch(mut self, touch: bool) -> Self {
        self.touch = touch;
        self
    }

    pub fn fill(mut self, fill: Fill) -> Self {
        self.fill = fill;
        self
    }
}

/// Where a buffer's pages are, from [`Buffer::verify`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Placement {
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
pub struct Buffer {
    ptr: NonNull<u8>,
    len: usize,
    map_len: usize,
    guard: usize,
    shared: bool,
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
pub trait Word: Copy + sealed::Sealed {}

mod sealed {
    pub trait Sealed {}
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

/// A mapping made, not yet owned by a Buffer.
struct Mapped {
    mapping: sys::Mapping,
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
    pub fn new(opts: &BufferOptions) -> Result<Buffer, PlacementError> {
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
            shared: opts.shared,
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
    pub fn fill(&mut self, fill: Fill) {
        self.touched_node = sys::getcpu().ok().map(|(_, node)| node);
        match fill {
            Fill::Pattern { seed } => fill_pattern(self.as_mut_slice::<u64>(), seed, 0),
            Fill::FirstWordPerPage => {
                let step = sys::base_page_size() / 8;
                let words = self.as_mut_slice::<u64>();
                let seed = std::hint::black_box(DEFAULT_SEED);
                for (i, w) in words.iter_mut().step_by(step).enumerate() {
                    *w = pattern_word(seed, i as u64);
                }
                std::hint::black_box(words);
            }
        }
    }

    pub fn as_ptr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// The start address, for system calls and messages.
    pub fn addr(&self) -> usize {
        self.ptr.as_ptr() as usize
    }

    /// The requested length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: empty buffers are refused.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The mapped length: `len` rounded up to whole pages of the kind used.
    pub fn mapped_len(&self) -> usize {
        self.map_len
    }

    /// The buffer as `len / size_of::<T>()` elements. For a shared buffer,
    /// a forked child writing meanwhile changes what the slice shows; read
    /// such memory through raw pointers or atomics while children run.
    pub fn as_slice<T: Word>(&self) -> &[T] {
        let n = self.len / std::mem::size_of::<T>();
        // SAFETY: the mapping is readable for map_len >= len bytes, aligned
        // to at least 4 KiB (more than any Word's alignment), every bit
        // pattern is a valid Word, and `&self` keeps it mapped.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().cast::<T>(), n) }
    }

    /// The buffer as mutable `T`s; see [`Buffer::as_slice`].
    pub fn as_mut_slice<T: Word>(&mut self) -> &mut [T] {
        let n = self.len / std::mem::size_of::<T>();
        // SAFETY: as for `as_slice`, and `&mut self` makes the view unique
        // within this process.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().cast::<T>(), n) }
    }

    /// The page size in use: the hugetlb size for hugetlb buffers, the base
    /// page size otherwise (THP coverage is reported by
    /// [`Placement::huge_pct`], as the kernel may back any part with base
    /// pages).
    pub fn page_size(&self) -> usize {
        self.page_size
    }

    /// The page kind asked for.
    pub fn requested_pages(&self) -> PageKind {
        self.requested
    }

    /// The page kind used: never `Auto`.
    pub fn page_kind(&self) -> PageKind {
        self.used
    }

    /// Why the page kind used differs from the one requested (or why THP
    /// cannot help), if it does.
    pub fn fallback_reason(&self) -> Option<&str> {
        self.fallback.as_deref()
    }

    /// The policy applied to the range, which may differ from the one asked
    /// for (see [`crate::placement::bind_range`]).
    pub fn policy(&self) -> Option<&MemPolicy> {
        self.policy.as_ref()
    }

    pub fn is_shared(&self) -> bool {
        self.shared
    }

    /// The node of the CPU that last filled the buffer.
    pub fn touched_node(&self) -> Option<usize> {
        self.touched_node
    }

    /// Where the pages are, checking at most [`VERIFY_MAX_PAGES`] pages.
    pub fn verify(&self) -> Result<Placement, PlacementError> {
        self.verify_sampled(VERIFY_MAX_PAGES)
    }

    /// Where the pages are, checking at most `max_pages` pages spread over
    /// the buffer (see [`pages::page_nodes_sampled`]).
    pub fn verify_sampled(&self, max_pages: usize) -> Result<Placement, PlacementError> {
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
                let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
                let start = self.addr() as u64;
                let huge = smaps_huge_bytes(&smaps, start, start + self.map_len as u64);
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
            sys::unmap(
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

/// MemFree of a node, in bytes.
fn node_free_bytes(node: usize) -> Option<u64> {
    let text = std::fs::read_to_string(format!("{}/node{node}/meminfo", sys::NODE_SYSFS)).ok()?;
    let line = text.lines().find(|l| l.contains("MemFree:"))?;
    let kb: u64 = line.split_whitespace().rev().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn enomem_hint(opts: &BufferOptions) -> String {
    let mut parts = Vec::new();
    if let Some(avail) = mem_available() {
        parts.push(format!("MemAvailable is {}", sys::fmt_bytes(avail)));
    }
    if let Some(nodes) = opts.node_policy.as_ref().and_then(MemPolicy::target_nodes) {
        for n in nodes.iter() {
            if let Some(free) = node_free_bytes(n) {
                parts.push(format!("node {n} has {} free", sys::fmt_bytes(free)));
            }
        }
    }
    if let Some(mode) = read_count("/proc/sys/vm/overcommit_memory") {
        parts.push(format!("vm.overcommit_memory={mode}"));
    }
    format!("not enough memory to map the buffer ({})", parts.join(", "))
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
fn map_aligned(map_len: usize, flags: i32, guard: usize) -> io::Result<sys::Mapping> {
    if guard == 0 {
        let first = sys::map_anonymous(map_len, flags)?;
        if (first.ptr.as_ptr() as usize).is_multiple_of(ALIGN) {
            return Ok(first);
        }
        // SAFETY: just mapped above and not shared with anyone.
        unsafe { sys::unmap(first.ptr.as_ptr(), first.len)? };
    }
    let padded = map_len
        .checked_add(ALIGN + 2 * guard)
        .ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?;
    let wide = sys::map_anonymous(padded, flags)?;
    let base = wide.ptr.as_ptr() as usize;
    let start = (base + guard).next_multiple_of(ALIGN);
    let (lo, hi) = (start - guard, start + map_len + guard);
    // SAFETY: every range below lies inside the mapping made just above,
    // and nothing refers to any of it yet; on failure all of it goes.
    let trimmed = unsafe {
        (|| {
            if lo > base {
                sys::unmap(base as *mut u8, lo - base)?;
            }
            if base + padded > hi {
                sys::unmap(hi as *mut u8, base + padded - hi)?;
            }
            if guard > 0 {
                sys::protect_none(lo as *mut u8, guard)?;
                sys::protect_none((start + map_len) as *mut u8, guard)?;
            }
            Ok(())
        })()
    };
    if let Err(e) = trimmed {
        // SAFETY: as above; munmap accepts ranges with holes.
        let _ = unsafe { sys::unmap(base as *mut u8, padded) };
        return Err(e);
    }
    let ptr = NonNull::new(start as *mut u8).ok_or_else(|| io::Error::other("null mapping"))?;
    Ok(sys::Mapping { ptr, len: map_len })
}

fn map_args(opts: &BufferOptions, kind: PageKind) -> String {
    format!(
        "len={}, {}, pages={kind}",
        sys::fmt_bytes(opts.len as u64),
        if opts.shared { "shared" } else { "private" }
    )
}

/// Tries the page kinds in order, recording why each one skipped was
/// skipped.
fn map_with_fallback(
    opts: &BufferOptions,
    reasons: &mut Vec<String>,
) -> Result<Mapped, PlacementError> {
    let base = sys::base_page_size();
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
            err.with_hint(enomem_hint(opts))
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
            None => match sys::madvise(addr, map_len, sys::Advice::HugePage) {
                Ok(()) => PageKind::Thp,
                Err(e) => {
                    reasons.push(format!("thp: madvise(MADV_HUGEPAGE) failed: {e}"));
                    PageKind::Base
                }
            },
        },
        _ => {
            // With THP set to `always` the kernel would use huge pages anyway.
            if thp.is_some() {
                let _ = sys::madvise(addr, map_len, sys::Advice::NoHugePage);
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
    let name = sys::fmt_bytes(size as u64);
    let dir = hugetlb_dir(size);
    if !size.is_power_of_two() || size < sys::base_page_size() {
        return Err(format!("hugetlb: {name} is not a page size"));
    }
    if !std::path::Path::new(&dir).is_dir() {
        return Err(format!(
            "hugetlb: this kernel has no {name} huge pages ({dir} is missing)"
        ));
    }
    let map_len = opts
        .len
        .checked_next_multiple_of(size)
        .ok_or_else(|| format!("hugetlb: {} does not fit", sys::fmt_bytes(opts.len as u64)))?;
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

/// Huge-page bytes (`AnonHugePages`, `ShmemPmdMapped`, `FilePmdMapped`) of
/// the smaps entries overlapping `start..end`. An entry reaching beyond the
/// range (a mapping merged with a neighbour) contributes in proportion to
/// the overlap, as smaps does not say where in the entry its huge pages are.
fn smaps_huge_bytes(smaps: &str, start: u64, end: u64) -> u64 {
    let mut total: u128 = 0;
    let mut current: Option<(u64, u64)> = None;
    for line in smaps.lines() {
        let first = line.split_ascii_whitespace().next().unwrap_or("");
        if let Some((a, b)) = first.split_once('-')
            && let (Ok(a), Ok(b)) = (u64::from_str_radix(a, 16), u64::from_str_radix(b, 16))
        {
            current = (a < end && b > start && b > a).then_some((a, b));
            continue;
        }
        let Some((a, b)) = current else { continue };
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        if !matches!(key, "AnonHugePages" | "ShmemPmdMapped" | "FilePmdMapped") {
            continue;
        }
        let kb: u128 = rest
            .split_ascii_whitespace()
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let overlap = u128::from(b.min(end) - a.max(start));
        total += kb * 1024 * overlap / u128::from(b - a);
    }
    u64::try_from(total).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::numa_maps;

    const MIB: usize = 1 << 20;

    fn first_node() -> usize {
        sys::online_nodes().first().unwrap()
    }

    #[test]
    fn buffers_are_2mib_aligned_and_filled() {
        for (len, shared, kind) in [
            (4096, false, PageKind::Base),
            (3 * MIB + 5, false, PageKind::Thp),
            (MIB, true, PageKind::Base),
            (10 * MIB, true, PageKind::Thp),
        ] {
            let buf = Buffer::new(&BufferOptions::new(len).shared(shared).pages(kind)).unwrap();
            assert_eq!(buf.addr() % ALIGN, 0, "{len} {shared} {kind}");
            assert_eq!(buf.len(), len);
            assert!(buf.mapped_len() >= len && buf.mapped_len().is_multiple_of(buf.page_size()));
            let words = buf.as_slice::<u64>();
            assert_eq!(words.len(), len / 8);
            assert!(words.iter().all(|&w| w != 0), "zero word in {len} {shared}");
            assert!(
                words
                    .iter()
                    .enumerate()
                    .all(|(i, &w)| w == pattern_word(DEFAULT_SEED, i as u64))
            );
        }
    }

    #[test]
    fn pattern_does_not_repeat() {
        let mut words = vec![0u64; 1 << 16];
        fill_pattern(&mut words, 42, 0);
        let distinct: std::collections::HashSet<_> = words.iter().collect();
        assert_eq!(distinct.len(), words.len());
        assert!(words.iter().all(|&w| w != 0));
        // Chunked fills give the same contents as one fill.
        let mut chunked = vec![0u64; 1 << 16];
        for (c, chunk) in chunked.chunks_mut(1000).enumerate() {
            fill_pattern(chunk, 42, c as u64 * 1000);
        }
        assert_eq!(chunked, words);
        // Whole pages differ, so KSM finds nothing to merge.
        let pages: std::collections::HashSet<_> = words.chunks(512).collect();
        assert_eq!(pages.len(), words.len() / 512);
    }

    #[test]
    fn bind_to_first_node_verifies_100_percent() {
        let node = first_node();
        let policy = MemPolicy::Bind(NodeSet::from_ids([node]));
        let buf = Buffer::new(
            &BufferOptions::new(16 * MIB)
                .pages(PageKind::Base)
                .policy(policy.clone()),
        )
        .unwrap();
        assert_eq!(buf.policy(), Some(&policy));
        assert_eq!(crate::placement::range_policy(buf.addr()).unwrap(), policy);
        let p = buf.verify().unwrap();
        assert_eq!(p.pages_total, (16 * MIB / sys::base_page_size()) as u64);
        assert_eq!(p.pages_checked, p.pages_total);
        assert_eq!(p.pages_by_node, BTreeMap::from([(node, p.pages_total)]));
        assert_eq!(p.on_target_pct, Some(100.0));
        assert_eq!(p.huge_pct, 0.0);
        // Sampling gives the same answer from fewer pages.
        let s = buf.verify_sampled(100).unwrap();
        assert!(s.pages_checked <= 100);
        assert_eq!(s.on_target_pct, Some(100.0));
    }

    #[test]
    fn binding_to_a_missing_node_fails_clearly() {
        let online = sys::online_nodes();
        let missing = online.end();
        let e = Buffer::new(
            &BufferOptions::new(4 * MIB).policy(MemPolicy::Bind(NodeSet::from_ids([missing]))),
        )
        .unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with(&format!("mbind(len=4 MiB, policy=bind:{missing}) failed")),
            "{msg}"
        );
        assert!(
            msg.contains(&format!("not online (online nodes: {online})")),
            "{msg}"
        );
    }

    #[test]
    fn untouched_buffers_have_no_pages_yet() {
        let buf = Buffer::new(
            &BufferOptions::new(8 * MIB)
                .pages(PageKind::Base)
                .touch(false),
        )
        .unwrap();
        let p = buf.verify().unwrap();
        assert!(p.pages_by_node.is_empty(), "{p:?}");
        assert_eq!(p.on_target_pct, None);
        let hist = PageHistogram::from_status(
            &pages::page_nodes(buf.addr(), buf.len(), buf.page_size()).unwrap(),
        );
        assert_eq!(hist.not_present, p.pages_total);
    }

    #[test]
    fn default_policy_targets_the_touching_node() {
        let mut buf = Buffer::new(&BufferOptions::new(4 * MIB).touch(false)).unwrap();
        buf.fill(Fill::FirstWordPerPage);
        let node = buf.touched_node().unwrap();
        let p = buf.verify().unwrap();
        // Single-node machines always agree; elsewhere the thread may migrate.
        if sys::online_nodes().len() == 1 {
            assert_eq!(p.on_target_pct, Some(100.0));
            assert_eq!(p.pages_by_node.keys().copied().collect::<Vec<_>>(), [node]);
        }
        assert_eq!(buf.as_slice::<u64>()[0], pattern_word(DEFAULT_SEED, 0));
        assert_eq!(buf.as_slice::<u64>()[1], 0);
    }

    #[test]
    fn thp_request_gets_huge_pages_when_enabled() {
        let enabled = selected(THP_ENABLED);
        if enabled.is_none() || enabled.as_deref() == Some("never") {
            eprintln!("skipped: transparent huge pages are not available ({enabled:?})");
            return;
        }
        let buf = Buffer::new(&BufferOptions::new(64 * MIB).pages(PageKind::Thp)).unwrap();
        assert_eq!(buf.page_kind(), PageKind::Thp);
        let p = buf.verify().unwrap();
        assert!(p.huge_pct > 0.0, "no huge pages: {p:?}");
        assert!(p.huge_pct <= 100.0);
        // And base pages when asked for them.
        let base = Buffer::new(&BufferOptions::new(64 * MIB).pages(PageKind::Base)).unwrap();
        assert_eq!(base.verify().unwrap().huge_pct, 0.0);
    }

    #[test]
    fn neighbouring_buffers_report_their_own_huge_pages() {
        let enabled = selected(THP_ENABLED);
        if enabled.is_none() || enabled.as_deref() == Some("never") {
            eprintln!("skipped: transparent huge pages are not available ({enabled:?})");
            return;
        }
        // Same flags, mapped one after the other: without guards the kernel
        // merges them and smaps shows their huge pages as one.
        let touched = Buffer::new(&BufferOptions::new(16 * MIB)).unwrap();
        let untouched = Buffer::new(&BufferOptions::new(16 * MIB).touch(false)).unwrap();
        assert!(touched.verify().unwrap().huge_pct > 0.0);
        assert_eq!(untouched.verify().unwrap().huge_pct, 0.0);
    }

    #[test]
    fn guard_pages_surround_the_buffer() {
        let buf = Buffer::new(&BufferOptions::new(3 * MIB).pages(PageKind::Base)).unwrap();
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let perms_at = |addr: usize| {
            maps.lines()
                .find(|l| {
                    let (a, b) = l
                        .split_whitespace()
                        .next()
                        .unwrap()
                        .split_once('-')
                        .unwrap();
                    let (a, b) = (
                        usize::from_str_radix(a, 16).unwrap(),
                        usize::from_str_radix(b, 16).unwrap(),
                    );
                    a <= addr && addr < b
                })
                .map(|l| l.split_whitespace().nth(1).unwrap().to_string())
        };
        assert_eq!(perms_at(buf.addr()).as_deref(), Some("rw-p"));
        assert_eq!(perms_at(buf.addr() - 1).as_deref(), Some("---p"));
        assert_eq!(
            perms_at(buf.addr() + buf.mapped_len()).as_deref(),
            Some("---p")
        );
    }

    #[test]
    fn hugetlb_without_a_pool_falls_back_and_says_so() {
        let len = 8 * MIB;
        let free = read_count(&format!("{}/free_hugepages", hugetlb_dir(MIB2))).unwrap_or(0);
        let buf = Buffer::new(&BufferOptions::new(len).pages(PageKind::HugeTlb(MIB2))).unwrap();
        if free >= (len / MIB2) as u64 {
            // A pool exists; it may still be drained by others meanwhile.
            if buf.page_kind() == PageKind::HugeTlb(MIB2) {
                assert_eq!(buf.page_size(), MIB2);
                assert_eq!(buf.verify().unwrap().huge_pct, 100.0);
                return;
            }
        }
        assert_ne!(buf.page_kind(), PageKind::HugeTlb(MIB2));
        let reason = buf.fallback_reason().unwrap();
        assert!(reason.starts_with("hugetlb: "), "{reason}");
        assert!(reason.contains("free_hugepages"), "{reason}");
        assert_eq!(buf.requested_pages(), PageKind::HugeTlb(MIB2));
        assert_eq!(buf.page_size(), sys::base_page_size());
        // Auto takes the same path.
        let auto = Buffer::new(&BufferOptions::new(len).pages(PageKind::Auto)).unwrap();
        assert_ne!(auto.page_kind(), PageKind::Auto);
        assert!(auto.fallback_reason().is_some());
    }

    #[test]
    fn drop_unmaps() {
        // Shared mappings never merge with neighbours, so the exact range is
        // visible in /proc/self/maps while the buffer lives.
        let len = 6 * MIB + 3 * 4096;
        let buf = Buffer::new(&BufferOptions::new(len).shared(true).pages(PageKind::Base)).unwrap();
        let range = format!("{:x}-{:x} ", buf.addr(), buf.addr() + buf.mapped_len());
        let listed = || {
            std::fs::read_to_string("/proc/self/maps")
                .unwrap()
                .lines()
                .any(|l| l.starts_with(&range))
        };
        assert!(listed(), "{range} not in maps");
        drop(buf);
        assert!(!listed(), "{range} still mapped");
    }

    #[test]
    fn numa_maps_shows_the_bound_buffer() {
        let node = first_node();
        let buf = Buffer::new(
            &BufferOptions::new(8 * MIB)
                .pages(PageKind::Base)
                .policy(MemPolicy::Bind(NodeSet::from_ids([node]))),
        )
        .unwrap();
        let maps = numa_maps::read_self_numa_maps().unwrap();
        let m = maps
            .iter()
            .find(|m| m.addr == buf.addr() as u64)
            .expect("buffer mapping in numa_maps");
        assert_eq!(m.policy, format!("bind:{node}"));
        assert!(m.anon);
        assert_eq!(m.page_size_kb, 4);
        let pages = (8 * MIB / 4096) as u64;
        assert_eq!(m.pages_by_node, BTreeMap::from([(node, pages)]));
        assert_eq!(m.dirty_pages, pages);
    }

    #[test]
    fn numa_maps_names_every_policy_the_kernel_applies() {
        let node = first_node();
        let one = NodeSet::from_ids([node]);
        let mut cases = vec![
            (MemPolicy::Bind(one.clone()), format!("bind:{node}")),
            (
                MemPolicy::Interleave(one.clone()),
                format!("interleave:{node}"),
            ),
            (MemPolicy::Preferred(node), format!("prefer:{node}")),
            (MemPolicy::Local, "local".to_string()),
        ];
        if crate::placement::mempolicy::weighted_interleave_supported() {
            cases.push((
                MemPolicy::WeightedInterleave(one.clone()),
                format!("weighted interleave:{node}"),
            ));
        }
        let many = MemPolicy::PreferredMany(one.clone());
        for (policy, written) in cases.into_iter().chain([(many, String::new())]) {
            let buf = Buffer::new(
                &BufferOptions::new(2 * MIB)
                    .pages(PageKind::Base)
                    .policy(policy.clone()),
            )
            .unwrap();
            let applied = buf.policy().unwrap().clone();
            let maps = numa_maps::read_self_numa_maps().unwrap();
            let m = maps.iter().find(|m| m.addr == buf.addr() as u64).unwrap();
            match applied {
                // preferred-many is written `prefer (many)`, or falls back to
                // `prefer` on kernels before 5.15.
                MemPolicy::PreferredMany(_) => {
                    assert_eq!(m.policy, format!("prefer (many):{node}"))
                }
                MemPolicy::Preferred(_) if written.is_empty() => {
                    assert_eq!(m.policy, format!("prefer:{node}"))
                }
                _ => assert_eq!(m.policy, written),
            }
            assert_eq!(m.policy_nodes(), policy.nodes());
            assert_eq!(m.pages_by_node, BTreeMap::from([(node, 512)]), "{policy}");
        }
    }

    #[test]
    fn a_range_policy_can_be_reset() {
        let node = first_node();
        let buf = Buffer::new(
            &BufferOptions::new(2 * MIB)
                .pages(PageKind::Base)
                .policy(MemPolicy::Bind(NodeSet::from_ids([node]))),
        )
        .unwrap();
        let reset = crate::placement::bind_range(
            buf.addr(),
            buf.mapped_len(),
            &MemPolicy::Default,
            MbindFlags::default(),
        )
        .unwrap();
        assert_eq!(reset, MemPolicy::Default);
        assert_eq!(
            crate::placement::range_policy(buf.addr()).unwrap(),
            MemPolicy::Default
        );
        // Strict re-binding to the node the pages are on succeeds.
        let strict = MbindFlags {
            strict: true,
            move_pages: true,
        };
        let policy = MemPolicy::Bind(NodeSet::from_ids([node]));
        assert_eq!(
            crate::placement::bind_range(buf.addr(), buf.mapped_len(), &policy, strict).unwrap(),
            policy
        );
    }

    #[test]
    fn impossible_sizes_fail_with_the_size() {
        let e = Buffer::new(&BufferOptions::new(1 << 60).pages(PageKind::Base)).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("mmap(len=1 EiB, private, pages=base) failed"),
            "{msg}"
        );
        assert_eq!(e.raw_os_error(), Some(libc::ENOMEM));
        assert!(msg.contains("not enough memory"), "{msg}");
        let e = Buffer::new(&BufferOptions::new(0)).unwrap_err();
        assert!(e.to_string().contains("at least one byte"), "{e}");
    }

    #[test]
    fn shared_buffers_are_shared_mappings() {
        let perms = |buf: &Buffer| {
            let start = format!("{:x}-", buf.addr());
            std::fs::read_to_string("/proc/self/maps")
                .unwrap()
                .lines()
                .find(|l| l.starts_with(&start))
                .and_then(|l| l.split_whitespace().nth(1).map(str::to_string))
                .unwrap()
        };
        let shared =
            Buffer::new(&BufferOptions::new(MIB).shared(true).pages(PageKind::Base)).unwrap();
        assert!(shared.is_shared());
        assert_eq!(perms(&shared), "rw-s");
        let private = Buffer::new(
            &BufferOptions::new(MIB)
                .pages(PageKind::Base)
                .policy(MemPolicy::Local),
        )
        .unwrap();
        assert_eq!(perms(&private), "rw-p");
    }

    #[test]
    fn page_kinds_parse_and_print() {
        for (text, kind) in [
            ("base", PageKind::Base),
            ("thp", PageKind::Thp),
            ("auto", PageKind::Auto),
            ("hugetlb:2M", PageKind::HugeTlb(MIB2)),
            ("hugetlb:1G", PageKind::HugeTlb(1 << 30)),
        ] {
            assert_eq!(kind.to_string(), text);
            assert_eq!(text.parse::<PageKind>().unwrap(), kind);
        }
        assert_eq!(
            "hugetlb".parse::<PageKind>().unwrap(),
            PageKind::HugeTlb(MIB2)
        );
        assert_eq!(
            "HugeTLB:1GiB".parse::<PageKind>().unwrap(),
            PageKind::HugeTlb(1 << 30)
        );
        assert!(
            "hugetlb:3M"
                .parse::<PageKind>()
                .unwrap_err()
                .reason
                .contains("powers of two")
        );
        assert!(
            "hugetlb:2"
                .parse::<PageKind>()
                .unwrap_err()
                .reason
                .contains("needs a unit")
        );
        assert!(
            "thp:2M"
                .parse::<PageKind>()
                .unwrap_err()
                .reason
                .contains("takes no size")
        );
        assert!("huge".parse::<PageKind>().is_err());
        assert_eq!(
            serde_json::to_string(&PageKind::HugeTlb(1 << 30)).unwrap(),
            "\"hugetlb:1G\""
        );
    }

    #[test]
    fn placement_json_has_the_documented_names() {
        let p = Placement {
            pages_by_node: BTreeMap::from([(0, 10), (1, 2)]),
            on_target_pct: Some(83.5),
            huge_pct: 50.0,
            pages_checked: 12,
            pages_total: 12,
        };
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["pages_by_node"]["0"], 10);
        assert_eq!(json["pages_by_node"]["1"], 2);
        assert_eq!(json["on_target_pct"], 83.5);
        assert_eq!(json["huge_pct"], 50.0);
        let back: Placement = serde_json::from_value(json).unwrap();
        assert_eq!(back, p);
    }

    #[test]
    fn smaps_overlap_is_prorated() {
        let smaps = "\
00400000-00800000 rw-p 00000000 00:00 0
Size:               4096 kB
AnonHugePages:      4096 kB
ShmemPmdMapped:        0 kB
VmFlags: rd wr mr mw me ac hg
00800000-00a00000 rw-s 00000000 00:01 5 /dev/zero (deleted)
ShmemPmdMapped:     2048 kB
";
        assert_eq!(smaps_huge_bytes(smaps, 0x40_0000, 0x80_0000), 4 << 20);
        assert_eq!(smaps_huge_bytes(smaps, 0x40_0000, 0x60_0000), 2 << 20);
        assert_eq!(smaps_huge_bytes(smaps, 0x40_0000, 0xa0_0000), 6 << 20);
        assert_eq!(smaps_huge_bytes(smaps, 0xa0_0000, 0xb0_0000), 0);
        assert_eq!(smaps_huge_bytes("garbage\n-\nx-y\n", 0, 100), 0);
    }
}
