//! Several independent pointer chases through one buffer, in any
//! [`Pattern`], followed together by one thread: the memory-level
//! parallelism kernel, and the single chase of every pattern but the
//! classic full-random one (which [`super::latency::Chain`] builds in
//! place).
//!
//! The layout is multichase's (`permutation.c`, `generate_chase`): the
//! buffer is cut into elements `spacing` bytes apart; each chase visits
//! every element once per lap, in its own order, and uses its own 8-byte
//! slot of each element. Which slot chase `j` uses in element `x` comes
//! from a table of 64 random slot permutations (multichase's "mixer"): slot
//! = `mixer[x % 64][j]`, so in any element the chases sit in different
//! slots and never share a word, while over the elements each chase's
//! offsets vary. The chases are independent cycles: chase `j`'s next
//! address never depends on chase `k`'s loads, so `n` of them give the
//! core `n` misses it may overlap, and nothing more.
//!
//! The loops ([`step`]) are generic over the number of chases so each count
//! gets its own monomorphic loop, with the chase pointers in registers and
//! one `mov (reg), reg` per load (checked with objdump, see
//! docs/latency.md); unrolled to about 32 loads per iteration as
//! multichase unrolls to about 200, so the loop's counter and branch stay
//! off the critical path.

use super::latency::ChainError;
use super::pattern::Pattern;
use super::shuffle::SplitMix64;
use super::shuffle::{Shuffle, prefetch, swaps};
use std::hint::black_box;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::time::Instant;

/// The most chases one thread follows together.
pub(crate) const MAX_CHASES: usize = 16;
/// Mixer rows, as multichase (at least 64, a power of two).
const MIXERS: usize = 64;

/// Independent pointer chases through a borrowed buffer.
pub(crate) struct Chases<'a> {
    /// Where each chase continues from.
    pos: Vec<NonNull<u64>>,
    elements: usize,
    _buf: PhantomData<&'a mut [u64]>,
}

// SAFETY: as for `Chain`: an exclusive borrow of the buffer, like `&mut [u64]`.
unsafe impl Send for Chases<'_> {}

/// The order the elements are visited in, for one chase.
fn order(pattern: &Pattern, elements: usize, spacing: usize, rng: &mut SplitMix64) -> Vec<u32> {
    match *pattern {
        Pattern::Stride { .. } => (0..elements as u32).collect(),
        Pattern::FullRandom => shuffled(0, elements, rng),
        Pattern::PageLocal { window } => {
            let per = (window / spacing).min(elements).max(1);
            let groups = elements / per;
            let mut out = Vec::with_capacity(groups * per);
            for g in shuffled(0, groups, rng) {
                out.extend(shuffled(g as usize * per, per, rng));
            }
            out
        }
    }
}

/// `base .. base + n` in a uniformly random order (Fisher-Yates).
fn shuffled(base: usize, n: usize, rng: &mut SplitMix64) -> Vec<u32> {
    let mut v: Vec<u32> = (base..base + n).map(|i| i as u32).collect();
    let at = v.as_ptr();
    swaps(
        n,
        Shuffle::Uniform,
        rng,
        |j| prefetch(at.wrapping_add(j)),
        |i, j| v.swap(i, j),
    );
    v
}

/// Elements a pattern uses in `words`: whole windows only for page-local,
/// as multichase trims its memory to a multiple of `-T`.
pub(crate) fn elements_used(pattern: &Pattern, words: usize, spacing: usize) -> usize {
    let all = words * 8 / spacing;
    match pattern.window() {
        Some(w) if all > w / spacing => all - all % (w / spacing),
        _ => all,
    }
}

