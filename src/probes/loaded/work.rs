//! An injector's pass through its own buffer, a batch of chunks per kernel
//! call: what the injectors run between their spins, and what the kernel
//! trial times.

use super::CHUNK_BYTES;
use crate::kernels::{KernelArgs, KernelSpec, Op};
use crate::memory::Buffer;
use crate::probes::team::{self, TeamMemory};
use std::hint::black_box;

/// Chunks an injector moves in one kernel call, between two looks at the
/// state; their spins follow the call.
pub(super) const BATCH: usize = 16;

/// An injector's pass through its buffer, a batch of chunks at a time.
pub(super) struct Work<'a> {
    a: &'a mut [u64],
    b: &'a [u64],
    chunks: usize,
    next: usize,
    sum: u64,
}

impl<'a> Work<'a> {
    pub(super) fn new(buffer: &'a mut Buffer, memory: &TeamMemory, op: Op) -> Self {
        let words = memory.array_bytes / 8;
        let stride_words = team::stride(memory.array_bytes) / 8;
        let all = buffer.as_mut_slice::<u64>();
        let (a, rest) = all.split_at_mut(stride_words.min(all.len()));
        let b: &[u64] = if op == Op::Copy { &rest[..words] } else { &[] };
        Work {
            a: &mut a[..words],
            b,
            chunks: (words / (CHUNK_BYTES / 8)).max(1),
            next: 0,
            sum: 0,
        }
    }

    /// Runs `kernel` over the next batch (at most [`BATCH`] chunks, up to
    /// the buffer's end): the bytes it moved, counted as STREAM counts
    /// them, and the chunks it covered.
    pub(super) fn batch(&mut self, kernel: &KernelSpec) -> (u64, u64) {
        let chunk = CHUNK_BYTES / 8;
        let span = BATCH.min(self.chunks - self.next);
        let r = self.next * chunk..(self.next + span) * chunk;
        let mut args = if self.b.is_empty() {
            KernelArgs {
                dst: &mut [],
                src1: &self.a[r],
                src2: &[],
                src3: &[],
                scalar: 1.0,
            }
        } else {
            KernelArgs {
                dst: &mut self.a[r.clone()],
                src1: &self.b[r],
                src2: &[],
                src3: &[],
                scalar: 1.0,
            }
        };
        self.sum ^= kernel.run(&mut args);
        self.next = (self.next + span) % self.chunks;
        let per_chunk = (CHUNK_BYTES * kernel.op.stream_bytes_per_element() as usize / 8) as u64;
        (per_chunk * span as u64, span as u64)
    }
}

impl Drop for Work<'_> {
    fn drop(&mut self) {
        black_box(self.sum);
    }
}
