//! NEON kernels for AArch64 (128-bit vectors), regular stores only.
//!
//! Same loop shape as the x86 kernels: four vectors per stream per iteration,
//! eight XOR accumulators for read, scalar head and tail so any start and
//! length work, and triad as multiply then add (no FMA) to match the scalar
//! formula bit for bit. Non-temporal variants are left out on purpose: the
//! streaming pair store (`stnp`) has no stable intrinsic, and a regular store
//! under an `_nt` name would report a store kind that never ran.

use std::arch::aarch64::{
    float64x2_t, uint64x2_t, vaddq_f64, vdupq_n_f64, vdupq_n_u64, veorq_u64, vgetq_lane_u64,
    vld1q_u64, vmulq_f64, vreinterpretq_f64_u64, vreinterpretq_u64_f64, vst1q_u64,
};

const LANES: usize = 2;
/// Vectors per stream per iteration of a store loop.
const UNROLL: usize = 4;
/// Independent accumulators in read.
const ACCUMULATORS: usize = 8;
const LINE_BYTES: usize = 64;

/// Elements to process one by one before `p` reaches a line boundary, so
/// vector accesses never split a line.
fn head_len(p: *const u64, n: usize) -> usize {
    let misaligned = p.addr() % LINE_BYTES;
    ((LINE_BYTES - misaligned) % LINE_BYTES / size_of::<u64>()).min(n)
}

/// # Safety
/// `p` is valid for reads of one vector.
#[target_feature(enable = "neon")]
#[inline]
unsafe fn load(p: *const u64) -> uint64x2_t {
    // SAFETY: guaranteed by the caller; vld1q needs no more alignment than
    // the element's.
    unsafe { vld1q_u64(p) }
}

#[target_feature(enable = "neon")]
#[inline]
fn f64s(v: uint64x2_t) -> float64x2_t {
    vreinterpretq_f64_u64(v)
}

#[target_feature(enable = "neon")]
#[inline]
fn u64s(v: float64x2_t) -> uint64x2_t {
    vreinterpretq_u64_f64(v)
}

/// The loop every storing kernel shares: `vector` maps one vector from each
/// source to the vector stored, `scalar` does the same for single words in
/// the head and tail. Pointer arithmetic happens only here, against lengths
/// checked here.
#[target_feature(enable = "neon")]
#[inline]
fn fill<const K: usize>(
    dst: &mut [u64],
    srcs: [&[u64]; K],
    vector: impl Fn([uint64x2_t; K]) -> uint64x2_t,
    scalar: impl Fn([u64; K]) -> u64,
) {
    let n = dst.len();
    assert!(srcs.iter().all(|s| s.len() == n), "array lengths differ");
    let head = head_len(dst.as_ptr(), n);
    for (i, d) in dst[..head].iter_mut().enumerate() {
        *d = scalar(srcs.map(|s| s[i]));
    }
    let base = dst.as_mut_ptr();
    let mut i = head;
    while n - i >= UNROLL * LANES {
        for u in 0..UNROLL {
            let o = i + u * LANES;
            // SAFETY: o + LANES <= n and every array has n words.
            unsafe {
                let v = vector(srcs.map(|s| load(s.as_ptr().add(o))));
                vst1q_u64(base.add(o), v);
            }
        }
        i += UNROLL * LANES;
    }
    while n - i >= LANES {
        // SAFETY: i + LANES <= n and every array has n words.
        unsafe {
            let v = vector(srcs.map(|s| load(s.as_ptr().add(i))));
            vst1q_u64(base.add(i), v);
        }
        i += LANES;
    }
    for (j, d) in dst[i..].iter_mut().enumerate() {
        *d = scalar(srcs.map(|s| s[i + j]));
    }
}

