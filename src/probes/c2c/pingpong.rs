//! The inner loops: a cache line handed between two threads, each pinned
//! to one CPU of the pair. Side `a` is timed (it keeps the samples); side
//! `b` answers. Every wait is a spin on one line, as core-to-core-latency
//! spins (no pause instruction); every 1024 failed looks a waiting side
//! also looks at the stop flag, so a stop or a failed partner never leaves
//! a thread spinning.
//!
//! - `cas`: one line; `a` swaps the flag PONG -> PING, `b` swaps PING ->
//!   PONG, each retrying until it succeeds (core-to-core-latency's test 1,
//!   relaxed compare-exchange). One-way latency = round trip / 2.
//! - `store`: two lines; each side waits until the other's line holds the
//!   value it expects, then stores its own on its own line (acquire loads,
//!   release stores; core-to-core-latency's test 2). Round trip / 2.
//! - `clean-read` / `modified-read`: a chase through a block of lines.
//!   Each round `b` (the owner) prepares the lines, then `a` reads them as
//!   a dependent chain in a random cyclic order: each load misses `a`'s
//!   caches and finds the line in `b`'s. Each round `b` links the lines in
//!   a new random cycle (so no prefetcher learns the order); for
//!   `modified-read` that write leaves them modified in its caches and
//!   invalid in `a`'s; for `clean-read`, `b` then flushes them from every
//!   cache and reads them back, so they are clean (exclusive) in its caches
//!   and nowhere else. Latency = chase time / lines, one way.

use crate::ids::NodeSet;
use crate::memory::{AtomicWords, Buffer, BufferOptions, PageKind, Placement};
use crate::placement::MemPolicy;
use crate::placement::sys::PlacementError;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Lines per chase block: 32 KiB, within any L2 of the owner, and enough
/// loads that the clock reads around them cost under 0.1 ns each.
pub(crate) const CHASE_LINES: usize = 256;

/// Words per slot: every flag and every chase line has a 128-byte pair of
/// lines to itself. With two chase lines in a pair, the reader's
/// adjacent-line prefetcher would fetch the second with the first, and the
/// chase would find it in its own cache.
const SLOT_WORDS: usize = 16;
const FLAG: usize = 0;
const LINE_A: usize = 1;
const LINE_B: usize = 2;
const TURN: usize = 3;
/// Set by either side that gives up (stop asked, partner failed).
const STOP: usize = 4;
/// The first chase line.
const BLOCK: usize = 5;
const SLOTS: usize = BLOCK + CHASE_LINES;
/// The bytes a pair's lines take.
pub(crate) const BYTES: usize = SLOTS * SLOT_WORDS * 8;

/// What the two threads of a pair share, in a mapping of its own, so that
/// the lines' memory (their home node, which a coherence request may have
/// to consult) is bound to a node and can be checked, not left where the
/// allocator's earlier pages happened to be.
pub(crate) struct Shared {
    mem: AtomicWords,
}

const PING: u64 = 0;
const PONG: u64 = 1;

impl Shared {
    /// The lines, on base pages bound to `node` (where given) and touched.
    pub(crate) fn new(node: Option<usize>) -> Result<Self, PlacementError> {
        let mut opts = BufferOptions::new(BYTES).pages(PageKind::Base);
        if let Some(n) = node {
            opts = opts.policy(MemPolicy::Bind(NodeSet::from_ids([n])));
        }
        let s = Shared {
            mem: AtomicWords::new(Buffer::new(&opts)?),
        };
        for slot in 0..BLOCK {
            s.slot(slot).store(PING, Ordering::Relaxed);
        }
        let next = sattolo(CHASE_LINES, 0x9e37_79b9_7f4a_7c15);
        for (i, n) in next.into_iter().enumerate() {
            s.line(i).store(n as u64, Ordering::Relaxed);
        }
        Ok(s)
    }

    /// Where the lines' pages are.
    pub(crate) fn placement(&self) -> Result<Placement, PlacementError> {
        self.mem.verify()
    }

    #[inline(always)]
    fn slot(&self, i: usize) -> &AtomicU64 {
        &self.mem.words()[i * SLOT_WORDS]
    }

    /// Chase line `i`: the index of the next.
    #[inline(always)]
    fn line(&self, i: usize) -> &AtomicU64 {
        self.slot(BLOCK + i)
    }

    /// Asks both sides to give up.
    pub(crate) fn raise_stop(&self) {
        self.slot(STOP).store(1, Ordering::Relaxed);
    }

    pub(crate) fn stop_raised(&self) -> bool {
        self.slot(STOP).load(Ordering::Relaxed) != 0
    }

