//! The swaps of a random shuffle, with each random partner fetched ahead,
//! and the generator ([`SplitMix64`]) the partners are drawn from.
//!
//! A chase buffer is made larger than the last-level cache on purpose, so
//! the shuffle that links it misses on nearly every random partner: as a
//! plain loop, the misses of a 7.5 GiB buffer (123 million lines) took
//! most of the 8 s a full-random latency measurement spent before its
//! first chase. The partners depend on the generator alone, never on the
//! data, so they can be drawn [`AHEAD`] swaps early and their lines
//! prefetched; the swaps themselves, and so the permutation a seed gives,
//! are exactly those of the plain loop.

/// Swaps a partner is drawn and prefetched before its swap: enough misses
/// in flight to cover memory latency, few enough for the line fill buffers.
const AHEAD: usize = 16;

/// Which shuffle: the partner of position `i` is drawn below `i`
/// (Sattolo: the permutation is a single cycle) or up to `i` (Fisher-Yates:
/// any permutation, uniformly).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Shuffle {
    SingleCycle,
    Uniform,
}

impl Shuffle {
    fn partner(self, i: usize, rng: &mut SplitMix64) -> usize {
        match self {
            Shuffle::SingleCycle => rng.below(i),
            Shuffle::Uniform => rng.below(i + 1),
        }
    }
}

/// Calls `swap(i, j)` for `i` from `n - 1` down to 1 with the partner `j`
/// drawn from `rng` as a plain shuffle loop draws it, after calling
/// `fetch(j)` [`AHEAD`] swaps earlier.
pub(super) fn swaps(
    n: usize,
    kind: Shuffle,
    rng: &mut SplitMix64,
    mut fetch: impl FnMut(usize),
    mut swap: impl FnMut(usize, usize),
) {
    let draws = n.saturating_sub(1);
    // Draw d is the partner of position n - 1 - d; it waits in the ring,
    // at d modulo AHEAD, from its fetch until its swap.
    let mut ring = [0usize; AHEAD];
    for (d, slot) in ring.iter_mut().enumerate().take(draws) {
        *slot = kind.partner(n - 1 - d, rng);
        fetch(*slot);
    }
    for k in 0..draws {
        let j = ring[k % AHEAD];
        let d = k + AHEAD;
        if d < draws {
            let next = kind.partner(n - 1 - d, rng);
            ring[d % AHEAD] = next;
            fetch(next);
        }
        swap(n - 1 - k, j);
    }
}

/// Asks the core to bring the line at `p` into the cache. A hint only: it
/// never faults, whatever `p` is, and changes no data.
#[inline(always)]
pub(super) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 does not fault on any address and writes nothing;
    // SSE, which it needs, is part of the x86_64 baseline.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>());
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: PRFM is a hint: it does not fault on any address, writes no
    // register or memory and leaves the flags alone.
    unsafe {
        std::arch::asm!("prfm pldl1keep, [{0}]", in(reg) p, options(nostack, readonly, preserves_flags));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = p;
}

/// Small, fast, well-mixed and reproducible: the shuffle needs no more.
pub(super) struct SplitMix64(pub(super) u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` up to a bias of n / 2^64 (multiply-shift).
    pub(super) fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain loop the prefetching one must match swap for swap.
    fn plain(n: usize, kind: Shuffle, seed: u64) -> Vec<(usize, usize)> {
        let mut rng = SplitMix64(seed);
        (1..n)
            .rev()
            .map(|i| (i, kind.partner(i, &mut rng)))
            .collect()
    }

    #[test]
    fn kernels_shuffle_swaps_are_the_plain_loops_and_each_is_fetched_first() {
        for kind in [Shuffle::SingleCycle, Shuffle::Uniform] {
            for n in [0, 1, 2, 3, AHEAD - 1, AHEAD, AHEAD + 1, 2 * AHEAD + 3, 1000] {
                let mut rng = SplitMix64(n as u64 * 31 + 7);
                let fetched = std::cell::RefCell::new(Vec::new());
                let mut swapped = Vec::new();
                swaps(
                    n,
                    kind,
                    &mut rng,
                    |j| fetched.borrow_mut().push(j),
                    |i, j| {
                        // Every partner was fetched before its swap, and at
                        // most AHEAD swaps early.
                        let (k, fetched) = (swapped.len(), fetched.borrow());
                        assert!(fetched.len() > k, "{kind:?} n {n}: swap {k} not fetched");
                        assert!(fetched.len() <= k + AHEAD + 1);
                        assert_eq!(fetched[k], j);
                        swapped.push((i, j));
                    },
                );
                let fetched = fetched.into_inner();
                assert_eq!(swapped, plain(n, kind, n as u64 * 31 + 7), "{kind:?} n {n}");
                assert_eq!(fetched.len(), swapped.len());
            }
        }
    }

    #[test]
    fn kernels_shuffle_partners_stay_in_range() {
        let mut rng = SplitMix64(3);
        swaps(
            500,
            Shuffle::SingleCycle,
            &mut rng,
            |_| {},
            |i, j| assert!(j < i),
        );
        swaps(
            500,
            Shuffle::Uniform,
            &mut rng,
            |_| {},
            |i, j| assert!(j <= i),
        );
    }

    /// A smoke test: a prefetch of an unmapped or null address must not
    /// fault, and it changes nothing.
    #[test]
    fn kernels_prefetch_of_any_address_does_not_fault() {
        prefetch(std::ptr::null::<u64>());
        prefetch(std::ptr::without_provenance::<u8>(usize::MAX));
        let x = 5u64;
        prefetch(&x);
        assert_eq!(x, 5);
    }
}