impl<'a> Chases<'a> {
    /// Links `chases` independent cycles through `words` in `pattern`, each
    /// element `spacing` bytes apart (a multiple of 8 with room for a slot
    /// per chase), the same for the same seed.
    pub(crate) fn build(
        words: &'a mut [u64],
        pattern: &Pattern,
        spacing: usize,
        chases: usize,
        seed: u64,
    ) -> Result<Chases<'a>, ChainError> {
        let slots = spacing / 8;
        if spacing == 0 || !spacing.is_multiple_of(8) || chases == 0 || chases > slots {
            return Err(ChainError::BadLineSize(spacing));
        }
        let elements = elements_used(pattern, words.len(), spacing);
        if elements < 2 || elements > u32::MAX as usize {
            return Err(ChainError::TooFewLines {
                words: words.len(),
                line_bytes: spacing,
                lines: elements,
            });
        }
        let mut rng = SplitMix64(seed);
        // mixer[r][j]: the slot of chase j in elements x with x % 64 == r.
        // A stride chase keeps slot 0, as lat_mem_rd does.
        let mixer: Vec<Vec<u32>> = (0..MIXERS)
            .map(|_| match pattern {
                Pattern::Stride { .. } => (0..slots as u32).collect(),
                _ => shuffled(0, slots, &mut rng),
            })
            .collect();
        let base = NonNull::from(&mut *words).cast::<u64>();
        let word_of =
            |x: u32, j: usize| x as usize * slots + mixer[x as usize % MIXERS][j] as usize;
        let mut pos = Vec::with_capacity(chases);
        for j in 0..chases {
            let ord = order(pattern, elements, spacing, &mut rng);
            for (k, &x) in ord.iter().enumerate() {
                let next = ord[(k + 1) % ord.len()];
                // SAFETY: x, next < elements and every slot < slots, so both
                // words lie inside `words`; a pointer fits in a u64.
                unsafe {
                    let link = base.add(word_of(x, j));
                    let to = base.add(word_of(next, j));
                    link.cast::<*const u64>().write(to.as_ptr());
                }
            }
            // Stride chases all walk the same order: start each a share of
            // the cycle further on, or N chases would move in step and
            // share each line's miss, N loads for one.
            let start = match pattern {
                Pattern::Stride { .. } => ord[j * elements / chases],
                _ => ord[0],
            };
            // SAFETY: as above.
            pos.push(unsafe { base.add(word_of(start, j)) });
        }
        Ok(Chases {
            pos,
            elements,
            _buf: PhantomData,
        })
    }

    /// Elements in each chase's cycle.
    pub(crate) fn elements(&self) -> usize {
        self.elements
    }

    /// Follows the first `n` chases `steps` loads each, interleaved, from
    /// where they stopped; returns nanoseconds per load over all `n x
    /// steps` loads (multichase's figure for `-c parallelN`), 0 for none.
    pub(crate) fn ns_per_access(&mut self, n: usize, steps: u64) -> f64 {
        assert!(
            (1..=self.pos.len()).contains(&n),
            "{n} chases of {}",
            self.pos.len()
        );
        if steps == 0 {
            return 0.0;
        }
        let t0 = Instant::now();
        // SAFETY: every position is a link word of its own chase's cycle
        // (set by `build` or by a previous chase), and the exclusive borrow
        // keeps every link pointing at such a word.
        unsafe { run(&mut self.pos[..n], steps) };
        let elapsed = t0.elapsed();
        elapsed.as_secs_f64() * 1e9 / (n as f64 * steps as f64)
    }
}

/// Dispatch to the loop for `pos.len()` chases.
///
/// # Safety
/// As [`step`].
unsafe fn run(pos: &mut [NonNull<u64>], steps: u64) {
    macro_rules! dispatch {
        ($($n:literal)*) => {
            match pos.len() {
                $($n => {
                    let mut p: [*const u64; $n] = std::array::from_fn(|i| pos[i].as_ptr().cast_const());
                    // SAFETY: guaranteed by the caller.
                    p = unsafe { step::<$n>(black_box(p), steps) };
                    let p = black_box(p);
                    for (slot, q) in pos.iter_mut().zip(p) {
                        *slot = NonNull::new(q.cast_mut()).expect("links are never null");
                    }
                })*
                n => unreachable!("{n} chases"),
            }
        };
    }
    dispatch!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
}

