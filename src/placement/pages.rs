//! Where pages are: the node of each page in a range, asked of the kernel
//! with `move_pages` (no target nodes, so nothing moves).
//!
//! Only pages that have been faulted in have a node; a page never touched
//! reports `-ENOENT`. Query after the first touch.

use super::sys::{self, PlacementError};
use crate::ids::NodeSet;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io;

/// Pages per `move_pages` call. The kernel walks the array in chunks of its
/// own, so this only bounds the address and status arrays built here: 16 Ki
/// pages is 192 KiB of arrays however large the range.
pub(crate) const MOVE_PAGES_BATCH: usize = 16 * 1024;

/// `-ENOENT` in a status: the page is not present (never touched, or
/// swapped out).
pub(crate) const NOT_PRESENT: i32 = -libc::ENOENT;

/// Counts of page statuses.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PageHistogram {
    /// Present pages per node.
    pub by_node: BTreeMap<usize, u64>,
    /// Pages not faulted in (`-ENOENT`).
    pub not_present: u64,
    /// Pages the kernel could not report: unmapped (`-EFAULT`, also given
    /// for the shared zero page that a read of untouched memory maps), or
    /// other errors.
    pub errors: u64,
}

impl PageHistogram {
    /// Counts `move_pages` statuses: a node id, or a negative errno.
    pub(crate) fn from_status(status: &[i32]) -> Self {
        let mut h = Self::default();
        for &s in status {
            match usize::try_from(s) {
                Ok(node) => *h.by_node.entry(node).or_insert(0) += 1,
                Err(_) if s == NOT_PRESENT => h.not_present += 1,
                Err(_) => h.errors += 1,
            }
        }
        h
    }

    /// Pages with a node.
    pub(crate) fn present(&self) -> u64 {
        self.by_node.values().sum()
    }

    /// Percent of present pages on `node`; `None` when no page is present.
    #[cfg(test)]
    pub(crate) fn on_node_pct(&self, node: usize) -> Option<f64> {
        self.on_nodes_pct(&NodeSet::from_ids([node]))
    }

    /// Percent of present pages on any of `nodes`; `None` when no page is
    /// present.
    pub(crate) fn on_nodes_pct(&self, nodes: &NodeSet) -> Option<f64> {
        let present = self.present();
        if present == 0 {
            return None;
        }
        let on: u64 = self
            .by_node
            .iter()
            .filter(|(n, _)| nodes.contains(**n))
            .map(|(_, c)| c)
            .sum();
        Some(on as f64 * 100.0 / present as f64)
    }
}

fn bad_page_size(call: &'static str, page_size: usize) -> PlacementError {
    PlacementError::new(
        call,
        format!("page_size={page_size}"),
        io::Error::from(io::ErrorKind::InvalidInput),
    )
    .with_hint("the page size must be a power of two")
}

/// The first page's address and the number of pages covering `addr..addr+len`.
fn page_span(addr: usize, len: usize, page_size: usize) -> (usize, usize) {
    let first = addr & !(page_size - 1);
    if len == 0 {
        return (first, 0);
    }
    let end = addr.saturating_add(len);
    (first, (end - first).div_ceil(page_size))
}

/// Runs `move_pages` on process `pid` (0: this one) over `addrs`, in
/// batches.
fn query(
    pid: i32,
    addrs: impl ExactSizeIterator<Item = usize>,
    args: impl Fn() -> String,
) -> Result<Vec<i32>, PlacementError> {
    // Without NUMA every page is on node 0; whether it is there at all is
    // what is left to check.
    let one_node = pid == 0 && !sys::kernel_has_numa();
    let mut status = Vec::with_capacity(addrs.len());
    let mut batch = Vec::with_capacity(addrs.len().min(MOVE_PAGES_BATCH));
    let mut addrs = addrs.peekable();
    while addrs.peek().is_some() {
        batch.clear();
        batch.extend(addrs.by_ref().take(MOVE_PAGES_BATCH));
        let start = status.len();
        status.resize(start + batch.len(), 0);
        if one_node {
            sys::residency(&batch, &mut status[start..]);
            continue;
        }
        sys::move_pages_of(pid, &batch, None, &mut status[start..], 0)
            .map_err(|e| query_error(e, args()))?;
    }
    Ok(status)
}

