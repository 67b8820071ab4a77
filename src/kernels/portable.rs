//! Plain Rust kernels: the reference every vector kernel is tested against,
//! and the fallback where no wider path exists.
//!
//! They measure what the compiler makes of an ordinary loop for the build's
//! baseline target; it may vectorise them (SSE2 on x86-64), which is fair to
//! call "portable". The pitfall here is the compiler recognising the copy
//! loop as `memcpy`: glibc's memcpy switches to non-temporal stores for large
//! sizes, so "copy, regular stores" would silently measure something else.
//! The copy therefore XORs every word with a zero the optimiser cannot see
//! through: one extra ALU operation per vector, hidden behind the memory
//! traffic, and no longer a copy idiom. Only regular stores exist here;
//! streaming stores have no portable spelling.

use std::hint::black_box;

/// XOR of all words; eight accumulators so no single dependency chain limits
/// the load rate.
#[inline(never)]
pub(super) fn read(_dst: &mut [u64], src1: &[u64], _src2: &[u64], _src3: &[u64], _q: f64) -> u64 {
    let mut acc = [0u64; 8];
    let mut chunks = src1.chunks_exact(8);
    for chunk in &mut chunks {
        for (a, w) in acc.iter_mut().zip(chunk) {
            *a ^= w;
        }
    }
    for (a, w) in acc.iter_mut().zip(chunks.remainder()) {
        *a ^= w;
    }
    acc.iter().fold(0, |x, a| x ^ a)
}

/// `read` in [`super::STREAMS`] places at once: the array cut into that many
/// parts, each turn of the loop one line (8 words) from every part, so the
/// prefetchers follow several streams. The same XOR of all words.
#[inline(never)]
pub(super) fn read_streams(
    _dst: &mut [u64],
    src1: &[u64],
    _src2: &[u64],
    _src3: &[u64],
    _q: f64,
) -> u64 {
    const LINE: usize = 8;
    let part = src1.len() / super::STREAMS / LINE * LINE;
    let (body, rest) = src1.split_at(super::STREAMS * part);
    let parts: [&[u64]; super::STREAMS] = std::array::from_fn(|k| &body[k * part..(k + 1) * part]);
    let mut acc = [[0u64; LINE]; super::STREAMS];
    for i in (0..part).step_by(LINE) {
        for (a, p) in acc.iter_mut().zip(&parts) {
            for (x, w) in a.iter_mut().zip(&p[i..i + LINE]) {
                *x ^= w;
            }
        }
    }
    let sum = rest.iter().fold(0, |x, w| x ^ w);
    acc.iter().flatten().fold(sum, |x, a| x ^ a)
}

#[inline(never)]
pub(super) fn write(dst: &mut [u64], _src1: &[u64], _src2: &[u64], _src3: &[u64], q: f64) -> u64 {
    let word = q.to_bits();
    for d in dst.iter_mut() {
        *d = word;
    }
    0
}

#[inline(never)]
pub(super) fn copy(dst: &mut [u64], src1: &[u64], _src2: &[u64], _src3: &[u64], _q: f64) -> u64 {
    let src1 = &src1[..dst.len()];
    let zero = black_box(0u64);
    for (d, a) in dst.iter_mut().zip(src1) {
        *d = a ^ zero;
    }
    0
}

#[inline(never)]
pub(super) fn scale(dst: &mut [u64], src1: &[u64], _src2: &[u64], _src3: &[u64], q: f64) -> u64 {
    let src1 = &src1[..dst.len()];
    for (d, a) in dst.iter_mut().zip(src1) {
        *d = (q * f64::from_bits(*a)).to_bits();
    }
    0
}

#[inline(never)]
pub(super) fn add(dst: &mut [u64], src1: &[u64], src2: &[u64], _src3: &[u64], _q: f64) -> u64 {
    let n = dst.len();
    let (src1, src2) = (&src1[..n], &src2[..n]);
    for ((d, a), b) in dst.iter_mut().zip(src1).zip(src2) {
        *d = (f64::from_bits(*a) + f64::from_bits(*b)).to_bits();
    }
    0
}

/// Multiply, then add: two roundings, as in every other triad kernel.
#[inline(never)]
pub(super) fn triad(dst: &mut [u64], src1: &[u64], src2: &[u64], _src3: &[u64], q: f64) -> u64 {
    let n = dst.len();
    let (src1, src2) = (&src1[..n], &src2[..n]);
    for ((d, a), b) in dst.iter_mut().zip(src1).zip(src2) {
        *d = (f64::from_bits(*a) + q * f64::from_bits(*b)).to_bits();
    }
    0
}

/// Three reads, one write: the 3:1 read:write mix.
#[inline(never)]
pub(super) fn add3(dst: &mut [u64], src1: &[u64], src2: &[u64], src3: &[u64], _q: f64) -> u64 {
    let n = dst.len();
    let (src1, src2, src3) = (&src1[..n], &src2[..n], &src3[..n]);
    for (((d, a), b), c) in dst.iter_mut().zip(src1).zip(src2).zip(src3) {
        *d = (f64::from_bits(*a) + f64::from_bits(*b) + f64::from_bits(*c)).to_bits();
    }
    0
}
