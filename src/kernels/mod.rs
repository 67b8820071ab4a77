//! The inner loops every bandwidth and latency figure comes from.
//!
//! Kernels are data: each [`KernelSpec`] names one loop (likwid-bench style,
//! `copy_nt_avx2`, `triad_portable`, ...) with the operation, instruction set
//! and store kind it measures, and the registry ([`KERNELS`], [`find`],
//! [`best`]) picks among them at run time by CPU feature, so one binary runs
//! the widest path the machine has.
//!
//! Operations follow STREAM: `read`, `write` and `copy` move 64-bit words;
//! `scale`, `add` and `triad` view the same words as `f64`. Triad is a
//! separate multiply then add, never a fused multiply-add, in every kernel:
//! an FMA rounds once where the scalar formula rounds twice, so mixing them
//! would make kernels disagree in the last bit.
//!
//! The pitfall all of this guards against is the optimiser measuring less
//! work than it reports. Kernels are `#[inline(never)]` and called through a
//! function pointer, their inputs and outputs pass through
//! [`std::hint::black_box`], and callers vary the stored value between
//! repetitions: a fill kernel that could be inlined and given the same word
//! every time was seen to "reach" 161 GB/s on memory that does 6.
//!
//! Bytes are counted the STREAM way ([`Op::stream_bytes_per_element`]):
//! what the loop reads plus what it writes, without the read-for-ownership
//! a regular store causes. Non-temporal kernels avoid that extra read, which
//! is why they can report more for the same operation.

pub(crate) mod chase;
pub(crate) mod latency;
mod mix;
pub(crate) mod pattern;
mod portable;
mod registry;
mod shuffle;

#[cfg(target_arch = "aarch64")]
mod neon;
#[cfg(target_arch = "x86_64")]
mod x86;

use serde::{Deserialize, Serialize};
use std::fmt;
use std::hint::black_box;
use std::str::FromStr;

pub(crate) use mix::Mix;
pub(crate) use registry::{KERNELS, available, best, best_streams, find};

/// Parts a multi-stream read kernel reads at once (`read_s8_*`).
pub(crate) const STREAMS: usize = 8;
/// Parts a multi-stream copy kernel copies at once (`copy_s4_nt_*`): four
/// beat one, two and sixteen on an AVX-512 Xeon (docs/peak.md).
pub(crate) const COPY_STREAMS: usize = 4;
// The kernels' names and `KernelSpec::access` spell the 8 and the 4 out.
const _: () = assert!(STREAMS == 8 && COPY_STREAMS == 4);

/// What a kernel does to each element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Op {
    /// `sum ^= src1[i]`
    Read,
    /// `dst[i] = word`
    Write,
    /// `dst[i] = src1[i]`
    Copy,
    /// `dst[i] = q * src1[i]`
    Scale,
    /// `dst[i] = src1[i] + src2[i]`
    Add,
    /// `dst[i] = src1[i] + q * src2[i]`
    Triad,
    /// `dst[i] = src1[i] + src2[i] + src3[i]`: three read streams, one
    /// write stream (the 3:1 read:write mix).
    Add3,
}

impl Op {
    pub(crate) const ALL: [Op; 7] = [
        Op::Read,
        Op::Write,
        Op::Copy,
        Op::Scale,
        Op::Add,
        Op::Triad,
        Op::Add3,
    ];

    /// Arrays the operation touches.
    pub(crate) fn arrays(self) -> usize {
        match self {
            Op::Read | Op::Write => 1,
            Op::Copy | Op::Scale => 2,
            Op::Add | Op::Triad => 3,
            Op::Add3 => 4,
        }
    }

    /// Arrays read per element (read streams).
    pub(crate) fn read_streams(self) -> usize {
        self.arrays() - self.write_streams()
    }

    /// Arrays written per element (write streams): one for every storing
    /// operation.
    pub(crate) fn write_streams(self) -> usize {
        usize::from(self.stores())
    }

    /// Bytes read plus bytes written per element, STREAM style (no
    /// write-allocate traffic).
    pub(crate) fn stream_bytes_per_element(self) -> u64 {
        8 * self.arrays() as u64
    }

    /// Whether the operation writes memory (everything but `read`).
    pub(crate) fn stores(self) -> bool {
        self != Op::Read
    }