fn query_error(e: io::Error, args: String) -> PlacementError {
    let hint = match e.raw_os_error() {
        Some(libc::EPERM) => {
            Some("container seccomp profiles allow move_pages only with CAP_SYS_NICE".to_string())
        }
        Some(libc::ENOSYS) => Some("this kernel was built without NUMA support".into()),
        _ => None,
    };
    let err = PlacementError::new("move_pages", args, e);
    match hint {
        Some(h) => err.with_hint(h),
        None => err,
    }
}

/// The status of every page covering `addr..addr+len`: the node id, or a
/// negative errno (`-ENOENT` for a page not present, `-EFAULT` for an
/// unmapped one). `page_size` is the step between queried addresses: the
/// base page size, or the huge page size of a hugetlb mapping.
#[cfg(test)]
pub(crate) fn page_nodes(
    addr: usize,
    len: usize,
    page_size: usize,
) -> Result<Vec<i32>, PlacementError> {
    if !page_size.is_power_of_two() {
        return Err(bad_page_size("move_pages", page_size));
    }
    let (first, n) = page_span(addr, len, page_size);
    query(0, (0..n).map(|i| first + i * page_size), || {
        format!(
            "pages={n}, len={}, page_size={}",
            crate::units::bytes(len as u64),
            crate::units::bytes(page_size as u64)
        )
    })
}

/// Page statuses for a sample of a range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PageSample {
    /// One status per sampled page, as `page_nodes` returns.
    pub status: Vec<i32>,
    /// Pages per sampling window: 1 when every page was queried.
    pub stride: usize,
    /// Pages in the whole range.
    pub pages_total: u64,
}

impl PageSample {
    pub(crate) fn histogram(&self) -> PageHistogram {
        PageHistogram::from_status(&self.status)
    }
}

/// A cheap stateless mix, so each sampling window gets an unrelated offset.
fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The page indexes sampled from `total` pages with at most `max_pages`
/// queries, and the stride.
///
/// One page is taken from each window of `stride` pages, at a pseudo-random
/// offset within the window. A fixed offset would alias with interleaving:
/// with two nodes interleaved page by page and an even stride, every sample
/// would land on the same node and report 100 % there.
pub(crate) fn sample_indices(total: usize, max_pages: usize) -> (usize, Vec<usize>) {
    let max_pages = max_pages.max(1);
    if total <= max_pages {
        return (1, (0..total).collect());
    }
    let stride = total.div_ceil(max_pages);
    (stride, windows(total, stride, 0).map(|(i, _)| i).collect())
}

/// One sampled page index per window of `stride` pages over `total` pages,
/// each with its window's width (`stride`, less for the last window).
/// `seed` varies the offsets between ranges.
fn windows(total: usize, stride: usize, seed: u64) -> impl Iterator<Item = (usize, usize)> {
    let stride = stride.max(1);
    (0..total.div_ceil(stride)).map(move |w| {
        let start = w * stride;
        let width = stride.min(total - start);
        let offset = (mix(seed.wrapping_add(w as u64)) % width as u64) as usize;
        (start + offset, width)
    })
}