    /// Spins until `done` holds; false where the stop flag was raised first.
    ///
    /// One look per pass, with a counter that looks at the stop flag every
    /// 1024 looks. A loop without a trip count is not unrolled; the
    /// counted form (`for _ in 0..1024`) was, five looks to a pass, and on
    /// an AMD Zen 1 that shape alone moved the store handoff from 107 to
    /// 80 ns (medians of 300 samples, alternating runs) while a C loop of
    /// one look per pass and core-to-core-latency's (a bare `while`) read
    /// 108-115 ns: the figure followed the spin loop's code, not the line.
    #[inline(always)]
    fn wait(&self, mut done: impl FnMut() -> bool) -> bool {
        let mut looks: u32 = 0;
        loop {
            if done() {
                return true;
            }
            looks = looks.wrapping_add(1);
            if looks.is_multiple_of(1024) && self.stopping() {
                return false;
            }
        }
    }

    fn stopping(&self) -> bool {
        if crate::interrupt::requested().is_some() {
            self.raise_stop();
        }
        self.stop_raised()
    }

    /// Side `a` of `cas`: `samples` samples of `iters` round trips, each the
    /// one-way latency in ns; `None` after a stop.
    #[inline(never)]
    pub(crate) fn cas_a(&self, iters: u64, samples: usize) -> Option<Vec<f64>> {
        let f = self.slot(FLAG);
        let mut out = Vec::with_capacity(samples);
        for _ in 0..samples {
            let t0 = Instant::now();
            for _ in 0..iters {
                let swap = || {
                    f.compare_exchange(PONG, PING, Ordering::Relaxed, Ordering::Relaxed)
                        .is_ok()
                };
                if !self.wait(swap) {
                    return None;
                }
            }
            out.push(one_way(t0, iters));
        }
        Some(out)
    }

    /// Side `b` of `cas`: answers `iters * samples` round trips.
    #[inline(never)]
    pub(crate) fn cas_b(&self, total: u64) -> bool {
        let f = self.slot(FLAG);
        for _ in 0..total {
            let swap = || {
                f.compare_exchange(PING, PONG, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
            };
            if !self.wait(swap) {
                return false;
            }
        }
        true
    }

    /// Side `a` of `store`.
    #[inline(never)]
    pub(crate) fn store_a(&self, iters: u64, samples: usize) -> Option<Vec<f64>> {
        let (mine, theirs) = (self.slot(LINE_A), self.slot(LINE_B));
        let mut v = 1;
        let mut out = Vec::with_capacity(samples);
        for _ in 0..samples {
            let t0 = Instant::now();
            for _ in 0..iters {
                if !self.wait(|| theirs.load(Ordering::Acquire) == v) {
                    return None;
                }
                mine.store(v, Ordering::Release);
                v ^= 1;
            }
            out.push(one_way(t0, iters));
        }
        Some(out)
    }

    /// Side `b` of `store`: starts the exchange by storing first.
    #[inline(never)]
    pub(crate) fn store_b(&self, total: u64) -> bool {
        let (mine, theirs) = (self.slot(LINE_B), self.slot(LINE_A));
        let mut v = 0;
        for _ in 0..total {
            if !self.wait(|| theirs.load(Ordering::Acquire) == v) {
                return false;
            }
            mine.store(v ^ 1, Ordering::Release);
            v ^= 1;
        }
        true
    }

    /// Side `a` of the read variants: `samples` timed chases through the
    /// block, each after `b` prepared it; ns per line.
    #[inline(never)]
    pub(crate) fn read_a(&self, samples: usize) -> Option<Vec<f64>> {
        let turn = self.slot(TURN);
        let mut out = Vec::with_capacity(samples);
        for round in 0..samples as u64 {
            if !self.wait(|| turn.load(Ordering::Acquire) == 2 * round + 1) {
                return None;
            }
            let t0 = Instant::now();
            let mut i = 0;
            for _ in 0..CHASE_LINES {
                i = self.line(i).load(Ordering::Relaxed) as usize;
            }
            let ns = t0.elapsed().as_nanos() as f64;
            black_box(i);
            out.push(ns / CHASE_LINES as f64);
            turn.store(2 * round + 2, Ordering::Release);
        }
        Some(out)
    }

    /// Side `b` of the read variants: before each of `samples` chases,
    /// links the block in a new random cycle (a fixed order could be
    /// learnt by a prefetcher over hundreds of rounds) and leaves it clean
    /// (flushed from every cache, then read) or modified (as written) in
    /// its own caches.
    #[inline(never)]
    pub(crate) fn read_b(&self, samples: usize, clean: bool) -> bool {
        let turn = self.slot(TURN);
        for round in 0..samples as u64 {
            let next = sattolo(CHASE_LINES, round + 1);
            if !self.wait(|| turn.load(Ordering::Acquire) == 2 * round) {
                return false;
            }
            for (i, n) in next.into_iter().enumerate() {
                self.line(i).store(n as u64, Ordering::Relaxed);
            }
            if clean {
                for i in 0..CHASE_LINES {
                    flush_line(self.line(i));
                }
                flush_fence();
                let mut sum = 0;
                for i in 0..CHASE_LINES {
                    sum += self.line(i).load(Ordering::Relaxed);
                }
                black_box(sum);
            }
            turn.store(2 * round + 1, Ordering::Release);
        }
        true
    }
}

fn one_way(t0: Instant, iters: u64) -> f64 {
    t0.elapsed().as_nanos() as f64 / iters as f64 / 2.0
}

/// A random cyclic permutation of `0..n` (Sattolo's algorithm): following
/// `next` from any index visits every index once before returning.
fn sattolo(n: usize, seed: u64) -> Vec<usize> {
    let mut s = seed;
    let mut rand = move || {
        // splitmix64
        s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = (rand() % i as u64) as usize;
        order.swap(i, j);
    }
    let mut next = vec![0; n];
    for k in 0..n {
        next[order[k]] = order[(k + 1) % n];
    }
    next
}

/// Whether this CPU architecture can flush a line from every cache from
/// user space, which `clean-read` needs.
pub(crate) const CAN_FLUSH: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));