    /// Whether `src1` is read.
    fn reads_src1(self) -> bool {
        self != Op::Write
    }

    /// Whether `src2` is read.
    fn reads_src2(self) -> bool {
        matches!(self, Op::Add | Op::Triad | Op::Add3)
    }

    /// Whether `src3` is read.
    fn reads_src3(self) -> bool {
        self == Op::Add3
    }

    fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Copy => "copy",
            Op::Scale => "scale",
            Op::Add => "add",
            Op::Triad => "triad",
            Op::Add3 => "add3",
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Op {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Op::ALL
            .into_iter()
            .find(|op| op.name() == s)
            .ok_or_else(|| ParseError::new("operation", s, Op::ALL.map(Op::name)))
    }
}

/// The instruction set a kernel is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Isa {
    /// Plain Rust loops; the compiler vectorises them for the baseline
    /// target (SSE2 on x86-64), nothing wider.
    Portable,
    Avx2,
    /// AVX-512F.
    Avx512,
    /// AArch64 Advanced SIMD.
    Neon,
}

impl Isa {
    pub(crate) const ALL: [Isa; 4] = [Isa::Portable, Isa::Avx2, Isa::Avx512, Isa::Neon];

    /// The instruction sets this CPU can run, narrowest first.
    #[cfg(test)]
    pub(crate) fn detected() -> Vec<Isa> {
        Isa::ALL
            .into_iter()
            .filter(|isa| isa.is_available())
            .collect()
    }

    /// Whether this CPU (and this build's target) can run the instruction set.
    pub(crate) fn is_available(self) -> bool {
        match self {
            Isa::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => std::arch::is_aarch64_feature_detected!("neon"),
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    /// Preference when several kernels fit: wider vectors first.
    pub(crate) fn rank(self) -> u8 {
        match self {
            Isa::Portable => 0,
            Isa::Neon => 1,
            Isa::Avx2 => 2,
            Isa::Avx512 => 3,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Isa::Portable => "portable",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
            Isa::Neon => "neon",
        }
    }
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Isa {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Isa::ALL
            .into_iter()
            .find(|isa| isa.name() == s)
            .ok_or_else(|| ParseError::new("instruction set", s, Isa::ALL.map(Isa::name)))
    }
}

/// How a kernel writes, or for read, which has no stores, how it loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Store {
    /// Ordinary stores: each line is read for ownership, then written back
    /// when evicted.
    Regular,
    /// Streaming stores that bypass the caches, followed by a fence; for
    /// read, streaming loads (`movntdqa`), which ask the caches not to keep
    /// the lines.
    NonTemporal,
}

impl Store {
    #[cfg(test)]
    pub(crate) const ALL: [Store; 2] = [Store::Regular, Store::NonTemporal];

    fn name(self) -> &'static str {
        match self {
            Store::Regular => "regular",
            Store::NonTemporal => "nontemporal",
        }
    }
}

impl fmt::Display for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Store {
    type Err = ParseError;

    /// Accepts `nt` as well, the infix kernel names use.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "regular" => Ok(Store::Regular),
            "nontemporal" | "nt" => Ok(Store::NonTemporal),
            _ => Err(ParseError::new(
                "store kind",
                s,
                ["regular", "nontemporal", "nt"],
            )),
        }
    }
}

/// A name that is not one of the valid ones; the message lists them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} '{given}' (valid: {valid})")]
pub(crate) struct ParseError {
    what: &'static str,
    given: String,
    valid: String,
}

impl ParseError {
    fn new<const N: usize>(what: &'static str, given: &str, valid: [&str; N]) -> Self {
        ParseError {
            what,
            given: given.to_owned(),
            valid: valid.join(", "),
        }
    }
}

/// The arrays one kernel call works on. Arrays the operation does not use
/// are ignored.
pub(crate) struct KernelArgs<'a> {
    /// Written array (write, copy, scale, add, triad); empty for read.
    pub dst: &'a mut [u64],
    /// First read array (read, copy, scale, add, triad).
    pub src1: &'a [u64],
    /// Second read array (add, triad, add3); empty otherwise.
    pub src2: &'a [u64],
    /// Third read array (add3); empty otherwise.
    pub src3: &'a [u64],
    /// `q` for scale and triad; for write, `scalar.to_bits()` is the word
    /// stored.
    pub scalar: f64,
}