/// Like `page_nodes`, but queries at most `max_pages` pages spread over the
/// range (see [`sample_indices`]), so checking a 16 GiB buffer of 4 KiB
/// pages (4 Mi pages) costs a fixed number of lookups. The per-node shares
/// of the sample estimate those of the whole range; a placement that is
/// 100 % on one node samples as 100 %.
pub(crate) fn page_nodes_sampled(
    addr: usize,
    len: usize,
    page_size: usize,
    max_pages: usize,
) -> Result<PageSample, PlacementError> {
    if !page_size.is_power_of_two() {
        return Err(bad_page_size("move_pages", page_size));
    }
    let (first, n) = page_span(addr, len, page_size);
    let (stride, indexes) = sample_indices(n, max_pages);
    let addrs = indexes.into_iter().map(|i| first + i * page_size);
    let status = query(0, addrs, || {
        format!(
            "sampled 1 in {stride} of {n} pages, page_size={}",
            crate::units::bytes(page_size as u64)
        )
    })?;
    Ok(PageSample {
        status,
        stride,
        pages_total: n as u64,
    })
}

/// The smallest stride at which one page per window of every range, each
/// range cut into its own windows, stays within `max_pages` queries; at
/// least one page per non-empty range however small `max_pages` is.
pub(crate) fn stride_for(pages: &[usize], max_pages: usize) -> usize {
    let max_pages = max_pages.max(1);
    let samples = |s: usize| pages.iter().map(|n| n.div_ceil(s)).sum::<usize>();
    let total: usize = pages.iter().sum();
    let mut hi = pages.iter().copied().max().unwrap_or(1).max(1);
    if samples(hi) > max_pages {
        return hi;
    }
    let mut lo = total.div_ceil(max_pages).clamp(1, hi);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if samples(mid) <= max_pages {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    hi
}

/// One queried page of a [`RangesSample`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SampledPage {
    pub addr: usize,
    /// Pages of its window, which it stands for.
    pub weight: u64,
    /// Its node, or a negative errno as `page_nodes` gives.
    pub status: i32,
}

/// A sample of the pages of several ranges of one process: each queried
/// page stands for the pages of its window.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RangesSample {
    pub pages: Vec<SampledPage>,
    /// Pages per window: 1 when every page was queried.
    pub stride: u64,
    /// Pages in all ranges (the weights' sum).
    pub pages_total: u64,
}

impl RangesSample {
    /// Pages per node, estimated.
    #[cfg(test)]
    pub(crate) fn by_node(&self) -> BTreeMap<usize, u64> {
        let mut out = BTreeMap::new();
        for p in &self.pages {
            if let Ok(node) = usize::try_from(p.status) {
                *out.entry(node).or_insert(0) += p.weight;
            }
        }
        out
    }

    /// Pages on any node, estimated.
    #[cfg(test)]
    pub(crate) fn resident(&self) -> u64 {
        self.by_node().values().sum()
    }

    /// Pages not resident, estimated: not faulted in (`-ENOENT`), or
    /// unmapped since the ranges were listed or mapping the shared zero page
    /// (`-EFAULT`).
    #[cfg(test)]
    pub(crate) fn not_resident(&self) -> u64 {
        self.pages
            .iter()
            .filter(|p| p.status == NOT_PRESENT || p.status == -libc::EFAULT)
            .map(|p| p.weight)
            .sum()
    }
}

/// The node of one page per window of `stride` pages of each of `ranges`
/// (address, length) of process `pid` (0: this one), at a pseudo-random
/// offset in the window as [`sample_indices`] does; every page at stride 1.
/// [`stride_for`] picks the stride for a budget of queries. Each range has
/// windows of its own, so a range whose pages are all on one node is counted
/// exactly, and the weights of all ranges sum exactly to their size. The
/// same ranges and stride give the same pages at every call. Nothing moves.
pub(crate) fn sample_ranges_of(
    pid: i32,
    ranges: &[(usize, usize)],
    page_size: usize,
    stride: usize,
) -> Result<RangesSample, PlacementError> {
    if !page_size.is_power_of_two() {
        return Err(bad_page_size("move_pages", page_size));
    }
    let stride = stride.max(1);
    let mut pages = Vec::new();
    let mut total = 0;
    for &(addr, len) in ranges {
        let (first, n) = page_span(addr, len, page_size);
        total += n;
        for (i, width) in windows(n, stride, (first / page_size) as u64) {
            pages.push(SampledPage {
                addr: first + i * page_size,
                weight: width as u64,
                status: 0,
            });
        }
    }
    let status = query(pid, pages.iter().map(|p| p.addr), || {
        format!(
            "pid={pid}, {} of {total} pages in {} ranges, page_size={}",
            pages.len(),
            ranges.len(),
            crate::units::bytes(page_size as u64)
        )
    })?;
    for (p, s) in pages.iter_mut().zip(status) {
        p.status = s;
    }
    Ok(RangesSample {
        pages,
        stride: stride as u64,
        pages_total: total as u64,
    })
}