/// Follows `N` chases `steps` loads each: every round loads once through
/// each pointer, so the `N` dependent chains are independent of each other.
///
/// # Safety
/// Every pointer, and every link reachable from it, points at a word
/// holding another such link.
#[inline(never)]
unsafe fn step<const N: usize>(mut p: [*const u64; N], steps: u64) -> [*const u64; N] {
    // About 32 loads per iteration, at least one round.
    let unroll = (32 / N).max(1) as u64;
    let mut round = || {
        for q in p.iter_mut() {
            // SAFETY: guaranteed by the caller for every reachable link.
            *q = unsafe { *q.cast::<*const u64>() };
        }
    };
    for _ in 0..steps / unroll {
        for _ in 0..unroll {
            round();
        }
    }
    for _ in 0..steps % unroll {
        round();
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Walks chase `j` from its position and returns the element indices
    /// met until it comes back.
    fn walk(c: &Chases, words: *const u64, spacing: usize, j: usize) -> Vec<usize> {
        let start = c.pos[j].as_ptr().cast_const();
        let mut p = start;
        let mut out = Vec::new();
        loop {
            out.push((p.addr() - words.addr()) / spacing);
            // SAFETY: p is a link of chase j.
            p = unsafe { *p.cast::<*const u64>() };
            if p == start || out.len() > c.elements + 1 {
                return out;
            }
        }
    }

    #[test]
    fn kernels_every_chase_is_one_cycle_through_every_element_in_its_own_slots() {
        for pattern in [
            Pattern::FullRandom,
            Pattern::PageLocal { window: 4096 },
            Pattern::Stride { stride: 256 },
        ] {
            let mut words = vec![0u64; 256 * 32]; // 256 elements of 256 B
            let base = words.as_ptr();
            let c = Chases::build(&mut words, &pattern, 256, 16, 9).unwrap();
            assert_eq!(c.elements(), 256);
            let mut words_used = std::collections::BTreeSet::new();
            for j in 0..16 {
                let mut v = walk(&c, base, 1, j);
                assert_eq!(v.len(), 256, "{pattern} chase {j}");
                words_used.extend(v.iter().copied());
                v.iter_mut().for_each(|x| *x /= 256);
                v.sort_unstable();
                v.dedup();
                assert_eq!(v.len(), 256, "{pattern} chase {j} visits each element once");
            }
            // No two chases share a word.
            assert_eq!(words_used.len(), 16 * 256, "{pattern}");
        }
    }

    #[test]
    fn kernels_page_local_stays_in_a_window_until_it_is_done() {
        let window = 4096;
        let mut words = vec![0u64; 64 * 1024 / 8];
        let base = words.as_ptr();
        let c = Chases::build(&mut words, &Pattern::PageLocal { window }, 256, 1, 3).unwrap();
        let v = walk(&c, base, 256, 0);
        let per = window / 256;
        // Element k's window changes only every `per` steps.
        for chunk in v.chunks(per) {
            assert!(chunk.iter().all(|x| x / per == chunk[0] / per), "{chunk:?}");
        }
        // Windows are not visited in address order every time.
        let windows: Vec<usize> = v.chunks(per).map(|c| c[0] / per).collect();
        assert_ne!(windows, (0..windows.len()).collect::<Vec<_>>());
        // Within a window, not in address order either.
        assert!(
            v.chunks(per)
                .any(|c| c.windows(2).any(|w| w[1] != w[0] + 1))
        );
    }

    #[test]
    fn kernels_stride_walks_in_address_order() {
        let mut words = vec![0u64; 4096];
        let base = words.as_ptr();
        let c = Chases::build(&mut words, &Pattern::Stride { stride: 128 }, 128, 1, 0).unwrap();
        assert_eq!(walk(&c, base, 128, 0), (0..256).collect::<Vec<_>>());
    }

    #[test]
    fn kernels_stride_chases_start_apart() {
        let mut words = vec![0u64; 64 * 32]; // 64 elements of 256 B
        let base = words.as_ptr();
        let c = Chases::build(&mut words, &Pattern::Stride { stride: 256 }, 256, 4, 0).unwrap();
        let starts: Vec<usize> = (0..4).map(|j| walk(&c, base, 256, j)[0]).collect();
        assert_eq!(starts, [0, 16, 32, 48]);
    }

    #[test]
    fn kernels_chases_keep_their_cycles_for_every_count() {
        let mut words = vec![0u64; 64 * 32];
        let mut c = Chases::build(
            &mut words,
            &Pattern::PageLocal { window: 256 << 10 },
            256,
            16,
            1,
        )
        .unwrap();
        assert_eq!(
            c.elements(),
            64,
            "a buffer smaller than a window is one window"
        );
        let before = c.pos.clone();
        for n in 1..=16 {
            assert!(c.ns_per_access(n, 64 * 3) >= 0.0);
        }
        // 3 full laps of every chase used: each is back where it started.
        assert_eq!(c.pos[15], before[15]);
        assert_eq!(c.pos[0], before[0]);
        assert_eq!(c.ns_per_access(4, 0), 0.0);
    }

    #[test]
    fn kernels_chases_refuse_more_chases_than_slots() {
        let mut words = vec![0u64; 1024];
        assert!(Chases::build(&mut words, &Pattern::FullRandom, 64, 9, 0).is_err());
        assert!(Chases::build(&mut words, &Pattern::FullRandom, 64, 8, 0).is_ok());
        assert!(Chases::build(&mut words, &Pattern::FullRandom, 12, 1, 0).is_err());
        let mut tiny = vec![0u64; 8];
        assert!(Chases::build(&mut tiny, &Pattern::FullRandom, 64, 1, 0).is_err());
    }

    #[test]
    fn kernels_more_chases_cost_less_per_access_in_ram() {
        let mut words = vec![0u64; 128 << 20 >> 3];
        let mut c = Chases::build(&mut words, &Pattern::FullRandom, 256, 8, 5).unwrap();
        let best = |c: &mut Chases, n: usize| {
            (0..5)
                .map(|_| c.ns_per_access(n, 200_000))
                .fold(f64::INFINITY, f64::min)
        };
        c.ns_per_access(8, 100_000);
        let one = best(&mut c, 1);
        let eight = best(&mut c, 8);
        assert!(
            eight < one * 0.6,
            "1 chase {one:.1} ns, 8 chases {eight:.1} ns per access"
        );
    }
}
