//! How a team thread's arrays lie in memory: each thread's own mapping, or
//! its block of one region bound to a node that teams of any size share
//! ([`NodeArrays`]). Blocks are checked by address ([`Span`]), so a block
//! lent out to a thread can still have its pages' nodes asked.

use super::super::sizing::array_bytes;
use crate::ids::NodeSet;
use crate::memory::buffer::VERIFY_MAX_PAGES;
use crate::memory::{Buffer, BufferOptions, PageKind, Placement};
use crate::placement::{MemPolicy, pages, pin_and_check};
use anyhow::{Result, anyhow, bail};
use std::ops::Range;

/// Gap between arrays of one thread: 17 cache lines, so `src[i]` and
/// `dst[i]` never share their low 12 address bits (4 KiB aliasing stalls
/// loads behind unrelated stores) or an L1 set.
pub(super) const ARRAY_GAP: usize = 17 * 64;

/// Blocks of a shared region start on this boundary.
const BLOCK_ALIGN: usize = 4096;

/// Bytes from one array's start to the next.
pub(crate) fn stride(array_bytes: usize) -> usize {
    array_bytes.div_ceil(4096) * 4096 + ARRAY_GAP
}

/// Bytes `arrays` arrays of `array_bytes` take, laid out as a team thread
/// lays them out.
pub(crate) fn layout_bytes(array_bytes: usize, arrays: usize) -> usize {
    stride(array_bytes) * arrays
}

/// Ordinary, distinct, non-zero doubles: arithmetic kernels must not meet
/// denormals (microcode assists) or NaNs, and zero pages or identical pages
/// (KSM) must not stand in for real memory.
pub(super) fn fill_doubles(words: &mut [u64], salt: u64) {
    for (i, w) in words.iter_mut().enumerate() {
        *w = (1.0 + (i as f64 + salt as f64 * 0.5) * 1e-9).to_bits();
    }
    std::hint::black_box(words);
}

/// Runs `f` on a thread pinned to `cpu`, handing it the CPU it runs on.
pub(crate) fn pinned<T: Send>(cpu: usize, f: impl FnOnce(usize) -> Result<T> + Send) -> Result<T> {
    std::thread::scope(|scope| {
        crate::sys::threads::spawn_scoped(scope, (0, 1), || -> Result<T> {
            let seen =
                pin_and_check(cpu).map_err(|e| anyhow!("cannot pin a thread to CPU {cpu}: {e}"))?;
            f(seen)
        })?
        .join()
        .map_err(|_| anyhow!("the thread pinned to CPU {cpu} panicked"))?
    })
}

/// A byte range of a mapping meant to lie on one node, checked by address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub addr: usize,
    pub len: usize,
    page_size: usize,
    hugetlb: bool,
    node: usize,
}

impl Span {
    /// All of `buffer`, meant for `node`.
    pub(crate) fn of(buffer: &Buffer, node: usize) -> Span {
        Span {
            addr: buffer.addr(),
            len: buffer.len(),
            page_size: buffer.page_size(),
            hugetlb: matches!(buffer.page_kind(), PageKind::HugeTlb(_)),
            node,
        }
    }

    /// `range` (bytes from this span's start) of this span.
    fn part(&self, range: Range<usize>) -> Span {
        assert!(
            range.end <= self.len,
            "{range:?} is past {} bytes",
            self.len
        );
        Span {
            addr: self.addr + range.start,
            len: range.len(),
            ..*self
        }
    }

    /// Where the span's pages are now, as [`Buffer::verify`] says of a
    /// whole buffer: at most [`VERIFY_MAX_PAGES`] pages asked, the share on
    /// the span's node, the share in huge pages.
    pub(crate) fn verify(&self) -> Result<Placement> {
        let sample =
            pages::page_nodes_sampled(self.addr, self.len, self.page_size, VERIFY_MAX_PAGES)?;
        let hist = sample.histogram();
        let huge_pct = if self.hugetlb {
            100.0
        } else {
            let (start, end) = (self.addr as u64, (self.addr + self.len) as u64);
            let huge = crate::procfs::smaps::self_huge_bytes(start, end);
            (huge as f64 * 100.0 / self.len.max(1) as f64).min(100.0)
        };
        Ok(Placement {
            on_target_pct: hist.on_nodes_pct(&NodeSet::from_ids([self.node])),
            pages_by_node: hist.by_node,
            huge_pct,
            pages_checked: sample.status.len() as u64,
            pages_total: sample.pages_total,
        })
    }
}