/// Moves the present pages of `addr..addr+len` to `node` and returns where
/// they are afterwards. Pages that could not move keep their old node, or
/// show a negative errno (`-EBUSY` for pinned pages, `-ENOMEM` for a full
/// node); pages not present stay not present.
#[cfg(test)]
pub(crate) fn migrate_range(
    addr: usize,
    len: usize,
    page_size: usize,
    node: usize,
) -> Result<PageHistogram, PlacementError> {
    if !page_size.is_power_of_two() {
        return Err(bad_page_size("move_pages", page_size));
    }
    let (first, n) = page_span(addr, len, page_size);
    let target = i32::try_from(node).unwrap_or(i32::MAX);
    let args = || format!("len={}, node={node}", crate::units::bytes(len as u64));
    let mut hist = PageHistogram::default();
    let mut addrs = Vec::with_capacity(n.min(MOVE_PAGES_BATCH));
    let mut start = 0;
    while start < n {
        let count = (n - start).min(MOVE_PAGES_BATCH);
        addrs.clear();
        addrs.extend((start..start + count).map(|i| first + i * page_size));
        let nodes = vec![target; count];
        let mut status = vec![0; count];
        sys::move_pages(&addrs, Some(&nodes), &mut status, sys::MPOL_MF_MOVE).map_err(|e| {
            let hint = match e.raw_os_error() {
                Some(libc::ENODEV) | Some(libc::EINVAL) => Some(format!(
                    "node {node} is not online or has no memory (nodes with memory: {})",
                    sys::nodes_with_memory()
                )),
                Some(libc::EACCES) => Some(format!(
                    "node {node} is outside this process's cpuset (Mems_allowed_list: {})",
                    sys::mems_allowed().map_or("unknown".into(), |s| s.to_list())
                )),
                _ => None,
            };
            let err = query_error(e, args());
            match hint {
                Some(h) => err.with_hint(h),
                None => err,
            }
        })?;
        let part = PageHistogram::from_status(&status);
        for (node, count) in part.by_node {
            *hist.by_node.entry(node).or_insert(0) += count;
        }
        hist.not_present += part.not_present;
        hist.errors += part.errors;
        start += count;
    }
    Ok(hist)
}

