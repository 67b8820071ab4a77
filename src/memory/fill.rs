//! What the first touch writes: non-zero, non-repeating words, so neither
//! the zero page nor KSM page merging can stand in for real memory.

/// What the first touch writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fill {
    /// Every 64-bit word gets [`pattern_word`]`(seed, index)`: non-zero and
    /// different from its neighbours, so neither the shared zero page, KSM
    /// merging nor compressing memory hardware can stand in for real memory
    /// traffic.
    Pattern { seed: u64 },
    /// One non-zero word per base page: places every page at a fraction of
    /// the cost, for probes that write their own data next.
    #[cfg(test)]
    FirstWordPerPage,
}

impl Default for Fill {
    fn default() -> Self {
        Fill::Pattern { seed: DEFAULT_SEED }
    }
}

pub(crate) const DEFAULT_SEED: u64 = 0x6E75_6D61_6265_6E63;

/// The value [`Fill::Pattern`] writes at word `index`: the index spread by an
/// odd multiplier and one xorshift round. Distinct indexes give distinct
/// values (both steps are bijections) except where that is 0, which becomes 1.
#[inline]
pub(crate) fn pattern_word(seed: u64, index: u64) -> u64 {
    let mut x = seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x.max(1)
}

/// Writes the pattern into `words`, numbering them from `first_index`, so
/// threads touching disjoint chunks of one buffer produce the same contents
/// as one thread touching it all.
pub(crate) fn fill_pattern(words: &mut [u64], seed: u64, first_index: u64) {
    // The seed is opaque to the optimiser, so the stores cannot be folded
    // into a constant memset or precomputed.
    let seed = std::hint::black_box(seed);
    for (i, w) in words.iter_mut().enumerate() {
        *w = pattern_word(seed, first_index + i as u64);
    }
    std::hint::black_box(words);
}