/// The loop itself. Contract for callers: the ISA is available and every
/// array the op uses has the same length. Implementations still slice their
/// inputs to `dst.len()` (or `src1.len()` for read), so a broken length
/// contract panics rather than reading out of bounds.
type RawKernel =
    unsafe fn(dst: &mut [u64], src1: &[u64], src2: &[u64], src3: &[u64], q: f64) -> u64;

/// One kernel and what it measures.
pub(crate) struct KernelSpec {
    /// `<op>[_sN][_nt]_<isa>`, e.g. `copy_nt_avx2` or `read_s8_avx512`.
    pub name: &'static str,
    pub op: Op,
    pub isa: Isa,
    pub store: Store,
    /// Places the kernel goes through the arrays at once: 1 (one pass from
    /// start to end), [`STREAMS`] for the multi-stream reads or
    /// [`COPY_STREAMS`] for the multi-stream copies.
    pub streams: usize,
    func: RawKernel,
}

impl KernelSpec {
    /// The memory accesses that `store` picks, in words: read has only
    /// loads, every other operation is told apart by its stores.
    pub(crate) fn access(&self) -> &'static str {
        match (self.op.stores(), self.store, self.streams > 1) {
            (true, Store::Regular, false) => "regular stores",
            (true, Store::Regular, true) => "regular stores, 4 streams",
            (true, Store::NonTemporal, false) => "non-temporal stores",
            (true, Store::NonTemporal, true) => "non-temporal stores, 4 streams",
            (false, Store::Regular, false) => "regular loads",
            (false, Store::NonTemporal, false) => "non-temporal loads",
            (false, Store::Regular, true) => "regular loads, 8 streams",
            (false, Store::NonTemporal, true) => "non-temporal loads, 8 streams",
        }
    }
}

impl fmt::Debug for KernelSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KernelSpec")
            .field("name", &self.name)
            .field("op", &self.op)
            .field("isa", &self.isa)
            .field("store", &self.store)
            .field("streams", &self.streams)
            .finish_non_exhaustive()
    }
}

impl KernelSpec {
    pub(crate) fn is_available(&self) -> bool {
        self.isa.is_available()
    }

    /// Runs once over the arrays and returns a checksum: for read the XOR of
    /// all words, for the others a mix of the first and last word written.
    ///
    /// # Panics
    /// If the arrays the op uses differ in length, or this CPU lacks the
    /// kernel's ISA (check [`KernelSpec::is_available`] first).
    pub(crate) fn run(&self, args: &mut KernelArgs<'_>) -> u64 {
        assert!(
            self.is_available(),
            "kernel {} needs {}, which this CPU does not have",
            self.name,
            self.isa
        );
        let op = self.op;
        let n = if op.stores() {
            args.dst.len()
        } else {
            args.src1.len()
        };
        for (used, name, len) in [
            (op.reads_src1(), "src1", args.src1.len()),
            (op.reads_src2(), "src2", args.src2.len()),
            (op.reads_src3(), "src3", args.src3.len()),
        ] {
            assert!(
                !used || len == n,
                "kernel {}: {name} has {len} elements, dst has {n}",
                self.name
            );
        }
        // The optimiser must treat the arrays as unknown before and observed
        // after, so the work cannot be hoisted, merged or dropped.
        let args = black_box(args);
        let q = black_box(args.scalar);
        // SAFETY: the ISA is available (asserted above) and the arrays the
        // op reads have dst's length, which is RawKernel's contract.
        let sum = unsafe { (self.func)(args.dst, args.src1, args.src2, args.src3, q) };
        let sum = if op.stores() {
            edge_checksum(black_box(&*args.dst))
        } else {
            sum
        };
        black_box(sum)
    }

    /// Bytes moved for `elements` elements, STREAM counting.
    #[cfg(test)]
    pub(crate) fn stream_bytes(&self, elements: usize) -> u64 {
        elements as u64 * self.op.stream_bytes_per_element()
    }
}

/// Cheap evidence that the stores happened: touches two words, not the array.
fn edge_checksum(dst: &[u64]) -> u64 {
    match (dst.first(), dst.last()) {
        (Some(first), Some(last)) => first ^ last.rotate_left(32),
        _ => 0,
    }
}

#[cfg(test)]
mod tests;