/// Bytes of thread `i`'s block in a team of `threads` sharing a working
/// set of `working_set` bytes in `arrays` arrays each: its arrays as a
/// thread lays them out, rounded up to [`BLOCK_ALIGN`].
pub(crate) fn block_bytes(working_set: usize, arrays: usize, threads: usize) -> usize {
    layout_bytes(array_bytes(working_set, arrays, threads), arrays).next_multiple_of(BLOCK_ALIGN)
}

/// The block of each thread of a team of `threads`, in bytes from the
/// region's start: one after another, each [`block_bytes`] long.
pub(crate) fn block_ranges(working_set: usize, arrays: usize, threads: usize) -> Vec<Range<usize>> {
    let b = block_bytes(working_set, arrays, threads);
    (0..threads).map(|i| i * b..(i + 1) * b).collect()
}

/// Bytes a region needs so that every team of 1 to `max_threads` threads
/// finds its blocks in it.
pub(crate) fn region_bytes(working_set: usize, arrays: usize, max_threads: usize) -> usize {
    (1..=max_threads.max(1))
        .map(|n| n * block_bytes(working_set, arrays, n))
        .max()
        .unwrap_or(0)
}

/// Bandwidth arrays of one working set on one node, mapped and filled once:
/// a team of n threads on any CPUs runs over it, thread i in its own block
/// ([`block_ranges`]), as each would over arrays of its own.
#[derive(Debug)]
pub(crate) struct NodeArrays {
    buffer: Buffer,
    node: usize,
    working_set: usize,
    arrays: usize,
    max_threads: usize,
}

impl NodeArrays {
    /// Maps the region for teams of up to `max_threads` threads sharing
    /// `working_set` bytes in `arrays` arrays each, bound to `node`, and
    /// fills it from a thread pinned to `cpu` (the first touch).
    pub(crate) fn build(
        (node, working_set): (usize, usize),
        (arrays, max_threads): (usize, usize),
        pages: PageKind,
        cpu: usize,
    ) -> Result<NodeArrays> {
        if arrays == 0 || max_threads == 0 {
            bail!("bandwidth arrays for {max_threads} thread(s) of {arrays} array(s)");
        }
        let len = region_bytes(working_set, arrays, max_threads);
        let buffer = pinned(cpu, |_| {
            let opts = BufferOptions::new(len)
                .pages(pages)
                .touch(false)
                .policy(MemPolicy::Bind(NodeSet::from_ids([node])));
            let mut buffer = Buffer::new(&opts).map_err(|e| anyhow!("node {node}: {e}"))?;
            fill_doubles(buffer.as_mut_slice::<u64>(), node as u64);
            Ok(buffer)
        })?;
        Ok(NodeArrays {
            buffer,
            node,
            working_set,
            arrays,
            max_threads,
        })
    }

    pub(crate) fn node(&self) -> usize {
        self.node
    }

    /// Arrays per thread the region is laid out for.
    pub(crate) fn arrays(&self) -> usize {
        self.arrays
    }

    pub(crate) fn max_threads(&self) -> usize {
        self.max_threads
    }

    /// Bytes per array of each thread of a team of `threads`.
    pub(crate) fn array_bytes(&self, threads: usize) -> usize {
        array_bytes(self.working_set, self.arrays, threads)
    }

    pub(crate) fn page_kind(&self) -> PageKind {
        self.buffer.page_kind()
    }

    pub(crate) fn fallback_reason(&self) -> Option<&str> {
        self.buffer.fallback_reason()
    }

    /// All of the region.
    pub(crate) fn span(&self) -> Span {
        Span::of(&self.buffer, self.node)
    }