#[target_feature(enable = "neon")]
#[inline(never)]
pub(super) fn read(_dst: &mut [u64], src1: &[u64], _src2: &[u64], _src3: &[u64], _q: f64) -> u64 {
    let n = src1.len();
    let head = head_len(src1.as_ptr(), n);
    let mut sum = src1[..head].iter().fold(0, |x, w| x ^ w);
    let p = src1.as_ptr();
    let mut acc = [vdupq_n_u64(0); ACCUMULATORS];
    let mut i = head;
    while n - i >= ACCUMULATORS * LANES {
        for (k, a) in acc.iter_mut().enumerate() {
            // SAFETY: i + (k + 1) * LANES <= i + ACCUMULATORS * LANES <= n.
            *a = veorq_u64(*a, unsafe { load(p.add(i + k * LANES)) });
        }
        i += ACCUMULATORS * LANES;
    }
    while n - i >= LANES {
        // SAFETY: i + LANES <= n.
        acc[0] = veorq_u64(acc[0], unsafe { load(p.add(i)) });
        i += LANES;
    }
    sum = src1[i..].iter().fold(sum, |x, w| x ^ w);
    let v = acc.into_iter().fold(vdupq_n_u64(0), |x, a| veorq_u64(x, a));
    sum ^ vgetq_lane_u64::<0>(v) ^ vgetq_lane_u64::<1>(v)
}

#[target_feature(enable = "neon")]
#[inline(never)]
pub(super) fn write(dst: &mut [u64], _src1: &[u64], _src2: &[u64], _src3: &[u64], q: f64) -> u64 {
    let word = q.to_bits();
    let v = vdupq_n_u64(word);
    fill::<0>(dst, [], |[]| v, |[]| word);
    0
}

#[target_feature(enable = "neon")]
#[inline(never)]
pub(super) fn copy(dst: &mut [u64], src1: &[u64], _src2: &[u64], _src3: &[u64], _q: f64) -> u64 {
    let a = &src1[..dst.len()];
    fill::<1>(dst, [a], |[a]| a, |[a]| a);
    0
}

#[target_feature(enable = "neon")]
#[inline(never)]
pub(super) fn scale(dst: &mut [u64], src1: &[u64], _src2: &[u64], _src3: &[u64], q: f64) -> u64 {
    let a = &src1[..dst.len()];
    let vq = vdupq_n_f64(q);
    fill::<1>(
        dst,
        [a],
        |[a]| u64s(vmulq_f64(vq, f64s(a))),
        |[a]| (q * f64::from_bits(a)).to_bits(),
    );
    0
}

#[target_feature(enable = "neon")]
#[inline(never)]
pub(super) fn add(dst: &mut [u64], src1: &[u64], src2: &[u64], _src3: &[u64], _q: f64) -> u64 {
    let n = dst.len();
    fill::<2>(
        dst,
        [&src1[..n], &src2[..n]],
        |[a, b]| u64s(vaddq_f64(f64s(a), f64s(b))),
        |[a, b]| (f64::from_bits(a) + f64::from_bits(b)).to_bits(),
    );
    0
}

/// `vmulq` then `vaddq`, not `vfmaq`: one rounding per operation, like the
/// scalar formula.
#[target_feature(enable = "neon")]
#[inline(never)]
pub(super) fn triad(dst: &mut [u64], src1: &[u64], src2: &[u64], _src3: &[u64], q: f64) -> u64 {
    let n = dst.len();
    let vq = vdupq_n_f64(q);
    fill::<2>(
        dst,
        [&src1[..n], &src2[..n]],
        |[a, b]| u64s(vaddq_f64(f64s(a), vmulq_f64(vq, f64s(b)))),
        |[a, b]| (f64::from_bits(a) + q * f64::from_bits(b)).to_bits(),
    );
    0
}

/// Three reads, one write: the 3:1 read:write mix.
#[target_feature(enable = "neon")]
#[inline(never)]
pub(super) fn add3(dst: &mut [u64], src1: &[u64], src2: &[u64], src3: &[u64], _q: f64) -> u64 {
    let n = dst.len();
    fill::<3>(
        dst,
        [&src1[..n], &src2[..n], &src3[..n]],
        |[a, b, c]| u64s(vaddq_f64(vaddq_f64(f64s(a), f64s(b)), f64s(c))),
        |[a, b, c]| (f64::from_bits(a) + f64::from_bits(b) + f64::from_bits(c)).to_bits(),
    );
    0
}
