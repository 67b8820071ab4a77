//! AVX2 and AVX-512F kernels for x86-64, with regular and non-temporal
//! (streaming) stores.
//!
//! Both instruction sets share one template, so the two widths run the same
//! loop shape and differ only in vector size: unrolled by four vectors per
//! stream (256 bytes per iteration with AVX-512, 128 with AVX2), and eight
//! independent XOR accumulators for read so no dependency chain caps the load
//! rate.
//!
//! Pitfalls avoided:
//! - Streaming and aligned stores fault on a misaligned address, and a
//!   streaming store that covers part of a line defeats write combining; the
//!   destination is peeled with scalar stores up to a 64-byte boundary, and
//!   the leftover that does not fill a vector is finished with scalar code.
//!   Any start and any length work; every element is processed once.
//! - Streaming stores are weakly ordered; an `sfence` ends every
//!   non-temporal kernel, so the data is globally visible when it returns and
//!   draining the write-combining buffers is part of the time measured.
//! - Triad is `mul` then `add`, never FMA, to match the scalar formula bit for
//!   bit.

use super::{COPY_STREAMS, STREAMS};
use std::arch::x86_64::_mm_sfence;

/// Cache line size: streaming stores should cover whole lines.
const LINE_BYTES: usize = 64;

/// How many elements to process one by one before `p` reaches a line
/// boundary (at most `n`).
fn head_len(p: *const u64, n: usize) -> usize {
    let misaligned = p.addr() % LINE_BYTES;
    ((LINE_BYTES - misaligned) % LINE_BYTES / size_of::<u64>()).min(n)
}

/// Words in each of `streams` parts of the `n - head` words after an
/// unaligned head: whole lines, so every part starts on a line. The words
/// from `head + streams * part` on are left for scalar code.
fn stream_part(n: usize, head: usize, streams: usize) -> usize {
    const LINE: usize = LINE_BYTES / size_of::<u64>();
    (n - head) / streams / LINE * LINE
}

/// Ends a streaming kernel: orders the weakly ordered stores before anything
/// that follows.
#[inline]
fn sfence() {
    // SAFETY: SSE is part of the x86-64 baseline, so every x86-64 CPU has it.
    unsafe { _mm_sfence() };
}

