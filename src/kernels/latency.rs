//! Load-to-use latency: a chain of dependent loads through a buffer.
//!
//! Every line of the buffer holds, in its first word, the address of the next
//! line, and the lines are linked in one random cycle (Sattolo's algorithm),
//! so each load's address comes from the previous load and no prefetcher can
//! guess the next line. Two pitfalls are avoided:
//! - several short cycles instead of one: a walk that returns early stays in
//!   a smaller, more cached working set than the buffer; Sattolo's shuffle
//!   always yields a single cycle through every line;
//! - an index-based chase (`i = next[i]`) adds an address computation to
//!   every load, about 20% at L1; the chain stores raw pointers, so each
//!   step is a single `mov (reg), reg`.

use super::shuffle::{Shuffle, SplitMix64, prefetch, swaps};
use std::hint::black_box;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::time::Instant;

/// Cache line size on the machines this targets; the usual line for chains.
pub(crate) const LINE_BYTES: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ChainError {
    #[error("line size {0} bytes must be a non-zero multiple of 8 bytes (one pointer)")]
    BadLineSize(usize),
    #[error(
        "a pointer chain needs at least 2 lines; {words} words hold {lines} of {line_bytes} bytes"
    )]
    TooFewLines {
        words: usize,
        line_bytes: usize,
        lines: usize,
    },
}

/// A random cyclic pointer chain through a borrowed buffer.
pub(crate) struct Chain<'a> {
    #[cfg(test)]
    base: NonNull<u64>,
    #[cfg(test)]
    line_words: usize,
    lines: usize,
    /// First word of the line the next chase starts from.
    pos: NonNull<u64>,
    /// The chain owns the buffer exclusively while it lives: nothing else can
    /// overwrite a link, so every pointer followed stays inside the buffer.
    _buf: PhantomData<&'a mut [u64]>,
}

// SAFETY: a Chain is an exclusive borrow of its buffer, like `&mut [u64]`,
// which may move to another thread (a probe builds it, then pins a thread).
unsafe impl Send for Chain<'_> {}

impl<'a> Chain<'a> {
    /// Links every `line_bytes`-sized line of `words` into one random cycle,
    /// the same for the same seed. A partial line at the end is left out.
    pub(crate) fn build(
        words: &'a mut [u64],
        line_bytes: usize,
        seed: u64,
    ) -> Result<Chain<'a>, ChainError> {
        if line_bytes == 0 || !line_bytes.is_multiple_of(size_of::<u64>()) {
            return Err(ChainError::BadLineSize(line_bytes));
        }
        let line_words = line_bytes / size_of::<u64>();
        let lines = words.len() / line_words;
        if lines < 2 {
            return Err(ChainError::TooFewLines {
                words: words.len(),
                line_bytes,
                lines,
            });
        }

        // Sattolo's algorithm on the successor of each line, kept in the
        // line's first word: swapping only with strictly earlier positions
        // makes the permutation a single cycle.
        for (i, line) in words.chunks_exact_mut(line_words).enumerate() {
            line[0] = i as u64;
        }
        // Each random partner's line is fetched a few swaps ahead: the
        // buffer is larger than the caches by design, and one miss at a
        // time made the shuffle most of a large measurement's run time.
        let mut rng = SplitMix64(seed);
        let at = words.as_ptr();
        swaps(
            lines,
            Shuffle::SingleCycle,
            &mut rng,
            |j| prefetch(at.wrapping_add(j * line_words)),
            |i, j| words.swap(i * line_words, j * line_words),
        );

        // Replace each successor index by that line's address. The links are
        // written as pointers so that following them keeps the buffer's
        // provenance.
        let base = NonNull::from(&mut *words).cast::<u64>();
        for i in 0..lines {
            // SAFETY: i < lines and every successor index is < lines, so both
            // offsets stay inside `words`; a pointer fits in (and needs no
            // more alignment than) the u64 it overwrites.
            unsafe {
                let link = base.add(i * line_words);
                let next = base.add(link.read() as usize * line_words);
                link.cast::<*const u64>().write(next.as_ptr());
            }
        }
        Ok(Chain {
            #[cfg(test)]
            base,
            #[cfg(test)]
            line_words,
            lines,
            pos: base,
            _buf: PhantomData,
        })
    }

    /// Lines in the cycle.
    pub(crate) fn lines(&self) -> usize {
        self.lines
    }

    /// Follows `loads` dependent loads from where the last call stopped and
    /// returns nanoseconds per load (0 for no loads), timed with the monotonic
    /// clock around the chase alone.
    pub(crate) fn chase_ns_per_load(&mut self, loads: u64) -> f64 {
        if loads == 0 {
            return 0.0;
        }
        let start = black_box(self.pos.as_ptr().cast_const());
        let t0 = Instant::now();
        // SAFETY: `start` is the first word of a line of this chain (it is
        // either `base` or where a previous chase ended), and the exclusive
        // borrow keeps every link pointing at such a line.
        let end = unsafe { chase(start, loads) };
        let elapsed = t0.elapsed();
        let end = black_box(end);
        self.pos = NonNull::new(end.cast_mut()).expect("links are never null");
        elapsed.as_secs_f64() * 1e9 / loads as f64
    }

    /// Walks the cycle from the current position and counts the lines met
    /// before returning to it; stops after `lines()` steps, so a broken chain
    /// shows as a different count rather than a hang.
    #[cfg(test)]
    pub(crate) fn cycle_len(&self) -> usize {
        let start = self.pos.as_ptr().cast_const();
        let mut p = start;
        for steps in 1..=self.lines {
            // SAFETY: as in `chase_ns_per_load`, for one load.
            p = unsafe { chase(p, 1) };
            if p == start {
                return steps;
            }
            debug_assert!(self.contains(p));
        }
        self.lines + 1
    }

    #[cfg(test)]
    fn contains(&self, p: *const u64) -> bool {
        let offset = p.addr().wrapping_sub(self.base.as_ptr().addr()) / size_of::<u64>();
        offset.is_multiple_of(self.line_words) && offset / self.line_words < self.lines
    }
}

