//! perf's `access_data` over a run of words: with reads each word is added
//! into `val`, with writes `val + 1` is stored, so every word depends on
//! the one before; forwards or backwards.
//!
//! The read-write loop forwards, perf's default, is written out for x86-64
//! as the five instructions a C compiler makes of perf's loop (the load
//! folded into the add, the stored value one `lea` from the new `val`).
//! LLVM makes eight of the same Rust (a separate load, the stored value
//! rebuilt from the loaded word with `lea` + `inc`, as it avoids
//! three-operand `lea` on generic x86-64), and on perf's random walk of
//! 8 KiB chunks the longer loop keeps fewer misses in flight: 5-7% less
//! bandwidth than perf on the same walk, measured side by side.

use super::params::Params;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// How `do_work` touches data (from -R -W -B -Z -r and -l).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Access {
    pub reads: bool,
    pub writes: bool,
    pub backwards: bool,
    pub memset: bool,
    pub rand_walk: bool,
    pub nr_loops: u32,
}

impl Access {
    pub(crate) fn of(p: &Params) -> Access {
        Access {
            reads: p.data_reads,
            writes: p.data_writes,
            backwards: p.data_backwards,
            memset: p.data_zero_memset,
            rand_walk: p.data_rand_walk,
            nr_loops: p.nr_loops,
        }
    }
}

/// One pass over `words` as `a` asks, forwards or (`back`) backwards;
/// returns `val` after it.
#[inline(always)]
pub(super) fn access(words: &[AtomicU64], val: u64, a: &Access, back: bool) -> u64 {
    match (a.reads, a.writes, back) {
        (true, true, false) => read_write(words, val),
        (true, false, false) => sweep::<true, false>(words, val),
        (false, true, false) => sweep::<false, true>(words, val),
        (true, true, true) => sweep_back::<true, true>(words, val),
        (true, false, true) => sweep_back::<true, false>(words, val),
        (false, true, true) => sweep_back::<false, true>(words, val),
        // Neither reads nor writes: perf's loop has nothing left to do.
        (false, false, _) => val,
    }
}

#[inline(always)]
fn sweep<const R: bool, const W: bool>(words: &[AtomicU64], mut val: u64) -> u64 {
    for w in words {
        if R {
            val = val.wrapping_add(w.load(Relaxed));
        }
        if W {
            w.store(val.wrapping_add(1), Relaxed);
        }
    }
    val
}

#[inline(always)]
fn sweep_back<const R: bool, const W: bool>(words: &[AtomicU64], mut val: u64) -> u64 {
    for w in words.iter().rev() {
        if R {
            val = val.wrapping_add(w.load(Relaxed));
        }
        if W {
            w.store(val.wrapping_add(1), Relaxed);
        }
    }
    val
}

/// Reads and writes forwards: `val += w; w = val + 1` for every word.
#[inline(always)]
fn read_write(words: &[AtomicU64], val: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        read_write_x86_64(words, val)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        sweep::<true, true>(words, val)
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn read_write_x86_64(words: &[AtomicU64], mut val: u64) -> u64 {
    if words.is_empty() {
        return val;
    }
    let p = words.as_ptr();
    // SAFETY: `p..end` is `words`, a live slice of 8-byte aligned words
    // (non-empty, so the loop's first test is after one word and it stops
    // exactly at `end`). `AtomicU64` allows writes through a shared
    // reference, and an aligned 8-byte `mov` on x86-64 is a single-copy
    // atomic access, so other threads touching the same words (perf's
    // shared areas) see whole old or new values, as with `Relaxed`
    // atomics. The block touches no stack and only the named registers.
    unsafe {
        let end = p.add(words.len());
        std::arch::asm!(
            "2:",
            "add {val}, qword ptr [{p}]",
            "lea {next}, [{val} + 1]",
            "mov qword ptr [{p}], {next}",
            "add {p}, 8",
            "cmp {p}, {end}",
            "jne 2b",
            val = inout(reg) val,
            p = inout(reg) p => _,
            end = in(reg) end,
            next = out(reg) _,
            options(nostack),
        );
    }
    val
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(n: usize) -> Vec<AtomicU64> {
        (0..n as u64)
            .map(|i| AtomicU64::new(i.wrapping_mul(0x9E37_79B9_7F4A_7C15)))
            .collect()
    }

    fn values(w: &[AtomicU64]) -> Vec<u64> {
        w.iter().map(|w| w.load(Relaxed)).collect()
    }

    #[test]
    fn the_read_write_loop_does_what_the_generic_one_does() {
        for n in [0, 1, 2, 7, 1023, 4096] {
            let (a, b) = (words(n), words(n));
            let va = read_write(&a, 12345);
            let vb = sweep::<true, true>(&b, 12345);
            assert_eq!(va, vb, "{n} words");
            assert_eq!(values(&a), values(&b), "{n} words");
        }
    }

    #[test]
    fn each_word_gets_the_running_sum_plus_one() {
        let w: Vec<AtomicU64> = [1u64, 2, 3].into_iter().map(AtomicU64::new).collect();
        assert_eq!(read_write(&w, 10), 10 + 1 + 2 + 3);
        assert_eq!(values(&w), [12, 14, 17]);
    }
}