/// Generates one module of kernels for a vector width. The intrinsics are
/// imported under width-neutral names so that the loop bodies below are
/// written once.
macro_rules! simd_kernels {
    (
        $(#[$attr:meta])*
        mod $module:ident, feature = $feature:literal,
        vector = $vi:ident, doubles = $vd:ident,
        { $($alias:ident = $intrinsic:ident),* $(,)? }
    ) => {
        $(#[$attr])*
        pub(super) mod $module {
            use super::{COPY_STREAMS, head_len, sfence, stream_part};
            use std::arch::x86_64::{$vi as VI, $vd as VD, $($intrinsic as $alias),*};

            const LANES: usize = size_of::<VI>() / size_of::<u64>();
            /// Vectors per stream per iteration of a store loop.
            const UNROLL: usize = 4;
            /// Independent accumulators in read.
            const ACCUMULATORS: usize = 8;

            /// # Safety
            /// `p` is valid for reads of one vector.
            #[target_feature(enable = $feature)]
            #[inline]
            unsafe fn load(p: *const u64) -> VI {
                // SAFETY: guaranteed by the caller; the unaligned load has no
                // alignment requirement.
                unsafe { loadu_si(p.cast()) }
            }

            /// A load that is non-temporal (`NT`: a hint to keep the line out
            /// of the caches' recently-used ways) or ordinary.
            ///
            /// # Safety
            /// `p` is valid for reads of one vector and, with `NT`, aligned
            /// to its size.
            #[target_feature(enable = $feature)]
            #[inline]
            unsafe fn fetch<const NT: bool>(p: *const u64) -> VI {
                // SAFETY: guaranteed by the caller.
                unsafe {
                    if NT {
                        stream_load_si(p.cast())
                    } else {
                        load(p)
                    }
                }
            }

            /// # Safety
            /// `p` is valid for writes of one vector and aligned to its size.
            #[target_feature(enable = $feature)]
            #[inline]
            unsafe fn put<const NT: bool>(p: *mut u64, v: VI) {
                // SAFETY: guaranteed by the caller.
                unsafe {
                    if NT {
                        stream_si(p.cast(), v)
                    } else {
                        store_si(p.cast(), v)
                    }
                }
            }

            #[target_feature(enable = $feature)]
            #[inline]
            fn pd(v: VI) -> VD {
                castsi_pd(v)
            }

            #[target_feature(enable = $feature)]
            #[inline]
            fn si(v: VD) -> VI {
                castpd_si(v)
            }

            /// The loop every storing kernel shares. `vector` maps one vector
            /// from each source to the vector stored, `scalar` does the same
            /// for single words in the unaligned head and the short tail.
            /// Pointer arithmetic happens only here, against lengths checked
            /// here, and slice bounds checks stay out of the hot loop.
            #[target_feature(enable = $feature)]
            #[inline]
            fn fill<const NT: bool, const K: usize>(
                dst: &mut [u64],
                srcs: [&[u64]; K],
                vector: impl Fn([VI; K]) -> VI,
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
                        // SAFETY: o + LANES <= n, and every source has n
                        // words, so each load and the store stay in bounds;
                        // base + head is on a line boundary and o - head is a
                        // multiple of LANES, so base + o is aligned to the
                        // vector size as aligned and streaming stores need.
                        unsafe {
                            let v = vector(srcs.map(|s| load(s.as_ptr().add(o))));
                            put::<NT>(base.add(o), v);
                        }
                    }
                    i += UNROLL * LANES;
                }
                while n - i >= LANES {
                    // SAFETY: as above, for one vector at i.
                    unsafe {
                        let v = vector(srcs.map(|s| load(s.as_ptr().add(i))));
                        put::<NT>(base.add(i), v);
                    }
                    i += LANES;
                }
                for (j, d) in dst[i..].iter_mut().enumerate() {
                    *d = scalar(srcs.map(|s| s[i + j]));
                }
                if NT {
                    sfence();
                }
            }

            /// `sum` XOR every lane of the read accumulators.
            #[target_feature(enable = $feature)]
            #[inline]
            fn fold_lanes<const K: usize>(acc: [VI; K], sum: u64) -> u64 {
                let v = acc.into_iter().fold(setzero_si(), |x, a| xor_si(x, a));
                let mut lanes = [0u64; LANES];
                // SAFETY: `lanes` has room for one vector; unaligned store.
                unsafe { storeu_si(lanes.as_mut_ptr().cast(), v) };
                lanes.into_iter().fold(sum, |x, w| x ^ w)
            }

            #[target_feature(enable = $feature)]
            #[inline(never)]
            pub(in crate::kernels) fn read<const NT: bool>(
                _dst: &mut [u64],
                src1: &[u64],
                _src2: &[u64],
                _src3: &[u64],
                _q: f64,
            ) -> u64 {
                let n = src1.len();
                // Aligned loads never split a line, and streaming loads
                // need the alignment.
                let head = head_len(src1.as_ptr(), n);
                let mut sum = src1[..head].iter().fold(0, |x, w| x ^ w);
                let p = src1.as_ptr();
                let mut acc = [setzero_si(); ACCUMULATORS];
                let mut i = head;
                while n - i >= ACCUMULATORS * LANES {
                    for (k, a) in acc.iter_mut().enumerate() {
                        // SAFETY: i + (k + 1) * LANES <= i + ACCUMULATORS *
                        // LANES <= n, inside `src1`; p + head is on a line
                        // boundary and i - head a multiple of LANES.
                        *a = xor_si(*a, unsafe { fetch::<NT>(p.add(i + k * LANES)) });
                    }
                    i += ACCUMULATORS * LANES;
                }
                while n - i >= LANES {
                    // SAFETY: i + LANES <= n, aligned as above.
                    acc[0] = xor_si(acc[0], unsafe { fetch::<NT>(p.add(i)) });
                    i += LANES;
                }
                sum = src1[i..].iter().fold(sum, |x, w| x ^ w);
                fold_lanes(acc, sum)
            }

            /// Read in `STREAMS` places at once: the array cut into that
            /// many parts, each turn of the loop takes one line from every
            /// part. One core's read bandwidth is bounded by the misses it
            /// keeps in flight, and the prefetchers follow each part as a
            /// stream of its own, so several streams reach further than one.
            /// The checksum is the same XOR of all words as `read`'s.
            #[target_feature(enable = $feature)]
            #[inline(never)]
            pub(in crate::kernels) fn read_streams<const NT: bool>(
                _dst: &mut [u64],
                src1: &[u64],
                _src2: &[u64],
                _src3: &[u64],
                _q: f64,
            ) -> u64 {
                const LINE: usize = super::LINE_BYTES / size_of::<u64>();
                let n = src1.len();
                let head = head_len(src1.as_ptr(), n);
                let part = stream_part(n, head, super::STREAMS);
                let p = src1.as_ptr();
                let mut acc = [setzero_si(); super::STREAMS];
                let mut i = 0;
                while i < part {
                    for (k, a) in acc.iter_mut().enumerate() {
                        let line = head + k * part + i;
                        for v in 0..LINE / LANES {
                            // SAFETY: line + LINE <= head + STREAMS * part
                            // <= n, inside `src1`; p + head is on a line
                            // boundary and k * part + i a multiple of LINE.
                            *a = xor_si(*a, unsafe { fetch::<NT>(p.add(line + v * LANES)) });
                        }
                    }
                    i += LINE;
                }
                let done = head + super::STREAMS * part;
                let mut sum = src1[..head].iter().fold(0, |x, w| x ^ w);
                sum = src1[done..].iter().fold(sum, |x, w| x ^ w);
                fold_lanes(acc, sum)
            }

            #[target_feature(enable = $feature)]
            #[inline(never)]
            pub(in crate::kernels) fn write<const NT: bool>(
                dst: &mut [u64],
                _src1: &[u64],
                _src2: &[u64],
                _src3: &[u64],
                q: f64,
            ) -> u64 {
                let word = q.to_bits();
                let v = set1_epi64(word as i64);
                fill::<NT, 0>(dst, [], |[]| v, |[]| word);
                0
            }

            #[target_feature(enable = $feature)]
            #[inline(never)]
            pub(in crate::kernels) fn copy<const NT: bool>(
                dst: &mut [u64],
                src1: &[u64],
                _src2: &[u64],
                _src3: &[u64],
                _q: f64,
            ) -> u64 {
                let a = &src1[..dst.len()];
                fill::<NT, 1>(dst, [a], |[a]| a, |[a]| a);
                0
            }

            /// Copy in [`COPY_STREAMS`] places at once, as `read_streams`
            /// reads: both arrays cut into that many parts, each turn of
            /// the loop copies one line of every part. With streaming
            /// stores a core keeps more lines in flight from several
            /// streams than from one (glibc's large `memcpy` copies four
            /// pages at once for the same reason); with regular stores the
            /// read-for-ownership of every line caps it anyway, so only the
            /// streaming variant is built.
            #[target_feature(enable = $feature)]
            #[inline(never)]
            pub(in crate::kernels) fn copy_streams<const NT: bool>(
                dst: &mut [u64],
                src1: &[u64],
                _src2: &[u64],
                _src3: &[u64],
                _q: f64,
            ) -> u64 {
                const LINE: usize = super::LINE_BYTES / size_of::<u64>();
                let n = dst.len();
                let a = &src1[..n];
                let head = head_len(dst.as_ptr(), n);
                let part = stream_part(n, head, COPY_STREAMS);
                let (s, d) = (a.as_ptr(), dst.as_mut_ptr());
                let mut i = 0;
                while i < part {
                    for k in 0..COPY_STREAMS {
                        let line = head + k * part + i;
                        for v in 0..LINE / LANES {
                            // SAFETY: line + LINE <= head + COPY_STREAMS *
                            // part <= n, inside `dst` and `a`; d + head is on
                            // a line boundary and k * part + i a multiple of
                            // LINE, so the store is aligned as it must be.
                            unsafe {
                                let o = line + v * LANES;
                                put::<NT>(d.add(o), load(s.add(o)));
                            }
                        }
                    }
                    i += LINE;
                }
                let done = head + COPY_STREAMS * part;
                dst[..head].copy_from_slice(&a[..head]);
                dst[done..].copy_from_slice(&a[done..]);
                if NT {
                    sfence();
                }
                0
            }

            #[target_feature(enable = $feature)]
            #[inline(never)]
            pub(in crate::kernels) fn scale<const NT: bool>(
                dst: &mut [u64],
                src1: &[u64],
                _src2: &[u64],
                _src3: &[u64],
                q: f64,
            ) -> u64 {
                let a = &src1[..dst.len()];
                let vq = set1_pd(q);
                fill::<NT, 1>(
                    dst,
                    [a],
                    |[a]| si(mul_pd(vq, pd(a))),
                    |[a]| (q * f64::from_bits(a)).to_bits(),
                );
                0
            }

            #[target_feature(enable = $feature)]
            #[inline(never)]
            pub(in crate::kernels) fn add<const NT: bool>(
                dst: &mut [u64],
                src1: &[u64],
                src2: &[u64],
                _src3: &[u64],
                _q: f64,
            ) -> u64 {
                let n = dst.len();
                fill::<NT, 2>(
                    dst,
                    [&src1[..n], &src2[..n]],
                    |[a, b]| si(add_pd(pd(a), pd(b))),
                    |[a, b]| (f64::from_bits(a) + f64::from_bits(b)).to_bits(),
                );
                0
            }

            #[target_feature(enable = $feature)]
            #[inline(never)]
            pub(in crate::kernels) fn triad<const NT: bool>(
                dst: &mut [u64],
                src1: &[u64],
                src2: &[u64],
                _src3: &[u64],
                q: f64,
            ) -> u64 {
                let n = dst.len();
                let vq = set1_pd(q);
                fill::<NT, 2>(
                    dst,
                    [&src1[..n], &src2[..n]],
                    |[a, b]| si(add_pd(pd(a), mul_pd(vq, pd(b)))),
                    |[a, b]| (f64::from_bits(a) + q * f64::from_bits(b)).to_bits(),
                );
                0
            }

            /// Three reads, one write: the 3:1 read:write mix.
            #[target_feature(enable = $feature)]
            #[inline(never)]
            pub(in crate::kernels) fn add3<const NT: bool>(
                dst: &mut [u64],
                src1: &[u64],
                src2: &[u64],
                src3: &[u64],
                _q: f64,
            ) -> u64 {
                let n = dst.len();
                fill::<NT, 3>(
                    dst,
                    [&src1[..n], &src2[..n], &src3[..n]],
                    |[a, b, c]| si(add_pd(add_pd(pd(a), pd(b)), pd(c))),
                    |[a, b, c]| {
                        (f64::from_bits(a) + f64::from_bits(b) + f64::from_bits(c)).to_bits()
                    },
                );
                0
            }
        }
    };
}