    /// The block of each thread of a team of `threads`, each with where it
    /// lies; disjoint borrows of the one region.
    pub(crate) fn blocks(&mut self, threads: usize) -> Vec<(&mut [u64], Span)> {
        assert!(
            (1..=self.max_threads).contains(&threads),
            "a team of {threads} on arrays for up to {}",
            self.max_threads
        );
        let whole = self.span();
        let ranges = block_ranges(self.working_set, self.arrays, threads);
        let mut rest = self.buffer.as_mut_slice::<u64>();
        let mut out = Vec::with_capacity(threads);
        for r in ranges {
            let (block, tail) = std::mem::take(&mut rest).split_at_mut(r.len() / 8);
            out.push((block, whole.part(r)));
            rest = tail;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_disjoint_aligned_and_inside_the_region_for_every_team_size() {
        for (ws, arrays, max) in [
            (64 << 20, 3, 8),
            (100_000, 2, 5),
            (8 << 20, 4, 64),
            (1 << 20, 1, 3),
        ] {
            let region = region_bytes(ws, arrays, max);
            for n in 1..=max {
                let ranges = block_ranges(ws, arrays, n);
                assert_eq!(ranges.len(), n);
                let needed = layout_bytes(array_bytes(ws, arrays, n), arrays);
                for (i, r) in ranges.iter().enumerate() {
                    assert_eq!(r.start % BLOCK_ALIGN, 0, "{ws} {n}: {r:?}");
                    assert!(r.len() >= needed, "{ws} {n}: {r:?} < {needed}");
                    assert!(r.end <= region, "{ws} {n}: {r:?} past {region}");
                    if let Some(next) = ranges.get(i + 1) {
                        assert!(r.end <= next.start, "{ws} {n}: {r:?} {next:?}");
                    }
                }
            }
            // No bigger than the largest team needs.
            assert!(
                (1..=max).any(|n| block_ranges(ws, arrays, n).last().unwrap().end == region),
                "{ws} {max}"
            );
        }
    }

    #[test]
    fn a_team_of_one_gets_the_whole_working_set_and_more_threads_share_it() {
        let ws = 96 << 20;
        let rounded = |b: usize| b.next_multiple_of(BLOCK_ALIGN);
        assert_eq!(block_bytes(ws, 3, 1), rounded(layout_bytes(32 << 20, 3)));
        assert_eq!(block_bytes(ws, 3, 2), rounded(layout_bytes(16 << 20, 3)));
        // The region stays about one working set, not one per team size.
        let region = region_bytes(ws, 3, 16);
        assert!(region < ws + 16 * 3 * (ARRAY_GAP + BLOCK_ALIGN), "{region}");
    }

    /// A CPU this test may run on and its node.
    fn local_seat() -> (usize, usize) {
        let topo = crate::topology::read_topology(&crate::topology::SysfsRoot::live()).unwrap();
        let seat = crate::probes::seats::spread(&topo, 1)[0];
        (seat.cpu, seat.node)
    }

    #[test]
    fn node_arrays_lend_each_thread_its_own_block_on_the_node() {
        let (cpu, node) = local_seat();
        let ws = 6 << 20;
        let mut arrays = NodeArrays::build((node, ws), (3, 4), PageKind::Base, cpu).unwrap();
        let whole = arrays.span();
        assert_eq!(whole.len, region_bytes(ws, 3, 4));
        for n in 1..=4 {
            let blocks = arrays.blocks(n);
            assert_eq!(blocks.len(), n);
            let mut ends = whole.addr;
            for (i, (words, span)) in blocks.iter().enumerate() {
                assert_eq!(span.addr, words.as_ptr() as usize);
                assert_eq!(span.len, words.len() * 8);
                assert!(span.addr >= ends && span.addr + span.len <= whole.addr + whole.len);
                ends = span.addr + span.len;
                // Filled once, every word an ordinary double.
                assert!(words.iter().all(|w| f64::from_bits(*w) >= 1.0), "{n} {i}");
                let p = span.verify().unwrap();
                assert_eq!(p.on_target_pct, Some(100.0), "{n} {i}: {p:?}");
                assert_eq!(p.pages_by_node.keys().collect::<Vec<_>>(), [&node]);
                assert_eq!(p.pages_total, span.len.div_ceil(4096) as u64);
            }
        }
        // Each block's words are its own: a mark in every word of each
        // block reads back whole from every block.
        let mut blocks = arrays.blocks(4);
        for (i, (words, _)) in blocks.iter_mut().enumerate() {
            words.fill(i as u64);
        }
        for (i, (words, _)) in blocks.iter().enumerate() {
            assert!(words.iter().all(|w| *w == i as u64), "block {i}");
        }
        let first = whole.part(0..4096);
        assert_eq!((first.addr, first.len), (whole.addr, 4096));
    }
}