/// The node of the page at `addr` (`get_mempolicy` with `MPOL_F_NODE |
/// MPOL_F_ADDR`). Unlike `page_nodes` this faults the page in if it is not
/// present, so an untouched page gets placed by the lookup itself.
#[cfg(test)]
pub(crate) fn page_node(addr: usize) -> Result<usize, PlacementError> {
    let mode = sys::get_mempolicy(&mut [], addr, sys::MPOL_F_NODE | sys::MPOL_F_ADDR)
        .map_err(|e| PlacementError::new("get_mempolicy", format!("addr={addr:#x}"), e))?;
    usize::try_from(mode).map_err(|_| {
        PlacementError::new(
            "get_mempolicy",
            format!("addr={addr:#x}"),
            io::Error::other(format!("the kernel reported node {mode}")),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> usize {
        crate::sys::mmap::base_page_size()
    }

    /// The page-aligned part of a vector's buffer.
    fn aligned(v: &[u64]) -> (usize, usize) {
        let start = (v.as_ptr() as usize).next_multiple_of(page());
        let end = (v.as_ptr() as usize + v.len() * 8) & !(page() - 1);
        (start, end - start)
    }

    #[test]
    fn touched_memory_is_on_a_node_this_process_may_use() {
        let v: Vec<u64> = (0..64 * page() as u64 / 8).map(|i| i | 1).collect();
        let (addr, len) = aligned(&v);
        let status = page_nodes(addr, len, page()).unwrap();
        assert_eq!(status.len(), len / page());
        let hist = PageHistogram::from_status(&status);
        assert_eq!(hist.present(), status.len() as u64);
        let allowed = sys::mems_allowed().unwrap_or_else(sys::online_nodes);
        assert_eq!(hist.on_nodes_pct(&allowed), Some(100.0));
        // On a one-node machine that node holds everything.
        if sys::online_nodes().len() == 1 {
            let node = sys::online_nodes().first().unwrap();
            assert_eq!(hist.on_node_pct(node), Some(100.0));
            if sys::kernel_has_numa() {
                assert_eq!(page_node(addr).unwrap(), node);
            }
        }
        std::hint::black_box(&v);
    }

    #[test]
    fn untouched_memory_is_not_present() {
        // Large enough that the allocator maps it fresh and leaves it untouched.
        let v: Vec<u64> = Vec::with_capacity(8 << 20);
        let start = (v.as_ptr() as usize + page()).next_multiple_of(page());
        let len = 1000 * page();
        let hist = PageHistogram::from_status(&page_nodes(start, len, page()).unwrap());
        assert_eq!(hist.not_present, 1000, "{hist:?}");
        assert_eq!(hist.present(), 0);
        assert_eq!(hist.on_node_pct(0), None);
        drop(v);
    }

    #[test]
    fn unmapped_addresses_are_errors_not_failures() {
        // Page 0 is never mapped in a Linux process.
        let hist = PageHistogram::from_status(&page_nodes(0, 4 * page(), page()).unwrap());
        assert_eq!(hist.errors, 4);
    }

    #[test]
    fn large_ranges_are_batched() {
        let pages = MOVE_PAGES_BATCH * 2 + 17;
        let v: Vec<u64> = Vec::with_capacity((pages + 2) * page() / 8);
        let start = (v.as_ptr() as usize).next_multiple_of(page());
        let status = page_nodes(start, pages * page(), page()).unwrap();
        assert_eq!(status.len(), pages);
        assert!(status.iter().all(|&s| s == NOT_PRESENT || s >= 0));
    }

    #[test]
    fn spans_cover_partial_pages() {
        assert_eq!(page_span(4096, 4096, 4096), (4096, 1));
        assert_eq!(page_span(4097, 4096, 4096), (4096, 2));
        assert_eq!(page_span(4096, 0, 4096), (4096, 0));
        assert!(page_nodes(0, 10, 3000).is_err());
    }

    #[test]
    fn samples_are_spread_and_unaliased() {
        let (stride, idx) = sample_indices(10, 100);
        assert_eq!((stride, idx.len()), (1, 10));
        let (stride, idx) = sample_indices(1_000_003, 1000);
        assert_eq!(stride, 1001);
        assert!(idx.len() <= 1000);
        for (w, &i) in idx.iter().enumerate() {
            assert!(i >= w * stride && i < ((w + 1) * stride).min(1_000_003));
        }
        // Both parities show up, so a two-node page interleave is seen as such.
        let (_, idx) = sample_indices(1 << 22, 1 << 12);
        let odd = idx.iter().filter(|&&i| i % 2 == 1).count();
        assert!(odd > idx.len() / 3 && odd < idx.len() * 2 / 3, "{odd}");
    }

    #[test]
    fn sampled_query_matches_full_query_on_uniform_memory() {
        let v: Vec<u64> = (0..256 * page() as u64 / 8).map(|i| i ^ 0x55).collect();
        let (addr, len) = aligned(&v);
        let sample = page_nodes_sampled(addr, len, page(), 16).unwrap();
        assert!(sample.status.len() <= 16);
        assert_eq!(sample.pages_total, (len / page()) as u64);
        let full = PageHistogram::from_status(&page_nodes(addr, len, page()).unwrap());
        let node = *full.by_node.keys().next().unwrap();
        assert_eq!(sample.histogram().on_node_pct(node), full.on_node_pct(node));
        std::hint::black_box(&v);
    }

    #[test]
    fn strides_keep_within_the_budget_and_no_wider() {
        let within = |pages: &[usize], max: usize| {
            let s = stride_for(pages, max);
            let n = |s: usize| pages.iter().map(|p| p.div_ceil(s)).sum::<usize>();
            assert!(n(s) <= max, "{pages:?} {max}: stride {s}");
            // The next narrower stride would go over.
            assert!(s == 1 || n(s - 1) > max, "{pages:?} {max}: stride {s}");
            s
        };
        assert_eq!(within(&[100], 1000), 1);
        assert_eq!(within(&[1000], 100), 10);
        assert_eq!(within(&[1000, 1], 100), 11);
        assert_eq!(within(&[262_144, 2048, 2048, 33], 16_384), 17);
        within(&[1 << 20, 1 << 20, 7, 512, 3], 16_384);
        // More ranges than the budget: one page each.
        assert_eq!(stride_for(&[10, 10, 10], 1), 10);
        assert_eq!(stride_for(&[], 16), 1);
    }

    #[test]
    fn sampled_ranges_count_uniform_ranges_exactly() {
        // One range written, one never touched: each is all on one node or
        // all absent, so the estimate is exact whatever the stride.
        let touched: Vec<u64> = (0..300 * page() as u64 / 8).map(|i| i | 3).collect();
        let untouched: Vec<u64> = Vec::with_capacity(8 << 20);
        let (a, alen) = aligned(&touched);
        let b = (untouched.as_ptr() as usize).next_multiple_of(page());
        let blen = 500 * page();
        let ranges = [(a, alen), (b, blen)];
        let pages = [alen / page(), blen / page()];
        for max in [1000, 64, 7] {
            let stride = stride_for(&pages, max);
            let s = sample_ranges_of(0, &ranges, page(), stride).unwrap();
            assert!(s.pages.len() <= max.max(2), "{s:?}");
            assert_eq!(s.stride as usize, stride);
            assert_eq!(s.resident(), (alen / page()) as u64, "{s:?}");
            assert_eq!(s.not_resident(), 500, "{s:?}");
            assert_eq!(s.pages_total, s.resident() + s.not_resident());
            let weights: u64 = s.pages.iter().map(|p| p.weight).sum();
            assert_eq!(weights, s.pages_total);
            // The same call queries the same pages.
            let again = sample_ranges_of(0, &ranges, page(), stride).unwrap();
            assert_eq!(again, s);
        }
        let all = sample_ranges_of(0, &ranges, page(), 1).unwrap();
        assert_eq!(all.pages.len() as u64, all.pages_total);
        assert!(sample_ranges_of(0, &ranges, 3000, 1).is_err());
        std::hint::black_box((&touched, &untouched));
    }

    #[test]
    fn migrating_to_a_node_without_memory_fails_with_a_hint() {
        let v: Vec<u64> = (0..8 * page() as u64 / 8).map(|i| i + 7).collect();
        let (addr, len) = aligned(&v);
        let missing = sys::online_nodes().end();
        let e = migrate_range(addr, len, page(), missing).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENODEV), "{e}");
        assert!(
            e.to_string()
                .contains(&format!("node {missing} is not online")),
            "{e}"
        );
        // Moving to the node the pages are already on succeeds.
        let node = page_node(addr).unwrap();
        let hist = migrate_range(addr, len, page(), node).unwrap();
        assert_eq!(hist.on_node_pct(node), Some(100.0));
        std::hint::black_box(&v);
    }
}