simd_kernels! {
    /// 512-bit vectors (AVX-512F only; nothing from BW/DQ/VL is needed).
    mod avx512, feature = "avx512f", vector = __m512i, doubles = __m512d,
    {
        loadu_si = _mm512_loadu_si512,
        stream_load_si = _mm512_stream_load_si512,
        storeu_si = _mm512_storeu_si512,
        store_si = _mm512_store_si512,
        stream_si = _mm512_stream_si512,
        xor_si = _mm512_xor_si512,
        setzero_si = _mm512_setzero_si512,
        set1_epi64 = _mm512_set1_epi64,
        castsi_pd = _mm512_castsi512_pd,
        set1_pd = _mm512_set1_pd,
        mul_pd = _mm512_mul_pd,
        add_pd = _mm512_add_pd,
        castpd_si = _mm512_castpd_si512,
    }
}

simd_kernels! {
    /// 256-bit vectors.
    mod avx2, feature = "avx2", vector = __m256i, doubles = __m256d,
    {
        loadu_si = _mm256_loadu_si256,
        stream_load_si = _mm256_stream_load_si256,
        storeu_si = _mm256_storeu_si256,
        store_si = _mm256_store_si256,
        stream_si = _mm256_stream_si256,
        xor_si = _mm256_xor_si256,
        setzero_si = _mm256_setzero_si256,
        set1_epi64 = _mm256_set1_epi64x,
        castsi_pd = _mm256_castsi256_pd,
        set1_pd = _mm256_set1_pd,
        mul_pd = _mm256_mul_pd,
        add_pd = _mm256_add_pd,
        castpd_si = _mm256_castpd_si256,
    }
}