/// Writes the line holding `p` back to memory and removes it from every
/// cache of the machine (x86 `clflush`, Arm `dc civac`); nothing elsewhere.
#[inline(always)]
fn flush_line<T>(p: &T) {
    let p = std::ptr::from_ref(p).cast::<u8>();
    // SAFETY: `p` comes from a reference, so it points into memory mapped
    // for this process; flushing a line only moves its (unchanged) contents
    // to memory and never alters what any load returns.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::x86_64::_mm_clflush(p)
    };
    // SAFETY: as above; `dc civac` is allowed at EL0 on Linux.
    #[cfg(target_arch = "aarch64")]
    unsafe {
        std::arch::asm!("dc civac, {0}", in(reg) p, options(nostack, preserves_flags))
    };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = p;
}

/// Orders the flushes before the loads that follow them.
#[inline(always)]
fn flush_fence() {
    // SAFETY: a fence instruction; it reads and writes no memory.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::x86_64::_mm_mfence()
    };
    // SAFETY: a barrier instruction; it reads and writes no memory.
    #[cfg(target_arch = "aarch64")]
    unsafe {
        std::arch::asm!("dsb ish", options(nostack, preserves_flags))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chase_visits_every_line_once_per_cycle() {
        let next = sattolo(CHASE_LINES, 7);
        let mut seen = vec![false; CHASE_LINES];
        let mut i = 0;
        for _ in 0..CHASE_LINES {
            assert!(!seen[i], "line {i} visited twice");
            seen[i] = true;
            i = next[i];
        }
        assert_eq!(i, 0);
        assert!(seen.iter().all(|s| *s));
    }

    #[test]
    fn lines_are_apart_and_linked() {
        // Every flag and chase line alone in a 128-byte pair of lines.
        let s = Shared::new(None).unwrap();
        let addrs: Vec<usize> = (0..SLOTS)
            .map(|i| std::ptr::from_ref(s.slot(i)) as usize)
            .collect();
        assert!(addrs.iter().all(|a| a % 128 == 0));
        assert!(addrs.windows(2).all(|w| w[1] - w[0] == 128));
        assert_eq!(s.slot(FLAG).load(Ordering::Relaxed), PING);
        let mut i = 0;
        for _ in 0..CHASE_LINES {
            i = s.line(i).load(Ordering::Relaxed) as usize;
            assert!(i < CHASE_LINES);
        }
        assert_eq!(i, 0, "one cycle through every line");
    }

    #[test]
    fn the_lines_live_on_the_node_asked_for() {
        let node = crate::placement::sys::online_nodes().first().unwrap();
        let s = Shared::new(Some(node)).unwrap();
        let p = s.placement().unwrap();
        assert_eq!(p.on_target_pct, Some(100.0));
        assert_eq!(p.pages_by_node.keys().copied().collect::<Vec<_>>(), [node]);
        let missing = crate::placement::sys::online_nodes().end();
        assert!(Shared::new(Some(missing)).is_err());
    }
}