/// Follows `loads` links from `p`, sixteen per iteration so the loop's own
/// increment and branch stay out of the measured latency.
///
/// # Safety
/// `p` and every link reachable from it point at the first word of a line
/// whose first word holds another such link.
#[inline(never)]
unsafe fn chase(mut p: *const u64, loads: u64) -> *const u64 {
    macro_rules! step {
        () => {
            // SAFETY: guaranteed by the caller for every reachable link.
            p = unsafe { *p.cast::<*const u64>() }
        };
    }
    for _ in 0..loads / 16 {
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
        step!();
    }
    for _ in 0..loads % 16 {
        step!();
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links(words: &[u64], line_words: usize) -> Vec<u64> {
        let base = words.as_ptr().addr() as u64;
        words
            .chunks_exact(line_words)
            .map(|l| (l[0] - base) / (line_words as u64 * 8))
            .collect()
    }

    #[test]
    fn kernels_chain_is_one_cycle_through_every_line() {
        let mut words = vec![0u64; 4096 * 8];
        let chain = Chain::build(&mut words, LINE_BYTES, 42).unwrap();
        assert_eq!(chain.lines(), 4096);
        assert_eq!(chain.cycle_len(), 4096);
    }

    #[test]
    fn kernels_chain_odd_sizes_and_tiny_chains_are_single_cycles() {
        for (len, line_bytes, lines) in [
            (16, 64, 2),
            (3 * 8 + 5, 64, 3),
            (1000, 8, 1000),
            (999, 128, 62),
        ] {
            let mut words = vec![0u64; len];
            for seed in 0..20 {
                let chain = Chain::build(&mut words, line_bytes, seed).unwrap();
                assert_eq!(chain.lines(), lines);
                assert_eq!(
                    chain.cycle_len(),
                    lines,
                    "len {len} line {line_bytes} seed {seed}"
                );
            }
        }
    }

    #[test]
    fn kernels_chain_is_deterministic_per_seed_and_differs_across_seeds() {
        let build = |seed| {
            let mut words = vec![0u64; 4096 * 8];
            Chain::build(&mut words, LINE_BYTES, seed).unwrap();
            links(&words, 8)
        };
        let a = build(1);
        assert_eq!(a, build(1));
        assert_ne!(a, build(2));
        // No line links to itself or to its neighbour in order every time:
        // the walk is not sequential.
        let sequential = a
            .iter()
            .enumerate()
            .filter(|&(i, &n)| n == (i as u64 + 1) % 4096)
            .count();
        assert!(sequential < 16, "{sequential} sequential links");
    }

    #[test]
    fn kernels_chain_rejects_fewer_than_two_lines_and_bad_line_sizes() {
        let mut words = vec![0u64; 15];
        assert_eq!(
            Chain::build(&mut words, 64, 0).err(),
            Some(ChainError::TooFewLines {
                words: 15,
                line_bytes: 64,
                lines: 1
            })
        );
        assert!(matches!(
            Chain::build(&mut [], 64, 0),
            Err(ChainError::TooFewLines { lines: 0, .. })
        ));
        assert_eq!(
            Chain::build(&mut words, 0, 0).err(),
            Some(ChainError::BadLineSize(0))
        );
        assert_eq!(
            Chain::build(&mut words, 12, 0).err(),
            Some(ChainError::BadLineSize(12))
        );
        let msg = Chain::build(&mut words, 64, 0).err().unwrap().to_string();
        assert!(msg.contains("at least 2 lines"), "{msg}");
    }

    #[test]
    fn kernels_chase_keeps_its_position_and_stays_on_the_cycle() {
        let mut words = vec![0u64; 64 * 8];
        let mut chain = Chain::build(&mut words, LINE_BYTES, 7).unwrap();
        assert_eq!(chain.chase_ns_per_load(0), 0.0);
        for loads in [1, 15, 16, 17, 1000] {
            assert!(chain.chase_ns_per_load(loads) >= 0.0);
            assert!(chain.contains(chain.pos.as_ptr()));
            assert_eq!(chain.cycle_len(), 64);
        }
        // A full lap returns to the same line.
        let before = chain.pos;
        chain.chase_ns_per_load(64 * 3);
        assert_eq!(chain.pos, before);
    }

    /// Best of a few runs, after a warm-up lap, in ns per load.
    fn latency(words: &mut [u64], loads: u64) -> f64 {
        let mut chain = Chain::build(words, LINE_BYTES, 0x5eed).unwrap();
        chain.chase_ns_per_load(chain.lines() as u64);
        (0..3)
            .map(|_| chain.chase_ns_per_load(loads))
            .fold(f64::INFINITY, f64::min)
    }

    #[test]
    fn kernels_chase_l1_is_much_faster_than_ram() {
        let mut small = vec![0u64; 16 << 10 >> 3];
        let l1 = latency(&mut small, 1 << 20);
        let mut large = vec![0u64; 256 << 20 >> 3];
        let ram = latency(&mut large, 1 << 18);
        assert!(ram > 3.0 * l1, "L1 {l1:.2} ns/load, RAM {ram:.2} ns/load");
    }
}
